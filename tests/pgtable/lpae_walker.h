// An independent VMSAv8-64 stage-1 table walker for the io-pgtable tests, written from the Arm
// architecture description (translation table format, TCR/MAIR encodings), not from
// kernel_shim/iommu. It reads descriptors from the physical arena the way the GPU MMU does.
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

}  // namespace pgtable_test
