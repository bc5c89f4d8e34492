// Mirrors include/linux/io-pgtable.h: the page-table allocator interface IOMMU drivers build on.
//
// A driver fills an IoPgtableCfg (page sizes, input/output address bits, TLB callbacks, optional
// table-page allocator hooks), calls alloc_io_pgtable_ops() and gets back the ops it maps and
// unmaps through. The format writes the register values the hardware needs back into the cfg
// (TTBR, TCR, MAIR for ARM_64_LPAE_S1; TRANSTAB, MEMATTR for ARM_MALI_LPAE). Table pages live in the shim's physical arena, so a mock MMU can walk them by
// physical address exactly as hardware would.
//
// Callers serialise map/unmap on one page table (panthor holds the VM's op lock); iova_to_phys may
// run concurrently with them, as in the kernel.
#pragma once
#include "kernel_shim/gfp.h"
#include "kernel_shim/iommu/iommu.h"
#include "kernel_shim/sizes.h"
#include "kernel_shim/types.h"

namespace iommu {

using kshim::gfp_t;
using kshim::phys_addr_t;
using kshim::u32;
using kshim::u64;

using kshim::SZ_16K;
using kshim::SZ_1G;
using kshim::SZ_2M;
using kshim::SZ_32M;
using kshim::SZ_4K;
using kshim::SZ_512M;
using kshim::SZ_64K;

// The formats the Mali drivers use: panthor (and panfrost on some MediaTek parts) the VMSAv8-64
// stage-1 format, panfrost by default the Mali "legacy" LPAE format of Midgard/Bifrost MMUs.
enum class IoPgtableFmt {
    ARM_64_LPAE_S1,
    ARM_MALI_LPAE,
};

// TLB maintenance callbacks. They may be called from atomic context and must not sleep.
struct IommuFlushOps {
    // Invalidate the whole TLB context (called before a page table is freed).
    void (*tlb_flush_all)(void* cookie) = nullptr;
    // Invalidate walk-cache entries for a range whose intermediate tables were just removed.
    void (*tlb_flush_walk)(unsigned long iova, size_t size, size_t granule, void* cookie) = nullptr;
    // Optional: queue a leaf invalidation for one page into the gather.
    void (*tlb_add_page)(IommuIotlbGather* gather, unsigned long iova, size_t granule, void* cookie) = nullptr;
};

// Quirk bits (values as upstream).
inline constexpr unsigned long IO_PGTABLE_QUIRK_ARM_NS = 1ul << 0;
inline constexpr unsigned long IO_PGTABLE_QUIRK_ARM_OUTER_WBWA = 1ul << 6;
// The caller may map over live entries and unmap holes (for a GPU driver, userspace decides
// the addresses): a map over a live entry still fails with -EEXIST, and an unmap still stops at
// the first hole, but neither WARNs. Nothing else is silenced, as upstream: out-of-range iova or
// paddr, bad page sizes or alignment, and unmapping part of a block still WARN.
inline constexpr unsigned long IO_PGTABLE_QUIRK_NO_WARN = 1ul << 9;

struct IoPgtableCfg {
    unsigned long quirks = 0;
    unsigned long pgsize_bitmap = 0;
    unsigned int ias = 0;  // input (IOVA) bits
    unsigned int oas = 0;  // output (physical) bits
    // Whether the walker snoops CPU caches; selects the TCR's walk shareability/cacheability.
    bool coherent_walk = false;
    const IommuFlushOps* tlb = nullptr;

    // Table-page allocator hooks (set both or neither). alloc must return zeroed memory of at
    // least `size` bytes, aligned to `size`, inside the physical arena; it may return nullptr.
    // panthor uses them to hand out tables it pre-allocated before a fence-signalling section.
    // Unset: 4 KiB tables come from the pre-faulted page-table pool, larger ones from the page
    // allocator.
    void* (*alloc)(void* cookie, size_t size, gfp_t gfp) = nullptr;
    void (*free)(void* cookie, void* pages, size_t size) = nullptr;

    // Outputs of the ARM_64_LPAE_S1 format.
    struct ArmLpaeS1Cfg {
        u64 ttbr = 0;  // physical address of the top-level table
        struct {
            u32 ips : 3;   // intermediate physical size (TCR.IPS encoding)
            u32 tg : 2;    // TG0 granule encoding: 0 4K, 1 64K, 2 16K
            u32 sh : 2;    // walk shareability
            u32 orgn : 2;  // walk outer cacheability
            u32 irgn : 2;  // walk inner cacheability
            u32 tsz : 6;   // T0SZ = 64 - ias
        } tcr{};
        u64 mair = 0;
    } arm_lpae_s1_cfg;

