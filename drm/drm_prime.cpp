// Mirrors drivers/gpu/drm/drm_prime.c: PRIME export/import of GEM objects as dma_bufs, the
// per-file (dma_buf, handle) lookup and the two ioctls. See drm/drm_prime.h.
#include "drm/drm_prime.h"

#include "drm/drm_file.h"
#include "drm/uapi/drm.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/err.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;
using namespace drm::uapi;

namespace {

// drm_gem_dmabuf_release: the dma_buf's reference on its object goes with the last descriptor.
void drm_gem_dmabuf_release(dma_buf* dmabuf) { drm_gem_object_put(static_cast<DrmGemObject*>(dmabuf->priv)); }

// No mmap op: mapping the descriptor itself is not served (dma_buf_mmap gives -EINVAL); clients
// map the imported handle through their DRM file instead.
const dma_buf_ops drm_gem_prime_dmabuf_ops = {
    .release = drm_gem_dmabuf_release,
};

int drm_prime_add_buf_handle(drm_prime_file_private* prime_fpriv, dma_buf* dmabuf, u32 handle) {
    lockdep_assert_held(&prime_fpriv->lock);
    auto* member = knew<drm_prime_member>(GFP_KERNEL);
    if (!member) return -ENOMEM;
    get_dma_buf(dmabuf);
    member->dma_buf = dmabuf;
    member->handle = handle;
    // A handle has at most one pair: deleting it removes the pair before the number is reused.
    drm_prime_member* old = prime_fpriv->handles.store(handle, member);
    if (WARN_ON(old)) {
        dma_buf_put(old->dma_buf);
        kdelete(old);
    }
    return 0;
}

dma_buf* drm_prime_lookup_buf_by_handle(drm_prime_file_private* prime_fpriv, u32 handle) {
    lockdep_assert_held(&prime_fpriv->lock);
    drm_prime_member* member = prime_fpriv->handles.load(handle);
    return member ? member->dma_buf : nullptr;
}

int drm_prime_lookup_buf_handle(drm_prime_file_private* prime_fpriv, dma_buf* dmabuf, u32* handle) {
    lockdep_assert_held(&prime_fpriv->lock);
    int ret = -ENOENT;
    prime_fpriv->handles.for_each_locked([&](u32 id, drm_prime_member* member) {
        if (ret && member->dma_buf == dmabuf) {
            *handle = id;
            ret = 0;
        }
    });
    return ret;
}

// Drops the cached dma_buf of an object left without handles (an import whose handle could not
// be created): otherwise object and dma_buf would hold each other forever.
dma_buf* drm_gem_object_exported_dma_buf_take_locked(DrmGemObject* obj) {
    lockdep_assert_held(&drm_gem_object_name_lock());
    if (obj->handle_count.load(std::memory_order_relaxed) != 0) return nullptr;
    dma_buf* dmabuf = obj->dma_buf;
    obj->dma_buf = nullptr;
    return dmabuf;
}

}  // namespace

void drm_prime_init_file_private(drm_prime_file_private* prime_fpriv) { WARN_ON(!prime_fpriv->handles.empty()); }

void drm_prime_destroy_file_private(drm_prime_file_private* prime_fpriv) {
    // Every handle was deleted before, each taking its pair along.
    if (WARN_ON(!prime_fpriv->handles.empty())) {
        prime_fpriv->handles.for_each([&](u32 id, drm_prime_member*) {
            MutexGuard g(prime_fpriv->lock);
            drm_prime_member* member = prime_fpriv->handles.erase(id);
            dma_buf_put(member->dma_buf);
            kdelete(member);
        });
    }
}

void drm_prime_remove_buf_handle(drm_prime_file_private* prime_fpriv, u32 handle) {
    drm_prime_member* member;
    {
        MutexGuard g(prime_fpriv->lock);
        member = prime_fpriv->handles.erase(handle);
    }
    if (!member) return;
    // Outside the lock: this may be the dma_buf's last reference, whose release puts the object.
    dma_buf_put(member->dma_buf);
    kdelete(member);
}

dma_buf* drm_gem_prime_export(DrmGemObject* obj, int flags) {
    dma_buf_export_info exp_info;
    exp_info.exp_name = "drm";
    exp_info.ops = &drm_gem_prime_dmabuf_ops;
    exp_info.size = obj->size;
    exp_info.flags = flags;
    exp_info.resv = obj->resv;
    exp_info.priv = obj;
    dma_buf* dmabuf = dma_buf_export(&exp_info);
    if (IS_ERR(dmabuf)) return dmabuf;
    drm_gem_object_get(obj);
    return dmabuf;
}

DrmGemObject* drm_gem_prime_import(Device* dev, dma_buf* dmabuf) {
    if (dmabuf->ops == &drm_gem_prime_dmabuf_ops) {
        auto* obj = static_cast<DrmGemObject*>(dmabuf->priv);
        // Our own export on this device: the same object, no attachment.
        if (obj->dev == dev) {
            drm_gem_object_get(obj);
            return obj;
        }
    }
    return ERR_PTR<DrmGemObject>(-EOPNOTSUPP);
}

