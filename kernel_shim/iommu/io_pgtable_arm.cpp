// Mirrors drivers/iommu/io-pgtable-arm.c: the ARM LPAE (VMSAv8-64) stage-1 page-table format and
// the Mali LPAE format of Midgard/Bifrost GPU MMUs.
//
// Design:
// - One implementation, format branches where upstream has them. Mali LPAE is the same tree (4 KiB
//   granule, 9 bits per level, table type 3) with these differences: leaves are type 1 at every
//   level, level 3 included; permissions are stage-2 style (bit 6 read, bit 7 write); no AF, nG or
//   NS; always outer shareable; the walk always starts at level 0; and the cfg gets TRANSTAB and
//   MEMATTR instead of TTBR/TCR/MAIR.
// - A failed map_pages changes nothing (upstream leaves the prefix it mapped for the caller to
//   undo). The fast path fills leaf tables that already exist and are empty in one visit each.
//   Whatever it cannot do goes to a two-phase slow path: arm_lpae_check_range refuses live
//   entries (-EEXIST) and counts the missing tables; all of those are allocated up front (on
//   -ENOMEM they are freed again); __arm_lpae_map installs them and fills, and cannot fail. If the
//   slow path fails, the fast path's entries are cleared again.
// - The walk happens once per leaf table; a run of leaves is checked and filled with loops over
//   the whole run that the compiler turns into vector code.
// - unmap_pages keeps upstream's level semantics: pgsize selects the level, a run of entries at
//   that level is cleared, and entries there that point to tables free those tables. So an unmap
//   with 4 KiB pages keeps the leaf tables, one with 2 MiB over 4 KiB mappings frees them. One
//   tlb_flush_walk covers each run of freed tables (upstream issues one per table).
// - Table pages come from the physical arena through cfg.alloc/cfg.free or the pre-faulted
//   page-table pool, so a mock MMU can walk them by physical address.
#include "kernel_shim/iommu/io_pgtable_arm.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <source_location>

#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace iommu {
namespace {

using kshim::gfp_t;
using kshim::phys_addr_t;
using kshim::u64;

// Unaligned, aliasing-safe view of two PTEs: the native vector width of every x86-64 and arm64
// host, so run loops compile to plain vector loads and stores.
typedef u64 v2u64 __attribute__((vector_size(16), aligned(8), may_alias));

inline v2u64 load2(const arm_lpae_iopte* p) {
    return *reinterpret_cast<const v2u64*>(p);
}
inline void store2(arm_lpae_iopte* p, v2u64 v) {
    *reinterpret_cast<v2u64*>(p) = v;
}

// Bitwise OR of a run of entries: zero iff every entry is empty.
inline u64 ptes_or(const arm_lpae_iopte* p, size_t n) {
    size_t i = 0;
    u64 acc = 0;
    if (n >= 8) {
        v2u64 a = load2(p), b = load2(p + 2), c = load2(p + 4), d = load2(p + 6);
        for (i = 8; i + 8 <= n; i += 8) {
            a |= load2(p + i);
            b |= load2(p + i + 2);
            c |= load2(p + i + 4);
            d |= load2(p + i + 6);
        }
        a |= b | c | d;
        acc = a[0] | a[1];
    }
    for (; i < n; i++)
        acc |= p[i];
    return acc;
}

// Number of leading entries that are valid. Every non-empty entry this file writes is valid, so
// this is where a range unmap meets its first hole.
inline size_t ptes_valid_prefix(const arm_lpae_iopte* p, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v2u64 a = load2(p + i) & load2(p + i + 2) & load2(p + i + 4) & load2(p + i + 6);
        if (!(a[0] & a[1] & ARM_LPAE_PTE_VALID))
            break;
    }
    while (i < n && (p[i] & ARM_LPAE_PTE_VALID))
        i++;
    return i;
}

// p[i] = first + i * step, the shape of a run of leaves over contiguous physical memory.
inline void ptes_fill(arm_lpae_iopte* p, size_t n, u64 first, u64 step) {
    size_t i = 0;
    if (n >= 8) {
        v2u64 a = {first, first + step};
        v2u64 b = a + 2 * step, c = a + 4 * step, d = a + 6 * step;
        const u64 inc = 8 * step;
        for (; i + 8 <= n; i += 8) {
            store2(p + i, a);
            store2(p + i + 2, b);
            store2(p + i + 4, c);
            store2(p + i + 6, d);
            a += inc;
            b += inc;
            c += inc;
            d += inc;
        }
    }
    for (; i < n; i++)
        p[i] = first + i * step;
}

// Tables allocated before __arm_lpae_map runs, chained through their (otherwise zero) first word.
struct TableStash {
    arm_lpae_iopte* head = nullptr;
    void push(arm_lpae_iopte* table) {
        table[0] = reinterpret_cast<u64>(head);
        head = table;
    }
    arm_lpae_iopte* pop() {
        arm_lpae_iopte* table = head;
        head = reinterpret_cast<arm_lpae_iopte*>(table[0]);
        table[0] = 0;
        return table;
    }
};

struct MapCheck {
    size_t missing = 0;    // tables to allocate
    bool replace = false;  // some leaf-level entries are empty tables to be replaced by blocks
};

