// Tests of umd/panthor_client and host/drm_file_backend against the panthor driver probed on the
// mock GPU: what a userspace driver gets back from each call (values and the kernel's errnos), that
// CPU writes through a client mapping are what the GPU reads at the bound VA (read through the
// mock MMU), asynchronous binds signalling syncobjs, the LATEST_FLUSH_ID page, and the syncobj
// wrappers. A recording backend checks the argument graphs the client builds for the ioctls whose
// kernel side is not exercised here.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "host/drm_file_backend.h"
#include "hw/csf/regs/csf_regs.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/time.h"
#include "mock_hw/gpu.h"
#include "mock_hw/lpae_walker.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_drv.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"
#include "tests/umd/umd_client_test.h"
#include "umd/panthor_client.h"

namespace umd {
namespace {

using panthor::testing::PanthorTest;
using namespace drm::uapi;

constexpr u64 SZ_4K = 0x1000;
constexpr u64 SZ_64K = 0x10000;
constexpr u64 kVa = 0x1000000;
constexpr s64 kMs = kshim::NSEC_PER_MSEC;

class UmdClient : public testing::UmdClientTest {
protected:
    panthor::panthor_file* pfile() { return static_cast<panthor::panthor_file*>(file->driver_priv); }

    // Runs fn(as) with the VM bound to an address space, the way a scheduled group holds it.
    template <class Fn>
    void with_active_vm(u32 vm_id, Fn&& fn) {
        panthor::panthor_vm* vm = panthor::panthor_vm_pool_get_vm(pfile()->vms, vm_id);
        ASSERT_NE(vm, nullptr);
        ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
        ASSERT_EQ(panthor::panthor_vm_active(vm), 0);
        fn(static_cast<u32>(panthor::panthor_vm_as(vm)));
        panthor::panthor_vm_idle(vm);
        panthor::panthor_vm_put(vm);
        kshim::pm_runtime_put_autosuspend(dev());
    }
    // The 64-bit word the GPU reads at `va` of the VM (~0 if the access does not complete).
    u64 gpu_word(u32 vm_id, u64 va) {
        u64 v = ~u64{0};
        with_active_vm(vm_id, [&](u32 as) {
            if (!gpu().mmu().read(as, va, &v, sizeof(v), mock_hw::Access::Read, mock_hw::kSourceTest).ok())
                v = ~u64{0};
        });
        return v;
    }
    bool gpu_translates(u32 vm_id, u64 va) {
        bool ok = false;
        with_active_vm(vm_id, [&](u32 as) {
            kshim::SpinGuard g(gpu().lock());
            ok = mock_hw::lpae_walk(gpu().mmu().config_locked(as), va).ok;
        });
        return ok;
    }
};

// ---- open and queries ----

TEST_F(UmdClient, OpenCachesTheDeviceInfo) {
    EXPECT_EQ(std::memcmp(&c().gpu_info(), &ptdev->gpu_info, sizeof(drm_panthor_gpu_info)), 0);
    EXPECT_EQ(std::memcmp(&c().csif_info(), &ptdev->csif_info, sizeof(drm_panthor_csif_info)), 0);
    EXPECT_EQ(c().gpu_info().gpu_id >> 16, 0xA867u);
    const cs::Config cfg = c().cs_config();
    EXPECT_EQ(cfg.nr_registers, 96u);
    EXPECT_EQ(cfg.nr_kernel_registers, 4u);
    EXPECT_EQ(cfg.nr_scoreboards, ptdev->csif_info.scoreboard_slot_count);
    // A builder sized from it refuses the registers the kernel's ring-buffer code uses (A = 92).
    cs::Builder b(cfg);
    EXPECT_FALSE(b.is_user_reg64(92));
    EXPECT_TRUE(b.is_user_reg64(90));
}

TEST_F(UmdClient, Queries) {
    Result<drm_panthor_timestamp_info> ts = c().query_timestamp_info();
    ASSERT_TRUE(ts.ok()) << ts.error();
    EXPECT_NE(ts->timestamp_frequency, 0u);

    Result<drm_panthor_group_priorities_info> prio = c().query_group_priorities();
    ASSERT_TRUE(prio.ok());
    // A render file without CAP_SYS_NICE: LOW and MEDIUM only.
    EXPECT_EQ(prio->allowed_mask, 0b0011);

    Result<drm_panthor_mmu_info> mmu = c().query_mmu_info();
    ASSERT_TRUE(mmu.ok()) << mmu.error();
    EXPECT_EQ(mmu->page_size_bitmap, 0x201000u);  // 4 KiB pages and 2 MiB blocks
    EXPECT_EQ(c().page_size_bitmap(), 0x201000u);

    EXPECT_EQ(c().query_size(DRM_PANTHOR_DEV_QUERY_GPU_INFO).value_or(0), sizeof(drm_panthor_gpu_info));
    EXPECT_EQ(c().query_size(DRM_PANTHOR_DEV_QUERY_CSIF_INFO).value_or(0), sizeof(drm_panthor_csif_info));
    EXPECT_EQ(c().query_size(77).error(), -EINVAL);
    u32 too_small = 0;
    EXPECT_EQ(c().dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, &too_small, sizeof(too_small)).error(), -EINVAL);
}

// 1.8: the extended TIMESTAMP_INFO through the client.
TEST_F(UmdClient, TimestampFlags) {
    const u32 flags = DRM_PANTHOR_TIMESTAMP_GPU | DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC |
                      DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT | DRM_PANTHOR_TIMESTAMP_DURATION;
    Result<drm_panthor_timestamp_info> ts = c().query_timestamp_info(flags);
    ASSERT_TRUE(ts.ok()) << ts.error();
    EXPECT_EQ(ts->flags, flags);
    EXPECT_NE(ts->current_timestamp, 0u);
    EXPECT_NE(ts->cycle_count, 0u);
    EXPECT_EQ(ts->timestamp_frequency, 0u) << "not asked for";
    EXPECT_EQ(ts->cpu_timestamp_sec * 1'000'000'000 + ts->cpu_timestamp_nsec, static_cast<u64>(kshim::ktime_get()));
    EXPECT_EQ(c().query_timestamp_info(7u << 1).error(), -EINVAL);
    EXPECT_EQ(c().query_size(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO).value_or(0), 56u);
}

// 1.7: BO_SYNC and BO_QUERY_INFO through the client.
TEST_F(UmdClient, BoSyncAndQueryInfo) {
    const Bo wb = *c().bo_create(2 * SZ_4K, DRM_PANTHOR_BO_WB_MMAP);
    const u64 cleans = ptdev->cache_sync.for_device.load();
    EXPECT_TRUE(c().bo_sync(wb.handle, DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE, 0, 2 * SZ_4K).ok());
    EXPECT_GT(ptdev->cache_sync.for_device.load(), cleans);
    EXPECT_EQ(c().bo_sync(wb.handle, 5, 0, 64).error(), -EINVAL);
    EXPECT_EQ(c().bo_sync(0xBAD, 0, 0, 64).error(), -ENOENT);
    Result<drm_panthor_bo_query_info> info = c().bo_query_info(wb.handle);
    ASSERT_TRUE(info.ok()) << info.error();
    EXPECT_EQ(info->create_flags, u32{DRM_PANTHOR_BO_WB_MMAP});
    EXPECT_EQ(info->extra_flags, 0u);
    EXPECT_EQ(c().bo_query_info(0xBAD).error(), -ENOENT);
    EXPECT_EQ(c().bo_create(SZ_4K, DRM_PANTHOR_BO_WB_MMAP | DRM_PANTHOR_BO_NO_MMAP).error(), -EINVAL);
}

TEST_F(UmdClient, VersionAndCaps) {
    Result<DriverVersion> v = c().version();
    ASSERT_TRUE(v.ok()) << v.error();
    EXPECT_EQ(v->name, "panthor");
    EXPECT_EQ(v->desc, "Panthor DRM driver");
    EXPECT_EQ(v->major, panthor::PANTHOR_DRIVER_MAJOR);
    EXPECT_EQ(v->minor, panthor::PANTHOR_DRIVER_MINOR);
    EXPECT_EQ(c().get_cap(DRM_CAP_SYNCOBJ).value_or(0), 1u);
    EXPECT_EQ(c().get_cap(DRM_CAP_SYNCOBJ_TIMELINE).value_or(0), 1u);
}

TEST_F(UmdClient, OpenReturnsTheBackendsErrno) {
    struct Dead final : Backend {
        int ioctl(unsigned long, void*) override { return -ENODEV; }
        Result<void*> mmap(u64, size_t, int, int) override { return err(-ENODEV); }
        int munmap(void*, size_t) override { return -EINVAL; }
        u32 read32(const void*, u64) override { return 0; }
        int close_fd(int) override { return -EBADF; }
        s64 monotonic_ns() override { return 0; }
    } dead;
    EXPECT_EQ(PanthorClient::open(dead).error(), -ENODEV);
}

// ---- VMs, BOs, mmap, bind ----

TEST_F(UmdClient, VmLifecycle) {
    Result<VmInfo> vm = c().vm_create();
    ASSERT_TRUE(vm.ok()) << vm.error();
    EXPECT_GE(vm->id, 1u);
    EXPECT_NE(vm->user_va_range, 0u);
    EXPECT_EQ(c().vm_get_state(vm->id).value_or(99), static_cast<u32>(DRM_PANTHOR_VM_STATE_USABLE));
    EXPECT_TRUE(c().vm_destroy(vm->id).ok());
    EXPECT_EQ(c().vm_destroy(vm->id).error(), -EINVAL);
    EXPECT_EQ(c().vm_get_state(vm->id).error(), -EINVAL);
}

TEST_F(UmdClient, CpuWritesThroughTheMappingAreWhatTheGpuReadsAtTheBoundVa) {
    const u32 vm = c().vm_create()->id;
    Result<Bo> bo = c().bo_create(SZ_64K - 100);
    ASSERT_TRUE(bo.ok()) << bo.error();
    EXPECT_EQ(bo->size, SZ_64K);  // rounded up to pages
    Result<void*> cpu = c().bo_mmap(bo->handle, bo->size);
    ASSERT_TRUE(cpu.ok()) << cpu.error();
    auto* words = static_cast<u64*>(*cpu);
    words[0] = 0x1122334455667788ull;
    words[SZ_4K / 8 * 3 + 1] = 0xCAFEF00Dull;  // page 3, +8

    ASSERT_TRUE(c().vm_map(vm, bo->handle, kVa, bo->size).ok());
    EXPECT_EQ(gpu_word(vm, kVa), 0x1122334455667788ull);
    EXPECT_EQ(gpu_word(vm, kVa + 3 * SZ_4K + 8), 0xCAFEF00Dull);

    ASSERT_TRUE(c().vm_unmap(vm, kVa, bo->size).ok());
    EXPECT_FALSE(gpu_translates(vm, kVa));

    EXPECT_TRUE(c().munmap(*cpu, bo->size).ok());
    EXPECT_EQ(c().munmap(*cpu, bo->size).error(), -EINVAL);  // not mapped any more
    EXPECT_TRUE(c().bo_destroy(bo->handle).ok());
    EXPECT_TRUE(c().vm_destroy(vm).ok());
}

TEST_F(UmdClient, ErrorsComeBackWithTheKernelsErrno) {
    const u32 vm = c().vm_create()->id;
    const Bo bo = *c().bo_create(SZ_64K);

    EXPECT_EQ(c().vm_map(vm, 0xBAD, kVa, SZ_4K).error(), -EINVAL);          // unknown BO handle
    EXPECT_EQ(c().vm_map(vm, bo.handle, kVa + 1, SZ_4K).error(), -EINVAL);  // unaligned VA
    EXPECT_EQ(c().vm_map(99, bo.handle, kVa, SZ_4K).error(), -EINVAL);      // unknown VM
    EXPECT_EQ(c().bo_create(0).error(), -EINVAL);
    EXPECT_EQ(c().bo_create(SZ_4K, 0x80).error(), -EINVAL);
    EXPECT_EQ(c().bo_mmap_offset(0xBAD).error(), -ENOENT);
    EXPECT_EQ(c().bo_mmap(0xBAD, SZ_4K).error(), -ENOENT);
    EXPECT_EQ(c().bo_destroy(0xBAD).error(), -EINVAL);

    // A NO_MMAP BO has no CPU mapping.
    const Bo nomap = *c().bo_create(SZ_4K, DRM_PANTHOR_BO_NO_MMAP);
    EXPECT_EQ(c().bo_mmap(nomap.handle, SZ_4K).error(), -EPERM);

    // Synchronous binds stop at the first failing op and say how many went through.
    const std::vector<BindOp> ops = {BindOp::map(bo.handle, kVa, SZ_4K), BindOp::map(0xBAD, kVa + SZ_4K, SZ_4K),
                                     BindOp::map(bo.handle, kVa + 2 * SZ_4K, SZ_4K)};
    u32 done = 99;
    EXPECT_EQ(c().vm_bind(vm, ops, 0, &done).error(), -EINVAL);
    EXPECT_EQ(done, 1u);
    // Sync ops need ASYNC.
    const u32 so = *c().syncobj_create();
    const std::vector<BindOp> with_sync = {BindOp::map(bo.handle, kVa + 8 * SZ_4K, SZ_4K, 0, 0, {sync_signal(so)})};
    EXPECT_EQ(c().vm_bind(vm, with_sync).error(), -EINVAL);
}

TEST_F(UmdClient, SparseMapReadsAndWritesTheFilesDummyAndSplitsUnderABoMap) {
    const u32 vm = c().vm_create()->id;
    constexpr u64 kSparseVa = 0x4000000;
    ASSERT_TRUE(c().vm_map_sparse(vm, kSparseVa, 6 * SZ_4K * 512).ok());  // 12 MiB
    EXPECT_TRUE(gpu_translates(vm, kSparseVa));
    EXPECT_TRUE(gpu_translates(vm, kSparseVa + 6 * SZ_4K * 512 - SZ_4K));
    // A BO mapped over the middle replaces that part only.
    const Bo bo = *c().bo_create(SZ_64K);
    Result<void*> cpu = c().bo_mmap(bo.handle, bo.size);
    ASSERT_TRUE(cpu.ok());
    static_cast<u64*>(*cpu)[0] = 0xB0B0B0B0ull;
    ASSERT_TRUE(c().vm_map(vm, bo.handle, kSparseVa + SZ_64K, SZ_64K).ok());
    EXPECT_EQ(gpu_word(vm, kSparseVa + SZ_64K), 0xB0B0B0B0ull);
    EXPECT_TRUE(gpu_translates(vm, kSparseVa));
    ASSERT_TRUE(c().vm_unmap(vm, kSparseVa, 6 * SZ_4K * 512).ok());
    EXPECT_FALSE(gpu_translates(vm, kSparseVa + SZ_64K));
    // The kernel's contract: MAP_NOEXEC is part of every sparse map; no BO.
    EXPECT_EQ(c().vm_map(vm, 0, kSparseVa, SZ_4K, 0, DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE).error(), -EINVAL);
    EXPECT_EQ(c().vm_map(vm, bo.handle, kSparseVa, SZ_4K, 0,
                         DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE | DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC)
                  .error(),
              -EINVAL);
    EXPECT_TRUE(c().munmap(*cpu, bo.size).ok());
    EXPECT_TRUE(c().bo_destroy(bo.handle).ok());
    EXPECT_TRUE(c().vm_destroy(vm).ok());
}

TEST_F(UmdClient, BoLabel) {
    const Bo bo = *c().bo_create(SZ_4K);
    EXPECT_TRUE(c().bo_set_label(bo.handle, "umd ring buffer").ok());
    EXPECT_TRUE(c().bo_set_label(bo.handle, nullptr).ok());
    EXPECT_EQ(c().bo_set_label(0xBAD, "x").error(), -ENOENT);
    const std::string too_long(PANTHOR_BO_LABEL_MAXLEN + 10, 'a');
    EXPECT_EQ(c().bo_set_label(bo.handle, too_long.c_str()).error(), -E2BIG);
}

TEST_F(UmdClient, AsyncBindSignalsASyncobjTheClientWaitsOn) {
    const u32 vm = c().vm_create()->id;
    const Bo bo = *c().bo_create(SZ_64K);
    auto* cpu = static_cast<u64*>(*c().bo_mmap(bo.handle, bo.size));
    cpu[0] = 0xA5A5A5A5ull;

    const u32 done = *c().syncobj_create();
    const u32 timeline = *c().syncobj_create();
    const std::vector<BindOp> ops = {
        BindOp::map(bo.handle, kVa, bo.size, 0, 0, {sync_signal(done), timeline_signal(timeline, 1)})};
    ASSERT_TRUE(c().vm_bind_async(vm, ops).ok());
    Result<u32> w = c().syncobj_wait(done, c().deadline_after(1000 * kMs));
    ASSERT_TRUE(w.ok()) << w.error();
    const u64 point = 1;
    EXPECT_TRUE(c().syncobj_timeline_wait({&timeline, 1}, {&point, 1}, c().deadline_after(1000 * kMs)).ok());
    EXPECT_EQ(gpu_word(vm, kVa), 0xA5A5A5A5ull);

    // An unmap that waits on the map's signal and signals a second syncobj: a pipeline of binds.
    const u32 unmapped = *c().syncobj_create();
    const std::vector<BindOp> unmap = {BindOp::unmap(kVa, bo.size, {sync_wait(done), sync_signal(unmapped)})};
    ASSERT_TRUE(c().vm_bind_async(vm, unmap).ok());
    ASSERT_TRUE(c().syncobj_wait(unmapped, c().deadline_after(1000 * kMs)).ok());
    EXPECT_FALSE(gpu_translates(vm, kVa));

    // A SYNC_ONLY op waiting on a fence-less binary syncobj: the kernel refuses it.
    const u32 empty = *c().syncobj_create();
    const std::vector<BindOp> bad = {BindOp::sync_only({sync_wait(empty), sync_signal(done)})};
    EXPECT_EQ(c().vm_bind_async(vm, bad).error(), -EINVAL);
    EXPECT_TRUE(c().munmap(cpu, bo.size).ok());
}

TEST_F(UmdClient, NothingStaysRegisteredAsUserMemory) {
    const std::vector<u32> handles = {*c().syncobj_create(DRM_SYNCOBJ_CREATE_SIGNALED)};
    ASSERT_TRUE(c().syncobj_wait(handles, c().deadline_after(kMs)).ok());
    EXPECT_FALSE(drm::uaccess_ok(drm::user_ptr(handles.data()), sizeof(u32)));
    // And memory the client did not announce is a fault for the kernel, not a crash.
    drm_syncobj_wait args{};
    args.handles = drm::user_ptr(handles.data());
    args.count_handles = 1;
    EXPECT_EQ(backend_->ioctl(DRM_IOCTL_SYNCOBJ_WAIT, &args), -EFAULT);
}

// ---- the LATEST_FLUSH_ID page ----

TEST_F(UmdClient, LatestFlushIdReadsTheRegisterWhilePoweredAndTheDummyPageWhenSuspended) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    Result<u32> id = c().latest_flush_id();
    ASSERT_TRUE(id.ok()) << id.error();
    EXPECT_EQ(*id, gpu().peek32(panthor::CSF_GPU_LATEST_FLUSH_ID).value_or(~0u));
    EXPECT_EQ(backend_->live_mappings(), 1u);
    kshim::pm_runtime_put_autosuspend(dev());

    ASSERT_TRUE(wait_autosuspend());
    EXPECT_EQ(c().latest_flush_id().value_or(0), 1u);  // the dummy page panthor maps meanwhile
    EXPECT_EQ(backend_->live_mappings(), 1u);          // mapped once
}

TEST_F(UmdClient, UserMmioOffset) {
    EXPECT_EQ(c().set_user_mmio_offset(12345).error(), -EINVAL);
    ASSERT_TRUE(c().set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT).ok());
    EXPECT_TRUE(c().latest_flush_id().ok());  // mapped at the new base
    // The old base now lies inside the new MMIO range, past the one page it has.
    EXPECT_EQ(backend_->mmap(DRM_PANTHOR_USER_MMIO_OFFSET_64BIT, SZ_4K, PROT_READ, MAP_SHARED).error(), -EINVAL);
}

