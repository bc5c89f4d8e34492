// Mirrors drivers/gpu/drm/panfrost/panfrost_mmu.c: AS commands and programming, AS allocation
// with the LRU, VM creation (io-pgtable ARM_MALI_LPAE, drm_mm with the exec colour rule), BO
// mapping, the growable-heap fault path and the MMU IRQ.
#include "panfrost/panfrost_mmu.h"

#include <algorithm>
#include <bit>

#include "hw/jm/regs/gpu_regs.h"
#include "hw/jm/regs/mmu_regs.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/err.h"
#include "kernel_shim/iommu/iommu.h"
#include "kernel_shim/iopoll.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_job.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost {

using namespace kshim;

namespace {

constexpr u64 SZ_4K = iommu::SZ_4K;
constexpr u64 SZ_2M = iommu::SZ_2M;
constexpr u64 SZ_1G = iommu::SZ_1G;
constexpr u64 SZ_16M = u64{16} << 20;
constexpr u64 SZ_32M = u64{32} << 20;
constexpr u64 SZ_4G = u64{4} << 30;
constexpr u64 NUM_FAULT_PAGES = SZ_2M / PAGE_SIZE;
constexpr unsigned HEAP_CHUNK_ORDER = 9;
static_assert((size_t{1} << HEAP_CHUNK_ORDER) == NUM_FAULT_PAGES);

inline u32 mmu_read(panfrost_device* pfdev, u32 reg) {
    return gpu_read(pfdev, reg);
}
inline void mmu_write(panfrost_device* pfdev, u32 reg, u32 data) {
    gpu_write(pfdev, reg, data);
}

// Waits (atomically: callers hold as_lock) for the AS to take commands again.
int wait_ready(panfrost_device* pfdev, u32 as_nr) {
    u32 val;
    const int ret = read_poll_timeout_atomic(mmu_read, val, !(val & AS_STATUS_AS_ACTIVE), 10, 100000, false, pfdev,
                                             AS_STATUS(as_nr));
    if (ret) {
        // The GPU is wedged: the reset work recovers it (and resubmits the jobs).
        panfrost_device_schedule_reset(pfdev);
        dev_err(pfdev->dev, "AS_ACTIVE bit stuck");
    }
    return ret;
}

int write_cmd(panfrost_device* pfdev, u32 as_nr, u32 cmd) {
    const int status = wait_ready(pfdev, as_nr);
    if (!status)
        mmu_write(pfdev, AS_COMMAND(as_nr), cmd);
    return status;
}

// LOCK the smallest naturally aligned power-of-two region (at least 32 KiB) covering the range.
void lock_region(panfrost_device* pfdev, u32 as_nr, u64 region_start, u64 size) {
    if (!size)
        return;
    const u64 region_end = region_start + size;
    const int width = std::max<int>(64 - std::countl_zero(region_start ^ (region_end - 1)),
                                    std::countr_zero(u64{AS_LOCK_REGION_MIN_SIZE})) -
                      1;
    region_start &= ~((u64{1} << width) - 1);
    const u64 region = region_start | static_cast<u64>(width);
    mmu_write(pfdev, AS_LOCKADDR_LO(as_nr), static_cast<u32>(region));
    mmu_write(pfdev, AS_LOCKADDR_HI(as_nr), static_cast<u32>(region >> 32));
    write_cmd(pfdev, as_nr, AS_COMMAND_LOCK);
}

int mmu_hw_do_operation_locked(panfrost_device* pfdev, int as_nr, u64 iova, u64 size, u32 op) {
    if (as_nr < 0)
        return 0;
    if (op != AS_COMMAND_UNLOCK)
        lock_region(pfdev, as_nr, iova, size);
    write_cmd(pfdev, as_nr, op);
    return wait_ready(pfdev, as_nr);
}

int mmu_hw_do_operation(panfrost_device* pfdev, panfrost_mmu* mmu, u64 iova, u64 size, u32 op) {
    SpinGuard g(pfdev->as_lock);
    return mmu_hw_do_operation_locked(pfdev, mmu->as, iova, size, op);
}

void panfrost_mmu_enable(panfrost_device* pfdev, panfrost_mmu* mmu) {
    const int as_nr = mmu->as;
    const u64 transtab = mmu->cfg.transtab;
    const u64 memattr = mmu->cfg.memattr;
    const u64 transcfg = mmu->cfg.transcfg;

    mmu_hw_do_operation_locked(pfdev, as_nr, 0, ~u64{0}, AS_COMMAND_FLUSH_MEM);

    mmu_write(pfdev, AS_TRANSTAB_LO(as_nr), static_cast<u32>(transtab));
    mmu_write(pfdev, AS_TRANSTAB_HI(as_nr), static_cast<u32>(transtab >> 32));
    mmu_write(pfdev, AS_MEMATTR_LO(as_nr), static_cast<u32>(memattr));
    mmu_write(pfdev, AS_MEMATTR_HI(as_nr), static_cast<u32>(memattr >> 32));
    mmu_write(pfdev, AS_TRANSCFG_LO(as_nr), static_cast<u32>(transcfg));
    mmu_write(pfdev, AS_TRANSCFG_HI(as_nr), static_cast<u32>(transcfg >> 32));
    write_cmd(pfdev, as_nr, AS_COMMAND_UPDATE);
}

// Stops the AS translating: TRANSTAB 0 and TRANSCFG UNMAPPED, then UPDATE.
void panfrost_mmu_disable(panfrost_device* pfdev, u32 as_nr) {
    mmu_hw_do_operation_locked(pfdev, static_cast<int>(as_nr), 0, ~u64{0}, AS_COMMAND_FLUSH_MEM);

    mmu_write(pfdev, AS_TRANSTAB_LO(as_nr), 0);
    mmu_write(pfdev, AS_TRANSTAB_HI(as_nr), 0);
    mmu_write(pfdev, AS_MEMATTR_LO(as_nr), 0);
    mmu_write(pfdev, AS_MEMATTR_HI(as_nr), 0);
    mmu_write(pfdev, AS_TRANSCFG_LO(as_nr), AS_TRANSCFG_ADRMODE_UNMAPPED);
    mmu_write(pfdev, AS_TRANSCFG_HI(as_nr), 0);
    write_cmd(pfdev, as_nr, AS_COMMAND_UPDATE);
}

// Size and count of the next io-pgtable call: 2 MiB blocks where address and length allow,
// never across a 1 GiB table boundary; else 4 KiB pages up to the next 2 MiB boundary.
size_t get_pgsize(u64 addr, size_t size, size_t* count) {
    size_t blk_offset = (0 - addr) % SZ_2M;
    if (blk_offset || size < SZ_2M) {
        *count = (blk_offset ? std::min(blk_offset, size) : size) / SZ_4K;
        return SZ_4K;
    }
    blk_offset = (0 - addr) % SZ_1G;
    if (!blk_offset)
        blk_offset = SZ_1G;
    *count = std::min(blk_offset, size) / SZ_2M;
    return SZ_2M;
}

void panfrost_mmu_flush_range(panfrost_device* pfdev, panfrost_mmu* mmu, u64 iova, u64 size) {
    if (mmu->as < 0)
        return;
    pm_runtime_get_noresume(pfdev->dev);
    // Only an awake GPU has TLBs to flush; a resume programs the AS afresh.
    if (pm_runtime_active(pfdev->dev))
        mmu_hw_do_operation(pfdev, mmu, iova, size, AS_COMMAND_FLUSH_PT);
    pm_runtime_put_autosuspend(pfdev->dev);
}

int mmu_map_sg(panfrost_device* pfdev, panfrost_mmu* mmu, u64 iova, int prot, kshim::sg_table* sgt) {
    iommu::IoPgtableOps* ops = mmu->pgtbl_ops;
    const u64 start_iova = iova;

    for (u32 i = 0; i < sgt->nents; i++) {
        u64 paddr = sg_dma_address(&sgt->sgl[i]);
        size_t len = sg_dma_len(&sgt->sgl[i]);
        while (len) {
            size_t pgcount = 0, mapped = 0;
            const size_t pgsize = get_pgsize(iova | paddr, len, &pgcount);
            ops->map_pages(iova, paddr, pgsize, pgcount, prot, GFP_KERNEL, &mapped);
            // Move on even if the call failed, as upstream.
            mapped = std::max(mapped, pgsize);
            iova += mapped;
            paddr += mapped;
            len -= mapped;
        }
    }
    panfrost_mmu_flush_range(pfdev, mmu, start_iova, iova - start_iova);
    return 0;
}

// io-pgtable's TLB hooks: nothing to do, panfrost flushes through the AS after each update.
void mmu_tlb_inv_context_s1(void*) {}
void mmu_tlb_flush_walk(unsigned long, size_t, size_t, void*) {}

const iommu::IommuFlushOps mmu_tlb_ops = {
    .tlb_flush_all = mmu_tlb_inv_context_s1,
    .tlb_flush_walk = mmu_tlb_flush_walk,
    .tlb_add_page = nullptr,
};

// The mapping of the VM bound to `as` that covers `addr`, with a reference; nullptr if none.
panfrost_gem_mapping* addr_to_mapping(panfrost_device* pfdev, int as, u64 addr) {
    panfrost_gem_mapping* mapping = nullptr;
    const u64 offset = addr >> PAGE_SHIFT;

    SpinGuard g(pfdev->as_lock);
    panfrost_mmu* mmu = nullptr;
    for (list_head* it = pfdev->as_lru_list.next; it != &pfdev->as_lru_list; it = it->next) {
        auto* m = container_of(it, panfrost_mmu, list);
        if (m->as == as) {
            mmu = m;
            break;
        }
    }
    if (!mmu)
        return nullptr;

    SpinGuard mg(mmu->mm_lock);
    drm::drm_mm_node* node = drm::__drm_mm_interval_first(&mmu->mm, offset, offset);
    if (node && drm::drm_mm_node_allocated(node) && offset >= node->start && offset < node->start + node->size) {
        mapping = drm_mm_node_to_panfrost_mapping(node);
        kref_get(&mapping->refcount);
    }
    return mapping;
}

int panfrost_mmu_map_fault_addr(panfrost_device* pfdev, int as, u64 addr) {
    panfrost_gem_mapping* bomapping = addr_to_mapping(pfdev, as, addr);
    if (!bomapping)
        return -ENOENT;

    panfrost_gem_object* bo = bomapping->obj;
    int ret = 0;
    if (!bo->is_heap) {
        dev_warn(pfdev->dev, "matching BO is not heap type (GPU VA = %llx)",
                 static_cast<unsigned long long>(bomapping->mmnode.start << PAGE_SHIFT));
        WARN_ON(true);
        panfrost_gem_mapping_put(bomapping);
        return -EINVAL;
    }
    WARN_ON(bomapping->mmu->as != as);

    // Heaps are 2 MiB aligned and sized: serve the whole chunk.
    addr &= ~(SZ_2M - 1);
    const u64 page_offset = (addr >> PAGE_SHIFT) - bomapping->mmnode.start;
    const size_t chunk = page_offset / NUM_FAULT_PAGES;
    drm::drm_gem_object* obj = &bo->base.base;

    dma_resv_lock(obj->resv, nullptr);
    if (!bo->sgts) {
        const size_t n = obj->size / SZ_2M;
        bo->sgts = static_cast<kshim::sg_table*>(kcalloc(n, sizeof(kshim::sg_table), GFP_KERNEL));
        bo->heap_chunks = static_cast<Page**>(kcalloc(n, sizeof(Page*), GFP_KERNEL));
        if (!bo->sgts || !bo->heap_chunks) {
            kfree(bo->sgts);
            kfree(bo->heap_chunks);
            bo->sgts = nullptr;
            bo->heap_chunks = nullptr;
            ret = -ENOMEM;
            goto out_unlock;
        }
    }

    {
        kshim::sg_table* sgt = &bo->sgts[chunk];
        if (sgt->nents) {
            // Already populated (another fault on the same chunk got there first).
            goto out_unlock;
        }
        Page* pages = alloc_pages(GFP_KERNEL | __GFP_ZERO, HEAP_CHUNK_ORDER);
        if (!pages) {
            ret = -ENOMEM;
            goto out_unlock;
        }
        sgt->sgl = static_cast<kshim::sg_table::Segment*>(kmalloc(sizeof(kshim::sg_table::Segment), GFP_KERNEL));
        if (!sgt->sgl) {
            __free_pages(pages, HEAP_CHUNK_ORDER);
            ret = -ENOMEM;
            goto out_unlock;
        }
        bo->heap_chunks[chunk] = pages;
        sgt->sgl[0] = {page_to_phys(pages), SZ_2M};
        sgt->nents = 1;

        mmu_map_sg(pfdev, bomapping->mmu, addr, iommu::IOMMU_WRITE | iommu::IOMMU_READ | iommu::IOMMU_NOEXEC, sgt);
        bomapping->active = true;
        bo->heap_rss_size += SZ_2M;
        dev_dbg(pfdev->dev, "mapped page fault @ AS%d %llx", as, static_cast<unsigned long long>(addr));
    }

out_unlock:
    dma_resv_unlock(obj->resv);
    panfrost_gem_mapping_put(bomapping);
    return ret;
}

void panfrost_mmu_release_ctx(kref* kref) {
    auto* mmu = container_of(kref, panfrost_mmu, refcount);
    panfrost_device* pfdev = mmu->pfdev;

    // The runtime-PM reference is taken outside as_lock: the shim's put may schedule work.
    pm_runtime_get_noresume(pfdev->dev);
    {
        SpinGuard g(pfdev->as_lock);
        if (mmu->as >= 0) {
            if (pm_runtime_active(pfdev->dev))
                panfrost_mmu_disable(pfdev, mmu->as);
            pfdev->as_alloc_mask &= ~(1ul << mmu->as);
            list_del_init(&mmu->list);
        }
    }
    pm_runtime_put_autosuspend(pfdev->dev);

    iommu::free_io_pgtable_ops(mmu->pgtbl_ops);
    drm::drm_mm_takedown(&mmu->mm);
    kdelete(mmu);
}

constexpr u64 PFN_4G = SZ_4G >> PAGE_SHIFT;
constexpr u64 PFN_4G_MASK = PFN_4G - 1;
constexpr u64 PFN_16M = SZ_16M >> PAGE_SHIFT;

// Executable BOs (colour without NOEXEC) may not start or end on a 4 GiB boundary, nor start in
// the last 16 MiB below one.
void panfrost_drm_mm_color_adjust(const drm::drm_mm_node*, unsigned long color, u64* start, u64* end) {
    if (color & PANFROST_BO_NOEXEC)
        return;
    if ((*start & PFN_4G_MASK) == 0)
        (*start)++;
    if ((*end & PFN_4G_MASK) == 0)
        (*end)--;
    const u64 next_seg = (*start + PFN_4G - 1) & ~PFN_4G_MASK;
    if (next_seg - *start <= PFN_16M)
        *start = next_seg + 1;
    *end = std::min(*end, ((*start + PFN_4G - 1) & ~PFN_4G_MASK) - 1);
}

const char* access_type_name(panfrost_device* pfdev, u32 fault_status) {
    switch (fault_status & AS_FAULTSTATUS_ACCESS_TYPE_MASK) {
    case AS_FAULTSTATUS_ACCESS_TYPE_ATOMIC:
        return panfrost_has_hw_feature(pfdev, HW_FEATURE_AARCH64_MMU) ? "ATOMIC" : "UNKNOWN";
    case AS_FAULTSTATUS_ACCESS_TYPE_READ: return "READ";
    case AS_FAULTSTATUS_ACCESS_TYPE_WRITE: return "WRITE";
    case AS_FAULTSTATUS_ACCESS_TYPE_EX: return "EXECUTE";
    default: WARN_ON(true); return nullptr;
    }
}

irqreturn_t panfrost_mmu_irq_handler(int, void* data) {
    auto* pfdev = static_cast<panfrost_device*>(data);
    // The line is shared: a suspended MMU's registers are not ours to read.
    if (pfdev->is_suspended.load() & (1u << PANFROST_COMP_BIT_MMU))
        return IRQ_NONE;
    if (!mmu_read(pfdev, MMU_INT_STAT))
        return IRQ_NONE;
    mmu_write(pfdev, MMU_INT_MASK, 0);
    return IRQ_WAKE_THREAD;
}

irqreturn_t panfrost_mmu_irq_handler_thread(int, void* data) {
    auto* pfdev = static_cast<panfrost_device*>(data);
    u32 status;
    {
        SpinGuard g(pfdev->as_lock);
        status = mmu_read(pfdev, MMU_INT_RAWSTAT) & ~pfdev->as_faulty_mask;
    }

    while (status) {
        const u32 as = static_cast<u32>(std::countr_zero(status | (status >> 16)));
        const u32 mask = BIT(as) | BIT(as + 16);

        const u32 fault_status = mmu_read(pfdev, AS_FAULTSTATUS(as));
        u64 addr = mmu_read(pfdev, AS_FAULTADDRESS_LO(as));
        addr |= static_cast<u64>(mmu_read(pfdev, AS_FAULTADDRESS_HI(as))) << 32;

        const u32 exception_type = fault_status & 0xFF;
        const u32 access_type = (fault_status >> 8) & 0x3;
        const u32 source_id = fault_status >> 16;

        // Cleared before handling: a fault raised meanwhile is not lost.
        mmu_write(pfdev, MMU_INT_CLEAR, mask);

        // Only a translation fault with no bus error can be a heap growing.
        int ret = -1;
        if ((status & mask) == BIT(as) && (exception_type & 0xF8) == 0xC0)
            ret = panfrost_mmu_map_fault_addr(pfdev, static_cast<int>(as), addr);

        if (ret) {
            dev_err(pfdev->dev,
                    "Unhandled Page fault in AS%u at VA 0x%016llX\n"
                    "Reason: %s\n"
                    "raw fault status: 0x%X\n"
                    "decoded fault status: %s\n"
                    "exception type 0x%X: %s\n"
                    "access type 0x%X: %s\n"
                    "source id 0x%X",
                    as, static_cast<unsigned long long>(addr), "TODO", fault_status,
                    (fault_status & (1u << 10)) ? "DECODER FAULT" : "SLAVE FAULT", exception_type,
                    panfrost_exception_name(exception_type), access_type, access_type_name(pfdev, fault_status),
                    source_id);

            SpinGuard g(pfdev->as_lock);
            // Its interrupts stay ignored until as_get re-enables the AS.
            pfdev->as_faulty_mask |= mask;
            // A disabled AS fails every job running on it.
            panfrost_mmu_disable(pfdev, as);
        }

        status &= ~mask;
        // Faults that arrived meanwhile are handled before returning.
        if (!status) {
            SpinGuard g(pfdev->as_lock);
            status = mmu_read(pfdev, MMU_INT_RAWSTAT) & ~pfdev->as_faulty_mask;
        }
    }

    // Not when a suspend is on its way: it masked everything on purpose.
    if (!(pfdev->is_suspended.load() & (1u << PANFROST_COMP_BIT_MMU))) {
        SpinGuard g(pfdev->as_lock);
        mmu_write(pfdev, MMU_INT_MASK, ~pfdev->as_faulty_mask);
    }
    return IRQ_HANDLED;
}

}  // namespace

