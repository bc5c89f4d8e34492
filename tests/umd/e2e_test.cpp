// End-to-end client scenarios: what a panvk-style userspace driver does, written against
// umd::PanthorClient over the in-process DrmFileBackend, running on the panthor driver and the
// mock G610. One compute dispatch; a panvk-like frame on a three-subqueue group with a tiler heap
// that has to grow (TILER_OOM -> group_tiler_oom_work -> panthor_heap_grow) and whose chunks the
// fragment subqueue gives back; timeline syncobjs used the way panvk's queue submit uses them;
// and the teardown orders a client can get wrong, with work in flight.
//
// The mock firmware's tiler heap (docs/mock_hw.md, "Tiler heap"): the heap context is the
// MockHeapContext at the TILER_HEAP_CREATE context VA; its free list is seeded by the heap's
// creator, here the queue's init stream, as panvk initialises its tiler heap context from a
// stream. The frames observe the heap from the client side by copying the context into a
// descriptor BO with LOAD/STORE_MULTIPLE, and from fdinfo (panthor-resident-memory counts the
// heap chunks).
//
// With UPANTHOR_UMD_BACKEND=real (the CTest entry umd_e2e_test.preload, under the preload
// library) the same scenarios run over a real descriptor (tests/umd/umd_client_test.h): fence
// status and fdinfo are read as a process reads them, fences held past the file are sync_files
// (tests/umd/sync_file_fence.h), and a scenario that needs what the preload does not serve yet is
// skipped with the reason (kRealNeeds).
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drm/drm_fdinfo.h"
#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "host/drm_file_backend.h"
#include "hw/csf/mock_fw_formats.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/time.h"
#include "tests/panthor/panthor_test.h"
#include "tests/umd/sync_file_fence.h"
#include "tests/umd/umd_client_test.h"
#include "umd/cs_builder.h"
#include "umd/panthor_client.h"

namespace umd {
namespace {

using panthor::testing::PanthorTest;
using namespace drm::uapi;
using mock_hw::MockHeapContext;
using mock_hw::MockShader;

constexpr u64 SZ_4K = 0x1000;
constexpr u64 SZ_64K = 0x10000;
constexpr u64 SZ_128K = 0x20000;
constexpr u64 SZ_256K = 0x40000;
constexpr s64 kMs = kshim::NSEC_PER_MSEC;
constexpr s64 kTimeout = 2000 * kMs;

// panvk's device VA layout puts user BOs low; these are the client's choices.
constexpr u64 kCsVa = 0x10000000;    // command streams
constexpr u64 kDescVa = 0x10100000;  // shader descriptors and per-frame records
constexpr u64 kSyncVa = 0x10200000;  // the subqueues' progress sync objects
constexpr u64 kDataVa = 0x10300000;  // what the jobs write

// ---- what the client puts in GPU memory ----

// panvk_cs_sync64: a subqueue's progress counter, incremented by SYNC_ADD64 (the error word is
// what error propagation writes).
struct CsSync64 {
    u64 seqno;
    u32 error;
    u32 pad;
};
static_assert(sizeof(CsSync64) == 16);

// What one frame's streams record for the client: GPU timestamps at the ordering points, the
// tiling pass's chunk range handed from the tiler to the fragment subqueue (panvk's tiler
// descriptor carries it as completed_top/bottom), what the fragment stream saw of the tiler's
// output, and the heap context after tiling and after FINISH_FRAGMENT.
struct FrameRecord {
    u64 ts_tiler_start, ts_tiler_end;
    u64 ts_frag_start, ts_frag_end;
    u64 ts_compute_end;
    u64 completed_last, completed_first;  // in this order: the LOAD_MULTIPLE at context +0x10
    u64 frag_saw;
    MockHeapContext heap_after_tiling;
    MockHeapContext heap_after_fragment;
};
constexpr cs::s16 off(size_t o) {
    return static_cast<cs::s16>(o);
}

// A BO bound in the VM and mapped on the CPU, sub-allocated by bumping (panvk_pool-like).
struct GpuBuffer {
    Bo bo;
    u8* cpu = nullptr;
    u64 va = 0;
    u64 used = 0;

