// Mirrors drivers/gpu/drm/panthor/panthor_mmu.c: address-space slots, AS commands, the MMU IRQ,
// the PM/reset hooks and the page-table cache.
//
// DOC: Address spaces. The GPU has a few AS slots (AS_PRESENT; slot 0 belongs to the MCU's VM),
// fewer than VMs. panthor_vm_active() binds a VM to a slot (a free one, or the one of the least
// recently idled VM, which is disabled first) and programs TRANSTAB/MEMATTR/TRANSCFG;
// panthor_vm_idle() only puts the VM on the LRU, so it keeps its slot (and the GPU its TLB)
// until somebody needs one. Every AS command waits for AS_ACTIVE to clear before and after it;
// a stuck AS_ACTIVE schedules a GPU reset. Page-table updates are atomic for the GPU: an
// operation LOCKs its whole range before the tables change, and UNLOCKs it after a GPU_CONTROL
// cache flush (the AS_COMMAND FLUSH_PT/FLUSH_MEM of older GPUs are not used); a failed flush or
// unlock schedules a reset. Enabling an AS unmasks its fault interrupt and programs it (no
// flush); disabling one masks it, flushes the caches, UNLOCKs a region left locked and, unless
// the slot is recycled at once, unmaps it. All AS commands and the flushes issued for them are
// serialised by mmu->as.slots_lock.
//
// Faults: the IRQ handler logs the fault, flags the VM and disables the AS (masking its fault
// interrupt), so the jobs using it fault out; re-activating the VM clears all of that.
//
// Page tables live in the physical arena (the MMU walks them by physical address), so the
// "cache" hands out pre-faulted arena pages instead of slab objects; see panthor_pt_cache_*.
//
// Deviations from upstream (all three MMU files):
// - panthor_vm_lock_region() widening an already locked region (a remap cutting into a 2 MiB
//   block) locks the union of both, so the rest of the op stays locked; upstream locks the new
//   range alone.
// - panthor_vm_flush_all() (LOCK, flush, UNLOCK over a range, for the FW VM) has no counterpart
//   in the newest upstream.
// - The VA index (a B+tree here, an rbtree upstream) needs nodes for inserts: every prepared
//   operation reserves room for its inserts, under op_lock with GFP_NOWAIT, on top of those of
//   the operations queued before it (panthor_vm_op_ctx_reserve_index).
// - An unmap preallocates two VMAs (an unmap inside one mapping keeps a piece on each side);
//   whether a 2 MiB block was mapped as a block is computed from the mapping and the BO's
//   physical segments rather than from the folio size.
// - Maps on a destroyed VM are refused when they run (a job queued before VM_DESTROY would
//   otherwise leave a mapping, and a VM reference, behind); a BO offset that is not page
//   aligned, and an empty asynchronous map/unmap (a no-op, as on the synchronous path), are
//   handled when the job is created instead of failing it (and the VM) at run time.
// - Finished VM_BIND jobs are released on a per-device workqueue (mmu->vm.cleanup_wq), not the
//   module-wide panthor_cleanup_wq.
#include <bit>

#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "panthor/panthor_coredump.h"
#include "panthor/panthor_gpu.h"
#include "panthor/panthor_irq.h"
#include "panthor/panthor_mmu_priv.h"
#include "panthor/panthor_sched.h"

