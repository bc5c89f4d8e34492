// The tiler heap of the mock firmware (cs_engine.h, MockHeapContext in cs_formats.h): tiling jobs
// take chunks from the heap context's free list, raise TILER_OOM when it is empty and wait for the
// host's reply; FINISH_FRAGMENT gives a render pass's chunks back; HEAP_OPERATION counts passes.
//
// Every update reads the context and chunk headers first and writes afterwards, so an access that
// stalls on an MMU fault leaves the heap as it was and the instruction can simply run again.
#include <vector>

#include "hw/csf/regs/exceptions.h"
#include "mock_hw/cs_engine.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

using namespace panthor;
using cs::Instr;

namespace {

constexpr u64 kChunkVaMask = ~0xFFFull;  // a chunk pointer is VA | size >> 12
// A FINISH_FRAGMENT range longer than this is taken for a broken chain (instead of looping).
constexpr u32 kMaxChunksPerRange = 4096;

}  // namespace

bool CsEngine::heap_take_chunks_locked(Group& g, Stream& s, u32 chunks, Step* step) {
    lockdep_assert_held(&lock_);
    if (!s.heap_ctx) {
        *step = retire_with_locked(g, s, false, DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT, 0);
        return false;
    }
    *step = Step::Block;
    MockHeapContext hc{};
    if (!mem_read_locked(g, s, s.heap_ctx, &hc, sizeof(hc)))
        return false;
    // Links `chunk` behind the pass's previous one so FINISH_FRAGMENT can walk the pass. Rewriting
    // a link that is already there is harmless, which keeps a re-execution after a stall correct.
    auto take = [&](u64 chunk) REQUIRES(lock_) {
        if (hc.pass_first && (hc.last_chunk & kChunkVaMask) != (chunk & kChunkVaMask)) {
            if (!mem_write_locked(g, s, hc.last_chunk & kChunkVaMask, &chunk, 8))
                return false;
        }
        if (!hc.pass_first)
            hc.pass_first = chunk;
        hc.last_chunk = chunk;
        hc.chunks_used++;
        return true;
    };
    u32 need = chunks;
    if (s.oom_replied) {
        s.oom_replied = false;
        if (s.oom_chunk) {
            // The chunk the host handed over on TILER_OOM satisfies the blocked job.
            if (!take(s.oom_chunk)) {
                s.oom_replied = true;  // the reply still stands when the stall resolves
                return false;
            }
            need = 0;
        } else if (s.exc_handler_addr && s.exc_handler_len && s.depth + 1 < cs::kCallStackDepth) {
            // No memory: run the tiler-OOM exception handler (e.g. an incremental render), then
            // retry the RUN, which raises TILER_OOM again if the heap is still empty.
            s.depth++;
            s.frames[s.depth] = Frame{s.exc_handler_addr, s.exc_handler_addr + s.exc_handler_len};
            s.fetch_n = 0;
            pc_set_ = true;
            *step = Step::Next;
            return false;
        } else {
            *step = retire_with_locked(g, s, false, DRM_PANTHOR_EXCEPTION_OOM, s.heap_ctx);
            return false;
        }
    }
    while (need) {
        if (!hc.free_chunk) {
            mem_write_locked(g, s, s.heap_ctx, &hc, sizeof(hc));
            s.oom_heap = s.heap_ctx;
            s.block = Block::Oom;
            const u64 out = cs_out(g.slot, s.idx);
            gpu_.mcu().write_locked(static_cast<u32>(out + offsetof(panthor_fw_cs_output_iface, heap_address)),
                                    &s.heap_ctx, 8);
            cs_publish_status_locked(s);
            cs_raise_event_locked(g, s, CS_TILER_OOM);
            return false;
        }
        const u64 chunk = hc.free_chunk;
        u64 next = 0;
        if (!mem_read_locked(g, s, chunk & kChunkVaMask, &next, 8))
            return false;
        hc.free_chunk = next;
        if (!take(chunk))
            return false;
        need--;
    }
    return mem_write_locked(g, s, s.heap_ctx, &hc, sizeof(hc));
}

CsEngine::Step CsEngine::heap_operation_locked(Group& g, Stream& s, const Instr& in) {
    lockdep_assert_held(&lock_);
    if (sb_busy(s, in.wait_mask)) {
        s.block = Block::SbWait;
        s.wait_mask = in.wait_mask;
        s.wait_instr = false;
        return Step::Block;
    }
    switch (in.heap_op) {
    case cs::HEAP_VT_START: {
        // A new tiling pass: the chunks taken from now on form its range.
        const u64 zero = 0;
        if (s.heap_ctx && !mem_write_locked(g, s, s.heap_ctx + offsetof(MockHeapContext, pass_first), &zero, 8))
            return Step::Block;
        s.heap_vt_start++;
        return Step::Next;
    }
    case cs::HEAP_VT_END: s.heap_vt_end++; return Step::Next;
    case cs::HEAP_FRAG_END: s.heap_frag_end++; return Step::Next;
    default: {
        const u64 pc_va = s.depth == 0 ? s.ring_base + (s.frames[0].pc % s.ring_size) : s.frames[s.depth].pc;
        fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_INSTR_INVALID, pc_va);
        return Step::Block;
    }
    }
}

CsEngine::Step CsEngine::finish_fragment_locked(Group& g, Stream& s, const Instr& in) {
    lockdep_assert_held(&lock_);
    if (in.first_chunk + 2u > nregs_ || in.last_chunk + 2u > nregs_) {
        const u64 pc_va = s.depth == 0 ? s.ring_base + (s.frames[0].pc % s.ring_size) : s.frames[s.depth].pc;
        fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_INSTR_INVALID, pc_va);
        return Step::Block;
    }
    if (sb_busy(s, in.wait_mask)) {
        s.block = Block::SbWait;
        s.wait_mask = in.wait_mask;
        s.wait_instr = false;
        return Step::Block;
    }
    const u64 first = reg64(s, in.first_chunk), last = reg64(s, in.last_chunk);
    if (first) {
        // The pass's chunks go back to the heap: walk first..last through the chunk headers,
        // then push each onto the free list.
        if (!s.heap_ctx || !last)
            return retire_with_locked(g, s, false, DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT, s.heap_ctx);
        MockHeapContext hc{};
        if (!mem_read_locked(g, s, s.heap_ctx, &hc, sizeof(hc)))
            return Step::Block;
        std::vector<u64> range;
        for (u64 c = first;;) {
            range.push_back(c);
            if ((c & kChunkVaMask) == (last & kChunkVaMask))
                break;
            if (range.size() >= kMaxChunksPerRange)
                c = 0;
            else if (!mem_read_locked(g, s, c & kChunkVaMask, &c, 8))
                return Step::Block;
            if (!c)
                return retire_with_locked(g, s, false, DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT, first);
        }
        for (u64 c : range) {
            if (!mem_write_locked(g, s, c & kChunkVaMask, &hc.free_chunk, 8))
                return Step::Block;
            hc.free_chunk = c;
        }
        hc.chunks_used = hc.chunks_used > range.size() ? hc.chunks_used - range.size() : 0;
        if (!mem_write_locked(g, s, s.heap_ctx, &hc, sizeof(hc)))
            return Step::Block;
    }
    if (in.inc_frag_end)
        s.heap_frag_end++;
    return Step::Next;
}

}  // namespace mock_hw
