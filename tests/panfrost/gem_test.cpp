// panfrost's GEM ioctls beyond creation on the mock Mali-G52: MADVISE and the shrinker (purging
// an idle DONTNEED BO under kshim::shrink_all, its GPU mapping gone; a BO a job uses and a
// WILLNEED one kept), SET_LABEL_BO, SYNC_BO (the maintenance counted on the device), QUERY_BO_INFO,
// and PRIME: a BO shared between two files (implicit sync between their jobs) and a foreign
// dma_buf imported as a NOEXEC BO. One row per errno rule of jm-interface.md 4.5.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_mmap.h"
#include "drm/drm_prime.h"
#include "drm/drm_syncobj.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/log.h"
#include "kernel_shim/shrinker.h"
#include "panfrost/panfrost_gem.h"
#include "tests/dma_fence/mock_fence.h"
#include "tests/panfrost/panfrost_test.h"
#include "tests/panfrost/pf_job_fixture.h"
#include "uapi/drm/drm.h"

namespace panfrost::testing {
namespace {

using kshim::dma_fence;

constexpr u32 SZ_4K = 4096;
constexpr unsigned long kScanAll = 1ul << 30;

// Another GEM device of the machine (a display controller): its dma_bufs are foreign to panfrost.
struct OtherDevice {
    static const drm::DriverDesc& driver() {
        static const drm::DriverDesc d = {
            .name = "other",
            .desc = "another GEM device",
            .driver_features = drm::DRIVER_GEM | drm::DRIVER_RENDER,
        };
        return d;
    }
    OtherDevice() : dev(driver()) {
        drm::drm_vma_offset_manager_init(&mgr, drm::DRM_FILE_PAGE_OFFSET_START, drm::DRM_FILE_PAGE_OFFSET_SIZE);
        dev.vma_offset_manager = &mgr;
        EXPECT_EQ(drm::drm_open(&dev, &file), 0);
    }
    ~OtherDevice() {
        if (file)
            drm::drm_release(file);
        drm::drm_vma_offset_manager_destroy(&mgr);
    }
    // A BO with a handle in `file` (its only reference), exported as a descriptor.
    int export_bo(u64 size) {
        drm::drm_gem_shmem_object* shmem = nullptr;
        EXPECT_EQ(drm::drm_gem_shmem_create(&mgr, size, &shmem), 0);
        shmem->base.dev = &dev;
        u32 handle = 0;
        EXPECT_EQ(file->gem.handle_create(&shmem->base, &handle), 0);
        drm::drm_gem_object_put(&shmem->base);
        drm_prime_handle args{handle, DRM_CLOEXEC | DRM_RDWR, -1};
        drm::UserRange r(&args, sizeof(args));
        EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args), 0);
        return args.fd;
    }

    drm::drm_vma_offset_manager mgr;
    drm::drm_device dev;
    drm::drm_file* file = nullptr;
};

