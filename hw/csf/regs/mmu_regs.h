// MMU_CONTROL block registers (MMU_INT_* and the per-address-space AS_* registers): mirrors
// panthor_regs.h / panthor_mmu_regs.h. AS n registers live at MMU_AS(n) = 0x2400 + n * 0x40.
#pragma once
#include <cstdint>

#include "hw/bits.h"

namespace panthor {

inline constexpr uint32_t MMU_CONTROL_BASE = 0x2000;
inline constexpr uint32_t MMU_INT_BASE = 0x2000;
inline constexpr uint32_t MMU_INT_RAWSTAT = 0x2000;
inline constexpr uint32_t MMU_INT_CLEAR = 0x2004;
inline constexpr uint32_t MMU_INT_MASK = 0x2008;
inline constexpr uint32_t MMU_INT_STAT = 0x200C;
// [15:0] page fault on AS n, [31:16] command completed on AS n.
constexpr uint32_t MMU_INT_PAGE_FAULT(uint32_t as) {
    return BIT(as);
}
constexpr uint32_t MMU_INT_REQ_COMPLETE(uint32_t as) {
    return BIT(16 + as);
}
inline constexpr uint32_t MMU_INT_PAGE_FAULT_MASK = GENMASK(15, 0);

inline constexpr uint32_t MAX_AS_SLOTS = 32;  // driver array size; the MMU block decodes 16
inline constexpr uint32_t MMU_BASE = 0x2400;
inline constexpr uint32_t MMU_AS_BASE = 0x2400;
inline constexpr uint32_t MMU_AS_SHIFT = 6;
inline constexpr uint32_t MMU_AS_STRIDE = 1u << MMU_AS_SHIFT;
constexpr uint32_t MMU_AS(uint32_t as) {
    return MMU_BASE + (as << MMU_AS_SHIFT);
}

constexpr uint32_t AS_TRANSTAB(uint32_t as) {
    return MMU_AS(as) + 0x0;
}
constexpr uint32_t AS_TRANSTAB_LO(uint32_t as) {
    return MMU_AS(as) + 0x0;
}
constexpr uint32_t AS_TRANSTAB_HI(uint32_t as) {
    return MMU_AS(as) + 0x4;
}
constexpr uint32_t AS_MEMATTR(uint32_t as) {
    return MMU_AS(as) + 0x8;
}
constexpr uint32_t AS_MEMATTR_LO(uint32_t as) {
    return MMU_AS(as) + 0x8;
}
constexpr uint32_t AS_MEMATTR_HI(uint32_t as) {
    return MMU_AS(as) + 0xC;
}
constexpr uint32_t AS_LOCKADDR(uint32_t as) {
    return MMU_AS(as) + 0x10;
}
constexpr uint32_t AS_LOCKADDR_LO(uint32_t as) {
    return MMU_AS(as) + 0x10;
}
constexpr uint32_t AS_LOCKADDR_HI(uint32_t as) {
    return MMU_AS(as) + 0x14;
}
constexpr uint32_t AS_COMMAND(uint32_t as) {
    return MMU_AS(as) + 0x18;
}
constexpr uint32_t AS_FAULTSTATUS(uint32_t as) {
    return MMU_AS(as) + 0x1C;
}
constexpr uint32_t AS_FAULTADDRESS(uint32_t as) {
    return MMU_AS(as) + 0x20;
}
constexpr uint32_t AS_FAULTADDRESS_LO(uint32_t as) {
    return MMU_AS(as) + 0x20;
}
constexpr uint32_t AS_FAULTADDRESS_HI(uint32_t as) {
    return MMU_AS(as) + 0x24;
}
constexpr uint32_t AS_STATUS(uint32_t as) {
    return MMU_AS(as) + 0x28;
}
constexpr uint32_t AS_TRANSCFG(uint32_t as) {
    return MMU_AS(as) + 0x30;
}
constexpr uint32_t AS_TRANSCFG_LO(uint32_t as) {
    return MMU_AS(as) + 0x30;
}
constexpr uint32_t AS_TRANSCFG_HI(uint32_t as) {
    return MMU_AS(as) + 0x34;
}
constexpr uint32_t AS_FAULTEXTRA(uint32_t as) {
    return MMU_AS(as) + 0x38;
}
constexpr uint32_t AS_FAULTEXTRA_LO(uint32_t as) {
    return MMU_AS(as) + 0x38;
}
constexpr uint32_t AS_FAULTEXTRA_HI(uint32_t as) {
    return MMU_AS(as) + 0x3C;
}

// AS_LOCKADDR: [5:0] = w, region size 2^(w+1) bytes; upper bits = start with bits below w clear.
inline constexpr uint64_t AS_LOCK_REGION_MIN_SIZE = uint64_t{1} << 15;
inline constexpr uint64_t AS_LOCKADDR_SIZE_MASK = GENMASK_ULL(5, 0);

inline constexpr uint32_t AS_COMMAND_NOP = 0;
inline constexpr uint32_t AS_COMMAND_UPDATE = 1;
inline constexpr uint32_t AS_COMMAND_LOCK = 2;
inline constexpr uint32_t AS_COMMAND_UNLOCK = 3;
inline constexpr uint32_t AS_COMMAND_FLUSH_PT = 4;
inline constexpr uint32_t AS_COMMAND_FLUSH_MEM = 5;

inline constexpr uint32_t AS_FAULTSTATUS_EXCEPTION_TYPE_MASK = GENMASK(7, 0);
inline constexpr uint32_t AS_FAULTSTATUS_ACCESS_TYPE_SHIFT = 8;
inline constexpr uint32_t AS_FAULTSTATUS_ACCESS_TYPE_MASK = 3u << 8;
inline constexpr uint32_t AS_FAULTSTATUS_ACCESS_TYPE_ATOMIC = 0u << 8;
inline constexpr uint32_t AS_FAULTSTATUS_ACCESS_TYPE_EX = 1u << 8;
inline constexpr uint32_t AS_FAULTSTATUS_ACCESS_TYPE_READ = 2u << 8;
inline constexpr uint32_t AS_FAULTSTATUS_ACCESS_TYPE_WRITE = 3u << 8;
inline constexpr uint32_t AS_FAULTSTATUS_DECODER_FAULT = BIT(10);
inline constexpr uint32_t AS_FAULTSTATUS_SOURCE_ID_SHIFT = 16;

inline constexpr uint32_t AS_STATUS_AS_ACTIVE = BIT(0);
inline constexpr uint32_t AS_STATUS_AS_ACTIVE_INT = BIT(1);  // (non-panthor)

inline constexpr uint64_t AS_TRANSCFG_ADRMODE_MASK = GENMASK_ULL(3, 0);
inline constexpr uint64_t AS_TRANSCFG_ADRMODE_UNMAPPED = 1;
inline constexpr uint64_t AS_TRANSCFG_ADRMODE_IDENTITY = 2;
inline constexpr uint64_t AS_TRANSCFG_ADRMODE_AARCH64_4K = 6;
inline constexpr uint64_t AS_TRANSCFG_ADRMODE_AARCH64_64K = 8;
constexpr uint64_t AS_TRANSCFG_INA_BITS(uint64_t x) {
    return x << 6;
}
constexpr uint32_t AS_TRANSCFG_INA_BITS_GET(uint64_t cfg) {
    return static_cast<uint32_t>((cfg >> 6) & 0x1F);
}
constexpr uint64_t AS_TRANSCFG_OUTA_BITS(uint64_t x) {
    return x << 14;
}
inline constexpr uint64_t AS_TRANSCFG_SL_CONCAT = BIT_ULL(22);
inline constexpr uint64_t AS_TRANSCFG_PTW_MEMATTR_NC = uint64_t{1} << 24;
inline constexpr uint64_t AS_TRANSCFG_PTW_MEMATTR_WB = uint64_t{2} << 24;
inline constexpr uint64_t AS_TRANSCFG_PTW_SH_NS = uint64_t{0} << 28;
inline constexpr uint64_t AS_TRANSCFG_PTW_SH_OS = uint64_t{2} << 28;
inline constexpr uint64_t AS_TRANSCFG_PTW_SH_IS = uint64_t{3} << 28;
inline constexpr uint64_t AS_TRANSCFG_PTW_RA = BIT_ULL(30);
inline constexpr uint64_t AS_TRANSCFG_DISABLE_HIER_AP = BIT_ULL(33);
inline constexpr uint64_t AS_TRANSCFG_DISABLE_AF_FAULT = BIT_ULL(34);
inline constexpr uint64_t AS_TRANSCFG_WXN = BIT_ULL(35);
inline constexpr uint64_t AS_TRANSCFG_XREADABLE = BIT_ULL(36);

// AS_MEMATTR: one byte per PTE AttrIndx.
inline constexpr uint32_t AS_MEMATTR_AARCH64_INNER_ALLOC_IMPL = 2u << 2;
constexpr uint32_t AS_MEMATTR_AARCH64_INNER_ALLOC_EXPL(bool w, bool r) {
    return (3u << 2) | (w ? BIT(0) : 0) | (r ? BIT(1) : 0);
}
inline constexpr uint32_t AS_MEMATTR_AARCH64_SH_MIDGARD_INNER = 0u << 4;
inline constexpr uint32_t AS_MEMATTR_AARCH64_SH_CPU_INNER = 1u << 4;
inline constexpr uint32_t AS_MEMATTR_AARCH64_SH_CPU_INNER_SHADER_COH = 2u << 4;
inline constexpr uint32_t AS_MEMATTR_AARCH64_SHARED = 0u << 6;
inline constexpr uint32_t AS_MEMATTR_AARCH64_INNER_OUTER_NC = 1u << 6;
inline constexpr uint32_t AS_MEMATTR_AARCH64_INNER_OUTER_WB = 2u << 6;
inline constexpr uint32_t AS_MEMATTR_AARCH64_FAULT = 3u << 6;

}  // namespace panthor
