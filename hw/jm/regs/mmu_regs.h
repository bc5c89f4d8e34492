// MMU_CONTROL of a Job Manager GPU as panfrost uses it (drivers/gpu/drm/panfrost/panfrost_regs.h,
// panfrost_mmu.c). Layout, fields and the page-table formats: docs/hw/jm/mmu.md.
//
// The MMU_CONTROL block is the same hardware on JM and CSF GPUs: MMU_INT_* at 0x2000, address
// space n at 0x2400 + n * 0x40 with the same registers, AS commands, AS_FAULTSTATUS fields,
// AS_LOCKADDR encoding, AS_TRANSCFG fields and AArch64 MEMATTR bytes. Those facts live once, in
// hw/csf/regs/mmu_regs.h, and are re-exported here by name, so a shared MMU model and both drivers
// agree on them by construction. What only a JM GPU has is defined below: the upper half of
// MMU_INT_RAWSTAT means "bus error on AS n" (CSF: "command completed"), TRANSTAB carries the
// Mali-LPAE ("legacy") mode and attribute bits, and Midgard GPUs lack TRANSCFG/FAULTEXTRA.
#pragma once
#include <cstdint>

#include "hw/bits.h"
#include "hw/csf/regs/mmu_regs.h"

namespace panfrost {

using panthor::BIT;
using panthor::GENMASK;
using panthor::GENMASK_ULL;

// The IRQ block.
using panthor::MMU_CONTROL_BASE;
using panthor::MMU_INT_CLEAR;
using panthor::MMU_INT_MASK;
using panthor::MMU_INT_PAGE_FAULT;
using panthor::MMU_INT_PAGE_FAULT_MASK;
using panthor::MMU_INT_RAWSTAT;
using panthor::MMU_INT_STAT;
// MMU_INT_RAWSTAT [31:16]: a bus error while walking or accessing for AS n (panfrost handles it
// as an unhandled fault).
constexpr uint32_t MMU_INT_BUS_ERROR(uint32_t as) {
    return BIT(16 + as);
}
inline constexpr uint32_t MMU_INT_BUS_ERROR_MASK = GENMASK(31, 16);

// Address spaces: up to 16 decoded; AS_PRESENT says which exist (0xFF on the reference parts).
inline constexpr uint32_t MAX_AS = 16;
using panthor::AS_COMMAND;
using panthor::AS_FAULTADDRESS;
using panthor::AS_FAULTADDRESS_HI;
using panthor::AS_FAULTADDRESS_LO;
using panthor::AS_FAULTEXTRA;
using panthor::AS_FAULTEXTRA_HI;
using panthor::AS_FAULTEXTRA_LO;
using panthor::AS_FAULTSTATUS;
using panthor::AS_LOCKADDR;
using panthor::AS_LOCKADDR_HI;
using panthor::AS_LOCKADDR_LO;
using panthor::AS_MEMATTR;
using panthor::AS_MEMATTR_HI;
using panthor::AS_MEMATTR_LO;
using panthor::AS_STATUS;
using panthor::AS_TRANSCFG;
using panthor::AS_TRANSCFG_HI;
using panthor::AS_TRANSCFG_LO;
using panthor::AS_TRANSTAB;
using panthor::AS_TRANSTAB_HI;
using panthor::AS_TRANSTAB_LO;
using panthor::MMU_AS;
using panthor::MMU_AS_SHIFT;
using panthor::MMU_AS_STRIDE;
using panthor::MMU_BASE;
// The offsets panfrost_regs.h gives, checked against the shared definitions.
static_assert(MMU_INT_RAWSTAT == 0x2000 && MMU_INT_CLEAR == 0x2004 && MMU_INT_MASK == 0x2008 && MMU_INT_STAT == 0x200C);
static_assert(MMU_BASE == 0x2400 && MMU_AS_SHIFT == 6 && MMU_AS_STRIDE == 0x40);
static_assert(AS_TRANSTAB_LO(1) == 0x2440 && AS_MEMATTR_LO(1) == 0x2448 && AS_LOCKADDR_LO(1) == 0x2450);
static_assert(AS_COMMAND(1) == 0x2458 && AS_FAULTSTATUS(1) == 0x245C && AS_FAULTADDRESS_LO(1) == 0x2460);
static_assert(AS_STATUS(1) == 0x2468 && AS_TRANSCFG_LO(1) == 0x2470 && AS_FAULTEXTRA_LO(1) == 0x2478);
static_assert(MMU_AS(MAX_AS) == 0x2800, "panfrost touches nothing above 0x27FF");

// AS_COMMAND. FLUSH (T60x) is the same number as FLUSH_PT.
using panthor::AS_COMMAND_FLUSH_MEM;
using panthor::AS_COMMAND_FLUSH_PT;
using panthor::AS_COMMAND_LOCK;
using panthor::AS_COMMAND_NOP;
using panthor::AS_COMMAND_UNLOCK;
using panthor::AS_COMMAND_UPDATE;
inline constexpr uint32_t AS_COMMAND_FLUSH = AS_COMMAND_FLUSH_PT;
static_assert(AS_COMMAND_NOP == 0 && AS_COMMAND_UPDATE == 1 && AS_COMMAND_LOCK == 2 && AS_COMMAND_UNLOCK == 3 &&
              AS_COMMAND_FLUSH_PT == 4 && AS_COMMAND_FLUSH_MEM == 5);

// AS_LOCKADDR: [5:0] = w, region 2^(w+1) bytes (at least 32 KiB); upper bits the aligned start.
using panthor::AS_LOCK_REGION_MIN_SIZE;
using panthor::AS_LOCKADDR_SIZE_MASK;

// AS_FAULTSTATUS: [7:0] exception code (0xC0..0xEF), [9:8] access type (ATOMIC is reported as
// such only with HW_FEATURE_AARCH64_MMU), BIT(10) decoder fault, [31:16] source id.
using panthor::AS_FAULTSTATUS_ACCESS_TYPE_ATOMIC;
using panthor::AS_FAULTSTATUS_ACCESS_TYPE_EX;
using panthor::AS_FAULTSTATUS_ACCESS_TYPE_MASK;
using panthor::AS_FAULTSTATUS_ACCESS_TYPE_READ;
using panthor::AS_FAULTSTATUS_ACCESS_TYPE_SHIFT;
using panthor::AS_FAULTSTATUS_ACCESS_TYPE_WRITE;
using panthor::AS_FAULTSTATUS_DECODER_FAULT;
using panthor::AS_FAULTSTATUS_EXCEPTION_TYPE_MASK;
using panthor::AS_FAULTSTATUS_SOURCE_ID_SHIFT;
static_assert(AS_FAULTSTATUS_ACCESS_TYPE_EX == 0x100 && AS_FAULTSTATUS_ACCESS_TYPE_READ == 0x200 &&
              AS_FAULTSTATUS_ACCESS_TYPE_WRITE == 0x300);

// AS_STATUS: BIT(0) a command is in progress.
using panthor::AS_STATUS_AS_ACTIVE;

// AS_TRANSTAB in Mali-LPAE mode (panfrost's default io-pgtable format ARM_MALI_LPAE): [47:12] the
// level-0 table's physical address, [1:0] ADRMODE, BIT(2) inner-cacheable walks, BIT(4) outer
// shareable walks. ADRMODE 0 ("unmapped") disables the AS: panfrost writes TRANSTAB = 0 for that.
// In AArch64 mode (TRANSCFG ADRMODE AARCH64_4K) TRANSTAB is a plain TTBR with the low 4 bits 0.
inline constexpr uint64_t AS_TRANSTAB_LPAE_ADDR_SPACE_MASK = 0xFFFFFFFFFFFFF000ull;
inline constexpr uint64_t AS_TRANSTAB_LPAE_ADRMODE_MASK = 0x3;
inline constexpr uint64_t AS_TRANSTAB_LPAE_ADRMODE_UNMAPPED = 0x0;
inline constexpr uint64_t AS_TRANSTAB_LPAE_ADRMODE_IDENTITY = 0x2;
inline constexpr uint64_t AS_TRANSTAB_LPAE_ADRMODE_TABLE = 0x3;
inline constexpr uint64_t AS_TRANSTAB_LPAE_READ_INNER = BIT(2);
inline constexpr uint64_t AS_TRANSTAB_LPAE_SHARE_OUTER = BIT(4);

// AS_TRANSCFG (Bifrost and later; Midgard has no such register and ignores the writes): ADRMODE
// LEGACY (0) selects the Mali-LPAE walk through TRANSTAB; the other modes and fields are shared.
inline constexpr uint64_t AS_TRANSCFG_ADRMODE_LEGACY = 0;
using panthor::AS_TRANSCFG_ADRMODE_AARCH64_4K;
using panthor::AS_TRANSCFG_ADRMODE_AARCH64_64K;
using panthor::AS_TRANSCFG_ADRMODE_IDENTITY;
using panthor::AS_TRANSCFG_ADRMODE_MASK;
using panthor::AS_TRANSCFG_ADRMODE_UNMAPPED;
using panthor::AS_TRANSCFG_DISABLE_AF_FAULT;
using panthor::AS_TRANSCFG_DISABLE_HIER_AP;
using panthor::AS_TRANSCFG_INA_BITS;
using panthor::AS_TRANSCFG_INA_BITS_GET;
using panthor::AS_TRANSCFG_OUTA_BITS;
using panthor::AS_TRANSCFG_PTW_MEMATTR_NC;
using panthor::AS_TRANSCFG_PTW_MEMATTR_WB;
using panthor::AS_TRANSCFG_PTW_RA;
using panthor::AS_TRANSCFG_PTW_SH_IS;
using panthor::AS_TRANSCFG_PTW_SH_NS;
using panthor::AS_TRANSCFG_PTW_SH_OS;
using panthor::AS_TRANSCFG_SL_CONCAT;
using panthor::AS_TRANSCFG_WXN;
using panthor::AS_TRANSCFG_XREADABLE;
static_assert(AS_TRANSCFG_ADRMODE_UNMAPPED == 1 && AS_TRANSCFG_ADRMODE_AARCH64_4K == 6);

// Mali-LPAE page-table descriptors, as io-pgtable's ARM_MALI_LPAE format writes them and the
// GPU walks them: always 4 levels of 512 entries (VA[47:39], [38:30], [29:21], [20:12]) whatever
// the VA size. [1:0] type: 3 = next table at levels 0..2, 1 = a block at levels 1/2 and the page
// type at level 3, 0 and 2 invalid. Output address [47:12]. No access flag.
inline constexpr uint32_t MALI_LPAE_LEVELS = 4;
inline constexpr uint32_t MALI_LPAE_BITS_PER_LEVEL = 9;
inline constexpr uint32_t MALI_LPAE_GRANULE_SHIFT = 12;
constexpr uint32_t MALI_LPAE_LEVEL_SHIFT(uint32_t level) {
    return MALI_LPAE_GRANULE_SHIFT + (MALI_LPAE_LEVELS - 1 - level) * MALI_LPAE_BITS_PER_LEVEL;
}
constexpr uint32_t MALI_LPAE_INDEX(uint64_t va, uint32_t level) {
    return static_cast<uint32_t>((va >> MALI_LPAE_LEVEL_SHIFT(level)) & ((1u << MALI_LPAE_BITS_PER_LEVEL) - 1));
}
static_assert(MALI_LPAE_LEVEL_SHIFT(0) == 39 && MALI_LPAE_LEVEL_SHIFT(2) == 21 && MALI_LPAE_LEVEL_SHIFT(3) == 12);
inline constexpr uint64_t MALI_LPAE_PTE_TYPE_MASK = 0x3;
inline constexpr uint64_t MALI_LPAE_PTE_TYPE_INVALID = 0x0;
inline constexpr uint64_t MALI_LPAE_PTE_TYPE_BLOCK = 0x1;  // also the level-3 page type
inline constexpr uint64_t MALI_LPAE_PTE_TYPE_TABLE = 0x3;
inline constexpr uint64_t MALI_LPAE_PTE_ADDR_MASK = GENMASK_ULL(47, 12);
inline constexpr uint64_t MALI_LPAE_PTE_ATTRINDX_SHIFT = 2;  // [4:2]: AS_MEMATTR byte index
inline constexpr uint64_t MALI_LPAE_PTE_READ = uint64_t{1} << 6;
inline constexpr uint64_t MALI_LPAE_PTE_WRITE = uint64_t{1} << 7;
inline constexpr uint64_t MALI_LPAE_PTE_SH_SHIFT = 8;  // [9:8], io-pgtable always writes 2 (outer)
inline constexpr uint64_t MALI_LPAE_PTE_XN = (uint64_t{1} << 53) | (uint64_t{1} << 54);

}  // namespace panfrost