dma_buf* drm_gem_prime_handle_to_dmabuf(Device*, File* file, u32 handle, u32 flags) {
    MutexGuard g(file->prime.lock);
    DrmGemObject* obj = file->gem.lookup(handle);
    if (!obj) return ERR_PTR<dma_buf>(-ENOENT);

    dma_buf* dmabuf = drm_prime_lookup_buf_by_handle(&file->prime, handle);
    if (dmabuf) {
        get_dma_buf(dmabuf);
        drm_gem_object_put(obj);
        return dmabuf;
    }

    {
        MutexGuard name_guard(drm_gem_object_name_lock());
        if (obj->dma_buf) {
            // Exported (or imported) before, maybe through another file: the same dma_buf.
            dmabuf = obj->dma_buf;
            get_dma_buf(dmabuf);
        } else if (obj->handle_count.load(std::memory_order_relaxed) == 0) {
            // The handle was deleted after the lookup: nothing would drop the cache again.
            dmabuf = ERR_PTR<dma_buf>(-ENOENT);
        } else {
            // export_and_register_object: the object keeps a reference while it has handles.
            dmabuf = obj->funcs && obj->funcs->export_ ? obj->funcs->export_(obj, static_cast<int>(flags))
                                                       : drm_gem_prime_export(obj, static_cast<int>(flags));
            if (!IS_ERR(dmabuf)) {
                obj->dma_buf = dmabuf;
                get_dma_buf(dmabuf);
            }
        }
    }
    if (!IS_ERR(dmabuf)) {
        const int ret = drm_prime_add_buf_handle(&file->prime, dmabuf, handle);
        if (ret) {
            dma_buf_put(dmabuf);
            dmabuf = ERR_PTR<dma_buf>(ret);
        }
    }
    drm_gem_object_put(obj);
    return dmabuf;
}

int drm_gem_prime_handle_to_fd(Device* dev, File* file, u32 handle, u32 flags, int* prime_fd) {
    dma_buf* dmabuf = drm_gem_prime_handle_to_dmabuf(dev, file, handle, flags);
    if (IS_ERR(dmabuf)) return static_cast<int>(PTR_ERR(dmabuf));
    const int fd = drm_fd_install_dma_buf(dmabuf);
    dma_buf_put(dmabuf);  // the descriptor holds its own
    if (fd < 0) return fd;
    *prime_fd = fd;
    return 0;
}

int drm_gem_prime_fd_to_handle(Device* dev, File* file, int prime_fd, u32* handle) {
    dma_buf* dmabuf = drm_fd_get_dma_buf(prime_fd);
    if (IS_ERR(dmabuf)) return static_cast<int>(PTR_ERR(dmabuf));

    int ret;
    bool created = false;
    {
        MutexGuard g(file->prime.lock);
        ret = drm_prime_lookup_buf_handle(&file->prime, dmabuf, handle);
        if (ret) {
            dma_buf* stale = nullptr;
            {
                MutexGuard name_guard(drm_gem_object_name_lock());
                DrmGemObject* obj = drm_gem_prime_import(dev, dmabuf);
                if (IS_ERR(obj)) {
                    ret = static_cast<int>(PTR_ERR(obj));
                } else {
                    if (obj->dma_buf) {
                        WARN_ON(obj->dma_buf != dmabuf);
                    } else {
                        obj->dma_buf = dmabuf;
                        get_dma_buf(dmabuf);
                    }
                    ret = file->gem.handle_create(obj, handle);
                    if (ret) stale = drm_gem_object_exported_dma_buf_take_locked(obj);
                    created = !ret;
                    drm_gem_object_put(obj);
                }
            }
            dma_buf_put(stale);
            if (created) ret = drm_prime_add_buf_handle(&file->prime, dmabuf, *handle);
        }
    }
    if (ret && created) {
        // The pair could not be recorded: the new handle goes again (the deletion takes the
        // prime lock, hence after it is released).
        file->gem.handle_delete(*handle);
    }
    dma_buf_put(dmabuf);
    return ret;
}

int drm_prime_handle_to_fd_ioctl(Device* dev, void* data, File* file) {
    auto* args = static_cast<drm_prime_handle*>(data);
    if (!drm_core_check_feature(dev, DRIVER_GEM)) return -EOPNOTSUPP;
    if (args->flags & ~(DRM_CLOEXEC | DRM_RDWR)) return -EINVAL;
    return drm_gem_prime_handle_to_fd(dev, file, args->handle, args->flags, &args->fd);
}

int drm_prime_fd_to_handle_ioctl(Device* dev, void* data, File* file) {
    auto* args = static_cast<drm_prime_handle*>(data);
    if (!drm_core_check_feature(dev, DRIVER_GEM)) return -EOPNOTSUPP;
    return drm_gem_prime_fd_to_handle(dev, file, args->fd, &args->handle);
}

}  // namespace drm