void* default_alloc_pages(size_t size, gfp_t gfp) {
    if (size <= kshim::PAGE_SIZE) {
        kshim::Page* page = kshim::pt_pool_alloc(gfp);
        return page ? kshim::page_address(page) : nullptr;
    }
    unsigned order = std::bit_width((size - 1) >> kshim::PAGE_SHIFT);
    kshim::Page* page = kshim::alloc_pages(gfp | kshim::__GFP_ZERO, order);
    return page ? kshim::page_address(page) : nullptr;
}

void default_free_pages(void* pages, size_t size) {
    if (size <= kshim::PAGE_SIZE) {
        kshim::pt_pool_free(kshim::virt_to_page(pages));
        return;
    }
    unsigned order = std::bit_width((size - 1) >> kshim::PAGE_SHIFT);
    kshim::__free_pages(kshim::virt_to_page(pages), order);
}

class ArmLpaeIoPgtable final : public IoPgtable {
public:
    ArmLpaeIoPgtable(IoPgtableFmt fmt, void* cookie, const IoPgtableCfg& cfg) : IoPgtable(fmt, cookie, cfg) {}
    ~ArmLpaeIoPgtable() override {
        if (pgd_)
            __arm_lpae_free_pgtable(start_level_, pgd_);
    }

    int map_pages(unsigned long iova, phys_addr_t paddr, size_t pgsize, size_t pgcount, int iommu_prot, gfp_t gfp,
                  size_t* mapped) override;
    size_t unmap_pages(unsigned long iova, size_t pgsize, size_t pgcount, IommuIotlbGather* gather) override;
    phys_addr_t iova_to_phys(unsigned long iova) override;

    arm_lpae_iopte arm_lpae_prot_to_pte(int prot) const;
    void* __arm_lpae_alloc_pages(size_t size, gfp_t gfp);
    void __arm_lpae_free_pages(void* pages, size_t size);

    int pgd_bits_ = 0;
    int start_level_ = 0;
    int bits_per_level_ = 0;
    bool pa_linear_ = true;  // no output address needs the 52-bit packing, so leaves are base + i * size
    arm_lpae_iopte* pgd_ = nullptr;

    // Filled by finish_geometry(): per-level shift and index mask, level per page-size shift,
    // and the arena's physical-to-virtual offset, so walks do no arithmetic beyond a lookup.
    int shift_[ARM_LPAE_MAX_LEVELS] = {};
    u64 idx_mask_[ARM_LPAE_MAX_LEVELS] = {};
    signed char level_of_shift_[64] = {};
    u64 p2v_ = 0;
    bool granule_64k_ = false;

    void finish_geometry() {
        for (int lvl = 0; lvl < ARM_LPAE_MAX_LEVELS; lvl++) {
            shift_[lvl] = (ARM_LPAE_MAX_LEVELS - lvl) * bits_per_level_ + 3;
            idx_mask_[lvl] = (u64{1} << (lvl == start_level_ ? pgd_bits_ : bits_per_level_)) - 1;
        }
        for (int b = 0; b < 64; b++)
            level_of_shift_[b] = -1;
        for (int lvl = start_level_; lvl < ARM_LPAE_MAX_LEVELS; lvl++)
            if (shift_[lvl] < 64)
                level_of_shift_[shift_[lvl]] = static_cast<signed char>(lvl);
        p2v_ = reinterpret_cast<u64>(kshim::phys_to_virt(kshim::kPhysBase)) - kshim::kPhysBase;
        granule_64k_ = granule() == SZ_64K;
    }

    int lvl_shift(int lvl) const { return shift_[lvl]; }
    u64 block_size(int lvl) const { return u64{1} << lvl_shift(lvl); }
    size_t granule() const { return size_t{8} << bits_per_level_; }
    size_t pgd_size() const { return size_t{8} << pgd_bits_; }
    size_t table_size(int lvl) const { return lvl == start_level_ ? pgd_size() : granule(); }
    size_t ptes_per_table(int lvl) const { return size_t{1} << (lvl == start_level_ ? pgd_bits_ : bits_per_level_); }
    size_t lvl_idx(u64 iova, int lvl) const { return (iova >> shift_[lvl]) & idx_mask_[lvl]; }
    // The level whose entries map exactly pgsize (a power of two), or -1.
    int leaf_level(size_t pgsize) const { return level_of_shift_[std::countr_zero(pgsize)]; }

    // The descriptor type of a leaf at lvl: Mali has no page type, its level-3 leaves are blocks.
    arm_lpae_iopte leaf_type(int lvl) const {
        return (lvl == ARM_LPAE_MAX_LEVELS - 1 && fmt_ != IoPgtableFmt::ARM_MALI_LPAE) ? ARM_LPAE_PTE_TYPE_PAGE
                                                                                       : ARM_LPAE_PTE_TYPE_BLOCK;
    }
    bool iopte_leaf(arm_lpae_iopte pte, int lvl) const { return (pte & ARM_LPAE_PTE_TYPE_MASK) == leaf_type(lvl); }
    static bool iopte_table(arm_lpae_iopte pte, int lvl) {
        return lvl != ARM_LPAE_MAX_LEVELS - 1 && (pte & ARM_LPAE_PTE_TYPE_MASK) == ARM_LPAE_PTE_TYPE_TABLE;
    }
    static arm_lpae_iopte paddr_to_iopte(phys_addr_t paddr) {
        // Of the bits that overlap, either [51:48] or [15:12] are zero for every legal address.
        return (paddr | (paddr >> (48 - 12))) & ARM_LPAE_PTE_ADDR_MASK;
    }
    phys_addr_t iopte_to_paddr(arm_lpae_iopte pte) const {
        u64 paddr = pte & ARM_LPAE_PTE_ADDR_MASK;
        if (!granule_64k_)
            return paddr;
        return (paddr | (paddr << (48 - 12))) & (ARM_LPAE_PTE_ADDR_MASK << 4);
    }
    arm_lpae_iopte* iopte_deref(arm_lpae_iopte pte) const {
        return reinterpret_cast<arm_lpae_iopte*>(iopte_to_paddr(pte) + p2v_);
    }

