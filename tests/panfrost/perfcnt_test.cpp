// PERFCNT_ENABLE / PERFCNT_DUMP on the mock G52: the unstable_ioctls gate, the PRFCNT_* registers
// as upstream programs them, the counter BO in the enabling file's VM, the dump waiting for the
// sample and cache-clean IRQs and copying the mock's deterministic counter block, one owner at a
// time, and the errnos (docs/panfrost.md, "Performance counters").
#include <vector>

#include "hw/jm/regs/gpu_regs.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_mmu.h"
#include "tests/panfrost/pf_job_fixture.h"

namespace panfrost::testing {
namespace {

// The G52's block: JM, tiler, one L2 slice, one shader core, 64 counters of 4 bytes each.
constexpr size_t kBlocks = 4;
constexpr size_t kDumpWords = kBlocks * 64;

class PanfrostPerfcntTest : public PfJobTest {
protected:
    void SetUp() override {
        PfJobTest::SetUp();
        pfdev->unstable_ioctls.store(true);
    }
    int enable(u32 enable, u32 counterset = 0, drm::drm_file* f = nullptr) {
        drm_panfrost_perfcnt_enable args{};
        args.enable = enable;
        args.counterset = counterset;
        drm::UserRange r(&args, sizeof(args));
        return drm::ioctl(f ? f : file, DRM_IOCTL_PANFROST_PERFCNT_ENABLE, &args);
    }
    int dump(std::vector<u32>* out, drm::drm_file* f = nullptr, u64 bad_ptr = 0) {
        out->assign(kDumpWords, 0xDEADBEEF);
        drm_panfrost_perfcnt_dump args{};
        args.buf_ptr = bad_ptr ? bad_ptr : drm::user_ptr(out->data());
        drm::UserRange r(&args, sizeof(args));
        drm::UserRange rb(out->data(), out->size() * sizeof(u32));
        return drm::ioctl(f ? f : file, DRM_IOCTL_PANFROST_PERFCNT_DUMP, &args);
    }
    static u32 expected(u32 sample, u32 block, u32 counter) { return (sample << 16) | (block << 8) | counter; }
};

TEST_F(PanfrostPerfcntTest, WithoutUnstableIoctlsBothAreEnosys) {
    pfdev->unstable_ioctls.store(false);
    std::vector<u32> buf;
    EXPECT_EQ(enable(1), -ENOSYS);
    EXPECT_EQ(dump(&buf), -ENOSYS);
    EXPECT_EQ(reg(GPU_PERFCNT_CFG), 0u);
}

TEST_F(PanfrostPerfcntTest, EnableProgramsTheCountersInTheFilesAs) {
    ASSERT_EQ(enable(1, 1), 0);
    // Upstream's sequence: every block enabled, MANUAL mode, the file's AS, the second counter set
    // (Bifrost has two).
    EXPECT_EQ(reg(GPU_PRFCNT_JM_EN), 0xffffffffu);
    EXPECT_EQ(reg(GPU_PRFCNT_SHADER_EN), 0xffffffffu);
    EXPECT_EQ(reg(GPU_PRFCNT_MMU_L2_EN), 0xffffffffu);
    EXPECT_EQ(reg(GPU_PRFCNT_TILER_EN), 0xffffffffu);
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    ASSERT_GE(priv->mmu->as, 0) << "the counters hold the file's VM in an AS";
    EXPECT_EQ(reg(GPU_PERFCNT_CFG), GPU_PERFCNT_CFG_AS(static_cast<u32>(priv->mmu->as)) |
                                        GPU_PERFCNT_CFG_MODE(GPU_PERFCNT_CFG_MODE_MANUAL) | GPU_PERFCNT_CFG_SETSEL(1));
    // Enabling holds the GPU awake.
    advance(200 * kshim::NSEC_PER_MSEC);
    EXPECT_TRUE(kshim::pm_runtime_active(dev()));
    EXPECT_EQ(enable(1), 0) << "the owner enabling again is a no-op";

    ASSERT_EQ(enable(0), 0);
    EXPECT_EQ(reg(GPU_PERFCNT_CFG), 0u);
    EXPECT_EQ(reg(GPU_PRFCNT_JM_EN), 0u);
    EXPECT_EQ(reg(GPU_PRFCNT_TILER_EN), 0u);
    EXPECT_TRUE(wait_autosuspend()) << "disable dropped the runtime-PM reference";
}

TEST_F(PanfrostPerfcntTest, DumpCopiesTheSampledCounterBlock) {
    ASSERT_EQ(enable(1), 0);
    std::vector<u32> buf;
    ASSERT_EQ(dump(&buf), 0);
    // The counter BO's VA in the file's VM is where the sample went.
    const u64 base = reg64(GPU_PERFCNT_BASE_LO);
    EXPECT_GE(base, 32 * (u64{1} << 20));
    for (u32 b = 0; b < kBlocks; b++)
        for (u32 i = 0; i < 64; i += 21)
            EXPECT_EQ(buf[b * 64 + i], expected(1, b, i)) << b << "/" << i;
    ASSERT_EQ(dump(&buf), 0);
    EXPECT_EQ(buf[0], expected(2, 0, 0)) << "a second sample";
    EXPECT_EQ(buf[kDumpWords - 1], expected(2, kBlocks - 1, 63));

    // Re-enabling clears the counters (PERFCNT_CLEAR): the next sample is the first again.
    ASSERT_EQ(enable(0), 0);
    ASSERT_EQ(enable(1), 0);
    ASSERT_EQ(dump(&buf), 0);
    EXPECT_EQ(buf[5], expected(1, 0, 5));
}

TEST_F(PanfrostPerfcntTest, OneOwnerAtATime) {
    drm::drm_file* other = open_extra();
    std::vector<u32> buf;
    EXPECT_EQ(dump(&buf), -EINVAL) << "not enabled";
    EXPECT_EQ(enable(0), -EINVAL) << "disable without owning";
    ASSERT_EQ(enable(1), 0);
    EXPECT_EQ(enable(1, 0, other), -EBUSY);
    EXPECT_EQ(dump(&buf, other), -EINVAL);
    EXPECT_EQ(enable(0, 0, other), -EINVAL);
    ASSERT_EQ(enable(0), 0);
    EXPECT_EQ(enable(1, 0, other), 0) << "free after the owner disabled";
    EXPECT_EQ(dump(&buf, other), 0);
    ASSERT_EQ(enable(0, 0, other), 0);
}

TEST_F(PanfrostPerfcntTest, Errnos) {
    std::vector<u32> buf;
    EXPECT_EQ(enable(1, 2), -EINVAL) << "Bifrost has counter sets 0 and 1";
    ASSERT_EQ(enable(1), 0);
    EXPECT_EQ(dump(&buf, nullptr, 0x10), -EFAULT) << "an unmapped user pointer";
}

TEST_F(PanfrostPerfcntTest, ClosingTheOwnerDisablesTheCounters) {
    drm::drm_file* other = open_extra();
    ASSERT_EQ(enable(1, 0, other), 0);
    EXPECT_NE(reg(GPU_PERFCNT_CFG), 0u);
    drm::drm_release(other);
    extra_files.clear();
    EXPECT_EQ(reg(GPU_PERFCNT_CFG), 0u);
    EXPECT_EQ(reg(GPU_PRFCNT_SHADER_EN), 0u);
    EXPECT_EQ(enable(1), 0) << "free for another file";
    ASSERT_EQ(enable(0), 0);
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanfrostPerfcntTest, DumpTimesOutWithoutTheSampleIrq) {
    ASSERT_EQ(enable(1), 0);
    // The GPU IRQ masked: neither SAMPLE_COMPLETED nor CLEAN_CACHES_COMPLETED arrive.
    gpu_write(pfdev, GPU_INT_MASK, 0);
    std::vector<u32> buf;
    const kshim::ktime_t start = kshim::ktime_get();
    EXPECT_EQ(dump(&buf), -ETIMEDOUT);
    EXPECT_GE(kshim::ktime_get() - start, 1000 * kshim::NSEC_PER_MSEC - kshim::TICK_NSEC);
}

}  // namespace
}  // namespace panfrost::testing
