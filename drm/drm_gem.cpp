// Mirrors drivers/gpu/drm/drm_gem.c.
#include "drm/drm_gem.h"

#include "drm/drm_device.h"

#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"

namespace drm {

using namespace kshim;

void drm_gem_private_object_init(drm_device* dev, drm_gem_object* obj, size_t size) {
    // Size 0 is allowed, as for upstream's dummy objects (drm_gpuvm's resv object).
    if (WARN_ON(size & ~PAGE_MASK))
        return;
    obj->dev = dev;
    kref_init(&obj->refcount);
    obj->handle_count.store(0, std::memory_order_relaxed);
    obj->size = size;
    obj->vma_offset_manager = dev ? dev->vma_offset_manager : nullptr;
    dma_resv_init(&obj->_resv);
    if (!obj->resv)
        obj->resv = &obj->_resv;
}

void drm_gem_private_object_fini(drm_gem_object* obj) {
    dma_resv_fini(&obj->_resv);
}

int drm_gem_object_init(drm_vma_offset_manager* mgr, drm_gem_object* obj, u64 size) {
    if (size & ~PAGE_MASK)
        return -EINVAL;
    drm_gem_private_object_init(nullptr, obj, size);
    obj->vma_offset_manager = mgr;
    return 0;
}

void drm_gem_object_release(drm_gem_object* obj) {
    WARN_ON(obj->handle_count.load(std::memory_order_relaxed) != 0);
    // A BO still connected to a VM would leave a dangling drm_gpuvm_bo: each one holds a
    // reference, so this can only happen through a refcounting bug.
    WARN_ON(!obj->gpuva.list.empty());
    drm_gem_free_mmap_offset(obj);
    drm_gem_private_object_fini(obj);
}

void drm_gem_object_free(kref* kref) {
    drm_gem_object* obj = container_of(kref, drm_gem_object, refcount);
    if (WARN_ON(!obj->funcs || !obj->funcs->free))
        return;
    obj->funcs->free(obj);
}

Mutex& drm_gem_object_name_lock() {
    static Mutex* lock = new Mutex("drm_device.object_name_lock");
    return *lock;
}

int drm_gem_create_mmap_offset_size(drm_gem_object* obj, u64 size) {
    if (!obj->vma_offset_manager)
        return -ENODEV;
    return drm_vma_offset_add(obj->vma_offset_manager, &obj->vma_node, size >> PAGE_SHIFT);
}

int drm_gem_create_mmap_offset(drm_gem_object* obj) {
    return drm_gem_create_mmap_offset_size(obj, obj->size);
}

void drm_gem_free_mmap_offset(drm_gem_object* obj) {
    if (obj->vma_offset_manager)
        drm_vma_offset_remove(obj->vma_offset_manager, &obj->vma_node);
}

drm_gem_object* drm_gem_object_lookup_at_offset(drm_vma_offset_manager* mgr, u64 offset, u64 size) {
    u64 pages = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
    drm_gem_object* obj = nullptr;
    drm_vma_offset_lock_lookup(mgr);
    drm_vma_offset_node* node = drm_vma_offset_lookup_locked(mgr, offset >> PAGE_SHIFT, pages);
    if (node) {
        obj = container_of(node, drm_gem_object, vma_node);
        // Racing with the last put: an object on its way out is not found (drm_gem_mmap does the same).
        if (!kref_get_unless_zero(&obj->refcount))
            obj = nullptr;
    }
    drm_vma_offset_unlock_lookup(mgr);
    return obj;
}

int drm_gem_pin_locked(drm_gem_object* obj) {
    dma_resv_assert_held(obj->resv);
    return obj->funcs->pin ? obj->funcs->pin(obj) : 0;
}

void drm_gem_unpin_locked(drm_gem_object* obj) {
    dma_resv_assert_held(obj->resv);
    if (obj->funcs->unpin)
        obj->funcs->unpin(obj);
}

int drm_gem_pin(drm_gem_object* obj) {
    dma_resv_lock(obj->resv, nullptr);
    int ret = drm_gem_pin_locked(obj);
    dma_resv_unlock(obj->resv);
    return ret;
}

void drm_gem_unpin(drm_gem_object* obj) {
    dma_resv_lock(obj->resv, nullptr);
    drm_gem_unpin_locked(obj);
    dma_resv_unlock(obj->resv);
}

int drm_gem_vmap_locked(drm_gem_object* obj, IosysMap* map) {
    dma_resv_assert_held(obj->resv);
    if (!obj->funcs->vmap)
        return -EOPNOTSUPP;
    int ret = obj->funcs->vmap(obj, map);
    if (ret)
        return ret;
    if (map->is_null())
        return -ENOMEM;
    return 0;
}

void drm_gem_vunmap_locked(drm_gem_object* obj, IosysMap* map) {
    dma_resv_assert_held(obj->resv);
    if (map->is_null())
        return;
    if (obj->funcs->vunmap)
        obj->funcs->vunmap(obj, map);
    map->vaddr = nullptr;
}

int drm_gem_vmap(drm_gem_object* obj, IosysMap* map) {
    dma_resv_lock(obj->resv, nullptr);
    int ret = drm_gem_vmap_locked(obj, map);
    dma_resv_unlock(obj->resv);
    return ret;
}

void drm_gem_vunmap(drm_gem_object* obj, IosysMap* map) {
    dma_resv_lock(obj->resv, nullptr);
    drm_gem_vunmap_locked(obj, map);
    dma_resv_unlock(obj->resv);
}

int drm_gem_lock_reservations(drm_gem_object** objs, int count, WwAcquireCtx* acquire_ctx) {
    int contended = -1;
    ww_acquire_init(acquire_ctx, &reservation_ww_class);
retry:
    if (contended != -1) {
        dma_resv_lock_slow(objs[contended]->resv, acquire_ctx);
    }
    for (int i = 0; i < count; i++) {
        if (i == contended)
            continue;
        int ret = dma_resv_lock(objs[i]->resv, acquire_ctx);
        if (ret) {
            for (int j = 0; j < i; j++)
                dma_resv_unlock(objs[j]->resv);
            if (contended != -1 && contended >= i)
                dma_resv_unlock(objs[contended]->resv);
            if (ret == -EDEADLK) {
                contended = i;
                goto retry;
            }
            ww_acquire_fini(acquire_ctx);
            return ret;
        }
    }
    ww_acquire_done(acquire_ctx);
    return 0;
}

void drm_gem_unlock_reservations(drm_gem_object** objs, int count, WwAcquireCtx* acquire_ctx) {
    for (int i = 0; i < count; i++)
        dma_resv_unlock(objs[i]->resv);
    ww_acquire_fini(acquire_ctx);
}

// ---- handles ----

GemHandleTable::~GemHandleTable() {
    if (WARN_ON(!handles_.empty()))
        release();
}

int GemHandleTable::handle_create(drm_gem_object* obj, u32* handlep) {
    // The handle holds a reference from the moment it is visible.
    drm_gem_object_get(obj);
    obj->handle_count.fetch_add(1, std::memory_order_relaxed);
    u32 id = 0;
    int ret;
    {
        SpinGuard g(table_lock_);
        ret = handles_.alloc(&id, obj, XaLimit{1, INT32_MAX}, GFP_NOWAIT);
    }
    if (ret) {
        obj->handle_count.fetch_sub(1, std::memory_order_relaxed);
        drm_gem_object_put(obj);
        return ret == -EBUSY ? -ENOSPC : ret;
    }
    if (obj->funcs && obj->funcs->open) {
        ret = obj->funcs->open(obj, owner);
        if (ret) {
            // drm_gem_handle_create_tail: the handle goes again (without the close hook).
            {
                SpinGuard g(table_lock_);
                handles_.erase(id);
            }
            obj->handle_count.fetch_sub(1, std::memory_order_relaxed);
            drm_gem_object_put(obj);
            return ret;
        }
    }
    *handlep = id;
    return 0;
}

drm_gem_object* GemHandleTable::lookup(u32 handle) {
    SpinGuard g(table_lock_);
    drm_gem_object* obj = handles_.load(handle);
    if (obj)
        drm_gem_object_get(obj);
    return obj;
}

int GemHandleTable::handle_delete(u32 handle) {
    drm_gem_object* obj;
    {
        SpinGuard g(table_lock_);
        obj = handles_.erase(handle);
    }
    if (!obj)
        return -EINVAL;
    if (obj->funcs && obj->funcs->close)
        obj->funcs->close(obj, owner);
    if (prime_remove)
        prime_remove(prime_ctx, handle);
    // drm_gem_object_handle_put_unlocked: the last handle drops the export's cached dma_buf,
    // which breaks the object <-> dma_buf reference cycle.
    kshim::dma_buf* dmabuf = nullptr;
    {
        MutexGuard g(drm_gem_object_name_lock());
        if (obj->handle_count.fetch_sub(1, std::memory_order_relaxed) == 1) {
            dmabuf = obj->dma_buf;
            obj->dma_buf = nullptr;
        }
    }
    dma_buf_put(dmabuf);
    drm_gem_object_put(obj);
    return 0;
}

void GemHandleTable::release() {
    handles_.for_each([this](u32 id, drm_gem_object*) { handle_delete(id); });
}

}  // namespace drm
