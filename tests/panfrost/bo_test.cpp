// panfrost's BOs, per-file VMs and MMU on the mock Mali-G52: CREATE_BO/MMAP_BO/GET_BO_OFFSET/
// WAIT_BO and their errnos, VA placement (window, alignment, the exec colour rule), AS binding
// checked through the mock's registers and its MMU, the LRU stealing an AS, growable heaps served
// on fault and the unhandled fault that disables the AS.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "drm/drm_mmap.h"
#include "hw/jm/regs/mmu_regs.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/log.h"
#include "mock_hw/mmu.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_mmu.h"
#include "tests/dma_fence/mock_fence.h"
#include "tests/panfrost/panfrost_test.h"

namespace panfrost::testing {
namespace {

using kshim::s64;
using kshim::u8;

constexpr u64 MiB = u64{1} << 20;
constexpr u64 kVaStart = 32 * MiB;
constexpr u64 kVaEnd = u64{4} << 30;

class PanfrostBoTest : public PanfrostTest {
protected:
    void TearDown() override {
        for (drm::drm_file* f : extra_files)
            drm::drm_release(f);
        extra_files.clear();
        PanfrostTest::TearDown();
    }

    int create_bo(u32 size, u32 flags, u32* handle, u64* offset = nullptr, drm::drm_file* f = nullptr, u32 pad = 0) {
        drm_panfrost_create_bo args{};
        args.size = size;
        args.flags = flags;
        args.pad = pad;
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(f ? f : file, DRM_IOCTL_PANFROST_CREATE_BO, &args);
        if (handle)
            *handle = args.handle;
        if (offset)
            *offset = args.offset;
        return ret;
    }
    int mmap_bo(u32 handle, u64* offset, u32 flags = 0) {
        drm_panfrost_mmap_bo args{};
        args.handle = handle;
        args.flags = flags;
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(file, DRM_IOCTL_PANFROST_MMAP_BO, &args);
        if (offset)
            *offset = args.offset;
        return ret;
    }
    int get_bo_offset(u32 handle, u64* offset) {
        drm_panfrost_get_bo_offset args{};
        args.handle = handle;
        drm::UserRange r(&args, sizeof(args));
        const int ret = drm::ioctl(file, DRM_IOCTL_PANFROST_GET_BO_OFFSET, &args);
        if (offset)
            *offset = args.offset;
        return ret;
    }
    int wait_bo(u32 handle, s64 timeout_ns, u32 pad = 0) {
        drm_panfrost_wait_bo args{};
        args.handle = handle;
        args.pad = pad;
        args.timeout_ns = timeout_ns;
        drm::UserRange r(&args, sizeof(args));
        return drm::ioctl(file, DRM_IOCTL_PANFROST_WAIT_BO, &args);
    }

    panfrost_mmu* vm(drm::drm_file* f = nullptr) {
        return static_cast<panfrost_file_priv*>((f ? f : file)->driver_priv)->mmu;
    }
    panfrost_gem_object* bo_of(u32 handle) {
        drm::drm_gem_object* obj = file->gem.lookup(handle);
        if (!obj)
            return nullptr;
        drm::drm_gem_object_put(obj);  // the handle keeps it alive
        return to_panfrost_bo(obj);
    }
    drm::drm_file* open_extra() {
        drm::drm_file* f = nullptr;
        EXPECT_EQ(machine_->open_file(&f), 0);
        extra_files.push_back(f);
        return f;
    }

    // Through a runtime suspend and resume: the reset at resume unmasks the MMU interrupts (probe
    // leaves them as the GPU's reset did, as upstream). The caller holds the device awake after.
    void power_cycle() {
        ASSERT_TRUE(wait_autosuspend());
        ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
        held_pm = true;
    }
    void release_pm() {
        if (held_pm)
            kshim::pm_runtime_put_autosuspend(dev());
        held_pm = false;
    }

