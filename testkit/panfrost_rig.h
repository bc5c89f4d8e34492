// A client-side rig for panfrost on the mock Mali-G52, shared by tests, fuzzers and benchmarks
// (no gtest): a BO mapped for the CPU in which job chains are laid out at the BO's GPU VA
// (WRITE_VALUE and NULL jobs), and the ioctl calls around it (CREATE_BO + MMAP_BO + drm_mmap,
// SUBMIT, syncobjs, JM contexts). Every call returns the ioctl's errno; nothing is checked here.
#pragma once
#include <algorithm>
#include <cstring>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "drm/uaccess.h"
#include "hw/jm/job_desc.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "uapi/drm/drm.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost::testing {

using kshim::u32;
using kshim::u64;
using kshim::u8;

// A BO mapped for the CPU in which jobs are laid out at the BO's GPU VA.
struct PanfrostJobBo {
    u32 handle = 0;
    u64 va = 0;
    u8* cpu = nullptr;
    size_t size = 0;
    size_t used = 0;
    drm::VmArea* vma = nullptr;

    template <typename T>
    T* at(u64 gpu_va) {
        return reinterpret_cast<T*>(cpu + (gpu_va - va));
    }
    desc::JobHeader* header(u64 job) { return at<desc::JobHeader>(job); }
    // n bytes at the given alignment; 0 when the BO is full.
    u64 alloc(size_t n, size_t align = 64) {
        const size_t start = (used + align - 1) & ~(align - 1);
        if (start + n > size)
            return 0;
        used = start + n;
        return va + start;
    }
    bool fits(size_t n) const { return ((used + 63) & ~size_t{63}) + n <= size; }
    // A 64-bit word for a job to write, zeroed.
    u64 slot() {
        const u64 a = alloc(8, 8);
        if (a)
            *at<u64>(a) = 0;
        return a;
    }
    // One job of `type` with its payload, linked behind `prev` (0: the first of a chain).
    u64 job(u32 type, const void* payload, size_t len, u64 prev) {
        const size_t n = desc::kJobPayloadOffset + std::max<size_t>(len, 32);
        const u64 j = alloc(n, 64);
        if (!j)
            return 0;
        auto* h = header(j);
        std::memset(h, 0, n);
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
    u64 null_job(u64 prev = 0) { return job(desc::kJobNull, nullptr, 0, prev); }
    u64 value(u64 target) { return *at<u64>(target); }
    // `n` NULL jobs then a WRITE_VALUE of `value` to `target`: returns the chain's head (0 if the
    // BO is full).
    u64 chain(u32 n, u64 target, u64 value) {
        if (!fits((n + 1) * 128))
            return 0;
        u64 head = 0, prev = 0;
        for (u32 i = 0; i < n; i++) {
            prev = null_job(prev);
            if (!head)
                head = prev;
        }
        const u64 w = write_value(target, value, prev);
        return head ? head : w;
    }
    // IGT's endless loop: two WRITE_VALUE jobs that zero each other's status and point at each
    // other. Returns the head.
    u64 endless() {
        const u64 j1 = write_value(0, 0, 0, desc::kWriteValueImmediate32);
        const u64 j2 = write_value(j1, 0, j1, desc::kWriteValueImmediate32);
        at<desc::WriteValuePayload>(j1 + desc::kJobPayloadOffset)->address = j2;
        header(j2)->next = j1;
        return j1;
    }
    // The jobs of the chain at `head` (stops after `limit` jobs, for loops).
    std::vector<u64> jobs_of(u64 head, size_t limit = 4096) {
        std::vector<u64> v;
        for (u64 j = head; j && v.size() < limit; j = header(j)->next)
            v.push_back(j);
        return v;
    }
};

inline int pf_ioctl(drm::drm_file* f, unsigned cmd, void* args, size_t size) {
    drm::UserRange r(args, size);
    return drm::ioctl(f, cmd, args);
}

inline int pf_create_bo(drm::drm_file* f, u32 size, u32 flags, u32* handle, u64* va) {
    ::drm_panfrost_create_bo args{};
    args.size = size;
    args.flags = flags;
    const int ret = pf_ioctl(f, drm::uapi::DRM_IOCTL_PANFROST_CREATE_BO, &args, sizeof(args));
    *handle = args.handle;
    *va = args.offset;
    return ret;
}

// CREATE_BO, MMAP_BO and a shared read/write CPU mapping; the caller unmaps (pf_job_bo_release).
inline int pf_job_bo(drm::drm_file* f, size_t size, PanfrostJobBo* bo) {
    *bo = PanfrostJobBo{};
    bo->size = size;
    int ret = pf_create_bo(f, static_cast<u32>(size), 0, &bo->handle, &bo->va);
    if (ret)
        return ret;
    ::drm_panfrost_mmap_bo m{};
    m.handle = bo->handle;
    ret = pf_ioctl(f, drm::uapi::DRM_IOCTL_PANFROST_MMAP_BO, &m, sizeof(m));
    if (ret)
        return ret;
    ret = drm::drm_mmap(f, m.offset, size, PROT_READ | PROT_WRITE, MAP_SHARED, &bo->vma);
    if (ret)
        return ret;
    bo->cpu = static_cast<u8*>(bo->vma->addr);
    return 0;
}
inline void pf_job_bo_release(PanfrostJobBo* bo) {
    if (bo->vma)
        drm::drm_munmap(bo->vma);
    bo->vma = nullptr;
    bo->cpu = nullptr;
}

struct PfSubmit {
    u64 jc = 0;
    std::vector<u32> bos;
    std::vector<u32> in_syncs;
    u32 out_sync = 0;
    u32 requirements = 0;
    u32 ctx = 0;
    u32 pad = 0;
};
inline int pf_submit(drm::drm_file* f, const PfSubmit& s) {
    ::drm_panfrost_submit args{};
    args.jc = s.jc;
    args.in_syncs = drm::user_ptr(s.in_syncs.data());
    args.in_sync_count = static_cast<u32>(s.in_syncs.size());
    args.out_sync = s.out_sync;
    args.bo_handles = drm::user_ptr(s.bos.data());
    args.bo_handle_count = static_cast<u32>(s.bos.size());
    args.requirements = s.requirements;
    args.jm_ctx_handle = s.ctx;
    args.pad = s.pad;
    drm::UserRange rb(s.bos.data(), s.bos.size() * sizeof(u32));
    drm::UserRange ri(s.in_syncs.data(), s.in_syncs.size() * sizeof(u32));
    return pf_ioctl(f, drm::uapi::DRM_IOCTL_PANFROST_SUBMIT, &args, sizeof(args));
}

inline int pf_syncobj_create(drm::drm_file* f, u32* handle) {
    drm::uapi::drm_syncobj_create args{};
    const int ret = pf_ioctl(f, drm::uapi::DRM_IOCTL_SYNCOBJ_CREATE, &args, sizeof(args));
    *handle = args.handle;
    return ret;
}
inline int pf_syncobj_destroy(drm::drm_file* f, u32 handle) {
    drm::uapi::drm_syncobj_destroy args{};
    args.handle = handle;
    return pf_ioctl(f, drm::uapi::DRM_IOCTL_SYNCOBJ_DESTROY, &args, sizeof(args));
}
// The syncobj's fence (a reference the caller puts), or nullptr.
inline kshim::dma_fence* pf_syncobj_fence(drm::drm_file* f, u32 handle) {
    kshim::dma_fence* fence = nullptr;
    if (drm::drm_syncobj_find_fence(f, handle, 0, 0, &fence))
        return nullptr;
    return fence;
}

inline int pf_jm_ctx_create(drm::drm_file* f, u32 prio, u32* handle) {
    ::drm_panfrost_jm_ctx_create args{};
    args.priority = prio;
    const int ret = pf_ioctl(f, drm::uapi::DRM_IOCTL_PANFROST_JM_CTX_CREATE, &args, sizeof(args));
    *handle = args.handle;
    return ret;
}
inline int pf_jm_ctx_destroy(drm::drm_file* f, u32 handle, u32 pad = 0) {
    ::drm_panfrost_jm_ctx_destroy args{};
    args.handle = handle;
    args.pad = pad;
    return pf_ioctl(f, drm::uapi::DRM_IOCTL_PANFROST_JM_CTX_DESTROY, &args, sizeof(args));
}

}  // namespace panfrost::testing
