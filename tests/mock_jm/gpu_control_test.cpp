// GPU_CONTROL of the mock Mali-G52 at register level, as panfrost relies on it: the identity of a
// G52 r1, quirk storage, power domains, soft/hard reset (slots idle, no job IRQ after it, AS and
// power forgotten), cache and perfcnt commands, LATEST_FLUSH_ID, the cycle counter, the timestamp,
// the GPU interrupt quadruple and its line, unknown offsets and read-only registers; plus the
// FaultPlan kinds ResetNeverCompletes and SlowPower.
#include "mock_hw/fault_plan.h"
#include "tests/mock_jm/jm_test.h"

namespace mock_jm::testing {
namespace {

using mock_hw::FaultKind;
using mock_hw::FaultSpec;
using mock_hw::FaultTrigger;

class GpuControl : public JmTest {
protected:
    // IGT's endless chain: two WRITE_VALUE jobs linked in a ring, each zeroing the other's
    // exception status so it may run again.
    u64 loop_chain() {
        const u64 a = arena().write_value(0, kWriteValueImmediate32, 0, 1);
        const u64 b = arena().write_value(a, kWriteValueImmediate32, 0, 1, a);
        arena().at<WriteValuePayload>(a + kJobPayloadOffset)->address = b;
        arena().header(b)->next = a;
        return a;
    }
    u64 jobs_completed(u32 js) {
        kshim::SpinGuard g(gpu().lock());
        return gpu().jobs().stats_locked(js).jobs_completed;
    }
};

TEST_F(GpuControl, IdentityAndFeatureRegistersAreThoseOfAG52R1) {
    const IdentityRegs& id = kG52R1;
    EXPECT_EQ(d().r(GPU_ID), id.gpu_id);
    EXPECT_EQ(d().r(GPU_L2_FEATURES), id.l2_features);
    EXPECT_EQ(d().r(GPU_CORE_FEATURES), id.core_features);
    EXPECT_EQ(d().r(GPU_TILER_FEATURES), id.tiler_features);
    EXPECT_EQ(d().r(GPU_MEM_FEATURES), id.mem_features);
    EXPECT_EQ(d().r(GPU_MMU_FEATURES), id.mmu_features);
    EXPECT_EQ(d().r(GPU_AS_PRESENT), id.as_present);
    EXPECT_EQ(d().r(GPU_JS_PRESENT), id.js_present);
    EXPECT_EQ(d().r64(GPU_SHADER_PRESENT_LO), id.shader_present);
    EXPECT_EQ(d().r64(GPU_TILER_PRESENT_LO), id.tiler_present);
    EXPECT_EQ(d().r64(GPU_L2_PRESENT_LO), id.l2_present);
    EXPECT_EQ(d().r64(GPU_STACK_PRESENT_LO), 1u);
    EXPECT_EQ(d().r(GPU_COHERENCY_FEATURES), COHERENCY_ACE_LITE);
    EXPECT_EQ(d().r(GPU_THREAD_MAX_THREADS), 768u);
    EXPECT_EQ(d().r(GPU_THREAD_MAX_WORKGROUP_SIZE), 384u);
    EXPECT_EQ(d().r(GPU_THREAD_MAX_BARRIER_SIZE), 384u);
    EXPECT_EQ(d().r(GPU_THREAD_FEATURES), 0x0A040400u);
    EXPECT_EQ(d().r(GPU_AFBC_FEATURES), 0u);
    EXPECT_EQ(d().r(GPU_THREAD_TLS_ALLOC), 0u);
    EXPECT_EQ(d().r(GPU_STATUS), 0u);
    EXPECT_EQ(d().r(GPU_FAULT_STATUS), 0u);
    EXPECT_EQ(d().r64(GPU_FAULT_ADDRESS_LO), 0u);
    // The Bifrost decoding of GPU_ID: arch 7.2, product major 1 (G52), r1p0.
    EXPECT_EQ(d().r(GPU_ID) >> 28, 7u);
    EXPECT_EQ((d().r(GPU_ID) >> 12) & 0xF, 1u);
}

TEST_F(GpuControl, JsFeaturesExistForThePresentSlotsOnly) {
    const JmConfig cfg;
    for (u32 n = 0; n < GPU_JS_FEATURES_COUNT; n++)
        EXPECT_EQ(d().r(GPU_JS_FEATURES(n)), n < 3 ? cfg.js_features[n] : 0u) << n;
    EXPECT_NE(d().r(GPU_JS_FEATURES(0)), 0u);
    // A GPU with two slots reports no features for the third.
    JmConfig two;
    two.js_present = 0x3;
    make_gpu(two);
    EXPECT_EQ(d().r(GPU_JS_PRESENT), 0x3u);
    EXPECT_EQ(d().r(GPU_JS_FEATURES(1)), two.js_features[1]);
    EXPECT_EQ(d().r(GPU_JS_FEATURES(2)), 0u);
}

TEST_F(GpuControl, QuirkAndPerfcntRegistersAreReadWriteStorage) {
    const u32 regs[] = {GPU_JM_CONFIG,        GPU_SHADER_CONFIG,   GPU_TILER_CONFIG,     GPU_L2_MMU_CONFIG,
                        GPU_PWR_OVERRIDE0,    GPU_PWR_OVERRIDE1,   GPU_PERFCNT_CFG,      GPU_PRFCNT_JM_EN,
                        GPU_PRFCNT_SHADER_EN, GPU_PRFCNT_TILER_EN, GPU_PRFCNT_MMU_L2_EN, GPU_PERFCNT_BASE_LO,
                        GPU_PERFCNT_BASE_HI};
    for (u32 off : regs)
        EXPECT_EQ(d().r(off), 0u) << std::hex << off;
    u32 v = 0x000F0000;
    for (u32 off : regs)
        d().w(off, v++);
    v = 0x000F0000;
    for (u32 off : regs)
        EXPECT_EQ(d().r(off), v++) << std::hex << off;
    // panfrost's TILER_CONFIG read-modify-write, and the G52's JM_CONFIG value.
    d().w(GPU_TILER_CONFIG, d().r(GPU_TILER_CONFIG) | TC_CLOCK_GATE_OVERRIDE);
    EXPECT_TRUE(d().r(GPU_TILER_CONFIG) & TC_CLOCK_GATE_OVERRIDE);
    d().w(GPU_JM_CONFIG, JM_DEFAULT_IDVS_GROUP_SIZE << JM_IDVS_GROUP_SIZE_SHIFT);
    EXPECT_EQ(d().r(GPU_JM_CONFIG), 0x000F0000u);
    // The Amlogic unlock: PWR_KEY is accepted, reads 0.
    d().w(GPU_PWR_KEY, GPU_PWR_KEY_UNLOCK);
    EXPECT_EQ(d().r(GPU_PWR_KEY), 0u);
    EXPECT_EQ(gpu().readonly_writes(), 0u);
}

TEST_F(GpuControl, PowerOnShowsPwrtransThenReadyAfterTheLatency) {
    const ktime_t lat = gpu().config().lat.power_transition;
    struct Dom {
        u32 pwron, pwroff, ready, trans;
    } doms[] = {{L2_PWRON_LO, L2_PWROFF_LO, L2_READY_LO, L2_PWRTRANS_LO},
                {SHADER_PWRON_LO, SHADER_PWROFF_LO, SHADER_READY_LO, SHADER_PWRTRANS_LO},
                {TILER_PWRON_LO, TILER_PWROFF_LO, TILER_READY_LO, TILER_PWRTRANS_LO}};
    for (const Dom& dm : doms) {
        SCOPED_TRACE(dm.pwron);
        d().w(GPU_INT_CLEAR, ~0u);
        EXPECT_EQ(d().r(dm.ready), 0u);
        d().w(dm.pwron, 1);
        EXPECT_EQ(d().r(dm.trans), 1u);
        EXPECT_EQ(d().r(dm.ready), 0u);
        EXPECT_EQ(d().r(dm.pwron), 0u);  // write-only
        advance(lat - 1);
        EXPECT_EQ(d().r(dm.trans), 1u);
        EXPECT_EQ(d().r(dm.ready), 0u);
        advance(1);
        EXPECT_EQ(d().r(dm.trans), 0u);
        EXPECT_EQ(d().r(dm.ready), 1u);
        EXPECT_TRUE(d().r(GPU_INT_RAWSTAT) & GPU_IRQ_POWER_CHANGED);
        EXPECT_TRUE(d().r(GPU_INT_RAWSTAT) & GPU_IRQ_POWER_CHANGED_ALL);
        // PWROFF: PWRTRANS during the transition, READY cleared at its end.
        d().w(dm.pwroff, 1);
        EXPECT_EQ(d().r(dm.trans), 1u);
        ASSERT_TRUE(wait([&] { return d().r(dm.trans) == 0; }, 2 * NSEC_PER_MSEC));
        EXPECT_EQ(d().r(dm.ready), 0u);
    }
}

TEST_F(GpuControl, SlowPowerStretchesTheTransition) {
    const ktime_t lat = gpu().config().lat.power_transition;
    FaultSpec f;
    f.kind = FaultKind::SlowPower;
    f.slow_factor = 10;
    const int id = gpu().faults().add(f);
    d().w(L2_PWRON_LO, 1);
    advance(lat * 5);
    EXPECT_EQ(d().r(L2_READY_LO), 0u);
    EXPECT_EQ(d().r(L2_PWRTRANS_LO), 1u);
    advance(lat * 5);
    EXPECT_EQ(d().r(L2_READY_LO), 1u);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    // max_fires 1: the next transition has the normal latency.
    d().w(SHADER_PWRON_LO, 1);
    advance(lat);
    EXPECT_EQ(d().r(SHADER_READY_LO), 1u);
}

class GpuReset : public GpuControl, public ::testing::WithParamInterface<u32> {};

// Jobs running on two slots and a NEXT armed behind one: the reset stops them all, raises no job
// interrupt then or later, forgets the AS and the power state, and raises RESET_COMPLETED.
TEST_P(GpuReset, StopsEverySlotSilentlyAndForgetsAsAndPower) {
    bring_up();
    d().w(JOB_INT_MASK, 0x00070007);
    const u64 loop0 = loop_chain(), loop2 = loop_chain();
    const u64 target = arena().alloc(8);
    const u64 wv = arena().write_value(target, kWriteValueImmediate32, 0x1234, 1);
    submit(0, loop0);
    submit(2, loop2);
    submit(0, wv);  // armed behind the loop
    advance(50 * NSEC_PER_USEC);
    ASSERT_EQ(d().r(JOB_INT_JS_STATE), 0x00010005u);
    ASSERT_EQ(d().r(JS_COMMAND_NEXT(0)), JS_COMMAND_START);
    ASSERT_EQ(d().r(JS_STATUS(0)), DRM_PANFROST_EXCEPTION_ACTIVE);
    ASSERT_EQ(d().r(JOB_INT_RAWSTAT), 0u);

    d().w(GPU_CMD, GetParam());
    // Nothing runs any more from the reset command on.
    const u64 jobs0 = jobs_completed(0), jobs2 = jobs_completed(2);
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }, 10 * NSEC_PER_MSEC));
    for (u32 js = 0; js < 3; js++) {
        SCOPED_TRACE(js);
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), 0u);
        EXPECT_EQ(d().r(JS_STATUS(js)), 0u);
        EXPECT_EQ(d().r64(JS_HEAD_LO(js)), 0u);
        EXPECT_EQ(d().r64(JS_TAIL_LO(js)), 0u);
        EXPECT_EQ(d().r(JS_CONFIG(js)), 0u);
        EXPECT_EQ(d().r64(JS_AFFINITY_LO(js)), 0u);
    }
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    EXPECT_EQ(d().r64(AS_TRANSTAB(kAs)), 0u);
    EXPECT_EQ(d().r64(AS_MEMATTR(kAs)), 0u);
    EXPECT_EQ(d().r64(AS_TRANSCFG(kAs)), 0u);
    EXPECT_EQ(d().r(L2_READY_LO), 0u);
    EXPECT_EQ(d().r(SHADER_READY_LO), 0u);
    EXPECT_EQ(d().r(TILER_READY_LO), 0u);
    // Long after: still no job interrupt, no job ran, the armed chain never started.
    advance(20 * NSEC_PER_MSEC);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    EXPECT_FALSE(gpu().irq_job().level());
    EXPECT_EQ(jobs_completed(0), jobs0);
    EXPECT_EQ(jobs_completed(2), jobs2);
    EXPECT_EQ(*arena().at<u32>(target), 0u);
    EXPECT_EQ(arena().header(wv)->exception_status, 0u);
    // The GPU works again after panfrost's bring-up.
    d().w(GPU_INT_CLEAR, ~0u);
    bring_up();
    EXPECT_EQ(run_chain(1, wv), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 0x1234u);
}

