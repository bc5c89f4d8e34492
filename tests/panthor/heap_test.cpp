// Tests of drivers/gpu/drm/panthor/panthor_heap.c and the TILER_HEAP_CREATE/DESTROY ioctls of
// panthor_drv.c: what a client gets back, the chunk list as the GPU reads it (through the mock
// MMU's own walker, never the driver's tables), every errno rule of docs/hw/csf/uapi.md, and the
// grow / return-chunk API the scheduler's tiler-OOM handling calls, with allocation failures.
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "drm/drm_file.h"
#include "kernel_shim/err.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/workqueue.h"
#include "mock_hw/gpu.h"
#include "mock_hw/lpae_walker.h"
#include "panthor/panthor_heap.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {
namespace {

constexpr u32 SZ_4K = 4096;
constexpr u32 SZ_128K = 128u << 10;
constexpr u32 SZ_256K = 256u << 10;
constexpr u32 SZ_2M = 2u << 20;
constexpr u32 SZ_8M = 8u << 20;
constexpr u32 kMaxHeaps = 128;
// The contexts BO on G610 (64-byte L2 lines): 128 contexts of 64 bytes.
constexpr size_t kCtxBoSize = 8192;
constexpr u64 kVaMask = ~u64{0xFFF};

// A chunk pointer as the firmware reads it.
u64 chunk_ptr(u64 va, u32 chunk_size) {
    return (va & kVaMask) | (chunk_size >> 12);
}

// The first 64 bytes of a chunk as the GPU sees them.
struct ChunkHeader {
    u64 next = ~u64{0};
    u32 unknown[14] = {};
    bool mbz_clear() const {
        for (u32 w : unknown)
            if (w)
                return false;
        return true;
    }
};
static_assert(sizeof(ChunkHeader) == 64);

class PanthorHeap : public PanthorTest {
public:
    using PanthorTest::file;
    using PanthorTest::gpu;
    using PanthorTest::ioctl;
    using PanthorTest::open_file;
    using PanthorTest::ptdev;
    using PanthorTest::vm_destroy;

    struct Vm {
        u32 id = 0;
        u64 kernel_start = 0;  // the kernel auto-VA range is [kernel_start, 2^va_bits)
    };

    void TearDown() override {
        for (panthor_vm* vm : active_) {
            panthor_vm_idle(vm);
            panthor_vm_put(vm);
            kshim::pm_runtime_put_autosuspend(dev());
        }
        active_.clear();
        for (panthor_heap_pool* pool : pools_)
            panthor_heap_pool_put(pool);
        pools_.clear();
        for (panthor_vm* vm : vms_)
            panthor_vm_put(vm);
        vms_.clear();
        PanthorTest::TearDown();
    }

    panthor_file* pfile(drm::drm_file* f = nullptr) { return static_cast<panthor_file*>((f ? f : file)->driver_priv); }
    u64 va_end() const { return u64{1} << GPU_MMU_FEATURES_VA_BITS(ptdev->gpu_info.mmu_features); }

    Vm make_vm(drm::drm_file* f = nullptr) {
        drm_panthor_vm_create args{};
        EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_CREATE, &args, f), 0);
        return {args.id, args.user_va_range};
    }

    int heap_create_ret(u32 vm_id, u32 initial, u32 chunk_size, u32 max_chunks, u32 target_in_flight,
                        drm_panthor_tiler_heap_create* out = nullptr, drm::drm_file* f = nullptr) {
        drm_panthor_tiler_heap_create args{};
        args.vm_id = vm_id;
        args.initial_chunk_count = initial;
        args.chunk_size = chunk_size;
        args.max_chunks = max_chunks;
        args.target_in_flight = target_in_flight;
        const int ret = ioctl(DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE, &args, f);
        if (out)
            *out = args;
        return ret;
    }
    // A heap the test expects to be created.
    drm_panthor_tiler_heap_create heap_create(u32 vm_id, u32 initial = 2, u32 chunk_size = SZ_128K, u32 max_chunks = 8,
                                              u32 target_in_flight = 4, drm::drm_file* f = nullptr) {
        drm_panthor_tiler_heap_create args{};
        EXPECT_EQ(heap_create_ret(vm_id, initial, chunk_size, max_chunks, target_in_flight, &args, f), 0);
        return args;
    }
    int heap_destroy(u32 handle, u32 pad = 0, drm::drm_file* f = nullptr) {
        drm_panthor_tiler_heap_destroy args{handle, pad};
        return ioctl(DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY, &args, f);
    }

    // A VM reference held until teardown.
    panthor_vm* vm_ref(u32 id) {
        panthor_vm* vm = panthor_vm_pool_get_vm(pfile()->vms, id);
        EXPECT_NE(vm, nullptr) << "no VM " << id;
        if (vm)
            vms_.push_back(vm);
        return vm;
    }
    // The VM's heap pool (a reference held until teardown), as the scheduler gets it.
    panthor_heap_pool* pool_of(u32 vm_id) {
        panthor_vm* vm = vm_ref(vm_id);
        if (!vm)
            return nullptr;
        panthor_heap_pool* pool = panthor_vm_get_heap_pool(vm, false);
        if (kshim::IS_ERR(pool)) {
            ADD_FAILURE() << "VM " << vm_id << " has no heap pool: " << kshim::PTR_ERR(pool);
            return nullptr;
        }
        pools_.push_back(pool);
        return pool;
    }

    // The VM on an address space with the device powered, so the GPU can read it; released at
    // teardown.
    panthor_vm* activate(u32 vm_id) {
        panthor_vm* vm = panthor_vm_pool_get_vm(pfile()->vms, vm_id);
        if (!vm) {
            ADD_FAILURE() << "no VM " << vm_id;
            return nullptr;
        }
        EXPECT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
        EXPECT_EQ(panthor_vm_active(vm), 0);
        EXPECT_GE(panthor_vm_as(vm), 0);
        active_.push_back(vm);
        return vm;
    }
    static u32 as_of(panthor_vm* vm) { return static_cast<u32>(panthor_vm_as(vm)); }

    bool gpu_read(panthor_vm* vm, u64 va, void* dst, size_t len) {
        return gpu().mmu().read(as_of(vm), va, dst, len, mock_hw::Access::Read, mock_hw::kSourceTest).ok();
    }
    bool gpu_write(panthor_vm* vm, u64 va, const void* src, size_t len) {
        return gpu().mmu().write(as_of(vm), va, src, len, mock_hw::kSourceTest).ok();
    }
    // The page-table walk of `va` in the VM's AS (no access: nothing faults).
    mock_hw::WalkResult walk(panthor_vm* vm, u64 va) {
        mock_hw::AsConfig cfg;
        {
            kshim::SpinGuard g(gpu().lock());
            cfg = gpu().mmu().config_locked(as_of(vm));
        }
        return mock_hw::lpae_walk(cfg, va);
    }

    // The chunk list from `first` as the firmware follows it: every chunk's VA and header.
    struct Chunk {
        u64 va;
        ChunkHeader hdr;
    };
    std::vector<Chunk> chunk_list(panthor_vm* vm, u64 first) {
        std::vector<Chunk> chunks;
        u64 va = first & kVaMask;
        while (va && chunks.size() <= 4096) {
            Chunk c{va, {}};
            if (!gpu_read(vm, va, &c.hdr, sizeof(c.hdr))) {
                ADD_FAILURE() << "the GPU cannot read chunk header at 0x" << std::hex << va;
                break;
            }
            chunks.push_back(c);
            va = c.hdr.next & kVaMask;
        }
        return chunks;
    }