class PanfrostGemTest : public PfJobTest {
protected:
    u32 bo(u32 size = 64 * 1024, u32 flags = PANFROST_BO_NOEXEC, drm::drm_file* f = nullptr) {
        u32 handle = 0;
        EXPECT_EQ(create_bo(size, flags, &handle, nullptr, f), 0);
        return handle;
    }
    u64 bo_offset(u32 handle, drm::drm_file* f = nullptr) {
        drm_panfrost_get_bo_offset args{};
        args.handle = handle;
        drm::UserRange r(&args, sizeof(args));
        EXPECT_EQ(drm::ioctl(f_or(f), DRM_IOCTL_PANFROST_GET_BO_OFFSET, &args), 0);
        return args.offset;
    }
    panfrost_gem_object* bo_obj(u32 handle, drm::drm_file* f = nullptr) {
        drm::drm_gem_object* obj = f_or(f)->gem.lookup(handle);
        if (!obj)
            return nullptr;
        drm::drm_gem_object_put(obj);  // the handle keeps it
        return to_panfrost_bo(obj);
    }
    // A CPU mapping of the BO (unmapped at TearDown unless unmapped before).
    u8* cpu_map(u32 handle, size_t size, drm::VmArea** out = nullptr, drm::drm_file* f = nullptr) {
        drm_panfrost_mmap_bo m{};
        m.handle = handle;
        {
            drm::UserRange r(&m, sizeof(m));
            EXPECT_EQ(drm::ioctl(f_or(f), DRM_IOCTL_PANFROST_MMAP_BO, &m), 0);
        }
        drm::VmArea* vma = nullptr;
        EXPECT_EQ(drm::drm_mmap(f_or(f), m.offset, size, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
        if (!vma)
            return nullptr;
        if (out)
            *out = vma;
        else
            vmas.push_back(vma);
        return static_cast<u8*>(vma->addr);
    }

    int madvise(u32 handle, u32 madv, u32* retained = nullptr, drm::drm_file* f = nullptr) {
        drm_panfrost_madvise args{};
        args.handle = handle;
        args.madv = madv;
        args.retained = 0xAA;
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(f_or(f), DRM_IOCTL_PANFROST_MADVISE, &args);
        if (retained)
            *retained = args.retained;
        return ret;
    }
    // SET_LABEL_BO with `label` registered as user memory (its string, or `len` bytes).
    int set_label(u32 handle, const char* label, u32 pad = 0, size_t len = 0) {
        drm_panfrost_set_label_bo args{};
        args.handle = handle;
        args.pad = pad;
        args.label = drm::user_ptr(label);
        drm::UserRange r(&args, sizeof(args));
        drm::UserRange rl(label, label ? (len ? len : std::strlen(label) + 1) : 0);
        return drm::ioctl(file, DRM_IOCTL_PANFROST_SET_LABEL_BO, &args);
    }
    std::string label_of(u32 handle) {
        panfrost_gem_object* o = bo_obj(handle);
        kshim::MutexGuard g(o->label.lock);
        return o->label.str ? o->label.str : "(null)";
    }
    int sync_bo(const std::vector<drm_panfrost_bo_sync_op>& ops, u32 pad = 0, bool readable = true, u32 count = ~0u) {
        drm_panfrost_sync_bo args{};
        args.ops = drm::user_ptr(ops.data());
        args.op_count = count == ~0u ? static_cast<u32>(ops.size()) : count;
        args.pad = pad;
        drm::UserRange r(&args, sizeof(args));
        drm::UserRange ro(ops.data(), readable ? ops.size() * sizeof(ops[0]) : 0);
        return drm::ioctl(file, DRM_IOCTL_PANFROST_SYNC_BO, &args);
    }
    int query(u32 handle, drm_panfrost_query_bo_info* out, drm::drm_file* f = nullptr) {
        *out = {};
        out->handle = handle;
        out->pad = 0xFF;
        out->extra_flags = out->create_flags = 0xEE;
        drm::UserRange r(out, sizeof(*out));
        return drm::ioctl(f_or(f), DRM_IOCTL_PANFROST_QUERY_BO_INFO, out);
    }

    int gem_close(u32 handle, drm::drm_file* f = nullptr) {
        drm_gem_close args{};
        args.handle = handle;
        drm::UserRange r(&args, sizeof(args));
        return drm::ioctl(f_or(f), DRM_IOCTL_GEM_CLOSE, &args);
    }
    int handle_to_fd(u32 handle, int* fd, drm::drm_file* f = nullptr) {
        drm_prime_handle args{handle, DRM_CLOEXEC | DRM_RDWR, -1};
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(f_or(f), DRM_IOCTL_PRIME_HANDLE_TO_FD, &args);
        *fd = args.fd;
        return ret;
    }
    int fd_to_handle(int fd, u32* handle, drm::drm_file* f = nullptr) {
        drm_prime_handle args{0, 0, fd};
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(f_or(f), DRM_IOCTL_PRIME_FD_TO_HANDLE, &args);
        *handle = args.handle;
        return ret;
    }
    // Shares `handle` of `from` with `to` through a dma_buf descriptor: the handle in `to`.
    u32 share(u32 handle, drm::drm_file* from, drm::drm_file* to) {
        int fd = -1;
        EXPECT_EQ(handle_to_fd(handle, &fd, from), 0);
        u32 imported = 0;
        EXPECT_EQ(fd_to_handle(fd, &imported, to), 0);
        EXPECT_EQ(drm::drm_fd_close(fd), 0);
        return imported;
    }

    bool on_shrinker_list(u32 handle) {
        panfrost_gem_object* o = bo_obj(handle);
        kshim::MutexGuard g(pfdev->shrinker_lock);
        for (list_head* it = pfdev->shrinker_list.next; it != &pfdev->shrinker_list; it = it->next)
            if (it == &o->madv_list)
                return true;
        return false;
    }
};

// ---- MADVISE and the shrinker ----

TEST_F(PanfrostGemTest, MadviseMovesTheBoOnAndOffTheShrinkerList) {
    const u32 h = bo();
    u32 retained = 0;
    ASSERT_EQ(madvise(h, PANFROST_MADV_DONTNEED, &retained), 0);
    EXPECT_EQ(retained, 1u);
    EXPECT_TRUE(on_shrinker_list(h));
    EXPECT_EQ(bo_obj(h)->base.base.funcs->status(&bo_obj(h)->base.base) & drm::DRM_GEM_OBJECT_PURGEABLE,
              drm::DRM_GEM_OBJECT_PURGEABLE);
    ASSERT_EQ(madvise(h, PANFROST_MADV_WILLNEED, &retained), 0);
    EXPECT_EQ(retained, 1u);
    EXPECT_FALSE(on_shrinker_list(h));
    EXPECT_EQ(bo_obj(h)->base.madv, 0);
}

TEST_F(PanfrostGemTest, MadviseErrnos) {
    EXPECT_EQ(madvise(999, PANFROST_MADV_DONTNEED), -ENOENT) << "unknown handle";

    // DONTNEED needs the caller's file to be the only one mapping the BO.
    const u32 h = bo();
    drm::drm_file* other = open_extra();
    const u32 in_other = share(h, file, other);
    EXPECT_EQ(madvise(h, PANFROST_MADV_DONTNEED), -EINVAL) << "shared with another file";
    EXPECT_EQ(madvise(in_other, PANFROST_MADV_DONTNEED, nullptr, other), -EINVAL) << "from the other side too";
    EXPECT_FALSE(on_shrinker_list(h));
    u32 retained = 0;
    EXPECT_EQ(madvise(h, PANFROST_MADV_WILLNEED, &retained), 0) << "WILLNEED has no such rule";
    EXPECT_EQ(retained, 1u);

    // madv is not range-checked: stored as given (purgeable, as any positive value), no list.
    const u32 g = bo();
    EXPECT_EQ(madvise(g, 7, &retained), 0);
    EXPECT_EQ(retained, 1u);
    EXPECT_EQ(bo_obj(g)->base.madv, 7);
    EXPECT_FALSE(on_shrinker_list(g));
    // (EINTR, a signal while taking the reservation, is not reachable from a test.)
}

TEST_F(PanfrostGemTest, ShrinkerPurgesAnIdleDontneedBoAndItStaysPurged) {
    // The BO was written through a CPU mapping and used by a job; once both are gone and it is
    // DONTNEED, memory pressure takes its pages and its GPU mapping.
    JobBo jb = job_bo();
    u64 va = 0;
    u32 h = 0;
    ASSERT_EQ(create_bo(64 * 1024, PANFROST_BO_NOEXEC, &h, &va), 0);
    drm::VmArea* vma = nullptr;
    u8* cpu = cpu_map(h, 64 * 1024, &vma);
    ASSERT_NE(cpu, nullptr);
    std::memset(cpu, 0x5A, 64 * 1024);
    dma_fence* first = submit_fenced({.jc = jb.write_value(va, 0x1111), .bos = {jb.handle, h}});
    ASSERT_TRUE(wait_signaled(first));
    EXPECT_EQ(*reinterpret_cast<u64*>(cpu), 0x1111u);

    const u32 keep = bo();  // WILLNEED: never purged
    ASSERT_EQ(madvise(h, PANFROST_MADV_DONTNEED), 0);
    EXPECT_EQ(kshim::shrink_all(kScanAll), 0u) << "a CPU-mapped BO is pinned: not purgeable";
    drm::drm_munmap(vma);
    ASSERT_TRUE(advance_until_idle(kshim::NSEC_PER_SEC));  // the job's deferred put

    EXPECT_EQ(kshim::shrink_all(kScanAll), 16u) << "the 16 pages of the DONTNEED BO, nothing else";
    EXPECT_TRUE(kshim::log_contains("Purging 65536 bytes"));
    panfrost_gem_object* o = bo_obj(h);
    EXPECT_EQ(o->base.madv, -1);
    EXPECT_EQ(o->base.pages, nullptr);
    EXPECT_EQ(o->base.kept_pages, nullptr) << "the memory went back for good";
    EXPECT_FALSE(on_shrinker_list(h));
    EXPECT_EQ(bo_obj(keep)->base.madv, 0);

    // Purged stays purged: WILLNEED and DONTNEED both answer retained = 0.
    u32 retained = 1;
    ASSERT_EQ(madvise(h, PANFROST_MADV_WILLNEED, &retained), 0);
    EXPECT_EQ(retained, 0u);
    ASSERT_EQ(madvise(h, PANFROST_MADV_DONTNEED, &retained), 0);
    EXPECT_EQ(retained, 0u);
    EXPECT_FALSE(on_shrinker_list(h));
    EXPECT_EQ(kshim::shrink_all(kScanAll), 0u);

    // Its GPU mapping is gone: a job writing where it was faults and fails.
    dma_fence* late = submit_fenced({.jc = jb.write_value(va, 0x2222), .bos = {jb.handle}});
    ASSERT_TRUE(wait_signaled(late));
    EXPECT_EQ(kshim::dma_fence_get_status(late), -EINVAL);
    EXPECT_TRUE(kshim::log_contains("Unhandled Page fault"));
    // The CPU cannot map it again either.
    drm_panfrost_mmap_bo m{};
    m.handle = h;
    {
        drm::UserRange r(&m, sizeof(m));
        ASSERT_EQ(drm::ioctl(file, DRM_IOCTL_PANFROST_MMAP_BO, &m), 0);
    }
    drm::VmArea* again = nullptr;
    EXPECT_NE(drm::drm_mmap(file, m.offset, 4096, PROT_READ, MAP_SHARED, &again), 0);
}

TEST_F(PanfrostGemTest, ShrinkerKeepsADontneedBoAQueuedJobUses) {
    JobBo jb = job_bo();
    u64 va = 0;
    u32 h = 0;
    ASSERT_EQ(create_bo(64 * 1024, PANFROST_BO_NOEXEC, &h, &va), 0);
    ASSERT_EQ(madvise(h, PANFROST_MADV_DONTNEED), 0);

    // The job waits on a gate: queued, holding the BO (gpu_usecount 1).
    drm_syncobj_create c{};
    {
        drm::UserRange r(&c, sizeof(c));
        ASSERT_EQ(drm::ioctl(file, DRM_IOCTL_SYNCOBJ_CREATE, &c), 0);
    }
    dma_fence* gate = dma_fence_test::mock_fence(kshim::dma_fence_context_alloc(1), 1);
    drm::drm_syncobj* s = drm::drm_syncobj_find(file, c.handle);
    ASSERT_NE(s, nullptr);
    drm::drm_syncobj_replace_fence(s, gate);
    drm::drm_syncobj_put(s);
    dma_fence* done = submit_fenced({.jc = jb.write_value(va, 0x77), .bos = {jb.handle, h}, .in_syncs = {c.handle}});
    advance(10 * kshim::NSEC_PER_MSEC);
    ASSERT_FALSE(kshim::dma_fence_is_signaled(done));
    EXPECT_EQ(bo_obj(h)->gpu_usecount.load(), 1);

    EXPECT_EQ(kshim::shrink_all(kScanAll), 0u) << "in use by a job";
    EXPECT_EQ(bo_obj(h)->base.madv, 1);
    EXPECT_TRUE(on_shrinker_list(h));

    kshim::dma_fence_signal(gate);
    kshim::dma_fence_put(gate);
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(kshim::dma_fence_get_status(done), 1) << "its mapping was there for the job";
    ASSERT_TRUE(advance_until_idle(kshim::NSEC_PER_SEC));
    EXPECT_EQ(bo_obj(h)->gpu_usecount.load(), 0);
    EXPECT_EQ(kshim::shrink_all(kScanAll), 16u) << "idle now";
    EXPECT_EQ(bo_obj(h)->base.madv, -1);
}

// ---- SET_LABEL_BO ----

TEST_F(PanfrostGemTest, SetLabelBoReplacesAndClearsTheLabel) {
    const u32 h = bo();
    EXPECT_EQ(label_of(h), "(null)");
    ASSERT_EQ(set_label(h, "vertex buffer"), 0);
    EXPECT_EQ(label_of(h), "vertex buffer");
    ASSERT_EQ(set_label(h, "index buffer"), 0);
    EXPECT_EQ(label_of(h), "index buffer");
    ASSERT_EQ(set_label(h, ""), 0);
    EXPECT_EQ(label_of(h), "") << "an empty label is not a cleared one";
    ASSERT_EQ(set_label(h, nullptr), 0);
    EXPECT_EQ(label_of(h), "(null)");

    // The longest label: 4095 characters and the NUL.
    std::string longest(4095, 'x');
    ASSERT_EQ(set_label(h, longest.c_str()), 0);
    EXPECT_EQ(label_of(h), longest);
}

TEST_F(PanfrostGemTest, SetLabelBoErrnos) {
    const u32 h = bo();
    ASSERT_EQ(set_label(h, "kept"), 0);
    EXPECT_EQ(set_label(h, "x", 1), -EINVAL) << "pad";
    EXPECT_EQ(set_label(999, "x"), -ENOENT) << "unknown handle";
    std::string too_long(4096, 'y');
    EXPECT_EQ(set_label(h, too_long.c_str()), -E2BIG) << "no NUL within 4096 bytes";
    char unmapped[8] = "nowhere";
    drm_panfrost_set_label_bo args{h, 0, drm::user_ptr(unmapped)};
    {
        drm::UserRange r(&args, sizeof(args));
        EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PANFROST_SET_LABEL_BO, &args), -EFAULT) << "unreadable";
    }
    EXPECT_EQ(label_of(h), "kept") << "a failed call leaves the label";
}

