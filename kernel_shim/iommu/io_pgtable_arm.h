// Mirrors drivers/iommu/io-pgtable-arm.h (and the format constants of io-pgtable-arm.c):
// VMSAv8-64 and Mali LPAE descriptor and register bit definitions.
#pragma once
#include "kernel_shim/types.h"

namespace iommu {

using arm_lpae_iopte = kshim::u64;
using kshim::u32;
using kshim::u64;

inline constexpr int ARM_LPAE_MAX_ADDR_BITS = 52;
inline constexpr int ARM_LPAE_MAX_LEVELS = 4;

// Descriptor type, bits [1:0].
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_TYPE_MASK = 0x3;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_TYPE_BLOCK = 1;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_TYPE_TABLE = 3;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_TYPE_PAGE = 3;

inline constexpr arm_lpae_iopte ARM_LPAE_PTE_ADDR_MASK = 0x0000fffffffff000ull;  // bits [47:12]

inline constexpr arm_lpae_iopte ARM_LPAE_PTE_NSTABLE = 1ull << 63;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_XN = 3ull << 53;  // UXN | PXN
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_AF = 1ull << 10;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_SH_NS = 0ull << 8;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_SH_OS = 2ull << 8;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_SH_IS = 3ull << 8;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_NS = 1ull << 5;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_VALID = 1ull << 0;

// Stage-1 attributes.
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_AP_UNPRIV = 1ull << 6;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_AP_RDONLY = 1ull << 7;
inline constexpr int ARM_LPAE_PTE_ATTRINDX_SHIFT = 2;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_nG = 1ull << 11;

// Stage-2 permissions. The Mali LPAE format has stage-1-like attributes but these permissions:
// bit 6 allows reads, bit 7 writes.
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_HAP_FAULT = 0ull << 6;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_HAP_READ = 1ull << 6;
inline constexpr arm_lpae_iopte ARM_LPAE_PTE_HAP_WRITE = 2ull << 6;

// TCR field encodings.
inline constexpr u32 ARM_LPAE_TCR_TG0_4K = 0;
inline constexpr u32 ARM_LPAE_TCR_TG0_64K = 1;
inline constexpr u32 ARM_LPAE_TCR_TG0_16K = 2;
inline constexpr u32 ARM_LPAE_TCR_SH_NS = 0;
inline constexpr u32 ARM_LPAE_TCR_SH_OS = 2;
inline constexpr u32 ARM_LPAE_TCR_SH_IS = 3;
inline constexpr u32 ARM_LPAE_TCR_RGN_NC = 0;
inline constexpr u32 ARM_LPAE_TCR_RGN_WBWA = 1;
inline constexpr u32 ARM_LPAE_TCR_RGN_WT = 2;
inline constexpr u32 ARM_LPAE_TCR_RGN_WB = 3;
inline constexpr u32 ARM_LPAE_TCR_PS_32_BIT = 0;
inline constexpr u32 ARM_LPAE_TCR_PS_36_BIT = 1;
inline constexpr u32 ARM_LPAE_TCR_PS_40_BIT = 2;
inline constexpr u32 ARM_LPAE_TCR_PS_42_BIT = 3;
inline constexpr u32 ARM_LPAE_TCR_PS_44_BIT = 4;
inline constexpr u32 ARM_LPAE_TCR_PS_48_BIT = 5;
inline constexpr u32 ARM_LPAE_TCR_PS_52_BIT = 6;

// MAIR attribute bytes and the indices PTEs use (the 0xf404ff44 layout).
inline constexpr u64 ARM_LPAE_MAIR_ATTR_DEVICE = 0x04;
inline constexpr u64 ARM_LPAE_MAIR_ATTR_NC = 0x44;
inline constexpr u64 ARM_LPAE_MAIR_ATTR_INC_OWBRWA = 0xf4;
inline constexpr u64 ARM_LPAE_MAIR_ATTR_WBRWA = 0xff;
inline constexpr int ARM_LPAE_MAIR_ATTR_IDX_NC = 0;
inline constexpr int ARM_LPAE_MAIR_ATTR_IDX_CACHE = 1;
inline constexpr int ARM_LPAE_MAIR_ATTR_IDX_DEV = 2;
inline constexpr int ARM_LPAE_MAIR_ATTR_IDX_INC_OCACHE = 3;
inline constexpr u64 ARM_LPAE_MAIR_ATTR_SHIFT(int n) {
    return u64(n) << 3;
}

// Mali AS_TRANSTAB in LPAE mode: the level-0 table's PA in [47:12] plus walk controls.
inline constexpr u64 ARM_MALI_LPAE_TTBR_ADRMODE_TABLE = 3u << 0;
inline constexpr u64 ARM_MALI_LPAE_TTBR_READ_INNER = 1u << 2;
inline constexpr u64 ARM_MALI_LPAE_TTBR_SHARE_OUTER = 1u << 4;

// Mali AS_MEMATTR bytes, placed at the MAIR indices the PTEs use.
inline constexpr u64 ARM_MALI_LPAE_MEMATTR_IMP_DEF = 0x88;
inline constexpr u64 ARM_MALI_LPAE_MEMATTR_WRITE_ALLOC = 0x8D;

}  // namespace iommu