    size_t tables_needed(int lvl, u64 start, u64 end, int leaf) const;
    bool subtree_empty(int lvl, const arm_lpae_iopte* table) const;
    int arm_lpae_check_range(int lvl, arm_lpae_iopte* table, u64 start, u64 end, int leaf, MapCheck* chk) const;
    int arm_lpae_map_slow(u64 start, u64 end, u64 pa_delta, int leaf, arm_lpae_iopte prot, gfp_t gfp);
    void arm_lpae_clear_run(u64 start, u64 end, int leaf);
    void __arm_lpae_map(int lvl, arm_lpae_iopte* table, u64 start, u64 end, u64 pa_delta, int leaf, arm_lpae_iopte prot,
                        bool replace, TableStash* stash);
    void __arm_lpae_init_pte(phys_addr_t paddr, arm_lpae_iopte prot, int lvl, size_t num_entries, arm_lpae_iopte* ptep);
    void arm_lpae_install_table(arm_lpae_iopte* table, arm_lpae_iopte* ptep);
    size_t __arm_lpae_unmap(u64 iova, size_t size, int lvl, arm_lpae_iopte* ptep, size_t num_entries,
                            IommuIotlbGather* gather);
    void arm_lpae_free_tables_in_run(u64 iova, size_t size, int lvl, arm_lpae_iopte* ptep, size_t num_entries);
    void __arm_lpae_free_pgtable(int lvl, arm_lpae_iopte* table);
};

void* ArmLpaeIoPgtable::__arm_lpae_alloc_pages(size_t size, gfp_t gfp) {
    // Very small top-level tables still need 64-byte alignment in hardware.
    size_t alloc_size = std::max<size_t>(size, 64);
    void* pages = cfg_.alloc ? cfg_.alloc(cookie_, alloc_size, gfp) : default_alloc_pages(alloc_size, gfp);
    if (!pages)
        return nullptr;
    // The walker only knows physical addresses: a table outside the arena, or not aligned to its
    // size, could never be reached through a descriptor.
    phys_addr_t pa = kshim::virt_to_phys(pages);
    if (WARN_ON(!kshim::phys_range_valid(pa, alloc_size) || (pa & (alloc_size - 1)))) {
        __arm_lpae_free_pages(pages, size);
        return nullptr;
    }
    return pages;
}

void ArmLpaeIoPgtable::__arm_lpae_free_pages(void* pages, size_t size) {
    size_t alloc_size = std::max<size_t>(size, 64);
    if (cfg_.free)
        cfg_.free(cookie_, pages, alloc_size);
    else
        default_free_pages(pages, alloc_size);
}

arm_lpae_iopte ArmLpaeIoPgtable::arm_lpae_prot_to_pte(int prot) const {
    const bool mali = fmt_ == IoPgtableFmt::ARM_MALI_LPAE;
    arm_lpae_iopte pte;
    if (!mali) {
        pte = ARM_LPAE_PTE_nG;
        if (!(prot & IOMMU_WRITE) && (prot & IOMMU_READ))
            pte |= ARM_LPAE_PTE_AP_RDONLY;
        if (!(prot & IOMMU_PRIV))
            pte |= ARM_LPAE_PTE_AP_UNPRIV;
    } else {
        // Mali grants each access kind explicitly, the stage-2 way; it has no privilege levels.
        pte = ARM_LPAE_PTE_HAP_FAULT;
        if (prot & IOMMU_READ)
            pte |= ARM_LPAE_PTE_HAP_READ;
        if (prot & IOMMU_WRITE)
            pte |= ARM_LPAE_PTE_HAP_WRITE;
    }

    // Both formats select the memory type through an attribute index (MAIR / AS_MEMATTR).
    if (prot & IOMMU_MMIO)
        pte |= arm_lpae_iopte{ARM_LPAE_MAIR_ATTR_IDX_DEV} << ARM_LPAE_PTE_ATTRINDX_SHIFT;
    else if (prot & IOMMU_CACHE)
        pte |= arm_lpae_iopte{ARM_LPAE_MAIR_ATTR_IDX_CACHE} << ARM_LPAE_PTE_ATTRINDX_SHIFT;

    // Mali's inner domain is the GPU's own cores and its outer domain everything outside the GPU,
    // so a mapping shared with the CPU is outer shareable whether or not it is cached.
    pte |= ((prot & IOMMU_CACHE) && !mali) ? ARM_LPAE_PTE_SH_IS : ARM_LPAE_PTE_SH_OS;
    if (prot & IOMMU_NOEXEC)
        pte |= ARM_LPAE_PTE_XN;
    if (cfg_.quirks & IO_PGTABLE_QUIRK_ARM_NS)
        pte |= ARM_LPAE_PTE_NS;
    // Nothing tracks accesses, so an unset AF would only turn the first access into a fault. The
    // Mali format has no access flag.
    if (!mali)
        pte |= ARM_LPAE_PTE_AF;
    return pte;
}