// ---- syncobjs ----

TEST_F(UmdClient, SyncobjCreateWaitSignalReset) {
    const u32 a = *c().syncobj_create();
    // No fence: without WAIT_FOR_SUBMIT that is -EINVAL, with it a timeout once virtual time ran out.
    EXPECT_EQ(c().syncobj_wait(a, c().deadline_after(10 * kMs)).error(), -EINVAL);
    const s64 t0 = kshim::ktime_get();
    EXPECT_EQ(c().syncobj_wait(a, c().deadline_after(10 * kMs), DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT).error(),
              -ETIME);
    EXPECT_GE(kshim::ktime_get() - t0, 10 * kMs);

    ASSERT_TRUE(c().syncobj_signal({&a, 1}).ok());
    EXPECT_TRUE(c().syncobj_wait(a, c().deadline_after(kMs)).ok());
    ASSERT_TRUE(c().syncobj_reset({&a, 1}).ok());
    EXPECT_EQ(c().syncobj_wait(a, c().deadline_after(kMs)).error(), -EINVAL);

    // Wait-any returns the first signalled index.
    const u32 b = *c().syncobj_create(DRM_SYNCOBJ_CREATE_SIGNALED);
    const std::vector<u32> both = {a, b};
    Result<u32> first = c().syncobj_wait(both, c().deadline_after(kMs), DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT);
    ASSERT_TRUE(first.ok()) << first.error();
    EXPECT_EQ(*first, 1u);

    ASSERT_TRUE(c().syncobj_destroy(a).ok());
    EXPECT_EQ(c().syncobj_destroy(a).error(), -EINVAL);
    EXPECT_EQ(c().syncobj_wait(a, c().deadline_after(kMs)).error(), -ENOENT);
}

