// Job descriptors of a Job Manager GPU: what a job slot reads from GPU memory when it walks a job
// chain. The 32-byte job header every job starts with, the job types, and the payloads a mock
// executes (WRITE_VALUE, CACHE_FLUSH) or sizes a job by (the invocation of compute/vertex jobs,
// the tile bounds of fragment jobs). Only those fields are named; the rest of a payload stays
// opaque. Layouts: docs/hw/jm/job-descriptors.md (Mesa's genxml v5/v6/v7/v9.xml and IGT's
// lib/panfrost-job.h are the public sources of these facts). All descriptors are little-endian.
#pragma once
#include <cstddef>
#include <cstdint>

namespace panfrost::desc {

// ---- Job header (32 bytes at the job's address; the payload starts at +0x20) ----

inline constexpr uint32_t kJobHeaderSize = 32;
inline constexpr uint32_t kJobPayloadOffset = 0x20;
// Job alignment: 64 bytes up to v7 (Midgard, Bifrost), 128 bytes on v9 (Valhall-JM).
inline constexpr uint32_t kJobAlignV7 = 64;
inline constexpr uint32_t kJobAlignV9 = 128;

struct JobHeader {
    uint32_t exception_status;       // written by the GPU: 0 before, 1 (DONE) after, else a code
    uint32_t first_incomplete_task;  // written by the GPU
    uint64_t fault_pointer;          // written by the GPU on a fault
    uint32_t control;                // word 4: is_64b, type, barrier, flags, index (helpers below)
    uint16_t dependency_1;           // index of a job of the chain that must complete first, 0 none
    uint16_t dependency_2;           // a second such index (Mesa: the tiler-order dependency)
    uint64_t next;                   // next job's VA, 0 ends the chain; 32-bit form: the low word
};
static_assert(sizeof(JobHeader) == kJobHeaderSize);
static_assert(offsetof(JobHeader, exception_status) == 0x00 && offsetof(JobHeader, first_incomplete_task) == 0x04 &&
              offsetof(JobHeader, fault_pointer) == 0x08 && offsetof(JobHeader, control) == 0x10 &&
              offsetof(JobHeader, dependency_1) == 0x14 && offsetof(JobHeader, dependency_2) == 0x16 &&
              offsetof(JobHeader, next) == 0x18);
// The words the GPU writes back and panvk zeroes before re-submitting a job.
inline constexpr uint32_t kJobHeaderStatusBytes = 16;
inline constexpr uint32_t kJobStatusDone = 1;  // exception_status of a completed job

// Word 4 (control).
inline constexpr uint32_t kJobIs64b = 1u << 0;  // v4..v7: `next` is 64-bit; v9 drops the bit
inline constexpr uint32_t kJobTypeShift = 1;    // [7:1]
inline constexpr uint32_t kJobTypeMask = 0x7Fu << kJobTypeShift;
inline constexpr uint32_t kJobBarrier = 1u << 8;               // wait for every earlier job of the chain
inline constexpr uint32_t kJobInvalidateCache = 1u << 9;       // v4..v7
inline constexpr uint32_t kJobSuppressPrefetch = 1u << 11;     // Mesa sets it on some jobs
inline constexpr uint32_t kJobEnableTextureMapper = 1u << 12;  // v4..v7
inline constexpr uint32_t kJobRelaxDependency1 = 1u << 14;
inline constexpr uint32_t kJobRelaxDependency2 = 1u << 15;
inline constexpr uint32_t kJobIndexShift = 16;  // [31:16]

enum JobType : uint32_t {
    kJobNotStarted = 0,  // patched into a real type by an earlier job (Mesa's indirect dispatch)
    kJobNull = 1,
    kJobWriteValue = 2,
    kJobCacheFlush = 3,
    kJobCompute = 4,
    kJobVertex = 5,    // v5..v7
    kJobGeometry = 6,  // v5..v7, never emitted by Mesa
    kJobTiler = 7,
    kJobFused = 8,  // v5..v7: vertex + tiler
    kJobFragment = 9,
    kJobIndexedVertex = 10,  // v6, v7 (IDVS)
    kJobMallocVertex = 11,   // v9
};
inline constexpr uint32_t kJobTypeCount = 12;

constexpr uint32_t job_control(uint32_t type, uint32_t index, bool barrier = false, bool is_64b = true) {
    return (is_64b ? kJobIs64b : 0) | (type << kJobTypeShift) | (barrier ? kJobBarrier : 0) | (index << kJobIndexShift);
}
constexpr uint32_t job_type(uint32_t control) {
    return (control & kJobTypeMask) >> kJobTypeShift;
}
constexpr uint32_t job_index(uint32_t control) {
    return control >> kJobIndexShift;
}
constexpr bool job_barrier(uint32_t control) {
    return (control & kJobBarrier) != 0;
}
constexpr bool job_is_64b(uint32_t control) {
    return (control & kJobIs64b) != 0;
}
// The next job's VA: the whole 64-bit word when the header says 64-bit (always on v9), else the
// 32-bit value at 0x18.
constexpr uint64_t job_next(const JobHeader& h, bool v9) {
    return (v9 || job_is_64b(h.control)) ? h.next : (h.next & 0xFFFFFFFFu);
}
// Raw word-4 values IGT's tests use: a NULL job and a WRITE_VALUE job (64-bit, index 1), and its
// endless-loop job (WRITE_VALUE with barrier, invalidate-cache and suppress-prefetch).
static_assert(job_control(kJobNull, 1) == 0x00010003);
static_assert(job_control(kJobWriteValue, 1) == 0x00010005);
static_assert((job_control(kJobWriteValue, 1, true) | kJobInvalidateCache | kJobSuppressPrefetch) == 0x00010B05);

// Which types exist on which architecture (Mesa's arch numbers: 5 Midgard T8xx, 6/7 Bifrost, 9
// Valhall-JM). A type the GPU does not know fails the job with JOB_CONFIG_FAULT in the mock.
constexpr bool job_type_exists(uint32_t type, uint32_t arch) {
    switch (type) {
    case kJobNotStarted:
    case kJobNull:
    case kJobWriteValue:
    case kJobCacheFlush:
    case kJobCompute:
    case kJobTiler:
    case kJobFragment: return true;
    case kJobVertex:
    case kJobGeometry:
    case kJobFused: return arch <= 7;
    case kJobIndexedVertex: return arch == 6 || arch == 7;
    case kJobMallocVertex: return arch >= 9;
    default: return false;
    }
}

// ---- WRITE_VALUE payload (job + 0x20) ----

enum WriteValueType : uint32_t {
    kWriteValueCycleCounter = 1,     // the GPU cycle counter, 64 bits
    kWriteValueSystemTimestamp = 2,  // the GPU timestamp, 64 bits
    kWriteValueZero = 3,             // 64 zero bits
    kWriteValueImmediate8 = 4,       // v6 and later: the low bytes of `immediate`
    kWriteValueImmediate16 = 5,
    kWriteValueImmediate32 = 6,
    kWriteValueImmediate64 = 7,
};

struct WriteValuePayload {
    uint64_t address;  // GPU VA written, through the slot's address space
    uint32_t type;     // WriteValueType
    uint32_t reserved;
    uint64_t immediate;  // v6 and later (v5 has no immediate)
};
static_assert(sizeof(WriteValuePayload) == 24 && offsetof(WriteValuePayload, type) == 8 &&
              offsetof(WriteValuePayload, immediate) == 16);
inline constexpr uint32_t kWriteValueJobSize = kJobHeaderSize + sizeof(WriteValuePayload);
static_assert(kJobPayloadOffset + offsetof(WriteValuePayload, immediate) == 0x30);

// Bytes written for each type; 0 for a value that is not a write-value type. The counter,
// timestamp and zero widths are inferred (64-bit), not stated by a public source.
constexpr uint32_t write_value_width(uint32_t type) {
    switch (type) {
    case kWriteValueCycleCounter:
    case kWriteValueSystemTimestamp:
    case kWriteValueZero:
    case kWriteValueImmediate64: return 8;
    case kWriteValueImmediate8: return 1;
    case kWriteValueImmediate16: return 2;
    case kWriteValueImmediate32: return 4;
    default: return 0;
    }
}

// ---- CACHE_FLUSH payload (job + 0x20, 8 bytes) ----

struct CacheFlushPayload {
    uint32_t word0;  // shader-core, job-manager and tiler caches
    uint32_t word1;  // L2
};
static_assert(sizeof(CacheFlushPayload) == 8);
inline constexpr uint32_t kFlushCleanShaderCoreLs = 1u << 0;
inline constexpr uint32_t kFlushInvalidateShaderCoreLs = 1u << 1;
inline constexpr uint32_t kFlushInvalidateShaderCoreOther = 1u << 2;
inline constexpr uint32_t kFlushJobManagerClean = 1u << 16;
inline constexpr uint32_t kFlushJobManagerInvalidate = 1u << 17;
inline constexpr uint32_t kFlushTilerClean = 1u << 24;
inline constexpr uint32_t kFlushTilerInvalidate = 1u << 25;
inline constexpr uint32_t kFlushL2Clean = 1u << 0;  // word1
inline constexpr uint32_t kFlushL2Invalidate = 1u << 1;

// ---- Invocation (v6/v7 compute, vertex, tiler and indexed-vertex jobs: job + 0x20, 8 bytes) ----
// The first word packs six "minus one" counts one after the other: the workgroup size X, Y, Z and
// the workgroup count X, Y, Z. Each count starts at its shift (X size at bit 0) and ends below the
// next one (the Z count ends at bit 31). The second word holds the five shifts and the thread-group
// split. The job runs size_x * size_y * size_z * count_x * count_y * count_z invocations.

struct Invocation {
    uint32_t invocations;
    uint32_t shifts;  // [4:0] size Y, [9:5] size Z, [15:10] count X, [21:16] count Y, [27:22] count Z
};
static_assert(sizeof(Invocation) == 8);
inline constexpr uint32_t kInvocationOffset = kJobPayloadOffset;
// v7 job sizes. Compute (also vertex and geometry): invocation, parameters at +0x28 (job task
// split in [29:26] of its first word), draw at +0x40. Tiler: invocation, primitive at +0x28,
// primitive size +0x40, tiler pointer +0x48, draw at +0x80. Indexed vertex: as tiler, fragment draw
// at +0x80 and vertex draw at +0x100.
inline constexpr uint32_t kComputeJobSizeV7 = 192;
inline constexpr uint32_t kComputeJobParametersOffsetV7 = 0x28;
inline constexpr uint32_t kComputeJobDrawOffsetV7 = 0x40;
inline constexpr uint32_t kTilerJobSizeV7 = 256;
inline constexpr uint32_t kTilerJobTilerOffsetV7 = 0x48;
inline constexpr uint32_t kIndexedVertexJobSizeV7 = 384;

enum InvocationField : uint32_t { kSizeX = 0, kSizeY, kSizeZ, kCountX, kCountY, kCountZ };
constexpr uint32_t invocation_shift(const Invocation& i, uint32_t field) {
    switch (field) {
    case kSizeX: return 0;
    case kSizeY: return i.shifts & 0x1F;
    case kSizeZ: return (i.shifts >> 5) & 0x1F;
    case kCountX: return (i.shifts >> 10) & 0x3F;
    case kCountY: return (i.shifts >> 16) & 0x3F;
    case kCountZ: return (i.shifts >> 22) & 0x3F;
    default: return 32;
    }
}
constexpr uint32_t invocation_thread_group_split(const Invocation& i) {
    return i.shifts >> 28;
}
// The count of one field (size or workgroup count along one axis), at least 1.
constexpr uint32_t invocation_field(const Invocation& i, uint32_t field) {
    const uint32_t lo = invocation_shift(i, field);
    const uint32_t hi = field == kCountZ ? 32 : invocation_shift(i, field + 1);
    if (lo >= 32 || hi <= lo)
        return 1;
    const uint32_t width = hi - lo;
    const uint32_t mask = width >= 32 ? ~0u : ((1u << width) - 1);
    return ((i.invocations >> lo) & mask) + 1;
}
constexpr uint64_t invocation_total(const Invocation& i) {
    uint64_t n = 1;
    for (uint32_t f = kSizeX; f <= kCountZ; f++)
        n *= invocation_field(i, f);
    return n;
}

// ---- Fragment payload (job + 0x20) ----
// Bounds in tiles, inclusive: [11:0] X, [27:16] Y. bound_max bit 31: a tile-enable map is given;
// v9: bound_max [30:28] is the tile render order. The map's row stride is 8 bits wide.

struct FragmentPayload {
    uint32_t bound_min;
    uint32_t bound_max;
    uint64_t framebuffer;  // [5:0] tags (bit 0 type, bit 1 ZS/CRC extension, [5:2] targets - 1)
    uint64_t tile_enable_map;
    uint32_t tile_enable_map_stride;  // [7:0]
    uint32_t reserved;
};
inline constexpr uint32_t kFragmentHasTileEnableMap = 1u << 31;
static_assert(sizeof(FragmentPayload) == 32 && offsetof(FragmentPayload, framebuffer) == 8 &&
              offsetof(FragmentPayload, tile_enable_map) == 16 &&
              offsetof(FragmentPayload, tile_enable_map_stride) == 24);
constexpr uint32_t fragment_bound_x(uint32_t bound) {
    return bound & 0xFFF;
}
constexpr uint32_t fragment_bound_y(uint32_t bound) {
    return (bound >> 16) & 0xFFF;
}
constexpr uint32_t fragment_bound(uint32_t x, uint32_t y) {
    return (x & 0xFFF) | ((y & 0xFFF) << 16);
}
// Tiles the job covers (0 when the bounds are inverted).
constexpr uint64_t fragment_tile_count(const FragmentPayload& f) {
    const uint32_t x0 = fragment_bound_x(f.bound_min), x1 = fragment_bound_x(f.bound_max);
    const uint32_t y0 = fragment_bound_y(f.bound_min), y1 = fragment_bound_y(f.bound_max);
    if (x1 < x0 || y1 < y0)
        return 0;
    return uint64_t{x1 - x0 + 1} * (y1 - y0 + 1);
}

}  // namespace panfrost::desc
