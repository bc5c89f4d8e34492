// Mirrors drivers/gpu/drm/panfrost/panfrost_gem.c: BO creation, the per-file mappings made by the
// GEM open hook and dropped by the close hook, and the BO's release (heap chunks included).
#include "panfrost/panfrost_gem.h"

#include "drm/drm_prime.h"
#include "kernel_shim/err.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "panfrost/panfrost_mmu.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost {

using namespace kshim;

namespace {

constexpr size_t SZ_2M = iommu::SZ_2M;
constexpr unsigned HEAP_CHUNK_ORDER = 9;  // 2 MiB of 4 KiB pages

void panfrost_gem_free_object(drm::drm_gem_object* obj) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);

    // Every mapping holds a reference: none is left when the last one goes.
    WARN_ON(!list_empty(&bo->mappings.list));

    if (bo->sgts) {
        const size_t n_sgt = bo->base.base.size / SZ_2M;
        for (size_t i = 0; i < n_sgt; i++) {
            sg_free_table(&bo->sgts[i]);
            if (bo->heap_chunks[i])
                __free_pages(bo->heap_chunks[i], HEAP_CHUNK_ORDER);
        }
        kfree(bo->sgts);
        kfree(bo->heap_chunks);
        bo->sgts = nullptr;
        bo->heap_chunks = nullptr;
    }
    drm::drm_gem_shmem_release(&bo->base);
    kdelete(bo);
}

int panfrost_gem_pin(drm::drm_gem_object* obj) {
    // A heap's pages come and go with faults: it cannot be pinned (nor exported).
    if (to_panfrost_bo(obj)->is_heap)
        return -EINVAL;
    return drm::drm_gem_shmem_pin_locked(drm::to_drm_gem_shmem_obj(obj));
}
void panfrost_gem_unpin(drm::drm_gem_object* obj) {
    drm::drm_gem_shmem_unpin_locked(drm::to_drm_gem_shmem_obj(obj));
}
kshim::sg_table* panfrost_gem_get_sg_table(drm::drm_gem_object* obj) {
    return drm::drm_gem_shmem_get_sg_table(drm::to_drm_gem_shmem_obj(obj));
}
int panfrost_gem_vmap(drm::drm_gem_object* obj, drm::IosysMap* map) {
    return drm::drm_gem_shmem_vmap_locked(drm::to_drm_gem_shmem_obj(obj), map);
}
void panfrost_gem_vunmap(drm::drm_gem_object* obj, drm::IosysMap* map) {
    drm::drm_gem_shmem_vunmap_locked(drm::to_drm_gem_shmem_obj(obj), map);
}

void panfrost_gem_teardown_mapping(panfrost_gem_mapping* mapping) {
    if (mapping->active)
        panfrost_mmu_unmap(mapping);

    SpinGuard g(mapping->mmu->mm_lock);
    if (drm::drm_mm_node_allocated(&mapping->mmnode))
        drm::drm_mm_remove_node(&mapping->mmnode);
}

void panfrost_gem_mapping_release(kref* kref) {
    auto* mapping = container_of(kref, panfrost_gem_mapping, refcount);
    panfrost_gem_teardown_mapping(mapping);
    drm::drm_gem_object_put(&mapping->obj->base.base);
    panfrost_mmu_ctx_put(mapping->mmu);
    kdelete(mapping);
}

panfrost_gem_object* panfrost_gem_alloc(panfrost_device* pfdev) {
    auto* bo = knew<panfrost_gem_object>(GFP_KERNEL);
    if (!bo)
        return nullptr;
    bo->base.base.funcs = &panfrost_gem_funcs;
    // A non-coherent GPU does not snoop the CPU caches: CPU mappings are write-combined.
    bo->base.map_wc = !pfdev->coherent;
    return bo;
}

}  // namespace

const drm::drm_gem_object_funcs panfrost_gem_funcs = {
    .free = panfrost_gem_free_object,
    .pin = panfrost_gem_pin,
    .unpin = panfrost_gem_unpin,
    .vmap = panfrost_gem_vmap,
    .vunmap = panfrost_gem_vunmap,
    .status = drm::drm_gem_shmem_object_status,
    .export_ = nullptr,
    .get_sg_table = panfrost_gem_get_sg_table,
    .open = panfrost_gem_open,
    .close = panfrost_gem_close,
};

