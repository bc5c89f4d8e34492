// Mirrors include/linux/platform_device.h and io.h: the platform-device stand-in a device model
// (mock_hw) fills in and a driver probes: one MMIO resource reached through an Iomem, named IRQ
// lines, named clocks, regulators and an OPP table (clk.h, pm_opp.h), DMA coherency.
//
// The driver only ever sees this: MMIO reads and writes, IRQ lines, and memory by physical
// address. Who implements the Iomem (a mock GPU, a trace wrapper) is not its business.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kernel_shim/device.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/types.h"

namespace kshim {

struct Clk;
struct Regulator;
struct DevPmOpp;

// The __iomem window: 32-bit accesses at byte offsets from the resource start.
class Iomem {
public:
    virtual ~Iomem() = default;
    virtual u32 readl(u32 off) = 0;
    virtual void writel(u32 off, u32 value) = 0;
    // Called after every access when set (tracing, tests): is_write, offset, value.
    std::function<void(bool, u32, u32)> trace_hook;
};

inline u32 readl(Iomem* io, u32 off) {
    u32 v = io->readl(off);
    if (io->trace_hook)
        io->trace_hook(false, off, v);
    return v;
}
inline void writel(u32 value, Iomem* io, u32 off) {
    io->writel(off, value);
    if (io->trace_hook)
        io->trace_hook(true, off, value);
}

struct Resource {
    phys_addr_t start = 0;
    u64 size = 0;
};

struct PlatformIrq {
    std::string name;
    IrqLine* line = nullptr;
};

struct PlatformClk {
    std::string name;
    unsigned long rate = 0;  // initial rate (assigned-clock-rates)
};

struct PlatformRegulator {
    std::string name;   // supply name without "-supply" ("mali")
    int microvolt = 0;  // initial voltage
};

struct PlatformOpp {
    unsigned long hz = 0;
    unsigned long microvolt = 0;
};

// What the device tree node would describe. The device model owns the Iomem and IRQ lines.
struct PlatformDeviceDesc {
    std::string name = "platform";
    std::string compatible;
    Resource mmio;
    Iomem* iomem = nullptr;
    std::vector<PlatformIrq> irqs;
    std::vector<PlatformClk> clks;
    std::vector<PlatformRegulator> regulators;
    std::vector<PlatformOpp> opps;  // operating-points-v2
    bool dma_coherent = false;
};

struct PlatformDeviceState;  // clocks, regulators, OPP table, runtime PM (platform.cpp)

struct PlatformDevice {
    Device dev;
    PlatformDeviceDesc desc;
    PlatformDeviceState* state = nullptr;
};

// Creates the device: clocks at their initial rates (prepared/enabled counts 0), regulators off,
// runtime PM disabled (disable_depth 1) and suspended. nullptr on allocation failure.
PlatformDevice* platform_device_create(const PlatformDeviceDesc& desc);
// Releases the device's devres, clocks, regulators, OPP table and PM state, then frees it.
void platform_device_destroy(PlatformDevice* pdev);

inline PlatformDevice* to_platform_device(Device* dev) {
    return container_of(dev, PlatformDevice, dev);
}
inline void platform_set_drvdata(PlatformDevice* pdev, void* data) {
    pdev->dev.driver_data = data;
}
inline void* platform_get_drvdata(PlatformDevice* pdev) {
    return pdev->dev.driver_data;
}

// The named interrupt, or ERR_PTR(-ENXIO) (with an error line naming it) when absent.
IrqLine* platform_get_irq_byname(PlatformDevice* pdev, const char* name);
// Resource 0's Iomem, or ERR_PTR(-ENODEV); *res (optional) receives the resource.
Iomem* devm_platform_get_and_ioremap_resource(PlatformDevice* pdev, unsigned index, Resource** res);
bool device_get_dma_attr_coherent(const Device* dev);

}  // namespace kshim
