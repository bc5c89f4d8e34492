// Mirrors drivers/gpu/drm/drm_exec.c.
#include "drm/drm_exec.h"

#include <cstring>

#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;

namespace {

void drm_exec_unlock_all(drm_exec* exec) {
    drm_exec_for_each_locked_object_reverse(exec, [](unsigned, drm_gem_object* obj) {
        dma_resv_unlock(obj->resv);
        drm_gem_object_put(obj);
    });
    exec->num_objects = 0;
    drm_gem_object_put(exec->prelocked);
    exec->prelocked = nullptr;
}

// Records a freshly locked object (takes a reference), growing the array by a page.
int drm_exec_obj_locked(drm_exec* exec, drm_gem_object* obj) {
    if (exec->num_objects == exec->max_objects) {
        unsigned grow = PAGE_SIZE / sizeof(void*);
        auto** tmp = static_cast<drm_gem_object**>(kmalloc((exec->max_objects + grow) * sizeof(void*), GFP_KERNEL));
        if (!tmp)
            return -ENOMEM;
        if (exec->num_objects)
            std::memcpy(tmp, exec->objects, exec->num_objects * sizeof(void*));
        kfree(exec->objects);
        exec->objects = tmp;
        exec->max_objects += grow;
    }
    drm_gem_object_get(obj);
    exec->objects[exec->num_objects++] = obj;
    return 0;
}

// Takes the object we backed off on, waiting for it, before the body runs again.
int drm_exec_lock_contended(drm_exec* exec) {
    drm_gem_object* obj = exec->contended;
    if (!obj)
        return 0;
    exec->contended = nullptr;  // its reference moves to prelocked
    if (exec->flags & DRM_EXEC_INTERRUPTIBLE_WAIT) {
        int ret = dma_resv_lock_slow_interruptible(obj->resv, &exec->ticket);
        if (ret) {
            drm_gem_object_put(obj);
            return ret;
        }
    } else {
        dma_resv_lock_slow(obj->resv, &exec->ticket);
    }
    int ret = drm_exec_obj_locked(exec, obj);
    if (ret) {
        dma_resv_unlock(obj->resv);
        drm_gem_object_put(obj);
        return ret;
    }
    exec->prelocked = obj;
    return 0;
}

}  // namespace

void drm_exec_init(drm_exec* exec, u32 flags, unsigned nr) {
    if (!nr)
        nr = PAGE_SIZE / sizeof(void*);
    exec->flags = flags;
    exec->objects = static_cast<drm_gem_object**>(kmalloc(nr * sizeof(void*), GFP_KERNEL));
    // A failed allocation is retried (and reported) by the first drm_exec_obj_locked.
    exec->max_objects = exec->objects ? nr : 0;
    exec->num_objects = 0;
    exec->contended = DRM_EXEC_DUMMY;
    exec->prelocked = nullptr;
}

void drm_exec_fini(drm_exec* exec) {
    drm_exec_unlock_all(exec);
    kfree(exec->objects);
    exec->objects = nullptr;
    exec->max_objects = 0;
    if (exec->contended != DRM_EXEC_DUMMY) {
        drm_gem_object_put(exec->contended);
        ww_acquire_fini(&exec->ticket);
    }
    exec->contended = DRM_EXEC_DUMMY;
}

bool drm_exec_cleanup(drm_exec* exec) {
    if (__builtin_expect(!exec->contended, 1)) {
        ww_acquire_done(&exec->ticket);
        return false;
    }
    if (__builtin_expect(exec->contended == DRM_EXEC_DUMMY, 0)) {
        exec->contended = nullptr;
        ww_acquire_init(&exec->ticket, &reservation_ww_class);
        return true;
    }
    drm_exec_unlock_all(exec);
    return true;
}

int drm_exec_lock_obj(drm_exec* exec, drm_gem_object* obj) {
    int ret = drm_exec_lock_contended(exec);
    if (ret)
        return ret;

    if (exec->prelocked == obj) {
        drm_gem_object_put(exec->prelocked);
        exec->prelocked = nullptr;
        return 0;
    }

    if (exec->flags & DRM_EXEC_INTERRUPTIBLE_WAIT)
        ret = dma_resv_lock_interruptible(obj->resv, &exec->ticket);
    else
        ret = dma_resv_lock(obj->resv, &exec->ticket);

    if (__builtin_expect(ret == -EDEADLK, 0)) {
        drm_gem_object_get(obj);
        exec->contended = obj;
        return -EDEADLK;
    }
    if (__builtin_expect(ret == -EALREADY, 0) && (exec->flags & DRM_EXEC_IGNORE_DUPLICATES))
        return 0;
    if (ret)
        return ret;

    ret = drm_exec_obj_locked(exec, obj);
    if (ret) {
        dma_resv_unlock(obj->resv);
        return ret;
    }
    return 0;
}

void drm_exec_unlock_obj(drm_exec* exec, drm_gem_object* obj) {
    for (unsigned i = exec->num_objects; i-- > 0;) {
        if (exec->objects[i] == obj) {
            dma_resv_unlock(obj->resv);
            for (++i; i < exec->num_objects; ++i)
                exec->objects[i - 1] = exec->objects[i];
            --exec->num_objects;
            drm_gem_object_put(obj);
            return;
        }
    }
}

int drm_exec_prepare_obj(drm_exec* exec, drm_gem_object* obj, unsigned num_fences) {
    int ret = drm_exec_lock_obj(exec, obj);
    if (ret)
        return ret;
    return dma_resv_reserve_fences(obj->resv, num_fences);
}

int drm_exec_prepare_array(drm_exec* exec, drm_gem_object** objects, unsigned num_objects, unsigned num_fences) {
    for (unsigned i = 0; i < num_objects; i++) {
        int ret = drm_exec_prepare_obj(exec, objects[i], num_fences);
        if (ret)
            return ret;
    }
    return 0;
}

}  // namespace drm