u32 panfrost_mmu_as_get(panfrost_device* pfdev, panfrost_mmu* mmu) {
    SpinGuard g(pfdev->as_lock);

    int as = mmu->as;
    if (as >= 0) {
        const int en = mmu->as_count.fetch_add(1) + 1;
        const u32 mask = BIT(as) | BIT(16 + as);
        // Each job slot and perfcnt may hold the AS.
        WARN_ON(en >= static_cast<int>(NUM_JOB_SLOTS) + 1);
        list_move(&mmu->list, &pfdev->as_lru_list);

        if (pfdev->as_faulty_mask & mask) {
            // Disabled after an unhandled fault: clear and unmask its interrupts, program it again.
            mmu_write(pfdev, MMU_INT_CLEAR, mask);
            mmu_write(pfdev, MMU_INT_MASK, ~pfdev->as_faulty_mask);
            pfdev->as_faulty_mask &= ~mask;
            panfrost_mmu_enable(pfdev, mmu);
        }
        return static_cast<u32>(as);
    }

    // The first AS nobody holds, else the least recently used VM without users gives up its own.
    as = std::countr_one(pfdev->as_alloc_mask);
    if (as >= static_cast<int>(MAX_AS) || !(BIT(as) & pfdev->features.as_present)) {
        panfrost_mmu* lru_mmu = nullptr;
        for (list_head* it = pfdev->as_lru_list.prev; it != &pfdev->as_lru_list; it = it->prev) {
            auto* m = container_of(it, panfrost_mmu, list);
            if (!m->as_count.load()) {
                lru_mmu = m;
                break;
            }
        }
        if (WARN_ON(!lru_mmu))
            return ~0u;
        list_del_init(&lru_mmu->list);
        as = lru_mmu->as;
        WARN_ON(as < 0);
        lru_mmu->as = -1;
    }

    mmu->as = as;
    pfdev->as_alloc_mask |= 1ul << as;
    mmu->as_count.store(1);
    list_add(&mmu->list, &pfdev->as_lru_list);
    dev_dbg(pfdev->dev, "Assigned AS%d to mmu %p, alloc_mask=%lx", as, static_cast<void*>(mmu), pfdev->as_alloc_mask);

    panfrost_mmu_enable(pfdev, mmu);
    return static_cast<u32>(as);
}