namespace panthor {

// ---- page-table cache ----
//
// Upstream's pt_cache is a kmem_cache of 4 KiB, 4 KiB-aligned objects. Ours must give memory
// the MMU can reach by physical address, so it hands out page-table pool pages (pre-faulted
// arena pages, counted by the page allocator's leak accounting) under its own fault-injection
// name. The counters only serve the leak check at the last panthor_mmu_pt_cache_fini().

namespace {

constexpr const char* kPtCacheName = "panthor-mmu-pt";
std::atomic<int> g_pt_cache_users{0};
std::atomic<long> g_pt_cache_live{0};

}  // namespace

int panthor_mmu_pt_cache_init() {
    g_pt_cache_users.fetch_add(1, std::memory_order_relaxed);
    return 0;
}

void panthor_mmu_pt_cache_fini() {
    const int users = g_pt_cache_users.fetch_sub(1, std::memory_order_acq_rel);
    if (WARN_ON(users <= 0)) {
        g_pt_cache_users.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    if (users == 1) {
        const long live = g_pt_cache_live.load(std::memory_order_relaxed);
        WARN(live != 0, "%s: %ld page tables still allocated at destroy", kPtCacheName, live);
        // Reported once: the next user (test) starts from a clean count.
        g_pt_cache_live.fetch_sub(live, std::memory_order_relaxed);
    }
}

size_t panthor_mmu_pt_cache_live() {
    return static_cast<size_t>(g_pt_cache_live.load(std::memory_order_relaxed));
}

int panthor_pt_cache_alloc_bulk(kshim::gfp_t gfp, size_t n, void** out) {
    for (size_t i = 0; i < n; i++) {
        kshim::Page* page = kshim::should_fail_alloc(kPtCacheName, gfp) ? nullptr : kshim::pt_pool_alloc_raw(gfp);
        if (!page) {
            panthor_pt_cache_free_bulk(i, out);
            for (size_t j = 0; j < i; j++)
                out[j] = nullptr;
            return 0;
        }
        out[i] = kshim::page_address(page);
        g_pt_cache_live.fetch_add(1, std::memory_order_relaxed);
    }
    return static_cast<int>(n);
}

void panthor_pt_cache_free(void* page) {
    if (!page)
        return;
    g_pt_cache_live.fetch_sub(1, std::memory_order_relaxed);
    kshim::pt_pool_free(kshim::virt_to_page(page));
}

void panthor_pt_cache_free_bulk(size_t n, void** pages) {
    for (size_t i = 0; i < n; i++)
        panthor_pt_cache_free(pages[i]);
}

// ---- AS commands ----

namespace {

int wait_ready(panthor_device* ptdev, u32 as_nr) {
    u32 val;
    // Busy-wait, as upstream: this runs in the VM_BIND signalling path and under slots_lock.
    int ret = gpu_read_poll_timeout_atomic(ptdev, AS_STATUS(as_nr), val, !(val & AS_STATUS_AS_ACTIVE), 10, 100000);
    if (ret) {
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_AS_TIMEOUT);
        dev_err(ptdev->dev, "AS_ACTIVE bit stuck\n");
    }
    return ret;
}

// A command is only accepted while the previous one is done, and its effect is only guaranteed
// once AS_ACTIVE drops again.
int as_send_cmd_and_wait(panthor_device* ptdev, u32 as_nr, u32 cmd) {
    int status = wait_ready(ptdev, as_nr);
    if (!status) {
        gpu_write(ptdev, AS_COMMAND(as_nr), cmd);
        status = wait_ready(ptdev, as_nr);
    }
    return status;
}

int fls64(u64 x) {
    return x ? 64 - std::countl_zero(x) : 0;
}

// The lock region is a naturally aligned power-of-two block, encoded as log2(size) - 1 in the
// low bits: the smallest block holding both ends is the one above the highest bit where the
// first and last byte differ. *start and *size become the block actually locked.
u64 pack_region_range(panthor_device*, u64* start, u64* size) {
    if (WARN_ON_ONCE(!*size))
        return 0;
    const u64 last = *start + (*size - 1);
    const int min_width = std::countr_zero(AS_LOCK_REGION_MIN_SIZE);
    const u32 region_width = static_cast<u32>(std::max(fls64(*start ^ last), min_width) - 1);
    *start &= GENMASK_ULL(63, region_width);
    *size = region_width >= 63 ? ~u64{0} : u64{1} << (region_width + 1);
    return region_width | *start;
}

// LOCK the range, clean+invalidate the caches through GPU_CONTROL, UNLOCK: the AS is not
// unlocked by the GPU_CONTROL flush (unlike AS_COMMAND FLUSH_PT/FLUSH_MEM), and the TLB entries
// of the locked region only go at UNLOCK.
int mmu_hw_flush_region_locked(panthor_device* ptdev, int as_nr, u64 start, u64 size)
    REQUIRES(ptdev->mmu->as.slots_lock) {
    lockdep_assert_held(&ptdev->mmu->as.slots_lock);
    if (as_nr < 0 || !size)
        return 0;

    gpu_write64(ptdev, AS_LOCKADDR(as_nr), pack_region_range(ptdev, &start, &size));
    int ret = as_send_cmd_and_wait(ptdev, as_nr, AS_COMMAND_LOCK);
    if (ret)
        return ret;

    ret = panthor_gpu_flush_caches(ptdev, CACHE_CLEAN | CACHE_INV, CACHE_CLEAN | CACHE_INV, CACHE_INV);
    if (ret) {
        // The region stays locked: only a reset gets the GPU out of that.
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_LOCKED_REGION);
        return ret;
    }
    return as_send_cmd_and_wait(ptdev, as_nr, AS_COMMAND_UNLOCK);
}

u32 panthor_mmu_as_fault_mask(panthor_device*, u32 as) {
    return BIT(as);
}

// The MMU interrupt mask follows the ASes: a fault bit is unmasked while its AS is enabled
// (upstream's panthor_mmu_irq_enable_events/disable_events). The register is written at once
// unless the line is suspended or its threaded handler is running: the handler restores the
// mask when it is done (and suspend/resume keep mmu->irq_events for the next resume).
void panthor_mmu_irq_update_mask(panthor_device* ptdev) REQUIRES(ptdev->mmu->as.slots_lock) {
    panthor_mmu* mmu = ptdev->mmu;
    if (mmu->irq.suspended.load())
        return;
    mmu->irq.mask = mmu->irq_events;
    if (!mmu->irq_processing.load())
        gpu_write(ptdev, MMU_INT_MASK, mmu->irq_events);
}

void panthor_mmu_irq_enable_events(panthor_device* ptdev, u32 events) REQUIRES(ptdev->mmu->as.slots_lock) {
    ptdev->mmu->irq_events |= events;
    panthor_mmu_irq_update_mask(ptdev);
}

void panthor_mmu_irq_disable_events(panthor_device* ptdev, u32 events) REQUIRES(ptdev->mmu->as.slots_lock) {
    ptdev->mmu->irq_events &= ~events;
    panthor_mmu_irq_update_mask(ptdev);
}

// Programs the AS and unmasks its fault interrupt. No flush before: whatever a previous user
// of the slot left in the caches was flushed when its AS was disabled, and UPDATE drops the
// slot's TLB.
int panthor_mmu_as_enable(panthor_device* ptdev, u32 as_nr, u64 transtab, u64 transcfg, u64 memattr)
    REQUIRES(ptdev->mmu->as.slots_lock) {
    lockdep_assert_held(&ptdev->mmu->as.slots_lock);
    panthor_mmu_irq_enable_events(ptdev, panthor_mmu_as_fault_mask(ptdev, as_nr));

    gpu_write64(ptdev, AS_TRANSTAB(as_nr), transtab);
    gpu_write64(ptdev, AS_MEMATTR(as_nr), memattr);
    gpu_write64(ptdev, AS_TRANSCFG(as_nr), transcfg);
    return as_send_cmd_and_wait(ptdev, as_nr, AS_COMMAND_UPDATE);
}

bool refcount_inc_not_zero(std::atomic<int>* r) {
    int c = r->load(std::memory_order_relaxed);
    while (c > 0)
        if (r->compare_exchange_weak(c, c + 1, std::memory_order_acquire))
            return true;
    return false;
}

}  // namespace

