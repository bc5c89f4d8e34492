// Mirrors the driver entry points of drivers/gpu/drm/panthor/panthor_drv.c: the DRM driver
// description (name "panthor", version 1.8, render node, GEM/SYNCOBJ/SYNCOBJ_TIMELINE/GEM_GPUVA),
// probe/remove of the platform device, the ioctl table and mmap.
#pragma once
#include "drm/drm_mmap.h"
#include "drm/drm_module.h"
#include "panthor/panthor_device.h"

namespace panthor {

inline constexpr int PANTHOR_DRIVER_MAJOR = 1;
inline constexpr int PANTHOR_DRIVER_MINOR = 9;

extern const drm::DriverDesc panthor_drm_driver;

// Module init/exit (panthor_init/panthor_exit): the page-table cache and the cleanup workqueue.
// Refcounted here, so probes in several tests pair up. 0 or -errno.
int panthor_init();
void panthor_exit();

// Where objects whose release may sleep are freed from (upstream's panthor_cleanup_wq), between
// panthor_init() and the matching panthor_exit().
extern kshim::workqueue_struct* panthor_cleanup_wq;

// platform_driver.probe / .remove. probe leaves the device autosuspending with its drvdata set
// to the panthor_device; on failure nothing stays allocated, mapped, requested or powered.
int panthor_probe(kshim::PlatformDevice* pdev);
void panthor_remove(kshim::PlatformDevice* pdev);

inline panthor_device* panthor_from_pdev(kshim::PlatformDevice* pdev) {
    return static_cast<panthor_device*>(kshim::platform_get_drvdata(pdev));
}

// The module as a host loads it: panthor_init/exit, the of_match_table of panthor_drv.c
// (rockchip,rk3588-mali and arm,mali-valhall-csf), probe/remove.
extern const drm::PlatformDriverModule panthor_module;

}  // namespace panthor
