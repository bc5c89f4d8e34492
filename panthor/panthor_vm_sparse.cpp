// Mirrors the sparse-mapping part of drivers/gpu/drm/panthor/panthor_mmu.c (driver 1.9, "drm/panthor:
// Support sparse mappings"): VM_BIND MAP ops with DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE.
//
// DOC: A sparse MAP backs [va, va + size) with no user BO. Mali CSF cannot drop GPU writes, so the
// range is mapped over a dummy object, a 2 MiB kernel-owned BO per open file (per file, so that
// what one client writes there never reaches another). The dummy is repeated over the range: VA v
// lands on dummy offset v mod 2 MiB. That is a normal drm_gpuva of the dummy whose GEM offset is
// va mod 2 MiB, with the rule "offsets wrap modulo the dummy's size": drm_gpuvm moves the GEM
// offset of the pieces a later MAP/UNMAP keeps by the same amount as their VA, so the pieces keep
// the rule without help. The only places that must know are the ones turning a GEM offset into
// pages: the page-table update (panthor_vm_map_sparse_pages, reached through a driver-private prot
// bit the VMA's flags give every map and remap of it), the huge-page test of a remap and
// panthor_vm_get_bo_for_va (panthor_vma_wrap_bo_offset). Since the 2 MiB-aligned dummy offset 0
// is 2 MiB-aligned physically, every 2 MiB-aligned block of a sparse range is one 2 MiB leaf.
//
// The dummy is created on the first sparse MAP of the file and the file drops its reference when
// it closes; mappings hold their own (through their vm_bo and its pin), so it goes with the last.
#include <algorithm>

#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "panthor/panthor_mmu_priv.h"

namespace panthor {

namespace {

// The size of a file's dummy BO: one 2 MiB block, the biggest page the tables use, so that a
// sparse range can use 2 MiB leaves. Upstream's size is not in any source we could read; its v11
// review implies 2 MiB (docs/panthor.md, "Sparse mappings").
constexpr u64 PANTHOR_SPARSE_DUMMY_BO_SIZE = u64{1} << 21;

// The file's dummy BO, created on first use; a reference for the caller, or ERR_PTR.
panthor_gem_object* panthor_file_get_dummy_bo(panthor_file* pfile) {
    kshim::MutexGuard g(pfile->sparse.lock);
    if (!pfile->sparse.dummy_bo) {
        panthor_gem_object* bo = panthor_dummy_bo_create(pfile->ptdev, PANTHOR_SPARSE_DUMMY_BO_SIZE);
        if (kshim::IS_ERR(bo))
            return bo;
        pfile->sparse.dummy_bo = bo;
    }
    drm::drm_gem_object_get(&pfile->sparse.dummy_bo->base.base);
    return pfile->sparse.dummy_bo;
}

u64 sgt_size(const drm::SgTable* sgt) {
    u64 size = 0;
    for (u32 i = 0; i < sgt->nents; i++)
        size += drm::sg_dma_len(&sgt->sgl[i]);
    return size;
}

}  // namespace

int panthor_vm_prepare_sparse_map_op_ctx(drm::drm_file* file, panthor_vm* vm, const drm_panthor_vm_bind_op* op,
                                         panthor_vm_op_ctx* op_ctx) {
    // The header's contract: a MAP, of no BO, never executable (what the GPU would fetch there
    // is garbage).
    if ((op->flags & OP_TYPE_MASK) != DRM_PANTHOR_VM_BIND_OP_TYPE_MAP)
        return -EINVAL;
    if (op->bo_handle || op->bo_offset)
        return -EINVAL;
    if (!(op->flags & DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC))
        return -EINVAL;
    // Refused before the dummy exists (panthor_vm_prepare_map_op_ctx checks it again).
    if (!drm::drm_gpuvm_range_valid(&vm->base, op->va, op->size))
        return -EINVAL;

    auto* pfile = static_cast<panthor_file*>(file->driver_priv);
    panthor_gem_object* dummy = panthor_file_get_dummy_bo(pfile);
    if (kshim::IS_ERR(dummy))
        return static_cast<int>(kshim::PTR_ERR(dummy));

    // VA v lands on dummy offset v mod size, so the 2 MiB-aligned parts map 2 MiB blocks.
    const u64 offset = op->va & (PANTHOR_SPARSE_DUMMY_BO_SIZE - 1);
    const int ret = panthor_vm_prepare_map_op_ctx(op_ctx, vm, dummy, offset, op->size, op->va, op->flags);
    // The op holds its own reference through its vm_bo.
    drm::drm_gem_object_put(&dummy->base.base);
    return ret;
}

int panthor_vm_map_sparse_pages(panthor_vm* vm, u64 iova, int prot, drm::SgTable* sgt, u64 offset, u64 size) {
    if (WARN_ON(!sgt))
        return -EINVAL;
    const u64 dummy_size = sgt_size(sgt);
    if (WARN_ON(!dummy_size))
        return -EINVAL;

    // One pass over the dummy at a time, each from where the previous one left it.
    u64 done = 0;
    while (done < size) {
        const u64 dummy_offset = (offset + done) % dummy_size;
        const u64 len = std::min(dummy_size - dummy_offset, size - done);
        const int ret = panthor_vm_map_pages(vm, iova + done, prot, sgt, dummy_offset, len);
        if (ret) {
            // The failed pass undid itself; undo the passes before it.
            if (done)
                panthor_vm_unmap_pages(vm, iova, done);
            return ret;
        }
        done += len;
    }
    return 0;
}

u64 panthor_vma_wrap_bo_offset(const drm::drm_gpuva* va, u64 bo_offset) {
    const auto* vma = container_of(const_cast<drm::drm_gpuva*>(va), panthor_vma, base);
    if (!(vma->flags & DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE) || !va->gem.obj)
        return bo_offset;
    return bo_offset % va->gem.obj->size;
}

void panthor_file_sparse_release(panthor_file* pfile) {
    panthor_gem_object* bo;
    {
        kshim::MutexGuard g(pfile->sparse.lock);
        bo = pfile->sparse.dummy_bo;
        pfile->sparse.dummy_bo = nullptr;
    }
    if (bo)
        drm::drm_gem_object_put(&bo->base.base);
}

}  // namespace panthor
