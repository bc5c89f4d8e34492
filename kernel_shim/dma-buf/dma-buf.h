// Mirrors include/linux/dma-buf.h and drivers/dma-buf/dma-buf.c (export, get/put, attachments,
// map/unmap, vmap, CPU access, mmap) and the dma-buf's file (dma_buf_fops: release, mmap, ioctl).
// A dma_buf's reference count is its file's (kernel_shim/fs/file.h): get_dma_buf is get_file,
// dma_buf_put is fput, and each descriptor naming it holds one.
//
// DOC: A dma_buf shares an exporter's buffer. The exporter's ops say how to release and map it;
// `priv` is the exporter's object (a GEM object for DRM exports) and `resv` its reservation
// object, so importers synchronise with the exporter's fences. A device that is not the exporter
// attaches (dma_buf_attach) and maps the attachment (dma_buf_map_attachment), which gives an
// sg_table of the exporter's pages: what it puts in its own page tables. Only static importers
// are modelled (no move_notify: nothing here moves a buffer). `dev` of an attachment is opaque
// (the importing drm::drm_device); `vma` of mmap too (a drm::VmArea).
#pragma once
#include <boost/intrusive/list.hpp>

#include <cstddef>

#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/dma-buf/scatterlist.h"
#include "kernel_shim/fs/file.h"