size_t ArmLpaeIoPgtable::tables_needed(int lvl, u64 start, u64 end, int leaf) const {
    size_t n = 0;
    for (int k = lvl + 1; k <= leaf; k++) {
        int shift = lvl_shift(k - 1);  // a level-k table spans one level-(k-1) entry
        n += ((end - 1) >> shift) - (start >> shift) + 1;
    }
    return n;
}

bool ArmLpaeIoPgtable::subtree_empty(int lvl, const arm_lpae_iopte* table) const {
    size_t n = ptes_per_table(lvl);
    if (lvl == ARM_LPAE_MAX_LEVELS - 1)
        return ptes_or(table, n) == 0;
    for (size_t i = 0; i < n; i++) {
        arm_lpae_iopte pte = table[i];
        if (!pte)
            continue;
        if (!iopte_table(pte, lvl) || !subtree_empty(lvl + 1, iopte_deref(pte)))
            return false;
    }
    return true;
}

int ArmLpaeIoPgtable::arm_lpae_check_range(int lvl, arm_lpae_iopte* table, u64 start, u64 end, int leaf,
                                           MapCheck* chk) const {
    if (lvl == leaf) {
        arm_lpae_iopte* ptep = table + lvl_idx(start, lvl);
        size_t n = (end - start) >> lvl_shift(lvl);
        if (!ptes_or(ptep, n))
            return 0;
        for (size_t i = 0; i < n; i++) {
            arm_lpae_iopte pte = ptep[i];
            if (!pte)
                continue;
            // An emptied table may give way to a block; anything live must be unmapped first.
            if (iopte_table(pte, lvl) && subtree_empty(lvl + 1, iopte_deref(pte))) {
                chk->replace = true;
                continue;
            }
            return -EEXIST;
        }
        return 0;
    }

    const u64 bsz = block_size(lvl);
    for (size_t idx = lvl_idx(start, lvl); start < end; idx++) {
        u64 sub_end = std::min(end, (start & ~(bsz - 1)) + bsz);
        arm_lpae_iopte pte = table[idx];
        if (!pte) {
            chk->missing += tables_needed(lvl, start, sub_end, leaf);
        } else if (iopte_table(pte, lvl)) {
            int ret = arm_lpae_check_range(lvl + 1, iopte_deref(pte), start, sub_end, leaf, chk);
            if (ret)
                return ret;
        } else {
            return -EEXIST;  // a larger block already covers part of the range
        }
        start = sub_end;
    }
    return 0;
}

void ArmLpaeIoPgtable::__arm_lpae_init_pte(phys_addr_t paddr, arm_lpae_iopte prot, int lvl, size_t num_entries,
                                           arm_lpae_iopte* ptep) {
    const u64 sz = block_size(lvl);
    if (pa_linear_) {
        ptes_fill(ptep, num_entries, prot | paddr_to_iopte(paddr), sz);
        return;
    }
    for (size_t i = 0; i < num_entries; i++)
        ptep[i] = prot | paddr_to_iopte(paddr + i * sz);
}

void ArmLpaeIoPgtable::arm_lpae_install_table(arm_lpae_iopte* table, arm_lpae_iopte* ptep) {
    arm_lpae_iopte pte = paddr_to_iopte(kshim::virt_to_phys(table)) | ARM_LPAE_PTE_TYPE_TABLE;
    if (cfg_.quirks & IO_PGTABLE_QUIRK_ARM_NS)
        pte |= ARM_LPAE_PTE_NSTABLE;
    // A concurrent walker must see the zeroed table before the descriptor that points to it.
    __atomic_store_n(ptep, pte, __ATOMIC_RELEASE);
}

void ArmLpaeIoPgtable::__arm_lpae_map(int lvl, arm_lpae_iopte* table, u64 start, u64 end, u64 pa_delta, int leaf,
                                      arm_lpae_iopte prot, bool replace, TableStash* stash) {
    if (lvl == leaf) {
        const u64 bsz = block_size(lvl);
        arm_lpae_iopte* ptep = table + lvl_idx(start, lvl);
        size_t n = (end - start) >> lvl_shift(lvl);
        if (replace) {
            for (size_t i = 0; i < n; i++) {
                arm_lpae_iopte pte = ptep[i];
                if (!pte)
                    continue;
                // arm_lpae_check_range proved this is an empty table.
                ptep[i] = 0;
                io_pgtable_tlb_flush_walk(this, start + i * bsz, bsz, granule());
                __arm_lpae_free_pgtable(lvl + 1, iopte_deref(pte));
            }
        }
        __arm_lpae_init_pte(start + pa_delta, prot, lvl, n, ptep);
        return;
    }

    const u64 bsz = block_size(lvl);
    for (size_t idx = lvl_idx(start, lvl); start < end; idx++) {
        u64 sub_end = std::min(end, (start & ~(bsz - 1)) + bsz);
        arm_lpae_iopte pte = table[idx];
        arm_lpae_iopte* child;
        if (!pte) {
            child = stash->pop();
            arm_lpae_install_table(child, &table[idx]);
        } else {
            child = iopte_deref(pte);
        }
        __arm_lpae_map(lvl + 1, child, start, sub_end, pa_delta, leaf, prot, replace, stash);
        start = sub_end;
    }
}