void panfrost_mmu_as_put(panfrost_device*, panfrost_mmu* mmu) {
    const int left = mmu->as_count.fetch_sub(1) - 1;
    WARN_ON(left < 0);
}

void panfrost_mmu_reset(panfrost_device* pfdev) {
    pfdev->is_suspended.fetch_and(~(1u << PANFROST_COMP_BIT_MMU));
    {
        SpinGuard g(pfdev->as_lock);
        pfdev->as_alloc_mask = 0;
        pfdev->as_faulty_mask = 0;
        while (!list_empty(&pfdev->as_lru_list)) {
            auto* mmu = container_of(pfdev->as_lru_list.next, panfrost_mmu, list);
            mmu->as = -1;
            mmu->as_count.store(0);
            list_del_init(&mmu->list);
        }
    }
    mmu_write(pfdev, MMU_INT_CLEAR, ~0u);
    mmu_write(pfdev, MMU_INT_MASK, ~0u);
}

int panfrost_mmu_map(panfrost_gem_mapping* mapping) {
    panfrost_gem_object* bo = mapping->obj;
    drm::drm_gem_shmem_object* shmem = &bo->base;
    panfrost_device* pfdev = to_panfrost_device(shmem->base.dev);
    int prot = iommu::IOMMU_READ | iommu::IOMMU_WRITE;

    if (WARN_ON(mapping->active))
        return 0;
    if (bo->noexec)
        prot |= iommu::IOMMU_NOEXEC;

    kshim::sg_table* sgt = nullptr;
    const int ret = drm::drm_gem_shmem_get_pages_sgt(shmem, &sgt);
    if (WARN_ON(ret))
        return ret;
    mmu_map_sg(pfdev, mapping->mmu, mapping->mmnode.start << PAGE_SHIFT, prot, sgt);
    mapping->active = true;
    return 0;
}