    // Outputs of the ARM_MALI_LPAE format: the AS_TRANSTAB and AS_MEMATTR values. Upstream keeps
    // the per-format outputs in a union; here they are separate members and only the one of the
    // allocated format is written.
    struct ArmMaliLpaeCfg {
        u64 transtab = 0;  // level-0 table PA | ADRMODE_TABLE | READ_INNER [| SHARE_OUTER]
        u64 memattr = 0;   // attribute bytes indexed by the PTE's AttrIndx
    } arm_mali_lpae_cfg;
};

// The TCR fields packed into the TCR_EL1/SMMU CD layout (T0SZ, IRGN0, ORGN0, SH0, TG0, EPD1, IPS),
// the way arm-smmu drivers program them.
u64 arm_lpae_s1_tcr_value(const IoPgtableCfg& cfg);

// The operations on one set of page tables (upstream struct io_pgtable_ops).
class IoPgtableOps {
public:
    // Maps pgcount pages of pgsize at iova -> paddr. On success adds the bytes mapped to *mapped
    // and returns 0; on failure returns -errno and changes nothing (see docs/pgtable.md).
    virtual int map_pages(unsigned long iova, phys_addr_t paddr, size_t pgsize, size_t pgcount, int prot, gfp_t gfp,
                          size_t* mapped) = 0;
    // Unmaps up to pgcount entries of pgsize; returns the bytes unmapped (stops at a hole).
    virtual size_t unmap_pages(unsigned long iova, size_t pgsize, size_t pgcount, IommuIotlbGather* gather) = 0;
    // The physical address iova translates to, or 0 when unmapped.
    virtual phys_addr_t iova_to_phys(unsigned long iova) = 0;

protected:
    ~IoPgtableOps() = default;
};

// Internal state shared by all formats (upstream struct io_pgtable).
class IoPgtable : public IoPgtableOps {
public:
    IoPgtable(IoPgtableFmt fmt, void* cookie, const IoPgtableCfg& cfg) : fmt_(fmt), cookie_(cookie), cfg_(cfg) {}
    virtual ~IoPgtable() = default;
    IoPgtable(const IoPgtable&) = delete;
    IoPgtable& operator=(const IoPgtable&) = delete;

    IoPgtableFmt fmt_;
    void* cookie_;
    IoPgtableCfg cfg_;
};

inline IoPgtable* io_pgtable_ops_to_pgtable(IoPgtableOps* ops) {
    return static_cast<IoPgtable*>(ops);
}

inline void io_pgtable_tlb_flush_all(IoPgtable* iop) {
    if (iop->cfg_.tlb && iop->cfg_.tlb->tlb_flush_all)
        iop->cfg_.tlb->tlb_flush_all(iop->cookie_);
}
inline void io_pgtable_tlb_flush_walk(IoPgtable* iop, unsigned long iova, size_t size, size_t granule) {
    if (iop->cfg_.tlb && iop->cfg_.tlb->tlb_flush_walk)
        iop->cfg_.tlb->tlb_flush_walk(iova, size, granule, iop->cookie_);
}
inline void io_pgtable_tlb_add_page(IoPgtable* iop, IommuIotlbGather* gather, unsigned long iova, size_t granule) {
    if (iop->cfg_.tlb && iop->cfg_.tlb->tlb_add_page)
        iop->cfg_.tlb->tlb_add_page(gather, iova, granule, iop->cookie_);
}

// Allocates page tables described by *cfg (which is updated: pgsize_bitmap restricted, ias/oas
// clamped, register values filled in). nullptr if the configuration is unsupported or the
// top-level table cannot be allocated.
IoPgtableOps* alloc_io_pgtable_ops(IoPgtableFmt fmt, IoPgtableCfg* cfg, void* cookie);
// Flushes the TLB (tlb_flush_all) and frees every table. The tables must no longer be live.
void free_io_pgtable_ops(IoPgtableOps* ops);

// Format constructors (upstream io_pgtable_init_fns).
IoPgtable* arm_64_lpae_alloc_pgtable_s1(IoPgtableCfg* cfg, void* cookie);
IoPgtable* arm_mali_lpae_alloc_pgtable(IoPgtableCfg* cfg, void* cookie);

}  // namespace iommu