namespace kshim {

struct dma_buf;
struct dma_buf_attachment;

enum dma_data_direction {
    DMA_BIDIRECTIONAL = 0,
    DMA_TO_DEVICE = 1,
    DMA_FROM_DEVICE = 2,
    DMA_NONE = 3,
};

struct dma_buf_ops {
    // A device attaches: the exporter may refuse (its errno) or pin the backing. Optional.
    int (*attach)(dma_buf* dmabuf, dma_buf_attachment* attach) = nullptr;
    void (*detach)(dma_buf* dmabuf, dma_buf_attachment* attach) = nullptr;
    // The buffer's pages for the attached device (a table the importer gives back through
    // unmap_dma_buf), or ERR_PTR. Called with the resv held. Mandatory for attachments.
    sg_table* (*map_dma_buf)(dma_buf_attachment* attach, dma_data_direction dir) = nullptr;
    void (*unmap_dma_buf)(dma_buf_attachment* attach, sg_table* sgt, dma_data_direction dir) = nullptr;
    // The last reference went (the last descriptor closed): the exporter drops what it holds.
    void (*release)(dma_buf* dmabuf) = nullptr;
    // DMA_BUF_IOCTL_SYNC start / end: cache maintenance of the exporter. Optional.
    int (*begin_cpu_access)(dma_buf* dmabuf, dma_data_direction dir) = nullptr;
    int (*end_cpu_access)(dma_buf* dmabuf, dma_data_direction dir) = nullptr;
    // mmap(2) of the descriptor: `vma` is the mapping (a drm::VmArea for DRM exporters), its
    // page offset already checked against the size. Unset: -EINVAL, as upstream.
    int (*mmap)(dma_buf* dmabuf, vm_area_struct* vma) = nullptr;
    // A kernel CPU mapping of the whole buffer (resv held). Optional.
    int (*vmap)(dma_buf* dmabuf, void** vaddr) = nullptr;
    void (*vunmap)(dma_buf* dmabuf, void* vaddr) = nullptr;
};

// struct dma_buf_attachment: one device's use of a dma_buf.
struct dma_buf_attachment {
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> node;  // resv
    dma_buf* dmabuf = nullptr;
    void* dev = nullptr;   // the importing device
    void* priv = nullptr;  // the exporter's
};
using dma_buf_attachment_list = boost::intrusive::list<
    dma_buf_attachment,
    boost::intrusive::member_hook<dma_buf_attachment, decltype(dma_buf_attachment::node), &dma_buf_attachment::node>,
    boost::intrusive::constant_time_size<false>>;

struct dma_buf {
    struct file* file = nullptr;  // its references are the dma_buf's
    size_t size = 0;
    const dma_buf_ops* ops = nullptr;
    void* priv = nullptr;
    dma_resv* resv = nullptr;  // the exporter's
    int flags = 0;             // O_* of the export (DRM_CLOEXEC | DRM_RDWR)
    const char* exp_name = nullptr;
    // Under resv: live attachments (upstream's list), and the shared kernel mapping.
    unsigned attachments = 0;
    dma_buf_attachment_list attachment_list;  // the live attachments, for exporters' CPU-access hooks
    unsigned vmapping_counter = 0;
    void* vmap_ptr = nullptr;
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

// A new dma_buf with one reference for the caller; ERR_PTR(-EINVAL) for missing ops (release and
// map_dma_buf/unmap_dma_buf are mandatory, as upstream), a null priv or resv; ERR_PTR(-ENOMEM).
dma_buf* dma_buf_export(const dma_buf_export_info* exp_info);
// get_dma_buf: another reference (the file's get_file).
inline void get_dma_buf(dma_buf* dmabuf) {
    get_file(dmabuf->file);
}
// dma_buf_put: fput of the file. The last reference runs ops->release, then frees the dma_buf
// (dma_buf_file_release). WARNs if attachments or a vmap are left (each holds no reference of its
// own, as upstream).
void dma_buf_put(dma_buf* dmabuf);
// A new descriptor on the current table naming dmabuf, with the caller's reference (kept only
// on success); flags: O_CLOEXEC. The fd or -errno (-EINVAL for a null dmabuf).
int dma_buf_fd(dma_buf* dmabuf, int flags);
// The dma_buf behind fd (a new reference): ERR_PTR(-EBADF) for a closed descriptor,
// ERR_PTR(-EINVAL) for one that is not a dma-buf.
dma_buf* dma_buf_get(int fd);
bool is_dma_buf_file(file* f);

// include/uapi/linux/dma-buf.h: DMA_BUF_IOCTL_SYNC.
struct dma_buf_sync {
    u64 flags;
};
inline constexpr u64 DMA_BUF_SYNC_READ = 1u << 0;
inline constexpr u64 DMA_BUF_SYNC_WRITE = 2u << 0;
inline constexpr u64 DMA_BUF_SYNC_RW = DMA_BUF_SYNC_READ | DMA_BUF_SYNC_WRITE;
inline constexpr u64 DMA_BUF_SYNC_START = 0u << 2;
inline constexpr u64 DMA_BUF_SYNC_END = 1u << 2;
inline constexpr u64 DMA_BUF_SYNC_VALID_FLAGS_MASK = DMA_BUF_SYNC_RW | DMA_BUF_SYNC_END;
inline constexpr unsigned DMA_BUF_IOCTL_SYNC = (1u << 30) | (sizeof(dma_buf_sync) << 16) | ('b' << 8) | 0;
static_assert(DMA_BUF_IOCTL_SYNC == 0x40086200u);
// The file's unlocked_ioctl: DMA_BUF_IOCTL_SYNC (-EINVAL for unknown flags or no direction,
// -EFAULT) begins or ends a CPU access; every other command -ENOTTY (SET_NAME,
// EXPORT/IMPORT_SYNC_FILE are not served).
long dma_buf_ioctl(dma_buf* dmabuf, unsigned cmd, u64 arg);

// dma_buf_attach: `dev` attaches; the attachment or ERR_PTR (-EINVAL for a null argument, the
// exporter's attach error, -ENOMEM). The importer holds its own dma_buf reference meanwhile.
dma_buf_attachment* dma_buf_attach(dma_buf* dmabuf, void* dev);
void dma_buf_detach(dma_buf* dmabuf, dma_buf_attachment* attach);
// The exporter's pages for the attachment (resv held; _unlocked takes it): ERR_PTR(-errno),
// -ENOMEM if the exporter gives none.
sg_table* dma_buf_map_attachment(dma_buf_attachment* attach, dma_data_direction dir);
sg_table* dma_buf_map_attachment_unlocked(dma_buf_attachment* attach, dma_data_direction dir);
void dma_buf_unmap_attachment(dma_buf_attachment* attach, sg_table* sgt, dma_data_direction dir);
void dma_buf_unmap_attachment_unlocked(dma_buf_attachment* attach, sg_table* sgt, dma_data_direction dir);

// dma_buf_vmap / vunmap (resv held): one exporter mapping shared by every user (counted).
// -EINVAL without a vmap op.
int dma_buf_vmap(dma_buf* dmabuf, void** vaddr);
void dma_buf_vunmap(dma_buf* dmabuf, void* vaddr);

// The CPU accesses the buffer (DMA_BUF_IOCTL_SYNC): begin waits, interruptibly, for the fences a
// CPU access of `dir` must not overtake (writers for a read; everything for a write), after the
// exporter's own hook. 0 or -errno (-ERESTARTSYS on a signal).
int dma_buf_begin_cpu_access(dma_buf* dmabuf, dma_data_direction dir);
int dma_buf_end_cpu_access(dma_buf* dmabuf, dma_data_direction dir);

// dma_buf_mmap_internal (the file's mmap): -EINVAL without an mmap op or when the mapping
// overruns the buffer; else the exporter's mmap.
int dma_buf_mmap_internal(file* filp, vm_area_struct* vma);

// Live dma_bufs and attachments (leak checks).
long dma_buf_live();
long dma_buf_attachments_live();

}  // namespace kshim