int panthor_mmu_as_disable(panthor_device* ptdev, u32 as_nr, bool recycle_slot) {
    lockdep_assert_held(&ptdev->mmu->as.slots_lock);
    panthor_vm* vm = ptdev->mmu->as.slots[as_nr].vm;

    panthor_mmu_irq_disable_events(ptdev, panthor_mmu_as_fault_mask(ptdev, as_nr));

    // Whatever the AS's users wrote must reach memory before the translation goes: clean and
    // invalidate the read-write caches, invalidate the read-only ones.
    int ret = panthor_gpu_flush_caches(ptdev, CACHE_CLEAN | CACHE_INV, CACHE_CLEAN | CACHE_INV, CACHE_INV);
    if (ret)
        return ret;

    // A bind interrupted half-way (a fault, an unusable VM) may have left its region locked.
    if (vm && vm->locked_region.size) {
        ret = as_send_cmd_and_wait(ptdev, as_nr, AS_COMMAND_UNLOCK);
        if (ret)
            return ret;
    }

    // The next user programs the slot at once: no need to unmap it in between.
    if (recycle_slot)
        return 0;

    gpu_write64(ptdev, AS_TRANSTAB(as_nr), 0);
    gpu_write64(ptdev, AS_MEMATTR(as_nr), 0);
    gpu_write64(ptdev, AS_TRANSCFG(as_nr), AS_TRANSCFG_ADRMODE_UNMAPPED);
    return as_send_cmd_and_wait(ptdev, as_nr, AS_COMMAND_UPDATE);
}

