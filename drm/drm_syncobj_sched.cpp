// Mirrors drm_sched_job_add_syncobj_dependency of drivers/gpu/drm/scheduler/sched_main.c.
#include "drm/drm_syncobj_sched.h"

namespace drm {

int drm_sched_job_add_syncobj_dependency(drm_sched_job* job, drm_file* file, u32 handle, u32 point) {
    dma_fence* fence;
    int ret = drm_syncobj_find_fence(file, handle, point, 0, &fence);
    if (ret)
        return ret;
    // drm_sched_job_add_dependency consumes the reference, on success and on error.
    return drm_sched_job_add_dependency(job, fence);
}

}  // namespace drm
