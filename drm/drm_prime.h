// Mirrors include/drm/drm_prime.h and drivers/gpu/drm/drm_prime.c: sharing GEM objects as
// dma_bufs (PRIME_HANDLE_TO_FD / PRIME_FD_TO_HANDLE).
//
// DOC: An export wraps a GEM object in a dma_buf that holds a reference on the object until its
// last descriptor closes. The object caches its dma_buf (drm_gem_object::dma_buf) while it has
// handles, so exporting it again, from any file, gives the same dma_buf. Each file remembers
// which dma_buf goes with which of its handles (drm_prime_file_private): exporting a handle twice
// gives the same dma_buf, importing a dma_buf the file already has gives its existing handle.
// Importing a dma_buf exported by the same device gives the same GEM object (a new handle).
// A foreign dma_buf (another device's) is attached and its attachment mapped: the driver's
// gem_prime_import_sg_table makes an object over the exporter's pages (an sg table), which the
// GPU maps and a CPU mapping reaches through the exporter's vmap. The import holds an attachment
// and a dma_buf reference until the object is freed (drm_prime_gem_destroy). A GEM export
// serves attachments (pins its pages while attached), vmap and mmap of the descriptor
// (drm_gem_dmabuf_mmap), and DMA_BUF_IOCTL_SYNC (waits for the implicit fences).
#pragma once
#include <cstddef>

#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/types.h"
#include "kernel_shim/xarray.h"

namespace kshim {
struct dma_buf;
struct sg_table;
}  // namespace kshim

namespace drm {

using kshim::u32;

class drm_device;
struct drm_file;
struct drm_gem_object;
struct VmArea;

namespace uapi {
// include/uapi/linux/dma-buf.h (kernel_shim/dma-buf/dma-buf.h).
using kshim::DMA_BUF_IOCTL_SYNC;
using kshim::dma_buf_sync;
using kshim::DMA_BUF_SYNC_END;
using kshim::DMA_BUF_SYNC_READ;
using kshim::DMA_BUF_SYNC_RW;
using kshim::DMA_BUF_SYNC_START;
using kshim::DMA_BUF_SYNC_VALID_FLAGS_MASK;
using kshim::DMA_BUF_SYNC_WRITE;
}  // namespace uapi

// One (dma_buf, handle) pair of a file; holds a dma_buf reference.
struct drm_prime_member {
    kshim::dma_buf* dma_buf = nullptr;
    u32 handle = 0;
};

// drm_file.prime: the file's pairs, by handle (a file has few; the dma_buf lookup walks them).
struct drm_prime_file_private {
    kshim::Mutex lock{"drm_prime_file_private.lock"};
    kshim::XArray<drm_prime_member> handles;
};

void drm_prime_init_file_private(drm_prime_file_private* prime_fpriv);
// WARNs if pairs are left (every handle is deleted first, which removes them).
void drm_prime_destroy_file_private(drm_prime_file_private* prime_fpriv);
// Drops the pair of `handle` (and its dma_buf reference), if any.
void drm_prime_remove_buf_handle(drm_prime_file_private* prime_fpriv, u32 handle);

// The generic export: a dma_buf over obj (size, resv) holding a reference on obj.
// ERR_PTR(-errno).
kshim::dma_buf* drm_gem_prime_export(drm_gem_object* obj, int flags);
// drm_gem_dmabuf_export: an export with the driver's own ops (exp_info->priv is the GEM object,
// which the dma_buf then holds a reference on). ERR_PTR(-errno).
kshim::dma_buf* drm_gem_dmabuf_export(drm_device* dev, const kshim::dma_buf_export_info* exp_info);
// The generic GEM dma_buf ops, for drivers composing their own (panthor's CPU-access hooks).
int drm_gem_map_attach(kshim::dma_buf* dmabuf, kshim::dma_buf_attachment* attach);
void drm_gem_map_detach(kshim::dma_buf* dmabuf, kshim::dma_buf_attachment* attach);
kshim::sg_table* drm_gem_map_dma_buf(kshim::dma_buf_attachment* attach, kshim::dma_data_direction dir);
void drm_gem_unmap_dma_buf(kshim::dma_buf_attachment* attach, kshim::sg_table* sgt, kshim::dma_data_direction dir);
void drm_gem_dmabuf_release(kshim::dma_buf* dmabuf);
int drm_gem_dmabuf_mmap(kshim::dma_buf* dmabuf, kshim::vm_area_struct* vma);
int drm_gem_dmabuf_vmap(kshim::dma_buf* dmabuf, void** vaddr);
void drm_gem_dmabuf_vunmap(kshim::dma_buf* dmabuf, void* vaddr);
// The generic import: our own export of a GEM object of `dev` gives that object (a new
// reference); anything else is attached for `attach_dev` and mapped, and the driver's
// gem_prime_import_sg_table makes the object (its resv is the dma_buf's). ERR_PTR: -EINVAL
// without that hook, the exporter's attach / map error, the hook's.
drm_gem_object* drm_gem_prime_import_dev(drm_device* dev, kshim::dma_buf* dma_buf, drm_device* attach_dev);
drm_gem_object* drm_gem_prime_import(drm_device* dev, kshim::dma_buf* dma_buf);
// The free of an imported object: unmaps `sg` (if any), detaches, drops the dma_buf reference.
// (Defined in gem_shmem.cpp, in the drm_gem library, whose release calls it.)
void drm_prime_gem_destroy(drm_gem_object* obj, kshim::sg_table* sg);

// The dma_buf of `handle` in `file` (a reference for the caller) or ERR_PTR: -ENOENT for an
// unknown handle (or one deleted meanwhile), the driver's export error.
kshim::dma_buf* drm_gem_prime_handle_to_dmabuf(drm_device* dev, drm_file* file, u32 handle, u32 flags);
// ...installed as a descriptor: 0 and *prime_fd, or -errno.
int drm_gem_prime_handle_to_fd(drm_device* dev, drm_file* file, u32 handle, u32 flags, int* prime_fd);
// The handle of the dma_buf behind prime_fd in `file`: -EBADF for a closed descriptor, -EINVAL
// for one that is not a dma_buf, drm_gem_prime_import_dev's errors for a foreign dma_buf.
int drm_gem_prime_fd_to_handle(drm_device* dev, drm_file* file, int prime_fd, u32* handle);

// The dma-buf's file operations are kernel_shim/dma-buf/dma-buf.h's (dma_buf_fops).
using kshim::dma_buf_ioctl;
// mmap(2) of a descriptor (ksys_mmap in drm/drm_mmap.h), under the name in-process callers know.
int dma_buf_fd_mmap(int fd, kshim::u64 offset, size_t length, int prot, int flags, VmArea** out);

// The ioctls (DRM_RENDER_ALLOW). -EOPNOTSUPP without DRIVER_GEM; HANDLE_TO_FD: -EINVAL for
// flags other than DRM_CLOEXEC | DRM_RDWR.
int drm_prime_handle_to_fd_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_prime_fd_to_handle_ioctl(drm_device* dev, void* data, drm_file* file);

}  // namespace drm
