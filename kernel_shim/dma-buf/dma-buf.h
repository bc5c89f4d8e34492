// Mirrors include/linux/dma-buf.h and drivers/dma-buf/dma-buf.c (export, get/put, mmap), as an
// in-process object: the struct file of a dma_buf is its refcount, and the descriptor that names
// it comes from the DRM core's fd table (drm_fd_install_dma_buf in drm/drm_file.h).
//
// DOC: A dma_buf shares an exporter's buffer. The exporter's ops say how to release and map it;
// `priv` is the exporter's object (a GEM object for DRM exports) and `resv` its reservation
// object, so importers synchronise with the exporter's fences. Attachments and sg tables (the
// import path of a foreign device) are not modelled.
#pragma once
#include <cstddef>

#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/kref.h"

namespace kshim {

struct dma_buf;

struct dma_buf_ops {
    // The last reference went (the last descriptor closed): the exporter drops what it holds.
    void (*release)(dma_buf* dmabuf) = nullptr;
    // mmap(2) of the descriptor: `vma` is the importer's mapping (a drm::VmArea for DRM
    // exporters). Unset: -EINVAL, as upstream.
    int (*mmap)(dma_buf* dmabuf, void* vma) = nullptr;
};

struct dma_buf {
    kref refcount;  // the struct file's reference count
    size_t size = 0;
    const dma_buf_ops* ops = nullptr;
    void* priv = nullptr;
    dma_resv* resv = nullptr;  // the exporter's
    int flags = 0;             // O_* of the export (DRM_CLOEXEC | DRM_RDWR)
    const char* exp_name = nullptr;
};

// struct dma_buf_export_info: what the exporter describes.
struct dma_buf_export_info {
    const char* exp_name = nullptr;
    const dma_buf_ops* ops = nullptr;
    size_t size = 0;
    int flags = 0;
    dma_resv* resv = nullptr;  // required here (every exporter has one)
    void* priv = nullptr;
};

// A new dma_buf with one reference for the caller; ERR_PTR(-EINVAL) for missing ops (release is
// mandatory), a null priv or resv; ERR_PTR(-ENOMEM).
dma_buf* dma_buf_export(const dma_buf_export_info* exp_info);
// get_dma_buf: another reference (the file's get_file).
inline void get_dma_buf(dma_buf* dmabuf) { kref_get(&dmabuf->refcount); }
// dma_buf_put: the last reference runs ops->release, then frees the dma_buf.
void dma_buf_put(dma_buf* dmabuf);
// dma_buf_mmap_internal: the exporter's mmap op, -EINVAL without one.
int dma_buf_mmap(dma_buf* dmabuf, void* vma);
// Live dma_bufs (leak checks).
long dma_buf_live();

}  // namespace kshim