// Bits 16-31 are the REQ_COMPLETE interrupts: we wait for AS_ACTIVE instead.
u32 panthor_mmu_fault_mask(panthor_device*, u32 value) {
    return value & GENMASK(15, 0);
}

u32 panthor_mmu_irq_events(panthor_device* ptdev) {
    kshim::MutexGuard g(ptdev->mmu->as.slots_lock);
    return ptdev->mmu->irq_events;
}

u32 panthor_mmu_faulty_mask(panthor_device* ptdev) {
    kshim::MutexGuard g(ptdev->mmu->as.slots_lock);
    return static_cast<u32>(ptdev->mmu->as.faulty_mask);
}

u64 panthor_mmu_mair_to_memattr(u64 mair, bool coherent) {
    u64 memattr = 0;
    for (u32 i = 0; i < 8; i++) {
        const u8 in_attr = static_cast<u8>(mair >> (8 * i));
        const u8 outer = in_attr >> 4, inner = in_attr & 0xf;
        u8 out_attr;
        // Cached only when both levels are write-back; write-through, non-cacheable and
        // device memory all become non-cacheable.
        if (!(outer & 3) || !(outer & 4) || !(inner & 4)) {
            out_attr = AS_MEMATTR_AARCH64_INNER_OUTER_NC | AS_MEMATTR_AARCH64_SH_MIDGARD_INNER |
                       AS_MEMATTR_AARCH64_INNER_ALLOC_EXPL(false, false);
        } else {
            out_attr = AS_MEMATTR_AARCH64_INNER_OUTER_WB | AS_MEMATTR_AARCH64_INNER_ALLOC_EXPL(inner & 1, inner & 2);
            // Without coherency, inner/outer-shareable WB is not allowed: the IS attribute of
            // cached mappings must map to Mali's internal shareability. With it, SH_IS keeps its
            // CPU meaning.
            out_attr |= coherent ? AS_MEMATTR_AARCH64_SH_CPU_INNER : AS_MEMATTR_AARCH64_SH_MIDGARD_INNER;
        }
        memattr |= static_cast<u64>(out_attr) << (8 * i);
    }
    return memattr;
}

// ---- VM <-> AS ----

bool panthor_vm_has_unhandled_faults(panthor_vm* vm) {
    return vm->unhandled_fault.load();
}

bool panthor_vm_is_unusable(panthor_vm* vm) {
    return vm->unusable.load();
}

int panthor_vm_as(panthor_vm* vm) {
    return vm->as.id;
}

void panthor_vm_release_as_locked(panthor_vm* vm) {
    panthor_device* ptdev = vm->ptdev;
    lockdep_assert_held(&ptdev->mmu->as.slots_lock);

    if (WARN_ON(vm->as.id < 0))
        return;
    ptdev->mmu->as.slots[vm->as.id].vm = nullptr;
    ptdev->mmu->as.alloc_mask &= ~(1ul << vm->as.id);
    vm->as.active_cnt.store(0);
    if (vm->as_lru_node.is_linked())
        ptdev->mmu->as.lru_list.erase(ptdev->mmu->as.lru_list.iterator_to(*vm));
    vm->as.id = -1;
}

