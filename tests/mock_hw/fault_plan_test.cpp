// The FaultPlan: each injected fault's visible effect, and the three kinds of trigger.
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {
namespace {

class Faults : public MockHwTest {
protected:
    void start(Gpu& gpu, FwLoader& fw) {
        Drv d{gpu};
        enable_as(d, 0, fw.pt.root_pa());
        d.w(JOB_INT_MASK, ~0u);
        d.w(MCU_CONTROL, MCU_CONTROL_AUTO);
        ASSERT_TRUE(wait([&] { return d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF; }));
        d.w(JOB_INT_CLEAR, ~0u);
        auto* ctrl = fw.host<panthor_fw_global_control_iface>(CSF_MCU_SHARED_REGION_START);
        in = fw.host<panthor_fw_global_input_iface>(ctrl->input_va);
        out = fw.host<panthor_fw_global_output_iface>(ctrl->output_va);
        in->ack_irq_mask = 0x0400050E;
    }
    void toggle_and_ring(Drv& d, u32 bits) {
        in->req = (in->req & ~bits) | ((out->ack ^ bits) & bits);
        d.w(CSF_DOORBELL(0), 1);
    }
    bool acked(u32 bits) { return ((in->req ^ out->ack) & bits) == 0; }
    // panthor_fw_glb_wait_acks with its 100 ms timeout.
    bool ping(Drv& d) {
        toggle_and_ring(d, GLB_PING);
        return wait([&] { return acked(GLB_PING); }, 100 * NSEC_PER_MSEC);
    }
    panthor_fw_global_input_iface* in = nullptr;
    panthor_fw_global_output_iface* out = nullptr;
};

TEST_F(Faults, GlbAckDropLosesOneRequest) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    const int id = gpu.faults().add(
        {.kind = FaultKind::GlbAckDrop, .trigger = FaultTrigger::nth_occurrence(2), .glb_req_mask = GLB_PING});
    EXPECT_TRUE(ping(d));
    d.w(JOB_INT_CLEAR, ~0u);
    EXPECT_FALSE(ping(d));  // the second ping is never acked: panthor would reset the GPU
    EXPECT_EQ(gpu.faults().fired(id), 1u);
    EXPECT_EQ(d.r(JOB_INT_RAWSTAT), 0u);
    // Other requests are still served while the ping stays pending.
    toggle_and_ring(d, GLB_CFG_ALLOC_EN);
    EXPECT_TRUE(wait([&] { return acked(GLB_CFG_ALLOC_EN); }));
    EXPECT_FALSE(acked(GLB_PING));
}

TEST_F(Faults, GlbAckDelayAcksLate) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    gpu.faults().add({.kind = FaultKind::GlbAckDelay,
                      .trigger = FaultTrigger::always(),
                      .glb_req_mask = GLB_CFG_ALLOC_EN,
                      .delay = 50 * NSEC_PER_MSEC});
    in->core_en_mask = 0x5;
    const auto t0 = kshim::ktime_get();
    toggle_and_ring(d, GLB_CFG_ALLOC_EN | GLB_PING);
    ASSERT_TRUE(wait([&] { return acked(GLB_PING); }));
    EXPECT_FALSE(acked(GLB_CFG_ALLOC_EN));
    ASSERT_TRUE(wait([&] { return acked(GLB_CFG_ALLOC_EN); }));
    EXPECT_GE(kshim::ktime_get() - t0, 50 * NSEC_PER_MSEC);
    EXPECT_TRUE(d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF);
    kshim::SpinGuard g(gpu.lock());
    EXPECT_EQ(gpu.mcu().core_en_mask_locked(), 0x5u);
}

