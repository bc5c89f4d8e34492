// JobBo: a CPU-mapped panfrost BO in which tests lay out job chains at the BO's GPU VA
// (shared by job_test and gem_test). The layout is testkit's PanfrostJobBo; the fixtures map it.
#pragma once
#include "testkit/panfrost_rig.h"

namespace panfrost::testing {

namespace desc = panfrost::desc;

using JobBo = PanfrostJobBo;

}  // namespace panfrost::testing
