// Mirrors the private structs of drivers/gpu/drm/panthor/panthor_mmu.c, shared by the three
// files the MMU code is split into (panthor_mmu.cpp, panthor_vm.cpp, panthor_vm_bind.cpp).
//
// Nothing outside those files includes this header: panthor_mmu.h keeps the types opaque.
#pragma once
#include <atomic>

#include <boost/intrusive/list.hpp>

#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_gpuvm.h"
#include "drm/drm_mm.h"
#include "drm/sched/gpu_scheduler.h"
#include "hw/csf/regs/mmu_regs.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"
#include "kernel_shim/xarray.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_mmu.h"

namespace panthor {

namespace mmu_detail {
namespace bi = boost::intrusive;
using ListHook = bi::list_member_hook<bi::link_mode<bi::safe_link>>;
}  // namespace mmu_detail

// A GPU mapping of a GEM range (drm_gpuva plus the DRM_PANTHOR_VM_BIND_OP_MAP_* flags it was
// made with, which a remap must reproduce on the pieces it keeps).
struct panthor_vma {
    drm::drm_gpuva base;
    u32 flags = 0;
};

// Everything a VM operation may need, gathered before it runs so that the run itself (possibly
// in the fence-signalling path of a VM_BIND job) allocates nothing and takes no resv lock.
struct panthor_vm_op_ctx {
    struct {
        u32 count;     // pages reserved
        u32 ptr;       // first unused entry of `pages`
        void** pages;  // page tables for the update; unused ones go back to the cache at cleanup
    } rsvd_page_tables;
    // One VMA for a new mapping plus the prev/next pieces a remap may keep.
    panthor_vma* preallocated_vmas[3];
    u32 flags;  // drm_panthor_vm_bind_op_flags
    struct {
        u64 addr;
        u64 range;
    } va;
    struct {
        drm::drm_gpuvm_bo* vm_bo;  // the <VM, BO> connection, referenced, linked to the BO
        u64 bo_offset;
        drm::SgTable* sgt;  // the BO's pinned pages
    } map;
    // Inserts this op accounted in vm->index_reserve.pending (0 once accounted back).
    u32 index_inserts;
};

struct panthor_vm {
    // We only implement the page-table hooks; the VA bookkeeping is drm_gpuvm's.
    drm::drm_gpuvm base;

    // One bind queue per VM: the operations of a VM are serialised anyway.
    drm::drm_gpu_scheduler sched;
    drm::drm_sched_entity entity;
    // The entity's scheduler list: our drm_sched keeps the array (upstream copies it).
    drm::drm_gpu_scheduler* sched_list[1] = {};

    panthor_device* ptdev = nullptr;
    u64 memattr = 0;  // AS_MEMATTR, from the io-pgtable MAIR
    iommu::IoPgtableOps* pgtbl_ops = nullptr;
    void* root_page_table = nullptr;  // the pgd, allocated by the page-table hook at creation

    // Serialises synchronous and asynchronous operations on the VM. Protects the VA tree and
    // its index reserve, op_ctx, locked_region and index_reserve. Taken in the VM_BIND job's
    // fence-signalling path: never held around a GFP_KERNEL allocation or a fence wait.
    kshim::Mutex op_lock{"panthor_vm.op_lock"};
    panthor_vm_op_ctx* op_ctx = nullptr;  // the operation running, under op_lock

    // Kernel VA (heap chunks, rings, FW sections on the MCU VM).
    drm::drm_mm mm;
    kshim::Mutex mm_lock{"panthor_vm.mm_lock"};  // protects mm
    struct {
        u64 start = 0;
        u64 end = 0;  // exclusive
    } kernel_auto_va;

    struct {
        int id = -1;                     // AS slot, -1 while unbound; under mmu->as.slots_lock
        std::atomic<int> active_cnt{0};  // users needing the slot (refcount_t upstream)
    } as;
    // Upstream's as.lru_node (a member hook cannot sit in a nested struct): on
    // mmu->as.lru_list while bound to a slot but idle, under mmu->as.slots_lock.
    mmu_detail::ListHook as_lru_node;

