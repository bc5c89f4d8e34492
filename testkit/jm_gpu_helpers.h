// Helpers for driving the mock Mali-G52 without a driver (tests, benchmarks): register access over
// any mock GPU, hand-built Mali-LPAE page tables in the physical arena, the power-up and AS
// programming panfrost does, and a builder for job chains in GPU memory.
#pragma once
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "hw/jm/job_desc.h"
#include "hw/jm/regs/gpu_regs.h"
#include "hw/jm/regs/job_regs.h"
#include "hw/jm/regs/mmu_regs.h"
#include "mock_jm/jm_gpu.h"
#include "testkit/mock_gpu_helpers.h"

namespace mock_jm::testing {

using kshim::NSEC_PER_MSEC;
using kshim::NSEC_PER_USEC;
using kshim::u16;
using mock_hw::testing::PhysPages;

// Register access the way panfrost does it.
using JmDrv = mock_hw::testing::GpuDrv<JmGpu>;

// Mali-LPAE descriptors (io-pgtable ARM_MALI_LPAE): type 3 = table, type 1 = block or page at
// levels 1-3, BIT(6) readable, BIT(7) writable, bits 53/54 execute-never, AttrIndx [4:2].
inline constexpr u64 kMaliTable = 3;
inline constexpr u64 kMaliLeaf = 1;
inline constexpr u64 kMaliRead = 1ull << 6;
inline constexpr u64 kMaliWrite = 1ull << 7;
inline constexpr u64 kMaliXn = 3ull << 53;
inline constexpr u64 kMaliRw = kMaliRead | kMaliWrite | (2ull << 8) | (1ull << 2);
// What panfrost programs: TRANSTAB = table | ADRMODE_TABLE | READ_INNER | SHARE_OUTER (io-pgtable's
// value), MEMATTR the Mali-LPAE attribute bytes, TRANSCFG LEGACY.
inline constexpr u64 kMaliTranstabFlags = 0x3 | (1u << 2) | (1u << 4);
inline constexpr u64 kMaliMemattr = 0x888888888888888Dull;

// Hand-built 4-level Mali-LPAE tables: the AArch64 helper's table descriptors, Mali-LPAE leaves.
class MaliPageTables : public mock_hw::testing::PageTables {
public:
    u64 transtab() const { return root_pa() | kMaliTranstabFlags; }
    void map_page(u64 va, u64 pa, u64 attrs = kMaliRw) { *slot(va, 3) = pa | attrs | kMaliLeaf; }
    void unmap_page(u64 va) { *slot(va, 3) = 0; }
    void map_range(u64 va, u64 pa, u64 size, u64 attrs = kMaliRw) {
        for (u64 o = 0; o < size; o += 0x1000)
            map_page(va + o, pa + o, attrs);
    }
};

using WaitFn = std::function<bool(const std::function<bool()>&)>;

// panfrost_gpu_power_on: L2, then shader cores and tiler, each polled until READY.
inline bool jm_power_on(JmDrv& d, const WaitFn& wait) {
    using namespace panfrost;
    const u32 l2 = d.r(GPU_L2_PRESENT_LO), shader = d.r(GPU_SHADER_PRESENT_LO), tiler = d.r(GPU_TILER_PRESENT_LO);
    d.w(L2_PWRON_LO, l2);
    if (!wait([&] { return d.r(L2_READY_LO) == l2; }))
        return false;
    d.w(SHADER_PWRON_LO, shader);
    d.w(TILER_PWRON_LO, tiler);
    return wait([&] { return d.r(SHADER_READY_LO) == shader && d.r(TILER_READY_LO) == tiler; });
}

// panfrost_mmu_enable on a Mali-LPAE AS: TRANSTAB, MEMATTR, TRANSCFG LEGACY, UPDATE.
inline bool jm_as_enable(JmDrv& d, u32 as, u64 transtab, const WaitFn& wait, u64 memattr = kMaliMemattr) {
    using namespace panfrost;
    auto idle = [&] { return !(d.r(AS_STATUS(as)) & AS_STATUS_AS_ACTIVE); };
    if (!wait(idle))
        return false;
    d.w64(AS_TRANSTAB(as), transtab);
    d.w64(AS_MEMATTR(as), memattr);
    d.w64(AS_TRANSCFG(as), AS_TRANSCFG_ADRMODE_LEGACY);
    d.w(AS_COMMAND(as), AS_COMMAND_UPDATE);
    return wait(idle);
}

// One AS command, waiting for AS_ACTIVE to clear before and after (panfrost's write_cmd + wait_ready).
inline bool jm_as_command(JmDrv& d, u32 as, u32 cmd, const WaitFn& wait) {
    using namespace panfrost;
    auto idle = [&] { return !(d.r(AS_STATUS(as)) & AS_STATUS_AS_ACTIVE); };
    if (!wait(idle))
        return false;
    d.w(AS_COMMAND(as), cmd);
    return wait(idle);
}

// The JS_CONFIG panfrost_job_hw_submit writes: AS, clean+invalidate at start and end, thread
// priority 8, and the chain flag / flush reduction when asked.
inline u32 jm_js_config(u32 as, bool chain_flag = false, bool flush_reduction = false) {
    using namespace panfrost;
    return as | JS_CONFIG_START_FLUSH_CLEAN_INVALIDATE | JS_CONFIG_END_FLUSH_CLEAN_INVALIDATE |
           JS_CONFIG_THREAD_PRI(8) | (chain_flag ? JS_CONFIG_JOB_CHAIN_FLAG : 0) |
           (flush_reduction ? JS_CONFIG_ENABLE_FLUSH_REDUCTION : 0);
}

// Writes the NEXT set of slot `js` and arms it (panfrost_job_hw_submit).
inline void jm_submit(JmDrv& d, u32 js, u64 head, u32 config, u64 affinity = 1, u32 flush_id = 0) {
    using namespace panfrost;
    d.w64(JS_HEAD_NEXT_LO(js), head);
    d.w64(JS_AFFINITY_NEXT_LO(js), affinity);
    d.w(JS_CONFIG_NEXT(js), config);
    d.w(JS_FLUSH_ID_NEXT(js), flush_id);
    d.w(JS_COMMAND_NEXT(js), JS_COMMAND_START);
}

// GPU memory for job chains and their targets: one contiguous buffer mapped at `va` in `pt`.
// Jobs are placed at 64-byte (v7) slots; the builder links them with 64-bit `next` pointers
// unless told otherwise.
class JobArena {
public:
    JobArena(MaliPageTables& pt, u64 va, size_t bytes, u64 attrs = kMaliRw) : mem_(bytes), va_(va) {
        pt.map_range(va, mem_.pa(), mem_.size(), attrs);
    }
    u64 va() const { return va_; }
    u64 pa() const { return mem_.pa(); }
    size_t size() const { return mem_.size(); }
    u8* host(u64 va) { return mem_.ptr() + (va - va_); }
    template <typename T>
    T* at(u64 va) {
        return reinterpret_cast<T*>(host(va));
    }
    panfrost::desc::JobHeader* header(u64 job) { return at<panfrost::desc::JobHeader>(job); }

