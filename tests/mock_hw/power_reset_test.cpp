// GPU_CONTROL behaviour: power sequencing and timing, soft/hard reset, cache flush, the
// timestamp and cycle counters, GPU_STATUS.
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {
namespace {

using Power = MockHwTest;

TEST_F(Power, L2PowerOnShowsTransitionThenReady) {
    GpuConfig cfg;
    cfg.lat.power_transition = 30 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    EXPECT_EQ(d.r64(L2_READY), 0u);
    const auto t0 = kshim::ktime_get();
    d.w64(L2_PWRON, 1);
    // Intermediate state is visible: PWRTRANS set, READY not yet, GPU_STATUS.PWR_ACTIVE.
    EXPECT_EQ(d.r64(L2_PWRTRANS), 1u);
    EXPECT_EQ(d.r64(L2_READY), 0u);
    EXPECT_TRUE(d.r(GPU_STATUS) & GPU_STATUS_PWR_ACTIVE);
    advance(29 * NSEC_PER_USEC);
    EXPECT_EQ(d.r64(L2_PWRTRANS), 1u);
    ASSERT_TRUE(wait([&] { return d.r64(L2_PWRTRANS) == 0; }));
    EXPECT_EQ(kshim::ktime_get() - t0, 30 * NSEC_PER_USEC);
    EXPECT_EQ(d.r64(L2_READY), 1u);
    EXPECT_FALSE(d.r(GPU_STATUS) & GPU_STATUS_PWR_ACTIVE);
    EXPECT_EQ(d.r(GPU_INT_RAWSTAT) & (GPU_IRQ_POWER_CHANGED | GPU_IRQ_POWER_CHANGED_ALL),
              GPU_IRQ_POWER_CHANGED | GPU_IRQ_POWER_CHANGED_ALL);

    // Power off: same pattern.
    d.w(GPU_INT_CLEAR, ~0u);
    d.w64(L2_PWROFF, 1);
    EXPECT_EQ(d.r64(L2_PWRTRANS), 1u);
    EXPECT_EQ(d.r64(L2_READY), 1u);
    ASSERT_TRUE(wait([&] { return d.r64(L2_PWRTRANS) == 0; }));
    EXPECT_EQ(d.r64(L2_READY), 0u);
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_POWER_CHANGED);
}

TEST_F(Power, OnlyPresentCoresPowerAndHighWordWorks) {
    Gpu gpu;
    Drv d{gpu};
    d.w64(SHADER_PWRON, 0xFFFFFFFFFFFFFFFFull);
    ASSERT_TRUE(wait([&] { return d.r64(SHADER_PWRTRANS) == 0; }));
    EXPECT_EQ(d.r64(SHADER_READY), 0x50005u);
    d.w(SHADER_PWROFF, 0x5);  // LO word only
    ASSERT_TRUE(wait([&] { return d.r64(SHADER_PWRTRANS) == 0; }));
    EXPECT_EQ(d.r64(SHADER_READY), 0x50000u);
    // Powering an already-ready core is not a transition.
    d.w(GPU_INT_CLEAR, ~0u);
    d.w64(SHADER_PWRON, 0x50000);
    EXPECT_EQ(d.r64(SHADER_PWRTRANS), 0u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(d.r(GPU_INT_RAWSTAT), 0u);
}

TEST_F(Power, PowerChangedAllWaitsForEveryDomain) {
    GpuConfig cfg;
    cfg.lat.power_transition = 10 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    d.w64(L2_PWRON, 1);
    advance(5 * NSEC_PER_USEC);
    d.w64(TILER_PWRON, 1);
    ASSERT_TRUE(wait([&] { return d.r64(L2_READY) == 1; }));
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_POWER_CHANGED);
    EXPECT_FALSE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_POWER_CHANGED_ALL);
    ASSERT_TRUE(wait([&] { return d.r64(TILER_READY) == 1; }));
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_POWER_CHANGED_ALL);
}

TEST_F(Power, ZeroLatencyCompletesAtTheSameInstant) {
    GpuConfig cfg;
    cfg.lat = GpuLatencies::zero();
    Gpu gpu(cfg);
    Drv d{gpu};
    const auto t0 = kshim::ktime_get();
    d.w64(L2_PWRON, 1);
    EXPECT_EQ(d.r64(L2_PWRTRANS), 1u);  // still goes through the runtime
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(d.r64(L2_READY), 1u);
    EXPECT_EQ(kshim::ktime_get(), t0);
}

using Reset = MockHwTest;

TEST_F(Reset, SoftResetReturnsToPowerOnState) {
    GpuConfig cfg;
    cfg.lat.soft_reset = 40 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    PageTables pt;
    d.w64(L2_PWRON, 1);
    d.w(GPU_COHERENCY_PROTOCOL, GPU_COHERENCY_ACE_LITE);
    d.w(GPU_INT_MASK, 0x00020103);
    enable_as(d, 1, pt.root_pa());
    ASSERT_TRUE(wait([&] { return d.r64(L2_READY) == 1; }));
    d.w(GPU_INT_CLEAR, ~0u);

    d.w(GPU_CMD, GPU_SOFT_RESET);
    advance(39 * NSEC_PER_USEC);
    EXPECT_FALSE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED);
    EXPECT_EQ(d.r64(L2_READY), 1u);
    ASSERT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
    EXPECT_TRUE(gpu.irq_gpu().level());
    EXPECT_EQ(d.r64(L2_READY), 0u);
    EXPECT_EQ(d.r(GPU_COHERENCY_PROTOCOL), GPU_COHERENCY_NONE);
    EXPECT_EQ(d.r64(AS_TRANSTAB(1)), 0u);
    EXPECT_EQ(d.r64(AS_TRANSCFG(1)), AS_TRANSCFG_ADRMODE_UNMAPPED);
    {
        kshim::SpinGuard g(gpu.lock());
        EXPECT_EQ(gpu.mmu().config_locked(1).transcfg, AS_TRANSCFG_ADRMODE_UNMAPPED);
    }
    // The IRQ mask survives the reset (the driver waits on RESET_COMPLETED through it).
    EXPECT_EQ(d.r(GPU_INT_MASK), 0x00020103u);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_DISABLED);
}

