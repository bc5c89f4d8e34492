// `upanthor run` of a Job Manager scenario (`[gpu] model = "g52"`): the state of one run on the
// mock Mali-G52 with the panfrost driver, shared by jm_runner.cpp (setup, the timed submissions,
// expectations, reports) and jm_streams.cpp (the job chains). (No upstream counterpart.)
//
// DOC: Each client is a DRM file driven by umd::PanfrostClient. A [[vm]] stands for its client's
// file VM (panfrost has one per file); each [[bo]] is a CREATE_BO in that file (a heap BO with
// PANFROST_BO_HEAP | NOEXEC, never mapped for the CPU), each [[jm_ctx]] a JM_CTX_CREATE. Every
// instance of a [[jm_submit]] builds its [[chain]] afresh with umd/pan_jc in the client's runner
// BO (jobs are written back by the GPU, so a chain is not run twice), then issues one SUBMIT with
// the submission's requirements, JM context, BO list and in-syncobjs, and a syncobj of its own as
// out_sync: the job's done fence, whose status is the per-job outcome in the summary. The fence
// is then put into each `signals` syncobj through a sync_file, as panvk does. Faults other than
// BootFail are added after boot, at_us counted from the start of the workload.
#pragma once
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tools/upanthor/runner.h"
#include "umd/pan_jc.h"

namespace upanthor {

namespace scenario {
struct Scenario;
struct JmChain;
}  // namespace scenario

// run_scenario() for a g52 scenario.
RunOutcome run_jm_scenario(const scenario::Scenario& s, const RunOptions& opts, std::FILE* report_out);

namespace jm_detail {
// Writes chain `c` into `pool` as `jc` (jm_streams.cpp); `bo_va` is each scenario BO's GPU VA in
// the submitter's file. 0, or a negative errno (-ENOMEM: the pool is full).
int build_chain(const scenario::JmChain& c, const std::vector<std::uint64_t>& bo_va, umd::JobPool& pool,
                umd::JobChain& jc);
}  // namespace jm_detail

}  // namespace upanthor
