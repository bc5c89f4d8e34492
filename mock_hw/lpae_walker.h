// The MMU's table walker: VMSAv8-64 stage-1 translation, 4 KiB granule (Arm ARM D8, "The
// AArch64 Virtual Memory System Architecture"), reading descriptors from guest-physical memory.
// Written from the architecture description, independently of kernel_shim/iommu, so the two
// check each other. No TLB here (see tlb.h) and no locking: pure functions of memory + config.
#pragma once
#include "hw/csf/regs/exceptions.h"
#include "hw/csf/regs/mmu_regs.h"
#include "kernel_shim/types.h"

namespace mock_hw {

using kshim::u32;
using kshim::u64;
using kshim::u8;

// The access type as AS_FAULTSTATUS[9:8] encodes it.
enum class Access : u8 { Atomic = 0, Execute = 1, Read = 2, Write = 3 };

// The latched configuration of one address space (TRANSTAB/MEMATTR/TRANSCFG after UPDATE).
struct AsConfig {
    u64 transtab = 0;
    u64 memattr = 0;
    u64 transcfg = 1;  // UNMAPPED
    u32 pa_bits = 40;  // from GPU_MMU_FEATURES
};

// A leaf translation: what a TLB entry holds.
struct Translation {
    u64 va_base = 0;  // aligned to size
    u64 pa_base = 0;
    u64 size = 0;  // 4 KiB page, 2 MiB or 1 GiB block; 2^pa_bits for IDENTITY mode
    u8 level = 0;  // level of the leaf descriptor
    bool read_only = false;
    bool no_read = false;  // Mali-LPAE leaves without the read permission bit (AArch64: never)
    bool xn = false;
    u8 attr_idx = 0;
};

struct WalkResult {
    bool ok = false;
    Translation t;
    // On failure: the exception type (drm_panthor_exception_type) or, for an external abort on
    // a descriptor fetch, bus_fault with the physical address that could not be read.
    u8 exception = 0;
    bool bus_fault = false;
    u64 bus_addr = 0;
};

// Building blocks every table format's walker shares (lpae_walker.cpp, mali_lpae_walker.cpp).
namespace walk {
// A failed walk with exception type `exc`.
inline WalkResult fail(u8 exc) {
    WalkResult r;
    r.exception = exc;
    return r;
}
// One 8-byte descriptor at physical address `pa`; false if it is outside memory.
bool read_desc(u64 pa, u64* out);
// An identity-mapped AS: `va` is the physical address, up to 2^pa_bits (ADDR_SIZE_FAULT_OUT0
// beyond).
WalkResult identity(const AsConfig& cfg, u64 va);
// 2^pa_bits, the first physical address the GPU cannot reach.
inline u64 pa_limit(const AsConfig& cfg) {
    return cfg.pa_bits >= 64 ? ~0ull : (1ull << cfg.pa_bits);
}
}  // namespace walk

// Walks the tables for `va`. Access-independent faults only (translation, address size, access
// flag, memory attribute); permissions are checked per access by check_permission so a cached
// Translation can be reused.
WalkResult lpae_walk(const AsConfig& cfg, u64 va);

// 0 if `acc` is allowed by `t`, else the permission-fault exception type for t.level. Inline:
// every memory access of the mock checks it.
inline u8 check_permission(const AsConfig& cfg, const Translation& t, Access acc) {
    const u8 perm = static_cast<u8>(panthor::DRM_PANTHOR_EXCEPTION_PERM_FAULT_0 + t.level);
    switch (acc) {
    case Access::Read: return t.no_read ? perm : 0;
    case Access::Write: return t.read_only ? perm : 0;
    case Access::Atomic: return (t.read_only || t.no_read) ? perm : 0;
    case Access::Execute: {
        // WXN: writable memory is never executable.
        const bool wxn = (cfg.transcfg & panthor::AS_TRANSCFG_WXN) && !t.read_only;
        return (t.xn || wxn) ? perm : 0;
    }
    }
    return 0;
}

// Input-address size configured in TRANSCFG (55 - INA_BITS), clamped to [25, 48].
u32 input_bits(const AsConfig& cfg);

// Kbase's TRANSTAB_BUS_FAULT_n (0xD0 + level): an external abort while fetching a descriptor.
// Not in panthor's exception table (it prints "Unknown exception type"); see docs/mock_hw.md.
inline constexpr u8 kTranstabBusFault0 = 0xD0;

}  // namespace mock_hw