void panfrost_mmu_unmap(panfrost_gem_mapping* mapping) {
    panfrost_gem_object* bo = mapping->obj;
    panfrost_device* pfdev = to_panfrost_device(bo->base.base.dev);
    iommu::IoPgtableOps* ops = mapping->mmu->pgtbl_ops;
    u64 iova = mapping->mmnode.start << PAGE_SHIFT;
    const size_t len = mapping->mmnode.size << PAGE_SHIFT;
    size_t unmapped_len = 0;

    if (WARN_ON(!mapping->active))
        return;

    while (unmapped_len < len) {
        size_t pgcount = 0;
        const size_t pgsize = get_pgsize(iova, len - unmapped_len, &pgcount);
        // A heap is mapped chunk by chunk: skip the holes one entry at a time.
        if (bo->is_heap)
            pgcount = 1;
        if (!bo->is_heap || ops->iova_to_phys(iova)) {
            const size_t unmapped_page = ops->unmap_pages(iova, pgsize, pgcount, nullptr);
            WARN_ON(unmapped_page != pgsize * pgcount);
        }
        iova += pgsize * pgcount;
        unmapped_len += pgsize * pgcount;
    }
    panfrost_mmu_flush_range(pfdev, mapping->mmu, mapping->mmnode.start << PAGE_SHIFT, len);
    mapping->active = false;
}

