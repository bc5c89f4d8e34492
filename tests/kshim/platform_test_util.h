// A small platform device for the tests of the platform, clock, OPP, runtime-PM and devfreq
// services: a register file behind its Iomem, two IRQ lines, clocks, a supply and an OPP table.
#pragma once
#include <gtest/gtest.h>

#include <map>

#include "kernel_shim/platform.h"

namespace kshim::testing {

// A register file: reads return what was written.
class FakeIomem : public Iomem {
public:
    u32 readl(u32 off) override { return regs_[off]; }
    void writel(u32 off, u32 value) override { regs_[off] = value; }

private:
    std::map<u32, u32> regs_;
};

inline constexpr unsigned long kMHz = 1'000'000;

// Owns the device model's side (Iomem, IRQ lines) and the platform device built on it.
class TestPlatform {
public:
    explicit TestPlatform(bool dma_coherent = false) {
        PlatformDeviceDesc d;
        d.name = "test.gpu";
        d.compatible = "test,gpu";
        d.mmio = {0xfb000000, 0x10000};
        d.iomem = &iomem_;
        d.irqs = {{"job", &irq_job_}, {"gpu", &irq_gpu_}};
        d.clks = {{"core", 200 * kMHz}, {"stacks", 100 * kMHz}};
        d.regulators = {{"mali", 600'000}};
        // Deliberately out of order: the table sorts them.
        d.opps = {{500 * kMHz, 700'000}, {300 * kMHz, 650'000}, {800 * kMHz, 800'000}};
        d.dma_coherent = dma_coherent;
        pdev_ = platform_device_create(d);
    }
    ~TestPlatform() { platform_device_destroy(pdev_); }
    TestPlatform(const TestPlatform&) = delete;
    TestPlatform& operator=(const TestPlatform&) = delete;

    PlatformDevice* pdev() { return pdev_; }
    Device* dev() { return &pdev_->dev; }
    FakeIomem& iomem() { return iomem_; }
    IrqLine& irq_job() { return irq_job_; }
    IrqLine& irq_gpu() { return irq_gpu_; }

private:
    FakeIomem iomem_;
    IrqLine irq_job_{"job", 1};
    IrqLine irq_gpu_{"gpu", 3};
    PlatformDevice* pdev_ = nullptr;
};

}  // namespace kshim::testing