int ArmLpaeIoPgtable::map_pages(unsigned long iova, phys_addr_t paddr, size_t pgsize, size_t pgcount, int iommu_prot,
                                gfp_t gfp, size_t* mapped) {
    const IoPgtableCfg& cfg = cfg_;

    if (WARN_ON(!pgsize || (pgsize & (pgsize - 1)) || (pgsize & cfg.pgsize_bitmap) != pgsize))
        return -EINVAL;
    if (!pgcount)
        return 0;
    // The iommu core's alignment check, done here because we are the core in this shim.
    if ((iova | paddr) & (pgsize - 1))
        return -EINVAL;
    const int pg_shift = std::countr_zero(pgsize);
    if (WARN_ON(iova >> cfg.ias || paddr >> cfg.oas || pgcount > (((u64{1} << cfg.ias) - iova) >> pg_shift) ||
                (paddr + (u64{pgcount} << pg_shift) - 1) >> cfg.oas))
        return -ERANGE;
    if (!(iommu_prot & (IOMMU_READ | IOMMU_WRITE)))
        return -EINVAL;

    const int leaf = leaf_level(pgsize);
    if (WARN_ON(leaf < 0))
        return -EINVAL;
    const u64 start = iova, end = iova + (u64{pgcount} << pg_shift);
    const u64 pa_delta = paddr - iova;
    const arm_lpae_iopte prot = arm_lpae_prot_to_pte(iommu_prot) | leaf_type(leaf);

    // Fast path: while every table on the way exists and the target run is empty, check and fill
    // each leaf table in one visit. Nothing it writes needs undoing unless the rest fails.
    u64 cur = start;
    while (cur < end) {
        arm_lpae_iopte* table = pgd_;
        int lvl = start_level_;
        for (; lvl < leaf; lvl++) {
            arm_lpae_iopte pte = table[lvl_idx(cur, lvl)];
            if (!iopte_table(pte, lvl))
                break;
            table = iopte_deref(pte);
        }
        if (lvl != leaf)
            break;
        const size_t idx = lvl_idx(cur, leaf);
        const size_t n = std::min<u64>((end - cur) >> pg_shift, idx_mask_[leaf] + 1 - idx);
        arm_lpae_iopte* ptep = table + idx;
        if (ptes_or(ptep, n))
            break;
        __arm_lpae_init_pte(cur + pa_delta, prot, leaf, n, ptep);
        cur += u64{n} << pg_shift;
    }

    if (cur != end) {
        int ret = arm_lpae_map_slow(cur, end, pa_delta, leaf, prot, gfp);
        if (ret) {
            arm_lpae_clear_run(start, cur, leaf);
            return ret;
        }
    }

    // Publish every PTE before the caller can kick off a walk of the new range.
    std::atomic_thread_fence(std::memory_order_release);
    *mapped += end - start;
    return 0;
}

// The rest of a map the fast path could not finish: missing tables, emptied tables to replace by
// blocks, or a conflict. Two-phase, so that it either succeeds completely or changes nothing.
int ArmLpaeIoPgtable::arm_lpae_map_slow(u64 start, u64 end, u64 pa_delta, int leaf, arm_lpae_iopte prot, gfp_t gfp) {
    MapCheck chk;
    int ret = arm_lpae_check_range(start_level_, pgd_, start, end, leaf, &chk);
    if (ret) {
        WARN_ON(!(cfg_.quirks & IO_PGTABLE_QUIRK_NO_WARN));  // we require an unmap first
        return ret;
    }

    TableStash stash;
    for (size_t i = 0; i < chk.missing; i++) {
        auto* table = static_cast<arm_lpae_iopte*>(__arm_lpae_alloc_pages(granule(), gfp));
        if (!table) {
            while (stash.head)
                __arm_lpae_free_pages(stash.pop(), granule());
            return -ENOMEM;
        }
        stash.push(table);
    }

    __arm_lpae_map(start_level_, pgd_, start, end, pa_delta, leaf, prot, chk.replace, &stash);
    WARN_ON(stash.head != nullptr);
    return 0;
}

// Undoes the fast path's part of a failed map: those entries were empty and their tables
// existed before, so clearing them restores the old state. They were briefly live, so the walk
// cache is invalidated for the range.
void ArmLpaeIoPgtable::arm_lpae_clear_run(u64 start, u64 end, int leaf) {
    if (start == end)
        return;
    for (u64 cur = start; cur < end;) {
        arm_lpae_iopte* table = pgd_;
        for (int lvl = start_level_; lvl < leaf; lvl++)
            table = iopte_deref(table[lvl_idx(cur, lvl)]);
        const size_t idx = lvl_idx(cur, leaf);
        const size_t n = std::min<u64>((end - cur) >> lvl_shift(leaf), idx_mask_[leaf] + 1 - idx);
        std::memset(table + idx, 0, n * sizeof(arm_lpae_iopte));
        cur += u64{n} << lvl_shift(leaf);
    }
    io_pgtable_tlb_flush_walk(this, start, end - start, granule());
}

