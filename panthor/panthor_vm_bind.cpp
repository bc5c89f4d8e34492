// Mirrors drivers/gpu/drm/panthor/panthor_mmu.c: VM operations (op contexts, the drm_gpuvm
// split/merge steps, page-table updates) and the synchronous and asynchronous VM_BIND paths.
//
// DOC: An operation is prepared, executed, cleaned up. Preparing validates the request and
// gathers everything the execution could need: the VMAs (three for a map, two for an unmap),
// the BO's pinned pages and its vm_bo, the page tables the update may add (taken by the
// io-pgtable allocation hook, the leftovers given back at cleanup) and room in the VA index.
// Executing takes vm->op_lock, LOCKs the range in the VM's AS, lets drm_gpuvm_sm_map/sm_unmap
// call the step callbacks, which update the page tables and the VA tree, and flushes + UNLOCKs.
// It allocates nothing and takes no resv lock, so an asynchronous VM_BIND job runs it from its
// run_job, in the fence-signalling path; a failure there leaves the VM in a state userspace did
// not ask for, so the VM is declared unusable and the job's fence carries the error. A map that
// fails half-way (synchronous or not) unmaps what it mapped and declares the VM unusable too, as
// does an unmap that finds the tables out of step with the VA tree.
// Cleanup (outside the signalling path) frees what the steps left: VMAs removed by the steps are
// freed at once, vm_bos whose last mapping went are parked by drm_gpuvm and freed here (their
// release unpins the BO).
//
// Huge pages: a map uses 2 MiB blocks wherever the VA, the physical address and the length
// allow. io-pgtable does not split blocks, so a remap that cuts into a 2 MiB block unmaps the
// whole block and maps back, with 4 KiB pages, the part of it that stays.
#include <algorithm>
#include <bit>
#include <cstring>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/err.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sizes.h"
#include "panthor/panthor_mmu_priv.h"