private:
    std::vector<panthor_vm*> active_;
    std::vector<panthor_heap_pool*> pools_;
    std::vector<panthor_vm*> vms_;
};

// ---- TILER_HEAP_CREATE: what the client gets, what the GPU sees ----

TEST_F(PanthorHeap, CreateReturnsHandleOfVmAndHeapIdAndVasInKernelRange) {
    const Vm a = make_vm();
    const Vm b = make_vm();
    ASSERT_EQ(b.id, 2u);

    const auto h0 = heap_create(b.id);
    const auto h1 = heap_create(b.id);
    const auto ha = heap_create(a.id);
    EXPECT_EQ(h0.handle, (b.id << 16) | 0u);
    EXPECT_EQ(h1.handle, (b.id << 16) | 1u);
    EXPECT_EQ(ha.handle, (a.id << 16) | 0u);  // heap ids are per VM

    for (const auto& h : {h0, h1}) {
        EXPECT_GE(h.tiler_heap_ctx_gpu_va, b.kernel_start);
        EXPECT_LT(h.tiler_heap_ctx_gpu_va, va_end());
        EXPECT_GE(h.first_heap_chunk_gpu_va, b.kernel_start);
        EXPECT_LT(h.first_heap_chunk_gpu_va, va_end());
        EXPECT_EQ(h.first_heap_chunk_gpu_va % SZ_4K, 0u);
    }
    // Contexts are one L2 line apart (64 bytes on G610) in one BO.
    EXPECT_EQ(h1.tiler_heap_ctx_gpu_va - h0.tiler_heap_ctx_gpu_va, 64u);
    EXPECT_EQ(h0.tiler_heap_ctx_gpu_va % 64, 0u);

    // A freed id is handed out again, lowest first.
    EXPECT_EQ(heap_destroy(h0.handle), 0);
    const auto again = heap_create(b.id);
    EXPECT_EQ(again.handle, h0.handle);
    EXPECT_EQ(again.tiler_heap_ctx_gpu_va, h0.tiler_heap_ctx_gpu_va);
}

class PanthorHeapChunkSize : public PanthorHeap, public ::testing::WithParamInterface<u32> {};