void ArmLpaeIoPgtable::arm_lpae_free_tables_in_run(u64 iova, size_t size, int lvl, arm_lpae_iopte* ptep,
                                                   size_t num_entries) {
    // Tables are freed only after the walk cache stops pointing at them; batch so that one flush
    // covers many tables without needing memory beyond the stack.
    constexpr size_t kBatch = 512;
    arm_lpae_iopte old[kBatch];
    for (size_t base = 0; base < num_entries; base += kBatch) {
        size_t m = std::min(kBatch, num_entries - base);
        size_t k = 0, first = 0, last = 0;
        for (size_t j = 0; j < m; j++) {
            arm_lpae_iopte pte = ptep[base + j];
            if (!iopte_table(pte, lvl))
                continue;
            ptep[base + j] = 0;
            if (!k)
                first = j;
            last = j;
            old[k++] = pte;
        }
        if (!k)
            continue;
        io_pgtable_tlb_flush_walk(this, iova + (base + first) * size, (last - first + 1) * size, granule());
        for (size_t t = 0; t < k; t++)
            __arm_lpae_free_pgtable(lvl + 1, iopte_deref(old[t]));
    }
}

size_t ArmLpaeIoPgtable::__arm_lpae_unmap(u64 iova, size_t size, int lvl, arm_lpae_iopte* ptep, size_t num_entries,
                                          IommuIotlbGather* gather) {
    size_t i = ptes_valid_prefix(ptep, num_entries);
    if (!i)
        return 0;
    if (lvl != ARM_LPAE_MAX_LEVELS - 1)
        arm_lpae_free_tables_in_run(iova, size, lvl, ptep, i);
    if (i == 1)
        ptep[0] = 0;
    else
        std::memset(ptep, 0, i * sizeof(*ptep));

    if (gather && !iommu_iotlb_gather_queued(gather) && cfg_.tlb && cfg_.tlb->tlb_add_page)
        for (size_t j = 0; j < i; j++)
            io_pgtable_tlb_add_page(this, gather, iova + j * size, size);
    return i;
}

size_t ArmLpaeIoPgtable::unmap_pages(unsigned long iova, size_t pgsize, size_t pgcount, IommuIotlbGather* gather) {
    const IoPgtableCfg& cfg = cfg_;
    if (WARN_ON(!pgsize || (pgsize & (pgsize - 1)) || (pgsize & cfg.pgsize_bitmap) != pgsize || !pgcount))
        return 0;
    if (WARN_ON(iova >> cfg.ias || (iova & (pgsize - 1))))
        return 0;
    const int leaf = leaf_level(pgsize);
    if (WARN_ON(leaf < 0))
        return 0;
    // Nothing exists past the end of the input address space.
    pgcount = std::min<u64>(pgcount, ((u64{1} << cfg.ias) - iova) >> std::countr_zero(pgsize));

    size_t unmapped = 0;
    u64 cur = iova;
    while (pgcount) {
        arm_lpae_iopte* table = pgd_;
        for (int lvl = start_level_; lvl < leaf; lvl++) {
            arm_lpae_iopte pte = table[lvl_idx(cur, lvl)];
            if (!pte) {
                WARN_ON(!(cfg.quirks & IO_PGTABLE_QUIRK_NO_WARN));
                return unmapped;
            }
            if (!iopte_table(pte, lvl)) {
                static bool warned;
                if (!warned) {
                    warned = true;
                    WARN(true, "Unmap of a partial large IOPTE is not allowed");
                }
                return unmapped;
            }
            table = iopte_deref(pte);
        }
        size_t idx = lvl_idx(cur, leaf);
        size_t n = std::min<size_t>(pgcount, idx_mask_[leaf] + 1 - idx);
        size_t done = __arm_lpae_unmap(cur, pgsize, leaf, table + idx, n, gather);
        unmapped += done * pgsize;
        cur += done * pgsize;
        pgcount -= done;
        if (done < n) {
            WARN_ON(!(cfg.quirks & IO_PGTABLE_QUIRK_NO_WARN));  // ran into a hole
            break;
        }
    }
    return unmapped;
}

phys_addr_t ArmLpaeIoPgtable::iova_to_phys(unsigned long iova) {
    if (iova >> cfg_.ias)
        return 0;
    const arm_lpae_iopte* table = pgd_;
    for (int lvl = start_level_; lvl < ARM_LPAE_MAX_LEVELS; lvl++) {
        arm_lpae_iopte pte = __atomic_load_n(&table[lvl_idx(iova, lvl)], __ATOMIC_RELAXED);
        if (!pte)
            return 0;
        if (iopte_leaf(pte, lvl))
            return iopte_to_paddr(pte) | (iova & (block_size(lvl) - 1));
        if (!iopte_table(pte, lvl))
            return 0;
        table = iopte_deref(pte);
    }
    return 0;
}