TEST_F(UmdClient, SyncobjTimeline) {
    const u32 tl = *c().syncobj_create();
    const u64 p3 = 3, p5 = 5;
    ASSERT_TRUE(c().syncobj_timeline_signal({&tl, 1}, {&p3, 1}).ok());
    EXPECT_EQ(c().syncobj_query({&tl, 1}).value_or({}), std::vector<u64>{3});
    EXPECT_TRUE(c().syncobj_timeline_wait({&tl, 1}, {&p3, 1}, c().deadline_after(kMs)).ok());
    EXPECT_EQ(c().syncobj_timeline_wait({&tl, 1}, {&p5, 1}, c().deadline_after(5 * kMs),
                                        DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)
                  .error(),
              -ETIME);

    // Point 3 into a binary syncobj, and into point 7 of another timeline.
    const u32 bin = *c().syncobj_create();
    ASSERT_TRUE(c().syncobj_transfer(bin, 0, tl, 3).ok());
    EXPECT_TRUE(c().syncobj_wait(bin, c().deadline_after(kMs)).ok());
    const u32 tl2 = *c().syncobj_create();
    ASSERT_TRUE(c().syncobj_transfer(tl2, 7, tl, 3).ok());
    EXPECT_EQ(c().syncobj_query({&tl2, 1}).value_or({}), std::vector<u64>{7});
    EXPECT_EQ(c().syncobj_transfer(tl2, 8, 0xBAD, 3).error(), -ENOENT);

    // Mismatched arrays never reach the kernel.
    const std::vector<u64> two = {1, 2};
    EXPECT_EQ(c().syncobj_timeline_signal({&tl, 1}, two).error(), -EINVAL);
    EXPECT_EQ(c().syncobj_query(std::vector<u32>{}).error(), -EINVAL);  // the kernel's: count 0
}

