// Mirrors drivers/gpu/drm/panfrost/panfrost_perfcnt.h: the hardware performance counters behind
// PERFCNT_ENABLE/PERFCNT_DUMP (unstable ioctls).
#pragma once
#include "drm/drm_file.h"
#include "panfrost/panfrost_device.h"

namespace panfrost {

// The GPU IRQ's PERFCNT_SAMPLE_COMPLETED (flush the sample out) and CLEAN_CACHES_COMPLETED
// (the dump or the enable's invalidate is done).
void panfrost_perfcnt_sample_done(panfrost_device* pfdev);
void panfrost_perfcnt_clean_cache_done(panfrost_device* pfdev);
int panfrost_perfcnt_init(panfrost_device* pfdev);
void panfrost_perfcnt_fini(panfrost_device* pfdev);
// postclose: the file's counters are disabled.
void panfrost_perfcnt_close(drm::drm_file* file);
int panfrost_ioctl_perfcnt_enable(drm::drm_device* dev, void* data, drm::drm_file* file);
int panfrost_ioctl_perfcnt_dump(drm::drm_device* dev, void* data, drm::drm_file* file);

// -ENOSYS unless the unstable_ioctls option is set.
int panfrost_unstable_ioctl_check(panfrost_device* pfdev);

}  // namespace panfrost