void ArmLpaeIoPgtable::__arm_lpae_free_pgtable(int lvl, arm_lpae_iopte* table) {
    if (lvl != ARM_LPAE_MAX_LEVELS - 1) {
        size_t n = ptes_per_table(lvl);
        for (size_t i = 0; i < n; i++) {
            arm_lpae_iopte pte = table[i];
            if (pte && iopte_table(pte, lvl))
                __arm_lpae_free_pgtable(lvl + 1, iopte_deref(pte));
        }
    }
    __arm_lpae_free_pages(table, table_size(lvl));
}

void arm_lpae_restrict_pgsizes(IoPgtableCfg* cfg) {
    unsigned long granule, page_sizes;
    unsigned int max_addr_bits = 48;

    // Prefer the CPU page size, then the largest smaller size, then the smallest larger one.
    if (cfg->pgsize_bitmap & kshim::PAGE_SIZE)
        granule = kshim::PAGE_SIZE;
    else if (cfg->pgsize_bitmap & (kshim::PAGE_SIZE - 1))
        granule = 1ul << (std::bit_width(cfg->pgsize_bitmap & (kshim::PAGE_SIZE - 1)) - 1);
    else if (cfg->pgsize_bitmap & ~(kshim::PAGE_SIZE - 1))
        granule = 1ul << std::countr_zero(cfg->pgsize_bitmap & ~(kshim::PAGE_SIZE - 1));
    else
        granule = 0;

    switch (granule) {
    case SZ_4K: page_sizes = SZ_4K | SZ_2M | SZ_1G; break;
    case SZ_16K: page_sizes = SZ_16K | SZ_32M; break;
    case SZ_64K:
        max_addr_bits = 52;
        page_sizes = SZ_64K | SZ_512M;
        if (cfg->oas > 48)
            page_sizes |= 1ul << 42;  // 4 TiB blocks need the 52-bit output format
        break;
    default: page_sizes = 0;
    }

    cfg->pgsize_bitmap &= page_sizes;
    cfg->ias = std::min(cfg->ias, max_addr_bits);
    cfg->oas = std::min(cfg->oas, max_addr_bits);
}

// The geometry shared by every format: granule, levels, start level and pgd size from the
// (restricted) page sizes and ias. nullptr if the cfg cannot be walked; no pgd yet.
ArmLpaeIoPgtable* arm_lpae_alloc_pgtable(IoPgtableFmt fmt, IoPgtableCfg* cfg, void* cookie) {
    arm_lpae_restrict_pgsizes(cfg);
    if (!(cfg->pgsize_bitmap & (SZ_4K | SZ_16K | SZ_64K)))
        return nullptr;
    if (cfg->ias > ARM_LPAE_MAX_ADDR_BITS || cfg->oas > ARM_LPAE_MAX_ADDR_BITS)
        return nullptr;

    const int pg_shift = std::countr_zero(cfg->pgsize_bitmap);
    const int bits_per_level = pg_shift - 3;
    const int va_bits = int(cfg->ias) - pg_shift;
    if (va_bits <= 0)
        return nullptr;
    const int levels = (va_bits + bits_per_level - 1) / bits_per_level;
    if (levels > ARM_LPAE_MAX_LEVELS)
        return nullptr;

    auto* data = kshim::knew<ArmLpaeIoPgtable>(kshim::GFP_KERNEL, fmt, cookie, *cfg);
    if (!data)
        return nullptr;
    data->bits_per_level_ = bits_per_level;
    data->start_level_ = ARM_LPAE_MAX_LEVELS - levels;
    data->pgd_bits_ = va_bits - bits_per_level * (levels - 1);
    return data;
}

// Fixes the walk tables for the final geometry and allocates the (empty) pgd. False on -ENOMEM.
bool arm_lpae_alloc_pgd(ArmLpaeIoPgtable* data, const IoPgtableCfg& cfg) {
    data->pa_linear_ = cfg.oas <= 48;
    data->finish_geometry();
    data->pgd_ = static_cast<arm_lpae_iopte*>(data->__arm_lpae_alloc_pages(data->pgd_size(), kshim::GFP_KERNEL));
    if (!data->pgd_)
        return false;
    // The empty top-level table must be visible before anyone programs TTBR/TRANSTAB with it.
    std::atomic_thread_fence(std::memory_order_release);
    return true;
}

}  // namespace