TEST_F(UmdClient, SyncobjFdRoundTrip) {
    const u32 h = *c().syncobj_create();
    Result<int> fd = c().syncobj_handle_to_fd(h);
    ASSERT_TRUE(fd.ok()) << fd.error();
    EXPECT_GE(*fd, 3);
    Result<u32> h2 = c().syncobj_fd_to_handle(*fd);
    ASSERT_TRUE(h2.ok()) << h2.error();
    EXPECT_NE(*h2, h);
    ASSERT_TRUE(c().syncobj_signal({&h, 1}).ok());
    EXPECT_TRUE(c().syncobj_wait(*h2, c().deadline_after(kMs)).ok());  // the same syncobj
    EXPECT_EQ(c().backend().close_fd(*fd), 0);
    EXPECT_EQ(c().backend().close_fd(*fd), -EBADF);
    EXPECT_EQ(c().syncobj_fd_to_handle(*fd).error(), -EINVAL);

    // A sync_file of the fence, imported into another syncobj.
    Result<int> sf = c().syncobj_handle_to_fd(h, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE);
    ASSERT_TRUE(sf.ok()) << sf.error();
    const u32 dst = *c().syncobj_create();
    ASSERT_EQ(c().syncobj_fd_to_handle(*sf, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE, dst).value_or(0), dst);
    EXPECT_TRUE(c().syncobj_wait(dst, c().deadline_after(kMs)).ok());
    EXPECT_EQ(c().backend().close_fd(*sf), 0);
}