    // Allocates `size` bytes (aligned) and returns their VA.
    u64 alloc(size_t size, size_t align = 128) {
        used_ = (used_ + align - 1) & ~(align - 1);
        const u64 va = va_ + used_;
        used_ += size;
        return va;
    }
    // A job of `type` with payload bytes (copied at +0x20); linked after `prev` when given.
    u64 job(u32 type, u32 index, const void* payload = nullptr, size_t payload_len = 0, u64 prev = 0,
            bool barrier = false, u16 dep1 = 0, u16 dep2 = 0) {
        const u64 j = alloc(panfrost::desc::kJobPayloadOffset + std::max<size_t>(payload_len, 32), 64);
        auto* h = header(j);
        std::memset(h, 0, sizeof(*h));
        h->control = panfrost::desc::job_control(type, index, barrier);
        h->dependency_1 = dep1;
        h->dependency_2 = dep2;
        if (payload_len)
            std::memcpy(host(j) + panfrost::desc::kJobPayloadOffset, payload, payload_len);
        if (prev)
            header(prev)->next = j;
        return j;
    }
    u64 null_job(u32 index = 1, u64 prev = 0) { return job(panfrost::desc::kJobNull, index, nullptr, 0, prev); }
    u64 write_value(u64 target, u32 wv_type, u64 immediate, u32 index = 1, u64 prev = 0) {
        panfrost::desc::WriteValuePayload p{};
        p.address = target;
        p.type = wv_type;
        p.immediate = immediate;
        return job(panfrost::desc::kJobWriteValue, index, &p, sizeof(p), prev);
    }

private:
    PhysPages mem_;
    u64 va_;
    size_t used_ = 0;
};

}  // namespace mock_jm::testing
