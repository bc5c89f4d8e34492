// The mock Mali-G52 as the platform device of an RK3566/RK3568 (rk356x.dtsi's gpu@fde60000): its
// 16 KiB register window, the "job", "mmu" and "gpu" interrupts, the "gpu" and "bus" clocks, the
// "mali" supply and the OPP table of the JmConfig's PlatformConfig (mock_hw/platform.h).
#pragma once
#include "mock_hw/platform.h"
#include "mock_jm/jm_gpu.h"

namespace mock_jm {

class JmPlatform {
public:
    // The register window panfrost maps: everything up to MMU_CONTROL's last address space.
    static constexpr u64 kMmioSize = 0x4000;

    explicit JmPlatform(JmConfig cfg = {}) : gpu_(std::move(cfg)), dev_(gpu_, kMmioSize) {}

    JmGpu& gpu() { return gpu_; }
    kshim::PlatformDevice* pdev() { return dev_.pdev(); }

private:
    JmGpu gpu_;
    mock_hw::GpuPlatformDevice dev_;
};

}  // namespace mock_jm
