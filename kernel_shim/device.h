// Mirrors the parts of include/linux/device.h the shim models: `struct device` with its name (the
// log prefix), driver data, PM callbacks and runtime-PM state (pm_runtime.h), and the list of
// managed resources (devres.h) released in reverse order when a probe fails or a device goes.
#pragma once
#include <string>

namespace kshim {

struct DevPmOps;
struct DevPmInfo;
struct DevresList;

struct Device {
    std::string name = "kshim";
    void* driver_data = nullptr;   // dev_get_drvdata / dev_set_drvdata
    const DevPmOps* pm = nullptr;  // the driver's PM callbacks (dev->driver->pm)
    DevPmInfo* power = nullptr;    // runtime-PM state; owned by whoever created the device
    DevresList* devres = nullptr;  // devm_* actions; allocated on first use, freed by devres_release_all
};

inline void* dev_get_drvdata(const Device* dev) {
    return dev->driver_data;
}
inline void dev_set_drvdata(Device* dev, void* data) {
    dev->driver_data = data;
}

}  // namespace kshim
