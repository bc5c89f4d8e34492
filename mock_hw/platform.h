// A mock GPU as a platform device (what a device-tree node and the platform bus give the driver):
// MMIO forwarded to the GPU's registers, its three IRQ lines, the clocks, the "mali" supply and the
// OPP table of GpuConfig::platform. MockPlatform is the RK3588's Mali-G610 (rk3588-base.dtsi's
// gpu@fb000000); mock_jm's JmPlatform builds the G52 the same way.
#pragma once
#include <memory>

#include "kernel_shim/platform.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

// The platform device of any mock GPU: created from the GPU's PlatformConfig, destroyed (running
// what a driver left registered as devres) before the GPU goes.
class GpuPlatformDevice {
public:
    GpuPlatformDevice(GpuBase& gpu, u64 mmio_size);
    ~GpuPlatformDevice();
    GpuPlatformDevice(const GpuPlatformDevice&) = delete;
    GpuPlatformDevice& operator=(const GpuPlatformDevice&) = delete;

    kshim::PlatformDevice* pdev() { return pdev_; }

private:
    // The __iomem window the driver reads and writes: the GPU's MMIO decoder.
    class GpuIomem : public kshim::Iomem {
    public:
        explicit GpuIomem(GpuBase& gpu) : gpu_(gpu) {}
        u32 readl(u32 off) override { return gpu_.read32(off); }
        void writel(u32 off, u32 value) override { gpu_.write32(off, value); }

    private:
        GpuBase& gpu_;
    };

    GpuIomem iomem_;
    kshim::PlatformDevice* pdev_ = nullptr;
};

class MockPlatform {
public:
    explicit MockPlatform(GpuConfig cfg = {});

    Gpu& gpu() { return gpu_; }
    kshim::PlatformDevice* pdev() { return dev_.pdev(); }

private:
    Gpu gpu_;
    GpuPlatformDevice dev_;
};

}  // namespace mock_hw
