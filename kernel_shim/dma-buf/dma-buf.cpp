// Mirrors drivers/dma-buf/dma-buf.c: dma_buf_export, the release on the last put, attachments
// and their mapping, vmap, CPU access and mmap (see dma-buf.h).
#include "kernel_shim/dma-buf/dma-buf.h"

#include <atomic>

#include <fcntl.h>

#include "kernel_shim/err.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/time.h"
#include "kernel_shim/uaccess.h"

namespace kshim {

namespace {
std::atomic<long> g_dma_buf_live{0};
std::atomic<long> g_attach_live{0};

// dma_buf_file_release: the last reference went.
int dma_buf_file_release(file* filp) {
    auto* dmabuf = static_cast<dma_buf*>(filp->private_data);
    // An importer detaches (and vunmaps) before it drops its reference.
    WARN_ON(dmabuf->vmapping_counter);
    WARN_ON(dmabuf->attachments);
    // dma_buf_release: the exporter lets go of its buffer before the dma_buf goes.
    dmabuf->ops->release(dmabuf);
    kdelete(dmabuf);
    g_dma_buf_live.fetch_sub(1, std::memory_order_relaxed);
    return 0;
}

long dma_buf_file_ioctl(file* filp, unsigned int cmd, unsigned long arg) {
    return dma_buf_ioctl(static_cast<dma_buf*>(filp->private_data), cmd, arg);
}

const file_operations dma_buf_fops = {
    .release = dma_buf_file_release,
    .unlocked_ioctl = dma_buf_file_ioctl,
    .mmap = dma_buf_mmap_internal,
};
}  // namespace

bool is_dma_buf_file(file* f) {
    return f->f_op == &dma_buf_fops;
}

dma_buf* dma_buf_export(const dma_buf_export_info* exp_info) {
    const dma_buf_ops* ops = exp_info->ops;
    if (!ops || !ops->release || !ops->map_dma_buf || !ops->unmap_dma_buf || !exp_info->priv || !exp_info->resv)
        return ERR_PTR<dma_buf>(-EINVAL);
    auto* dmabuf = knew<dma_buf>(GFP_KERNEL);
    if (!dmabuf)
        return ERR_PTR<dma_buf>(-ENOMEM);
    // dma_buf_getfile: the export's access mode is the file's (O_RDWR with DRM_RDWR).
    dmabuf->file = anon_inode_getfile("dmabuf", &dma_buf_fops, dmabuf, exp_info->flags & (O_ACCMODE | O_NONBLOCK));
    if (IS_ERR(dmabuf->file)) {
        kdelete(dmabuf);
        return ERR_PTR<dma_buf>(-ENOMEM);
    }
    dmabuf->size = exp_info->size;
    dmabuf->ops = ops;
    dmabuf->priv = exp_info->priv;
    dmabuf->resv = exp_info->resv;
    dmabuf->flags = exp_info->flags;
    dmabuf->exp_name = exp_info->exp_name;
    g_dma_buf_live.fetch_add(1, std::memory_order_relaxed);
    return dmabuf;
}

void dma_buf_put(dma_buf* dmabuf) {
    if (!dmabuf)
        return;
    fput(dmabuf->file);
}

int dma_buf_fd(dma_buf* dmabuf, int flags) {
    if (!dmabuf || !dmabuf->file)
        return -EINVAL;
    const int fd = get_unused_fd_flags(static_cast<unsigned int>(flags));
    if (fd < 0)
        return fd;
    fd_install(fd, dmabuf->file);
    return fd;
}

dma_buf* dma_buf_get(int fd) {
    file* f = fget(fd);
    if (!f)
        return ERR_PTR<dma_buf>(-EBADF);
    if (!is_dma_buf_file(f)) {
        fput(f);
        return ERR_PTR<dma_buf>(-EINVAL);
    }
    return static_cast<dma_buf*>(f->private_data);
}

long dma_buf_ioctl(dma_buf* dmabuf, unsigned cmd, u64 arg) {
    if (cmd != DMA_BUF_IOCTL_SYNC)
        return -ENOTTY;
    dma_buf_sync sync;
    if (copy_from_user(&sync, arg, sizeof(sync)))
        return -EFAULT;
    if (sync.flags & ~DMA_BUF_SYNC_VALID_FLAGS_MASK)
        return -EINVAL;
    dma_data_direction dir;
    switch (sync.flags & DMA_BUF_SYNC_RW) {
    case DMA_BUF_SYNC_READ: dir = DMA_FROM_DEVICE; break;
    case DMA_BUF_SYNC_WRITE: dir = DMA_TO_DEVICE; break;
    case DMA_BUF_SYNC_RW: dir = DMA_BIDIRECTIONAL; break;
    default: return -EINVAL;
    }
    return (sync.flags & DMA_BUF_SYNC_END) ? dma_buf_end_cpu_access(dmabuf, dir)
                                           : dma_buf_begin_cpu_access(dmabuf, dir);
}

dma_buf_attachment* dma_buf_attach(dma_buf* dmabuf, void* dev) {
    if (WARN_ON(!dmabuf || !dev))
        return ERR_PTR<dma_buf_attachment>(-EINVAL);
    auto* attach = knew<dma_buf_attachment>(GFP_KERNEL);
    if (!attach)
        return ERR_PTR<dma_buf_attachment>(-ENOMEM);
    attach->dmabuf = dmabuf;
    attach->dev = dev;
    if (dmabuf->ops->attach) {
        // Outside the resv: a GEM exporter pins its pages here, which takes it.
        const int ret = dmabuf->ops->attach(dmabuf, attach);
        if (ret) {
            kdelete(attach);
            return ERR_PTR<dma_buf_attachment>(ret);
        }
    }
    dma_resv_lock(dmabuf->resv, nullptr);
    dmabuf->attachments++;
    dmabuf->attachment_list.push_back(*attach);
    dma_resv_unlock(dmabuf->resv);
    g_attach_live.fetch_add(1, std::memory_order_relaxed);
    return attach;
}

void dma_buf_detach(dma_buf* dmabuf, dma_buf_attachment* attach) {
    if (WARN_ON(!dmabuf || !attach || attach->dmabuf != dmabuf))
        return;
    dma_resv_lock(dmabuf->resv, nullptr);
    WARN_ON(dmabuf->attachments == 0);
    dmabuf->attachments--;
    dmabuf->attachment_list.erase(dmabuf->attachment_list.iterator_to(*attach));
    dma_resv_unlock(dmabuf->resv);
    if (dmabuf->ops->detach)
        dmabuf->ops->detach(dmabuf, attach);
    kdelete(attach);
    g_attach_live.fetch_sub(1, std::memory_order_relaxed);
}

sg_table* dma_buf_map_attachment(dma_buf_attachment* attach, dma_data_direction dir) {
    if (WARN_ON(!attach || !attach->dmabuf))
        return ERR_PTR<sg_table>(-EINVAL);
    dma_resv_assert_held(attach->dmabuf->resv);
    sg_table* sgt = attach->dmabuf->ops->map_dma_buf(attach, dir);
    if (!sgt)
        return ERR_PTR<sg_table>(-ENOMEM);
    return sgt;
}

sg_table* dma_buf_map_attachment_unlocked(dma_buf_attachment* attach, dma_data_direction dir) {
    if (WARN_ON(!attach || !attach->dmabuf))
        return ERR_PTR<sg_table>(-EINVAL);
    dma_resv_lock(attach->dmabuf->resv, nullptr);
    sg_table* sgt = dma_buf_map_attachment(attach, dir);
    dma_resv_unlock(attach->dmabuf->resv);
    return sgt;
}

void dma_buf_unmap_attachment(dma_buf_attachment* attach, sg_table* sgt, dma_data_direction dir) {
    if (WARN_ON(!attach || !attach->dmabuf || !sgt))
        return;
    dma_resv_assert_held(attach->dmabuf->resv);
    attach->dmabuf->ops->unmap_dma_buf(attach, sgt, dir);
}

void dma_buf_unmap_attachment_unlocked(dma_buf_attachment* attach, sg_table* sgt, dma_data_direction dir) {
    if (WARN_ON(!attach || !attach->dmabuf || !sgt))
        return;
    dma_resv_lock(attach->dmabuf->resv, nullptr);
    dma_buf_unmap_attachment(attach, sgt, dir);
    dma_resv_unlock(attach->dmabuf->resv);
}

int dma_buf_vmap(dma_buf* dmabuf, void** vaddr) {
    *vaddr = nullptr;
    if (WARN_ON(!dmabuf))
        return -EINVAL;
    dma_resv_assert_held(dmabuf->resv);
    if (!dmabuf->ops->vmap)
        return -EINVAL;
    if (dmabuf->vmapping_counter) {
        dmabuf->vmapping_counter++;
        *vaddr = dmabuf->vmap_ptr;
        return 0;
    }
    void* ptr = nullptr;
    const int ret = dmabuf->ops->vmap(dmabuf, &ptr);
    if (WARN_ON_ONCE(ret))
        return ret;
    dmabuf->vmap_ptr = ptr;
    dmabuf->vmapping_counter = 1;
    *vaddr = ptr;
    return 0;
}

void dma_buf_vunmap(dma_buf* dmabuf, void* vaddr) {
    if (WARN_ON(!dmabuf))
        return;
    dma_resv_assert_held(dmabuf->resv);
    if (WARN_ON(!dmabuf->vmapping_counter || dmabuf->vmap_ptr != vaddr))
        return;
    if (--dmabuf->vmapping_counter)
        return;
    if (dmabuf->ops->vunmap)
        dmabuf->ops->vunmap(dmabuf, vaddr);
    dmabuf->vmap_ptr = nullptr;
}

int dma_buf_begin_cpu_access(dma_buf* dmabuf, dma_data_direction dir) {
    if (WARN_ON(!dmabuf))
        return -EINVAL;
    int ret = dmabuf->ops->begin_cpu_access ? dmabuf->ops->begin_cpu_access(dmabuf, dir) : 0;
    if (ret)
        return ret;
    // The implicit fences: a CPU write must not overtake readers either.
    const bool write = dir == DMA_BIDIRECTIONAL || dir == DMA_TO_DEVICE;
    const long wret = dma_resv_wait_timeout(dmabuf->resv, dma_resv_usage_rw(write), true, MAX_SCHEDULE_TIMEOUT);
    return wret < 0 ? static_cast<int>(wret) : 0;
}

int dma_buf_end_cpu_access(dma_buf* dmabuf, dma_data_direction dir) {
    if (WARN_ON(!dmabuf))
        return -EINVAL;
    return dmabuf->ops->end_cpu_access ? dmabuf->ops->end_cpu_access(dmabuf, dir) : 0;
}

int dma_buf_mmap_internal(file* filp, vm_area_struct* vma) {
    auto* dmabuf = static_cast<dma_buf*>(filp->private_data);
    const u64 pgoff = vma->vm_pgoff;
    const u64 npages = vma->length >> PAGE_SHIFT;
    if (!dmabuf->ops->mmap)
        return -EINVAL;
    const u64 pages = dmabuf->size >> PAGE_SHIFT;
    if (pgoff > pages || npages > pages - pgoff)
        return -EINVAL;
    return dmabuf->ops->mmap(dmabuf, vma);
}

long dma_buf_live() {
    return g_dma_buf_live.load(std::memory_order_relaxed);
}
long dma_buf_attachments_live() {
    return g_attach_live.load(std::memory_order_relaxed);
}

}  // namespace kshim
