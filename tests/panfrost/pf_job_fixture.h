// The job fixture of the perfcnt, devfreq, profiling/fdinfo, coredump and cancellation tests:
// the probed G52 with a file, BOs mapped for the CPU in which WRITE_VALUE chains are laid out at
// the BO's GPU VA (testkit's PanfrostJobBo, with its IGT endless chain), SUBMIT with an out fence
// and JM contexts, through the ioctl calls of testkit/panfrost_rig.h.
#pragma once
#include <vector>

#include "drm/drm_mmap.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "testkit/panfrost_rig.h"
#include "tests/panfrost/panfrost_test.h"

namespace panfrost::testing {

namespace desc = panfrost::desc;

using PfJobBo = PanfrostJobBo;

class PfJobTest : public PanfrostTest {
protected:
    void SetUp() override {
        PanfrostTest::SetUp();
        // Probe leaves the MMU interrupts masked until a reset: start runtime-suspended, so the
        // first job's resume unmasks them.
        ASSERT_TRUE(wait_autosuspend());
    }
    void TearDown() override {
        for (drm::VmArea* v : vmas)
            drm::drm_munmap(v);
        vmas.clear();
        for (kshim::dma_fence* f : fences)
            kshim::dma_fence_put(f);
        fences.clear();
        advance_until_idle(10 * kshim::NSEC_PER_SEC);
        for (drm::drm_file* f : extra_files)
            drm::drm_release(f);
        extra_files.clear();
        PanfrostTest::TearDown();
    }

    PfJobBo job_bo(size_t size = 64 * 1024, drm::drm_file* f = nullptr) {
        PfJobBo bo;
        EXPECT_EQ(pf_job_bo(f ? f : file, size, &bo), 0);
        if (bo.vma)
            vmas.push_back(bo.vma);
        return bo;
    }

    struct Submit {
        u64 jc = 0;
        std::vector<u32> bos;
        u32 requirements = 0;
        u32 ctx = 0;
        drm::drm_file* f = nullptr;
    };
    // Submits with an out_sync; the job's out fence (kept until TearDown), or nullptr.
    kshim::dma_fence* submit_fenced(const Submit& s) {
        drm::drm_file* f = s.f ? s.f : file;
        u32 out_sync = 0;
        EXPECT_EQ(pf_syncobj_create(f, &out_sync), 0);
        const int ret = pf_submit(
            f, {.jc = s.jc, .bos = s.bos, .out_sync = out_sync, .requirements = s.requirements, .ctx = s.ctx});
        EXPECT_EQ(ret, 0);
        if (ret)
            return nullptr;
        kshim::dma_fence* fence = pf_syncobj_fence(f, out_sync);
        if (fence)
            fences.push_back(fence);
        return fence;
    }
    bool wait_signaled(kshim::dma_fence* f, kshim::ktime_t timeout = 100 * kshim::NSEC_PER_MSEC) {
        return f && run_until([&] { return kshim::dma_fence_is_signaled(f); }, timeout);
    }

    int jm_ctx_create(u32 prio, u32* handle) { return pf_jm_ctx_create(file, prio, handle); }
    int jm_ctx_destroy(u32 handle) { return pf_jm_ctx_destroy(file, handle); }

    drm::drm_file* open_extra() {
        drm::drm_file* f = nullptr;
        EXPECT_EQ(machine_->open_file(&f), 0);
        extra_files.push_back(f);
        return f;
    }

    std::vector<drm::VmArea*> vmas;
    std::vector<kshim::dma_fence*> fences;
    std::vector<drm::drm_file*> extra_files;
};

}  // namespace panfrost::testing