void panfrost_mmu_ctx_put(panfrost_mmu* mmu) {
    kref_put(&mmu->refcount, panfrost_mmu_release_ctx);
}

panfrost_mmu* panfrost_mmu_ctx_get(panfrost_mmu* mmu) {
    kref_get(&mmu->refcount);
    return mmu;
}

panfrost_mmu* panfrost_mmu_ctx_create(panfrost_device* pfdev) {
    auto* mmu = knew<panfrost_mmu>(GFP_KERNEL);
    if (!mmu)
        return ERR_PTR<panfrost_mmu>(-ENOMEM);
    mmu->pfdev = pfdev;

    // 4 GiB of VA, in pages, above the first 32 MiB.
    drm::drm_mm_init(&mmu->mm, SZ_32M >> PAGE_SHIFT, (SZ_4G - SZ_32M) >> PAGE_SHIFT);
    mmu->mm.color_adjust = panfrost_drm_mm_color_adjust;

    mmu->pgtbl_cfg.pgsize_bitmap = SZ_4K | SZ_2M;
    mmu->pgtbl_cfg.ias = GPU_MMU_FEATURES_VA_BITS(pfdev->features.mmu_features);
    mmu->pgtbl_cfg.oas = GPU_MMU_FEATURES_PA_BITS(pfdev->features.mmu_features);
    mmu->pgtbl_cfg.coherent_walk = pfdev->coherent;
    mmu->pgtbl_cfg.tlb = &mmu_tlb_ops;

    // The SoCs that force the AArch64 format (GPU_QUIRK_FORCE_AARCH64_PGTABLE) are not modelled.
    mmu->pgtbl_ops = iommu::alloc_io_pgtable_ops(iommu::IoPgtableFmt::ARM_MALI_LPAE, &mmu->pgtbl_cfg, mmu);
    if (!mmu->pgtbl_ops) {
        drm::drm_mm_takedown(&mmu->mm);
        kdelete(mmu);
        return ERR_PTR<panfrost_mmu>(-EINVAL);
    }
    kref_init(&mmu->refcount);

    // mmu_cfg_init_mali_lpae: the AS register values of this page table.
    mmu->cfg.transtab = mmu->pgtbl_cfg.arm_mali_lpae_cfg.transtab;
    mmu->cfg.memattr = mmu->pgtbl_cfg.arm_mali_lpae_cfg.memattr;
    mmu->cfg.transcfg = AS_TRANSCFG_ADRMODE_LEGACY;
    return mmu;
}