    struct Alloc {
        u8* cpu;
        u64 va;
    };
    Alloc alloc(u64 size, u64 align = 64) {
        used = (used + align - 1) & ~(align - 1);
        EXPECT_LE(used + size, bo.size) << "buffer full";
        Alloc a{cpu + used, va + used};
        used += size;
        return a;
    }
    template <class T>
    T read(u64 at_va) const {
        T v;
        std::memcpy(&v, cpu + (at_va - va), sizeof(T));
        return v;
    }
    template <class T>
    u64 put(const T& v) {
        Alloc a = alloc(sizeof(T));
        std::memcpy(a.cpu, &v, sizeof(T));
        return a.va;
    }
};

// "key:\tN[ KiB| MiB]" of an fdinfo text in bytes (-1 when absent).
long long fdinfo_bytes(const std::string& text, const std::string& key) {
    const size_t at = text.find(key + ":\t");
    if (at == std::string::npos)
        return -1;
    size_t end = 0;
    const std::string rest = text.substr(at + key.size() + 2);
    long long v = std::stoll(rest, &end);
    if (rest.compare(end, 4, " KiB") == 0)
        v <<= 10;
    else if (rest.compare(end, 4, " MiB") == 0)
        v <<= 20;
    return v;
}

class E2e : public testing::UmdClientTest {
protected:
    // Real mode: what each scenario needs besides plain ioctls (UmdClientTest::RealNeed).
    static unsigned real_needs(const std::string& test) {
        static const std::pair<const char*, unsigned> kRealNeeds[] = {
            {"TwoFramesTileRenderAndComputeInOrderAndTheHeapGrowsOnceThenIsReused", kFdinfo},
            {"WithoutRoomToGrowTheTilingJobFaultsOutOfMemory", kFenceErrors | kFdinfo},
            {"GroupThenHeapThenVmDestroyedWhileAFrameRunsCancelsItAndFreesEverything", kFenceErrors | kFdinfo},
            {"VmDestroyedBeforeItsBusyGroupAndHeap", kFenceErrors | kFdinfo},
            {"FileClosedWithGroupsHeapAndFramesInFlight", kFenceErrors},
        };
        for (const auto& [name, needs] : kRealNeeds)
            if (test == name)
                return needs;
        return 0;
    }
    void SetUp() override {
        UmdClientTest::SetUp();
        if (HasFatalFailure())
            return;
        real_mode_requires(real_needs(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    }
    void TearDown() override {
        for (kshim::dma_fence* f : held_)
            kshim::dma_fence_put(f);
        UmdClientTest::TearDown();
    }

    void close_file() {
        close_client();
        if (file)
            drm::drm_release(file);
        file = nullptr;
    }

    GpuBuffer make_buffer(u32 vm, u64 va, u64 size, const char* label) {
        GpuBuffer b;
        Result<Bo> bo = c().bo_create(size);
        EXPECT_TRUE(bo.ok()) << bo.error();
        if (!bo.ok())
            return b;
        b.bo = *bo;
        EXPECT_TRUE(c().bo_set_label(b.bo.handle, label).ok());
        Result<void*> cpu = c().bo_mmap(b.bo.handle, b.bo.size);
        EXPECT_TRUE(cpu.ok()) << cpu.error();
        b.cpu = static_cast<u8*>(cpu.value_or(nullptr));
        EXPECT_TRUE(c().vm_map(vm, b.bo.handle, va, b.bo.size).ok());
        b.va = va;
        return b;
    }
    void free_buffer(u32 vm, GpuBuffer& b) {
        EXPECT_TRUE(c().munmap(b.cpu, b.bo.size).ok());
        EXPECT_TRUE(c().vm_unmap(vm, b.va, b.bo.size).ok());
        EXPECT_TRUE(c().bo_destroy(b.bo.handle).ok());
        b = {};
    }

    // dma_fence_get_status of the fence at (handle, point): 0 pending, 1 ok, -errno failed;
    // or the lookup's errno.
    int fence_status(u32 handle, u64 point = 0) {
        if (real_mode())
            return real_fence_status(handle, point);
        kshim::dma_fence* f = nullptr;
        const int ret = drm::drm_syncobj_find_fence(file, handle, point, 0, &f);
        if (ret)
            return ret;
        const int st = kshim::dma_fence_get_status(f);
        kshim::dma_fence_put(f);
        return st;
    }
    // A reference to the fence at (handle, point), kept past the file (put at teardown).
    kshim::dma_fence* hold_fence(u32 handle, u64 point = 0) {
        if (real_mode()) {
            // What a process holds past its file: a sync_file, mirrored by a fence of our own.
            const int fd = real_sync_file(handle, point);
            EXPECT_GE(fd, 0);
            kshim::dma_fence* f = fd >= 0 ? testing::sync_file_fence_create(fd) : nullptr;
            if (f)
                held_.push_back(f);
            return f;
        }
        kshim::dma_fence* f = nullptr;
        EXPECT_EQ(drm::drm_syncobj_find_fence(file, handle, point, 0, &f), 0);
        if (f)
            held_.push_back(f);
        return f;
    }
    long long fdinfo(const std::string& key) {
        return fdinfo_bytes(real_mode() ? real_fdinfo_text() : drm::drm_show_fdinfo(file), key);
    }

    bool wait(u32 syncobj) { return c().syncobj_wait(syncobj, c().deadline_after(kTimeout)).ok(); }

    std::vector<kshim::dma_fence*> held_;
};

// ---- 1. one compute dispatch ----

TEST_F(E2e, ComputeJobWritesWhatTheClientReadsBackAfterItsSyncobjSignals) {
    const u32 vm = c().vm_create()->id;
    GpuBuffer cs = make_buffer(vm, kCsVa, SZ_64K, "cs");
    GpuBuffer data = make_buffer(vm, kDataVa, SZ_64K, "data");
    const u32 group = c().group_create({.vm_id = vm, .queues = {{}}}).value_or(0);
    ASSERT_NE(group, 0u);

    const GpuBuffer::Alloc out = data.alloc(8);
    const u64 shader = data.put(cs::mock::write(out.va, 0xC0FFEE0012345678ull, 5 * kMs));

    GpuBuffer::Alloc mem = cs.alloc(SZ_4K);
    cs::Builder b(c().cs_config(), mem.cpu, mem.va, SZ_4K);
    b.set_spd(shader);
    b.set_sb_entry(3, 0);
    b.req_resource(true, false, false, false);
    b.run_compute();
    b.req_resource(false, false, false, false);
    b.wait_all();
    ASSERT_TRUE(b.finish().ok()) << b.error_message();
    ASSERT_EQ(mem.va % 64, 0u);

    const u32 done = *c().syncobj_create();
    const s64 t0 = kshim::ktime_get();
    ASSERT_TRUE(
        c().group_submit(group, QueueSubmit::of(0, b, c().latest_flush_id().value_or(0), {sync_signal(done)})).ok());
    EXPECT_EQ(fence_status(done), 0);  // the job holds a core for 5 ms of virtual time
    ASSERT_TRUE(wait(done));
    EXPECT_GE(kshim::ktime_get() - t0, 5 * kMs);
    EXPECT_EQ(fence_status(done), 1);
    EXPECT_EQ(data.read<u64>(out.va), 0xC0FFEE0012345678ull);
    EXPECT_EQ(c().group_get_state(group).value_or({}).state, 0u);

    EXPECT_TRUE(c().group_destroy(group).ok());
    free_buffer(vm, data);
    free_buffer(vm, cs);
    EXPECT_TRUE(c().vm_destroy(vm).ok());
}

// ---- 2. a panvk-like queue: three subqueues, a tiler heap, frames ----

enum Subqueue : u32 { kVertexTiler = 0, kFragment = 1, kCompute = 2, kSubqueueCount = 3 };
constexpr u8 kIterSb = 3;  // the scoreboard entry the RUN_*s signal (panvk's first iterator slot)

struct FrameDesc {
    u64 n = 1;            // frame number: the subqueue seqnos reach n
    u32 heap_chunks = 1;  // what the tiling job takes from the heap
    u64 tiler_ns = 3 * kMs, frag_ns = 2 * kMs, compute_ns = 1 * kMs;
    std::vector<drm_panthor_sync_op> waits;  // the submit's semaphore waits
    u32 signal = 0;                          // timeline syncobj the frame signals (0: none)
    u64 signal_point = 0;
    // Also give each command submit a binary syncobj of its own (FrameOut::job_done): the job's
    // fence, whose status says whether the job ran or was cancelled. The timeline point cannot
    // say it: it is a dma_fence_chain link, and chain links signal without their fences' errors.
    bool track_jobs = false;
};

// What one frame's jobs write (in the data buffer) and its record (in the descriptor buffer).
struct FrameOut {
    u64 tiled_va = 0, rendered_va = 0, computed_va = 0, record_va = 0;
    u32 job_done[kSubqueueCount] = {};  // with FrameDesc::track_jobs
};

// panvk_queue: a group with the three subqueues, the tiler heap, the per-subqueue progress sync
// objects and the queue syncobj every submit's signal operations go through.
class PanvkQueue {
public:
    PanvkQueue(PanthorClient& c, u32 vm, GpuBuffer& cs, GpuBuffer& desc, GpuBuffer& sync, GpuBuffer& data)
        : c_(c), vm_(vm), cs_(cs), desc_(desc), sync_(sync), data_(data) {}

    // panvk_per_arch(queue_init): syncobj, tiler heap, group, progress objects, the init submit.
    Status init(const TilerHeapDesc& heap_desc) {
        Result<u32> so = c_.syncobj_create();
        if (!so)
            return so.status();
        syncobj_ = *so;
        TilerHeapDesc hd = heap_desc;
        hd.vm_id = vm_;
        Result<TilerHeap> heap = c_.tiler_heap_create(hd);
        if (!heap)
            return heap.status();
        heap_ = *heap;
        chunk_size_ = hd.chunk_size;
        Result<u32> group = c_.group_create({.vm_id = vm_, .queues = {{}, {}, {}}});
        if (!group)
            return group.status();
        group_ = *group;
        for (u32 i = 0; i < kSubqueueCount; i++)
            progress_va_[i] = sync_.put(CsSync64{});

        // The first submit sets each subqueue up: the tiler heap for the graphics subqueues (and,
        // for the mock firmware, the heap context's free list), the iterator scoreboard entry.
        std::vector<QueueSubmit> subs;
        for (u32 sq = 0; sq < kSubqueueCount; sq++) {
            cs::Builder& b = new_stream();
            if (sq != kCompute) {
                b.move64(b.reg64(0), heap_.ctx_gpu_va);
                b.heap_set(b.reg64(0));
            }
            if (sq == kVertexTiler) {
                b.move64(b.reg64(2), heap_.first_chunk_gpu_va | (chunk_size_ >> 12));
                b.store64(b.reg64(2), b.reg64(0), off(offsetof(MockHeapContext, free_chunk)));
            }
            b.set_sb_entry(kIterSb, 0);
            b.wait_all();
            if (Status s = b.finish(); !s)
                return s;
            subs.push_back(QueueSubmit::of(sq, b, flush_id()));
        }
        Result<u32> ready = c_.syncobj_create();
        if (!ready)
            return ready.status();
        for (QueueSubmit& s : subs)
            s.syncs = {sync_signal(*ready)};
        init_done_ = *ready;
        return c_.group_submit(group_, subs);
    }

    // panvk_queue_submit of one command buffer holding a render pass and a dispatch: the wait
    // submits, the three streams, the signal submits on the queue syncobj, then the transfer of
    // its last point to the semaphore and the reset.
    Result<FrameOut> submit_frame(const FrameDesc& f) {
        FrameOut o;
        o.tiled_va = data_.alloc(8).va;
        o.rendered_va = data_.alloc(8).va;
        o.computed_va = data_.alloc(8).va;
        o.record_va = desc_.put(FrameRecord{});
        const u64 tiled_value = 0x7100000000ull + f.n, rendered_value = 0xF100000000ull + f.n;

        MockShader idvs = cs::mock::write(o.tiled_va, tiled_value, f.tiler_ns);
        idvs.heap_chunks = f.heap_chunks;
        const u64 idvs_va = desc_.put(idvs);
        const u64 frag_va = desc_.put(cs::mock::write(o.rendered_va, rendered_value, f.frag_ns));
        const u64 comp_va = desc_.put(cs::mock::write(o.computed_va, 0xC100000000ull + f.n, f.compute_ns));
        const cs::SyncOptions csg_add{.scope = panthor::cs::SCOPE_CSG, .error_propagate = true, .wait_mask = 0xFF};

        // Vertex/tiler: a tiling pass, then its chunk range for the fragment subqueue, then
        // progress.
        cs::Builder& t = new_stream();
        const cs::Reg64 heap = t.reg64(0), rec = t.reg64(2), tsync = t.reg64(4), one = t.reg64(6);
        t.move64(heap, heap_.ctx_gpu_va);
        t.move64(rec, o.record_va);
        t.move64(tsync, progress_va_[kVertexTiler]);
        t.move64(one, 1);
        t.store_state(rec, panthor::cs::STATE_TIMESTAMP, off(offsetof(FrameRecord, ts_tiler_start)));
        t.heap_operation(panthor::cs::HEAP_VT_START);
        t.set_idvs_shader(idvs_va);
        t.req_resource(false, false, false, true);
        t.run_idvs();
        t.req_resource(false, false, false, false);
        t.wait_slot(kIterSb);
        t.finish_tiling();
        t.load_multiple(t.reg32(8), 0xF, heap, off(offsetof(MockHeapContext, last_chunk)));
        t.store_multiple(t.reg32(8), 0xF, rec, off(offsetof(FrameRecord, completed_last)));
        t.load_multiple(t.reg32(20), 0xFF, heap, 0);
        t.store_multiple(t.reg32(20), 0xFF, rec, off(offsetof(FrameRecord, heap_after_tiling)));
        t.store_state(rec, panthor::cs::STATE_TIMESTAMP, off(offsetof(FrameRecord, ts_tiler_end)));
        t.heap_operation(panthor::cs::HEAP_VT_END);
        t.sync_add64(tsync, one, csg_add);
        t.wait_all();

        // Fragment: wait for this frame's tiling (cross-subqueue), render, give the chunks back.
        cs::Builder& fr = new_stream();
        const cs::Reg64 wsync = fr.reg64(0), ref = fr.reg64(2), frec = fr.reg64(4), fsync = fr.reg64(6),
                        fone = fr.reg64(8), last = fr.reg64(10), first = fr.reg64(12), saw = fr.reg64(14),
                        tiled = fr.reg64(18), fheap = fr.reg64(20);
        fr.move64(wsync, progress_va_[kVertexTiler]);
        fr.move64(ref, f.n - 1);
        fr.move64(frec, o.record_va);
        fr.move64(fsync, progress_va_[kFragment]);
        fr.move64(fone, 1);
        fr.move64(tiled, o.tiled_va);
        fr.move64(fheap, heap_.ctx_gpu_va);
        fr.sync_wait64(wsync, ref, panthor::cs::GREATER);
        fr.store_state(frec, panthor::cs::STATE_TIMESTAMP, off(offsetof(FrameRecord, ts_frag_start)));
        fr.load64(saw, tiled);
        fr.store64(saw, frec, off(offsetof(FrameRecord, frag_saw)));
        fr.load_multiple(last.lo(), 0xF, frec, off(offsetof(FrameRecord, completed_last)));
        fr.set_fbd(frag_va);
        fr.req_resource(false, true, false, false);
        fr.run_fragment();
        fr.req_resource(false, false, false, false);
        fr.wait_slot(kIterSb);
        fr.finish_fragment(false, last, first);
        fr.load_multiple(fr.reg32(24), 0xFF, fheap, 0);
        fr.store_multiple(fr.reg32(24), 0xFF, frec, off(offsetof(FrameRecord, heap_after_fragment)));
        fr.heap_operation(panthor::cs::HEAP_FRAG_END);
        fr.store_state(frec, panthor::cs::STATE_TIMESTAMP, off(offsetof(FrameRecord, ts_frag_end)));
        fr.sync_add64(fsync, fone, csg_add);
        fr.wait_all();

        // Compute: an independent dispatch.
        cs::Builder& cp = new_stream();
        const cs::Reg64 csync = cp.reg64(0), cone = cp.reg64(2), crec = cp.reg64(4);
        cp.move64(csync, progress_va_[kCompute]);
        cp.move64(cone, 1);
        cp.move64(crec, o.record_va);
        cp.set_spd(comp_va);
        cp.req_resource(true, false, false, false);
        cp.run_compute();
        cp.req_resource(false, false, false, false);
        cp.wait_slot(kIterSb);
        cp.store_state(crec, panthor::cs::STATE_TIMESTAMP, off(offsetof(FrameRecord, ts_compute_end)));
        cp.sync_add64(csync, cone, csg_add);
        cp.wait_all();

        for (cs::Builder* b : {&t, &fr, &cp})
            if (Status s = b->finish(); !s)
                return s;

        std::vector<QueueSubmit> subs;
        if (!f.waits.empty())
            for (u32 sq = 0; sq < kSubqueueCount; sq++)
                subs.push_back(QueueSubmit{.queue_index = sq, .syncs = f.waits});
        const u32 flush = flush_id();
        const cs::Builder* streams[kSubqueueCount] = {&t, &fr, &cp};
        for (u32 sq = 0; sq < kSubqueueCount; sq++) {
            subs.push_back(QueueSubmit::of(sq, *streams[sq], flush));
            if (f.track_jobs) {
                Result<u32> done = c_.syncobj_create();
                if (!done)
                    return done.status();
                o.job_done[sq] = *done;
                subs.back().syncs = {sync_signal(*done)};
            }
        }
        for (u32 sq = 0; sq < kSubqueueCount; sq++)
            subs.push_back(QueueSubmit{.queue_index = sq, .syncs = {timeline_signal(syncobj_, sq + 1)}});
        if (Status s = c_.group_submit(group_, subs); !s)
            return s;
        if (f.signal) {
            // Point 0 of the queue syncobj is its last point, the chain of all three signals.
            if (Status s = c_.syncobj_transfer(f.signal, f.signal_point, syncobj_, 0); !s)
                return s;
        }
        if (Status s = c_.syncobj_reset({&syncobj_, 1}); !s)
            return s;
        return o;
    }

    // panvk_per_arch(queue_finish): group, then heap, then the syncobj.
    Status finish() {
        Status s = c_.group_destroy(group_);
        if (Status h = c_.tiler_heap_destroy(heap_.handle); s && !h)
            s = h;
        if (Status so = c_.syncobj_destroy(syncobj_); s && !so)
            s = so;
        return s;
    }

    u32 group() const { return group_; }
    u32 init_done() const { return init_done_; }
    const TilerHeap& heap() const { return heap_; }
    u64 chunk_size() const { return chunk_size_; }
    u64 seqno(Subqueue sq) const { return sync_.read<CsSync64>(progress_va_[sq]).seqno; }
    u32 seq_error(Subqueue sq) const { return sync_.read<CsSync64>(progress_va_[sq]).error; }

private:
    cs::Builder& new_stream() {
        const GpuBuffer::Alloc a = cs_.alloc(SZ_4K);
        return *streams_.emplace_back(std::make_unique<cs::Builder>(c_.cs_config(), a.cpu, a.va, SZ_4K));
    }
    u32 flush_id() { return c_.latest_flush_id().value_or(0); }

    PanthorClient& c_;
    u32 vm_;
    GpuBuffer &cs_, &desc_, &sync_, &data_;
    std::vector<std::unique_ptr<cs::Builder>> streams_;
    u32 syncobj_ = 0, group_ = 0, init_done_ = 0;
    TilerHeap heap_;
    u64 chunk_size_ = 0;
    u64 progress_va_[kSubqueueCount] = {};
};

class E2eFrame : public E2e {
protected:
    void SetUp() override {
        E2e::SetUp();
        if (HasFatalFailure() || IsSkipped())
            return;
        vm_ = c().vm_create()->id;
        cs_ = make_buffer(vm_, kCsVa, SZ_256K, "cs");
        desc_ = make_buffer(vm_, kDescVa, SZ_64K, "desc");
        sync_ = make_buffer(vm_, kSyncVa, SZ_4K, "sync");
        data_ = make_buffer(vm_, kDataVa, SZ_64K, "data");
        queue_ = std::make_unique<PanvkQueue>(c(), vm_, cs_, desc_, sync_, data_);
    }
    void TearDown() override {
        queue_.reset();
        E2e::TearDown();
    }
    // Two initial chunks: a tiling job taking three makes the firmware raise TILER_OOM once.
    static TilerHeapDesc heap_desc() {
        return {.initial_chunk_count = 2,
                .chunk_size = static_cast<u32>(SZ_256K),
                .max_chunks = 8,
                .target_in_flight = 65535};
    }
    FrameRecord record(const FrameOut& o) const { return desc_.read<FrameRecord>(o.record_va); }
    void free_buffers() {
        for (GpuBuffer* b : {&data_, &sync_, &desc_, &cs_})
            free_buffer(vm_, *b);
    }

    u32 vm_ = 0;
    GpuBuffer cs_, desc_, sync_, data_;
    std::unique_ptr<PanvkQueue> queue_;
};

TEST_F(E2eFrame, TwoFramesTileRenderAndComputeInOrderAndTheHeapGrowsOnceThenIsReused) {
    ASSERT_TRUE(queue_->init(heap_desc()).ok());
    ASSERT_TRUE(wait(queue_->init_done()));
    const long long resident_before = fdinfo("panthor-resident-memory");
    ASSERT_GT(resident_before, 0);

    // Frame 2 waits on frame 1's timeline point and is submitted before frame 1 ran.
    const u32 frames = *c().syncobj_create();
    Result<FrameOut> f1 = queue_->submit_frame({.n = 1, .heap_chunks = 3, .signal = frames, .signal_point = 1});
    ASSERT_TRUE(f1.ok()) << f1.error();
    Result<FrameOut> f2 = queue_->submit_frame(
        {.n = 2, .heap_chunks = 3, .waits = {timeline_wait(frames, 1)}, .signal = frames, .signal_point = 2});
    ASSERT_TRUE(f2.ok()) << f2.error();
    EXPECT_EQ(fence_status(frames, 2), 0);

    // The VkFence of the last submit: the timeline's point 2 in a binary syncobj.
    const u32 fence = *c().syncobj_create();
    ASSERT_TRUE(c().syncobj_transfer(fence, 0, frames, 2).ok());
    ASSERT_TRUE(wait(fence));
    EXPECT_EQ(fence_status(fence), 1);
    EXPECT_EQ(fence_status(frames, 1), 1);
    EXPECT_EQ(fence_status(frames, 2), 1);
    EXPECT_EQ(fence_status(queue_->init_done()), 1);
    EXPECT_EQ(c().syncobj_query({&frames, 1}).value_or({}), std::vector<u64>{2});

    // Every job ran and each subqueue's progress reached 2, without errors.
    for (const FrameOut* o : {&*f1, &*f2}) {
        const u64 n = o == &*f1 ? 1 : 2;
        EXPECT_EQ(data_.read<u64>(o->tiled_va), 0x7100000000ull + n);
        EXPECT_EQ(data_.read<u64>(o->rendered_va), 0xF100000000ull + n);
        EXPECT_EQ(data_.read<u64>(o->computed_va), 0xC100000000ull + n);
    }
    for (Subqueue sq : {kVertexTiler, kFragment, kCompute}) {
        EXPECT_EQ(queue_->seqno(sq), 2u) << sq;
        EXPECT_EQ(queue_->seq_error(sq), 0u) << sq;
    }
    EXPECT_EQ(c().group_get_state(queue_->group()).value_or({.state = ~0u}).state, 0u);

    const FrameRecord r1 = record(*f1), r2 = record(*f2);
    // Fragment after tiling: the fragment stream saw the tiling job's write, and started after
    // the tiler's SYNC_ADD64.
    EXPECT_EQ(r1.frag_saw, 0x7100000001ull);
    EXPECT_EQ(r2.frag_saw, 0x7100000002ull);
    EXPECT_GE(r1.ts_frag_start, r1.ts_tiler_end);
    EXPECT_GE(r2.ts_frag_start, r2.ts_tiler_end);
    EXPECT_GT(r1.ts_tiler_end, r1.ts_tiler_start);
    // Frame 2 started after all of frame 1 (the semaphore wait), compute included.
    EXPECT_GE(r2.ts_tiler_start, r1.ts_frag_end);
    EXPECT_GE(r2.ts_tiler_start, r1.ts_compute_end);
    EXPECT_NE(r1.ts_compute_end, 0u);

    // Frame 1's pass took three chunks from a heap created with two: the third came from the
    // kernel's OOM reply (panthor_heap_grow), which the firmware linked into the pass.
    const u64 first_chunk = queue_->heap().first_chunk_gpu_va | (queue_->chunk_size() >> 12);
    EXPECT_EQ(r1.heap_after_tiling.chunks_used, 3u);
    EXPECT_EQ(r1.heap_after_tiling.free_chunk, 0u);
    EXPECT_EQ(r1.heap_after_tiling.pass_first, first_chunk);
    EXPECT_EQ(r1.completed_first, first_chunk);
    EXPECT_EQ(r1.completed_last, r1.heap_after_tiling.last_chunk);
    EXPECT_NE(r1.completed_last & ~0xFFFull, queue_->heap().first_chunk_gpu_va);
    EXPECT_EQ(r1.completed_last & 0xFFF, queue_->chunk_size() >> 12);  // encoded with its size
    // FINISH_FRAGMENT gave them back: nothing used, the pass's last chunk heads the free list.
    EXPECT_EQ(r1.heap_after_fragment.chunks_used, 0u);
    EXPECT_EQ(r1.heap_after_fragment.free_chunk, r1.completed_last);
    // Frame 2 reused them: three chunks again, starting from the returned list, no new one.
    EXPECT_EQ(r2.heap_after_tiling.chunks_used, 3u);
    EXPECT_EQ(r2.completed_first, r1.completed_last);
    EXPECT_EQ(r2.heap_after_fragment.chunks_used, 0u);
    EXPECT_NE(r2.heap_after_fragment.free_chunk, 0u);
    // The heap grew by exactly one chunk over both frames (fdinfo counts every heap chunk).
    EXPECT_EQ(fdinfo("panthor-resident-memory"), resident_before + static_cast<long long>(queue_->chunk_size()));

    // panvk's queue_finish, then the client's own objects: nothing of the file's is left (the
    // heap pool's contexts go with the VM).
    EXPECT_TRUE(queue_->finish().ok());
    EXPECT_LT(fdinfo("panthor-resident-memory"), resident_before);
    free_buffers();
    EXPECT_TRUE(c().vm_destroy(vm_).ok());
    EXPECT_EQ(fdinfo("panthor-resident-memory"), 0);
    EXPECT_EQ(fdinfo("drm-total-memory"), 0);
}

// With max_chunks = initial_chunk_count the kernel refuses to grow (-ENOMEM), the firmware gets a
// 0 chunk and, without an exception handler, the tiling job faults with OOM: the same frame as
// above then reports the error, which shows the growth above really came from the kernel.
TEST_F(E2eFrame, WithoutRoomToGrowTheTilingJobFaultsOutOfMemory) {
    TilerHeapDesc hd = heap_desc();
    hd.max_chunks = hd.initial_chunk_count;
    ASSERT_TRUE(queue_->init(hd).ok());
    ASSERT_TRUE(wait(queue_->init_done()));
    const long long resident_before = fdinfo("panthor-resident-memory");

    const u32 frames = *c().syncobj_create();
    Result<FrameOut> f =
        queue_->submit_frame({.n = 1, .heap_chunks = 3, .signal = frames, .signal_point = 1, .track_jobs = true});
    ASSERT_TRUE(f.ok()) << f.error();
    const u64 point = 1;
    ASSERT_TRUE(c().syncobj_timeline_wait({&frames, 1}, {&point, 1}, c().deadline_after(kTimeout)).ok());

    // The tiling RUN retired with CS_FAULT OOM: its write never happened, the error propagated
    // into the tiler's progress object and the job's fence, and no chunk was added. The fault is
    // recoverable: the fragment and compute jobs completed and the group lives on.
    EXPECT_EQ(data_.read<u64>(f->tiled_va), 0u);
    EXPECT_NE(queue_->seq_error(kVertexTiler), 0u);
    EXPECT_EQ(fence_status(f->job_done[kVertexTiler]), -EINVAL);
    EXPECT_EQ(fence_status(f->job_done[kFragment]), 1);
    EXPECT_EQ(fence_status(f->job_done[kCompute]), 1);
    EXPECT_EQ(data_.read<u64>(f->computed_va), 0xC100000001ull);
    EXPECT_EQ(c().group_get_state(queue_->group()).value_or({.state = ~0u}).state, 0u);
    EXPECT_EQ(fdinfo("panthor-resident-memory"), resident_before);
    EXPECT_TRUE(queue_->finish().ok());
}

// ---- 3. teardown with work in flight ----

// A frame long enough to still be running when the client tears things down.
FrameDesc long_frame(u32 signal) {
    return {.n = 1,
            .heap_chunks = 3,
            .tiler_ns = 200 * kMs,
            .frag_ns = 200 * kMs,
            .compute_ns = 500 * kMs,
            .signal = signal,
            .signal_point = 1,
            .track_jobs = true};
}

TEST_F(E2eFrame, GroupThenHeapThenVmDestroyedWhileAFrameRunsCancelsItAndFreesEverything) {
    ASSERT_TRUE(queue_->init(heap_desc()).ok());
    ASSERT_TRUE(wait(queue_->init_done()));
    const u32 frames = *c().syncobj_create();
    Result<FrameOut> f = queue_->submit_frame(long_frame(frames));
    ASSERT_TRUE(f.ok()) << f.error();
    advance(20 * kMs);  // tiling (and the heap's growth) under way
    ASSERT_EQ(fence_status(frames, 1), 0);

    // panvk's queue_finish without waiting for idle first.
    EXPECT_TRUE(queue_->finish().ok());
    const u64 point = 1;
    ASSERT_TRUE(c().syncobj_timeline_wait({&frames, 1}, {&point, 1}, c().deadline_after(kTimeout)).ok());
    EXPECT_EQ(fence_status(frames, 1), 1);  // a chain link: signalled, without the error
    for (u32 sq = 0; sq < kSubqueueCount; sq++)
        EXPECT_EQ(fence_status(f->job_done[sq]), -ECANCELED) << sq;
    EXPECT_EQ(data_.read<u64>(f->rendered_va), 0u);
    EXPECT_EQ(data_.read<u64>(f->computed_va), 0u);
    free_buffers();
    EXPECT_TRUE(c().vm_destroy(vm_).ok());
    EXPECT_EQ(fdinfo("panthor-resident-memory"), 0);  // group, heap and pool memory gone
    EXPECT_EQ(fdinfo("drm-total-memory"), 0);
    // Nothing holds the GPU any more.
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(E2eFrame, VmDestroyedBeforeItsBusyGroupAndHeap) {
    ASSERT_TRUE(queue_->init(heap_desc()).ok());
    ASSERT_TRUE(wait(queue_->init_done()));
    const u32 frames = *c().syncobj_create();
    Result<FrameOut> f = queue_->submit_frame(long_frame(frames));
    ASSERT_TRUE(f.ok()) << f.error();
    advance(20 * kMs);
    ASSERT_EQ(fence_status(frames, 1), 0);

    // The VM handle goes first: the group keeps the VM alive, the heap pool goes with the handle.
    EXPECT_TRUE(c().vm_destroy(vm_).ok());
    EXPECT_EQ(c().tiler_heap_destroy(queue_->heap().handle).error(), -EINVAL);
    const u64 point = 1;
    ASSERT_TRUE(c().syncobj_timeline_wait({&frames, 1}, {&point, 1}, c().deadline_after(10000 * kMs)).ok());
    for (u32 sq = 0; sq < kSubqueueCount; sq++)
        EXPECT_LT(fence_status(f->job_done[sq]), 0) << sq;
    EXPECT_TRUE(c().group_destroy(queue_->group()).ok());
    for (GpuBuffer* b : {&data_, &sync_, &desc_, &cs_}) {
        EXPECT_TRUE(c().munmap(b->cpu, b->bo.size).ok());
        EXPECT_TRUE(c().bo_destroy(b->bo.handle).ok());
    }
    EXPECT_EQ(fdinfo("panthor-resident-memory"), 0);
    EXPECT_EQ(fdinfo("drm-total-memory"), 0);
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(E2eFrame, FileClosedWithGroupsHeapAndFramesInFlight) {
    ASSERT_TRUE(queue_->init(heap_desc()).ok());
    ASSERT_TRUE(wait(queue_->init_done()));
    // A second group on the same VM, busy with a long dispatch.
    const u32 other = c().group_create({.vm_id = vm_, .queues = {{}}}).value_or(0);
    ASSERT_NE(other, 0u);
    const u64 shader = desc_.put(cs::mock::run(800 * kMs));
    GpuBuffer::Alloc mem = cs_.alloc(SZ_4K);
    cs::Builder b(c().cs_config(), mem.cpu, mem.va, SZ_4K);
    b.set_spd(shader);
    b.run_compute();
    b.wait_all();
    ASSERT_TRUE(b.finish().ok());
    const u32 other_done = *c().syncobj_create();
    ASSERT_TRUE(c().group_submit(other, QueueSubmit::of(0, b, 0, {sync_signal(other_done)})).ok());

    const u32 frames = *c().syncobj_create();
    Result<FrameOut> first = queue_->submit_frame(long_frame(frames));
    ASSERT_TRUE(first.ok()) << first.error();
    // A frame queued behind the first one's semaphore: never ran when the file goes.
    const u32 frames2 = *c().syncobj_create();
    FrameDesc second_desc = long_frame(frames2);
    second_desc.n = 2;
    second_desc.waits = {timeline_wait(frames, 1)};
    Result<FrameOut> second = queue_->submit_frame(second_desc);
    ASSERT_TRUE(second.ok()) << second.error();
    advance(20 * kMs);

    // What outlives the file: the fences (a sync_file or another process's import would hold
    // them the same way).
    std::vector<kshim::dma_fence*> jobs;
    for (const FrameOut* o : {&*first, &*second})
        for (u32 sq = 0; sq < kSubqueueCount; sq++)
            jobs.push_back(hold_fence(o->job_done[sq]));
    jobs.push_back(hold_fence(other_done));
    kshim::dma_fence* points[] = {hold_fence(frames, 1), hold_fence(frames2, 1)};
    for (kshim::dma_fence* f : jobs)
        ASSERT_TRUE(f && !kshim::dma_fence_is_signaled(f));
    for (kshim::dma_fence* f : points)
        ASSERT_TRUE(f && !kshim::dma_fence_is_signaled(f));

    // Process exit: mappings, then the fd, with everything still alive.
    queue_.reset();
    close_file();
    auto all_signalled = [&] {
        for (kshim::dma_fence* f : jobs)
            if (!kshim::dma_fence_is_signaled(f))
                return false;
        for (kshim::dma_fence* f : points)
            if (!kshim::dma_fence_is_signaled(f))
                return false;
        return true;
    };
    ASSERT_TRUE(run_until(all_signalled, kTimeout));
    for (size_t i = 0; i < jobs.size(); i++)
        EXPECT_EQ(kshim::dma_fence_get_status(jobs[i]), -ECANCELED) << i;
    EXPECT_TRUE(wait_autosuspend());
}

}  // namespace
}  // namespace umd
