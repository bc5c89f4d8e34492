// Mirrors drivers/iommu/io-pgtable.c: format dispatch for alloc/free of page-table sets.
#include "kernel_shim/iommu/io_pgtable.h"

#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace iommu {

u64 arm_lpae_s1_tcr_value(const IoPgtableCfg& cfg) {
    const auto& tcr = cfg.arm_lpae_s1_cfg.tcr;
    u64 reg = u64{tcr.tsz} << 0;
    reg |= u64{tcr.irgn} << 8;
    reg |= u64{tcr.orgn} << 10;
    reg |= u64{tcr.sh} << 12;
    reg |= u64{tcr.tg} << 14;
    reg |= u64{1} << 23;  // EPD1: there is no TTBR1 half, so never walk it
    reg |= u64{tcr.ips} << 32;
    return reg;
}

IoPgtableOps* alloc_io_pgtable_ops(IoPgtableFmt fmt, IoPgtableCfg* cfg, void* cookie) {
    // A custom allocator must come as a pair: tables allocated by one are freed by the other.
    if (WARN_ON(!cfg->alloc != !cfg->free))
        return nullptr;

    IoPgtable* iop = nullptr;
    switch (fmt) {
    case IoPgtableFmt::ARM_64_LPAE_S1: iop = arm_64_lpae_alloc_pgtable_s1(cfg, cookie); break;
    case IoPgtableFmt::ARM_MALI_LPAE: iop = arm_mali_lpae_alloc_pgtable(cfg, cookie); break;
    }
    return iop;
}

void free_io_pgtable_ops(IoPgtableOps* ops) {
    if (!ops)
        return;
    IoPgtable* iop = io_pgtable_ops_to_pgtable(ops);
    io_pgtable_tlb_flush_all(iop);
    kshim::kdelete(iop);
}

}  // namespace iommu
