// The mock Mali-G52's configuration: the identity a real Mali-G52 r1 (RK3566/RK3568) reports, the
// latencies of its blocks and jobs, and how it treats jobs that would run shaders. The shared part
// (identity, power/reset/AS latencies, clocks, fault seed) is mock_hw's GpuConfig; the CSF-only
// fields of it (MCU, doorbells, CSF_ID) are ignored by a JM GPU.
#pragma once
#include "hw/jm/models.h"
#include "hw/jm/regs/exceptions.h"
#include "mock_hw/config.h"

namespace mock_jm {

using kshim::ktime_t;
using kshim::u32;
using kshim::u64;
using kshim::u8;
using mock_hw::GpuConfig;

// What a job slot does with a job that would run shaders (COMPUTE, VERTEX, TILER, FUSED, FRAGMENT,
// INDEXED_VERTEX, MALLOC_VERTEX). No shader core is modelled: such a job either takes its
// modelled time and completes, or fails with JOB_CONFIG_FAULT (a driver test that wants to see
// every shader job refused).
enum class ShaderJobPolicy { Complete, ConfigFault };

struct JmLatencies {
    // A NULL, WRITE_VALUE or CACHE_FLUSH job.
    ktime_t simple_job = 100;
    // A job that would run shaders: base plus a time from its size (docs/mock_jm.md, "Job times"),
    // at most shader_job_max (a soft stop waits for the running job to end).
    ktime_t shader_job_base = 2 * kshim::NSEC_PER_USEC;
    u64 invocations_per_us = 1024;  // compute/vertex invocations the G52's one core retires per us
    ktime_t tile = 500;             // one tile of a fragment job
    ktime_t shader_job_max = 2 * kshim::NSEC_PER_MSEC;
    // A slot runs jobs for at most this much modelled time before the host gets the CPU back.
    ktime_t slice = 20 * kshim::NSEC_PER_USEC;
    // A chain that has run this long without ending (an endless loop) gets one slice per
    // throttle_slice: virtual time keeps its rate, the host stops spending CPU on it.
    ktime_t throttle_after = 1 * kshim::NSEC_PER_MSEC;
    ktime_t throttle_slice = 1 * kshim::NSEC_PER_MSEC;
    // JS_COMMAND SOFT_STOP / HARD_STOP to the STOPPED / TERMINATED interrupt.
    ktime_t hard_stop = 1 * kshim::NSEC_PER_USEC;

    static JmLatencies zero() {
        JmLatencies l;
        l.simple_job = l.shader_job_base = l.tile = l.hard_stop = 0;
        return l;
    }
};

// The shared configuration with a Mali-G52 r1's identity (hw/jm/models.h, kG52R1).
inline GpuConfig g52_gpu_config() {
    GpuConfig c;
    const panfrost::IdentityRegs& id = panfrost::kG52R1;
    c.id.gpu_id = id.gpu_id;
    c.id.l2_features = id.l2_features;
    c.id.core_features = id.core_features;
    c.id.tiler_features = id.tiler_features;
    c.id.mem_features = id.mem_features;
    c.id.mmu_features = id.mmu_features;
    c.id.as_present = id.as_present;
    c.id.shader_present = id.shader_present;
    c.id.tiler_present = id.tiler_present;
    c.id.l2_present = id.l2_present;
    c.id.csf_id = 0;
    // Not printed by any public boot log: plausible values, opaque to panfrost (it exports them).
    c.id.thread_max_threads = 768;
    c.id.thread_max_workgroup_size = 384;
    c.id.thread_max_barrier_size = 384;
    c.id.thread_features = 0x0A040400;
    c.id.coherency_features = 0x1;  // ACE-Lite
    // The power domains of a G52: L2 20 ms, shader cores 20 ms, tiler 1 ms at most; one latency.
    c.lat.power_transition = 20 * kshim::NSEC_PER_USEC;
    c.platform.name = "fde60000.gpu";
    c.platform.compatible = "rockchip,rk3568-mali";
    c.platform.opps = {{200'000'000, 825'000}, {300'000'000, 825'000}, {400'000'000, 825'000},
                       {600'000'000, 825'000}, {700'000'000, 900'000}, {800'000'000, 1'000'000}};
    // rk356x.dtsi's gpu@fde60000: clocks "gpu" (SCMI) and "bus"; panfrost takes the first unnamed.
    c.platform.mmio_base = 0xfde60000;
    c.platform.clk_names[0] = "gpu";
    c.platform.clk_names[1] = "bus";
    c.platform.clk_names[2] = "";
    c.platform.core_clk_hz = 200'000'000;
    c.platform.mali_supply_microvolt = 825'000;
    c.gpu_clock_hz = 800'000'000;
    return c;
}

struct JmConfig {
    GpuConfig gpu = g52_gpu_config();
    u32 js_present = panfrost::kG52R1.js_present;
    // GPU_JS_FEATURES(n) (not in public logs: the mock's choice; panfrost only exports them).
    u32 js_features[3] = {0x20E, 0x1FE, 0x07E};
    u32 stack_present = 0x1;
    u32 thread_tls_alloc = 0;
    u32 afbc_features = 0;
    // Mesa's descriptor version (5 Midgard, 6/7 Bifrost, 9 Valhall-JM): which job types exist and
    // whether `next` is always 64-bit.
    u32 arch = panfrost::kG52R1.mesa_arch;
    JmLatencies jm_lat;
    ShaderJobPolicy shader_jobs = ShaderJobPolicy::Complete;
    // JS_STATUS of a job whose access was stalled on an AS that software then disabled (IGT's
    // panfrost tests expect JOB_BUS_FAULT; docs/mock_jm.md, "MMU faults").
    u8 disabled_as_status = panfrost::DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT;
};

}  // namespace mock_jm
