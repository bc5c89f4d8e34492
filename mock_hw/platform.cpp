// The mock GPU's platform device (mock_hw/platform.h).
#include "mock_hw/platform.h"

#include "hw/csf/regs/csf_regs.h"
#include "kernel_shim/arch_timer.h"
#include "kernel_shim/report.h"

namespace mock_hw {

namespace {
// The GPU's register window in the RK3588 memory map.
constexpr kshim::phys_addr_t kGpuMmioBase = 0xfb000000;
}  // namespace

MockPlatform::MockPlatform(GpuConfig cfg) : gpu_(std::move(cfg)) {
    const PlatformConfig& pc = gpu_.config().platform;
    kshim::PlatformDeviceDesc desc;
    desc.name = pc.name;
    desc.compatible = pc.compatible;
    desc.mmio = {kGpuMmioBase, panthor::GPU_MMIO_SIZE};
    desc.iomem = &iomem_;
    desc.irqs = {{"job", &gpu_.irq_job()}, {"mmu", &gpu_.irq_mmu()}, {"gpu", &gpu_.irq_gpu()}};
    // clocks = <&scmi_clk SCMI_CLK_GPU>, <&cru CLK_GPU_COREGROUP>, <&cru CLK_GPU_STACKS>
    desc.clks = {{"core", pc.core_clk_hz}, {"coregroup", pc.coregroup_clk_hz}, {"stacks", pc.stacks_clk_hz}};
    desc.regulators = {{"mali", pc.mali_supply_microvolt}};
    for (const OppConfig& o : pc.opps)
        desc.opps.push_back({o.hz, o.microvolt});
    desc.dma_coherent = pc.dma_coherent;
    // GPU_TIMESTAMP counts the SoC's system counter, so the CPU's CNTFRQ is the same rate.
    kshim::arch_timer_set_cntfrq(static_cast<u32>(gpu_.config().timestamp_hz));
    pdev_ = kshim::platform_device_create(desc);
    BUG_ON(!pdev_);
}

MockPlatform::~MockPlatform() {
    kshim::platform_device_destroy(pdev_);
}

}  // namespace mock_hw