drm::drm_gem_object* panfrost_gem_create_object(drm::drm_device* dev, size_t) {
    panfrost_gem_object* bo = panfrost_gem_alloc(to_panfrost_device(dev));
    if (!bo)
        return ERR_PTR<drm::drm_gem_object>(-ENOMEM);
    return &bo->base.base;
}

panfrost_gem_object* panfrost_gem_create(drm::drm_device* dev, size_t size, u32 flags) {
    panfrost_device* pfdev = to_panfrost_device(dev);

    // Faults are served 2 MiB at a time: a heap is a whole number of chunks.
    if (flags & PANFROST_BO_HEAP)
        size = (size + SZ_2M - 1) & ~(SZ_2M - 1);
    if ((flags & PANFROST_BO_HEAP) && (flags & PANFROST_BO_WB_MMAP))
        return ERR_PTR<panfrost_gem_object>(-EINVAL);

    panfrost_gem_object* bo = panfrost_gem_alloc(pfdev);
    if (!bo)
        return ERR_PTR<panfrost_gem_object>(-ENOMEM);
    // Write-back CPU mappings were asked for, or the GPU snoops anyway.
    if (flags & PANFROST_BO_WB_MMAP)
        bo->base.map_wc = false;
    const int ret = drm::drm_gem_shmem_init(&pfdev->vma_offset_manager, &bo->base, size);
    if (ret) {
        kdelete(bo);
        return ERR_PTR<panfrost_gem_object>(ret);
    }
    bo->base.base.dev = dev;
    bo->noexec = flags & PANFROST_BO_NOEXEC;
    bo->is_heap = flags & PANFROST_BO_HEAP;
    bo->wb_mmap = flags & PANFROST_BO_WB_MMAP;
    return bo;
}

int panfrost_gem_open(drm::drm_gem_object* obj, drm::drm_file* file) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    const unsigned long color = bo->noexec ? PANFROST_BO_NOEXEC : 0;
    const u64 npages = obj->size >> PAGE_SHIFT;

    auto* mapping = knew<panfrost_gem_mapping>(GFP_KERNEL);
    if (!mapping)
        return -ENOMEM;
    kref_init(&mapping->refcount);
    drm::drm_gem_object_get(obj);
    mapping->obj = bo;

    // The program counter is 24 bits: an executable BO must not straddle a 16 MiB boundary, which
    // aligning it to its own size ensures for BOs up to 16 MiB. Big data BOs get 2 MiB alignment so
    // they can use block mappings.
    u64 align;
    if (!bo->noexec)
        align = npages;
    else
        align = obj->size >= SZ_2M ? SZ_2M >> PAGE_SHIFT : 0;

    mapping->mmu = panfrost_mmu_ctx_get(priv->mmu);
    int ret;
    {
        SpinGuard g(mapping->mmu->mm_lock);
        ret = drm::drm_mm_insert_node_generic(&mapping->mmu->mm, &mapping->mmnode, npages, align, color,
                                              drm::DRM_MM_INSERT_BEST);
    }
    if (!ret && !bo->is_heap)
        ret = panfrost_mmu_map(mapping);
    if (ret) {
        panfrost_gem_mapping_put(mapping);
        return ret;
    }

    MutexGuard g(bo->mappings.lock);
    list_add_tail(&mapping->node, &bo->mappings.list);
    return 0;
}

void panfrost_gem_close(drm::drm_gem_object* obj, drm::drm_file* file) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    panfrost_gem_mapping* mapping = nullptr;
    {
        MutexGuard g(bo->mappings.lock);
        for (list_head* it = bo->mappings.list.next; it != &bo->mappings.list; it = it->next) {
            auto* iter = container_of(it, panfrost_gem_mapping, node);
            if (iter->mmu == priv->mmu) {
                mapping = iter;
                list_del_init(&iter->node);
                break;
            }
        }
    }
    panfrost_gem_mapping_put(mapping);
}

panfrost_gem_mapping* panfrost_gem_mapping_get(panfrost_gem_object* bo, panfrost_file_priv* priv) {
    MutexGuard g(bo->mappings.lock);
    for (list_head* it = bo->mappings.list.next; it != &bo->mappings.list; it = it->next) {
        auto* iter = container_of(it, panfrost_gem_mapping, node);
        if (iter->mmu == priv->mmu) {
            kref_get(&iter->refcount);
            return iter;
        }
    }
    return nullptr;
}

void panfrost_gem_mapping_put(panfrost_gem_mapping* mapping) {
    if (!mapping)
        return;
    kref_put(&mapping->refcount, panfrost_gem_mapping_release);
}

}  // namespace panfrost
