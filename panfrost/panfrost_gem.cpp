// Mirrors drivers/gpu/drm/panfrost/panfrost_gem.c: BO creation, the per-file mappings made by the
// GEM open hook and dropped by the close hook, and the BO's release (heap chunks included).
#include "panfrost/panfrost_gem.h"

#include <cstring>

#include "drm/drm_prime.h"
#include "kernel_shim/err.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/trace.h"
#include "panfrost/panfrost_mmu.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost {

using namespace kshim;

namespace {

constexpr size_t SZ_2M = iommu::SZ_2M;
constexpr unsigned HEAP_CHUNK_ORDER = 9;  // 2 MiB of 4 KiB pages

void panfrost_gem_free_object(drm::drm_gem_object* obj) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    panfrost_device* pfdev = to_panfrost_device(obj->dev);

    // Off the shrinker list first, so a concurrent scan cannot find a BO being freed.
    {
        MutexGuard g(pfdev->shrinker_lock);
        list_del_init(&bo->madv_list);
    }

    // Every mapping holds a reference: none is left when the last one goes.
    WARN_ON(!list_empty(&bo->mappings.list));

    kfree(const_cast<char*>(bo->label.str));
    bo->label.str = nullptr;

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

// A kmalloc'ed copy of a kernel string, or nullptr.
char* kstrdup(const char* str) {
    const size_t len = std::strlen(str) + 1;
    auto* copy = static_cast<char*>(kmalloc(len, GFP_KERNEL));
    if (copy)
        std::memcpy(copy, str, len);
    return copy;
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

// Resident when imported or while the pages exist; purgeable while DONTNEED.
unsigned panfrost_gem_status(drm::drm_gem_object* obj) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    unsigned res = drm::drm_gem_is_imported(obj) ? drm::DRM_GEM_OBJECT_RESIDENT : drm::drm_gem_shmem_object_status(obj);
    // Read without the resv, as upstream: a statistic.
    if (std::atomic_ref<int>(bo->base.madv).load(std::memory_order_relaxed) == static_cast<int>(PANFROST_MADV_DONTNEED))
        res |= drm::DRM_GEM_OBJECT_PURGEABLE;
    return res;
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
    .status = panfrost_gem_status,
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

void panfrost_gem_teardown_mappings_locked(panfrost_gem_object* bo) {
    for (list_head* it = bo->mappings.list.next; it != &bo->mappings.list; it = it->next)
        panfrost_gem_teardown_mapping(container_of(it, panfrost_gem_mapping, node));
}

drm::drm_gem_object* panfrost_gem_prime_import_sg_table(drm::drm_device* dev, dma_buf_attachment* attach,
                                                        sg_table* sgt) {
    drm::drm_gem_object* obj = drm::drm_gem_shmem_prime_import_sg_table(dev, attach, sgt);
    if (IS_ERR(obj))
        return obj;
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    bo->noexec = true;
    // Userspace never made this BO through panfrost: say where it comes from until it is given
    // a label of its own.
    panfrost_gem_internal_set_label(obj, "GEM PRIME buffer");
    return obj;
}

void panfrost_gem_set_label(drm::drm_gem_object* obj, const char* label) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    const char* old_label;
    {
        MutexGuard g(bo->label.lock);
        old_label = bo->label.str;
        bo->label.str = label;
    }
    kfree(const_cast<char*>(old_label));
}

void panfrost_gem_internal_set_label(drm::drm_gem_object* obj, const char* label) {
    // Userspace owns the label of a BO it holds a handle to.
    if (WARN_ON(obj->handle_count.load() > 0))
        return;
    if (!label)
        return;
    char* str = kstrdup(label);
    if (!str) {
        // Not fatal: the BO just stays unlabelled.
        log_message(LogLevel::Warn, nullptr, "Not enough memory to allocate BO label");
        return;
    }
    panfrost_gem_set_label(obj, str);
}

int panfrost_gem_sync(drm::drm_gem_object* obj, u32 type, u32 offset, u32 size) {
    panfrost_gem_object* bo = to_panfrost_bo(obj);
    drm::drm_gem_shmem_object* shmem = &bo->base;
    panfrost_device* pfdev = to_panfrost_device(obj->dev);

    if (offset + size < offset || u64{offset} + size > shmem->base.size)
        return -EINVAL;
    // The exporter owns an import's cache maintenance.
    if (drm::drm_gem_is_imported(obj))
        return -EINVAL;
    if (type != PANFROST_BO_SYNC_CPU_CACHE_FLUSH && type != PANFROST_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE)
        return -EINVAL;
    // A write-combined mapping leaves nothing in the CPU caches.
    if (shmem->map_wc)
        return 0;
    if (size == 0)
        return 0;

    drm::SgTable* sgt = nullptr;
    const int ret = drm::drm_gem_shmem_get_pages_sgt(shmem, &sgt);
    if (ret)
        return ret;

    // Each sg segment the range covers: a clean for the device, then for FLUSH_AND_INVALIDATE an
    // invalidate for the CPU (upstream: dma_sync_single_for_device(TO_DEVICE) and
    // dma_sync_single_for_cpu(FROM_DEVICE)). The shim's CPU has no cache: counted and traced.
    return kshim::sg_for_each_dma_range(sgt, offset, size, [&](u64 paddr, u64 len) {
        pfdev->cache_sync.for_device.fetch_add(1);
        pfdev->cache_sync.bytes.fetch_add(len);
        if (trace::enabled())
            trace::instant("dma_sync_single_for_device", "panfrost",
                           "{\"paddr\":" + std::to_string(paddr) + ",\"len\":" + std::to_string(len) + "}");
        if (type == PANFROST_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE) {
            pfdev->cache_sync.for_cpu.fetch_add(1);
            if (trace::enabled())
                trace::instant("dma_sync_single_for_cpu", "panfrost",
                               "{\"paddr\":" + std::to_string(paddr) + ",\"len\":" + std::to_string(len) + "}");
        }
        return 0;
    });
}

}  // namespace panfrost