TEST_P(PanthorHeapChunkSize, GpuFollowsInitialChunksFromFirstChunk) {
    const u32 chunk_size = GetParam();
    constexpr u32 kInitial = 3;
    const Vm v = make_vm();
    const auto h = heap_create(v.id, kInitial, chunk_size, 10, 4);
    panthor_vm* vm = activate(v.id);
    ASSERT_NE(vm, nullptr);

    const std::vector<Chunk> chunks = chunk_list(vm, h.first_heap_chunk_gpu_va);
    ASSERT_EQ(chunks.size(), kInitial);
    std::set<u64> vas;
    for (size_t i = 0; i < chunks.size(); i++) {
        const Chunk& c = chunks[i];
        SCOPED_TRACE("chunk " + std::to_string(i));
        vas.insert(c.va);
        EXPECT_GE(c.va, v.kernel_start);
        EXPECT_LE(c.va + chunk_size, va_end());
        EXPECT_TRUE(c.hdr.mbz_clear());
        if (i + 1 < chunks.size())
            EXPECT_EQ(c.hdr.next, chunk_ptr(chunks[i + 1].va, chunk_size));
        else
            EXPECT_EQ(c.hdr.next, 0u);
        // The whole chunk is mapped for the tiler, not executable.
        const auto first = walk(vm, c.va);
        const auto last = walk(vm, c.va + chunk_size - 1);
        EXPECT_TRUE(first.ok && last.ok);
        EXPECT_TRUE(first.t.xn);
        EXPECT_FALSE(first.t.read_only);
    }
    EXPECT_EQ(vas.size(), kInitial);
    // Nothing past the last chunk's end belongs to it (the chunks do not overlap).
    for (const Chunk& c : chunks) {
        for (const Chunk& d : chunks) {
            if (c.va < d.va) {
                EXPECT_LE(c.va + chunk_size, d.va);
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, PanthorHeapChunkSize, ::testing::Values(SZ_128K, SZ_256K, SZ_2M, SZ_8M),
                         [](const ::testing::TestParamInfo<u32>& info) {
                             return std::to_string(info.param >> 10) + "KiB";
                         });

TEST_F(PanthorHeap, ContextIsZeroedWhenHandedOut) {
    const Vm v = make_vm();
    const auto h = heap_create(v.id);
    panthor_vm* vm = activate(v.id);
    ASSERT_NE(vm, nullptr);

    u8 ctx[64];
    std::memset(ctx, 0xA5, sizeof(ctx));
    ASSERT_TRUE(gpu_read(vm, h.tiler_heap_ctx_gpu_va, ctx, sizeof(ctx)));
    for (u8 b : ctx)
        EXPECT_EQ(b, 0);

    // The firmware scribbles on the context; the next heap on that id starts from zero again.
    std::vector<u8> junk(64, 0xEE);
    ASSERT_TRUE(gpu_write(vm, h.tiler_heap_ctx_gpu_va, junk.data(), junk.size()));
    ASSERT_EQ(heap_destroy(h.handle), 0);
    const auto again = heap_create(v.id);
    ASSERT_EQ(again.tiler_heap_ctx_gpu_va, h.tiler_heap_ctx_gpu_va);
    ASSERT_TRUE(gpu_read(vm, again.tiler_heap_ctx_gpu_va, ctx, sizeof(ctx)));
    for (u8 b : ctx)
        EXPECT_EQ(b, 0);
    // The context is data for the firmware, never code.
    EXPECT_TRUE(walk(vm, again.tiler_heap_ctx_gpu_va).t.xn);
}

TEST_F(PanthorHeap, At128HeapsTheVmIsBusyOthersAreNot) {
    const Vm v = make_vm();
    std::vector<drm_panthor_tiler_heap_create> heaps;
    for (u32 i = 0; i < kMaxHeaps; i++) {
        drm_panthor_tiler_heap_create h{};
        ASSERT_EQ(heap_create_ret(v.id, 1, SZ_128K, 1, 1, &h), 0) << "heap " << i;
        EXPECT_EQ(h.handle, (v.id << 16) | i);
        heaps.push_back(h);
    }
    EXPECT_EQ(heap_create_ret(v.id, 1, SZ_128K, 1, 1), -EBUSY);
    EXPECT_EQ(heap_create_ret(v.id, 1, SZ_128K, 1, 1), -EBUSY);
    // The refused heaps left nothing behind.
    panthor_heap_pool* pool = pool_of(v.id);
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(panthor_heap_pool_size(pool), kCtxBoSize + size_t{kMaxHeaps} * SZ_128K);

    // Other VMs have pools of their own.
    const Vm w = make_vm();
    EXPECT_EQ(heap_create(w.id).handle, (w.id << 16) | 0u);

    // A destroyed heap's id is free again.
    ASSERT_EQ(heap_destroy(heaps[77].handle), 0);
    drm_panthor_tiler_heap_create h{};
    ASSERT_EQ(heap_create_ret(v.id, 1, SZ_128K, 1, 1, &h), 0);
    EXPECT_EQ(h.handle, (v.id << 16) | 77u);
    EXPECT_EQ(h.tiler_heap_ctx_gpu_va, heaps[77].tiler_heap_ctx_gpu_va);
}

// ---- TILER_HEAP_DESTROY ----

TEST_F(PanthorHeap, DestroyUnmapsAndFreesChunksAndTheirVa) {
    const Vm v = make_vm();
    const auto keep = heap_create(v.id);  // the pool and its contexts BO stay
    panthor_vm* vm = activate(v.id);
    ASSERT_NE(vm, nullptr);
    panthor_heap_pool* pool = pool_of(v.id);
    ASSERT_NE(pool, nullptr);
    const size_t pool_size = panthor_heap_pool_size(pool);

    // One cycle first: page tables the mappings needed may stay allocated after the unmap.
    ASSERT_EQ(heap_destroy(heap_create(v.id, 4, SZ_256K, 8, 1).handle), 0);
    const kshim::MemCounters before = kshim::mem_counters();

    const auto h = heap_create(v.id, 4, SZ_256K, 8, 1);
    const std::vector<Chunk> chunks = chunk_list(vm, h.first_heap_chunk_gpu_va);
    ASSERT_EQ(chunks.size(), 4u);
    EXPECT_EQ(panthor_heap_pool_size(pool), pool_size + 4 * SZ_256K);
    ASSERT_EQ(heap_destroy(h.handle), 0);

    EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "");
    EXPECT_EQ(panthor_heap_pool_size(pool), pool_size);
    for (const Chunk& c : chunks)
        EXPECT_FALSE(walk(vm, c.va).ok) << std::hex << c.va;
    EXPECT_EQ(heap_destroy(h.handle), -EINVAL);

    // The kernel VA went back to the VM: the same chunks come back at the same places.
    const auto again = heap_create(v.id, 4, SZ_256K, 8, 1);
    const std::vector<Chunk> chunks2 = chunk_list(vm, again.first_heap_chunk_gpu_va);
    ASSERT_EQ(chunks2.size(), 4u);
    std::set<u64> old_vas, new_vas;
    for (size_t i = 0; i < 4; i++) {
        old_vas.insert(chunks[i].va);
        new_vas.insert(chunks2[i].va);
    }
    EXPECT_EQ(old_vas, new_vas);
    EXPECT_EQ(heap_destroy(keep.handle), 0);
}

TEST_F(PanthorHeap, VmDestroyWithLiveHeapsFreesThem) {
    const kshim::MemCounters before = kshim::mem_counters();
    const Vm v = make_vm();
    const auto h0 = heap_create(v.id, 3, SZ_2M, 8, 1);
    const auto h1 = heap_create(v.id, 2, SZ_128K, 8, 1);
    vm_destroy(v.id);

    // The handles died with the VM: its id is unknown now.
    EXPECT_EQ(heap_destroy(h0.handle), -EINVAL);
    EXPECT_EQ(heap_destroy(h1.handle), -EINVAL);
    advance_until_idle();
    EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "");
}

TEST_F(PanthorHeap, FileCloseWithLiveHeapsFreesThem) {
    const kshim::MemCounters before = kshim::mem_counters();
    drm::drm_file* f2 = nullptr;
    ASSERT_EQ(open_file(&f2), 0);
    const Vm a = make_vm(f2);
    const Vm b = make_vm(f2);
    heap_create(a.id, 2, SZ_256K, 4, 1, f2);
    heap_create(b.id, 1, SZ_2M, 4, 1, f2);
    heap_create(b.id, 1, SZ_128K, 4, 1, f2);
    drm::drm_release(f2);
    advance_until_idle();
    EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "");
}