namespace panthor {

using kshim::SZ_1G;
using kshim::SZ_2M;
using kshim::SZ_4K;

namespace {

constexpr u64 align_down(u64 x, u64 a) {
    return x & ~(a - 1);
}
constexpr u64 align_up(u64 x, u64 a) {
    return (x + a - 1) & ~(a - 1);
}

constexpr u32 PANTHOR_VM_BIND_OP_MAP_FLAGS = DRM_PANTHOR_VM_BIND_OP_MAP_READONLY | DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC |
                                             DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED | DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE |
                                             static_cast<u32>(DRM_PANTHOR_VM_BIND_OP_TYPE_MASK);
constexpr u32 PANTHOR_VM_MAP_FLAGS = DRM_PANTHOR_VM_BIND_OP_MAP_READONLY | DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC |
                                     DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED | DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE;

// VA index inserts an operation may do: a map inserts itself and the prev/next pieces of the
// mappings it cuts into; an unmap only pieces.
constexpr u32 kMapIndexInserts = 3;
constexpr u32 kUnmapIndexInserts = 2;

struct panthor_vm_bind_job {
    drm::drm_sched_job base;
    kshim::kref refcount;
    // Releases the op context (resv locks, unpins) out of the fence-signalling path.
    kshim::work_struct cleanup_op_ctx_work;
    panthor_vm* vm = nullptr;
    panthor_vm_op_ctx ctx{};
};

panthor_vm_bind_job* to_bind_job(drm::drm_sched_job* sched_job) {
    return container_of(sched_job, panthor_vm_bind_job, base);
}

// io-pgtable only handles pages inside one table, so a run stops at the next boundary of the
// block size above: 4 KiB pages up to the next 2 MiB boundary (or the end), else 2 MiB blocks
// up to the next 1 GiB boundary.
size_t get_pgsize(u64 addr, u64 size, size_t* count) {
    const u64 blk_offset = (0 - addr) % SZ_2M;
    if (blk_offset || size < SZ_2M) {
        *count = static_cast<size_t>((blk_offset ? std::min(blk_offset, size) : size) / SZ_4K);
        return SZ_4K;
    }
    u64 gig_offset = (0 - addr) % SZ_1G;
    if (!gig_offset)
        gig_offset = SZ_1G;
    *count = static_cast<size_t>(std::min(gig_offset, size) / SZ_2M);
    return SZ_2M;
}

int flags_to_prot(u32 flags) {
    int prot = 0;
    if (flags & DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC)
        prot |= iommu::IOMMU_NOEXEC;
    if (!(flags & DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED))
        prot |= iommu::IOMMU_CACHE;
    if (flags & DRM_PANTHOR_VM_BIND_OP_MAP_READONLY)
        prot |= iommu::IOMMU_READ;
    else
        prot |= iommu::IOMMU_READ | iommu::IOMMU_WRITE;
    if (flags & DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE)
        prot |= PANTHOR_PROT_SPARSE;
    return prot;
}

bool in_locked_region(panthor_vm* vm, u64 iova, u64 size) {
    return iova >= vm->locked_region.start && iova + size <= vm->locked_region.start + vm->locked_region.size;
}

// After a failed asynchronous operation, or a page-table update that could not be completed, the
// tables no longer match what userspace asked for: refuse further binds and cut the GPU off the VM.
void panthor_vm_declare_unusable(panthor_vm* vm) {
    panthor_device* ptdev = vm->ptdev;
    lockdep_assert_held(&vm->op_lock);

    if (vm->unusable.exchange(true))
        return;
    kshim::MutexGuard g(ptdev->mmu->as.slots_lock);
    if (vm->as.id >= 0 && drm::drm_dev_enter(&ptdev->base))
        panthor_mmu_as_disable(ptdev, static_cast<u32>(vm->as.id), false);
}

}  // namespace

void panthor_vm_unmap_pages(panthor_vm* vm, u64 iova, u64 size) {
    panthor_device* ptdev = vm->ptdev;
    iommu::IoPgtableOps* ops = vm->pgtbl_ops;

    WARN_ON(!in_locked_region(vm, iova, size));
    dev_dbg(ptdev->dev, "unmap: as=%d, iova=%llx, len=%llx", vm->as.id, static_cast<unsigned long long>(iova),
            static_cast<unsigned long long>(size));

    u64 offset = 0;
    while (offset < size) {
        size_t pgcount;
        const size_t pgsize = get_pgsize(iova + offset, size - offset, &pgcount);
        size_t unmapped_sz = ops->unmap_pages(iova + offset, pgsize, pgcount, nullptr);
        if (WARN_ON_ONCE(unmapped_sz != pgsize * pgcount)) {
            dev_err(ptdev->dev, "failed to unmap range %llx-%llx (requested range %llx-%llx)\n",
                    static_cast<unsigned long long>(iova + offset + unmapped_sz),
                    static_cast<unsigned long long>(iova + offset + pgsize * pgcount),
                    static_cast<unsigned long long>(iova), static_cast<unsigned long long>(iova + size));
            // The VA tree and the tables disagree. Step over the hole so that the tables past it
            // still go (no page-table page is left behind), but the VM cannot be trusted any
            // more.
            while (unmapped_sz < pgsize * pgcount && !ops->iova_to_phys(iova + offset + unmapped_sz))
                unmapped_sz += SZ_4K;
            panthor_vm_declare_unusable(vm);
            // Something we cannot unmap (a block cut in the middle): give up on the rest.
            if (WARN_ON_ONCE(!unmapped_sz))
                return;
        }
        offset += unmapped_sz;
    }
}

int panthor_vm_map_pages(panthor_vm* vm, u64 iova, int prot, drm::SgTable* sgt, u64 offset, u64 size) {
    panthor_device* ptdev = vm->ptdev;
    iommu::IoPgtableOps* ops = vm->pgtbl_ops;
    const u64 start_iova = iova;

    if (!size)
        return 0;
    if (prot & PANTHOR_PROT_SPARSE)
        return panthor_vm_map_sparse_pages(vm, iova, prot & ~PANTHOR_PROT_SPARSE, sgt, offset, size);
    if (WARN_ON(!sgt))
        return -EINVAL;
    WARN_ON(!in_locked_region(vm, iova, size));

    u64 left = 0;
    int ret = kshim::sg_for_each_dma_range(
        sgt, offset, size,
        [&](u64 paddr, u64 len) {
            dev_dbg(ptdev->dev, "map: as=%d, iova=%llx, paddr=%llx, len=%llx", vm->as.id,
                    static_cast<unsigned long long>(iova), static_cast<unsigned long long>(paddr),
                    static_cast<unsigned long long>(len));

            // When VA and PA disagree modulo 2 MiB no block can ever be used in this segment: hand
            // io-pgtable the whole run of pages at once (ours maps across table boundaries and says
            // how far it got) instead of one call per 2 MiB, which would walk down from the root
            // each time.
            const bool pages_only = ((iova ^ paddr) & (SZ_2M - 1)) != 0;
            while (len) {
                size_t pgcount, mapped = 0;
                size_t pgsize;
                if (pages_only) {
                    pgsize = SZ_4K;
                    pgcount = static_cast<size_t>(len / SZ_4K);
                } else {
                    pgsize = get_pgsize(iova | paddr, len, &pgcount);
                }
                // The tables come from the op context: nothing is allocated here.
                int err = ops->map_pages(iova, paddr, pgsize, pgcount, prot, kshim::GFP_NOWAIT, &mapped);
                iova += mapped;
                paddr += mapped;
                len -= mapped;

                if (WARN_ON(!err && !mapped))
                    err = -ENOMEM;
                if (WARN_ON_ONCE(err))
                    return err;
            }
            return 0;
        },
        &left);
    // The segments ended before the requested range did.
    if (!ret && WARN_ON(left))
        ret = -EINVAL;
    if (ret) {
        // Leave no page table behind, and no VM that looks fine but is not.
        panthor_vm_unmap_pages(vm, start_iova, iova - start_iova);
        panthor_vm_declare_unusable(vm);
        return ret;
    }
    return 0;
}

namespace {

// ---- op contexts ----

void panthor_vm_op_ctx_release_index(panthor_vm* vm, panthor_vm_op_ctx* op_ctx) {
    lockdep_assert_held(&vm->op_lock);
    WARN_ON(vm->index_reserve.pending < op_ctx->index_inserts);
    vm->index_reserve.pending -= op_ctx->index_inserts;
    op_ctx->index_inserts = 0;
}

void panthor_vm_cleanup_op_ctx(panthor_vm_op_ctx* op_ctx, panthor_vm* vm) {
    const u32 remaining_pt_count = op_ctx->rsvd_page_tables.count - op_ctx->rsvd_page_tables.ptr;
    if (remaining_pt_count)
        panthor_pt_cache_free_bulk(remaining_pt_count, op_ctx->rsvd_page_tables.pages + op_ctx->rsvd_page_tables.ptr);
    kshim::kfree(op_ctx->rsvd_page_tables.pages);
    op_ctx->rsvd_page_tables = {};

    if (op_ctx->index_inserts) {
        kshim::MutexGuard g(vm->op_lock);
        panthor_vm_op_ctx_release_index(vm, op_ctx);
    }

    if (op_ctx->map.vm_bo)
        drm::drm_gpuvm_bo_put_deferred(op_ctx->map.vm_bo);
    op_ctx->map.vm_bo = nullptr;

    for (panthor_vma*& vma : op_ctx->preallocated_vmas) {
        kshim::kdelete(vma);
        vma = nullptr;
    }

    // The vm_bos whose last reference went (in the steps, or above) are freed here, which
    // unpins their BO.
    drm::drm_gpuvm_bo_deferred_cleanup(&vm->base);
}

panthor_vma* panthor_vm_op_ctx_get_vma(panthor_vm_op_ctx* op_ctx) {
    for (panthor_vma*& slot : op_ctx->preallocated_vmas) {
        if (panthor_vma* vma = slot) {
            slot = nullptr;
            return vma;
        }
    }
    return nullptr;
}

void panthor_vm_op_ctx_put_vma(panthor_vm_op_ctx* op_ctx, panthor_vma* vma) {
    for (panthor_vma*& slot : op_ctx->preallocated_vmas) {
        if (!slot) {
            slot = vma;
            return;
        }
    }
    WARN_ON(true);
}

int panthor_vm_op_ctx_prealloc_vmas(panthor_vm_op_ctx* op_ctx) {
    u32 vma_count;
    switch (op_ctx->flags & OP_TYPE_MASK) {
    case DRM_PANTHOR_VM_BIND_OP_TYPE_MAP:
        // The new mapping, plus the prev and next pieces of the mappings it cuts into.
        vma_count = 3;
        break;
    case DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP:
        // An unmap inside one mapping keeps a piece on each side.
        vma_count = 2;
        break;
    default: return 0;
    }

    for (u32 i = 0; i < vma_count; i++) {
        auto* vma = kshim::knew<panthor_vma>(kshim::GFP_KERNEL);
        if (!vma)
            return -ENOMEM;
        op_ctx->preallocated_vmas[i] = vma;
    }
    return 0;
}

int panthor_vm_op_ctx_prealloc_pts(panthor_vm_op_ctx* op_ctx, u32 pt_count) {
    if (!pt_count)
        return 0;
    op_ctx->rsvd_page_tables.pages = static_cast<void**>(kshim::kcalloc(pt_count, sizeof(void*), kshim::GFP_KERNEL));
    if (!op_ctx->rsvd_page_tables.pages)
        return -ENOMEM;
    if (panthor_pt_cache_alloc_bulk(kshim::GFP_KERNEL, pt_count, op_ctx->rsvd_page_tables.pages) !=
        static_cast<int>(pt_count))
        return -ENOMEM;
    op_ctx->rsvd_page_tables.count = pt_count;
    return 0;
}

// Room in the VA index for this op's inserts, on top of those of every op prepared before and
// not run yet (queued VM_BIND jobs). Under op_lock, which the signalling path takes too: the
// nodes are allocated without blocking, so op_lock is never held across reclaim.
int panthor_vm_op_ctx_reserve_index(panthor_vm* vm, panthor_vm_op_ctx* op_ctx, u32 inserts) {
    kshim::MutexGuard g(vm->op_lock);
    const u32 total = vm->index_reserve.pending + inserts;
    if (vm->base.rb.index.reserve(total, kshim::GFP_NOWAIT))
        return -ENOMEM;
    vm->index_reserve.pending = total;
    op_ctx->index_inserts = inserts;
    return 0;
}

// L1, L2 and L3 tables covering [va, va + size). Blocks at either end may also need an L3 table
// (to keep part of a huge page); they are inside the aligned-out range, so they are counted.
// Over-provisioned: what is not used goes back at cleanup.
u32 pt_count_for_range(u64 va, u64 size) {
    const u64 end = va + size;
    return static_cast<u32>(((align_up(end, u64{1} << 39) - align_down(va, u64{1} << 39)) >> 39) +
                            ((align_up(end, SZ_1G) - align_down(va, SZ_1G)) >> 30) +
                            ((align_up(end, SZ_2M) - align_down(va, SZ_2M)) >> 21));
}

}  // namespace

int panthor_vm_prepare_map_op_ctx(panthor_vm_op_ctx* op_ctx, panthor_vm* vm, panthor_gem_object* bo, u64 offset,
                                  u64 size, u64 va, u32 flags) {
    if (!bo)
        return -EINVAL;
    if ((flags & ~PANTHOR_VM_BIND_OP_MAP_FLAGS) || (flags & OP_TYPE_MASK) != DRM_PANTHOR_VM_BIND_OP_TYPE_MAP)
        return -EINVAL;

    drm::drm_gem_object* obj = &bo->base.base;
    // The BO range must exist (a sparse range wraps around its dummy instead).
    if (!(flags & DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE) && (size > obj->size || offset > obj->size - size))
        return -EINVAL;
    // A BO private to a VM cannot be mapped anywhere else.
    if (bo->exclusive_vm_root_gem && bo->exclusive_vm_root_gem != panthor_vm_root_gem(vm))
        return -EINVAL;
    // Out of the VM, or a BO offset the page tables cannot express: refused here rather than
    // by sm_map, which for a queued job would only fail (and make the VM unusable) at run time.
    if (!drm::drm_gpuvm_range_valid(&vm->base, va, size) || (offset & (panthor_vm_page_size(vm) - 1)))
        return -EINVAL;

    *op_ctx = {};
    op_ctx->flags = flags;
    op_ctx->va.range = size;
    op_ctx->va.addr = va;

    drm::drm_gpuvm_bo* preallocated_vm_bo;
    int ret = panthor_vm_op_ctx_prealloc_vmas(op_ctx);
    if (ret)
        goto err_cleanup;

    // The pages are reserved now, so the map does not have to allocate. Once the vm_bo exists,
    // this pin is its own: panthor_vm_bo_free() drops it. An import has no pages of its own to
    // pin: they are the exporter's, pinned while it is attached.
    if (!drm::drm_gem_is_imported(obj)) {
        ret = drm::drm_gem_shmem_pin(&bo->base);
        if (ret)
            goto err_cleanup;
    }

    ret = drm::drm_gem_shmem_get_pages_sgt(&bo->base, &op_ctx->map.sgt);
    if (ret) {
        if (!drm::drm_gem_is_imported(obj))
            drm::drm_gem_shmem_unpin(&bo->base);
        goto err_cleanup;
    }

    preallocated_vm_bo = drm::drm_gpuvm_bo_create(&vm->base, obj);
    if (!preallocated_vm_bo) {
        if (!drm::drm_gem_is_imported(obj))
            drm::drm_gem_shmem_unpin(&bo->base);
        ret = -ENOMEM;
        goto err_cleanup;
    }

    // If the <VM, BO> connection exists, obtain_prealloc drops our vm_bo. Dropping it for real
    // here would free it (and unpin the BO, taking its resv) under the VM resv, which is the
    // BO's own resv for a private BO: keep a reference, and let the deferred cleanup free it.
    drm::drm_gpuvm_bo_get(preallocated_vm_bo);
    kshim::dma_resv_lock(panthor_vm_resv(vm), nullptr);
    kshim::mutex_lock(&obj->gpuva.lock);
    op_ctx->map.vm_bo = drm::drm_gpuvm_bo_obtain_prealloc(preallocated_vm_bo);
    kshim::mutex_unlock(&obj->gpuva.lock);
    kshim::dma_resv_unlock(panthor_vm_resv(vm));
    drm::drm_gpuvm_bo_put_deferred(preallocated_vm_bo);

    op_ctx->map.bo_offset = offset;

    ret = panthor_vm_op_ctx_prealloc_pts(op_ctx, pt_count_for_range(va, size));
    if (ret)
        goto err_cleanup;

    ret = panthor_vm_op_ctx_reserve_index(vm, op_ctx, kMapIndexInserts);
    if (ret)
        goto err_cleanup;

    // Into the extobj list last, when nothing can fail any more.
    kshim::dma_resv_lock(panthor_vm_resv(vm), nullptr);
    drm::drm_gpuvm_bo_extobj_add(op_ctx->map.vm_bo);
    kshim::dma_resv_unlock(panthor_vm_resv(vm));
    return 0;

err_cleanup:
    panthor_vm_cleanup_op_ctx(op_ctx, vm);
    return ret;
}

namespace {

int panthor_vm_prepare_unmap_op_ctx(panthor_vm_op_ctx* op_ctx, panthor_vm* vm, u64 va, u64 size) {
    if (!drm::drm_gpuvm_range_valid(&vm->base, va, size))
        return -EINVAL;

    *op_ctx = {};
    op_ctx->va.range = size;
    op_ctx->va.addr = va;
    op_ctx->flags = DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP;

    // A 2 MiB block cut at either end is remapped with 4 KiB pages: one L3 table per end (one
    // in all when both ends fall in the same block).
    u32 pt_count = 0;
    if (va != align_up(va, SZ_2M))
        pt_count++;
    if (va + size != align_up(va + size, SZ_2M) && align_up(va + size, SZ_2M) != align_up(va, SZ_2M))
        pt_count++;

    int ret = panthor_vm_op_ctx_prealloc_vmas(op_ctx);
    if (!ret)
        ret = panthor_vm_op_ctx_prealloc_pts(op_ctx, pt_count);
    if (!ret)
        ret = panthor_vm_op_ctx_reserve_index(vm, op_ctx, kUnmapIndexInserts);
    if (ret) {
        panthor_vm_cleanup_op_ctx(op_ctx, vm);
        return ret;
    }
    return 0;
}

void panthor_vm_prepare_sync_only_op_ctx(panthor_vm_op_ctx* op_ctx, panthor_vm*) {
    *op_ctx = {};
    op_ctx->flags = DRM_PANTHOR_VM_BIND_OP_TYPE_SYNC_ONLY;
}

// ---- drm_gpuvm steps (op_lock held, possibly in the fence-signalling path) ----

void panthor_vm_bo_free(drm::drm_gpuvm_bo* vm_bo) {
    panthor_gem_object* bo = to_panthor_bo(vm_bo->obj);
    // The pin taken when the vm_bo was prepared. Never in the signalling path: vm_bos are
    // freed by the deferred cleanup.
    if (!drm::drm_gem_is_imported(&bo->base.base))
        drm::drm_gem_shmem_unpin(&bo->base);
    kshim::kdelete(vm_bo);
}

void panthor_vma_link(panthor_vma* vma, drm::drm_gpuvm_bo* vm_bo) {
    drm::drm_gem_object* obj = vma->base.gem.obj;
    kshim::MutexGuard g(obj->gpuva.lock);
    drm::drm_gpuva_link(&vma->base, vm_bo);
}

// The vm_bo reference goes without freeing anything (immediate mode): the cleanup frees it.
void panthor_vma_unlink(panthor_vma* vma) {
    drm::drm_gpuva_unlink_defer(&vma->base);
    kshim::kdelete(vma);
}

void panthor_vma_init(panthor_vma* vma, u32 flags) {
    vma->flags = flags;
}

int panthor_gpuva_sm_step_map(drm::drm_gpuva_op* op, void* priv) {
    auto* vm = static_cast<panthor_vm*>(priv);
    panthor_vm_op_ctx* op_ctx = vm->op_ctx;
    panthor_vma* vma = panthor_vm_op_ctx_get_vma(op_ctx);
    if (!vma)
        return -EINVAL;

    panthor_vma_init(vma, op_ctx->flags & PANTHOR_VM_MAP_FLAGS);
    int ret = panthor_vm_map_pages(vm, op->map.va.addr, flags_to_prot(vma->flags), op_ctx->map.sgt, op->map.gem.offset,
                                   op->map.va.range);
    if (ret) {
        panthor_vm_op_ctx_put_vma(op_ctx, vma);
        return ret;
    }

    drm::drm_gpuva_map(&vm->base, &vma->base, &op->map);
    panthor_vma_link(vma, op_ctx->map.vm_bo);
    // The mapping holds its own reference now.
    drm::drm_gpuvm_bo_put_deferred(op_ctx->map.vm_bo);
    op_ctx->map.vm_bo = nullptr;
    return 0;
}

// Whether the 2 MiB block at `block` was mapped as one block entry for mapping `va`: the map
// uses a block wherever the whole block lies in the mapping and its physical range is one
// contiguous, 2 MiB-aligned piece (the parts a remap maps back never hold a whole block).
bool iova_mapped_as_huge_page(const drm::drm_gpuva* va, u64 block) {
    if (block < va->va.addr || block + SZ_2M > va->va.addr + va->va.range)
        return false;
    const drm::SgTable* sgt = to_drm_gem_shmem_obj(va->gem.obj)->sgt;
    if (!sgt)
        return false;
    u64 bo_offset = panthor_vma_wrap_bo_offset(va, va->gem.offset + (block - va->va.addr));
    for (u32 i = 0; i < sgt->nents; i++) {
        const u64 len = drm::sg_dma_len(&sgt->sgl[i]);
        if (bo_offset >= len) {
            bo_offset -= len;
            continue;
        }
        const u64 paddr = drm::sg_dma_address(&sgt->sgl[i]) + bo_offset;
        return !(paddr & (SZ_2M - 1)) && len - bo_offset >= SZ_2M;
    }
    return false;
}

// io-pgtable cannot unmap part of a block: widen the unmap to the whole 2 MiB blocks it cuts
// into, so the step can map back the parts that stay.
void unmap_hugepage_align(const drm::drm_gpuva_op_remap* op, u64* unmap_start, u64* unmap_range) {
    const drm::drm_gpuva* va = op->unmap->va;
    const u64 unmap_end = *unmap_start + *unmap_range;
    const u64 aligned_unmap_start = align_down(*unmap_start, SZ_2M);
    const u64 aligned_unmap_end = align_up(unmap_end, SZ_2M);

    if (op->prev && aligned_unmap_start < *unmap_start && iova_mapped_as_huge_page(va, aligned_unmap_start)) {
        *unmap_range += *unmap_start - aligned_unmap_start;
        *unmap_start = aligned_unmap_start;
    }
    if (op->next && aligned_unmap_end > unmap_end && iova_mapped_as_huge_page(va, aligned_unmap_end - SZ_2M))
        *unmap_range += aligned_unmap_end - unmap_end;
}

int panthor_gpuva_sm_step_remap(drm::drm_gpuva_op* op, void* priv) {
    auto* vm = static_cast<panthor_vm*>(priv);
    auto* unmap_vma = container_of(op->remap.unmap->va, panthor_vma, base);
    panthor_vm_op_ctx* op_ctx = vm->op_ctx;
    panthor_vma* prev_vma = nullptr;
    panthor_vma* next_vma = nullptr;
    const int prot = flags_to_prot(unmap_vma->flags);
    u64 unmap_start, unmap_range;
    int ret;

    drm::drm_gpuva_op_remap_to_unmap_range(&op->remap, &unmap_start, &unmap_range);
    unmap_hugepage_align(&op->remap, &unmap_start, &unmap_range);

    // The widened range must be locked too for the update to stay atomic for the GPU.
    ret = panthor_vm_lock_region(vm, unmap_start, unmap_range);
    if (ret)
        return ret;
    panthor_vm_unmap_pages(vm, unmap_start, unmap_range);

    if (const drm::drm_gpuva_op_map* prev = op->remap.prev) {
        // What the widening took from the end of prev.
        const u64 prev_end = prev->va.addr + prev->va.range;
        const u64 offset = prev->gem.offset + (unmap_start - prev->va.addr);
        ret = panthor_vm_map_pages(vm, unmap_start, prot, to_drm_gem_shmem_obj(prev->gem.obj)->sgt, offset,
                                   prev_end - unmap_start);
        if (ret)
            return ret;
        prev_vma = panthor_vm_op_ctx_get_vma(op_ctx);
        if (WARN_ON(!prev_vma))
            return -EINVAL;
        panthor_vma_init(prev_vma, unmap_vma->flags);
    }

    if (const drm::drm_gpuva_op_map* next = op->remap.next) {
        // What the widening took from the start of next.
        ret = panthor_vm_map_pages(vm, next->va.addr, prot, to_drm_gem_shmem_obj(next->gem.obj)->sgt, next->gem.offset,
                                   unmap_start + unmap_range - next->va.addr);
        if (ret)
            return ret;
        next_vma = panthor_vm_op_ctx_get_vma(op_ctx);
        if (WARN_ON(!next_vma)) {
            if (prev_vma)
                panthor_vm_op_ctx_put_vma(op_ctx, prev_vma);
            return -EINVAL;
        }
        panthor_vma_init(next_vma, unmap_vma->flags);
    }

    drm::drm_gpuva_remap(prev_vma ? &prev_vma->base : nullptr, next_vma ? &next_vma->base : nullptr, &op->remap);

    // The pieces share the old mapping's vm_bo; link them before the old one lets go of it.
    drm::drm_gpuvm_bo* vm_bo = op->remap.unmap->va->vm_bo;
    if (prev_vma)
        panthor_vma_link(prev_vma, vm_bo);
    if (next_vma)
        panthor_vma_link(next_vma, vm_bo);

    panthor_vma_unlink(unmap_vma);
    return 0;
}

int panthor_gpuva_sm_step_unmap(drm::drm_gpuva_op* op, void* priv) {
    auto* vm = static_cast<panthor_vm*>(priv);
    auto* unmap_vma = container_of(op->unmap.va, panthor_vma, base);

    panthor_vm_unmap_pages(vm, unmap_vma->base.va.addr, unmap_vma->base.va.range);
    drm::drm_gpuva_unmap(&op->unmap);
    panthor_vma_unlink(unmap_vma);
    return 0;
}

int panthor_vm_exec_op(panthor_vm* vm, panthor_vm_op_ctx* op, bool flag_vm_unusable_on_failure) {
    const u32 op_type = op->flags & OP_TYPE_MASK;
    if (op_type == DRM_PANTHOR_VM_BIND_OP_TYPE_SYNC_ONLY)
        return 0;

    kshim::MutexGuard g(vm->op_lock);
    vm->op_ctx = op;

    int ret = panthor_vm_lock_region(vm, op->va.addr, op->va.range);
    if (!ret) {
        switch (op_type) {
        case DRM_PANTHOR_VM_BIND_OP_TYPE_MAP: {
            if (vm->unusable.load() || vm->destroyed.load()) {
                ret = -EINVAL;
                break;
            }
            drm::drm_gpuvm_map_req map_req{};
            map_req.map.va.addr = op->va.addr;
            map_req.map.va.range = op->va.range;
            map_req.map.gem.obj = op->map.vm_bo->obj;
            map_req.map.gem.offset = op->map.bo_offset;
            ret = drm::drm_gpuvm_sm_map(&vm->base, vm, &map_req);
            break;
        }
        case DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP:
            ret = drm::drm_gpuvm_sm_unmap(&vm->base, vm, op->va.addr, op->va.range);
            break;
        default: ret = -EINVAL; break;
        }
        panthor_vm_unlock_region(vm);
    }

    // What this op did not use of the VA index reserve stays for the others.
    panthor_vm_op_ctx_release_index(vm, op);

    if (ret && flag_vm_unusable_on_failure)
        panthor_vm_declare_unusable(vm);

    vm->op_ctx = nullptr;
    return ret;
}

int panthor_vm_bind_prepare_op_ctx(drm::drm_file* file, panthor_vm* vm, const drm_panthor_vm_bind_op* op,
                                   panthor_vm_op_ctx* op_ctx) {
    const u64 vm_pgsz = panthor_vm_page_size(vm);

    if ((op->va | op->size) & (vm_pgsz - 1))
        return -EINVAL;

    switch (op->flags & OP_TYPE_MASK) {
    case DRM_PANTHOR_VM_BIND_OP_TYPE_MAP: {
        // Userspace must not map over the kernel BOs' VA range (pending upstream).
        if (op->va >= vm->user_va_end || op->size > vm->user_va_end - op->va)
            return -EINVAL;
        if (op->flags & DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE)
            return panthor_vm_prepare_sparse_map_op_ctx(file, vm, op, op_ctx);
        drm::drm_gem_object* gem = file->gem.lookup(op->bo_handle);
        int ret = panthor_vm_prepare_map_op_ctx(op_ctx, vm, gem ? to_panthor_bo(gem) : nullptr, op->bo_offset, op->size,
                                                op->va, op->flags);
        drm::drm_gem_object_put(gem);
        return ret;
    }

    case DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP:
        if (op->flags & ~OP_TYPE_MASK)
            return -EINVAL;
        if (op->bo_handle || op->bo_offset)
            return -EINVAL;
        return panthor_vm_prepare_unmap_op_ctx(op_ctx, vm, op->va, op->size);

    case DRM_PANTHOR_VM_BIND_OP_TYPE_SYNC_ONLY:
        if (op->flags & ~OP_TYPE_MASK)
            return -EINVAL;
        if (op->bo_handle || op->bo_offset)
            return -EINVAL;
        if (op->va || op->size)
            return -EINVAL;
        if (!op->syncs.count)
            return -EINVAL;
        panthor_vm_prepare_sync_only_op_ctx(op_ctx, vm);
        return 0;

    default: return -EINVAL;
    }
}

// ---- VM_BIND jobs ----

kshim::dma_fence* panthor_vm_bind_run_job(drm::drm_sched_job* sched_job) {
    panthor_vm_bind_job* job = to_bind_job(sched_job);

    // The error reaches the finished fence; the VM is also flagged unusable, since a failed
    // asynchronous bind leaves it in a state nobody asked for.
    const bool cookie = kshim::dma_fence_begin_signalling();
    const int ret = panthor_vm_exec_op(job->vm, &job->ctx, true);
    kshim::dma_fence_end_signalling(cookie);

    // Done synchronously: no hardware fence to wait for.
    return ret ? kshim::ERR_PTR<kshim::dma_fence>(ret) : nullptr;
}

void panthor_vm_bind_job_release(kshim::kref* kref) {
    auto* job = container_of(kref, panthor_vm_bind_job, refcount);

    if (job->base.s_fence)
        drm::drm_sched_job_cleanup(&job->base);
    panthor_vm_cleanup_op_ctx(&job->ctx, job->vm);
    panthor_vm_put(job->vm);
    kshim::kdelete(job);
}

void panthor_vm_bind_job_cleanup_op_ctx_work(kshim::work_struct* work) {
    auto* job = container_of(work, panthor_vm_bind_job, cleanup_op_ctx_work);
    panthor_vm_bind_job_put(&job->base);
}

void panthor_vm_bind_free_job(drm::drm_sched_job* sched_job) {
    panthor_vm_bind_job* job = to_bind_job(sched_job);
    drm::drm_sched_job_cleanup(sched_job);
    // The heavy part takes resv locks: out of the fence-signalling path.
    kshim::queue_work(job->vm->ptdev->mmu->vm.cleanup_wq, &job->cleanup_op_ctx_work);
}

drm::drm_gpu_sched_stat panthor_vm_bind_timedout_job(drm::drm_sched_job*) {
    WARN(true, "VM_BIND ops are synchronous for now, there should be no timeout!");
    return drm::DRM_GPU_SCHED_STAT_RESET;
}

}  // namespace

const drm::drm_sched_backend_ops panthor_vm_bind_ops = {
    .prepare_job = nullptr,
    .run_job = panthor_vm_bind_run_job,
    .timedout_job = panthor_vm_bind_timedout_job,
    .free_job = panthor_vm_bind_free_job,
    .cancel_job = nullptr,
};

const drm::drm_gpuvm_ops panthor_gpuvm_ops = {
    .vm_free = panthor_vm_free,
    .op_alloc = nullptr,
    .op_free = nullptr,
    .vm_bo_alloc = nullptr,
    .vm_bo_free = panthor_vm_bo_free,
    .vm_bo_validate = nullptr,
    .sm_step_map = panthor_gpuva_sm_step_map,
    .sm_step_remap = panthor_gpuva_sm_step_remap,
    .sm_step_unmap = panthor_gpuva_sm_step_unmap,
};

// ---- page-table allocation hooks ----

void* panthor_vm_alloc_pt(void* cookie, size_t size, kshim::gfp_t gfp) {
    auto* vm = static_cast<panthor_vm*>(cookie);

    // The root table, at creation.
    if (!vm->root_page_table) [[unlikely]] {
        WARN_ON(vm->op_ctx);
        const unsigned order =
            size <= kshim::PAGE_SIZE ? 0 : static_cast<unsigned>(std::bit_width((size - 1) >> kshim::PAGE_SHIFT));
        kshim::Page* p = kshim::alloc_pages(gfp | kshim::__GFP_ZERO, order);
        vm->root_page_table = p ? kshim::page_address(p) : nullptr;
        return vm->root_page_table;
    }

    // The 4 KiB granule was chosen at creation: every other table is one page.
    if (WARN_ON(size != SZ_4K))
        return nullptr;

    // Only an operation allocates tables, from what it reserved.
    panthor_vm_op_ctx* op_ctx = vm->op_ctx;
    if (WARN_ON(!op_ctx) || WARN_ON(op_ctx->rsvd_page_tables.ptr >= op_ctx->rsvd_page_tables.count))
        return nullptr;

    void* page = op_ctx->rsvd_page_tables.pages[op_ctx->rsvd_page_tables.ptr++];
    std::memset(page, 0, SZ_4K);
    return page;
}

void panthor_vm_free_pt(void* cookie, void* data, size_t size) {
    auto* vm = static_cast<panthor_vm*>(cookie);

    if (vm->root_page_table == data) [[unlikely]] {
        const unsigned order =
            size <= kshim::PAGE_SIZE ? 0 : static_cast<unsigned>(std::bit_width((size - 1) >> kshim::PAGE_SHIFT));
        kshim::__free_pages(kshim::virt_to_page(data), order);
        vm->root_page_table = nullptr;
        return;
    }
    if (WARN_ON(size != SZ_4K))
        return;
    panthor_pt_cache_free(data);
}

// ---- entry points ----

int panthor_vm_map_bo_range(panthor_vm* vm, panthor_gem_object* bo, u64 offset, u64 size, u64 va, u32 flags) {
    panthor_vm_op_ctx op_ctx;
    int ret = panthor_vm_prepare_map_op_ctx(&op_ctx, vm, bo, offset, size, va, flags);
    if (ret)
        return ret;
    ret = panthor_vm_exec_op(vm, &op_ctx, false);
    panthor_vm_cleanup_op_ctx(&op_ctx, vm);
    return ret;
}

int panthor_vm_unmap_range(panthor_vm* vm, u64 va, u64 size) {
    panthor_vm_op_ctx op_ctx;
    int ret = panthor_vm_prepare_unmap_op_ctx(&op_ctx, vm, va, size);
    if (ret)
        return ret;
    ret = panthor_vm_exec_op(vm, &op_ctx, false);
    panthor_vm_cleanup_op_ctx(&op_ctx, vm);
    return ret;
}

int panthor_vm_bind_exec_sync_op(drm::drm_file* file, panthor_vm* vm, drm_panthor_vm_bind_op* op) {
    // No sync objects on synchronous operations.
    if (op->syncs.count)
        return -EINVAL;
    if (!op->size)
        return 0;

    panthor_vm_op_ctx op_ctx;
    int ret = panthor_vm_bind_prepare_op_ctx(file, vm, op, &op_ctx);
    if (ret)
        return ret;
    ret = panthor_vm_exec_op(vm, &op_ctx, false);
    panthor_vm_cleanup_op_ctx(&op_ctx, vm);
    return ret;
}

drm::drm_sched_job* panthor_vm_bind_job_create(drm::drm_file* file, panthor_vm* vm, const drm_panthor_vm_bind_op* op) {
    if (!vm)
        return kshim::ERR_PTR<drm::drm_sched_job>(-EINVAL);
    if (vm->destroyed.load() || vm->unusable.load())
        return kshim::ERR_PTR<drm::drm_sched_job>(-EINVAL);

    auto* job = kshim::knew<panthor_vm_bind_job>(kshim::GFP_KERNEL);
    if (!job)
        return kshim::ERR_PTR<drm::drm_sched_job>(-ENOMEM);

    // Fully prepared now: run_job must not allocate. An empty map/unmap is a no-op, as on the
    // synchronous path (drm_gpuvm refuses empty ranges, which would make the VM unusable).
    const u32 op_type = op->flags & OP_TYPE_MASK;
    int ret = 0;
    if (!op->size && (op_type == DRM_PANTHOR_VM_BIND_OP_TYPE_MAP || op_type == DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP))
        panthor_vm_prepare_sync_only_op_ctx(&job->ctx, vm);
    else
        ret = panthor_vm_bind_prepare_op_ctx(file, vm, op, &job->ctx);
    if (ret) {
        kshim::kdelete(job);
        return kshim::ERR_PTR<drm::drm_sched_job>(ret);
    }

    INIT_WORK(&job->cleanup_op_ctx_work, panthor_vm_bind_job_cleanup_op_ctx_work);
    kshim::kref_init(&job->refcount);
    job->vm = panthor_vm_get(vm);

    ret = drm::drm_sched_job_init(&job->base, &vm->entity, 1, vm);
    if (ret) {
        panthor_vm_bind_job_put(&job->base);
        return kshim::ERR_PTR<drm::drm_sched_job>(ret);
    }
    return &job->base;
}

void panthor_vm_bind_job_put(drm::drm_sched_job* sched_job) {
    if (sched_job)
        kshim::kref_put(&to_bind_job(sched_job)->refcount, panthor_vm_bind_job_release);
}

int panthor_vm_bind_job_prepare_resvs(drm::drm_exec* exec, drm::drm_sched_job* sched_job) {
    panthor_vm_bind_job* job = to_bind_job(sched_job);

    // The VM resv, with a slot for this job's fence.
    int ret = drm::drm_gpuvm_prepare_vm(&job->vm->base, exec, 1);
    if (ret)
        return ret;
    // And the BO being mapped.
    if (job->ctx.map.vm_bo)
        return drm::drm_exec_prepare_obj(exec, job->ctx.map.vm_bo->obj, 1);
    return 0;
}

void panthor_vm_bind_job_update_resvs(drm::drm_exec* exec, drm::drm_sched_job* sched_job) {
    panthor_vm_bind_job* job = to_bind_job(sched_job);
    // Explicit sync: the fence is only there for bookkeeping.
    drm::drm_gpuvm_resv_add_fence(&job->vm->base, exec, &sched_job->s_fence->finished, kshim::DMA_RESV_USAGE_BOOKKEEP,
                                  kshim::DMA_RESV_USAGE_BOOKKEEP);
}

}  // namespace panthor
