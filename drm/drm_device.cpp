// Mirrors drivers/gpu/drm/drm_drv.c (the device side we model).
#include "drm/drm_device.h"

#include "kernel_shim/report.h"

namespace drm {

drm_device::drm_device(const DriverDesc& driver, void* dev_private) : driver_(driver), dev_private_(dev_private) {
    for (size_t i = 0; i < driver_.ioctls.size(); i++) {
        const IoctlDesc& d = driver_.ioctls[i];
        if (d.func)
            WARN_ON(uapi::DRM_IOCTL_NR(d.cmd) != uapi::DRM_COMMAND_BASE + i);
    }
    WARN_ON(driver_.ioctls.size() > uapi::DRM_COMMAND_END - uapi::DRM_COMMAND_BASE);
}

}  // namespace drm
