// The job fixture of the perfcnt, devfreq, profiling/fdinfo, coredump and cancellation tests:
// the probed G52 with a file, BOs mapped for the CPU in which WRITE_VALUE chains are laid out at
// the BO's GPU VA, SUBMIT with an out fence, and the IGT endless chain. (A copy of the few pieces
// of job_test.cpp these tests need.)
#pragma once
#include <cstring>
#include <vector>

#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "hw/jm/job_desc.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "tests/panfrost/panfrost_test.h"
#include "uapi/drm/drm.h"

namespace panfrost::testing {

namespace desc = panfrost::desc;

struct PfJobBo {
    u32 handle = 0;
    u64 va = 0;
    kshim::u8* cpu = nullptr;
    size_t size = 0;
    size_t used = 0;

    template <typename T>
    T* at(u64 gpu_va) {
        return reinterpret_cast<T*>(cpu + (gpu_va - va));
    }
    desc::JobHeader* header(u64 job) { return at<desc::JobHeader>(job); }
    u64 alloc(size_t n, size_t align = 64) {
        used = (used + align - 1) & ~(align - 1);
        const u64 a = va + used;
        used += n;
        EXPECT_LE(used, size);
        return a;
    }
    u64 slot() {
        const u64 a = alloc(8, 8);
        *at<u64>(a) = 0;
        return a;
    }
    u64 job(u32 type, const void* payload, size_t len, u64 prev) {
        const size_t body = std::max<size_t>(len, 32);
        const u64 j = alloc(desc::kJobPayloadOffset + body, 64);
        auto* h = header(j);
        std::memset(h, 0, desc::kJobPayloadOffset + body);
        h->control = desc::job_control(type, 1);
        if (len)
            std::memcpy(cpu + (j - va) + desc::kJobPayloadOffset, payload, len);
        if (prev)
            header(prev)->next = j;
        return j;
    }
    u64 write_value(u64 target, u64 value, u64 prev = 0, u32 type = desc::kWriteValueImmediate64) {
        desc::WriteValuePayload p{};
        p.address = target;
        p.type = type;
        p.immediate = value;
        return job(desc::kJobWriteValue, &p, sizeof(p), prev);
    }
    u64 value(u64 target) { return *at<u64>(target); }
    // IGT's endless loop: two WRITE_VALUE jobs zeroing each other's status and pointing at each
    // other. Returns the head.
    u64 endless() {
        const u64 j1 = write_value(0, 0, 0, desc::kWriteValueImmediate32);
        const u64 j2 = write_value(j1, 0, j1, desc::kWriteValueImmediate32);
        at<desc::WriteValuePayload>(j1 + desc::kJobPayloadOffset)->address = j2;
        header(j2)->next = j1;
        return j1;
    }
};

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
        f = f ? f : file;
        PfJobBo bo;
        bo.size = size;
        drm_panfrost_create_bo args{};
        args.size = static_cast<u32>(size);
        {
            drm::UserRange r(&args, sizeof(args));
            EXPECT_EQ(drm::ioctl(f, DRM_IOCTL_PANFROST_CREATE_BO, &args), 0);
        }
        bo.handle = args.handle;
        bo.va = args.offset;
        drm_panfrost_mmap_bo m{};
        m.handle = bo.handle;
        {
            drm::UserRange r(&m, sizeof(m));
            EXPECT_EQ(drm::ioctl(f, DRM_IOCTL_PANFROST_MMAP_BO, &m), 0);
        }
        drm::VmArea* vma = nullptr;
        EXPECT_EQ(drm::drm_mmap(f, m.offset, size, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
        if (vma) {
            vmas.push_back(vma);
            bo.cpu = static_cast<kshim::u8*>(vma->addr);
        }
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
        drm_syncobj_create sc{};
        {
            drm::UserRange r(&sc, sizeof(sc));
            EXPECT_EQ(drm::ioctl(f, DRM_IOCTL_SYNCOBJ_CREATE, &sc), 0);
        }
        drm_panfrost_submit args{};
        args.jc = s.jc;
        args.out_sync = sc.handle;
        args.bo_handles = drm::user_ptr(s.bos.data());
        args.bo_handle_count = static_cast<u32>(s.bos.size());
        args.requirements = s.requirements;
        args.jm_ctx_handle = s.ctx;
        drm::UserRange r(&args, sizeof(args));
        drm::UserRange rb(s.bos.data(), s.bos.size() * sizeof(u32));
        const int ret = drm::ioctl(f, DRM_IOCTL_PANFROST_SUBMIT, &args);
        EXPECT_EQ(ret, 0);
        if (ret)
            return nullptr;
        kshim::dma_fence* fence = nullptr;
        if (drm::drm_syncobj_find_fence(f, sc.handle, 0, 0, &fence))
            return nullptr;
        fences.push_back(fence);
        return fence;
    }
    bool wait_signaled(kshim::dma_fence* f, kshim::ktime_t timeout = 100 * kshim::NSEC_PER_MSEC) {
        return f && run_until([&] { return kshim::dma_fence_is_signaled(f); }, timeout);
    }

    int jm_ctx_create(u32 prio, u32* handle) {
        drm_panfrost_jm_ctx_create args{};
        args.priority = prio;
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(file, DRM_IOCTL_PANFROST_JM_CTX_CREATE, &args);
        *handle = args.handle;
        return ret;
    }
    int jm_ctx_destroy(u32 handle) {
        drm_panfrost_jm_ctx_destroy args{};
        args.handle = handle;
        drm::UserRange r(&args, sizeof(args));
        return drm::ioctl(file, DRM_IOCTL_PANFROST_JM_CTX_DESTROY, &args);
    }

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
