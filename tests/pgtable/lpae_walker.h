// Independent table walkers for the io-pgtable tests, not written from kernel_shim/iommu: a
// VMSAv8-64 stage-1 walker from the Arm architecture description (translation table format,
// TCR/MAIR encodings), and a Mali LPAE ("legacy" address mode) walker from the Midgard/Bifrost
// MMU description (AS_TRANSTAB/AS_MEMATTR, the descriptor types of jm-interface.md section 2.6).
// Both read descriptors from the physical arena the way the GPU MMU does.
#pragma once
#include <string>

#include "kernel_shim/types.h"

namespace pgtable_test {

using kshim::u64;

struct WalkerRegs {
    u64 ttbr = 0;
    u64 tcr = 0;  // TCR_EL1 layout: T0SZ[5:0], TG0[15:14], IPS[34:32]
    u64 mair = 0;
};

struct Translation {
    bool ok = false;
    std::string fault;  // why not ok: "translation L2", "address size", "malformed ..."
    int level = -1;
    u64 pa = 0;
    u64 block_size = 0;
    u64 descriptor = 0;
    // Decoded leaf attributes.
    unsigned attr_index = 0;
    unsigned mair_attr = 0;  // the MAIR byte attr_index selects
    bool ns = false;
    bool ap_unpriv = false;  // AP[1]: EL0 access
    bool ap_rdonly = false;  // AP[2]: read-only
    unsigned sh = 0;
    bool af = false;
    bool ng = false;
    bool pxn = false;
    bool uxn = false;
    bool contiguous = false;
    // Mali LPAE permissions: bit 6 allows reads, bit 7 writes.
    bool rd = false;
    bool wr = false;
    // Every descriptor the walk read, by level (tables and the leaf); 0 where not reached.
    u64 path[4] = {};
};

// Walks the tables for va. Never touches memory outside the arena (reports a fault instead).
Translation lpae_walk(const WalkerRegs& regs, u64 va);

// Granule / level geometry from TCR, as the architecture defines it.
struct WalkerGeometry {
    unsigned granule_shift = 0;  // 12, 14 or 16
    unsigned input_bits = 0;     // 64 - T0SZ
    unsigned pa_bits = 0;        // from IPS
    int start_level = 0;
};
WalkerGeometry lpae_geometry(u64 tcr);

// Mali LPAE: what the GPU's address space latches on UPDATE, and its physical-address width.
struct MaliWalkerRegs {
    u64 transtab = 0;
    u64 memattr = 0;
    unsigned pa_bits = 40;
};

// AS_TRANSTAB in LPAE mode: [1:0] ADRMODE (3 = table walk), bit 2 READ_INNER, bit 4 SHARE_OUTER,
// [47:12] the level-0 table. `reserved` collects the bits that must be zero.
struct MaliTranstab {
    unsigned adrmode = 0;
    bool read_inner = false;
    bool share_outer = false;
    u64 table = 0;
    u64 reserved = 0;
};
MaliTranstab mali_decode_transtab(u64 transtab);

// Walks a Mali LPAE tree for va: always four levels from level 0, 9 index bits each from
// VA[47:12]; type 3 is a table at levels 0-2, type 1 a leaf at levels 1-3 (1 GiB, 2 MiB, 4 KiB);
// everything else faults. Bits the format does not define in a descriptor (AF, nG, NS, the
// contiguous hint, upper software bits) are reported as malformed: the Mali format has none of
// them, so finding one means a stage-1 attribute leaked into the table.
Translation mali_lpae_walk(const MaliWalkerRegs& regs, u64 va);

}  // namespace pgtable_test