// ---- errno tables (docs/hw/csf/uapi.md, checked against upstream panthor_drv.c/heap.c) ----

struct ErrnoRow {
    const char* name;
    int expected;
    int (*run)(PanthorHeap& t);
};

void PrintTo(const ErrnoRow& r, std::ostream* os) {
    *os << r.name;
}

class PanthorHeapErrno : public PanthorHeap, public ::testing::WithParamInterface<ErrnoRow> {};

TEST_P(PanthorHeapErrno, ReturnsKernelErrno) {
    const ErrnoRow& row = GetParam();
    EXPECT_EQ(row.run(*this), row.expected) << row.name;
}

std::string row_name(const ::testing::TestParamInfo<ErrnoRow>& info) {
    return info.param.name;
}

// Rows expecting 0 are the valid base the rows around them change in one field.
INSTANTIATE_TEST_SUITE_P(
    Create, PanthorHeapErrno,
    ::testing::Values(
        ErrnoRow{"Valid", 0, [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, SZ_128K, 8, 4); }},
        ErrnoRow{"UnknownVm", -EINVAL,
                 [](PanthorHeap& t) {
                     t.make_vm();
                     return t.heap_create_ret(7, 2, SZ_128K, 8, 4);
                 }},
        ErrnoRow{"VmIdZero", -EINVAL,
                 [](PanthorHeap& t) {
                     t.make_vm();
                     return t.heap_create_ret(0, 2, SZ_128K, 8, 4);
                 }},
        ErrnoRow{"DestroyedVm", -EINVAL,
                 [](PanthorHeap& t) {
                     const u32 id = t.make_vm().id;
                     t.vm_destroy(id);
                     return t.heap_create_ret(id, 2, SZ_128K, 8, 4);
                 }},
        ErrnoRow{"VmOfAnotherFile", -EINVAL,
                 [](PanthorHeap& t) {
                     drm::drm_file* f2 = nullptr;
                     if (t.open_file(&f2))
                         return 1;
                     const u32 id = t.make_vm(f2).id;
                     const int ret = t.heap_create_ret(id, 2, SZ_128K, 8, 4);
                     drm::drm_release(f2);
                     return ret;
                 }},
        ErrnoRow{"InitialChunkCountZero", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 0, SZ_128K, 8, 4); }},
        ErrnoRow{"InitialChunkCountAboveMaxChunks", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 3, SZ_128K, 2, 4); }},
        ErrnoRow{"InitialChunkCountEqualsMaxChunks", 0,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, SZ_128K, 2, 4); }},
        ErrnoRow{"MaxChunksZero", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 1, SZ_128K, 0, 4); }},
        ErrnoRow{"ChunkSizeZero", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, 0, 8, 4); }},
        ErrnoRow{"ChunkSizeNotPageAligned", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, SZ_128K + 2048, 8, 4); }},
        ErrnoRow{"ChunkSizeOneByteOverPage", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, SZ_256K + 1, 8, 4); }},
        ErrnoRow{"ChunkSizeBelow128K", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, SZ_128K - SZ_4K, 8, 4); }},
        ErrnoRow{"ChunkSize128K", 0,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, SZ_128K, 8, 4); }},
        ErrnoRow{"ChunkSize8M", 0, [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 1, SZ_8M, 8, 4); }},
        ErrnoRow{"ChunkSizeAbove8M", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 1, SZ_8M + SZ_4K, 8, 4); }},
        ErrnoRow{"TargetInFlightZero", 0,
                 [](PanthorHeap& t) { return t.heap_create_ret(t.make_vm().id, 2, SZ_128K, 8, 0); }},
        ErrnoRow{"Heap129InOneVm", -EBUSY,
                 [](PanthorHeap& t) {
                     const u32 id = t.make_vm().id;
                     for (u32 i = 0; i < kMaxHeaps; i++)
                         if (const int ret = t.heap_create_ret(id, 1, SZ_128K, 1, 1))
                             return 1000 + ret;  // not the row's errno: fails the row
                     return t.heap_create_ret(id, 1, SZ_128K, 1, 1);
                 }}),
    row_name);

