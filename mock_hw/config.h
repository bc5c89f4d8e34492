// The mock Mali-G610's identity, features and timing (the values a real RK3588 G610 reports,
// docs/hw/csf/gpu-control.md). Every latency may be zero; zero still goes through the runtime, so
// the effect lands at the same virtual instant but after the writing task yields.
#pragma once
#include <string>
#include <vector>

#include "hw/csf/fw_iface.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/types.h"

namespace mock_hw {

using kshim::ktime_t;
using kshim::u32;
using kshim::u64;

struct GpuIdentity {
    u32 gpu_id = 0xA8670005;  // arch 10.8, rev 6, product 7, r0p0 status 5
    u32 l2_features = 0x07120306;
    u32 core_features = 0x0;
    u32 tiler_features = 0x809;
    u32 mem_features = 0x301;
    u32 mmu_features = 0x2830;  // 48-bit VA, 40-bit PA
    u32 as_present = 0xFF;
    // CSHW 1.0.0, MCU 1.0.0 (the reference gives the layout, not G610's value).
    u32 csf_id = (1u << 26) | (1u << 10);
    u32 thread_max_threads = 2048;
    u32 thread_max_workgroup_size = 1024;
    u32 thread_max_barrier_size = 1024;
    u32 thread_features = 0x4000000;  // (not in the reference; plausible, opaque to panthor)
    u32 texture_features[4] = {0xC1FFFF9E, 0x00001F80, 0x0000FFFF, 0x0};  // (plausible)
    u64 shader_present = 0x50005;
    u64 tiler_present = 0x1;
    u64 l2_present = 0x1;
    u32 revid = 0x0;
    u32 coherency_features = 0x1;  // ACE_LITE
    u64 gpu_features = 0;          // v10: reads as 0
};

struct GpuLatencies {
    ktime_t power_transition = 10 * kshim::NSEC_PER_USEC;  // PWRTRANS visible for this long
    ktime_t soft_reset = 50 * kshim::NSEC_PER_USEC;
    ktime_t hard_reset = 100 * kshim::NSEC_PER_USEC;
    ktime_t cache_flush = 5 * kshim::NSEC_PER_USEC;
    ktime_t as_command = 2 * kshim::NSEC_PER_USEC;  // AS_STATUS.AS_ACTIVE visible for this long
    ktime_t mcu_boot = 100 * kshim::NSEC_PER_USEC;
    ktime_t mcu_halt = 10 * kshim::NSEC_PER_USEC;
    ktime_t mcu_disable = 10 * kshim::NSEC_PER_USEC;
    ktime_t glb_request = 5 * kshim::NSEC_PER_USEC;  // doorbell 0 -> GLB acks written
    // The CSG/CS engine.
    ktime_t csg_request = 2 * kshim::NSEC_PER_USEC;   // CSG doorbell / user doorbell -> slot scanned
    ktime_t csg_state = 10 * kshim::NSEC_PER_USEC;    // START/RESUME/TERMINATE -> state acked
    ktime_t csg_suspend = 20 * kshim::NSEC_PER_USEC;  // SUSPEND (after in-flight jobs drained) -> acked
    ktime_t cs_slice = 1 * kshim::NSEC_PER_USEC;      // virtual time one slice of cs_slice_instrs takes
    ktime_t sync_poll = 20 * kshim::NSEC_PER_USEC;    // period of the blocked-SYNC_WAIT re-evaluation poll
    u32 cs_slice_instrs = 4096;                       // instructions a stream runs before yielding
    // A group whose streams keep running whole slices without forward progress (no job completes,
    // the group never idles) for cs_spin_after is throttled: its spinning streams then get one
    // slice per cs_spin_slice, so a runaway loop costs the host ~4k instructions per virtual ms
    // until the progress timer ends it (docs/mock_hw.md, "Progress timer").
    ktime_t cs_spin_after = 1 * kshim::NSEC_PER_MSEC;
    ktime_t cs_spin_slice = 1 * kshim::NSEC_PER_MSEC;
    // A RUN_* on real Valhall descriptors holds its core for real_job_base plus a time from its
    // size (docs/mock_hw.md, "Real descriptors"), at most real_job_max: a single job is not split
    // into tasks, so one longer than the progress timeout would look like a hang.
    ktime_t real_job_base = 2 * kshim::NSEC_PER_USEC;
    u64 real_invocations_per_us = 16384;  // compute invocations one core retires per us
    u64 real_vertices_per_us = 4096;      // IDVS / tiling vertices (times instances) per us
    ktime_t real_tile = 200;              // one tile of a fragment job
    ktime_t real_job_max = 1 * kshim::NSEC_PER_SEC;

