// Mirrors drivers/gpu/drm/drm_file.c (open/release, drm_fops' poll and read; see drm_file.h).
#include "drm/drm_file.h"

#include <fcntl.h>

#include <atomic>
#include <climits>

#include "drm/drm_auth.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/err.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;

int drm_open(drm_device* dev, drm_file** out, bool render) {
    if (dev->is_unplugged())
        return -ENODEV;
    drm_file* file = knew<drm_file>(GFP_KERNEL);
    if (!file)
        return -ENOMEM;
    file->dev = dev;
    file->is_render = render;
    // drm_file_alloc: a process-wide counter, so ids are never reused.
    static std::atomic<u64> next_client_id{1};
    file->client_id = next_client_id.fetch_add(1, std::memory_order_relaxed);
    file->pid = task_tgid_nr(current());
    file->authenticated = capable(CAP_SYS_ADMIN);
    drm_prime_init_file_private(&file->prime);
    file->gem.prime_ctx = file;
    file->gem.owner = file;
    file->gem.prime_remove = [](void* ctx, u32 handle) {
        drm_prime_remove_buf_handle(&static_cast<drm_file*>(ctx)->prime, handle);
    };
    if (dev->driver().open) {
        int ret = dev->driver().open(dev, file);
        if (ret) {
            drm_prime_destroy_file_private(&file->prime);
            kdelete(file);
            return ret;
        }
    }
    // drm_open_helper: a primary-node client joins the current master, or becomes it.
    if (!render) {
        const int ret = drm_master_open(file);
        if (ret) {
            drm_release(file);
            return ret;
        }
    }
    *out = file;
    return 0;
}

void drm_release(drm_file* file) {
    drm_device* dev = file->dev;
    if (dev->driver().postclose)
        dev->driver().postclose(dev, file);
    // drm_file_free: GEM handles first (drm_gem_release), then syncobjs (drm_syncobj_release).
    file->gem.release();
    drm_syncobj_release(file);
    drm_prime_destroy_file_private(&file->prime);
    if (!file->is_render)
        drm_master_release(file);
    kdelete(file);
}

// ---- files ----
namespace {

int drm_fop_release(kshim::file* filp) {
    drm_release(static_cast<drm_file*>(filp->private_data));
    return 0;
}

long drm_fop_ioctl(kshim::file* filp, unsigned int cmd, unsigned long arg) {
    return drm_ioctl(static_cast<drm_file*>(filp->private_data), cmd, arg);
}

// drm_poll: only DRM events make a file readable, and none is ever queued here.
__poll_t drm_poll(kshim::file* filp, poll_table* wait) {
    auto* file = static_cast<drm_file*>(filp->private_data);
    poll_wait(filp, &file->event_wait, wait);
    return 0;
}

// drm_read: waits for an event (none ever comes), -EAGAIN without blocking, -ERESTARTSYS on a
// signal.
long drm_read(kshim::file* filp, u64, size_t, kshim::loff_t*) {
    auto* file = static_cast<drm_file*>(filp->private_data);
    if (filp->f_flags & O_NONBLOCK)
        return -EAGAIN;
    return wait_event_interruptible(file->event_wait, false);
}

}  // namespace

const kshim::file_operations drm_fops = {
    .release = drm_fop_release,
    .unlocked_ioctl = drm_fop_ioctl,
    .mmap = drm_fop_mmap,
    .poll = drm_poll,
    .read = drm_read,
};

kshim::file* drm_open_file(drm_device* dev, bool render, int flags) {
    const kshim::file_operations* fops = dev->driver().fops ? dev->driver().fops : &drm_fops;
    kshim::file* filp = alloc_file(fops, static_cast<unsigned int>(flags) & (O_ACCMODE | O_NONBLOCK), nullptr,
                                   render ? "renderD128" : "card0");
    if (!filp)
        return ERR_PTR<kshim::file>(-ENOMEM);
    drm_file* file = nullptr;
    if (int ret = drm_open(dev, &file, render)) {
        // A failed open never reaches release: the bare file goes (its f_op->release is not run).
        filp->f_op = nullptr;
        fput(filp);
        return ERR_PTR<kshim::file>(ret);
    }
    file->filp = filp;
    filp->private_data = file;
    return filp;
}

drm_file* drm_file_from(kshim::file* filp) {
    // A driver's own fops still release through drm_release (upstream's drivers all do).
    if (!filp->f_op || filp->f_op->release != drm_fops.release)
        return nullptr;
    return static_cast<drm_file*>(filp->private_data);
}

// ---- descriptors ----

int drm_fd_install_syncobj(drm_syncobj* syncobj) {
    return drm_syncobj_fd_install(syncobj);
}

int drm_fd_install_sync_file(sync_file* file) {
    const int fd = get_unused_fd_flags(O_CLOEXEC);
    if (fd < 0)
        return fd;
    fd_install(fd, get_file(file->file));
    return fd;
}

int drm_fd_install_dma_buf(dma_buf* dmabuf) {
    get_dma_buf(dmabuf);
    const int fd = dma_buf_fd(dmabuf, O_CLOEXEC);
    if (fd < 0)
        dma_buf_put(dmabuf);
    return fd;
}

drm_syncobj* drm_fd_get_syncobj(int fd) {
    return drm_syncobj_fdget(fd);
}
sync_file* drm_fd_get_sync_file(int fd) {
    return sync_file_fdget(fd);
}
dma_buf* drm_fd_get_dma_buf(int fd) {
    return dma_buf_get(fd);
}
int drm_fd_close(int fd) {
    return close_fd(fd);
}
size_t drm_fd_count() {
    return fd_count();
}

}  // namespace drm