// ---- SYNC_BO ----

TEST_F(PanfrostGemTest, SyncBoCountsTheCacheMaintenanceOfWriteBackBos) {
    ASSERT_FALSE(pfdev->coherent) << "the G52 platform is not DMA-coherent: BOs are WC by default";
    const u32 wb = bo(3 * SZ_4K, PANFROST_BO_NOEXEC | PANFROST_BO_WB_MMAP);
    const u32 wc = bo(3 * SZ_4K);
    auto& cs = pfdev->cache_sync;

    ASSERT_EQ(sync_bo({{wb, PANFROST_BO_SYNC_CPU_CACHE_FLUSH, 100, 5000}}), 0);
    EXPECT_EQ(cs.for_device.load(), 1u) << "one segment, cleaned";
    EXPECT_EQ(cs.for_cpu.load(), 0u);
    EXPECT_EQ(cs.bytes.load(), 5000u);

    ASSERT_EQ(sync_bo({{wb, PANFROST_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE, 0, 3 * SZ_4K}}), 0);
    EXPECT_EQ(cs.for_device.load(), 2u);
    EXPECT_EQ(cs.for_cpu.load(), 1u) << "and invalidated";
    EXPECT_EQ(cs.bytes.load(), 5000u + 3 * SZ_4K);

    // Nothing to do: a write-combined BO, a zero size, no ops.
    ASSERT_EQ(sync_bo({{wc, PANFROST_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE, 0, SZ_4K}}), 0);
    ASSERT_EQ(sync_bo({{wb, PANFROST_BO_SYNC_CPU_CACHE_FLUSH, 8, 0}}), 0);
    ASSERT_EQ(sync_bo({}), 0);
    EXPECT_EQ(cs.for_device.load(), 2u);
    EXPECT_EQ(cs.for_cpu.load(), 1u);
}

