// Tests of the 1.9 uAPI additions of drivers/gpu/drm/panthor: DEV_QUERY_MMU_INFO and sparse VM_BIND
// maps (DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE, panthor/panthor_vm_sparse.cpp). The 18 sparse subtests
// of IGT's panthor_vm are replayed as a table; after each one every page of the VA window is read
// back through the mock GPU's own MMU walker and compared with a model: sparse pages translate to
// the file's dummy BO at VA mod 2 MiB, never executable; pages a BO was mapped over translate to
// the BO; everything else faults.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "drm/drm_gem_shmem_helper.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/slab.h"
#include "mock_hw/gpu.h"
#include "mock_hw/lpae_walker.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {
namespace {

using mock_hw::Access;
using mock_hw::WalkResult;

constexpr u64 SZ_4K = 0x1000;
constexpr u64 SZ_8K = 0x2000;
constexpr u64 SZ_16K = 0x4000;
constexpr u64 SZ_24K = 0x6000;
constexpr u64 SZ_256K = 0x40000;
constexpr u64 SZ_1M = 0x100000;
constexpr u64 SZ_2M = 0x200000;
constexpr u64 SZ_3M = 0x300000;
constexpr u64 SZ_4M = 0x400000;
constexpr u64 SZ_6M = 0x600000;
constexpr u64 SZ_8M = 0x800000;
constexpr u64 SZ_16M = 0x1000000;
constexpr u64 SZ_512M = 0x20000000;
// IGT's overflowing size: ALIGN_DOWN(U64_MAX, 2 MiB) - 6 MiB.
constexpr u64 kOverflowSize = (~u64{0} & ~(SZ_2M - 1)) - SZ_6M;

constexpr u32 kSparseFlags =
    DRM_PANTHOR_VM_BIND_OP_TYPE_MAP | DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE | DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC;

class PanthorSparse : public PanthorTest {
protected:
    void TearDown() override {
        release_all();
        PanthorTest::TearDown();
    }
    // Releases every VM activate() returned (before a second file they came from is closed).
    void release_all() {
        for (Held& h : held_)
            release(h);
        held_.clear();
    }

    panthor_file* pfile(drm::drm_file* f = nullptr) { return static_cast<panthor_file*>((f ? f : file)->driver_priv); }

    int sparse_map(u32 vm, u64 va, u64 size, drm::drm_file* f = nullptr) {
        return vm_bind(vm, kSparseFlags, 0, 0, va, size, f);
    }

    // The VM in an address space, as a group would hold it; released at teardown.
    u32 activate(u32 id, drm::drm_file* f = nullptr) {
        panthor_vm* vm = panthor_vm_pool_get_vm(pfile(f)->vms, id);
        EXPECT_NE(vm, nullptr);
        if (!vm)
            return 0;
        EXPECT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
        EXPECT_EQ(panthor_vm_active(vm), 0);
        held_.push_back({vm});
        return static_cast<u32>(panthor_vm_as(vm));
    }

    WalkResult walk(u32 as, u64 va) {
        kshim::SpinGuard g(gpu().lock());
        return mock_hw::lpae_walk(gpu().mmu().config_locked(as), va);
    }
    u64 walk_pa(u32 as, u64 va) {
        const WalkResult w = walk(as, va);
        return w.ok ? w.t.pa_base + (va - w.t.va_base) : ~u64{0};
    }
    bool gpu_read64(u32 as, u64 va, u64* v, Access acc = Access::Read) {
        *v = 0;
        return gpu().mmu().read(as, va, v, sizeof(*v), acc, mock_hw::kSourceTest).ok();
    }
    bool gpu_write64(u32 as, u64 va, u64 v) {
        return gpu().mmu().write(as, va, &v, sizeof(v), mock_hw::kSourceTest).ok();
    }

