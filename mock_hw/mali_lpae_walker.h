// The MMU's table walker for the Mali-LPAE ("legacy") page-table format of Job Manager GPUs
// (docs/hw/jm/mmu.md): the format io-pgtable's ARM_MALI_LPAE writes and panfrost uses by default.
// Written from the hardware description, independently of kernel_shim/iommu, so the two check
// each other. It shares AsConfig, Translation, WalkResult and check_permission with the
// AArch64-4K walker (lpae_walker.h): a TLB caches either walker's Translation alike.
#pragma once
#include "mock_hw/lpae_walker.h"

namespace mock_hw {

// Walks the Mali-LPAE tables of `cfg` for `va`. Only TRANSTAB (ADRMODE and table address) and
// pa_bits are read: the caller has already chosen this walker (TRANSCFG ADRMODE LEGACY, or a
// Midgard GPU without TRANSCFG). TRANSTAB[1:0] = 3 walks the tables, 2 maps identity, 0 and 1
// leave the AS disabled (translation fault at level 0). Access-independent faults only;
// permissions are checked per access by check_permission.
WalkResult mali_lpae_walk(const AsConfig& cfg, u64 va);

}  // namespace mock_hw
