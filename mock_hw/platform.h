// The mock GPU as a platform device (what rk3588-base.dtsi's gpu@fb000000 node and the platform
// bus give the driver): MMIO forwarded to the Gpu's registers, its three IRQ lines, the "core",
// "coregroup" and "stacks" clocks, the "mali" supply and the OPP table of GpuConfig::platform.
#pragma once
#include <memory>

#include "kernel_shim/platform.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

class MockPlatform {
public:
    explicit MockPlatform(GpuConfig cfg = {});
    // Destroys the platform device (running what a driver left registered as devres) first.
    ~MockPlatform();
    MockPlatform(const MockPlatform&) = delete;
    MockPlatform& operator=(const MockPlatform&) = delete;

    Gpu& gpu() { return gpu_; }
    kshim::PlatformDevice* pdev() { return pdev_; }

private:
    // The __iomem window the driver reads and writes: the Gpu's MMIO decoder.
    class GpuIomem : public kshim::Iomem {
    public:
        explicit GpuIomem(Gpu& gpu) : gpu_(gpu) {}
        u32 readl(u32 off) override { return gpu_.read32(off); }
        void writel(u32 off, u32 value) override { gpu_.write32(off, value); }

    private:
        Gpu& gpu_;
    };

    Gpu gpu_;
    GpuIomem iomem_{gpu_};
    kshim::PlatformDevice* pdev_ = nullptr;
};

}  // namespace mock_hw