TEST_F(Reset, HardResetUsesItsOwnLatency) {
    GpuConfig cfg;
    cfg.lat.soft_reset = 10 * NSEC_PER_USEC;
    cfg.lat.hard_reset = 70 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    const auto t0 = kshim::ktime_get();
    d.w(GPU_CMD, GPU_HARD_RESET);
    ASSERT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
    EXPECT_EQ(kshim::ktime_get() - t0, 70 * NSEC_PER_USEC);
}

using Flush = MockHwTest;

TEST_F(Flush, FlushCompletesAndAdvancesFlushIdOnFullL2CleanInvalidate) {
    GpuConfig cfg;
    cfg.lat.cache_flush = 8 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    const u32 id0 = d.r(CSF_GPU_LATEST_FLUSH_ID);
    d.w(GPU_CMD, GPU_FLUSH_CACHES(CACHE_CLEAN | CACHE_INV, 0, 0));
    EXPECT_FALSE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED);
    advance(7 * NSEC_PER_USEC);
    EXPECT_FALSE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED);
    advance(1 * NSEC_PER_USEC);
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_EQ(d.r(CSF_GPU_LATEST_FLUSH_ID), id0 + 1);
    // A clean-only flush (panthor's CSG-suspend flush 0x1104) completes but keeps the ID.
    d.w(GPU_INT_CLEAR, GPU_IRQ_CLEAN_CACHES_COMPLETED);
    d.w(GPU_CMD, GPU_FLUSH_CACHES(CACHE_CLEAN, CACHE_CLEAN, 0));
    ASSERT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED; }));
    EXPECT_EQ(d.r(CSF_GPU_LATEST_FLUSH_ID), id0 + 1);
    // The USER page is read-only.
    d.w(CSF_GPU_LATEST_FLUSH_ID, 0);
    EXPECT_EQ(d.r(CSF_GPU_LATEST_FLUSH_ID), id0 + 1);
}

using Counters = MockHwTest;

TEST_F(Counters, TimestampFollowsRuntimeClockAndOffset) {
    GpuConfig cfg;
    cfg.timestamp_hz = 24'000'000;
    Gpu gpu(cfg);
    Drv d{gpu};
    const u64 t0 = d.read_counter(GPU_TIMESTAMP);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(d.read_counter(GPU_TIMESTAMP) - t0, 24'000u);
    d.w64(GPU_TIMESTAMP_OFFSET, 1'000'000);
    EXPECT_EQ(d.read_counter(GPU_TIMESTAMP) - t0, 1'024'000u);
    EXPECT_EQ(d.r64(GPU_TIMESTAMP_OFFSET), 1'000'000u);
}

TEST_F(Counters, TimestampHiLoHiIsConsistentAcrossLowWordWrap) {
    GpuConfig cfg;
    cfg.timestamp_hz = 1'000'000'000;  // one tick per ns
    Gpu gpu(cfg);
    Drv d{gpu};
    // Put the low word 100 ticks before wrapping.
    const u64 now = d.read_counter(GPU_TIMESTAMP);
    d.w64(GPU_TIMESTAMP_OFFSET, 0xFFFFFF9Cull - (now & 0xFFFFFFFF));
    const u64 before = d.read_counter(GPU_TIMESTAMP);
    EXPECT_EQ(before >> 32, 0u);
    advance(200);
    const u64 after = d.read_counter(GPU_TIMESTAMP);
    EXPECT_EQ(after >> 32, 1u);
    EXPECT_EQ(after - before, 200u);
}

TEST_F(Counters, CycleCounterRunsOnlyWhileStarted) {
    GpuConfig cfg;
    cfg.gpu_clock_hz = 500'000'000;
    Gpu gpu(cfg);
    Drv d{gpu};
    advance(NSEC_PER_USEC);
    EXPECT_EQ(d.read_counter(GPU_CYCLE_COUNT), 0u);
    d.w(GPU_CMD, GPU_START_CYCLE_COUNTING);
    advance(10 * NSEC_PER_USEC);
    EXPECT_EQ(d.read_counter(GPU_CYCLE_COUNT), 5000u);
    d.w(GPU_CMD, GPU_STOP_CYCLE_COUNTING);
    advance(10 * NSEC_PER_USEC);
    EXPECT_EQ(d.read_counter(GPU_CYCLE_COUNT), 5000u);
}

TEST_F(Counters, ClearFaultClearsGpuFaultRegisters) {
    Gpu gpu;
    Drv d{gpu};
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.control().raise_gpu_fault_locked(0x80 | GPU_FAULT_STATUS_ADDRESS_VALID, 0x123456000);
    }
    EXPECT_EQ(d.r(GPU_FAULT_STATUS), 0x80u | GPU_FAULT_STATUS_ADDRESS_VALID);
    EXPECT_EQ(d.r64(GPU_FAULT_ADDR), 0x123456000u);
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_FAULT);
    d.w(GPU_CMD, GPU_CLEAR_FAULT);
    EXPECT_EQ(d.r(GPU_FAULT_STATUS), 0u);
    EXPECT_EQ(d.r64(GPU_FAULT_ADDR), 0u);
}

}  // namespace
}  // namespace mock_hw::testing
