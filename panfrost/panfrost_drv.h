// Mirrors the driver entry points of drivers/gpu/drm/panfrost/panfrost_drv.c: the DRM driver
// "panfrost" (version 1.6, render node, GEM/SYNCOBJ), probe/remove of the platform device, the
// module a host loads, and the ioctl table (GET_PARAM and the BO ioctls so far: docs/panfrost.md).
#pragma once
#include "drm/drm_module.h"
#include "panfrost/panfrost_device.h"

namespace panfrost {

inline constexpr int PANFROST_DRIVER_MAJOR = 1;
inline constexpr int PANFROST_DRIVER_MINOR = 6;

extern const drm::DriverDesc panfrost_drm_driver;

// platform_driver.probe / .remove. probe leaves the device autosuspending with its drvdata set
// to the panfrost_device; on failure nothing stays allocated, mapped, requested or powered.
int panfrost_probe(kshim::PlatformDevice* pdev);
void panfrost_remove(kshim::PlatformDevice* pdev);

inline panfrost_device* panfrost_from_pdev(kshim::PlatformDevice* pdev) {
    return static_cast<panfrost_device*>(kshim::platform_get_drvdata(pdev));
}

// The module as a host loads it: module init/exit (nothing module-wide yet), the of_match_table
// and probe/remove.
extern const drm::PlatformDriverModule panfrost_module;

}  // namespace panfrost
