// Register-level tests of the mock GPU's MMIO map: identity, address decode, read-only and
// unknown registers, peek/poke, the IRQ quadruple and literal offsets from the reference.
#include <atomic>

#include "kernel_shim/irq.h"
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {
namespace {

using Regs = MockHwTest;

TEST_F(Regs, OffsetsMatchReferenceLiterals) {
    // docs/hw/csf/gpu-control.md, job-irq-and-doorbells.md, mmu.md and fw-interfaces.md,
    // literal values.
    EXPECT_EQ(GPU_INT_RAWSTAT, 0x20u);
    EXPECT_EQ(GPU_CMD, 0x30u);
    EXPECT_EQ(L2_PWRON, 0x1A0u);
    EXPECT_EQ(SHADER_PWRTRANS, 0x200u);
    EXPECT_EQ(GPU_TIMESTAMP, 0x98u);
    EXPECT_EQ(MCU_STATUS, 0x704u);
    EXPECT_EQ(JOB_INT_MASK, 0x1008u);
    EXPECT_EQ(MMU_INT_STAT, 0x200Cu);
    EXPECT_EQ(AS_TRANSTAB(0), 0x2400u);
    EXPECT_EQ(AS_COMMAND(3), 0x2400u + 3 * 0x40 + 0x18);
    EXPECT_EQ(AS_TRANSCFG(7), 0x2400u + 7 * 0x40 + 0x30);
    EXPECT_EQ(AS_STATUS(1), 0x2468u);
    EXPECT_EQ(CSF_GPU_LATEST_FLUSH_ID, 0x10000u);
    EXPECT_EQ(CSF_DOORBELL(1), 0x90000u);
    EXPECT_EQ(GPU_SOFT_RESET, 0x101u);
    EXPECT_EQ(GPU_HARD_RESET, 0x201u);
    EXPECT_EQ(GPU_FLUSH_CACHES(3, 0, 0), 0x304u);
    EXPECT_EQ(GPU_FLUSH_CACHES(3, 3, 0), 0x3304u);
    EXPECT_EQ(GPU_FLUSH_CACHES(1, 1, 0), 0x1104u);
    EXPECT_EQ(GPU_IRQ_FAULT | GPU_IRQ_PROTM_FAULT | GPU_IRQ_RESET_COMPLETED | GPU_IRQ_CLEAN_CACHES_COMPLETED,
              0x00020103u);
    EXPECT_EQ(
        AS_TRANSCFG_PTW_MEMATTR_WB | AS_TRANSCFG_PTW_RA | AS_TRANSCFG_ADRMODE_AARCH64_4K | AS_TRANSCFG_INA_BITS(7),
        0x420001C6u);
    EXPECT_EQ(GLB_CFG_ALLOC_EN | GLB_PING | GLB_CFG_PROGRESS_TIMER | GLB_CFG_POWEROFF_TIMER | GLB_IDLE_EN | GLB_IDLE,
              0x0400050Eu);
    EXPECT_EQ(CSG_REQ_MASK, 0x37u);
    EXPECT_EQ(CSG_EVT_MASK, 0xB0000000u);
    EXPECT_EQ(CS_REQ_MASK, 0x0F17u);
    EXPECT_EQ(CS_EVT_MASK, 0xCC000000u);
    EXPECT_EQ(CSF_FW_BINARY_HEADER_MAGIC, 0xC3F13A6Eu);
}

TEST_F(Regs, IdentityDefaultsToG610) {
    Gpu gpu;
    Drv d{gpu};
    EXPECT_EQ(d.r(GPU_ID), 0xA8670005u);
    EXPECT_EQ(GPU_ARCH_MAJOR(d.r(GPU_ID)), 10u);
    EXPECT_EQ(GPU_ARCH_MINOR(d.r(GPU_ID)), 8u);
    EXPECT_EQ(d.r(GPU_L2_FEATURES), 0x07120306u);
    EXPECT_EQ(d.r(GPU_TILER_FEATURES), 0x809u);
    EXPECT_EQ(d.r(GPU_MEM_FEATURES), 0x301u);
    EXPECT_EQ(d.r(GPU_MMU_FEATURES), 0x2830u);
    EXPECT_EQ(GPU_MMU_FEATURES_VA_BITS(d.r(GPU_MMU_FEATURES)), 48u);
    EXPECT_EQ(GPU_MMU_FEATURES_PA_BITS(d.r(GPU_MMU_FEATURES)), 40u);
    EXPECT_EQ(d.r(GPU_AS_PRESENT), 0xFFu);
    EXPECT_EQ(d.r64(GPU_SHADER_PRESENT), 0x50005u);
    EXPECT_EQ(d.r64(GPU_TILER_PRESENT), 0x1u);
    EXPECT_EQ(d.r64(GPU_L2_PRESENT), 0x1u);
    EXPECT_EQ(d.r(GPU_CSF_ID), gpu.config().id.csf_id);
    EXPECT_EQ(d.r(GPU_THREAD_MAX_THREADS), gpu.config().id.thread_max_threads);
    EXPECT_EQ(d.r(GPU_TEXTURE_FEATURES(1)), gpu.config().id.texture_features[1]);
    EXPECT_EQ(d.r(GPU_COHERENCY_FEATURES), 1u);
    EXPECT_EQ(d.r64(GPU_FEATURES), 0u);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_DISABLED);
}

TEST_F(Regs, IdentityComesFromConfig) {
    GpuConfig cfg;
    cfg.id.gpu_id = 0xA8680005;
    cfg.id.as_present = 0xF;
    Gpu gpu(cfg);
    Drv d{gpu};
    EXPECT_EQ(d.r(GPU_ID), 0xA8680005u);
    EXPECT_EQ(d.r(GPU_AS_PRESENT), 0xFu);
    // AS 5 is not present: its registers do not decode.
    EXPECT_EQ(d.r(AS_STATUS(5)), 0u);
    EXPECT_EQ(gpu.unknown_accesses(), 1u);
}

TEST_F(Regs, ReadOnlyWritesAreIgnoredAndCounted) {
    Gpu gpu;
    Drv d{gpu};
    d.w(GPU_ID, 0x1234);
    d.w(GPU_SHADER_PRESENT, 0xFFFF);
    EXPECT_EQ(d.r(GPU_ID), 0xA8670005u);
    EXPECT_EQ(d.r64(GPU_SHADER_PRESENT), 0x50005u);
    EXPECT_EQ(gpu.readonly_writes(), 2u);
    // Writable registers keep what was written.
    d.w(GPU_COHERENCY_PROTOCOL, GPU_COHERENCY_ACE_LITE);
    EXPECT_EQ(d.r(GPU_COHERENCY_PROTOCOL), GPU_COHERENCY_ACE_LITE);
    EXPECT_EQ(gpu.readonly_writes(), 2u);
}

TEST_F(Regs, UnknownOffsetsReadZeroAndLogOnce) {
    Gpu gpu;
    Drv d{gpu};
    kshim::log_clear();
    EXPECT_EQ(d.r(0x0FFC), 0u);
    EXPECT_EQ(d.r(0x0FFC), 0u);
    EXPECT_EQ(d.r(0x50000), 0u);
    d.w(0x3000, 1);
    EXPECT_EQ(gpu.unknown_accesses(), 4u);
    int lines = 0;
    for (const auto& l : kshim::log_lines())
        if (l.text.find("0xffc") != std::string::npos)
            lines++;
    EXPECT_EQ(lines, 1);
    EXPECT_EQ(d.r(0x21), 0u);  // misaligned
}

TEST_F(Regs, PeekAndPokeHaveNoSideEffects) {
    Gpu gpu;
    Drv d{gpu};
    // Poking RAWSTAT sets the bit without driving the line; peek reads STAT without logging.
    ASSERT_TRUE(gpu.poke32(GPU_INT_MASK, GPU_IRQ_FAULT));
    ASSERT_TRUE(gpu.poke32(GPU_INT_RAWSTAT, GPU_IRQ_FAULT));
    EXPECT_EQ(gpu.peek32(GPU_INT_STAT).value(), GPU_IRQ_FAULT);
    EXPECT_FALSE(gpu.irq_gpu().level());
    // A poke to a command register stores but does not execute.
    ASSERT_TRUE(gpu.poke32(GPU_CMD, GPU_SOFT_RESET));
    advance(10 * NSEC_PER_MSEC);
    EXPECT_FALSE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED);
    EXPECT_FALSE(gpu.peek32(0x0FFC).has_value());
    EXPECT_EQ(gpu.unknown_accesses(), 0u);
}