    // The physical address of byte `offset` of the file's dummy BO (~0 if it has none).
    u64 dummy_pa(u64 offset, drm::drm_file* f = nullptr) {
        panthor_gem_object* bo = pfile(f)->sparse.dummy_bo;
        if (!bo || !bo->base.sgt)
            return ~u64{0};
        const drm::SgTable* sgt = bo->base.sgt;
        for (u32 i = 0; i < sgt->nents; i++) {
            const u64 len = drm::sg_dma_len(&sgt->sgl[i]);
            if (offset < len)
                return drm::sg_dma_address(&sgt->sgl[i]) + offset;
            offset -= len;
        }
        return ~u64{0};
    }

private:
    struct Held {
        panthor_vm* vm;
    };
    void release(Held& h) {
        panthor_vm_idle(h.vm);
        panthor_vm_put(h.vm);
        kshim::pm_runtime_put_autosuspend(dev());
    }
    std::vector<Held> held_;
};

// ---------------------------------------------------------------------------------------------
// The IGT subtests: a sparse map, then one more op, then the whole window checked page by page.

enum class Then { Nothing, Unmap, MapBo };

struct SparseCase {
    const char* name;  // IGT's subtest name, without vm_bind_sparse_ / vm_unbind_sparse_
    u64 va, size;      // the sparse map
    int map_ret;
    Then then;
    u64 op_va, op_size;  // the op after it
    int op_ret;
    u64 window;  // checked from va & ~(16 MiB - 1), this many bytes
};

void PrintTo(const SparseCase& c, std::ostream* os) {
    *os << c.name;
}

// What a page of the window should translate to after the case ran.
enum class Expect { Fault, Dummy, Bo };

Expect expected_at(const SparseCase& c, u64 va) {
    const bool op_ok = c.then != Then::Nothing && c.op_ret == 0;
    const bool in_op = op_ok && va >= c.op_va && va - c.op_va < c.op_size;
    if (in_op && c.then == Then::MapBo)
        return Expect::Bo;
    if (in_op && c.then == Then::Unmap)
        return Expect::Fault;
    if (c.map_ret == 0 && va >= c.va && va - c.va < c.size)
        return Expect::Dummy;
    return Expect::Fault;
}

class PanthorSparseIgt : public PanthorSparse, public ::testing::WithParamInterface<SparseCase> {};

TEST_P(PanthorSparseIgt, ResultAndTranslationOfEveryPage) {
    const SparseCase& c = GetParam();
    const u32 vm = vm_create();
    ASSERT_EQ(sparse_map(vm, c.va, c.size), c.map_ret);

    // The BO a remap case maps: 8 MiB, page i tagged with i (IGT maps one of 8 MiB too).
    u32 bo = 0;
    u8* bo_cpu_addr = nullptr;
    if (c.then == Then::MapBo) {
        bo = bo_create(SZ_8M);
        bo_cpu_addr = static_cast<u8*>(bo_cpu(bo, SZ_8M));
        ASSERT_NE(bo_cpu_addr, nullptr);
        ASSERT_EQ(vm_map(vm, bo, c.op_va, c.op_size), c.op_ret);
    } else if (c.then == Then::Unmap) {
        ASSERT_EQ(vm_unmap(vm, c.op_va, c.op_size), c.op_ret);
    }

    const u32 as = activate(vm);
    ASSERT_GE(as, 1u);
    const u64 base = c.va & ~(SZ_16M - 1);
    for (u64 va = base; va < base + c.window; va += SZ_4K) {
        const WalkResult w = walk(as, va);
        switch (expected_at(c, va)) {
        case Expect::Fault: ASSERT_FALSE(w.ok) << "va 0x" << std::hex << va << " translates"; break;
        case Expect::Dummy:
            ASSERT_TRUE(w.ok) << "va 0x" << std::hex << va;
            ASSERT_EQ(w.t.pa_base + (va - w.t.va_base), dummy_pa(va % SZ_2M)) << "va 0x" << std::hex << va;
            ASSERT_TRUE(w.t.xn) << "sparse va 0x" << std::hex << va << " is executable";
            ASSERT_FALSE(w.t.read_only) << "va 0x" << std::hex << va;
            break;
        case Expect::Bo:
            ASSERT_TRUE(w.ok) << "va 0x" << std::hex << va;
            ASSERT_EQ(w.t.pa_base + (va - w.t.va_base), kshim::virt_to_phys(bo_cpu_addr + (va - c.op_va)))
                << "va 0x" << std::hex << va;
            ASSERT_FALSE(w.t.xn) << "BO va 0x" << std::hex << va;
            break;
        }
    }
}

// IGT-B's 18 sparse subtests (docs/panthor.md, "Sparse mappings"). The window covers everything
// the case touched.
INSTANTIATE_TEST_SUITE_P(
    Igt, PanthorSparseIgt,
    ::testing::Values(
        SparseCase{"vm_bind_sparse", SZ_2M, SZ_16K, 0, Then::Nothing, 0, 0, 0, SZ_16M},
        SparseCase{"partial_unmap_start_size_unaligned", SZ_4M, SZ_6M, 0, Then::Unmap, SZ_4M, SZ_8K, 0, SZ_16M},
        SparseCase{"partial_unmap_start_size_aligned", SZ_4M, SZ_6M, 0, Then::Unmap, SZ_4M, SZ_2M, 0, SZ_16M},
        SparseCase{"partial_unmap_start_aligned_no_hugepage_multiple", SZ_4M, SZ_6M, 0, Then::Unmap, SZ_4M, SZ_256K, 0,
                   SZ_16M},
        SparseCase{"partial_unmap_below_start", SZ_4M, SZ_6M, 0, Then::Unmap, SZ_2M, SZ_6M, 0, SZ_16M},
        SparseCase{"partial_unmap_above_start", SZ_4M, SZ_6M, 0, Then::Unmap, SZ_6M, SZ_2M, 0, SZ_16M},
        SparseCase{"remap", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_6M, SZ_4M, 0, SZ_16M},
        SparseCase{"remap_start_unaligned", SZ_4M, SZ_6M, 0, Then::MapBo, 9 * SZ_1M, SZ_4M, 0, SZ_16M},
        SparseCase{"remap_start_size_unaligned", SZ_4M, SZ_6M, 0, Then::MapBo, 9 * SZ_1M, SZ_1M, 0, SZ_16M},
        SparseCase{"remap_start_size_aligned", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_8M, SZ_4M, 0, SZ_16M},
        SparseCase{"remap_aligned_split_original_va", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_6M, SZ_2M, 0, SZ_16M},
        SparseCase{"remap_start_aligned_size_unaligned", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_6M, SZ_1M, 0, SZ_16M},
        SparseCase{"remap_aligned_intersect_left", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_2M, SZ_4M, 0, SZ_16M},
        SparseCase{"remap_size_unaligned_intersect_left", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_2M, SZ_3M, 0, SZ_16M},
        SparseCase{"remap_start_aligned_intersect_right", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_8M, SZ_2M + SZ_24K, 0,
                   SZ_16M},
        SparseCase{"remap_wrap_around_va", SZ_4M, SZ_6M, 0, Then::MapBo, SZ_2M, SZ_8M, 0, SZ_16M},
        SparseCase{"overflow", SZ_512M, kOverflowSize, -EINVAL, Then::Nothing, 0, 0, 0, SZ_16M},
        SparseCase{"unbind_overflow", SZ_512M, SZ_6M, 0, Then::Unmap, SZ_512M, kOverflowSize, -EINVAL, SZ_16M}),
    [](const ::testing::TestParamInfo<SparseCase>& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------------------------------------
// Huge pages, data, isolation, lifetime.

TEST_F(PanthorSparse, AlignedBlocksOfASparseRangeAre2MiBLeavesOfTheDummy) {
    const u32 vm = vm_create();
    // 1 MiB before a 2 MiB boundary to 1 MiB after the next one.
    ASSERT_EQ(sparse_map(vm, SZ_16M - SZ_1M, SZ_4M), 0);
    ASSERT_EQ(dummy_pa(0) % SZ_2M, 0u);
    const u32 as = activate(vm);
    EXPECT_EQ(walk(as, SZ_16M).t.level, 2);
    EXPECT_EQ(walk(as, SZ_16M).t.pa_base, dummy_pa(0));
    EXPECT_EQ(walk(as, SZ_16M + SZ_2M).t.level, 3);
    EXPECT_EQ(walk(as, SZ_16M - SZ_4K).t.level, 3);
    EXPECT_EQ(walk_pa(as, SZ_16M - SZ_4K), dummy_pa(SZ_2M - SZ_4K));
    EXPECT_EQ(walk_pa(as, SZ_16M + SZ_2M + SZ_4K), dummy_pa(SZ_4K));
}

TEST_F(PanthorSparse, ARemapCuttingABlockKeepsTheCyclicOffsets) {
    const u32 vm = vm_create();
    ASSERT_EQ(sparse_map(vm, SZ_16M, SZ_6M), 0);
    // An unmap inside the second block: the rest of that block comes back as pages.
    ASSERT_EQ(vm_unmap(vm, SZ_16M + SZ_2M + SZ_1M, SZ_4K), 0);
    const u32 as = activate(vm);
    EXPECT_EQ(walk(as, SZ_16M).t.level, 2);
    EXPECT_EQ(walk(as, SZ_16M + SZ_4M).t.level, 2);
    for (u64 off = SZ_2M; off < SZ_4M; off += SZ_4K) {
        const u64 va = SZ_16M + off;
        if (off == SZ_2M + SZ_1M) {
            EXPECT_FALSE(walk(as, va).ok);
            continue;
        }
        ASSERT_EQ(walk(as, va).t.level, 3) << std::hex << va;
        ASSERT_EQ(walk_pa(as, va), dummy_pa(va % SZ_2M)) << std::hex << va;
    }
}

TEST_F(PanthorSparse, GpuWritesLandInTheFilesDummyAndNotInAnotherFiles) {
    drm::drm_file* f2 = nullptr;
    ASSERT_EQ(open_file(&f2), 0);
    const u32 vm1 = vm_create();
    const u32 vm2 = vm_create(0, f2);
    ASSERT_EQ(sparse_map(vm1, SZ_16M, SZ_4M), 0);
    ASSERT_EQ(sparse_map(vm2, SZ_16M, SZ_4M, f2), 0);
    ASSERT_NE(pfile()->sparse.dummy_bo, pfile(f2)->sparse.dummy_bo);

    const u32 as1 = activate(vm1);
    const u32 as2 = activate(vm2, f2);
    ASSERT_TRUE(gpu_write64(as1, SZ_16M + SZ_4K + 8, 0x5EC12E7));
    // In the dummy, at the VA's offset in it; so every repetition of that offset reads it.
    u64 v;
    std::memcpy(&v, kshim::phys_to_virt(dummy_pa(SZ_4K + 8)), sizeof(v));
    EXPECT_EQ(v, 0x5EC12E7u);
    ASSERT_TRUE(gpu_read64(as1, SZ_16M + SZ_2M + SZ_4K + 8, &v));
    EXPECT_EQ(v, 0x5EC12E7u);
    // The other file's sparse range is backed by its own dummy.
    ASSERT_TRUE(gpu_read64(as2, SZ_16M + SZ_4K + 8, &v));
    EXPECT_EQ(v, 0u);
    EXPECT_NE(walk_pa(as2, SZ_16M), walk_pa(as1, SZ_16M));
    // Never executable.
    EXPECT_FALSE(gpu_read64(as1, SZ_16M, &v, Access::Execute));

    release_all();
    drm::drm_release(f2);
}

TEST_F(PanthorSparse, OneDummyPerFileSharedByItsVms) {
    const u32 vm1 = vm_create();
    const u32 vm2 = vm_create();
    EXPECT_EQ(pfile()->sparse.dummy_bo, nullptr);  // created on first use
    ASSERT_EQ(sparse_map(vm1, SZ_16M, SZ_2M), 0);
    panthor_gem_object* dummy = pfile()->sparse.dummy_bo;
    ASSERT_NE(dummy, nullptr);
    EXPECT_EQ(dummy->base.base.size, SZ_2M);
    ASSERT_EQ(sparse_map(vm2, SZ_4M, SZ_8M), 0);
    EXPECT_EQ(pfile()->sparse.dummy_bo, dummy);
    const u32 as2 = activate(vm2);
    EXPECT_EQ(walk_pa(as2, SZ_8M + SZ_4K), dummy_pa(SZ_4K));
}

TEST_F(PanthorSparse, TheDummyIsFreedWithTheFile) {
    const kshim::MemCounters before = kshim::mem_counters();
    drm::drm_file* f2 = nullptr;
    ASSERT_EQ(open_file(&f2), 0);
    const u32 vm = vm_create(0, f2);
    ASSERT_EQ(sparse_map(vm, SZ_16M, SZ_16M, f2), 0);
    // The VM goes first: only the file holds the dummy now.
    vm_destroy(vm, f2);
    ASSERT_NE(pfile(f2)->sparse.dummy_bo, nullptr);
    EXPECT_GE(kshim::mem_counters().pages_live - before.pages_live, static_cast<long>(SZ_2M / SZ_4K));
    drm::drm_release(f2);
    const kshim::MemCounters after = kshim::mem_counters();
    EXPECT_EQ(after.pages_live, before.pages_live) << kshim::mem_counters_diff(before, after);
}

// ---------------------------------------------------------------------------------------------
// MMU_INFO.

class PanthorMmuInfo : public PanthorSparse {
protected:
    int query(u32 size, void* buf, u32* size_out = nullptr) {
        drm_panthor_dev_query args{};
        args.type = DRM_PANTHOR_DEV_QUERY_MMU_INFO;
        args.size = size;
        args.pointer = reinterpret_cast<u64>(buf);
        std::unique_ptr<drm::UserRange> r;
        if (buf)
            r = std::make_unique<drm::UserRange>(buf, size);
        const int ret = ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &args);
        if (size_out)
            *size_out = args.size;
        return ret;
    }
};

TEST_F(PanthorMmuInfo, ReportsThe4KAnd2MPageSizes) {
    u32 size = 0;
    ASSERT_EQ(query(0, nullptr, &size), 0);
    EXPECT_EQ(size, sizeof(drm_panthor_mmu_info));
    drm_panthor_mmu_info info{};
    ASSERT_EQ(query(sizeof(info), &info), 0);
    EXPECT_EQ(info.page_size_bitmap, 0x201000u);
    EXPECT_EQ(info.page_size_bitmap, ptdev->mmu_info.page_size_bitmap);
}

TEST_F(PanthorMmuInfo, SizeRules) {
    u8 buf[16];
    std::memset(buf, 0xAA, sizeof(buf));
    EXPECT_EQ(query(7, buf), -EINVAL);
    EXPECT_EQ(query(0, buf), -EINVAL);
    EXPECT_EQ(buf[0], 0xAA);
    // A bigger user object gets its tail zeroed.
    ASSERT_EQ(query(sizeof(buf), buf), 0);
    u64 v;
    std::memcpy(&v, buf, sizeof(v));
    EXPECT_EQ(v, 0x201000u);
    for (size_t i = 8; i < sizeof(buf); i++)
        EXPECT_EQ(buf[i], 0) << i;
}

}  // namespace
}  // namespace panthor::testing
