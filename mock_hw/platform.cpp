// The mock GPUs' platform devices (mock_hw/platform.h).
#include "mock_hw/platform.h"

#include "hw/csf/regs/csf_regs.h"
#include "kernel_shim/arch_timer.h"
#include "kernel_shim/report.h"

namespace mock_hw {

GpuPlatformDevice::GpuPlatformDevice(GpuBase& gpu, u64 mmio_size) : iomem_(gpu) {
    const PlatformConfig& pc = gpu.config().platform;
    kshim::PlatformDeviceDesc desc;
    desc.name = pc.name;
    desc.compatible = pc.compatible;
    desc.mmio = {pc.mmio_base, mmio_size};
    desc.iomem = &iomem_;
    desc.irqs = {{"job", &gpu.irq_job()}, {"mmu", &gpu.irq_mmu()}, {"gpu", &gpu.irq_gpu()}};
    const unsigned long rates[3] = {pc.core_clk_hz, pc.coregroup_clk_hz, pc.stacks_clk_hz};
    for (int i = 0; i < 3; i++)
        if (!pc.clk_names[i].empty())
            desc.clks.push_back({pc.clk_names[i], rates[i]});
    desc.regulators = {{"mali", pc.mali_supply_microvolt}};
    for (const OppConfig& o : pc.opps)
        desc.opps.push_back({o.hz, o.microvolt});
    desc.dma_coherent = pc.dma_coherent;
    // GPU_TIMESTAMP counts the SoC's system counter, so the CPU's CNTFRQ is the same rate.
    kshim::arch_timer_set_cntfrq(static_cast<u32>(gpu.config().timestamp_hz));
    pdev_ = kshim::platform_device_create(desc);
    BUG_ON(!pdev_);
}

GpuPlatformDevice::~GpuPlatformDevice() {
    kshim::platform_device_destroy(pdev_);
}

MockPlatform::MockPlatform(GpuConfig cfg) : gpu_(std::move(cfg)), dev_(gpu_, panthor::GPU_MMIO_SIZE) {}

}  // namespace mock_hw
