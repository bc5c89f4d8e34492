// Mali-LPAE table walk (see mali_lpae_walker.h; format: docs/hw/jm/mmu.md, hw/jm/regs/mmu_regs.h).
//
// Always four levels of 512 eight-byte descriptors, 4 KiB granule, whatever the VA size:
// VA[47:39] indexes the level-0 table at TRANSTAB[47:12], then [38:30], [29:21], [20:12].
// Descriptor bits[1:0]: 3 = next table (levels 0-2), 1 = leaf at levels 1, 2 and 3 (1 GiB block,
// 2 MiB block, 4 KiB page), 0 and 2 invalid. Output address [47:12]. Leaf attributes:
// AttrIndx[4:2] (an AS_MEMATTR byte), BIT(6) reads allowed, BIT(7) writes allowed, SH[9:8],
// XN bits 53/54. There is no access flag and there are no hierarchical table attributes.
#include "mock_hw/mali_lpae_walker.h"

#include <cstring>

#include "hw/csf/regs/exceptions.h"
#include "hw/jm/regs/exceptions.h"
#include "hw/jm/regs/mmu_regs.h"
#include "kernel_shim/page_alloc.h"

namespace mock_hw {

namespace {

using namespace panfrost;

// The JM codes this walker reports are the numbers the shared MMU model (and lpae_walk) uses.
static_assert(int{DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_0} ==
              int{panthor::DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0});
static_assert(int{DRM_PANFROST_EXCEPTION_ADDR_SIZE_FAULT_IN0} ==
              int{panthor::DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_IN});
static_assert(int{DRM_PANFROST_EXCEPTION_ADDR_SIZE_FAULT_OUT0} ==
              int{panthor::DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_OUT0});
static_assert(int{DRM_PANFROST_EXCEPTION_PERM_FAULT_0} == int{panthor::DRM_PANTHOR_EXCEPTION_PERM_FAULT_0});
static_assert(DRM_PANFROST_EXCEPTION_TRANSTAB_BUS_FAULT_0 == kTranstabBusFault0);

constexpr u32 kVaBits = 48;  // four 9-bit levels above a 12-bit page offset

u8 at_level(u8 code0, u32 level) {
    return static_cast<u8>(code0 + level);
}

using walk::fail;
using walk::read_desc;

}  // namespace

WalkResult mali_lpae_walk(const AsConfig& cfg, u64 va) {
    const u64 adrmode = cfg.transtab & AS_TRANSTAB_LPAE_ADRMODE_MASK;
    const u64 pa_limit = walk::pa_limit(cfg);

    if (adrmode == AS_TRANSTAB_LPAE_ADRMODE_IDENTITY)
        return walk::identity(cfg, va);
    if (adrmode != AS_TRANSTAB_LPAE_ADRMODE_TABLE) {
        // UNMAPPED (0; panfrost writes TRANSTAB = 0 to disable an AS) and the reserved 1.
        return fail(DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_0);
    }
    if ((va >> kVaBits) != 0)
        return fail(DRM_PANFROST_EXCEPTION_ADDR_SIZE_FAULT_IN0);

    // TRANSTAB[11:0] holds ADRMODE and the walk's cacheability/shareability, not address bits.
    u64 table = cfg.transtab & MALI_LPAE_PTE_ADDR_MASK;
    if (table >= pa_limit)
        return fail(DRM_PANFROST_EXCEPTION_ADDR_SIZE_FAULT_OUT0);

    for (u32 level = 0; level < MALI_LPAE_LEVELS; level++) {
        const u64 desc_pa = table + u64{MALI_LPAE_INDEX(va, level)} * 8;
        u64 desc;
        if (!read_desc(desc_pa, &desc)) {
            WalkResult r = fail(at_level(DRM_PANFROST_EXCEPTION_TRANSTAB_BUS_FAULT_0, level));
            r.bus_fault = true;
            r.bus_addr = desc_pa;
            return r;
        }
        const u64 type = desc & MALI_LPAE_PTE_TYPE_MASK;
        const bool last = level == MALI_LPAE_LEVELS - 1;
        if (type == MALI_LPAE_PTE_TYPE_TABLE && !last) {
            const u64 next = desc & MALI_LPAE_PTE_ADDR_MASK;
            if (next >= pa_limit)
                return fail(at_level(DRM_PANFROST_EXCEPTION_ADDR_SIZE_FAULT_OUT0, level));
            table = next;
            continue;
        }
        // Only type 1 is a leaf, at every level but 0 (no 512 GiB blocks). Type 3 at level 3 is
        // not a page here, unlike the AArch64 format: io-pgtable writes type 1 for Mali pages and
        // its iopte_leaf() accepts only type 1 for ARM_MALI_LPAE at any level, so a type-3 level-3
        // entry is neither leaf nor table to the driver (iova_to_phys finds nothing), and kbase's
        // legacy mode likewise calls only type 1 an ATE. Faulting it as invalid keeps the mock
        // from translating what the driver considers unmapped.
        if (type != MALI_LPAE_PTE_TYPE_BLOCK || level == 0)
            return fail(at_level(DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_0, level));

        const u64 size = 1ull << MALI_LPAE_LEVEL_SHIFT(level);
        const u64 out = desc & MALI_LPAE_PTE_ADDR_MASK;
        if (out >= pa_limit)
            return fail(at_level(DRM_PANFROST_EXCEPTION_ADDR_SIZE_FAULT_OUT0, level));

        WalkResult r;
        r.ok = true;
        r.t.va_base = va & ~(size - 1);
        r.t.pa_base = out & ~(size - 1);  // a block's low output bits are ignored
        r.t.size = size;
        r.t.level = static_cast<u8>(level);
        r.t.no_read = !(desc & MALI_LPAE_PTE_READ);
        r.t.read_only = !(desc & MALI_LPAE_PTE_WRITE);
        // io-pgtable sets both bits 53 and 54 for IOMMU_NOEXEC; no public description says which
        // of the two the GPU reads (kbase's legacy mode writes only bit 54), so either one makes
        // the leaf non-executable: the mock faults every encoding a driver may mean as no-exec.
        r.t.xn = (desc & MALI_LPAE_PTE_XN) != 0;
        r.t.attr_idx = static_cast<u8>((desc >> MALI_LPAE_PTE_ATTRINDX_SHIFT) & 7);
        return r;
    }
    return fail(DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_0);  // not reached: level 3 returns
}

}  // namespace mock_hw