namespace {

int panthor_vm_active_locked(panthor_vm* vm) {
    panthor_device* ptdev = vm->ptdev;
    panthor_mmu* mmu = ptdev->mmu;
    lockdep_assert_held(&vm->op_lock);
    lockdep_assert_held(&mmu->as.slots_lock);

    if (refcount_inc_not_zero(&vm->as.active_cnt))
        return 0;

    const u32 va_bits = GPU_MMU_FEATURES_VA_BITS(ptdev->gpu_info.mmu_features);
    const auto& cfg = iommu::io_pgtable_ops_to_pgtable(vm->pgtbl_ops)->cfg_;
    int ret;
    int as = vm->as.id;

    if (as >= 0) {
        // Bound and idle: reusable as is, unless a fault disabled the AS meanwhile.
        if (!(mmu->as.faulty_mask & panthor_mmu_as_fault_mask(ptdev, as)))
            goto out_make_active;
    } else {
        if (vm->for_mcu) {
            WARN_ON(mmu->as.alloc_mask & BIT(0));
            as = 0;
        } else {
            as = std::countr_one(mmu->as.alloc_mask | BIT(0));
        }

        if (as >= static_cast<int>(MAX_AS_SLOTS) || !(BIT(as) & ptdev->gpu_info.as_present)) {
            if (WARN_ON(mmu->as.lru_list.empty()))
                return -EBUSY;
            panthor_vm* lru_vm = &mmu->as.lru_list.front();
            WARN_ON(lru_vm->as.active_cnt.load());
            as = lru_vm->as.id;
            ret = panthor_mmu_as_disable(ptdev, static_cast<u32>(as), true);
            if (ret)
                return ret;
            panthor_vm_release_as_locked(lru_vm);
        }

        vm->as.id = as;
        mmu->as.alloc_mask |= 1ul << as;
        mmu->as.slots[as].vm = vm;
    }

    {
        const u64 transtab = cfg.arm_lpae_s1_cfg.ttbr;
        u64 transcfg = AS_TRANSCFG_PTW_MEMATTR_WB | AS_TRANSCFG_PTW_RA | AS_TRANSCFG_ADRMODE_AARCH64_4K |
                       AS_TRANSCFG_INA_BITS(55 - va_bits);
        if (ptdev->coherent)
            transcfg |= AS_TRANSCFG_PTW_SH_OS;

        // A re-activated VM starts afresh.
        vm->unhandled_fault.store(false);

        // A fault left this AS disabled with its interrupt masked: clear it; enabling the AS
        // unmasks it again.
        const u32 fault_mask = panthor_mmu_as_fault_mask(ptdev, as);
        if (mmu->as.faulty_mask & fault_mask) {
            gpu_write(ptdev, MMU_INT_CLEAR, fault_mask);
            mmu->as.faulty_mask &= ~static_cast<unsigned long>(fault_mask);
        }

        // op_lock keeps bind operations (and their locked regions) out while we program the AS.
        WARN_ON(vm->locked_region.size > 0);
        ret = panthor_mmu_as_enable(ptdev, static_cast<u32>(as), transtab, transcfg, vm->memattr);
        if (ret) {
            // The AS did not (confirm it) take the VM's tables, and the reset the failed wait
            // scheduled reprograms every AS anyway: leave the VM unbound, so that tearing it
            // down does not wait on this AS again.
            panthor_vm_release_as_locked(vm);
            return ret;
        }
    }

out_make_active:
    vm->as.active_cnt.store(1);
    if (vm->as_lru_node.is_linked())
        mmu->as.lru_list.erase(mmu->as.lru_list.iterator_to(*vm));
    return 0;
}

}  // namespace

int panthor_vm_active(panthor_vm* vm) {
    panthor_device* ptdev = vm->ptdev;

    if (!drm::drm_dev_enter(&ptdev->base))
        return -ENODEV;
    if (refcount_inc_not_zero(&vm->as.active_cnt))
        return 0;

    // op_lock: no lock/unlock_region() of a bind may interleave with the AS programming.
    kshim::MutexGuard op(vm->op_lock);
    kshim::MutexGuard slots(ptdev->mmu->as.slots_lock);
    return panthor_vm_active_locked(vm);
}

void panthor_vm_idle(panthor_vm* vm) {
    panthor_device* ptdev = vm->ptdev;
    panthor_mmu* mmu = ptdev->mmu;

    // refcount_dec_and_mutex_lock: only the last user takes the lock.
    int c = vm->as.active_cnt.load(std::memory_order_relaxed);
    while (c > 1)
        if (vm->as.active_cnt.compare_exchange_weak(c, c - 1, std::memory_order_release))
            return;

    kshim::MutexGuard g(mmu->as.slots_lock);
    c = vm->as.active_cnt.load();
    if (WARN_ON(c <= 0))
        return;
    if (vm->as.active_cnt.fetch_sub(1) != 1)
        return;
    if (!WARN_ON(vm->as.id == -1 || vm->as_lru_node.is_linked()))
        mmu->as.lru_list.push_back(*vm);
}

// ---- region locking and flushes ----

