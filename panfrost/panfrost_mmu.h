// Mirrors drivers/gpu/drm/panfrost/panfrost_mmu.{h,c}: per-file GPU VMs on io-pgtable's Mali-LPAE
// format, address-space allocation with an LRU, the AS commands, BO mapping and the MMU IRQ
// (growable heaps, unhandled faults).
//
// DOC: Every open file gets a panfrost_mmu: an ARM_MALI_LPAE page table and a drm_mm VA allocator
// over [32 MiB, 4 GiB) in pages, whose colour rule keeps executable BOs off 4 GiB boundaries.
// A VM is bound to a hardware address space only while something runs on it
// (panfrost_mmu_as_get/put): the first free AS in AS_PRESENT, else the least recently used VM
// with no user loses its AS. Binding programs TRANSTAB/MEMATTR/TRANSCFG (LEGACY) and issues UPDATE;
// every AS command waits for AS_STATUS.AS_ACTIVE to clear first, and FLUSH_PT/FLUSH_MEM follow a
// LOCK of the range. The MMU IRQ's thread maps 2 MiB of a HEAP BO on a translation fault; any
// other fault is logged, the AS marked faulty (its interrupts stay masked) and disabled, which is
// what kills the jobs on it, until the next as_get re-enables it.
#pragma once
#include <atomic>

#include "drm/drm_mm.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/kref.h"
#include "panfrost/panfrost_device.h"

namespace panfrost {

struct panfrost_gem_mapping;

struct panfrost_mmu {
    panfrost_device* pfdev = nullptr;
    kshim::kref refcount;
    iommu::IoPgtableCfg pgtbl_cfg;
    iommu::IoPgtableOps* pgtbl_ops = nullptr;
    // The AS register values of this VM's page table.
    struct {
        u64 transtab = 0;
        u64 memattr = 0;
        u64 transcfg = 0;
    } cfg;
    int as = -1;                   // the AS bound, -1 for none; pfdev->as_lock
    std::atomic<int> as_count{0};  // users of the AS (jobs, perfcnt)
    list_head list;                // pfdev->as_lru_list while bound; pfdev->as_lock
    kshim::SpinLock mm_lock{"panfrost_mmu.mm_lock"};
    drm::drm_mm mm;  // VA in pages; mm_lock
};

// A new VM (one reference): -ENOMEM, or -EINVAL when the page table cannot be allocated.
panfrost_mmu* panfrost_mmu_ctx_create(panfrost_device* pfdev);
panfrost_mmu* panfrost_mmu_ctx_get(panfrost_mmu* mmu);
// The last put disables the VM's AS (if the GPU is awake) and frees the page tables.
void panfrost_mmu_ctx_put(panfrost_mmu* mmu);

// Binds the VM to an AS (programming it when newly bound or faulty) and counts a user; the AS
// number. The GPU must be runtime-active.
u32 panfrost_mmu_as_get(panfrost_device* pfdev, panfrost_mmu* mmu);
void panfrost_mmu_as_put(panfrost_device* pfdev, panfrost_mmu* mmu);

// Maps a BO mapping's pages at its VA (RW, NOEXEC for noexec BOs) / unmaps them; both flush the
// range on the VM's AS if it has one and the GPU is awake.
int panfrost_mmu_map(panfrost_gem_mapping* mapping);
void panfrost_mmu_unmap(panfrost_gem_mapping* mapping);

// The "mmu" threaded IRQ (device-managed). fini masks the MMU interrupts.
int panfrost_mmu_init(panfrost_device* pfdev);
void panfrost_mmu_fini(panfrost_device* pfdev);
// After a GPU reset: every VM loses its AS, the fault state is cleared and every MMU interrupt
// unmasked.
void panfrost_mmu_reset(panfrost_device* pfdev);
// Runtime suspend: mask the MMU interrupts and wait for a running handler.
void panfrost_mmu_suspend_irq(panfrost_device* pfdev);

}  // namespace panfrost