IoPgtable* arm_64_lpae_alloc_pgtable_s1(IoPgtableCfg* cfg, void* cookie) {
    if (cfg->quirks & ~(IO_PGTABLE_QUIRK_ARM_NS | IO_PGTABLE_QUIRK_ARM_OUTER_WBWA | IO_PGTABLE_QUIRK_NO_WARN))
        return nullptr;

    ArmLpaeIoPgtable* data = arm_lpae_alloc_pgtable(IoPgtableFmt::ARM_64_LPAE_S1, cfg, cookie);
    if (!data)
        return nullptr;

    auto& tcr = cfg->arm_lpae_s1_cfg.tcr;
    if (cfg->coherent_walk) {
        if (cfg->quirks & IO_PGTABLE_QUIRK_ARM_OUTER_WBWA) {
            kshim::kdelete(data);
            return nullptr;
        }
        tcr.sh = ARM_LPAE_TCR_SH_IS;
        tcr.irgn = ARM_LPAE_TCR_RGN_WBWA;
        tcr.orgn = ARM_LPAE_TCR_RGN_WBWA;
    } else {
        tcr.sh = ARM_LPAE_TCR_SH_OS;
        tcr.irgn = ARM_LPAE_TCR_RGN_NC;
        tcr.orgn = (cfg->quirks & IO_PGTABLE_QUIRK_ARM_OUTER_WBWA) ? ARM_LPAE_TCR_RGN_WBWA : ARM_LPAE_TCR_RGN_NC;
    }

    switch (data->granule()) {
    case SZ_4K: tcr.tg = ARM_LPAE_TCR_TG0_4K; break;
    case SZ_16K: tcr.tg = ARM_LPAE_TCR_TG0_16K; break;
    case SZ_64K: tcr.tg = ARM_LPAE_TCR_TG0_64K; break;
    }

    switch (cfg->oas) {
    case 32: tcr.ips = ARM_LPAE_TCR_PS_32_BIT; break;
    case 36: tcr.ips = ARM_LPAE_TCR_PS_36_BIT; break;
    case 40: tcr.ips = ARM_LPAE_TCR_PS_40_BIT; break;
    case 42: tcr.ips = ARM_LPAE_TCR_PS_42_BIT; break;
    case 44: tcr.ips = ARM_LPAE_TCR_PS_44_BIT; break;
    case 48: tcr.ips = ARM_LPAE_TCR_PS_48_BIT; break;
    case 52: tcr.ips = ARM_LPAE_TCR_PS_52_BIT; break;
    default: kshim::kdelete(data); return nullptr;
    }
    tcr.tsz = 64 - cfg->ias;

    cfg->arm_lpae_s1_cfg.mair =
        (ARM_LPAE_MAIR_ATTR_NC << ARM_LPAE_MAIR_ATTR_SHIFT(ARM_LPAE_MAIR_ATTR_IDX_NC)) |
        (ARM_LPAE_MAIR_ATTR_WBRWA << ARM_LPAE_MAIR_ATTR_SHIFT(ARM_LPAE_MAIR_ATTR_IDX_CACHE)) |
        (ARM_LPAE_MAIR_ATTR_DEVICE << ARM_LPAE_MAIR_ATTR_SHIFT(ARM_LPAE_MAIR_ATTR_IDX_DEV)) |
        (ARM_LPAE_MAIR_ATTR_INC_OWBRWA << ARM_LPAE_MAIR_ATTR_SHIFT(ARM_LPAE_MAIR_ATTR_IDX_INC_OCACHE));

    if (!arm_lpae_alloc_pgd(data, *cfg)) {
        kshim::kdelete(data);
        return nullptr;
    }
    cfg->arm_lpae_s1_cfg.ttbr = kshim::virt_to_phys(data->pgd_);
    data->cfg_ = *cfg;
    return data;
}

IoPgtable* arm_mali_lpae_alloc_pgtable(IoPgtableCfg* cfg, void* cookie) {
    // Upstream accepts no quirk for Mali, not even NO_WARN.
    if (cfg->quirks)
        return nullptr;
    // Upstream limits Mali to a 48-bit VA (four 9-bit levels) and a 40-bit PA.
    if (cfg->ias > 48 || cfg->oas > 40)
        return nullptr;
    // Only the 4 KiB granule exists.
    cfg->pgsize_bitmap &= SZ_4K | SZ_2M | SZ_1G;

    ArmLpaeIoPgtable* data = arm_lpae_alloc_pgtable(IoPgtableFmt::ARM_MALI_LPAE, cfg, cookie);
    if (!data)
        return nullptr;

    // TRANSTAB has no input-size field: the MMU always walks four levels from level 0. A smaller
    // ias gets a one-entry level-0 table (index always 0) above a normal level-1 table.
    if (data->start_level_ > 0) {
        data->start_level_ = 0;
        data->pgd_bits_ = 0;
    }

    // Mali has no non-cacheable memory type; the non-cached and device indices get the
    // "implementation-defined" policy (as the vendor driver does), the cached one write-allocate.
    cfg->arm_mali_lpae_cfg.memattr =
        (ARM_MALI_LPAE_MEMATTR_IMP_DEF << ARM_LPAE_MAIR_ATTR_SHIFT(ARM_LPAE_MAIR_ATTR_IDX_NC)) |
        (ARM_MALI_LPAE_MEMATTR_WRITE_ALLOC << ARM_LPAE_MAIR_ATTR_SHIFT(ARM_LPAE_MAIR_ATTR_IDX_CACHE)) |
        (ARM_MALI_LPAE_MEMATTR_IMP_DEF << ARM_LPAE_MAIR_ATTR_SHIFT(ARM_LPAE_MAIR_ATTR_IDX_DEV));

    if (!arm_lpae_alloc_pgd(data, *cfg)) {
        kshim::kdelete(data);
        return nullptr;
    }
    cfg->arm_mali_lpae_cfg.transtab =
        kshim::virt_to_phys(data->pgd_) | ARM_MALI_LPAE_TTBR_READ_INNER | ARM_MALI_LPAE_TTBR_ADRMODE_TABLE;
    // A coherent GPU snoops the CPU caches on its table walks.
    if (cfg->coherent_walk)
        cfg->arm_mali_lpae_cfg.transtab |= ARM_MALI_LPAE_TTBR_SHARE_OUTER;
    data->cfg_ = *cfg;
    return data;
}

}  // namespace iommu