TEST_F(PanfrostGemTest, SyncBoErrnos) {
    const u32 wb = bo(2 * SZ_4K, PANFROST_BO_NOEXEC | PANFROST_BO_WB_MMAP);
    const drm_panfrost_bo_sync_op ok{wb, PANFROST_BO_SYNC_CPU_CACHE_FLUSH, 0, 64};
    auto& cs = pfdev->cache_sync;

    EXPECT_EQ(sync_bo({ok}, 1), -EINVAL) << "pad";
    EXPECT_EQ(sync_bo({ok}, 0, false, 0), 0) << "op_count 0: the array is not read";
    EXPECT_EQ(sync_bo({ok}, 0, true, 0x10000000), -ENOMEM) << "beyond what kvmalloc_array gives";
    EXPECT_EQ(sync_bo({ok}, 0, false), -EFAULT) << "ops unreadable";
    EXPECT_EQ(sync_bo({{999, 0, 0, 64}}), -ENOENT) << "unknown handle";
    EXPECT_EQ(sync_bo({{wb, 0, SZ_4K, SZ_4K + 1}}), -EINVAL) << "past the end";
    EXPECT_EQ(sync_bo({{wb, 0, 0xFFFFFFFFu, 2}}), -EINVAL) << "offset + size overflows";
    EXPECT_EQ(sync_bo({{wb, 2, 0, 64}}), -EINVAL) << "unknown type";
    EXPECT_EQ(cs.for_device.load(), 0u);

    // Imported BOs are the exporter's to maintain.
    OtherDevice other;
    const int fd = other.export_bo(SZ_4K);
    u32 imported = 0;
    ASSERT_EQ(fd_to_handle(fd, &imported), 0);
    EXPECT_EQ(drm::drm_fd_close(fd), 0);
    EXPECT_EQ(sync_bo({{imported, 0, 0, 64}}), -EINVAL) << "imported";
    // The import goes before the other device does.
    EXPECT_EQ(gem_close(imported), 0);

    // The first failing op stops the array; the ones before it are done.
    EXPECT_EQ(sync_bo({ok, {999, 0, 0, 64}, ok}), -ENOENT);
    EXPECT_EQ(cs.for_device.load(), 1u);
}