int panthor_vm_lock_region(panthor_vm* vm, u64 start, u64 size) {
    panthor_device* ptdev = vm->ptdev;
    lockdep_assert_held(&vm->op_lock);

    if (!size)
        return 0;

    const u64 locked_start = vm->locked_region.start, locked_size = vm->locked_region.size;
    if (locked_size) {
        // A remap widening the unmap to whole huge pages asks again for (part of) the region.
        if (start >= locked_start && start + size <= locked_start + locked_size)
            return 0;
        const u64 end = std::max(start + size, locked_start + locked_size);
        start = std::min(start, locked_start);
        size = end - start;
    }

    kshim::MutexGuard g(ptdev->mmu->as.slots_lock);
    if (vm->as.id >= 0) {
        gpu_write64(ptdev, AS_LOCKADDR(vm->as.id), pack_region_range(ptdev, &start, &size));
        if (int ret = as_send_cmd_and_wait(ptdev, static_cast<u32>(vm->as.id), AS_COMMAND_LOCK))
            return ret;
    }
    vm->locked_region.start = start;
    vm->locked_region.size = size;
    return 0;
}

void panthor_vm_unlock_region(panthor_vm* vm) {
    panthor_device* ptdev = vm->ptdev;
    lockdep_assert_held(&vm->op_lock);

    kshim::MutexGuard g(ptdev->mmu->as.slots_lock);
    if (vm->as.id >= 0 && vm->locked_region.size) {
        int ret = panthor_gpu_flush_caches(ptdev, CACHE_CLEAN | CACHE_INV, CACHE_CLEAN | CACHE_INV, CACHE_INV);
        if (!ret)
            ret = as_send_cmd_and_wait(ptdev, static_cast<u32>(vm->as.id), AS_COMMAND_UNLOCK);
        // A region left locked stalls every access to it: only a reset gets us out.
        if (ret)
            panthor_device_schedule_reset(ptdev, PANTHOR_RESET_LOCKED_REGION);
    }
    vm->locked_region.start = 0;
    vm->locked_region.size = 0;
}

int panthor_vm_flush_range(panthor_vm* vm, u64 iova, u64 size) {
    panthor_device* ptdev = vm->ptdev;
    if (vm->as.id < 0 || !drm::drm_dev_enter(&ptdev->base))
        return 0;
    kshim::MutexGuard g(ptdev->mmu->as.slots_lock);
    return mmu_hw_flush_region_locked(ptdev, vm->as.id, iova, size);
}

int panthor_vm_flush_all(panthor_vm* vm) {
    return panthor_vm_flush_range(vm, vm->base.mm_start, vm->base.mm_range);
}

// ---- IRQ ----

namespace {

const char* access_type_name(panthor_device*, u32 fault_status) {
    switch (fault_status & AS_FAULTSTATUS_ACCESS_TYPE_MASK) {
    case AS_FAULTSTATUS_ACCESS_TYPE_ATOMIC: return "ATOMIC";
    case AS_FAULTSTATUS_ACCESS_TYPE_READ: return "READ";
    case AS_FAULTSTATUS_ACCESS_TYPE_WRITE: return "WRITE";
    case AS_FAULTSTATUS_ACCESS_TYPE_EX: return "EXECUTE";
    default: WARN_ON(true); return "UNKNOWN";
    }
}

void panthor_mmu_irq_handler(panthor_device* ptdev, u32 status) {
    panthor_mmu* mmu = ptdev->mmu;
    bool has_unhandled_faults = false;
    // The threaded handler restores MMU_INT_MASK when it is done: masking an AS meanwhile only
    // updates the mask it restores.
    mmu->irq_processing.store(true);

    status = panthor_mmu_fault_mask(ptdev, status);
    while (status) {
        const u32 as = static_cast<u32>(std::countr_zero(status));
        const u32 mask = panthor_mmu_as_fault_mask(ptdev, as);

        const u32 fault_status = gpu_read(ptdev, AS_FAULTSTATUS(as));
        const u64 addr = gpu_read64(ptdev, AS_FAULTADDRESS(as));
        const u32 exception_type = fault_status & 0xFF;
        const u32 access_type = (fault_status >> 8) & 0x3;
        const u32 source_id = fault_status >> 16;

        {
            kshim::MutexGuard g(mmu->as.slots_lock);

            mmu->as.faulty_mask |= mask;

            dev_err(ptdev->dev,
                    "Unhandled Page fault in AS%d at VA 0x%016llX\n"
                    "raw fault status: 0x%X\n"
                    "decoded fault status: %s\n"
                    "exception type 0x%X: %s\n"
                    "access type 0x%X: %s\n"
                    "source id 0x%X\n",
                    static_cast<int>(as), static_cast<unsigned long long>(addr), fault_status,
                    (fault_status & AS_FAULTSTATUS_DECODER_FAULT) ? "DECODER FAULT" : "SLAVE FAULT", exception_type,
                    panthor_exception_name(ptdev, exception_type), access_type, access_type_name(ptdev, fault_status),
                    source_id);
            // Before the AS is disabled and the IRQ cleared: the snapshot shows the fault.
            panthor_coredump_capture(ptdev, PANTHOR_COREDUMP_MMU_FAULT, static_cast<int>(as));

            // VM faults are not handled: acknowledge and let the requester fail. The
            // REQ_COMPLETE bits are never cleared; they stay masked.
            gpu_write(ptdev, MMU_INT_CLEAR, mask);

            if (panthor_vm* vm = mmu->as.slots[as].vm)
                vm->unhandled_fault.store(true);

            // Disabling the AS kills the jobs using it, and masks its faults until it is
            // enabled again.
            panthor_mmu_as_disable(ptdev, as, false);
        }

        status &= ~mask;
        has_unhandled_faults = true;
    }

    mmu->irq_processing.store(false);
    if (has_unhandled_faults)
        panthor_sched_report_mmu_fault(ptdev);
}

}  // namespace