// ---- the backend ----

TEST_F(UmdClient, BackendUnmapsWhatIsLeftWhenItGoes) {
    const Bo bo = *c().bo_create(SZ_4K);
    ASSERT_TRUE(c().bo_mmap(bo.handle, SZ_4K).ok());
    ASSERT_TRUE(c().bo_mmap(bo.handle, SZ_4K).ok());  // the same pages twice
    EXPECT_EQ(drm::drm_mmap_live(), mmaps_before_ + 2);
    client_.reset();
    backend_.reset();
    EXPECT_EQ(drm::drm_mmap_live(), mmaps_before_);
}

// ---- argument graphs of the group and heap ioctls (a recording backend, no kernel) ----

// Records the argument of every ioctl and checks, at the time of the call, that every nested
// buffer it points at was announced as user memory.
class RecordingBackend final : public Backend {
public:
    int ioctl(unsigned long cmd, void* arg) override {
        cmds.push_back(cmd);
        if (cmd == DRM_IOCTL_PANTHOR_DEV_QUERY) {
            auto* q = static_cast<drm_panthor_dev_query*>(arg);
            if (q->type == DRM_PANTHOR_DEV_QUERY_GPU_INFO) {
                drm_panthor_gpu_info gi{};
                gi.shader_present = 0x50005;
                gi.tiler_present = 1;
                std::memcpy(reinterpret_cast<void*>(q->pointer), &gi, sizeof(gi));
            }
            return 0;
        }
        if (cmd == DRM_IOCTL_PANTHOR_GROUP_CREATE) {
            group = *static_cast<drm_panthor_group_create*>(arg);
            EXPECT_TRUE(announced(group.queues.array, group.queues.count * group.queues.stride));
            const auto* q = reinterpret_cast<const drm_panthor_queue_create*>(group.queues.array);
            queues.assign(q, q + group.queues.count);
            static_cast<drm_panthor_group_create*>(arg)->group_handle = 7;
            return 0;
        }
        if (cmd == DRM_IOCTL_PANTHOR_GROUP_SUBMIT) {
            submit = *static_cast<drm_panthor_group_submit*>(arg);
            EXPECT_TRUE(
                announced(submit.queue_submits.array, submit.queue_submits.count * submit.queue_submits.stride));
            const auto* qs = reinterpret_cast<const drm_panthor_queue_submit*>(submit.queue_submits.array);
            submits.assign(qs, qs + submit.queue_submits.count);
            for (const auto& s : submits) {
                EXPECT_TRUE(s.syncs.count == 0 || announced(s.syncs.array, s.syncs.count * s.syncs.stride));
                const auto* so = reinterpret_cast<const drm_panthor_sync_op*>(s.syncs.array);
                syncs.emplace_back(so, so + s.syncs.count);
            }
            return 0;
        }
        return -EINVAL;
    }
    Result<void*> mmap(u64, size_t, int, int) override { return err(-ENODEV); }
    int munmap(void*, size_t) override { return -EINVAL; }
    u32 read32(const void*, u64) override { return 0; }
    int close_fd(int) override { return -EBADF; }
    s64 monotonic_ns() override { return 0; }
    void user_memory_add(const void* p, size_t n) override { mem.push_back({p, n}); }
    void user_memory_remove(const void* p, size_t n) override {
        for (auto it = mem.begin(); it != mem.end(); ++it)
            if (it->first == p && it->second == n) {
                mem.erase(it);
                return;
            }
        ADD_FAILURE() << "removed memory that was never added";
    }

