// The job fixture of the panfrost tests that submit (job, gem, perfcnt, devfreq, profiling/fdinfo,
// coredump, cancellation, probe failures, real threads): the probed G52 with a file, BOs mapped
// for the CPU in which WRITE_VALUE chains are laid out at the BO's GPU VA (testkit's
// PanfrostJobBo, with its IGT endless chain), SUBMIT with in/out syncs and JM contexts, through
// the ioctl calls of testkit/panfrost_rig.h; what a test maps, fences and opens is released at
// TearDown.
#pragma once
#include <vector>

#include "drm/drm_mmap.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "testkit/panfrost_rig.h"
#include "tests/panfrost/panfrost_test.h"

namespace panfrost::testing {

namespace desc = panfrost::desc;

using JobBo = PanfrostJobBo;

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

    drm::drm_file* f_or(drm::drm_file* f) { return f ? f : file; }

    // CREATE_BO; `va` may be null.
    int create_bo(u32 size, u32 flags, u32* handle, u64* va = nullptr, drm::drm_file* f = nullptr) {
        u64 offset = 0;
        const int ret = pf_create_bo(f_or(f), size, flags, handle, &offset);
        if (va)
            *va = offset;
        return ret;
    }
    JobBo job_bo(size_t size = 64 * 1024, drm::drm_file* f = nullptr) {
        JobBo bo;
        EXPECT_EQ(pf_job_bo(f_or(f), size, &bo), 0);
        if (bo.vma)
            vmas.push_back(bo.vma);
        return bo;
    }

    struct Submit {
        u64 jc = 0;
        std::vector<u32> bos;
        std::vector<u32> in_syncs;
        u32 out_sync = 0;
        u32 requirements = 0;
        u32 ctx = 0;
        u32 pad = 0;
        drm::drm_file* f = nullptr;
    };
    int submit(const Submit& s) {
        return pf_submit(f_or(s.f), {.jc = s.jc,
                                     .bos = s.bos,
                                     .in_syncs = s.in_syncs,
                                     .out_sync = s.out_sync,
                                     .requirements = s.requirements,
                                     .ctx = s.ctx,
                                     .pad = s.pad});
    }
    // Submits with a new out_sync; the job's out fence (kept until TearDown), or nullptr on error.
    kshim::dma_fence* submit_fenced(Submit s, int* ret_out = nullptr) {
        s.out_sync = syncobj_create(s.f);
        const int ret = submit(s);
        if (ret_out)
            *ret_out = ret;
        EXPECT_EQ(ret, 0);
        return ret ? nullptr : fence_of(s.out_sync, s.f);
    }
    u32 syncobj_create(drm::drm_file* f = nullptr) {
        u32 handle = 0;
        EXPECT_EQ(pf_syncobj_create(f_or(f), &handle), 0);
        return handle;
    }
    // The syncobj's fence, kept until TearDown; nullptr when it has none.
    kshim::dma_fence* fence_of(u32 handle, drm::drm_file* f = nullptr) {
        kshim::dma_fence* fence = pf_syncobj_fence(f_or(f), handle);
        if (fence)
            fences.push_back(fence);
        return fence;
    }
    bool wait_signaled(kshim::dma_fence* f, kshim::ktime_t timeout = 100 * kshim::NSEC_PER_MSEC) {
        return f && run_until([&] { return kshim::dma_fence_is_signaled(f); }, timeout);
    }

    int jm_ctx_create(u32 prio, u32* handle) { return pf_jm_ctx_create(file, prio, handle); }
    int jm_ctx_destroy(u32 handle, u32 pad = 0) { return pf_jm_ctx_destroy(file, handle, pad); }

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
