// Mirrors drivers/gpu/drm/panfrost/panfrost_dump.h: the devcoredump of a job that timed out.
#pragma once
#include "panfrost/panfrost_device.h"

namespace panfrost {

struct panfrost_job;

// Takes a devcoredump of `job` (registers of its slot and AS, its BOs and their pages) when
// pfdev->dump_core is set, and clears it: one dump until re-armed, as upstream's dump_core.
void panfrost_core_dump(panfrost_job* job);
// A devres action dropping a pending dump of the device when it goes away (upstream's
// devcoredump device holds a reference instead; the shim's dump would outlive the test or host).
int panfrost_core_dump_init(panfrost_device* pfdev);

}  // namespace panfrost