PANTHOR_IRQ_HANDLER(mmu, MMU, panthor_mmu_irq_handler)

// ---- PM, reset, init ----

void panthor_mmu_suspend(panthor_device* ptdev) {
    panthor_mmu* mmu = ptdev->mmu;
    {
        // Flush every AS to memory and unbind its VM: after resume, users call
        // panthor_vm_active() again.
        kshim::MutexGuard g(mmu->as.slots_lock);
        for (u32 i = 0; i < MAX_AS_SLOTS; i++) {
            if (panthor_vm* vm = mmu->as.slots[i].vm) {
                // Deviation from upstream: an AS that cannot be disabled makes this a slow
                // suspend, so panthor_gpu_suspend() soft-resets the GPU. A fast suspend only
                // powers L2 down; the stuck AS would survive it and the resume's activation of
                // the FW's VM would time out (the fault campaign's as_stuck x while_running).
                if (WARN_ON(panthor_mmu_as_disable(ptdev, i, false)))
                    ptdev->reset.fast = false;
                panthor_vm_release_as_locked(vm);
            }
        }
    }
    panthor_mmu_irq_suspend(&mmu->irq);
}

void panthor_mmu_resume(panthor_device* ptdev) {
    panthor_mmu* mmu = ptdev->mmu;
    {
        kshim::MutexGuard g(mmu->as.slots_lock);
        mmu->as.alloc_mask = 0;
        mmu->as.faulty_mask = 0;
    }
    // Deviation from upstream: a fault left latched on an AS is cleared before the interrupt is
    // unmasked again. Upstream forgets faulty_mask here because the runtime suspend powered the
    // GPU down (RK3588's PD_GPU), which cleared MMU_INT too. The mock models no power domain:
    // the fault an access raises when the fault handler disables its AS (the stalled access
    // retried in UNMAPPED mode) stays latched across the suspend, and once unmasked it was
    // blamed on whichever VM had been given that AS by then (its submits then failed).
    gpu_write(ptdev, MMU_INT_CLEAR, panthor_mmu_fault_mask(ptdev, ~0u));
    panthor_mmu_irq_resume(&mmu->irq, panthor_mmu_irq_events(ptdev));
}

void panthor_mmu_pre_reset(panthor_device* ptdev) {
    panthor_mmu* mmu = ptdev->mmu;

    // The AS slots are not shut down cleanly: the reset may be for a stuck AS_ACTIVE.
    panthor_mmu_irq_suspend(&mmu->irq);

    // No VM operation while the GPU is down.
    kshim::MutexGuard g(mmu->vm.lock);
    mmu->vm.reset_in_progress = true;
    for (panthor_vm& vm : mmu->vm.list)
        panthor_vm_stop(&vm);
}