INSTANTIATE_TEST_SUITE_P(SoftAndHard, GpuReset, ::testing::Values(GPU_CMD_SOFT_RESET, GPU_CMD_HARD_RESET),
                         [](const auto& info) { return info.param == GPU_CMD_SOFT_RESET ? "Soft" : "Hard"; });

TEST_F(GpuControl, ResetCompletesAfterItsLatency) {
    const ktime_t lat = gpu().config().lat.soft_reset;
    d().w(GPU_CMD, GPU_CMD_SOFT_RESET);
    advance(lat - 1);
    EXPECT_FALSE(d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED);
    advance(1);
    EXPECT_TRUE(d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED);
}

TEST_F(GpuControl, ResetNeverCompletesHoldsSlotsUntilASecondReset) {
    bring_up();
    FaultSpec f;
    f.kind = FaultKind::ResetNeverCompletes;
    const int id = gpu().faults().add(f);
    submit(0, loop_chain());
    advance(10 * NSEC_PER_USEC);
    d().w(GPU_CMD, GPU_CMD_SOFT_RESET);
    advance(50 * NSEC_PER_MSEC);
    EXPECT_FALSE(d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
    // While the reset is pending, an armed chain is not promoted.
    const u64 target = arena().alloc(8);
    submit(1, arena().write_value(target, kWriteValueImmediate32, 7, 1));
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(d().r(JS_COMMAND_NEXT(1)), JS_COMMAND_START);
    EXPECT_EQ(*arena().at<u32>(target), 0u);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    // The driver's recovery (a hard reset) completes, and drops the armed chain.
    d().w(GPU_CMD, GPU_CMD_HARD_RESET);
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }, 10 * NSEC_PER_MSEC));
    EXPECT_EQ(d().r(JS_COMMAND_NEXT(1)), 0u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(*arena().at<u32>(target), 0u);
}