INSTANTIATE_TEST_SUITE_P(
    Destroy, PanthorHeapErrno,
    ::testing::Values(
        ErrnoRow{"Valid", 0, [](PanthorHeap& t) { return t.heap_destroy(t.heap_create(t.make_vm().id).handle); }},
        ErrnoRow{"PadNonZero", -EINVAL,
                 [](PanthorHeap& t) { return t.heap_destroy(t.heap_create(t.make_vm().id).handle, 1); }},
        ErrnoRow{"UnknownVm", -EINVAL,
                 [](PanthorHeap& t) {
                     const u32 handle = t.heap_create(t.make_vm().id).handle;
                     return t.heap_destroy(handle + (1u << 16));
                 }},
        ErrnoRow{"VmIdZero", -EINVAL,
                 [](PanthorHeap& t) {
                     t.heap_create(t.make_vm().id);
                     return t.heap_destroy(0);
                 }},
        ErrnoRow{"VmWithoutHeapPool", -ENOENT, [](PanthorHeap& t) { return t.heap_destroy(t.make_vm().id << 16); }},
        ErrnoRow{"UnknownHeapId", -EINVAL,
                 [](PanthorHeap& t) {
                     const u32 handle = t.heap_create(t.make_vm().id).handle;
                     return t.heap_destroy(handle + 5);
                 }},
        ErrnoRow{"HeapIdPastPool", -EINVAL,
                 [](PanthorHeap& t) {
                     const u32 handle = t.heap_create(t.make_vm().id).handle;
                     return t.heap_destroy(handle | 0xFFFF);
                 }},
        ErrnoRow{"AlreadyDestroyed", -EINVAL,
                 [](PanthorHeap& t) {
                     const u32 handle = t.heap_create(t.make_vm().id).handle;
                     if (t.heap_destroy(handle))
                         return 1;
                     return t.heap_destroy(handle);
                 }},
        ErrnoRow{"HeapIdOfAnotherVm", -EINVAL,
                 [](PanthorHeap& t) {
                     const u32 a = t.make_vm().id;
                     const u32 b = t.make_vm().id;
                     t.heap_create(a);
                     // b has a pool but no heap 0.
                     if (t.heap_destroy(t.heap_create(b).handle))
                         return 1;
                     return t.heap_destroy(b << 16);
                 }},
        ErrnoRow{"VmDestroyedWithTheHeap", -EINVAL,
                 [](PanthorHeap& t) {
                     const u32 id = t.make_vm().id;
                     const u32 handle = t.heap_create(id).handle;
                     t.vm_destroy(id);
                     return t.heap_destroy(handle);
                 }},
        ErrnoRow{"HandleOfAnotherFile", -EINVAL,
                 [](PanthorHeap& t) {
                     drm::drm_file* f2 = nullptr;
                     if (t.open_file(&f2))
                         return 1;
                     const u32 handle = t.heap_create(t.make_vm(f2).id, 2, SZ_128K, 8, 4, f2).handle;
                     const int ret = t.heap_destroy(handle);
                     drm::drm_release(f2);
                     return ret;
                 }}),
    row_name);

// ---- the C++ API the scheduler uses: grow and return_chunk ----

class PanthorHeapGrow : public PanthorHeap {
protected:
    // A heap in a fresh VM, its pool (a reference) and the VM activated for GPU reads.
    void make_heap(u32 initial, u32 max_chunks, u32 target_in_flight, u32 chunk_size = SZ_128K) {
        vm_ = make_vm();
        heap_ = heap_create(vm_.id, initial, chunk_size, max_chunks, target_in_flight);
        chunk_size_ = chunk_size;
        pool_ = pool_of(vm_.id);
        vm_ptr_ = activate(vm_.id);
        ASSERT_NE(pool_, nullptr);
        ASSERT_NE(vm_ptr_, nullptr);
    }
    int grow(u32 in_flight, u64* chunk) { return grow_at(heap_.tiler_heap_ctx_gpu_va, in_flight, chunk); }
    int grow_at(u64 ctx, u32 in_flight, u64* chunk) { return panthor_heap_grow(pool_, ctx, in_flight, 0, chunk); }
    int return_chunk(u64 chunk) { return return_chunk_at(heap_.tiler_heap_ctx_gpu_va, chunk); }
    int return_chunk_at(u64 ctx, u64 chunk) { return panthor_heap_return_chunk(pool_, ctx, chunk); }
    size_t chunk_bytes() { return panthor_heap_pool_size(pool_) - kCtxBoSize; }

    Vm vm_;
    drm_panthor_tiler_heap_create heap_{};
    u32 chunk_size_ = 0;
    panthor_heap_pool* pool_ = nullptr;
    panthor_vm* vm_ptr_ = nullptr;
};