    static GpuLatencies zero() {
        GpuLatencies l{0, 0, 0, 0, 0, 0, 0, 0, 0};
        l.csg_request = l.csg_state = l.csg_suspend = 0;
        l.real_job_base = l.real_tile = 0;
        return l;
    }
};

struct McuConfig {
    u32 iface_version = panthor::CSF_IFACE_VERSION(1, 1, 0);
    u32 glb_features = 0x0;
    u32 instr_features = 0x71;
    u32 perfcnt_size = 0x0;
    u32 group_num = 8;
    u32 stream_num = 8;
    u32 csg_features = 0x0;
    u32 suspend_size = 0x8000;
    u32 protm_suspend_size = 0x8000;
    u32 work_regs = 96;
    u32 scoreboards = 8;
    u32 cs_features_extra = panthor::CS_FEATURES_COMPUTE | panthor::CS_FEATURES_FRAGMENT | panthor::CS_FEATURES_TILER;
    u32 cs_features() const { return ((work_regs - 1) & 0xFF) | ((scoreboards & 0xFF) << 8) | cs_features_extra; }
};

// One operating point of the GPU's operating-points-v2 table.
struct OppConfig {
    unsigned long hz = 0;
    unsigned long microvolt = 0;
};

// What the device tree says about the GPU node besides its registers (rk3588-base.dtsi's gpu@fb000000
// and its gpu-opp-table); MockPlatform builds the kshim::PlatformDevice from it.
struct PlatformConfig {
    std::string name = "fb000000.gpu";
    std::string compatible = "rockchip,rk3588-mali";
    kshim::phys_addr_t mmio_base = 0xfb000000;  // the register window in the SoC's memory map
    // clock-names, in order, with the rates below (an empty name: no such clock).
    std::string clk_names[3] = {"core", "coregroup", "stacks"};
    std::vector<OppConfig> opps = {
        {300'000'000, 675'000}, {400'000'000, 675'000}, {500'000'000, 675'000}, {600'000'000, 675'000},
        {700'000'000, 700'000}, {800'000'000, 750'000}, {900'000'000, 800'000}, {1'000'000'000, 850'000},
    };
    unsigned long core_clk_hz = 200'000'000;  // assigned-clock-rates
    // The DT assigns no rate to these two; the driver only gates them.
    unsigned long coregroup_clk_hz = 0;
    unsigned long stacks_clk_hz = 0;
    int mali_supply_microvolt = 675'000;  // the "mali" supply's voltage before the driver sets one
    bool dma_coherent = false;            // the RK3588 node has no dma-coherent property
};

struct GpuConfig {
    GpuIdentity id;
    GpuLatencies lat;
    McuConfig mcu;
    // GPU_TIMESTAMP ticks at the system-counter rate (the arch timer's CNTFRQ on RK3588).
    u64 timestamp_hz = 24'000'000;
    // GPU_CYCLE_COUNT and GPU-cycle-sourced FW timers.
    u64 gpu_clock_hz = 1'000'000'000;
    // Doorbell pages decoded: 0 (kernel) .. doorbell_count-1.
    u32 doorbell_count = 17;
    // Seed for FaultPlan probability triggers; 0 = the runtime's seed.
    u64 fault_seed = 0;
    // The platform device around the GPU (clocks, supply, OPPs, coherency): MockPlatform.
    PlatformConfig platform;
};

}  // namespace mock_hw