int panfrost_mmu_init(panfrost_device* pfdev) {
    IrqLine* irq = platform_get_irq_byname(pfdev->pdev, "mmu");
    if (IS_ERR_OR_NULL(irq))
        return -ENODEV;
    int err = request_threaded_irq(irq, panfrost_mmu_irq_handler, panfrost_mmu_irq_handler_thread, IRQF_SHARED,
                                   "panfrost-mmu", pfdev);
    if (err) {
        dev_err(pfdev->dev, "failed to request mmu irq");
        return err;
    }
    pfdev->mmu_irq = irq;
    // devm_request_threaded_irq: freed with the device's devres.
    return devm_add_action_or_reset(pfdev->dev, [pfdev, irq] {
        free_irq(irq, pfdev);
        pfdev->mmu_irq = nullptr;
    });
}

void panfrost_mmu_fini(panfrost_device* pfdev) {
    mmu_write(pfdev, MMU_INT_MASK, 0);
}

void panfrost_mmu_suspend_irq(panfrost_device* pfdev) {
    pfdev->is_suspended.fetch_or(1u << PANFROST_COMP_BIT_MMU);
    mmu_write(pfdev, MMU_INT_MASK, 0);
    synchronize_irq(pfdev->mmu_irq);
}

}  // namespace panfrost
