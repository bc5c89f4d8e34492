// The tiler heap: FINISH_FRAGMENT returns a pass's chunks so later tiling reuses them, the chunk
// the host hands over on TILER_OOM joins the pass, and the zero answer with an exception handler.
#include <algorithm>

#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

constexpr u64 kChunkSize = 0x20000;  // 128 KiB, panthor's minimum
constexpr u64 kChunkEnc = kChunkSize >> 12;

class CsHeap : public CsTest {
protected:
    // `n` chunks linked through their headers like panthor's initial chunks; returns the heap
    // context (free_chunk = the head) and the chunk VAs.
    u64 make_heap(CsfRig& r, u32 n, std::vector<u64>* chunks) {
        u8* ctx;
        const u64 heap = r.gpu_alloc(64, &ctx);
        for (u32 i = 0; i < n; i++)
            chunks->push_back(r.gpu_alloc(kChunkSize));
        r.locked([&] {
            for (u32 i = 0; i < n; i++)
                *r.host<u64>((*chunks)[i]) = i + 1 < n ? ((*chunks)[i + 1] | kChunkEnc) : 0;
            reinterpret_cast<MockHeapContext*>(ctx)->free_chunk = n ? ((*chunks)[0] | kChunkEnc) : 0;
        });
        return heap;
    }
    MockHeapContext heap_ctx(CsfRig& r, u64 heap) {
        return r.locked([&] { return *r.host<MockHeapContext>(heap); });
    }
    // The free list, head first.
    std::vector<u64> free_list(CsfRig& r, u64 heap) {
        return r.locked([&] {
            std::vector<u64> out;
            for (u64 c = r.host<MockHeapContext>(heap)->free_chunk; c && out.size() < 64;
                 c = *r.host<u64>(c & ~0xFFFull))
                out.push_back(c & ~0xFFFull);
            return out;
        });
    }
};

constexpr u32 kPasses = 6;

// kPasses tiling + fragment passes, each pass's tiling taking 2 chunks of a 3-chunk heap. The
// stream loads the pass's first/last chunk from the heap context after tiling and hands them to
// FINISH_FRAGMENT; with `returns` false it hands over 0 (nothing returned).
class CsHeapLoop : public CsHeap, public ::testing::WithParamInterface<bool> {};

TEST_P(CsHeapLoop, FragmentPassesReturnChunksSoTilingNeverRunsOutElseOom) {
    const bool returns = GetParam();
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    std::vector<u64> chunks;
    const u64 heap = make_heap(r, 3, &chunks);
    u8* m;
    const u64 done = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    const u64 tiler = r.shader(MockShader::Run, 5 * NSEC_PER_USEC, 0, 0, /*heap_chunks=*/2);
    const u64 frag = r.shader(MockShader::Run, 5 * NSEC_PER_USEC);
    r.push(q,
           {cs::move48(0, heap), cs::heap_set(0), cs::move32(20, kPasses), cs::move48(16, tiler), cs::move48(40, frag),
            // loop:
            cs::heap_operation(cs::HEAP_VT_START), cs::run_tiling(), cs::wait(1), cs::heap_operation(cs::HEAP_VT_END),
            cs::load_multiple(24, 0, 0xF, offsetof(MockHeapContext, last_chunk)),  // d24 = last, d26 = pass_first
            returns ? cs::nop() : cs::move48(26, 0), cs::run_fragment(),
            cs::finish_fragment(true, /*wait=*/1, /*last=*/24, /*first=*/26, 0), cs::add_imm32(20, 20, -1),
            cs::branch(cs::NEQUAL, 20, -10),
            // after the loop:
            cs::move48(30, done), cs::move32(32, 1), cs::store_multiple(32, 30, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    if (returns) {
        ASSERT_TRUE(wait([&] { return r.locked([&] { return *reinterpret_cast<u32*>(m) == 1; }); }));
        EXPECT_EQ(r.cs_events(0, 0) & CS_TILER_OOM, 0u);
        EXPECT_EQ(heap_ctx(r, heap).chunks_used, 0u);
        std::vector<u64> free = free_list(r, heap);
        std::sort(free.begin(), free.end());
        EXPECT_EQ(free, chunks);  // every chunk back, each once
        status_update(r, 0);
        const auto* o = r.cs_out(0, 0);
        EXPECT_EQ(r.locked([&] { return o->heap_vt_start; }), kPasses);
        EXPECT_EQ(r.locked([&] { return o->heap_vt_end; }), kPasses);
        EXPECT_EQ(r.locked([&] { return o->heap_frag_end; }), kPasses);
    } else {
        ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_TILER_OOM; }));
        const auto* o = r.cs_out(0, 0);
        EXPECT_EQ(r.locked([&] { return o->heap_address; }), heap);
        EXPECT_EQ(r.locked([&] { return o->heap_vt_start; }), 2u);  // the second pass ran out
        EXPECT_EQ(r.locked([&] { return o->heap_frag_end; }), 1u);
        EXPECT_EQ(heap_ctx(r, heap).chunks_used, 3u);
        EXPECT_EQ(r.locked([&] { return *reinterpret_cast<u32*>(m); }), 0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Heap, CsHeapLoop, ::testing::Bool(), [](const ::testing::TestParamInfo<bool>& i) {
    return i.param ? "ChunksReturned" : "ChunksKept";
});

TEST_F(CsHeap, ChunkFromTheOomReplyJoinsThePassAndIsReturnedWithIt) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    std::vector<u64> chunks;
    const u64 heap = make_heap(r, 1, &chunks);
    const u64 spare = r.gpu_alloc(kChunkSize);
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q,
           {cs::move48(0, heap), cs::heap_set(0), cs::heap_operation(cs::HEAP_VT_START),
            cs::move48(16, r.shader(MockShader::Run, 5 * NSEC_PER_USEC, 0, 0, 2)), cs::run_tiling(), cs::wait(1),
            cs::heap_operation(cs::HEAP_VT_END), cs::load_multiple(24, 0, 0xF, offsetof(MockHeapContext, last_chunk))});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_TILER_OOM; }));
    r.locked([&] { r.cs_in(0, 0)->heap_start = r.cs_in(0, 0)->heap_end = spare | kChunkEnc; });
    r.ack_cs(0, 0, CS_TILER_OOM);
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return q.out->extract == q.in->insert; }); }));
    MockHeapContext hc = heap_ctx(r, heap);
    EXPECT_EQ(hc.pass_first, chunks[0] | kChunkEnc);
    EXPECT_EQ(hc.last_chunk, spare | kChunkEnc);
    EXPECT_EQ(hc.chunks_used, 2u);
    EXPECT_EQ(r.locked([&] { return *r.host<u64>(chunks[0]); }), spare | kChunkEnc);  // linked by the firmware
    // Fragment done: both go back.
    r.push(q, {cs::finish_fragment(true, 0, 24, 26, 0)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return heap_ctx(r, heap).chunks_used == 0; }));
    std::vector<u64> free = free_list(r, heap);
    EXPECT_EQ(free, (std::vector<u64>{spare, chunks[0]}));
}

