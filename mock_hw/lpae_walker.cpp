// VMSAv8-64 stage-1 table walk, 4 KiB granule (see lpae_walker.h).
//
// Descriptor formats (Arm ARM D8.3): bits[1:0] 0b11 = table (levels 0-2) or page (level 3),
// 0b01 = block (levels 1-2; reserved at levels 0 and 3, treated as invalid), bit 0 clear =
// invalid. Output address bits[47:12]. Leaf attributes: AttrIndx[4:2], AP[7:6] (AP[2] = bit 7
// read-only), SH[9:8], AF bit 10, nG bit 11, PXN bit 53, UXN/XN bit 54. Table descriptors carry
// hierarchical controls: UXNTable bit 60, APTable bits[62:61] (bit 62 = no writes below).
#include "mock_hw/lpae_walker.h"

#include <cstring>

#include "hw/csf/regs/exceptions.h"
#include "hw/csf/regs/mmu_regs.h"
#include "kernel_shim/page_alloc.h"

namespace mock_hw {

namespace {

constexpr u64 kDescValid = 1ull << 0;
constexpr u64 kDescTable = 1ull << 1;             // with valid: table (L0-2) / page (L3); clear: block
constexpr u64 kAddrMask = 0x0000FFFFFFFFF000ull;  // bits [47:12]
constexpr u64 kApRdonly = 1ull << 7;
constexpr u64 kAf = 1ull << 10;
constexpr u64 kUxn = 1ull << 54;
constexpr u64 kUxnTable = 1ull << 60;
constexpr u64 kApTableNoWrite = 1ull << 62;

using walk::fail;
using walk::read_desc;

}  // namespace

bool walk::read_desc(u64 pa, u64* out) {
    if (!kshim::phys_range_valid(pa, 8))
        return false;
    std::memcpy(out, kshim::phys_to_virt(pa), 8);
    return true;
}

WalkResult walk::identity(const AsConfig& cfg, u64 va) {
    const u64 limit = pa_limit(cfg);
    if (va >= limit)
        return fail(panthor::DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_OUT0);
    WalkResult r;
    r.ok = true;
    r.t.va_base = 0;
    r.t.pa_base = 0;
    r.t.size = limit;
    return r;
}

u32 input_bits(const AsConfig& cfg) {
    u32 ina = panthor::AS_TRANSCFG_INA_BITS_GET(cfg.transcfg);
    u32 bits = 55 - ina;
    if (bits > 48)
        bits = 48;
    if (bits < 25)
        bits = 25;
    return bits;
}

WalkResult lpae_walk(const AsConfig& cfg, u64 va) {
    using namespace panthor;
    const u64 mode = cfg.transcfg & AS_TRANSCFG_ADRMODE_MASK;
    const u64 pa_limit = walk::pa_limit(cfg);

    if (mode == AS_TRANSCFG_ADRMODE_IDENTITY)
        return walk::identity(cfg, va);
    if (mode != AS_TRANSCFG_ADRMODE_AARCH64_4K) {
        // UNMAPPED, reserved encodings and the 64 KiB granule (which panthor never uses and this
        // model does not implement) translate nothing.
        return fail(DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0);
    }

    const u32 ia = input_bits(cfg);
    if (ia < 64 && (va >> ia) != 0)
        return fail(DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_IN);

    // 9 bits resolved per level below a 12-bit page offset: the walk starts at the level whose
    // index field contains bit ia-1 (D8.2.6, "initial lookup level").
    const int start_level = ia > 39 ? 0 : ia > 30 ? 1 : 2;
    int level = start_level;
    u64 table = cfg.transtab & kAddrMask;
    if (table >= pa_limit)
        return fail(DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_OUT0);

    bool hier_ro = false, hier_xn = false;
    const bool hier = !(cfg.transcfg & AS_TRANSCFG_DISABLE_HIER_AP);
    for (;; level++) {
        const unsigned shift = 12 + 9 * (3 - level);
        u64 idx = (va >> shift) & 0x1FF;
        if (level == start_level) {
            // The initial table is smaller when ia does not fill the level's index field.
            unsigned top = ia - shift;
            idx = (va >> shift) & ((1ull << top) - 1);
        }
        const u64 desc_pa = table + idx * 8;
        u64 desc;
        if (!read_desc(desc_pa, &desc)) {
            WalkResult r = fail(static_cast<u8>(kTranstabBusFault0 + level));
            r.bus_fault = true;
            r.bus_addr = desc_pa;
            return r;
        }
        if (!(desc & kDescValid))
            return fail(static_cast<u8>(DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0 + level));

        const bool is_table_or_page = desc & kDescTable;
        if (level < 3 && is_table_or_page) {
            const u64 next = desc & kAddrMask;
            if (next >= pa_limit)
                return fail(static_cast<u8>(DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_OUT0 + level));
            if (hier) {
                hier_ro |= (desc & kApTableNoWrite) != 0;
                hier_xn |= (desc & kUxnTable) != 0;
            }
            table = next;
            continue;
        }
        // A leaf: page at L3, block at L1/L2. Blocks at L0 and the 0b01 encoding at L3 are
        // reserved and fault as invalid descriptors.
        if ((level == 3 && !is_table_or_page) || (level == 0 && !is_table_or_page))
            return fail(static_cast<u8>(DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0 + level));
        const u64 size = 1ull << shift;
        const u64 out = desc & kAddrMask & ~(size - 1);
        if (out >= pa_limit || (desc & kAddrMask) >= pa_limit)
            return fail(static_cast<u8>(DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_OUT0 + level));
        if (!(desc & kAf) && !(cfg.transcfg & AS_TRANSCFG_DISABLE_AF_FAULT))
            return fail(static_cast<u8>(DRM_PANTHOR_EXCEPTION_ACCESS_FLAG_1 + level - 1));
        const u8 attr_idx = (desc >> 2) & 7;
        const u8 attr = static_cast<u8>(cfg.memattr >> (8 * attr_idx));
        if ((attr & AS_MEMATTR_AARCH64_FAULT) == AS_MEMATTR_AARCH64_FAULT)
            return fail(static_cast<u8>(DRM_PANTHOR_EXCEPTION_MEM_ATTR_FAULT_0 + level));

        WalkResult r;
        r.ok = true;
        r.t.va_base = va & ~(size - 1);
        r.t.pa_base = out;
        r.t.size = size;
        r.t.level = static_cast<u8>(level);
        r.t.read_only = (desc & kApRdonly) || hier_ro;
        r.t.xn = (desc & kUxn) || hier_xn;
        r.t.attr_idx = attr_idx;
        return r;
    }
}

}  // namespace mock_hw