    // AS commands take time on the mock (AS_STATUS.AS_ACTIVE); an UPDATE takes effect at its end.
    // The driver waits before its next command only, as upstream: a test waits itself.
    bool wait_as_idle(u32 as) {
        return run_until([&] { return !(reg(AS_STATUS(as)) & AS_STATUS_AS_ACTIVE); }, kshim::NSEC_PER_MSEC);
    }
    mock_hw::MemResult gpu_read(u32 as, u64 va, void* dst, size_t len) {
        EXPECT_TRUE(wait_as_idle(as));
        return gpu().mmu().read(as, va, dst, len, mock_hw::Access::Read, mock_hw::kSourceTest);
    }

    std::vector<drm::drm_file*> extra_files;
    bool held_pm = false;
};

// ---- CREATE_BO / MMAP_BO / GET_BO_OFFSET ----

TEST_F(PanfrostBoTest, CreateMmapAndOffsetRoundTrip) {
    u32 handle = 0;
    u64 va = 0;
    ASSERT_EQ(create_bo(4096, 0, &handle, &va), 0);
    EXPECT_NE(handle, 0u);
    EXPECT_GE(va, kVaStart);
    EXPECT_LT(va, kVaEnd);
    EXPECT_EQ(va % 4096, 0u);

    u64 off = 0;
    ASSERT_EQ(get_bo_offset(handle, &off), 0);
    EXPECT_EQ(off, va) << "GET_BO_OFFSET gives what CREATE_BO returned";

    u64 fake = 0;
    ASSERT_EQ(mmap_bo(handle, &fake), 0);
    EXPECT_NE(fake, 0u);
    drm::VmArea* vma = nullptr;
    ASSERT_EQ(drm::drm_mmap(file, fake, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    ASSERT_NE(vma->addr, nullptr);
    std::memset(vma->addr, 0x5A, 4096);
    // The mapping is the BO's own pages.
    panfrost_gem_object* bo = bo_of(handle);
    ASSERT_NE(bo, nullptr);
    EXPECT_EQ(vma->addr, kshim::page_address(bo->base.pages[0]));
    drm::drm_munmap(vma);

    // A second BO does not overlap the first.
    u32 h2 = 0;
    u64 va2 = 0;
    ASSERT_EQ(create_bo(8192, PANFROST_BO_NOEXEC, &h2, &va2), 0);
    EXPECT_TRUE(va2 + 8192 <= va || va2 >= va + 4096);
}

TEST_F(PanfrostBoTest, VaAlignmentFollowsUpstream) {
    u32 h = 0;
    u64 va = 0;
    // Data BOs of 2 MiB or more: 2 MiB aligned (block mappings).
    ASSERT_EQ(create_bo(4096, PANFROST_BO_NOEXEC, &h, &va), 0);  // knocks the next one off 32 MiB
    ASSERT_EQ(create_bo(3 * MiB, PANFROST_BO_NOEXEC, &h, &va), 0);
    EXPECT_EQ(va % (2 * MiB), 0u) << std::hex << va;
    // Executable BOs: aligned to their own size (never across a 16 MiB boundary).
    ASSERT_EQ(create_bo(64 * 1024, 0, &h, &va), 0);
    EXPECT_EQ(va % (64 * 1024), 0u) << std::hex << va;
    ASSERT_EQ(create_bo(12 * 4096, 0, &h, &va), 0);
    EXPECT_EQ(va % (12 * 4096), 0u) << std::hex << va;
    EXPECT_EQ(va / (16 * MiB), (va + 12 * 4096 - 1) / (16 * MiB));
}

TEST_F(PanfrostBoTest, ExecColouringKeepsExecutableBosOutOfTheLast16MiB) {
    // A heap BO takes VA without pages: fill the window but for its last 16 MiB.
    const u64 fill = kVaEnd - kVaStart - 16 * MiB;
    u32 heap = 0;
    u64 heap_va = 0;
    ASSERT_EQ(create_bo(static_cast<u32>(fill), PANFROST_BO_NOEXEC | PANFROST_BO_HEAP, &heap, &heap_va), 0);
    EXPECT_EQ(heap_va, kVaStart);

    // An executable BO may not start within 16 MiB below a 4 GiB boundary: no room left.
    u32 h = 0;
    EXPECT_EQ(create_bo(4096, 0, &h), -ENOSPC);
    // A NOEXEC one fits there.
    u64 va = 0;
    ASSERT_EQ(create_bo(4096, PANFROST_BO_NOEXEC, &h, &va), 0);
    EXPECT_EQ(va, kVaEnd - 16 * MiB);
}

TEST_F(PanfrostBoTest, ErrnosOfTheBoIoctls) {
    u32 h = 0;
    EXPECT_EQ(create_bo(0, 0, &h), -EINVAL) << "size 0";
    EXPECT_EQ(create_bo(4096, 0, &h, nullptr, nullptr, 1), -EINVAL) << "pad";
    EXPECT_EQ(create_bo(4096, 0x8, &h), -EINVAL) << "unknown flag";
    EXPECT_EQ(create_bo(4096, PANFROST_BO_HEAP, &h), -EINVAL) << "HEAP without NOEXEC";
    EXPECT_EQ(create_bo(4096, PANFROST_BO_HEAP | PANFROST_BO_NOEXEC | PANFROST_BO_WB_MMAP, &h), -EINVAL)
        << "HEAP with WB_MMAP";
    EXPECT_EQ(file->gem.count(), 0u) << "no handle left behind by a refused CREATE_BO";

    u32 bo = 0, heap = 0;
    ASSERT_EQ(create_bo(4096, PANFROST_BO_NOEXEC | PANFROST_BO_WB_MMAP, &bo), 0);
    ASSERT_EQ(create_bo(4096, PANFROST_BO_NOEXEC | PANFROST_BO_HEAP, &heap), 0);
    EXPECT_EQ(bo_of(heap)->base.base.size, 2 * MiB) << "heaps are rounded up to 2 MiB";

    u64 off = 0;
    EXPECT_EQ(mmap_bo(bo, &off, 1), -EINVAL) << "MMAP_BO flags";
    EXPECT_EQ(mmap_bo(999, &off), -ENOENT);
    EXPECT_EQ(mmap_bo(heap, &off), -EINVAL) << "heap BOs cannot be mmapped";
    EXPECT_EQ(mmap_bo(bo, &off), 0);

    EXPECT_EQ(get_bo_offset(999, &off), -ENOENT);

    EXPECT_EQ(wait_bo(bo, 0, 1), -EINVAL) << "WAIT_BO pad";
    EXPECT_EQ(wait_bo(999, 0), -ENOENT);
}

// ---- WAIT_BO ----

TEST_F(PanfrostBoTest, WaitBoIdleIsPositiveAndBusyFollowsTheDeadline) {
    u32 h = 0;
    ASSERT_EQ(create_bo(4096, 0, &h), 0);
    EXPECT_GT(wait_bo(h, 0), 0) << "an idle BO: positive, even for a poll";
    EXPECT_GT(wait_bo(h, kshim::ktime_get() + kshim::NSEC_PER_SEC), 0);

    // Make it busy: an unsignalled fence in its reservation.
    drm::drm_gem_object* obj = &bo_of(h)->base.base;
    kshim::dma_fence* fence = dma_fence_test::mock_fence(kshim::dma_fence_context_alloc(1), 1);
    ASSERT_EQ(kshim::dma_resv_lock(obj->resv, nullptr), 0);
    ASSERT_EQ(kshim::dma_resv_reserve_fences(obj->resv, 1), 0);
    kshim::dma_resv_add_fence(obj->resv, fence, kshim::DMA_RESV_USAGE_WRITE);
    kshim::dma_resv_unlock(obj->resv);

    EXPECT_EQ(wait_bo(h, 0), -EBUSY) << "a poll of a busy BO";
    EXPECT_EQ(wait_bo(h, kshim::ktime_get() - 1), -EBUSY) << "a deadline already past is a poll";
    const kshim::ktime_t t0 = kshim::ktime_get();
    EXPECT_EQ(wait_bo(h, t0 + 10 * kshim::NSEC_PER_MSEC), -ETIMEDOUT);
    EXPECT_GE(kshim::ktime_get(), t0 + 10 * kshim::NSEC_PER_MSEC) << "waited until the deadline";

    kshim::dma_fence_signal(fence);
    kshim::dma_fence_put(fence);
    EXPECT_GT(wait_bo(h, kshim::ktime_get() + kshim::NSEC_PER_SEC), 0);
}

// ---- AS binding ----

TEST_F(PanfrostBoTest, AsGetProgramsTheAsAndTheGpuSeesTheBo) {
    power_cycle();
    EXPECT_EQ(reg(MMU_INT_MASK), 0xFFFFFFFFu) << "the reset unmasked every MMU interrupt";

    u32 h = 0;
    u64 va = 0;
    ASSERT_EQ(create_bo(3 * 4096, PANFROST_BO_NOEXEC, &h, &va), 0);
    u64 fake = 0;
    ASSERT_EQ(mmap_bo(h, &fake), 0);
    drm::VmArea* vma = nullptr;
    ASSERT_EQ(drm::drm_mmap(file, fake, 3 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    auto* cpu = static_cast<u8*>(vma->addr);
    for (u32 i = 0; i < 3 * 4096; i++)
        cpu[i] = static_cast<u8>(i * 7 + 1);

    panfrost_mmu* mmu = vm();
    EXPECT_EQ(mmu->as, -1) << "no AS before something runs";
    const u32 as = panfrost_mmu_as_get(pfdev, mmu);
    EXPECT_EQ(as, 0u);
    EXPECT_EQ(mmu->as, 0);
    EXPECT_EQ(reg64(AS_TRANSTAB_LO(as)), mmu->pgtbl_cfg.arm_mali_lpae_cfg.transtab);
    EXPECT_EQ(reg64(AS_TRANSTAB_LO(as)) & AS_TRANSTAB_LPAE_ADRMODE_MASK, AS_TRANSTAB_LPAE_ADRMODE_TABLE);
    EXPECT_EQ(reg64(AS_MEMATTR_LO(as)), mmu->pgtbl_cfg.arm_mali_lpae_cfg.memattr);
    EXPECT_EQ(reg64(AS_TRANSCFG_LO(as)), AS_TRANSCFG_ADRMODE_LEGACY);

    // Read through the GPU's MMU what the CPU wrote.
    std::vector<u8> got(3 * 4096);
    ASSERT_TRUE(gpu_read(as, va, got.data(), got.size()).ok());
    EXPECT_EQ(std::memcmp(got.data(), cpu, got.size()), 0);
    drm::drm_munmap(vma);

    // A second get of a bound VM counts a user and keeps its AS.
    EXPECT_EQ(panfrost_mmu_as_get(pfdev, mmu), as);
    EXPECT_EQ(mmu->as_count.load(), 2);
    panfrost_mmu_as_put(pfdev, mmu);
    panfrost_mmu_as_put(pfdev, mmu);
    EXPECT_EQ(mmu->as_count.load(), 0);

    // Closing the file frees the VM, which disables its AS.
    drm::drm_release(file);
    file = nullptr;
    EXPECT_EQ(reg64(AS_TRANSTAB_LO(as)), 0u);
    EXPECT_EQ(reg(AS_TRANSCFG_LO(as)), AS_TRANSCFG_ADRMODE_UNMAPPED);
    EXPECT_EQ(pfdev->as_alloc_mask, 0u);
    release_pm();
}

class PanfrostTwoAsTest : public PanfrostBoTest {
protected:
    mock_jm::JmConfig jm_config() const override {
        mock_jm::JmConfig c;
        c.gpu.id.as_present = 0x3;
        return c;
    }
};

TEST_F(PanfrostTwoAsTest, TheLruStealsTheAsOfAnIdleVm) {
    power_cycle();
    ASSERT_EQ(pfdev->features.as_present, 0x3u);
    drm::drm_file* b = open_extra();
    drm::drm_file* c = open_extra();

    const u32 as_a = panfrost_mmu_as_get(pfdev, vm());
    const u32 as_b = panfrost_mmu_as_get(pfdev, vm(b));
    EXPECT_EQ(as_a, 0u);
    EXPECT_EQ(as_b, 1u);
    // Both go idle, A first (B was used more recently): C takes A's AS, the least recently used.
    panfrost_mmu_as_put(pfdev, vm());
    panfrost_mmu_as_put(pfdev, vm(b));
    EXPECT_EQ(panfrost_mmu_as_get(pfdev, vm(b)), as_b) << "a bound VM keeps its AS";
    panfrost_mmu_as_put(pfdev, vm(b));
    const u32 as_c = panfrost_mmu_as_get(pfdev, vm(c));
    EXPECT_EQ(as_c, as_a);
    EXPECT_EQ(vm()->as, -1) << "A lost its AS";
    EXPECT_EQ(vm(b)->as, 1);
    EXPECT_EQ(reg64(AS_TRANSTAB_LO(as_c)), vm(c)->cfg.transtab) << "the AS now walks C's tables";

    // C stays busy: A comes back on B's AS, the only idle one.
    EXPECT_EQ(panfrost_mmu_as_get(pfdev, vm()), as_b);
    EXPECT_EQ(vm(b)->as, -1);
    EXPECT_EQ(reg64(AS_TRANSTAB_LO(as_b)), vm()->cfg.transtab);

    panfrost_mmu_as_put(pfdev, vm());
    panfrost_mmu_as_put(pfdev, vm(c));
    release_pm();
}

// ---- faults ----

TEST_F(PanfrostBoTest, HeapFaultMapsTwoMiBAndTheAccessRetries) {
    power_cycle();
    u32 h = 0;
    u64 va = 0;
    ASSERT_EQ(create_bo(8 * MiB, PANFROST_BO_NOEXEC | PANFROST_BO_HEAP, &h, &va), 0);
    panfrost_gem_object* bo = bo_of(h);
    EXPECT_EQ(bo->heap_rss_size, 0u) << "a heap has no pages until the GPU touches it";

    const u32 as = panfrost_mmu_as_get(pfdev, vm());
    const u64 target = va + 2 * MiB + 0x1230;
    u32 word = 0xFFFFFFFF;
    const mock_hw::MemResult first = gpu_read(as, target, &word, sizeof(word));
    EXPECT_EQ(first.status, mock_hw::MemResult::Status::Fault) << "unmapped heap VA";

    // The driver's IRQ thread maps the chunk, flushes (LOCK + FLUSH_PT) and unmasks again.
    ASSERT_TRUE(run_until([&] { return bo->heap_rss_size == 2 * MiB && reg(MMU_INT_MASK) == 0xFFFFFFFFu; },
                          kshim::NSEC_PER_MSEC));
    {
        kshim::SpinGuard g(gpu().lock());
        EXPECT_FALSE(gpu().mmu().stalled_locked(as)) << "the flush lifted the stall";
    }
    const mock_hw::MemResult second = gpu_read(as, target, &word, sizeof(word));
    EXPECT_TRUE(second.ok());
    EXPECT_EQ(word, 0u) << "fresh heap memory is zeroed";
    EXPECT_EQ(reg64(AS_TRANSTAB_LO(as)), vm()->cfg.transtab) << "the AS stays enabled";
    EXPECT_EQ(reg(MMU_INT_MASK), 0xFFFFFFFFu);
    EXPECT_EQ(reg(MMU_INT_RAWSTAT), 0u);

    // Only that chunk: the next one faults again, and is served as well.
    EXPECT_EQ(gpu_read(as, va + 4 * MiB, &word, sizeof(word)).status, mock_hw::MemResult::Status::Fault);
    ASSERT_TRUE(run_until([&] { return bo->heap_rss_size == 4 * MiB && reg(MMU_INT_MASK) == 0xFFFFFFFFu; },
                          kshim::NSEC_PER_MSEC));
    EXPECT_TRUE(gpu_read(as, va + 4 * MiB, &word, sizeof(word)).ok());

    panfrost_mmu_as_put(pfdev, vm());
    release_pm();
}

TEST_F(PanfrostBoTest, FaultOutsideAnyBoDisablesTheAs) {
    power_cycle();
    u32 h = 0;
    ASSERT_EQ(create_bo(4096, 0, &h), 0);
    const u32 as = panfrost_mmu_as_get(pfdev, vm());
    ASSERT_NE(reg64(AS_TRANSTAB_LO(as)), 0u);

    u32 word = 0;
    // Below the VA window: no BO can cover it.
    EXPECT_EQ(gpu_read(as, 16 * MiB, &word, sizeof(word)).status, mock_hw::MemResult::Status::Fault);
    ASSERT_TRUE(run_until([&] { return reg64(AS_TRANSTAB_LO(as)) == 0; }, kshim::NSEC_PER_MSEC));
    EXPECT_EQ(reg(AS_TRANSCFG_LO(as)), AS_TRANSCFG_ADRMODE_UNMAPPED);
    EXPECT_TRUE(kshim::log_contains("Unhandled Page fault in AS0 at VA 0x0000000001000000"));
    EXPECT_TRUE(kshim::log_contains("TRANSLATION_FAULT"));
    EXPECT_EQ(pfdev->as_faulty_mask, BIT(as) | BIT(16 + as));
    EXPECT_EQ(reg(MMU_INT_MASK), ~(BIT(as) | BIT(16 + as))) << "the faulty AS stays masked";
    // The disabled AS translates nothing.
    EXPECT_FALSE(gpu_read(as, 16 * MiB, &word, sizeof(word)).ok());

    // The next user of the VM re-enables it.
    EXPECT_EQ(panfrost_mmu_as_get(pfdev, vm()), as);
    EXPECT_EQ(reg64(AS_TRANSTAB_LO(as)), vm()->cfg.transtab);
    EXPECT_EQ(pfdev->as_faulty_mask, 0u);
    // As upstream, the mask is written from the faulty set before the AS leaves it: the AS's
    // interrupts come back with the next run of the IRQ thread (or a reset).
    EXPECT_EQ(reg(MMU_INT_MASK), ~(BIT(as) | BIT(16 + as)));

    panfrost_mmu_as_put(pfdev, vm());
    panfrost_mmu_as_put(pfdev, vm());
    release_pm();
}

TEST_F(PanfrostBoTest, ClosingTheFileReleasesMappingsAndBos) {
    u32 h = 0, heap = 0;
    ASSERT_EQ(create_bo(4096, 0, &h), 0);
    ASSERT_EQ(create_bo(4 * MiB, PANFROST_BO_NOEXEC | PANFROST_BO_HEAP, &heap), 0);
    drm::drm_gem_object* obj = file->gem.lookup(h);
    ASSERT_NE(obj, nullptr);
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    EXPECT_FALSE(list_empty(&bo->mappings.list));
    // A second file's handle maps the same BO into its own VM.
    drm::drm_file* other = open_extra();
    u32 other_handle = 0;
    ASSERT_EQ(other->gem.handle_create(obj, &other_handle), 0);
    EXPECT_NE(bo->mappings.list.next->next, &bo->mappings.list) << "two mappings";

    drm::drm_release(file);
    file = nullptr;
    EXPECT_EQ(bo->mappings.list.next->next, &bo->mappings.list) << "one mapping left: the other file's";
    drm::drm_gem_object_put(obj);
    // The rest (the other file, its handle, the VMs) goes at TearDown; the leak checker sees it.
}

}  // namespace
}  // namespace panfrost::testing