    struct {
        panthor_heap_pool* pool = nullptr;
        kshim::Mutex lock{"panthor_vm.heaps.lock"};  // protects pool
    } heaps;

    mmu_detail::ListHook node;  // on mmu->vm.list, under mmu->vm.lock

    bool for_mcu = false;
    // Where the kernel's VA range starts: VM_BIND MAPs must end below it (pending upstream,
    // docs/panthor.md "Sparse mappings").
    u64 user_va_end = 0;
    // Set once by panthor_vm_destroy (under op_lock): maps are refused from then on.
    std::atomic<bool> destroyed{false};
    // Set when an asynchronous operation failed: the VM state no longer matches what
    // userspace asked for, so everything but unmaps is refused.
    std::atomic<bool> unusable{false};
    // An MMU fault hit this VM's AS and nobody handled it (cleared on re-activation).
    std::atomic<bool> unhandled_fault{false};

    // The region LOCKed around the current operation (recorded even without an AS, so the
    // map/unmap range checks hold either way). Under op_lock.
    struct {
        u64 start = 0;
        u64 size = 0;
    } locked_region;

    // Inserts promised to prepared, not yet executed operations: the VA index reserve is kept
    // large enough for all of them, since a queued job's run must not allocate. Under op_lock.
    struct {
        u32 pending = 0;
    } index_reserve;
};

inline panthor_vm* to_panthor_vm(drm::drm_gpuvm* gpuvm) {
    return container_of(gpuvm, panthor_vm, base);
}

using PanthorVmLruList =
    mmu_detail::bi::list<panthor_vm,
                         mmu_detail::bi::member_hook<panthor_vm, mmu_detail::ListHook, &panthor_vm::as_lru_node>,
                         mmu_detail::bi::constant_time_size<false>>;
using PanthorVmList =
    mmu_detail::bi::list<panthor_vm, mmu_detail::bi::member_hook<panthor_vm, mmu_detail::ListHook, &panthor_vm::node>,
                         mmu_detail::bi::constant_time_size<false>>;

struct panthor_as_slot {
    panthor_vm* vm = nullptr;  // bound to the slot, or nullptr
};

struct panthor_mmu {
    panthor_irq irq;

    // Address-space slots: fewer than VMs, so they are handed out on demand.
    struct {
        // Protects everything in `as`, every vm->as.id and vm->as_lru_node, and serialises the
        // AS commands and the cache flushes issued for them.
        kshim::Mutex slots_lock{"panthor_mmu.as.slots_lock"};
        unsigned long alloc_mask GUARDED_BY(slots_lock) = 0;
        unsigned long faulty_mask GUARDED_BY(slots_lock) = 0;
        panthor_as_slot slots[MAX_AS_SLOTS] GUARDED_BY(slots_lock);
        // Bound but idle VMs, least recently used first: evicted when a slot is needed, so an
        // idle VM keeps its slot (no TLB/cache flush) until somebody else needs one.
        PanthorVmLruList lru_list GUARDED_BY(slots_lock);
    } as;

    // The MMU interrupts wanted: the fault bits of the ASes not disabled (all at probe; an AS
    // disable masks its bit, an enable unmasks it). What MMU_INT_MASK gets while the line is
    // not suspended. Upstream keeps it in the IRQ helpers (enable/disable_events).
    u32 irq_events GUARDED_BY(as.slots_lock) = 0;
    // The MMU IRQ handler is running: it restores MMU_INT_MASK itself when it is done.
    std::atomic<bool> irq_processing{false};