TEST_F(Faults, FirmwareHangAtTimeStopsAnswering) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    const auto hang_at = kshim::ktime_get() + 10 * NSEC_PER_MSEC;
    gpu.faults().add({.kind = FaultKind::FwHang, .trigger = FaultTrigger::at_time(hang_at)});
    EXPECT_TRUE(ping(d));
    advance(hang_at - kshim::ktime_get());
    EXPECT_FALSE(ping(d));
    // HALT is not honoured either: panthor falls back to a slow reset.
    in->req |= GLB_HALT;
    d.w(CSF_DOORBELL(0), 1);
    EXPECT_FALSE(wait([&] { return d.r(MCU_STATUS) == MCU_STATUS_HALT; }));
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_ENABLED);
    // A GPU reset clears the hang.
    d.w(GPU_CMD, GPU_SOFT_RESET);
    ASSERT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
    kshim::SpinGuard g(gpu.lock());
    EXPECT_FALSE(gpu.mcu().hung_locked());
}

TEST_F(Faults, McuFatalWithHaltStatus) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    gpu.faults().add({.kind = FaultKind::McuFatal,
                      .trigger = FaultTrigger::nth_occurrence(2),
                      .halt_status = GLB_HALT_STATUS_WATCHDOG_EXPIRY});
    EXPECT_TRUE(ping(d));
    EXPECT_FALSE(ping(d));
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_FATAL);
    EXPECT_EQ(out->halt_status, GLB_HALT_STATUS_WATCHDOG_EXPIRY);
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_MCU_STATUS_CHANGED);
}

TEST_F(Faults, BootFailOnFirstBootOnly) {
    Gpu gpu;
    Drv d{gpu};
    FwImage img = default_fw_image();
    FwLoader fw(img);
    gpu.faults().add({.kind = FaultKind::BootFail, .trigger = FaultTrigger::nth_occurrence(1)});
    enable_as(d, 0, fw.pt.root_pa());
    d.w(JOB_INT_MASK, ~0u);
    d.w(MCU_CONTROL, MCU_CONTROL_AUTO);
    EXPECT_FALSE(wait([&] { return d.r(JOB_INT_RAWSTAT) != 0; }, 1000 * NSEC_PER_MSEC));
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_FATAL);
    // Reset and retry: boots.
    d.w(GPU_CMD, GPU_SOFT_RESET);
    ASSERT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
    start(gpu, fw);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_ENABLED);
}

TEST_F(Faults, GpuFaultAtTime) {
    Gpu gpu;
    Drv d{gpu};
    d.w(GPU_INT_MASK, 0x00020103);
    const u32 status = 0x88 | GPU_FAULT_STATUS_ADDRESS_VALID;
    gpu.faults().add({.kind = FaultKind::GpuFault,
                      .trigger = FaultTrigger::at_time(5 * NSEC_PER_MSEC + kshim::ktime_get()),
                      .fault_status = status,
                      .fault_addr = 0xABC000});
    advance(4 * NSEC_PER_MSEC);
    EXPECT_FALSE(gpu.irq_gpu().level());
    advance(NSEC_PER_MSEC);
    EXPECT_TRUE(gpu.irq_gpu().level());
    EXPECT_EQ(d.r(GPU_FAULT_STATUS), status);
    EXPECT_EQ(d.r64(GPU_FAULT_ADDR), 0xABC000u);
}

TEST_F(Faults, GpuFaultOnNthCommand) {
    Gpu gpu;
    Drv d{gpu};
    gpu.faults().add({.kind = FaultKind::GpuFault, .trigger = FaultTrigger::nth_occurrence(3), .fault_status = 0x80});
    d.w(GPU_CMD, GPU_FLUSH_CACHES(3, 0, 0));
    d.w(GPU_CMD, GPU_FLUSH_CACHES(3, 0, 0));
    EXPECT_EQ(d.r(GPU_FAULT_STATUS), 0u);
    d.w(GPU_CMD, GPU_FLUSH_CACHES(3, 0, 0));
    EXPECT_EQ(d.r(GPU_FAULT_STATUS), 0x80u);
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_FAULT);
    ASSERT_TRUE(advance_until_idle());
}