TEST_F(GpuControl, CacheCommandsRaiseCleanCachesCompleted) {
    const ktime_t lat = gpu().config().lat.cache_flush;
    for (u32 cmd : {GPU_CMD_CLEAN_CACHES, GPU_CMD_CLEAN_INV_CACHES}) {
        SCOPED_TRACE(cmd);
        d().w(GPU_CMD, cmd);
        advance(lat - 1);
        EXPECT_EQ(d().r(GPU_INT_RAWSTAT), 0u);
        advance(1);
        EXPECT_EQ(d().r(GPU_INT_RAWSTAT), GPU_IRQ_CLEAN_CACHES_COMPLETED);
        d().w(GPU_INT_CLEAR, GPU_IRQ_CLEAN_CACHES_COMPLETED);
        EXPECT_EQ(d().r(GPU_INT_RAWSTAT), 0u);
    }
}

TEST_F(GpuControl, PerfcntSampleRaisesBit16Only) {
    d().w(GPU_CMD, GPU_CMD_PERFCNT_CLEAR);
    d().w(GPU_CMD, GPU_CMD_PERFCNT_SAMPLE);
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) != 0; }, NSEC_PER_MSEC));
    EXPECT_EQ(d().r(GPU_INT_RAWSTAT), GPU_IRQ_PERFCNT_SAMPLE_COMPLETED);
    EXPECT_EQ(GPU_IRQ_PERFCNT_SAMPLE_COMPLETED, 1u << 16);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(d().r(GPU_INT_RAWSTAT), GPU_IRQ_PERFCNT_SAMPLE_COMPLETED);
}