    struct {
        kshim::Mutex lock{"panthor_mmu.vm.lock"};  // protects list and reset_in_progress
        PanthorVmList list;                        // every VM of the device
        bool reset_in_progress = false;
        kshim::workqueue_struct* wq = nullptr;  // runs the VM_BIND schedulers (submit_wq)
        // Releases finished VM_BIND jobs out of the fence-signalling path (upstream's
        // module-wide panthor_cleanup_wq).
        kshim::workqueue_struct* cleanup_wq = nullptr;
    } vm;
};

// ---- shared between the MMU files ----

// The page-table cache (panthor_mmu.cpp). Pages come from the physical arena: the MMU walks them.
// Returns n, or 0 with nothing allocated (kmem_cache_alloc_bulk semantics).
int panthor_pt_cache_alloc_bulk(kshim::gfp_t gfp, size_t n, void** out);
void panthor_pt_cache_free_bulk(size_t n, void** pages);
void panthor_pt_cache_free(void* page);

// AS/MMU hardware (panthor_mmu.cpp).
u32 panthor_mmu_fault_mask(panthor_device* ptdev, u32 value);
// Masks the AS's faults, flushes the caches, UNLOCKs a region left locked and, unless the slot is
// about to be reprogrammed (recycle_slot), unmaps the AS (TRANSCFG UNMAPPED + UPDATE).
int panthor_mmu_as_disable(panthor_device* ptdev, u32 as_nr, bool recycle_slot) REQUIRES(ptdev->mmu->as.slots_lock);
void panthor_vm_release_as_locked(panthor_vm* vm) REQUIRES(vm->ptdev->mmu->as.slots_lock);
// LOCK [start, start + size) of the VM's AS around an update (widening an already locked
// region to cover both), then flush + UNLOCK. op_lock held.
int panthor_vm_lock_region(panthor_vm* vm, u64 start, u64 size);
void panthor_vm_unlock_region(panthor_vm* vm);
// LOCK, flush caches, UNLOCK over a range of the VM's AS (nothing if unbound).
int panthor_vm_flush_range(panthor_vm* vm, u64 iova, u64 size);
u64 panthor_mmu_mair_to_memattr(u64 mair, bool coherent);

// VM lifetime (panthor_vm.cpp).
void panthor_vm_free(drm::drm_gpuvm* gpuvm);
void panthor_vm_stop(panthor_vm* vm);
void panthor_vm_start(panthor_vm* vm);

// Operations (panthor_vm_bind.cpp).
extern const drm::drm_gpuvm_ops panthor_gpuvm_ops;
extern const drm::drm_sched_backend_ops panthor_vm_bind_ops;
void* panthor_vm_alloc_pt(void* cookie, size_t size, kshim::gfp_t gfp);
void panthor_vm_free_pt(void* cookie, void* data, size_t size);
// Page-table updates of [iova, iova + size), inside the locked region; a failed map leaves
// nothing of the range mapped.
int panthor_vm_map_pages(panthor_vm* vm, u64 iova, int prot, drm::SgTable* sgt, u64 offset, u64 size);
void panthor_vm_unmap_pages(panthor_vm* vm, u64 iova, u64 size);
// The op-type field of a VM_BIND op's flags.
inline constexpr u32 OP_TYPE_MASK = static_cast<u32>(DRM_PANTHOR_VM_BIND_OP_TYPE_MASK);
// Validates a map of `bo` (flags: DRM_PANTHOR_VM_BIND_OP_*) and gathers what running it needs.
int panthor_vm_prepare_map_op_ctx(panthor_vm_op_ctx* op_ctx, panthor_vm* vm, panthor_gem_object* bo, u64 offset,
                                  u64 size, u64 va, u32 flags);

// Sparse mappings (panthor_vm_sparse.cpp).
// Driver-private io-pgtable prot bit: the pages come from a sparse dummy, to be repeated over
// the range. Stripped before io-pgtable sees the prot.
inline constexpr int PANTHOR_PROT_SPARSE = 1 << 30;
// A MAP op with DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE: checks the flag's contract and prepares a map
// of the file's dummy BO over [va, va + size).
int panthor_vm_prepare_sparse_map_op_ctx(drm::drm_file* file, panthor_vm* vm, const drm_panthor_vm_bind_op* op,
                                         panthor_vm_op_ctx* op_ctx);
// panthor_vm_map_pages for a sparse VMA: `offset` and the range wrap around the dummy's pages.
int panthor_vm_map_sparse_pages(panthor_vm* vm, u64 iova, int prot, drm::SgTable* sgt, u64 offset, u64 size);
// The offset in the GEM object that byte `bo_offset` of mapping `va` lands on: `bo_offset`
// itself, reduced modulo the dummy's size for a sparse mapping.
u64 panthor_vma_wrap_bo_offset(const drm::drm_gpuva* va, u64 bo_offset);

}  // namespace panthor