TEST_F(Faults, AsActiveStuckOnOneAddressSpace) {
    Gpu gpu;
    Drv d{gpu};
    gpu.faults().add({.kind = FaultKind::AsActiveStuck, .trigger = FaultTrigger::always(), .as = 1});
    d.w(AS_COMMAND(1), AS_COMMAND_UPDATE);
    d.w(AS_COMMAND(2), AS_COMMAND_UPDATE);
    // panthor's wait_ready gives up after 100 ms and schedules a reset.
    EXPECT_FALSE(wait([&] { return !(d.r(AS_STATUS(1)) & AS_STATUS_AS_ACTIVE); }));
    EXPECT_EQ(d.r(AS_STATUS(2)), 0u);
    EXPECT_EQ(d.r(MMU_INT_RAWSTAT), MMU_INT_REQ_COMPLETE(2));
    d.w(GPU_CMD, GPU_SOFT_RESET);
    ASSERT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
    EXPECT_EQ(d.r(AS_STATUS(1)), 0u);
}

TEST_F(Faults, ResetNeverCompletes) {
    Gpu gpu;
    Drv d{gpu};
    gpu.faults().add({.kind = FaultKind::ResetNeverCompletes});
    d.w(GPU_CMD, GPU_SOFT_RESET);
    EXPECT_FALSE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
    // max_fires = 1: the next attempt works.
    d.w(GPU_CMD, GPU_SOFT_RESET);
    EXPECT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
}

TEST_F(Faults, FlushNeverCompletes) {
    Gpu gpu;
    Drv d{gpu};
    gpu.faults().add({.kind = FaultKind::FlushNeverCompletes, .trigger = FaultTrigger::always(), .max_fires = 0});
    d.w(GPU_CMD, GPU_FLUSH_CACHES(3, 3, 0));
    EXPECT_FALSE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED; }));
    d.w(GPU_CMD, GPU_FLUSH_CACHES(3, 3, 0));
    EXPECT_FALSE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED; }));
}

TEST_F(Faults, SlowPowerTransitions) {
    GpuConfig cfg;
    cfg.lat.power_transition = 100 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    gpu.faults().add({.kind = FaultKind::SlowPower, .slow_factor = 300});
    const auto t0 = kshim::ktime_get();
    d.w64(L2_PWRON, 1);
    // panthor's 20 ms power-on timeout expires first.
    EXPECT_FALSE(wait([&] { return d.r64(L2_PWRTRANS) == 0; }, 20 * NSEC_PER_MSEC));
    ASSERT_TRUE(wait([&] { return d.r64(L2_PWRTRANS) == 0; }));
    EXPECT_EQ(kshim::ktime_get() - t0, 30 * NSEC_PER_MSEC);
}

TEST_F(Faults, ProbabilityTriggerIsSeededAndReplays) {
    auto pattern = [&](u64 seed) {
        GpuConfig cfg;
        cfg.fault_seed = seed;
        Gpu gpu(cfg);
        Drv d{gpu};
        FwLoader fw(default_fw_image());
        start(gpu, fw);
        gpu.faults().add({.kind = FaultKind::GlbAckDelay,
                          .trigger = FaultTrigger::with_probability(0.5),
                          .glb_req_mask = GLB_PING,
                          .delay = NSEC_PER_MSEC,
                          .max_fires = 0});
        std::string p;
        for (int i = 0; i < 32; i++) {
            toggle_and_ring(d, GLB_PING);
            // Served within 1 ms unless delayed.
            p += wait([&] { return acked(GLB_PING); }, NSEC_PER_MSEC / 2) ? '.' : 'D';
            EXPECT_TRUE(wait([&] { return acked(GLB_PING); }));
        }
        return p;
    };
    const std::string a = pattern(42), b = pattern(42), c = pattern(43);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(a.find('D'), std::string::npos);
    EXPECT_NE(a.find('.'), std::string::npos);
}

}  // namespace
}  // namespace mock_hw::testing