TEST_F(GpuControl, LatestFlushIdAdvancesOnCleanInvalidateOnly) {
    const u32 id0 = d().r(GPU_LATEST_FLUSH_ID);
    EXPECT_NE(id0, 0u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(d().r(GPU_LATEST_FLUSH_ID), id0);  // stable while nothing flushes
    d().w(GPU_CMD, GPU_CMD_CLEAN_CACHES);
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED; }, NSEC_PER_MSEC));
    EXPECT_EQ(d().r(GPU_LATEST_FLUSH_ID), id0);
    d().w(GPU_INT_CLEAR, ~0u);
    d().w(GPU_CMD, GPU_CMD_CLEAN_INV_CACHES);
    EXPECT_EQ(d().r(GPU_LATEST_FLUSH_ID), id0);  // not before the flush completes
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED; }, NSEC_PER_MSEC));
    EXPECT_EQ(d().r(GPU_LATEST_FLUSH_ID), id0 + 1);
    // Read-only.
    d().w(GPU_LATEST_FLUSH_ID, 0);
    EXPECT_EQ(d().r(GPU_LATEST_FLUSH_ID), id0 + 1);
}

TEST_F(GpuControl, CycleCountRunsOnlyBetweenStartAndStop) {
    const u64 hz = gpu().config().gpu_clock_hz;
    auto cycles = [&] { return d().r64(GPU_CYCLE_COUNT_LO); };
    EXPECT_EQ(cycles(), 0u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(cycles(), 0u);
    d().w(GPU_CMD, GPU_CMD_CYCLE_COUNT_START);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(cycles(), hz / 1000);
    d().w(GPU_CMD, GPU_CMD_CYCLE_COUNT_STOP);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(cycles(), hz / 1000);
    // Restarted, it goes on from where it stopped, into the HI word after ~5.4 s at 800 MHz.
    d().w(GPU_CMD, GPU_CMD_CYCLE_COUNT_START);
    advance(6 * kshim::NSEC_PER_SEC);
    const u64 expect = hz / 1000 + 6 * hz;
    EXPECT_EQ(d().r(GPU_CYCLE_COUNT_HI), static_cast<u32>(expect >> 32));
    EXPECT_EQ(d().r(GPU_CYCLE_COUNT_HI), 1u);
    EXPECT_EQ(d().r(GPU_CYCLE_COUNT_LO), static_cast<u32>(expect));
    // START twice does not restart the count.
    d().w(GPU_CMD, GPU_CMD_CYCLE_COUNT_START);
    EXPECT_EQ(cycles(), expect);
    d().w(GPU_CMD, GPU_CMD_CYCLE_COUNT_STOP);
    // Read-only.
    d().w(GPU_CYCLE_COUNT_LO, 0);
    EXPECT_EQ(cycles(), expect);
}

TEST_F(GpuControl, TimestampAdvancesWithVirtualTime) {
    const u64 hz = gpu().config().timestamp_hz;
    const u64 t0 = d().r64(GPU_TIMESTAMP_LO);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(d().r64(GPU_TIMESTAMP_LO), t0 + hz / 1000);
    advance(200 * kshim::NSEC_PER_SEC);  // 4.8e9 ticks at 24 MHz: into the HI word
    EXPECT_EQ(d().r(GPU_TIMESTAMP_HI), static_cast<u32>((t0 + hz / 1000 + 200 * hz) >> 32));
    EXPECT_GE(d().r(GPU_TIMESTAMP_HI), 1u);
}

TEST_F(GpuControl, InterruptQuadrupleAndLineLevel) {
    kshim::IrqLine& line = gpu().irq_gpu();
    EXPECT_EQ(d().r(GPU_INT_MASK), 0u);
    d().w(GPU_CMD, GPU_CMD_CLEAN_CACHES);
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) != 0; }, NSEC_PER_MSEC));
    EXPECT_EQ(d().r(GPU_INT_RAWSTAT), GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_EQ(d().r(GPU_INT_STAT), 0u);
    EXPECT_FALSE(line.level());
    d().w(GPU_INT_MASK, GPU_IRQ_FAULT);  // another bit: still low
    EXPECT_EQ(d().r(GPU_INT_STAT), 0u);
    EXPECT_FALSE(line.level());
    d().w(GPU_INT_MASK, GPU_IRQ_MASK_ALL);
    EXPECT_EQ(d().r(GPU_INT_MASK), GPU_IRQ_MASK_ALL);
    EXPECT_EQ(d().r(GPU_INT_STAT), GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_TRUE(line.level());
    // STAT and RAWSTAT are read-only; CLEAR of another bit changes nothing.
    d().w(GPU_INT_RAWSTAT, 0);
    d().w(GPU_INT_STAT, 0);
    d().w(GPU_INT_CLEAR, GPU_IRQ_FAULT);
    EXPECT_EQ(d().r(GPU_INT_RAWSTAT), GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_TRUE(line.level());
    EXPECT_EQ(d().r(GPU_INT_CLEAR), 0u);
    // Masking drops the line, the bit stays raw.
    d().w(GPU_INT_MASK, 0);
    EXPECT_FALSE(line.level());
    d().w(GPU_INT_MASK, GPU_IRQ_MASK_ALL);
    EXPECT_TRUE(line.level());
    d().w(GPU_INT_CLEAR, GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_EQ(d().r(GPU_INT_RAWSTAT), 0u);
    EXPECT_FALSE(line.level());
    // A reset clears every interrupt mask (panfrost polls RAWSTAT for RESET_COMPLETED and writes
    // the masks again): the line stays low until software unmasks the bit.
    d().w(JOB_INT_MASK, 0x00070007);
    d().w(MMU_INT_MASK, ~0u);
    d().w(GPU_CMD, GPU_CMD_SOFT_RESET);
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }, 10 * NSEC_PER_MSEC));
    EXPECT_EQ(d().r(GPU_INT_MASK), 0u);
    EXPECT_EQ(d().r(JOB_INT_MASK), 0u);
    EXPECT_EQ(d().r(MMU_INT_MASK), 0u);
    EXPECT_FALSE(line.level());
    d().w(GPU_INT_MASK, GPU_IRQ_MASK_ALL);
    EXPECT_TRUE(line.level());
    EXPECT_EQ(d().r(GPU_INT_STAT), GPU_IRQ_RESET_COMPLETED);
    d().w(GPU_INT_CLEAR, GPU_IRQ_MASK_ALL);
    EXPECT_FALSE(line.level());
}