TEST_F(PanthorHeapGrow, GrowHandsOutAnUnlinkedChunkEncodedWithItsSize) {
    make_heap(2, 4, 1, SZ_256K);
    const std::vector<Chunk> before = chunk_list(vm_ptr_, heap_.first_heap_chunk_gpu_va);
    ASSERT_EQ(before.size(), 2u);

    u64 chunk = 0;
    ASSERT_EQ(grow(1, &chunk), 0);
    EXPECT_EQ(chunk & 0xFFF, SZ_256K >> 12);
    const u64 va = chunk & kVaMask;
    EXPECT_GE(va, vm_.kernel_start);
    EXPECT_LE(va + SZ_256K, va_end());
    for (const Chunk& c : before)
        EXPECT_NE(c.va, va);

    // The firmware links the chunk where it uses it: the driver leaves its header zeroed, and
    // the initial list is untouched (upstream: only initial chunks are linked).
    ChunkHeader hdr;
    ASSERT_TRUE(gpu_read(vm_ptr_, va, &hdr, sizeof(hdr)));
    EXPECT_EQ(hdr.next, 0u);
    EXPECT_TRUE(hdr.mbz_clear());
    const std::vector<Chunk> after = chunk_list(vm_ptr_, heap_.first_heap_chunk_gpu_va);
    ASSERT_EQ(after.size(), 2u);
    EXPECT_EQ(after[0].hdr.next, before[0].hdr.next);
    EXPECT_TRUE(walk(vm_ptr_, va + SZ_256K - 1).ok);
    EXPECT_TRUE(walk(vm_ptr_, va).t.xn);

    EXPECT_EQ(chunk_bytes(), 3u * SZ_256K);
}

TEST_F(PanthorHeapGrow, GrowStopsAtMaxChunksWithEnomem) {
    make_heap(2, 4, 8);
    u64 c1 = 0, c2 = 0, c3 = 0;
    ASSERT_EQ(grow(0, &c1), 0);
    ASSERT_EQ(grow(0, &c2), 0);
    EXPECT_NE(c1, c2);
    const size_t size = panthor_heap_pool_size(pool_);
    c3 = 0x1234;
    EXPECT_EQ(grow(0, &c3), -ENOMEM);
    EXPECT_EQ(c3, 0x1234u);  // untouched
    EXPECT_EQ(panthor_heap_pool_size(pool_), size);

    // A returned chunk makes room again.
    EXPECT_EQ(return_chunk(c2), 0);
    EXPECT_EQ(grow(0, &c3), 0);
    EXPECT_EQ(grow(0, &c3), -ENOMEM);
}

TEST_F(PanthorHeapGrow, GrowRefusesAboveTargetInFlight) {
    make_heap(1, 8, 2);
    u64 chunk = 0;
    EXPECT_EQ(grow(3, &chunk), -ENOMEM);
    EXPECT_EQ(grow(100, &chunk), -ENOMEM);
    EXPECT_EQ(chunk_bytes(), 1u * SZ_128K);
    EXPECT_EQ(grow(2, &chunk), 0);  // at the target is still fine
    EXPECT_EQ(grow(0, &chunk), 0);
    EXPECT_EQ(chunk_bytes(), 3u * SZ_128K);
}

TEST_F(PanthorHeapGrow, GrowAndReturnRejectUnknownHeaps) {
    make_heap(1, 8, 8);
    const u64 ctx = heap_.tiler_heap_ctx_gpu_va;
    u64 chunk = 0;
    // The next context (heap 1) was never created; below and past the contexts BO; VA 0.
    for (const u64 bad : {ctx + 64, ctx - 64, ctx + kCtxBoSize, u64{0}, ~u64{0} & kVaMask}) {
        SCOPED_TRACE(bad);
        EXPECT_EQ(grow_at(bad, 0, &chunk), -EINVAL);
        EXPECT_EQ(return_chunk_at(bad, heap_.first_heap_chunk_gpu_va), -EINVAL);
    }
    ASSERT_EQ(heap_destroy(heap_.handle), 0);
    EXPECT_EQ(grow(0, &chunk), -EINVAL);
    EXPECT_EQ(return_chunk(heap_.first_heap_chunk_gpu_va), -EINVAL);
    EXPECT_EQ(chunk_bytes(), 0u);
}

TEST_F(PanthorHeapGrow, ReturnChunkFreesExactlyThatChunk) {
    make_heap(2, 8, 8);
    u64 grown = 0;
    ASSERT_EQ(grow(0, &grown), 0);
    const u64 va = grown & kVaMask;
    ASSERT_TRUE(walk(vm_ptr_, va).ok);

    // Unknown chunk VAs: nothing is freed.
    EXPECT_EQ(return_chunk(va + SZ_128K * 64), -EINVAL);
    EXPECT_EQ(return_chunk(0), -EINVAL);
    EXPECT_EQ(chunk_bytes(), 3u * SZ_128K);

    // The size bits of the encoded pointer are ignored, as when the firmware hands it back.
    EXPECT_EQ(return_chunk(grown), 0);
    EXPECT_FALSE(walk(vm_ptr_, va).ok);
    EXPECT_EQ(chunk_bytes(), 2u * SZ_128K);
    EXPECT_EQ(return_chunk(grown), -EINVAL);

    // The initial list is intact.
    EXPECT_EQ(chunk_list(vm_ptr_, heap_.first_heap_chunk_gpu_va).size(), 2u);

    // A chunk of another heap of the same pool is not this heap's.
    const auto other = heap_create(vm_.id, 1, SZ_128K, 4, 4);
    EXPECT_EQ(return_chunk(other.first_heap_chunk_gpu_va), -EINVAL);
    EXPECT_EQ(return_chunk_at(other.tiler_heap_ctx_gpu_va, other.first_heap_chunk_gpu_va), 0);
}

