// Mirrors drivers/gpu/drm/panthor/panthor_mmu.c: VM creation and release, the per-file VM pool,
// kernel VA allocation and the resv helpers.
//
// DOC: VM layout. A VM spans the GPU's VA range (the MCU's only its 4 GiB). User VMs split it:
// userspace manages [0, kernel_va_start), the kernel the power-of-two top part, from which kernel
// BOs (heap chunks, rings...) get their VA through a drm_mm. The VA tree is a drm_gpuvm in
// immediate mode (mappings may change in a VM_BIND job's fence-signalling path) whose
// extobj/evict lists are protected by the VM's resv. Each VM has its own single-entity
// drm_sched for asynchronous VM_BIND jobs; all of them run on the MMU's shared workqueue.
#include <bit>

#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/err.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sizes.h"
#include "panthor/panthor_heap.h"
#include "panthor/panthor_mmu_priv.h"
#include "panthor/panthor_sched.h"

namespace panthor {

using kshim::SZ_2M;
using kshim::SZ_4G;

namespace {

constexpr u64 PANTHOR_VM_MIN_KERNEL_VA_SIZE = u64{256} << 20;
constexpr u32 PANTHOR_VM_CREATE_FLAGS = 0;
// Only 32 VMs per open file.
constexpr u32 PANTHOR_MAX_VMS_PER_FILE = 32;
// TASK_SIZE of the processes using the driver: a 48-bit arm64 user address space (the SoCs
// carrying these GPUs). Only used to pick the default user VA range.
constexpr u64 kTaskSize = u64{1} << 48;
// The widest input/output address the ARM 64-bit LPAE format handles.
constexpr u32 kLpaeMaxAddrBits = 48;

// The TLB is flushed by panthor_vm_unlock_region()/panthor_vm_flush_range(), not per table.
void mmu_tlb_flush_all(void*) {}
void mmu_tlb_flush_walk(unsigned long, size_t, size_t, void*) {}
const iommu::IommuFlushOps mmu_tlb_ops = {
    .tlb_flush_all = mmu_tlb_flush_all,
    .tlb_flush_walk = mmu_tlb_flush_walk,
    .tlb_add_page = nullptr,
};

u64 rounddown_pow_of_two(u64 x) {
    return x ? u64{1} << (63 - std::countl_zero(x)) : 0;
}

}  // namespace

// ---- VM lifetime ----

void panthor_vm_stop(panthor_vm* vm) {
    drm::drm_sched_stop(&vm->sched, nullptr);
}

void panthor_vm_start(panthor_vm* vm) {
    drm::drm_sched_start(&vm->sched, 0);
}

u32 panthor_vm_page_size(panthor_vm* vm) {
    const auto* pgt = iommu::io_pgtable_ops_to_pgtable(vm->pgtbl_ops);
    return 1u << std::countr_zero(pgt->cfg_.pgsize_bitmap);
}

u64 panthor_vm_root_page_table_pa(panthor_vm* vm) {
    return iommu::io_pgtable_ops_to_pgtable(vm->pgtbl_ops)->cfg_.arm_lpae_s1_cfg.ttbr;
}

u64 panthor_vm_memattr(panthor_vm* vm) {
    return vm->memattr;
}

// Lockless, as io-pgtable's iova_to_phys: a devcoredump reads the faulting stream through it.
kshim::phys_addr_t panthor_vm_iova_to_phys(panthor_vm* vm, u64 va) {
    return vm->pgtbl_ops->iova_to_phys(va);
}

void panthor_vm_free(drm::drm_gpuvm* gpuvm) {
    panthor_vm* vm = to_panthor_vm(gpuvm);
    panthor_device* ptdev = vm->ptdev;
    panthor_mmu* mmu = ptdev->mmu;

    {
        kshim::MutexGuard g(vm->heaps.lock);
        if (WARN_ON(vm->heaps.pool))
            panthor_heap_pool_destroy(vm->heaps.pool);
    }

    {
        kshim::MutexGuard g(mmu->vm.lock);
        mmu->vm.list.erase(mmu->vm.list.iterator_to(*vm));
        // The scheduler must run again for drm_sched_entity_destroy()/drm_sched_fini(). No job
        // is left and none can be queued, so this does not get in the way of the reset.
        if (mmu->vm.reset_in_progress)
            panthor_vm_start(vm);
    }

    drm::drm_sched_entity_destroy(&vm->entity);
    drm::drm_sched_fini(&vm->sched);

    {
        kshim::MutexGuard op(vm->op_lock);
        kshim::MutexGuard slots(mmu->as.slots_lock);
        if (vm->as.id >= 0) {
            if (drm::drm_dev_enter(&ptdev->base))
                panthor_mmu_as_disable(ptdev, static_cast<u32>(vm->as.id), false);
            mmu->as.slots[vm->as.id].vm = nullptr;
            mmu->as.alloc_mask &= ~(1ul << vm->as.id);
            if (vm->as_lru_node.is_linked())
                mmu->as.lru_list.erase(mmu->as.lru_list.iterator_to(*vm));
            vm->as.id = -1;
        }
    }

    iommu::free_io_pgtable_ops(vm->pgtbl_ops);
    drm::drm_mm_takedown(&vm->mm);
    kshim::kdelete(vm);
}

panthor_vm* panthor_vm_get(panthor_vm* vm) {
    if (vm)
        drm::drm_gpuvm_get(&vm->base);
    return vm;
}

void panthor_vm_put(panthor_vm* vm) {
    drm::drm_gpuvm_put(vm ? &vm->base : nullptr);
}

panthor_vm* panthor_vm_create(panthor_device* ptdev, bool for_mcu, u64 kernel_va_start, u64 kernel_va_size,
                              u64 kernel_auto_va_start, u64 kernel_auto_va_size) {
    const u32 va_bits = GPU_MMU_FEATURES_VA_BITS(ptdev->gpu_info.mmu_features);
    const u32 pa_bits = GPU_MMU_FEATURES_PA_BITS(ptdev->gpu_info.mmu_features);
    const u64 full_va_range = va_bits >= 64 ? ~u64{0} : u64{1} << va_bits;
    panthor_mmu* mmu = ptdev->mmu;
    int ret;

    auto* vm = kshim::knew<panthor_vm>(kshim::GFP_KERNEL);
    if (!vm)
        return kshim::ERR_PTR<panthor_vm>(-ENOMEM);

    // The VM's resv, shared by the BOs private to it.
    drm::drm_gem_object* dummy_gem = drm::drm_gpuvm_resv_object_alloc();
    if (!dummy_gem) {
        kshim::kdelete(vm);
        return kshim::ERR_PTR<panthor_vm>(-ENOMEM);
    }

    vm->for_mcu = for_mcu;
    vm->ptdev = ptdev;

    // The MCU is a Cortex-M7: it only addresses 4 GiB.
    const u64 min_va = 0;
    const u64 va_range = for_mcu ? SZ_4G : full_va_range;

    drm::drm_mm_init(&vm->mm, kernel_va_start, kernel_va_size);
    vm->user_va_end = kernel_va_start;
    vm->kernel_auto_va.start = kernel_auto_va_start;
    vm->kernel_auto_va.end = kernel_auto_va_start + kernel_auto_va_size;

    iommu::IoPgtableCfg pgtbl_cfg;
    pgtbl_cfg.pgsize_bitmap = ptdev->mmu_info.page_size_bitmap;
    pgtbl_cfg.ias = va_bits;
    pgtbl_cfg.oas = pa_bits;
    pgtbl_cfg.coherent_walk = ptdev->coherent;
    pgtbl_cfg.tlb = &mmu_tlb_ops;
    pgtbl_cfg.alloc = panthor_vm_alloc_pt;
    pgtbl_cfg.free = panthor_vm_free_pt;

    drm::drm_sched_init_args sched_args;
    sched_args.ops = &panthor_vm_bind_ops;
    sched_args.submit_wq = mmu->vm.wq;
    sched_args.num_rqs = 1;
    sched_args.credit_limit = 1;
    // Bind operations run synchronously in run_job: nothing to time out.
    sched_args.timeout = kshim::MAX_SCHEDULE_TIMEOUT;
    sched_args.name = "panthor-vm-bind";
    sched_args.dev = ptdev->dev;

    vm->pgtbl_ops = iommu::alloc_io_pgtable_ops(iommu::IoPgtableFmt::ARM_64_LPAE_S1, &pgtbl_cfg, vm);
    if (!vm->pgtbl_ops) {
        // io-pgtable answers NULL both for address sizes the LPAE format cannot express and for a
        // root table it could not allocate; only the former is an invalid configuration.
        ret = (va_bits > kLpaeMaxAddrBits || pa_bits > kLpaeMaxAddrBits) ? -EINVAL : -ENOMEM;
        goto err_mm_takedown;
    }

    ret = drm::drm_sched_init(&vm->sched, &sched_args);
    if (ret)
        goto err_free_io_pgtable;

    vm->sched_list[0] = &vm->sched;
    ret = drm::drm_sched_entity_init(&vm->entity, drm::DRM_SCHED_PRIORITY_KERNEL, vm->sched_list, 1, nullptr);
    if (ret)
        goto err_sched_fini;

    vm->memattr = panthor_mmu_mair_to_memattr(
        iommu::io_pgtable_ops_to_pgtable(vm->pgtbl_ops)->cfg_.arm_lpae_s1_cfg.mair, ptdev->coherent);

    {
        kshim::MutexGuard g(mmu->vm.lock);
        mmu->vm.list.push_back(*vm);
        // Created while a reset runs: stay stopped until post_reset starts everyone.
        if (mmu->vm.reset_in_progress)
            panthor_vm_stop(vm);
    }

    // No reserved range: kernel mappings are handled like user ones.
    drm::drm_gpuvm_init(&vm->base, for_mcu ? "panthor-MCU-VM" : "panthor-GPU-VM",
                        drm::DRM_GPUVM_RESV_PROTECTED | drm::DRM_GPUVM_IMMEDIATE_MODE, dummy_gem, min_va, va_range, 0,
                        0, &panthor_gpuvm_ops);
    drm::drm_gem_object_put(dummy_gem);

    // drm_gpuvm_init cannot fail, so a failure to reserve the index nodes of the first insert
    // goes unreported there; ask again, where a failure can be returned.
    ret = drm::drm_gpuvm_prealloc_index(&vm->base, 1);
    if (ret) {
        // The VM is a drm_gpuvm now: the last reference frees it (panthor_vm_free).
        drm::drm_gpuvm_put(&vm->base);
        return kshim::ERR_PTR<panthor_vm>(ret);
    }
    return vm;

err_sched_fini:
    drm::drm_sched_fini(&vm->sched);
err_free_io_pgtable:
    iommu::free_io_pgtable_ops(vm->pgtbl_ops);
err_mm_takedown:
    drm::drm_mm_takedown(&vm->mm);
    drm::drm_gem_object_put(dummy_gem);
    kshim::kdelete(vm);
    return kshim::ERR_PTR<panthor_vm>(ret);
}

// A reference on the VM's heap pool (created on first use if `create`), or ERR_PTR: -ENOENT when
// there is none and `create` is false, -EINVAL once the VM is destroyed. The VM keeps its own
// reference until panthor_vm_destroy().
panthor_heap_pool* panthor_vm_get_heap_pool(panthor_vm* vm, bool create) {
    panthor_heap_pool* pool;

    kshim::MutexGuard g(vm->heaps.lock);
    if (!vm->heaps.pool && create) {
        pool =
            vm->destroyed.load() ? kshim::ERR_PTR<panthor_heap_pool>(-EINVAL) : panthor_heap_pool_create(vm->ptdev, vm);
        if (!kshim::IS_ERR(pool))
            vm->heaps.pool = panthor_heap_pool_get(pool);
    } else {
        pool = panthor_heap_pool_get(vm->heaps.pool);
        if (!pool)
            pool = kshim::ERR_PTR<panthor_heap_pool>(-ENOENT);
    }
    return pool;
}

// ---- kernel VA ----

int panthor_vm_alloc_va(panthor_vm* vm, u64 va, u64 size, drm::drm_mm_node* va_node) {
    const u64 vm_pgsz = panthor_vm_page_size(vm);

    if (!size || (size & (vm_pgsz - 1)))
        return -EINVAL;
    if (va != PANTHOR_VM_KERNEL_AUTO_VA && (va & (vm_pgsz - 1)))
        return -EINVAL;

    kshim::MutexGuard g(vm->mm_lock);
    if (va != PANTHOR_VM_KERNEL_AUTO_VA) {
        va_node->start = va;
        va_node->size = size;
        return drm::drm_mm_reserve_node(&vm->mm, va_node);
    }
    // 2 MiB alignment lets big kernel BOs use block mappings.
    return drm::drm_mm_insert_node_in_range(&vm->mm, va_node, size, size >= SZ_2M ? SZ_2M : vm_pgsz, 0,
                                            vm->kernel_auto_va.start, vm->kernel_auto_va.end, drm::DRM_MM_INSERT_BEST);
}

void panthor_vm_free_va(panthor_vm* vm, drm::drm_mm_node* va_node) {
    kshim::MutexGuard g(vm->mm_lock);
    drm::drm_mm_remove_node(va_node);
}

// ---- lookups and resvs ----

panthor_gem_object* panthor_vm_get_bo_for_va(panthor_vm* vm, u64 va, u64* bo_offset) {
    panthor_gem_object* bo = kshim::ERR_PTR<panthor_gem_object>(-ENOENT);

    // No map/unmap may run meanwhile.
    kshim::MutexGuard g(vm->op_lock);
    drm::drm_gpuva* gpuva = drm::drm_gpuva_find_first(&vm->base, va, 1);
    if (gpuva && gpuva->gem.obj) {
        drm::drm_gem_object_get(gpuva->gem.obj);
        bo = to_panthor_bo(gpuva->gem.obj);
        *bo_offset = panthor_vma_wrap_bo_offset(gpuva, gpuva->gem.offset + (va - gpuva->va.addr));
    }
    return bo;
}

kshim::dma_resv* panthor_vm_resv(panthor_vm* vm) {
    return drm::drm_gpuvm_resv(&vm->base);
}

drm::drm_gem_object* panthor_vm_root_gem(panthor_vm* vm) {
    return vm ? vm->base.r_obj : nullptr;
}

int panthor_vm_prepare_mapped_bos_resvs(drm::drm_exec* exec, panthor_vm* vm, u32 slot_count) {
    // The VM resv (and with it every private BO), plus the external BOs mapped in the VM.
    int ret = drm::drm_gpuvm_prepare_vm(&vm->base, exec, slot_count);
    if (ret)
        return ret;
    return drm::drm_gpuvm_prepare_objects(&vm->base, exec, slot_count);
}

int panthor_vm_add_bos_resvs_deps_to_job(panthor_vm* vm, drm::drm_sched_job* job) {
    // Explicit synchronisation: only kernel work on the VM's BOs (moves, clears) is waited for.
    // The VM resv is held (panthor_vm_prepare_mapped_bos_resvs), which protects the extobj list.
    drm_gpuvm_resv_assert_held(&vm->base);
    int ret = drm::drm_sched_job_add_resv_dependencies(job, panthor_vm_resv(vm), kshim::DMA_RESV_USAGE_KERNEL);
    if (ret)
        return ret;
    for (drm::drm_gpuvm_bo& vm_bo : vm->base.extobj.list) {
        ret = drm::drm_sched_job_add_resv_dependencies(job, vm_bo.obj->resv, kshim::DMA_RESV_USAGE_KERNEL);
        if (ret)
            return ret;
    }
    return 0;
}

void panthor_vm_add_job_fence_to_bos_resvs(panthor_vm* vm, drm::drm_sched_job* job) {
    // Every resv is held with a fence slot reserved (panthor_vm_prepare_mapped_bos_resvs).
    drm_gpuvm_resv_assert_held(&vm->base);
    kshim::dma_fence* fence = &job->s_fence->finished;
    kshim::dma_resv_add_fence(panthor_vm_resv(vm), fence, kshim::DMA_RESV_USAGE_BOOKKEEP);
    for (drm::drm_gpuvm_bo& vm_bo : vm->base.extobj.list)
        kshim::dma_resv_add_fence(vm_bo.obj->resv, fence, kshim::DMA_RESV_USAGE_BOOKKEEP);
}

void panthor_vm_update_resvs(panthor_vm* vm, drm::drm_exec* exec, kshim::dma_fence* fence,
                             kshim::dma_resv_usage private_usage, kshim::dma_resv_usage extobj_usage) {
    drm::drm_gpuvm_resv_add_fence(&vm->base, exec, fence, private_usage, extobj_usage);
}

// ---- VM pool ----

struct panthor_vm_pool {
    // Protects the lookup-then-get against a concurrent destroy (upstream's xa_lock).
    kshim::SpinLock lock{"panthor_vm_pool.lock"};
    kshim::XArray<panthor_vm> xa{kshim::XA_FLAGS_ALLOC1};
};

namespace {

u64 panthor_vm_create_get_user_va_range(const drm_panthor_vm_create* args, u64 full_va_range) {
    // Keep a minimum of VA space for kernel objects.
    if (full_va_range < PANTHOR_VM_MIN_KERNEL_VA_SIZE)
        return 0;

    u64 user_va_range;
    if (args->user_va_range) {
        user_va_range = args->user_va_range;
    } else if (kTaskSize < full_va_range) {
        // CPU and GPU can then map buffers at the same address.
        user_va_range = kTaskSize;
    } else {
        // Above 4 GiB of VA, split in two halves; below, keep the kernel part minimal.
        user_va_range = full_va_range > SZ_4G ? full_va_range / 2 : full_va_range - PANTHOR_VM_MIN_KERNEL_VA_SIZE;
    }

    if (full_va_range - PANTHOR_VM_MIN_KERNEL_VA_SIZE < user_va_range)
        user_va_range = full_va_range - PANTHOR_VM_MIN_KERNEL_VA_SIZE;
    return user_va_range;
}

int panthor_vm_create_check_args(const panthor_device* ptdev, const drm_panthor_vm_create* args, u64* kernel_va_start,
                                 u64* kernel_va_range) {
    const u32 va_bits = GPU_MMU_FEATURES_VA_BITS(ptdev->gpu_info.mmu_features);
    const u64 full_va_range = va_bits >= 64 ? ~u64{0} : u64{1} << va_bits;

    if (args->flags & ~PANTHOR_VM_CREATE_FLAGS)
        return -EINVAL;

    const u64 user_va_range = panthor_vm_create_get_user_va_range(args, full_va_range);
    if (!user_va_range || (args->user_va_range && args->user_va_range > user_va_range))
        return -EINVAL;

    // A power-of-two kernel range gives a clean split.
    *kernel_va_range = rounddown_pow_of_two(full_va_range - user_va_range);
    *kernel_va_start = full_va_range - *kernel_va_range;
    return 0;
}

// Kills all mappings and refuses new ones; the VM itself goes with its last reference (jobs
// still queued on it hold one each).
void panthor_vm_destroy(panthor_vm* vm) {
    if (!vm)
        return;

    {
        // Under op_lock: a map that runs after this sees the flag, one that ran before is
        // undone by the unmap below.
        kshim::MutexGuard g(vm->op_lock);
        vm->destroyed.store(true);
    }

    // Groups of this VM may still be on a slot, evicted by a pending tick: the FW writes heap
    // contexts while suspending them, so that must be over before the heaps go.
    if (vm->as.active_cnt.load() > 0)
        panthor_sched_prepare_for_vm_destruction(vm->ptdev);

    {
        kshim::MutexGuard g(vm->heaps.lock);
        panthor_heap_pool_destroy(vm->heaps.pool);
        vm->heaps.pool = nullptr;
    }

    WARN_ON(panthor_vm_unmap_range(vm, vm->base.mm_start, vm->base.mm_range));
    panthor_vm_put(vm);
}

}  // namespace

int panthor_vm_pool_create_vm(panthor_device* ptdev, panthor_vm_pool* pool, drm_panthor_vm_create* args) {
    u64 kernel_va_start, kernel_va_range;
    int ret = panthor_vm_create_check_args(ptdev, args, &kernel_va_start, &kernel_va_range);
    if (ret)
        return ret;

    panthor_vm* vm =
        panthor_vm_create(ptdev, false, kernel_va_start, kernel_va_range, kernel_va_start, kernel_va_range);
    if (kshim::IS_ERR(vm))
        return static_cast<int>(kshim::PTR_ERR(vm));

    u32 id;
    ret = pool->xa.alloc(&id, vm, XA_LIMIT(1, PANTHOR_MAX_VMS_PER_FILE), kshim::GFP_KERNEL);
    if (ret) {
        panthor_vm_put(vm);
        return ret;
    }

    args->user_va_range = kernel_va_start;
    args->id = id;
    return static_cast<int>(id);
}

int panthor_vm_pool_destroy_vm(panthor_vm_pool* pool, u32 handle) {
    panthor_vm* vm;
    {
        kshim::SpinGuard g(pool->lock);
        vm = pool->xa.erase(handle);
    }
    panthor_vm_destroy(vm);
    return vm ? 0 : -EINVAL;
}

panthor_vm* panthor_vm_pool_get_vm(panthor_vm_pool* pool, u32 handle) {
    kshim::SpinGuard g(pool->lock);
    return panthor_vm_get(pool->xa.load(handle));
}

void panthor_vm_pool_destroy(panthor_file* pfile) {
    panthor_vm_pool* pool = pfile->vms;
    if (!pool)
        return;

    pool->xa.for_each([&](u32 id, panthor_vm*) {
        panthor_vm* vm;
        {
            kshim::SpinGuard g(pool->lock);
            vm = pool->xa.erase(id);
        }
        panthor_vm_destroy(vm);
    });
    kshim::kdelete(pool);
    pfile->vms = nullptr;
}

void panthor_vm_heaps_sizes(panthor_file* pfile, panthor_memory_stats* stats) {
    panthor_vm_pool* pool = pfile->vms;
    if (!pool)
        return;
    // Upstream walks the pool under its xa_lock; the heaps lock is a mutex, so here each VM is
    // looked up with a reference instead.
    pool->xa.for_each([&](u32 id, panthor_vm*) {
        panthor_vm* vm = panthor_vm_pool_get_vm(pool, id);
        if (!vm)
            return;
        size_t size = 0;
        {
            kshim::MutexGuard g(vm->heaps.lock);
            if (vm->heaps.pool)
                size = panthor_heap_pool_size(vm->heaps.pool);
        }
        stats->resident += size;
        if (std::atomic_ref<int>(vm->as.id).load(std::memory_order_relaxed) >= 0)
            stats->active += size;
        panthor_vm_put(vm);
    });
}

int panthor_vm_pool_create(panthor_file* pfile) {
    pfile->vms = kshim::knew<panthor_vm_pool>(kshim::GFP_KERNEL);
    return pfile->vms ? 0 : -ENOMEM;
}

}  // namespace panthor