// ---- QUERY_BO_INFO ----

TEST_F(PanfrostGemTest, QueryBoInfoReportsCreateFlagsAndImports) {
    drm_panfrost_query_bo_info info{};
    const u32 plain = bo(SZ_4K, 0);
    ASSERT_EQ(query(plain, &info), 0);
    EXPECT_EQ(info.create_flags, 0u);
    EXPECT_EQ(info.extra_flags, 0u);
    EXPECT_EQ(info.pad, 0u) << "set to 0 (the input pad is not checked)";

    ASSERT_EQ(query(bo(SZ_4K, PANFROST_BO_NOEXEC | PANFROST_BO_WB_MMAP), &info), 0);
    EXPECT_EQ(info.create_flags, PANFROST_BO_NOEXEC | PANFROST_BO_WB_MMAP);
    ASSERT_EQ(query(bo(2 << 20, PANFROST_BO_NOEXEC | PANFROST_BO_HEAP), &info), 0);
    EXPECT_EQ(info.create_flags, PANFROST_BO_NOEXEC | PANFROST_BO_HEAP);

    EXPECT_EQ(query(999, &info), -ENOENT);

    // A foreign dma_buf: imported, NOEXEC, labelled, no create flags.
    OtherDevice other;
    const int fd = other.export_bo(2 * SZ_4K);
    u32 imported = 0;
    ASSERT_EQ(fd_to_handle(fd, &imported), 0);
    EXPECT_EQ(drm::drm_fd_close(fd), 0);
    ASSERT_EQ(query(imported, &info), 0);
    EXPECT_EQ(info.extra_flags, DRM_PANFROST_BO_IS_IMPORTED);
    EXPECT_EQ(info.create_flags, 0u);
    EXPECT_TRUE(bo_obj(imported)->noexec);
    EXPECT_EQ(label_of(imported), "GEM PRIME buffer");
    EXPECT_NE(bo_offset(imported), 0u) << "mapped in this file's VM";
    EXPECT_EQ(gem_close(imported), 0);
    // A BO this device exported and imported again is its own, not an import.
    drm::drm_file* second = open_extra();
    const u32 back = share(plain, file, second);
    ASSERT_EQ(query(back, &info, second), 0);
    EXPECT_EQ(info.extra_flags, 0u);
}