    bool announced(u64 addr, size_t n) const {
        for (const auto& [p, len] : mem)
            if (reinterpret_cast<u64>(p) <= addr && addr + n <= reinterpret_cast<u64>(p) + len)
                return true;
        return false;
    }

    std::vector<unsigned long> cmds;
    std::vector<std::pair<const void*, size_t>> mem;
    drm_panthor_group_create group{};
    std::vector<drm_panthor_queue_create> queues;
    drm_panthor_group_submit submit{};
    std::vector<drm_panthor_queue_submit> submits;
    std::vector<std::vector<drm_panthor_sync_op>> syncs;
};

TEST(UmdClientArgs, GroupCreateDefaultsCoreMasksToThePresentCores) {
    RecordingBackend be;
    auto c = std::move(*PanthorClient::open(be));
    GroupDesc d;
    d.vm_id = 3;
    d.queues = {{.priority = 1, .ringbuf_size = 16384}, {.priority = 15}};
    d.max_fragment_cores = 2;
    d.tiler_core_mask = 0;
    ASSERT_EQ(c->group_create(d).value_or(0), 7u);
    EXPECT_EQ(be.group.vm_id, 3u);
    EXPECT_EQ(be.group.priority, PANTHOR_GROUP_PRIORITY_MEDIUM);
    EXPECT_EQ(be.group.compute_core_mask, 0x50005u);
    EXPECT_EQ(be.group.fragment_core_mask, 0x50005u);
    EXPECT_EQ(be.group.max_compute_cores, 4);
    EXPECT_EQ(be.group.max_fragment_cores, 2);  // given
    EXPECT_EQ(be.group.tiler_core_mask, 0u);    // given
    EXPECT_EQ(be.group.max_tiler_cores, 0);
    EXPECT_EQ(be.group.queues.stride, sizeof(drm_panthor_queue_create));
    ASSERT_EQ(be.queues.size(), 2u);
    EXPECT_EQ(be.queues[0].priority, 1);
    EXPECT_EQ(be.queues[0].ringbuf_size, 16384u);
    EXPECT_EQ(be.queues[1].priority, 15);
    EXPECT_EQ(be.queues[1].ringbuf_size, 64u * 1024);
    EXPECT_TRUE(be.mem.empty());  // withdrawn after the call
}

