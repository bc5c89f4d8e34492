// The in-memory formats the mock firmware defines (the reference leaves them to the firmware):
// the "mock shader" a RUN_* executes, the tiler heap context, and the suspend-buffer record of one
// stream. Tests and the simulator build workloads with the first two and may inspect (or, to test
// the checks, forge) the third. Layouts are described in docs/mock_hw.md; the engine is
// cs_engine.h.
#pragma once
#include <cstddef>

#include <cstdint>
#include "hw/csf/cs_isa.h"

namespace mock_hw {

// The "mock shader" a RUN_* instruction executes: 64 bytes at the address the RUN reads its
// program descriptor from (RUN_COMPUTE/RUN_TILING/RUN_COMPUTE_INDIRECT: the SPD dreg
// d(16 + 2 * spd_sel); RUN_IDVS: d16; RUN_FRAGMENT: d40 & ~63 (the FBD pointer); RUN_FULLSCREEN:
// the DCD dreg). Read through the group's AS, so an unmapped descriptor faults like hardware.
struct MockShader {
    static constexpr std::uint32_t kMagic = 0x4448534D;  // "MSHD"
    enum Kind : std::uint32_t {
        Run = 0,     // occupy a core for duration_ns
        Write = 1,   // ...then write the 64-bit `value` at `addr` (group AS)
        Hang = 2,    // never completes (a shader stuck in a loop)
        Access = 3,  // ...then read 8 bytes at `addr` (to provoke an MMU fault)
        Fault = 4,   // ...then report CS_FAULT with exception `value` (e.g. 0x58 DATA_INVALID_FAULT)
    };
    static constexpr std::uint32_t kLastKind = Fault;
    std::uint32_t magic = kMagic;
    std::uint32_t kind = Run;
    std::uint64_t duration_ns = 0;
    std::uint64_t addr = 0;
    std::uint64_t value = 0;
    std::uint32_t heap_chunks = 0;  // RUN_IDVS / RUN_TILING: tiler heap chunks this job consumes
    // The firmware's own marks (a job in the suspend buffer keeps them).
    enum Flags : std::uint32_t {
        // Not a record in memory: a job on real Valhall descriptors, modelled as `Run` for the
        // time its size gives (docs/mock_hw.md, "Real descriptors").
        kFromDescriptors = 1,
    };
    std::uint32_t flags = 0;
    std::uint32_t reserved[6] = {};
};
static_assert(sizeof(MockShader) == 64);

// The mock's tiler heap context: the 32 bytes at the HEAP_SET address (FW-owned; panthor only
// zeroes it, so whoever creates the heap seeds `free_chunk` with first_heap_chunk_gpu_va).
// Chunk pointers use the chunk header's encoding, VA | size >> 12.
//  - free_chunk: head of the free list, linked through each chunk header's `next`; 0 = empty.
//  - chunks_used: chunks handed to tiling and not yet returned by FINISH_FRAGMENT.
//  - last_chunk: the chunk taken most recently.
//  - pass_first: the first chunk taken since the last HEAP_OPERATION VT_START (0: none yet).
// The chunks one tiling pass takes are linked pass_first -> ... -> last_chunk through their
// headers (the firmware writes the link when a chunk did not come next in the free list), so a
// stream that loads pass_first/last_chunk after its tiling (LOAD_MULTIPLE at +0x10) can hand the
// pair to FINISH_FRAGMENT, which walks it and pushes the chunks back onto the free list.
struct MockHeapContext {
    std::uint64_t free_chunk;
    std::uint64_t chunks_used;
    std::uint64_t last_chunk;
    std::uint64_t pass_first;
};
static_assert(sizeof(MockHeapContext) == 32);
static_assert(offsetof(MockHeapContext, last_chunk) == 0x10 && offsetof(MockHeapContext, pass_first) == 0x18);

// ---- Suspend buffer ------------------------------------------------------------------------------
// SUSPEND writes one SavedStream per CS slot at suspend_buf + cs * kSaveStride (through AS 0):
// the stream's registers, position and call stack, scoreboards, pending wait, heap state, and the
// jobs SUSPEND preempted (a job's shader with `duration_ns` = the time it had left, so a write or
// access it had not done yet is still pending). RESUME checks the record (magic, version,
// checksum, call depth, job count, every job's shader and scoreboard slot, and that each
// scoreboard entry counts exactly the saved jobs that signal it) before trusting any of it.
inline constexpr std::uint32_t kSaveStride = 0x1000;
inline constexpr std::uint32_t kSaveMagic = 0x53435355;  // "USCS"
// 3: word-wise checksum over the written part only; 4: exc_va and spin_us
inline constexpr std::uint32_t kSaveVersion = 4;
// Jobs one stream may have in flight; a RUN_* beyond it waits (status RESOURCE), which bounds the
// jobs a suspend has to save.
inline constexpr std::uint32_t kMaxJobsPerStream = 32;

struct SavedJob {
    MockShader shader;      // duration_ns = the time the job had left
    std::uint64_t seq;      // issue order (restored jobs keep their relative order)
    std::uint8_t sb_slot;   // the scoreboard entry the job signals
    std::uint8_t endpoint;  // 0 compute, 1 fragment
    std::uint8_t reserved[6];
};
static_assert(sizeof(SavedJob) == 80);

struct SavedStream {
    std::uint32_t magic, version, flags, depth;
    std::uint64_t frames[2 * panthor::cs::kCallStackDepth];  // pc, end per frame (root end = CS_INSERT, re-read)
    std::uint32_t sb[16];
    std::uint8_t sb_endpoint, sb_other, sync_cond, block;
    std::uint32_t last_error;
    std::uint64_t sync_ptr, sync_value, heap_ctx;
    std::uint32_t vt_start, vt_end, frag_end, req_resource;
    std::uint64_t progress, exc_addr;
    std::uint32_t exc_len, exc_type;
    std::uint64_t oom_heap;
    std::uint64_t exc_va;  // the instruction a pending CS_FAULT / CS_FATAL was raised by (0: none, or asynchronous)
    std::uint32_t regs[128];
    std::uint32_t njobs;
    std::uint32_t spin_us;  // the group's no-progress time (progress timer) when suspended, in microseconds
    // Only the first njobs entries are written; the rest of the array keeps whatever the buffer
    // held (a suspend writes what it saved, not the whole 3.4 KiB record).
    SavedJob jobs[kMaxJobsPerStream];
    std::uint64_t checksum;  // saved_stream_checksum: the fixed part and the njobs entries
};
static_assert(sizeof(SavedStream) <= kSaveStride);
inline constexpr std::uint32_t kSavedStarted = 1, kSavedInError = 2, kSavedSync64 = 4, kSavedWaitInstr = 8,
                               kSavedReexec = 16;
// The part of a record before the job entries, and the bytes a suspend writes for `njobs` jobs.
inline constexpr size_t kSavedFixedSize = offsetof(SavedStream, jobs);
inline constexpr size_t saved_stream_size(std::uint32_t njobs) {
    return kSavedFixedSize + size_t{njobs} * sizeof(SavedJob);
}
static_assert(kSavedFixedSize % 8 == 0 && sizeof(SavedJob) % 8 == 0);

// FNV-1a over 64-bit words, in four interleaved lanes so that the multiplications overlap (a
// suspend and a resume check eight records each); the lanes are folded with FNV-1a again. Each
// step is a bijection of its word, so changing any single word always changes the checksum. Covers
// the fixed part and the first njobs entries (clamped to the array, so a forged njobs cannot read
// past it).
inline std::uint64_t saved_stream_checksum(const SavedStream& sv) {
    constexpr std::uint64_t kPrime = 0x100000001b3ull;
    const std::uint32_t njobs = sv.njobs < kMaxJobsPerStream ? sv.njobs : kMaxJobsPerStream;
    const size_t words = saved_stream_size(njobs) / 8;
    const auto* p = reinterpret_cast<const unsigned char*>(&sv);
    auto word = [p](size_t w) {
        std::uint64_t v;
        __builtin_memcpy(&v, p + 8 * w, 8);
        return v;
    };
    // Four scalars rather than an array: the lanes stay in registers.
    std::uint64_t l0 = 0xcbf29ce484222325ull, l1 = 0x84222325cbf29ce4ull, l2 = 0xcbf29ce4cbf29ce4ull,
                  l3 = 0x8422232584222325ull;
    size_t i = 0;
    for (; i + 4 <= words; i += 4) {
        l0 = (l0 ^ word(i)) * kPrime;
        l1 = (l1 ^ word(i + 1)) * kPrime;
        l2 = (l2 ^ word(i + 2)) * kPrime;
        l3 = (l3 ^ word(i + 3)) * kPrime;
    }
    if (i < words)
        l0 = (l0 ^ word(i++)) * kPrime;
    if (i < words)
        l1 = (l1 ^ word(i++)) * kPrime;
    if (i < words)
        l2 = (l2 ^ word(i++)) * kPrime;
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uint64_t v : {l0, l1, l2, l3})
        h = (h ^ v) * kPrime;
    return h;
}

}  // namespace mock_hw