TEST_F(GpuControl, UnknownOffsetsReadZeroAndIgnoreWrites) {
    const u64 before = gpu().unknown_accesses();
    // Holes in GPU_CONTROL, JOB_CONTROL past the IRQ block, slot 3 (absent), above MMU_CONTROL,
    // and a misaligned offset.
    const u32 offs[] = {0x048, 0x0FFC, 0x1018, 0x1700, JS_HEAD_LO(3), JS_COMMAND_NEXT(3), 0x2FF0, 0x3000, 0x10000, 0x2};
    for (u32 off : offs) {
        EXPECT_EQ(d().r(off), 0u) << std::hex << off;
        d().w(off, 0xFFFFFFFF);
        EXPECT_EQ(d().r(off), 0u) << std::hex << off;
    }
    EXPECT_GE(gpu().unknown_accesses(), before + std::size(offs));
}

TEST_F(GpuControl, WritesToReadOnlyRegistersAreIgnored) {
    bring_up();
    const u64 target = arena().alloc(8);
    const u64 j = arena().write_value(target, kWriteValueImmediate32, 1, 1);
    EXPECT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_DONE);
    const u32 ro[] = {GPU_ID,
                      GPU_L2_FEATURES,
                      GPU_MMU_FEATURES,
                      GPU_AS_PRESENT,
                      GPU_JS_PRESENT,
                      GPU_JS_FEATURES(0),
                      GPU_SHADER_PRESENT_LO,
                      GPU_TILER_PRESENT_LO,
                      GPU_L2_PRESENT_LO,
                      GPU_THREAD_FEATURES,
                      GPU_FAULT_STATUS,
                      GPU_FAULT_ADDRESS_LO,
                      L2_READY_LO,
                      SHADER_READY_LO,
                      TILER_READY_LO,
                      L2_PWRTRANS_LO,
                      GPU_TIMESTAMP_LO,
                      JOB_INT_RAWSTAT,
                      JOB_INT_STAT,
                      JOB_INT_JS_STATE,
                      JS_HEAD_LO(0),
                      JS_TAIL_LO(0),
                      JS_AFFINITY_LO(0),
                      JS_CONFIG(0),
                      JS_XAFFINITY(0),
                      JS_STATUS(0)};
    std::vector<u32> before;
    for (u32 off : ro)
        before.push_back(d().r(off));
    const u64 ro_writes = gpu().readonly_writes();
    for (u32 off : ro)
        d().w(off, 0x5A5A5A5A);
    for (size_t i = 0; i < std::size(ro); i++)
        EXPECT_EQ(d().r(ro[i]), before[i]) << std::hex << ro[i];
    EXPECT_EQ(gpu().readonly_writes(), ro_writes + std::size(ro));
    EXPECT_EQ(d().r(JS_STATUS(0)), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j);
}

}  // namespace
}  // namespace mock_jm::testing