void panthor_mmu_post_reset(panthor_device* ptdev) {
    panthor_mmu* mmu = ptdev->mmu;
    {
        // The reset left no AS set up and no fault pending: VMs are bound again on their next
        // panthor_vm_active().
        kshim::MutexGuard g(mmu->as.slots_lock);
        mmu->as.alloc_mask = 0;
        mmu->as.faulty_mask = 0;
        for (u32 i = 0; i < MAX_AS_SLOTS; i++)
            if (panthor_vm* vm = mmu->as.slots[i].vm)
                panthor_vm_release_as_locked(vm);
    }

    panthor_mmu_irq_resume(&mmu->irq, panthor_mmu_irq_events(ptdev));

    kshim::MutexGuard g(mmu->vm.lock);
    for (panthor_vm& vm : mmu->vm.list)
        panthor_vm_start(&vm);
    mmu->vm.reset_in_progress = false;
}

void panthor_mmu_unplug(panthor_device* ptdev) {
    panthor_mmu* mmu = ptdev->mmu;
    if (!mmu)
        return;

    if (kshim::pm_runtime_active(ptdev->dev))
        panthor_mmu_irq_suspend(&mmu->irq);

    kshim::MutexGuard g(mmu->as.slots_lock);
    for (u32 i = 0; i < MAX_AS_SLOTS; i++) {
        if (panthor_vm* vm = mmu->as.slots[i].vm) {
            WARN_ON(panthor_mmu_as_disable(ptdev, i, false));
            panthor_vm_release_as_locked(vm);
        }
    }
}

namespace {

// What upstream ties to the DRM device's lifetime (drmm): released with the device's resources.
// Outside the thread-safety analysis: it empties the slot LRU without slots_lock, which nothing
// else can take any more.
void panthor_mmu_release(panthor_device* ptdev) NO_THREAD_SAFETY_ANALYSIS {
    panthor_mmu* mmu = ptdev->mmu;
    if (!mmu)
        return;
    // Finished jobs may still drop the last reference of their VM from there.
    if (mmu->vm.cleanup_wq)
        kshim::destroy_workqueue(mmu->vm.cleanup_wq);
    if (mmu->vm.wq)
        kshim::destroy_workqueue(mmu->vm.wq);
    WARN(!mmu->vm.list.empty(), "panthor: VMs still alive at MMU teardown\n");
    mmu->vm.list.clear();
    mmu->as.lru_list.clear();
    kshim::kdelete(mmu);
    ptdev->mmu = nullptr;
    panthor_mmu_pt_cache_fini();
}

}  // namespace

int panthor_mmu_init(panthor_device* ptdev) {
    auto* mmu = kshim::knew<panthor_mmu>(kshim::GFP_KERNEL);
    if (!mmu)
        return -ENOMEM;
    ptdev->mmu = mmu;
    // The page sizes every VM's tables use, exposed to userspace by DEV_QUERY_MMU_INFO.
    ptdev->mmu_info.page_size_bitmap = iommu::SZ_4K | iommu::SZ_2M;
    // A device keeps the page-table cache alive as long as its VMs may use it.
    panthor_mmu_pt_cache_init();

    mmu->vm.wq = kshim::alloc_workqueue("panthor-vm-bind", kshim::WQ_UNBOUND, 0);
    mmu->vm.cleanup_wq = kshim::alloc_workqueue("panthor-vm-cleanup", kshim::WQ_UNBOUND, 0);

    // Registered before the IRQ: the IRQ (which uses mmu->irq) is released first.
    int ret = kshim::devm_add_action_or_reset(ptdev->dev, [ptdev] { panthor_mmu_release(ptdev); });
    if (ret)
        return ret;
    if (!mmu->vm.wq || !mmu->vm.cleanup_wq)
        return -ENOMEM;

    kshim::IrqLine* irq = kshim::platform_get_irq_byname(ptdev->pdev, "mmu");
    if (kshim::IS_ERR_OR_NULL(irq))
        return -ENODEV;

    // Every fault bit at first; the AS disables mask theirs.
    {
        kshim::MutexGuard g(mmu->as.slots_lock);
        mmu->irq_events = panthor_mmu_fault_mask(ptdev, ~0u);
    }
    return panthor_request_mmu_irq(ptdev, &mmu->irq, irq, panthor_mmu_irq_events(ptdev));
}

}  // namespace panthor
