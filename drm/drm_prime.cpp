// Mirrors drivers/gpu/drm/drm_prime.c: PRIME export/import of GEM objects as dma_bufs, the
// per-file (dma_buf, handle) lookup and the two ioctls. See drm/drm_prime.h.
#include "drm/drm_prime.h"

#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/err.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "uapi/drm/drm.h"

namespace drm {

using namespace kshim;
using namespace drm::uapi;

// drm_gem_dmabuf_release: the dma_buf's reference on its object goes with the last descriptor.
void drm_gem_dmabuf_release(dma_buf* dmabuf) {
    drm_gem_object_put(static_cast<drm_gem_object*>(dmabuf->priv));
}

// drm_gem_map_attach: another device's pages must stay where its page tables point while it is
// attached.
int drm_gem_map_attach(dma_buf* dmabuf, dma_buf_attachment*) {
    auto* obj = static_cast<drm_gem_object*>(dmabuf->priv);
    if (!obj->funcs || !obj->funcs->get_sg_table)
        return -ENOSYS;
    return drm_gem_pin(obj);
}

void drm_gem_map_detach(dma_buf* dmabuf, dma_buf_attachment*) {
    drm_gem_unpin(static_cast<drm_gem_object*>(dmabuf->priv));
}

// drm_gem_map_dma_buf: the pinned pages; there is no IOMMU, so mapping them for the device is
// the identity (dma_map_sgtable).
sg_table* drm_gem_map_dma_buf(dma_buf_attachment* attach, dma_data_direction dir) {
    if (WARN_ON(dir == DMA_NONE))
        return ERR_PTR<sg_table>(-EINVAL);
    auto* obj = static_cast<drm_gem_object*>(attach->dmabuf->priv);
    return obj->funcs->get_sg_table(obj);
}

void drm_gem_unmap_dma_buf(dma_buf_attachment*, sg_table* sgt, dma_data_direction) {
    sg_free_table(sgt);
    kfree(sgt);
}

int drm_gem_dmabuf_vmap(dma_buf* dmabuf, void** vaddr) {
    IosysMap map;
    const int ret = drm_gem_vmap_locked(static_cast<drm_gem_object*>(dmabuf->priv), &map);
    *vaddr = map.vaddr;
    return ret;
}

void drm_gem_dmabuf_vunmap(dma_buf* dmabuf, void* vaddr) {
    IosysMap map{vaddr};
    drm_gem_vunmap_locked(static_cast<drm_gem_object*>(dmabuf->priv), &map);
}

// drm_gem_prime_mmap: the object's own mapping, reached without a DRM file: the page offset
// moves into the object's offset range, as a mapping through its fake offset would be.
int drm_gem_prime_mmap(drm_gem_object* obj, VmArea* vma) {
    int ret = drm_gem_create_mmap_offset(obj);
    if (ret && ret != -ENODEV)
        return ret;
    vma->vm_pgoff += drm_vma_node_start(&obj->vma_node);
    drm_gem_object_get(obj);
    ret = drm_gem_mmap_obj(obj, obj->size, vma);
    if (ret)
        drm_gem_object_put(obj);
    return ret;
}

int drm_gem_dmabuf_mmap(dma_buf* dmabuf, vm_area_struct* vma) {
    // Every mapping of this tree is made by do_mmap (drm/drm_mmap.cpp): a VmArea.
    return drm_gem_prime_mmap(static_cast<drm_gem_object*>(dmabuf->priv), static_cast<VmArea*>(vma));
}

namespace {

const dma_buf_ops drm_gem_prime_dmabuf_ops = {
    .attach = drm_gem_map_attach,
    .detach = drm_gem_map_detach,
    .map_dma_buf = drm_gem_map_dma_buf,
    .unmap_dma_buf = drm_gem_unmap_dma_buf,
    .release = drm_gem_dmabuf_release,
    .mmap = drm_gem_dmabuf_mmap,
    .vmap = drm_gem_dmabuf_vmap,
    .vunmap = drm_gem_dmabuf_vunmap,
};

int drm_prime_add_buf_handle(drm_prime_file_private* prime_fpriv, dma_buf* dmabuf, u32 handle) {
    lockdep_assert_held(&prime_fpriv->lock);
    auto* member = knew<drm_prime_member>(GFP_KERNEL);
    if (!member)
        return -ENOMEM;
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
dma_buf* drm_gem_object_exported_dma_buf_take_locked(drm_gem_object* obj) {
    lockdep_assert_held(&drm_gem_object_name_lock());
    if (obj->handle_count.load(std::memory_order_relaxed) != 0)
        return nullptr;
    dma_buf* dmabuf = obj->dma_buf;
    obj->dma_buf = nullptr;
    return dmabuf;
}

}  // namespace

void drm_prime_init_file_private(drm_prime_file_private* prime_fpriv) {
    WARN_ON(!prime_fpriv->handles.empty());
}

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
    if (!member)
        return;
    // Outside the lock: this may be the dma_buf's last reference, whose release puts the object.
    dma_buf_put(member->dma_buf);
    kdelete(member);
}

dma_buf* drm_gem_dmabuf_export(drm_device*, const dma_buf_export_info* exp_info) {
    auto* obj = static_cast<drm_gem_object*>(exp_info->priv);
    dma_buf* dmabuf = dma_buf_export(exp_info);
    if (IS_ERR(dmabuf))
        return dmabuf;
    drm_gem_object_get(obj);
    return dmabuf;
}

dma_buf* drm_gem_prime_export(drm_gem_object* obj, int flags) {
    dma_buf_export_info exp_info;
    exp_info.exp_name = "drm";
    exp_info.ops = &drm_gem_prime_dmabuf_ops;
    exp_info.size = obj->size;
    exp_info.flags = flags;
    exp_info.resv = obj->resv;
    exp_info.priv = obj;
    return drm_gem_dmabuf_export(obj->dev, &exp_info);
}

drm_gem_object* drm_gem_prime_import_dev(drm_device* dev, dma_buf* dmabuf, drm_device* attach_dev) {
    if (dmabuf->ops == &drm_gem_prime_dmabuf_ops) {
        auto* obj = static_cast<drm_gem_object*>(dmabuf->priv);
        // Our own export on this device: the same object, no attachment.
        if (obj->dev == dev) {
            drm_gem_object_get(obj);
            return obj;
        }
    }
    if (!dev->driver().gem_prime_import_sg_table)
        return ERR_PTR<drm_gem_object>(-EINVAL);

    dma_buf_attachment* attach = dma_buf_attach(dmabuf, attach_dev);
    if (IS_ERR(attach))
        return ERR_PTR<drm_gem_object>(PTR_ERR(attach));
    // The object's own reference, dropped by drm_prime_gem_destroy.
    get_dma_buf(dmabuf);
    drm_gem_object* obj;
    sg_table* sgt = dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
    if (IS_ERR(sgt)) {
        obj = ERR_PTR<drm_gem_object>(PTR_ERR(sgt));
        goto fail_detach;
    }
    obj = dev->driver().gem_prime_import_sg_table(dev, attach, sgt);
    if (IS_ERR(obj))
        goto fail_unmap;
    obj->import_attach = attach;
    obj->resv = dmabuf->resv;
    return obj;

fail_unmap:
    dma_buf_unmap_attachment_unlocked(attach, sgt, DMA_BIDIRECTIONAL);
fail_detach:
    dma_buf_detach(dmabuf, attach);
    dma_buf_put(dmabuf);
    return obj;
}

drm_gem_object* drm_gem_prime_import(drm_device* dev, dma_buf* dmabuf) {
    return drm_gem_prime_import_dev(dev, dmabuf, dev);
}

dma_buf* drm_gem_prime_handle_to_dmabuf(drm_device*, drm_file* file, u32 handle, u32 flags) {
    MutexGuard g(file->prime.lock);
    drm_gem_object* obj = file->gem.lookup(handle);
    if (!obj)
        return ERR_PTR<dma_buf>(-ENOENT);

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

int drm_gem_prime_handle_to_fd(drm_device* dev, drm_file* file, u32 handle, u32 flags, int* prime_fd) {
    dma_buf* dmabuf = drm_gem_prime_handle_to_dmabuf(dev, file, handle, flags);
    if (IS_ERR(dmabuf))
        return static_cast<int>(PTR_ERR(dmabuf));
    // DRM_CLOEXEC is O_CLOEXEC; the access mode was the export's.
    const int fd = dma_buf_fd(dmabuf, static_cast<int>(flags & DRM_CLOEXEC));
    if (fd < 0) {
        dma_buf_put(dmabuf);
        return fd;
    }
    *prime_fd = fd;
    return 0;
}

int drm_gem_prime_fd_to_handle(drm_device* dev, drm_file* file, int prime_fd, u32* handle) {
    dma_buf* dmabuf = dma_buf_get(prime_fd);
    if (IS_ERR(dmabuf))
        return static_cast<int>(PTR_ERR(dmabuf));

    int ret;
    bool created = false;
    {
        MutexGuard g(file->prime.lock);
        ret = drm_prime_lookup_buf_handle(&file->prime, dmabuf, handle);
        if (ret) {
            dma_buf* stale = nullptr;
            {
                MutexGuard name_guard(drm_gem_object_name_lock());
                drm_gem_object* obj = dev->driver().gem_prime_import ? dev->driver().gem_prime_import(dev, dmabuf)
                                                                     : drm_gem_prime_import(dev, dmabuf);
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
                    if (ret)
                        stale = drm_gem_object_exported_dma_buf_take_locked(obj);
                    created = !ret;
                    drm_gem_object_put(obj);
                }
            }
            dma_buf_put(stale);
            if (created)
                ret = drm_prime_add_buf_handle(&file->prime, dmabuf, *handle);
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

int dma_buf_fd_mmap(int fd, u64 offset, size_t length, int prot, int flags, VmArea** out) {
    return ksys_mmap(fd, offset, length, prot, flags, out);
}

int drm_prime_handle_to_fd_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_prime_handle*>(data);
    if (!drm_core_check_feature(dev, DRIVER_GEM))
        return -EOPNOTSUPP;
    if (args->flags & ~(DRM_CLOEXEC | DRM_RDWR))
        return -EINVAL;
    return drm_gem_prime_handle_to_fd(dev, file, args->handle, args->flags, &args->fd);
}

int drm_prime_fd_to_handle_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_prime_handle*>(data);
    if (!drm_core_check_feature(dev, DRIVER_GEM))
        return -EOPNOTSUPP;
    return drm_gem_prime_fd_to_handle(dev, file, args->fd, &args->handle);
}

}  // namespace drm