TEST_F(Regs, IrqQuadrupleSemantics) {
    Gpu gpu;
    Drv d{gpu};
    kshim::IrqLine& line = gpu.irq_gpu();
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.control().irq().raise_locked(GPU_IRQ_FAULT | GPU_IRQ_CLEAN_CACHES_COMPLETED);
    }
    // RAWSTAT shows everything, STAT only what is unmasked; the line follows STAT.
    EXPECT_EQ(d.r(GPU_INT_RAWSTAT), GPU_IRQ_FAULT | GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_EQ(d.r(GPU_INT_STAT), 0u);
    EXPECT_FALSE(line.level());
    d.w(GPU_INT_MASK, GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_EQ(d.r(GPU_INT_STAT), GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_TRUE(line.level());
    // CLEAR is write-one-to-clear; reading it gives 0; STAT is read-only.
    d.w(GPU_INT_CLEAR, GPU_IRQ_FAULT);
    EXPECT_EQ(d.r(GPU_INT_RAWSTAT), GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_EQ(d.r(GPU_INT_CLEAR), 0u);
    EXPECT_TRUE(line.level());
    d.w(GPU_INT_STAT, 0);
    EXPECT_EQ(gpu.readonly_writes(), 1u);
    // Masking everything deasserts; unmasking reasserts (level-triggered).
    d.w(GPU_INT_MASK, 0);
    EXPECT_FALSE(line.level());
    d.w(GPU_INT_MASK, ~0u);
    EXPECT_TRUE(line.level());
    d.w(GPU_INT_CLEAR, ~0u);
    EXPECT_FALSE(line.level());
    EXPECT_EQ(gpu.control().irq().line_toggles(), 4u);
    // A second source while asserted does not toggle the line again.
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.control().irq().raise_locked(GPU_IRQ_FAULT);
        gpu.control().irq().raise_locked(GPU_IRQ_RESET_COMPLETED);
    }
    EXPECT_EQ(gpu.control().irq().line_toggles(), 5u);
    d.w(GPU_INT_CLEAR, ~0u);
}

TEST_F(Regs, IrqLineRunsThePanthorStyleHandler) {
    Gpu gpu;
    Drv d{gpu};
    std::atomic<int> hard{0}, threaded{0};
    std::atomic<u32> seen{0};
    // panthor's PANTHOR_IRQ_HANDLER: hard handler masks, thread reads RAWSTAT, clears, unmasks.
    ASSERT_EQ(kshim::request_threaded_irq(
                  &gpu.irq_gpu(),
                  [&](int, void*) {
                      hard++;
                      if (!d.r(GPU_INT_STAT))
                          return kshim::IRQ_NONE;
                      d.w(GPU_INT_MASK, 0);
                      return kshim::IRQ_WAKE_THREAD;
                  },
                  [&](int, void*) {
                      threaded++;
                      u32 st = d.r(GPU_INT_RAWSTAT) & 0x00020103;
                      seen |= st;
                      d.w(GPU_INT_CLEAR, st);
                      d.w(GPU_INT_MASK, 0x00020103);
                      return kshim::IRQ_HANDLED;
                  },
                  kshim::IRQF_ONESHOT, "gpu", &gpu),
              0);
    d.w(GPU_INT_MASK, 0x00020103);
    d.w(GPU_CMD, GPU_FLUSH_CACHES(3, 0, 0));
    ASSERT_TRUE(wait([&] { return threaded.load() == 1; }));
    EXPECT_EQ(seen.load(), GPU_IRQ_CLEAN_CACHES_COMPLETED);
    EXPECT_EQ(hard.load(), 1);
    EXPECT_FALSE(gpu.irq_gpu().level());
    kshim::free_irq(&gpu.irq_gpu(), &gpu);
}

TEST_F(Regs, JobAndMmuIrqBlocksAreIndependent) {
    Gpu gpu;
    Drv d{gpu};
    d.w(JOB_INT_MASK, ~0u);
    d.w(MMU_INT_MASK, 0xFFFF);
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.job_irq().raise_locked(JOB_INT_GLOBAL_IF);
        gpu.mmu().irq().raise_locked(MMU_INT_REQ_COMPLETE(2));
    }
    EXPECT_TRUE(gpu.irq_job().level());
    EXPECT_FALSE(gpu.irq_mmu().level());  // command-complete bits are masked by panthor's mask
    EXPECT_FALSE(gpu.irq_gpu().level());
    EXPECT_EQ(d.r(MMU_INT_RAWSTAT), MMU_INT_REQ_COMPLETE(2));
    d.w(JOB_INT_CLEAR, JOB_INT_GLOBAL_IF);
    EXPECT_FALSE(gpu.irq_job().level());
}

// Every _locked method of the mock asserts the Gpu lock on its first line: called without it,
// lockdep-lite reports (which fails a test), inline accessors and out-of-line methods alike.
TEST_F(Regs, LockedMethodWithoutTheGpuLockIsReported) {
    Gpu gpu;
    {
        kshim::SpinGuard g(gpu.lock());
        EXPECT_EQ(gpu.mcu().status_locked(), 0u);
        EXPECT_FALSE(gpu.power().any_transition_locked());
    }
    EXPECT_FALSE(expect_report(kshim::ReportKind::LockUsage));

    (void)gpu.mcu().status_locked();
    EXPECT_TRUE(expect_report(kshim::ReportKind::LockUsage));
    (void)gpu.power().any_transition_locked();
    EXPECT_TRUE(expect_report(kshim::ReportKind::LockUsage));
    EXPECT_FALSE(expect_report(kshim::ReportKind::LockUsage));
}

}  // namespace
}  // namespace mock_hw::testing