TEST_F(PanthorHeapGrow, PoolSizeCountsContextsAndEveryChunk) {
    make_heap(3, 8, 8, SZ_256K);
    EXPECT_EQ(panthor_heap_pool_size(pool_), kCtxBoSize + 3 * SZ_256K);
    const auto second = heap_create(vm_.id, 2, SZ_2M, 4, 4);
    EXPECT_EQ(panthor_heap_pool_size(pool_), kCtxBoSize + 3 * SZ_256K + 2 * SZ_2M);
    u64 c = 0;
    ASSERT_EQ(grow(0, &c), 0);
    EXPECT_EQ(panthor_heap_pool_size(pool_), kCtxBoSize + 4 * SZ_256K + 2 * SZ_2M);
    ASSERT_EQ(return_chunk(c), 0);
    ASSERT_EQ(heap_destroy(second.handle), 0);
    EXPECT_EQ(panthor_heap_pool_size(pool_), kCtxBoSize + 3 * SZ_256K);
    EXPECT_EQ(panthor_heap_pool_size(nullptr), 0u);
}

// Tiler-OOM replies of several groups sharing a heap run on an unbound workqueue, in parallel.
struct GrowWork {
    kshim::work_struct work;
    panthor_heap_pool* pool = nullptr;
    u64 ctx = 0;
    int ret = 1;
    u64 chunk = 0;
};

void grow_work(kshim::work_struct* w) {
    auto* g = container_of(w, GrowWork, work);
    g->ret = panthor_heap_grow(g->pool, g->ctx, 0, 0, &g->chunk);
}

TEST_F(PanthorHeapGrow, ParallelGrowsNeverPassMaxChunks) {
    constexpr u32 kMax = 5;
    make_heap(1, kMax, 8);
    kshim::workqueue_struct* wq = kshim::alloc_workqueue("heap-test", kshim::WQ_UNBOUND, 0);
    ASSERT_NE(wq, nullptr);
    std::vector<GrowWork> works(8);
    for (GrowWork& g : works) {
        INIT_WORK(&g.work, grow_work);
        g.pool = pool_;
        g.ctx = heap_.tiler_heap_ctx_gpu_va;
        kshim::queue_work(wq, &g.work);
    }
    kshim::flush_workqueue(wq);
    kshim::destroy_workqueue(wq);

    u32 grown = 0;
    std::set<u64> vas;
    for (const GrowWork& g : works) {
        if (g.ret == 0) {
            grown++;
            vas.insert(g.chunk & kVaMask);
        } else {
            EXPECT_EQ(g.ret, -ENOMEM);
        }
    }
    EXPECT_EQ(grown, kMax - 1);
    EXPECT_EQ(vas.size(), grown);
    EXPECT_EQ(chunk_bytes(), size_t{kMax} * SZ_128K);
    for (const u64 va : vas)
        EXPECT_TRUE(walk(vm_ptr_, va).ok);
}

TEST_F(PanthorHeapGrow, EachAllocationFailureInGrowIsEnomemAndLeavesTheHeapAsItWas) {
    make_heap(1, 64, 8);
    u64 warm = 0;  // a first grow, so later ones need no new page tables nearby
    ASSERT_EQ(grow(0, &warm), 0);

    bool reached_end = false;
    u64 failed = 0;
    for (u64 n = 1; n < 200 && !reached_end; n++) {
        const size_t size = panthor_heap_pool_size(pool_);
        u64 chunk = 0;
        kshim::fault_inject_arm({.fail_nth = n});
        const int ret = grow(0, &chunk);
        const u64 failures = kshim::fault_inject_failures();
        kshim::fault_inject_disarm();
        if (failures == 0) {
            EXPECT_EQ(ret, 0) << "n=" << n;
            reached_end = true;
        } else if (ret == 0) {
            // A failure absorbed somewhere below (a cache refilled later): the chunk is real.
            EXPECT_EQ(panthor_heap_pool_size(pool_), size + SZ_128K) << "n=" << n;
        } else {
            failed++;
            EXPECT_EQ(ret, -ENOMEM) << "allocation " << n;
            EXPECT_EQ(panthor_heap_pool_size(pool_), size) << "allocation " << n;
        }
        if (ret == 0) {
            EXPECT_TRUE(walk(vm_ptr_, chunk & kVaMask).ok);
            EXPECT_EQ(return_chunk(chunk), 0);
        }
    }
    EXPECT_TRUE(reached_end);
    EXPECT_GE(failed, 2u);  // at least the chunk struct and the BO
}

TEST_F(PanthorHeap, EachAllocationFailureInCreateUnwinds) {
    const Vm v = make_vm();
    bool reached_end = false;
    u64 failed = 0;
    for (u64 n = 1; n < 400 && !reached_end; n++) {
        drm_panthor_tiler_heap_create h{};
        kshim::fault_inject_arm({.fail_nth = n});
        const int ret = heap_create_ret(v.id, 2, SZ_128K, 4, 4, &h);
        const u64 failures = kshim::fault_inject_failures();
        kshim::fault_inject_disarm();
        if (failures == 0) {
            EXPECT_EQ(ret, 0) << "n=" << n;
            reached_end = true;
        } else if (ret) {
            failed++;
            EXPECT_EQ(ret, -ENOMEM) << "allocation " << n;
        }
        if (ret == 0) {
            // The heap is complete and is the only one: id 0 every time.
            EXPECT_EQ(h.handle, v.id << 16) << "n=" << n;
            EXPECT_EQ(heap_destroy(h.handle), 0);
        }
    }
    EXPECT_TRUE(reached_end);
    EXPECT_GE(failed, 3u);
    // A pool that came to exist holds no chunk.
    panthor_heap_pool* pool = pool_of(v.id);
    ASSERT_NE(pool, nullptr);
    EXPECT_EQ(panthor_heap_pool_size(pool), kCtxBoSize);
}