TEST(UmdClientArgs, GroupSubmitCarriesEveryQueueAndItsSyncOps) {
    RecordingBackend be;
    auto c = std::move(*PanthorClient::open(be));
    cs::Builder b({}, 64, 0x200000);
    b.nop();
    b.error_barrier();
    const std::vector<QueueSubmit> qs = {
        QueueSubmit::of(0, b, 0x1234, {sync_wait(4), timeline_signal(5, 9)}),
        QueueSubmit{.queue_index = 2, .syncs = {sync_signal(6)}},  // a synchronisation point
    };
    ASSERT_TRUE(c->group_submit(11, qs).ok());
    EXPECT_EQ(be.submit.group_handle, 11u);
    ASSERT_EQ(be.submits.size(), 2u);
    EXPECT_EQ(be.submits[0].stream_addr, 0x200000u);
    EXPECT_EQ(be.submits[0].stream_size, 16u);
    EXPECT_EQ(be.submits[0].latest_flush, 0x1234u);
    EXPECT_EQ(be.submits[1].queue_index, 2u);
    EXPECT_EQ(be.submits[1].stream_size, 0u);
    ASSERT_EQ(be.syncs[0].size(), 2u);
    EXPECT_EQ(be.syncs[0][0].flags,
              static_cast<u32>(DRM_PANTHOR_SYNC_OP_WAIT | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ));
    EXPECT_EQ(be.syncs[0][1].flags,
              static_cast<u32>(DRM_PANTHOR_SYNC_OP_SIGNAL) | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ);
    EXPECT_EQ(be.syncs[0][1].timeline_value, 9u);
    EXPECT_EQ(be.syncs[1][0].handle, 6u);
    EXPECT_TRUE(be.mem.empty());
}

}  // namespace
}  // namespace umd
