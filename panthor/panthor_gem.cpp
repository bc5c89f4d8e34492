// Mirrors drivers/gpu/drm/panthor/panthor_gem.c: panthor BOs on shmem GEM, their labels, and
// kernel BOs (a BO mapped at a kernel VA of a VM, optionally CPU-mapped).
//
// A BO exclusive to a VM shares the VM's reservation object, so locking the VM locks all its
// private BOs; the BO holds a reference on the VM's root GEM object (which owns that resv) until
// it is freed, so the resv outlives every BO using it. Kernel BOs are always exclusive to their VM.
#include "panthor/panthor_gem.h"

#include <cstring>

#include "drm/drm_prime.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
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

// A BO sharing its VM's resv cannot leave that VM: importers would lock the whole VM.
kshim::dma_buf* panthor_gem_prime_export(drm::drm_gem_object* obj, int flags) {
    if (to_panthor_bo(obj)->exclusive_vm_root_gem)
        return ERR_PTR<kshim::dma_buf>(-EINVAL);
    return drm::drm_gem_prime_export(obj, flags);
}

// panthor_gem_create_object + drm_gem_shmem_create: a BO of `size` bytes (rounded up to pages),
// one reference owned by the caller. -EINVAL for size 0 or overflow, -ENOMEM.
int panthor_gem_create(panthor_device* ptdev, u64 size, panthor_gem_object** out) {
    auto* bo = knew<panthor_gem_object>(GFP_KERNEL);
    if (!bo)
        return -ENOMEM;
    bo->base.base.funcs = &panthor_gem_funcs;
    // A non-coherent GPU does not snoop the CPU caches: CPU mappings must be write-combined.
    bo->base.map_wc = !ptdev->coherent;
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

drm::drm_gem_object* panthor_gem_create_object(drm::drm_device* ddev, size_t) {
    auto* ptdev = container_of(ddev, panthor_device, base);
    auto* bo = knew<panthor_gem_object>(GFP_KERNEL);
    if (!bo)
        return ERR_PTR<drm::drm_gem_object>(-ENOMEM);
    bo->base.base.funcs = &panthor_gem_funcs;
    bo->base.map_wc = !ptdev->coherent;
    return &bo->base.base;
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
