// Mirrors drivers/gpu/drm/panthor/panthor_gem.c: panthor BOs on shmem GEM, their labels, and
// kernel BOs (a BO mapped at a kernel VA of a VM, optionally CPU-mapped).
//
// A BO exclusive to a VM shares the VM's reservation object, so locking the VM locks all its
// private BOs; the BO holds a reference on the VM's root GEM object (which owns that resv) until
// it is freed, so the resv outlives every BO using it. Kernel BOs are always exclusive to their VM.
//
// CPU caching (1.7): a non-coherent device maps BOs write-combined unless userspace asked for
// write-back (WB_MMAP), in which case it keeps the caches coherent with BO_SYNC; a coherent
// device always maps them cached. Exports carry panthor's own dma_buf ops, whose CPU-access hooks
// (DMA_BUF_IOCTL_SYNC) do the same maintenance for the BO and for every importer's mapping.
#include "panthor/panthor_gem.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "drm/drm_prime.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/trace.h"
#include "panthor/panthor_mmu.h"

namespace panthor {

std::atomic<bool> panthor_transparent_hugepage{true};

using namespace kshim;

namespace {

void panthor_gem_free_object(drm::drm_gem_object* obj) {
    panthor_gem_object* bo = to_panthor_bo(obj);
    drm::drm_gem_object* vm_root_gem = bo->exclusive_vm_root_gem;

    if (bo->label.owned)
        kfree(bo->label.str);
    bo->label.str = nullptr;

    // The release locks obj->resv, which may be the VM's: drop the root GEM (and with it
    // possibly the resv) only afterwards.
    drm::drm_gem_shmem_release(&bo->base);
    kdelete(bo);
    drm::drm_gem_object_put(vm_root_gem);
}

int panthor_gem_pin(drm::drm_gem_object* obj) {
    return drm::drm_gem_shmem_pin_locked(drm::to_drm_gem_shmem_obj(obj));
}
void panthor_gem_unpin(drm::drm_gem_object* obj) {
    drm::drm_gem_shmem_unpin_locked(drm::to_drm_gem_shmem_obj(obj));
}
kshim::sg_table* panthor_gem_get_sg_table(drm::drm_gem_object* obj) {
    return drm::drm_gem_shmem_get_sg_table(drm::to_drm_gem_shmem_obj(obj));
}
int panthor_gem_vmap(drm::drm_gem_object* obj, drm::IosysMap* map) {
    return drm::drm_gem_shmem_vmap_locked(drm::to_drm_gem_shmem_obj(obj), map);
}
void panthor_gem_vunmap(drm::drm_gem_object* obj, drm::IosysMap* map) {
    drm::drm_gem_shmem_vunmap_locked(drm::to_drm_gem_shmem_obj(obj), map);
}

// Whether CPU mappings of `bo` are write-combined.
bool should_map_wc(panthor_gem_object* bo, panthor_device* ptdev) {
    // Uncached mappings of a coherent device would miss the cache lines shmem's zeroing left.
    if (ptdev->coherent)
        return false;
    if (bo->flags & DRM_PANTHOR_BO_WB_MMAP)
        return false;
    return true;
}

panthor_device* panthor_bo_device(drm::drm_gem_object* obj) {
    return container_of(obj->dev, panthor_device, base);
}

// One dma_sync_single_for_{device,cpu} of a segment: counted and traced (no CPU cache here).
void panthor_dma_sync_segment(panthor_device* ptdev, u64 paddr, u64 len, kshim::dma_data_direction dir, bool for_cpu) {
    if (for_cpu) {
        ptdev->cache_sync.for_cpu.fetch_add(1);
    } else {
        ptdev->cache_sync.for_device.fetch_add(1);
        ptdev->cache_sync.bytes.fetch_add(len);
    }
    if (trace::enabled())
        trace::instant(for_cpu ? "dma_sync_single_for_cpu" : "dma_sync_single_for_device", "panthor",
                       "{\"paddr\":" + std::to_string(paddr) + ",\"len\":" + std::to_string(len) +
                           ",\"dir\":" + std::to_string(static_cast<int>(dir)) + "}");
}

// dma_sync_sgtable_for_{cpu,device}: every segment of `sgt`.
void panthor_dma_sync_sgtable(panthor_device* ptdev, kshim::sg_table* sgt, kshim::dma_data_direction dir,
                              bool for_cpu) {
    for (u32 i = 0; i < sgt->nents; i++)
        panthor_dma_sync_segment(ptdev, drm::sg_dma_address(&sgt->sgl[i]), drm::sg_dma_len(&sgt->sgl[i]), dir, for_cpu);
}

// The attachment remembers its mapping, so the CPU-access hooks can sync it.
kshim::sg_table* panthor_gem_prime_map_dma_buf(kshim::dma_buf_attachment* attach, kshim::dma_data_direction dir) {
    kshim::sg_table* sgt = drm::drm_gem_map_dma_buf(attach, dir);
    if (!IS_ERR(sgt))
        attach->priv = sgt;
    return sgt;
}

void panthor_gem_prime_unmap_dma_buf(kshim::dma_buf_attachment* attach, kshim::sg_table* sgt,
                                     kshim::dma_data_direction dir) {
    attach->priv = nullptr;
    drm::drm_gem_unmap_dma_buf(attach, sgt, dir);
}

// DMA_BUF_IOCTL_SYNC start: the CPU is about to read what devices wrote. The BO's own mapping,
// its kernel vmap (invalidated) and every importer's mapping are synced for the CPU.
int panthor_gem_prime_begin_cpu_access(kshim::dma_buf* dma_buf, kshim::dma_data_direction dir) {
    auto* obj = static_cast<drm::drm_gem_object*>(dma_buf->priv);
    drm::drm_gem_shmem_object* shmem = drm::to_drm_gem_shmem_obj(obj);
    panthor_device* ptdev = panthor_bo_device(obj);

    kshim::dma_resv_lock(obj->resv, nullptr);
    if (shmem->sgt)
        panthor_dma_sync_sgtable(ptdev, shmem->sgt, dir, true);
    if (shmem->vaddr)
        panthor_dma_sync_segment(ptdev, 0, obj->size, dir, true);  // invalidate_kernel_vmap_range
    for (kshim::dma_buf_attachment& attach : dma_buf->attachment_list)
        if (attach.priv)
            panthor_dma_sync_sgtable(ptdev, static_cast<kshim::sg_table*>(attach.priv), dir, true);
    kshim::dma_resv_unlock(obj->resv);
    return 0;
}

// DMA_BUF_IOCTL_SYNC end: the reverse, for the devices.
int panthor_gem_prime_end_cpu_access(kshim::dma_buf* dma_buf, kshim::dma_data_direction dir) {
    auto* obj = static_cast<drm::drm_gem_object*>(dma_buf->priv);
    drm::drm_gem_shmem_object* shmem = drm::to_drm_gem_shmem_obj(obj);
    panthor_device* ptdev = panthor_bo_device(obj);

    kshim::dma_resv_lock(obj->resv, nullptr);
    for (kshim::dma_buf_attachment& attach : dma_buf->attachment_list)
        if (attach.priv)
            panthor_dma_sync_sgtable(ptdev, static_cast<kshim::sg_table*>(attach.priv), dir, false);
    if (shmem->vaddr)
        panthor_dma_sync_segment(ptdev, 0, obj->size, dir, false);  // flush_kernel_vmap_range
    if (shmem->sgt)
        panthor_dma_sync_sgtable(ptdev, shmem->sgt, dir, false);
    kshim::dma_resv_unlock(obj->resv);
    return 0;
}

const kshim::dma_buf_ops panthor_dma_buf_ops = {
    .attach = drm::drm_gem_map_attach,
    .detach = drm::drm_gem_map_detach,
    .map_dma_buf = panthor_gem_prime_map_dma_buf,
    .unmap_dma_buf = panthor_gem_prime_unmap_dma_buf,
    .release = drm::drm_gem_dmabuf_release,
    .begin_cpu_access = panthor_gem_prime_begin_cpu_access,
    .end_cpu_access = panthor_gem_prime_end_cpu_access,
    .mmap = drm::drm_gem_dmabuf_mmap,
    .vmap = drm::drm_gem_dmabuf_vmap,
    .vunmap = drm::drm_gem_dmabuf_vunmap,
};

// A BO sharing its VM's resv cannot leave that VM: importers would lock the whole VM.
kshim::dma_buf* panthor_gem_prime_export(drm::drm_gem_object* obj, int flags) {
    if (to_panthor_bo(obj)->exclusive_vm_root_gem)
        return ERR_PTR<kshim::dma_buf>(-EINVAL);
    kshim::dma_buf_export_info exp_info;
    exp_info.exp_name = "panthor";
    exp_info.ops = &panthor_dma_buf_ops;
    exp_info.size = obj->size;
    exp_info.flags = flags;
    exp_info.resv = obj->resv;
    exp_info.priv = obj;
    return drm::drm_gem_dmabuf_export(obj->dev, &exp_info);
}

// panthor_gem_create_object + drm_gem_shmem_create: a BO of `size` bytes (rounded up to pages),
// one reference owned by the caller. -EINVAL for size 0 or overflow, -ENOMEM.
int panthor_gem_create(panthor_device* ptdev, u64 size, panthor_gem_object** out) {
    auto* bo = knew<panthor_gem_object>(GFP_KERNEL);
    if (!bo)
        return -ENOMEM;
    bo->base.base.funcs = &panthor_gem_funcs;
    // Until the caller sets the flags: what a BO without WB_MMAP gets.
    bo->base.map_wc = should_map_wc(bo, ptdev);
    bo->base.huge = panthor_transparent_hugepage.load(std::memory_order_relaxed);
    const int ret = drm::drm_gem_shmem_init(&ptdev->vma_offset_manager, &bo->base, size);
    if (ret) {
        kdelete(bo);
        return ret;
    }
    // The device PRIME import compares with, to recognise its own exports.
    bo->base.base.dev = &ptdev->base;
    *out = bo;
    return 0;
}

// Makes `bo` private to `vm` (before anyone else can see it).
void panthor_gem_make_exclusive(panthor_gem_object* bo, panthor_vm* vm) {
    bo->exclusive_vm_root_gem = panthor_vm_root_gem(vm);
    drm::drm_gem_object_get(bo->exclusive_vm_root_gem);
    bo->base.base.resv = bo->exclusive_vm_root_gem->resv;
}

void panthor_gem_swap_label(panthor_gem_object* bo, const char* label, bool owned) {
    const char* old_label;
    bool old_owned;
    {
        MutexGuard g(bo->label.lock);
        old_label = bo->label.str;
        old_owned = bo->label.owned;
        bo->label.str = label;
        bo->label.owned = owned && label;
    }
    if (old_owned)
        kfree(old_label);
}

}  // namespace

const drm::drm_gem_object_funcs panthor_gem_funcs = {
    .free = panthor_gem_free_object,
    .pin = panthor_gem_pin,
    .unpin = panthor_gem_unpin,
    .vmap = panthor_gem_vmap,
    .vunmap = panthor_gem_vunmap,
    .status = drm::drm_gem_shmem_object_status,
    .export_ = panthor_gem_prime_export,
    .get_sg_table = panthor_gem_get_sg_table,
};

drm::drm_gem_object* panthor_gem_create_object(drm::drm_device*, size_t) {
    auto* bo = knew<panthor_gem_object>(GFP_KERNEL);
    if (!bo)
        return ERR_PTR<drm::drm_gem_object>(-ENOMEM);
    bo->base.base.funcs = &panthor_gem_funcs;
    // Imports are mapped cached: their CPU maintenance goes through the exporter's dma-buf API.
    bo->base.map_wc = false;
    return &bo->base.base;
}

drm::drm_gem_object* panthor_gem_prime_import(drm::drm_device* dev, kshim::dma_buf* dma_buf) {
    auto* obj = static_cast<drm::drm_gem_object*>(dma_buf->priv);
    if (dma_buf->ops == &panthor_dma_buf_ops && obj->dev == dev) {
        // Our own BO: a new reference on it, not an attachment.
        drm::drm_gem_object_get(obj);
        return obj;
    }
    return drm::drm_gem_prime_import(dev, dma_buf);
}

int panthor_gem_sync(drm::drm_gem_object* obj, u32 type, u64 offset, u64 size) {
    panthor_gem_object* bo = to_panthor_bo(obj);
    drm::drm_gem_shmem_object* shmem = &bo->base;

    if (offset + size < offset || offset + size > obj->size)
        return -EINVAL;
    // The exporter owns an import's cache maintenance (through the dma-buf API).
    if (drm::drm_gem_is_imported(obj))
        return -EINVAL;
    if (type != DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH && type != DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE)
        return -EINVAL;
    // A write-combined mapping leaves nothing in the CPU caches.
    if (shmem->map_wc)
        return 0;
    if (size == 0)
        return 0;

    // A GPU-mapped BO (every syncobj the scheduler reads) has its table already: used without the
    // resv, which must not nest in the scheduler lock the syncwait read holds.
    drm::SgTable* sgt = shmem->sgt;
    if (!sgt) {
        const int ret = drm::drm_gem_shmem_get_pages_sgt(shmem, &sgt);
        if (ret)
            return ret;
    }

    // Each segment the range covers: cleaned for the device, then for FLUSH_AND_INVALIDATE
    // invalidated for the CPU (dma_sync_single_for_device(TO_DEVICE) and
    // dma_sync_single_for_cpu(FROM_DEVICE) upstream).
    panthor_device* ptdev = panthor_bo_device(obj);
    return kshim::sg_for_each_dma_range(sgt, offset, size, [&](u64 paddr, u64 len) {
        panthor_dma_sync_segment(ptdev, paddr, len, kshim::DMA_TO_DEVICE, false);
        if (type == DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE)
            panthor_dma_sync_segment(ptdev, paddr, len, kshim::DMA_FROM_DEVICE, true);
        return 0;
    });
}

int panthor_kernel_bo_vmap(panthor_kernel_bo* bo) {
    if (bo->kmap)
        return 0;
    drm::IosysMap map;
    const int ret = drm::drm_gem_vmap(bo->obj, &map);
    if (ret)
        return ret;
    bo->kmap = map.vaddr;
    return 0;
}

void panthor_kernel_bo_vunmap(panthor_kernel_bo* bo) {
    if (!bo->kmap)
        return;
    drm::IosysMap map{bo->kmap};
    drm::drm_gem_vunmap(bo->obj, &map);
    bo->kmap = nullptr;
}

panthor_kernel_bo* panthor_kernel_bo_create(panthor_device* ptdev, panthor_vm* vm, size_t size, u32 bo_flags,
                                            u32 vm_map_flags, u64 gpu_va, const char* name) {
    if (WARN_ON(!vm))
        return ERR_PTR<panthor_kernel_bo>(-EINVAL);

    auto* kbo = knew<panthor_kernel_bo>(GFP_KERNEL);
    if (!kbo)
        return ERR_PTR<panthor_kernel_bo>(-ENOMEM);

    panthor_gem_object* bo = nullptr;
    int ret = panthor_gem_create(ptdev, size, &bo);
    if (ret)
        goto err_free_kbo;
    kbo->obj = &bo->base.base;
    bo->flags = bo_flags;
    bo->base.map_wc = should_map_wc(bo, ptdev);
    panthor_gem_kernel_bo_set_label(kbo, name);

    // Upstream points the resv at the VM's only once the mapping is done, which leaves the BO on
    // the VM's external-object list although it is private. Sharing it first makes it private to
    // gpuvm from the start; the map path handles exclusive BOs anyway (user BOs are the same).
    panthor_gem_make_exclusive(bo, vm);

    // The GPU page size may exceed the CPU's: never map past what the caller asked for, rounded
    // to GPU pages, so a section at a fixed VA does not spill into the next one.
    size = (size + panthor_vm_page_size(vm) - 1) & ~(static_cast<size_t>(panthor_vm_page_size(vm)) - 1);
    ret = panthor_vm_alloc_va(vm, gpu_va, size, &kbo->va_node);
    if (ret)
        goto err_put_obj;

    ret = panthor_vm_map_bo_range(vm, bo, 0, size, kbo->va_node.start, vm_map_flags);
    if (ret)
        goto err_free_va;

    kbo->vm = panthor_vm_get(vm);
    return kbo;

err_free_va:
    panthor_vm_free_va(vm, &kbo->va_node);
err_put_obj:
    drm::drm_gem_object_put(kbo->obj);
err_free_kbo:
    kdelete(kbo);
    return ERR_PTR<panthor_kernel_bo>(ret);
}

void panthor_kernel_bo_destroy(panthor_kernel_bo* bo) {
    if (IS_ERR_OR_NULL(bo))
        return;

    panthor_vm* vm = bo->vm;
    panthor_kernel_bo_vunmap(bo);

    if (WARN_ON(to_panthor_bo(bo->obj)->exclusive_vm_root_gem != panthor_vm_root_gem(vm)))
        goto out_free_bo;

    {
        // A range that could not be unmapped may still be reached by the GPU: its pages must not
        // go back to the allocator, so the BO is leaked (as upstream). The VA node lives in this
        // struct, which goes below, so it leaves the VM's allocator either way (upstream frees the
        // struct with the node still linked).
        const bool unmapped = !panthor_vm_unmap_range(vm, bo->va_node.start, bo->va_node.size);
        panthor_vm_free_va(vm, &bo->va_node);
        if (unmapped)
            drm::drm_gem_object_put(bo->obj);
    }

out_free_bo:
    panthor_vm_put(vm);
    kdelete(bo);
}

int panthor_gem_create_with_handle(drm::drm_file* file, panthor_device* ptdev, panthor_vm* exclusive_vm, u64* size,
                                   u32 flags, u32* handle) {
    panthor_gem_object* bo = nullptr;
    int ret = panthor_gem_create(ptdev, *size, &bo);
    if (ret)
        return ret;
    bo->flags = flags;
    bo->base.map_wc = should_map_wc(bo, ptdev);

    if (exclusive_vm)
        panthor_gem_make_exclusive(bo, exclusive_vm);

    ret = file->gem.handle_create(&bo->base.base, handle);
    if (!ret)
        *size = bo->base.base.size;

    // The handle holds its own reference now; on failure this frees the BO.
    drm::drm_gem_object_put(&bo->base.base);
    return ret;
}

void panthor_gem_bo_set_label(drm::drm_gem_object* obj, const char* label) {
    panthor_gem_swap_label(to_panthor_bo(obj), label, true);
}

void panthor_gem_kernel_bo_set_label(panthor_kernel_bo* bo, const char* label) {
    // A BO userspace can reach is labelled by userspace only.
    if (WARN_ON(bo->obj->handle_count.load() > 0))
        return;
    if (!label)
        return;
    // Kernel BO names are string literals: kept as is, as kstrdup_const does for .rodata.
    panthor_gem_swap_label(to_panthor_bo(bo->obj), label, false);
}

// ---- 1.9: the dummy object of sparse mappings ----

panthor_gem_object* panthor_dummy_bo_create(panthor_device* ptdev, size_t size) {
    panthor_gem_object* bo;
    const int ret = panthor_gem_create(ptdev, size, &bo);
    if (ret)
        return ERR_PTR<panthor_gem_object>(ret);
    // Nobody has a handle on it, and nobody may map it to the CPU.
    bo->flags = DRM_PANTHOR_BO_NO_MMAP;
    panthor_gem_swap_label(bo, "Sparse dummy BO", false);
    return bo;
}

}  // namespace panthor