// ---- the pool's lifetime against its VM ----

TEST_F(PanthorHeap, PoolHeldPastVmDestroyRefusesEverything) {
    const Vm v = make_vm();
    const auto h = heap_create(v.id, 2, SZ_128K, 8, 8);
    panthor_vm* vm = vm_ref(v.id);
    panthor_heap_pool* pool = pool_of(v.id);
    ASSERT_NE(pool, nullptr);
    ASSERT_NE(vm, nullptr);
    const kshim::MemCounters live = kshim::mem_counters();

    vm_destroy(v.id);
    // The heaps and contexts are gone although the scheduler still holds the pool and the VM.
    EXPECT_EQ(panthor_heap_pool_size(pool), 0u);
    u64 chunk = 0;
    EXPECT_EQ(panthor_heap_grow(pool, h.tiler_heap_ctx_gpu_va, 0, 0, &chunk), -EINVAL);
    EXPECT_EQ(panthor_heap_return_chunk(pool, h.tiler_heap_ctx_gpu_va, h.first_heap_chunk_gpu_va), -EINVAL);
    u64 ctx = 0, first = 0;
    EXPECT_EQ(panthor_heap_create(pool, 1, SZ_128K, 1, 1, &ctx, &first), -EINVAL);
    EXPECT_EQ(panthor_heap_destroy(pool, 0), -EINVAL);
    // No pool is made for a destroyed VM, and the old one is not handed out again.
    EXPECT_EQ(kshim::PTR_ERR(panthor_vm_get_heap_pool(vm, true)), -EINVAL);
    EXPECT_EQ(kshim::PTR_ERR(panthor_vm_get_heap_pool(vm, false)), -ENOENT);
    // The chunks' and the contexts' pages went back already.
    const long freed = live.pages_live - kshim::mem_counters().pages_live;
    EXPECT_GE(freed, static_cast<long>((2 * SZ_128K + kCtxBoSize) / SZ_4K));
}

TEST_F(PanthorHeap, GetHeapPoolCreatesOnceAndCountsReferences) {
    const Vm v = make_vm();
    panthor_vm* vm = vm_ref(v.id);
    ASSERT_NE(vm, nullptr);
    EXPECT_EQ(kshim::PTR_ERR(panthor_vm_get_heap_pool(vm, false)), -ENOENT);
    panthor_heap_pool* p1 = panthor_vm_get_heap_pool(vm, true);
    ASSERT_FALSE(kshim::IS_ERR_OR_NULL(p1));
    panthor_heap_pool* p2 = panthor_vm_get_heap_pool(vm, true);
    panthor_heap_pool* p3 = panthor_vm_get_heap_pool(vm, false);
    EXPECT_EQ(p1, p2);
    EXPECT_EQ(p1, p3);
    EXPECT_EQ(panthor_heap_pool_size(p1), kCtxBoSize);
    // Our references dropped, the VM's keeps the pool: the ioctl sees the same one.
    panthor_heap_pool_put(p1);
    panthor_heap_pool_put(p2);
    panthor_heap_pool_put(p3);
    const auto h = heap_create(v.id);
    panthor_heap_pool* p4 = pool_of(v.id);
    EXPECT_EQ(p4, p1);
    EXPECT_EQ(panthor_heap_pool_size(p4), kCtxBoSize + 2 * SZ_128K);
    EXPECT_EQ(heap_destroy(h.handle), 0);
}

// ---- the context stride follows the GPU's L2 line size ----

class PanthorHeap128ByteLines : public PanthorHeap {
protected:
    mock_hw::GpuConfig gpu_config() const override {
        mock_hw::GpuConfig c;
        c.id.l2_features = (c.id.l2_features & ~0xFFu) | 7;  // 128-byte lines
        return c;
    }
};

TEST_F(PanthorHeap128ByteLines, ContextsAreOneLineApart) {
    const Vm v = make_vm();
    const auto h0 = heap_create(v.id);
    const auto h1 = heap_create(v.id);
    EXPECT_EQ(h1.tiler_heap_ctx_gpu_va - h0.tiler_heap_ctx_gpu_va, 128u);
    EXPECT_EQ(h0.tiler_heap_ctx_gpu_va % 128, 0u);
    panthor_heap_pool* pool = pool_of(v.id);
    ASSERT_NE(pool, nullptr);
    // 128 contexts of 128 bytes.
    EXPECT_EQ(panthor_heap_pool_size(pool), 16384u + 4 * SZ_128K);
    u64 chunk = 0;
    EXPECT_EQ(panthor_heap_grow(pool, h0.tiler_heap_ctx_gpu_va + 64, 0, 0, &chunk), 0)
        << "an address inside heap 0's line names heap 0, as upstream's division does";
    EXPECT_EQ(panthor_heap_grow(pool, h0.tiler_heap_ctx_gpu_va + 128 * 2, 0, 0, &chunk), -EINVAL);
}

}  // namespace
}  // namespace panthor::testing
