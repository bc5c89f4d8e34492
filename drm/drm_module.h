// (no upstream counterpart as one struct) What a DRM platform driver module offers the machine
// that loads it: module_init/module_exit, the platform_driver (the compatible strings of its
// of_match_table, probe, remove; drivers/base/platform.c binds a device to the driver whose table
// matches), and the drm_device a bound platform device carries, since its drvdata is the driver's
// own type. A host never names a driver's functions: it loads the module its GPU model names.
#pragma once
#include <string_view>
#include <vector>

#include "kernel_shim/platform.h"

namespace drm {

class drm_device;

struct PlatformDriverModule {
    const char* name;                           // "panthor"
    std::vector<std::string_view> of_match;     // compatible strings the driver binds to
    int (*init)();                              // module_init; 0 or -errno
    void (*exit)();                             // module_exit
    int (*probe)(kshim::PlatformDevice* pdev);  // platform_driver.probe; 0 or -errno
    void (*remove)(kshim::PlatformDevice* pdev);
    drm_device* (*drm_dev_of)(kshim::PlatformDevice* pdev);  // of a bound device

    bool matches(std::string_view compatible) const {
        for (std::string_view c : of_match)
            if (c == compatible)
                return true;
        return false;
    }
};

}  // namespace drm