// ---- PRIME between two files ----

TEST_F(PanfrostGemTest, PrimeSharedBoIsMappedInBothVmsAndOrdersTheirJobs) {
    drm::drm_file* other = open_extra();
    u32 shared = 0;
    u64 va_a = 0;
    ASSERT_EQ(create_bo(SZ_4K, PANFROST_BO_NOEXEC, &shared, &va_a), 0);
    const u32 shared_b = share(shared, file, other);
    EXPECT_EQ(bo_obj(shared_b, other), bo_obj(shared)) << "one BO for both files";
    const u64 va_b = bo_offset(shared_b, other);
    EXPECT_NE(va_b, 0u);
    u8* cpu = cpu_map(shared, SZ_4K);
    ASSERT_NE(cpu, nullptr);
    auto* word = reinterpret_cast<volatile u64*>(cpu);

    // File A: a long chain (300 jobs of 100 ns, longer than the mock's 20 us slice) writing 1;
    // file B: one fragment-slot job writing 2 into the same word through its own VM.
    JobBo a = job_bo();
    JobBo b = job_bo(64 * 1024, other);
    u64 first = 0, prev = 0;
    for (int i = 0; i < 300; i++) {
        prev = a.write_value(va_a, 1, prev);
        if (!first)
            first = prev;
    }
    const u64 bjob = b.write_value(va_b, 2);

    dma_fence* fa = submit_fenced({.jc = first, .bos = {a.handle, shared}});
    dma_fence* fb =
        submit_fenced({.jc = bjob, .bos = {b.handle, shared_b}, .requirements = PANFROST_JD_REQ_FS, .f = other});
    ASSERT_TRUE(wait_signaled(fb));
    EXPECT_TRUE(kshim::dma_fence_is_signaled(fa)) << "B's job waited for A's through the shared BO";
    EXPECT_EQ(kshim::dma_fence_get_status(fb), 1);
    EXPECT_EQ(*word, 2u) << "B's write landed after A's chain";

    // Without the shared BO in B's list nothing orders them: B overtakes A's chain.
    for (u64 j = first; j; j = a.header(j)->next)
        a.header(j)->exception_status = 0;
    b.header(bjob)->exception_status = 0;
    dma_fence* fc = submit_fenced({.jc = first, .bos = {a.handle, shared}});
    dma_fence* fd = submit_fenced({.jc = bjob, .bos = {b.handle}, .requirements = PANFROST_JD_REQ_FS, .f = other});
    ASSERT_TRUE(wait_signaled(fc));
    ASSERT_TRUE(wait_signaled(fd));
    EXPECT_EQ(*word, 1u);
}

}  // namespace
}  // namespace panfrost::testing