TEST_F(CsHeap, FinishFragmentOverABrokenChainIsDataInvalidFault) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    std::vector<u64> chunks;
    const u64 heap = make_heap(r, 2, &chunks);
    const u64 stray = r.gpu_alloc(kChunkSize);  // not reachable from chunks[0]
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q, {cs::move48(0, heap), cs::heap_set(0), cs::move48(24, stray | kChunkEnc),
               cs::move48(26, chunks[0] | kChunkEnc), cs::finish_fragment(true, 0, 24, 26, 0)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FAULT; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fault; }), u32{DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT});
    EXPECT_EQ(free_list(r, heap), chunks);  // untouched
}

TEST_F(CsHeap, ZeroOomAnswerRunsTheExceptionHandlerThenRaisesOomAgain) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    std::vector<u64> chunks;
    const u64 heap = make_heap(r, 0, &chunks);
    const u64 spare = r.gpu_alloc(kChunkSize);
    u8* m;
    const u64 marks = r.gpu_alloc(64, &m);
    // The handler (an "incremental render") counts its runs at marks[0].
    const u64 handler = r.buffer(
        {cs::move48(60, marks), cs::load_multiple(62, 60, 1), cs::add_imm32(62, 62, 1), cs::store_multiple(62, 60, 1)});
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q, {cs::move48(0, heap), cs::heap_set(0), cs::move48(2, handler), cs::move32(4, 32),
               cs::set_exception_handler(cs::EXCEPTION_TILER_OOM, 2, 4),
               cs::move48(16, r.shader(MockShader::Write, 5 * NSEC_PER_USEC, marks + 8, 0x77, 1)), cs::run_tiling(),
               cs::wait(1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_TILER_OOM; }));
    // No memory for it: heap_start = 0.
    r.locked([&] { r.cs_in(0, 0)->heap_start = r.cs_in(0, 0)->heap_end = 0; });
    r.ack_cs(0, 0, CS_TILER_OOM);
    r.ring_cs(0, 0);
    // The handler ran once, then the RUN raised TILER_OOM again.
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_TILER_OOM; }));
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u32*>(m)[0]; }), 1u);
    EXPECT_EQ(r.cs_events(0, 0) & CS_FAULT, 0u);
    // This time there is a chunk: the job runs.
    r.locked([&] { r.cs_in(0, 0)->heap_start = r.cs_in(0, 0)->heap_end = spare | kChunkEnc; });
    r.ack_cs(0, 0, CS_TILER_OOM);
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return reinterpret_cast<u64*>(m)[1] == 0x77; }); }));
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u32*>(m)[0]; }), 1u);
}

}  // namespace
}  // namespace mock_hw::testing
