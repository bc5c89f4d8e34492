// Mirrors drm_sched_job_add_syncobj_dependency (drivers/gpu/drm/scheduler/sched_main.c), kept in
// its own library (drm_syncobj_sched) so drm_syncobj does not depend on drm_sched.
#pragma once
#include "drm/drm_syncobj.h"
#include "drm/sched/gpu_scheduler.h"

namespace drm {

// Adds the fence of syncobj (handle, point) in `file` as a dependency of `job`: 0, or the errno
// of drm_syncobj_find_fence / drm_sched_job_add_dependency.
int drm_sched_job_add_syncobj_dependency(drm_sched_job* job, drm_file* file, u32 handle, u32 point);

}  // namespace drm
