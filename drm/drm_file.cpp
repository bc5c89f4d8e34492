// Mirrors drivers/gpu/drm/drm_file.c (open/release) plus the in-process fd table (see drm_file.h).
#include "drm/drm_file.h"

#include <atomic>

#include <climits>

#include "drm/syncobj.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;

int drm_open(Device* dev, File** out, bool render) {
    if (dev->is_unplugged()) return -ENODEV;
    File* file = knew<File>(GFP_KERNEL);
    if (!file) return -ENOMEM;
    file->dev = dev;
    file->is_render = render;
    // drm_file_alloc: a process-wide counter, so ids are never reused.
    static std::atomic<u64> next_client_id{1};
    file->client_id = next_client_id.fetch_add(1, std::memory_order_relaxed);
    drm_prime_init_file_private(&file->prime);
    file->gem.prime_ctx = file;
    file->gem.prime_remove = [](void* ctx, u32 handle) {
        drm_prime_remove_buf_handle(&static_cast<File*>(ctx)->prime, handle);
    };
    if (dev->driver().open) {
        int ret = dev->driver().open(dev, file);
        if (ret) {
            drm_prime_destroy_file_private(&file->prime);
            kdelete(file);
            return ret;
        }
    }
    *out = file;
    return 0;
}

void drm_release(File* file) {
    Device* dev = file->dev;
    if (dev->driver().postclose) dev->driver().postclose(dev, file);
    // drm_file_free: GEM handles first (drm_gem_release), then syncobjs (drm_syncobj_release).
    file->gem.release();
    drm_syncobj_release(file);
    drm_prime_destroy_file_private(&file->prime);
    kdelete(file);
}

// ---- fd table ----
namespace {

struct FdEntry {
    drm_syncobj* syncobj = nullptr;
    sync_file* sfile = nullptr;
    dma_buf* dmabuf = nullptr;
};

struct FdTable {
    // Protects the lookup-then-get against a concurrent close.
    SpinLock lock{"drm_fd_table.lock"};
    XArray<FdEntry> fds;
};

FdTable& fd_table() {
    static FdTable* t = new FdTable();
    return *t;
}

std::atomic<const DrmFdOps*> g_fd_ops{nullptr};

int fd_install(FdEntry* e) {
    if (const DrmFdOps* ops = g_fd_ops.load(std::memory_order_acquire)) {
        const int fd = ops->install(e->sfile);
        if (fd < 0) return fd;
        FdEntry* old;
        {
            SpinGuard g(fd_table().lock);
            old = fd_table().fds.store(static_cast<u32>(fd), e);
        }
        WARN_ON(old);  // the process reused a number whose export was never forgotten
        return fd;
    }
    u32 fd;
    int ret = fd_table().fds.alloc(&fd, e, XaLimit{3, INT_MAX}, GFP_KERNEL);
    if (ret) return ret == -EBUSY ? -EMFILE : ret;
    return static_cast<int>(fd);
}

}  // namespace

int drm_fd_install_syncobj(drm_syncobj* syncobj) {
    FdEntry* e = knew<FdEntry>(GFP_KERNEL);
    if (!e) return -ENOMEM;
    e->syncobj = drm_syncobj_get(syncobj);
    int fd = fd_install(e);
    if (fd < 0) {
        drm_syncobj_put(e->syncobj);
        kdelete(e);
    }
    return fd;
}

int drm_fd_install_sync_file(sync_file* file) {
    FdEntry* e = knew<FdEntry>(GFP_KERNEL);
    if (!e) return -ENOMEM;
    e->sfile = sync_file_get(file);
    int fd = fd_install(e);
    if (fd < 0) {
        sync_file_put(e->sfile);
        kdelete(e);
    }
    return fd;
}

int drm_fd_install_dma_buf(dma_buf* dmabuf) {
    FdEntry* e = knew<FdEntry>(GFP_KERNEL);
    if (!e) return -ENOMEM;
    get_dma_buf(dmabuf);
    e->dmabuf = dmabuf;
    int fd = fd_install(e);
    if (fd < 0) {
        dma_buf_put(e->dmabuf);
        kdelete(e);
    }
    return fd;
}

// A descriptor the caller passed in, as the number its export was installed under.
static int resolve_fd(int fd) {
    if (fd < 0) return -EBADF;
    const DrmFdOps* ops = g_fd_ops.load(std::memory_order_acquire);
    return ops ? ops->resolve(fd) : fd;
}

drm_syncobj* drm_fd_get_syncobj(int fd) {
    fd = resolve_fd(fd);
    if (fd < 0) return nullptr;
    FdTable& t = fd_table();
    SpinGuard g(t.lock);
    FdEntry* e = t.fds.load(static_cast<u32>(fd));
    return e && e->syncobj ? drm_syncobj_get(e->syncobj) : nullptr;
}

sync_file* drm_fd_get_sync_file(int fd) {
    fd = resolve_fd(fd);
    if (fd < 0) return nullptr;
    FdTable& t = fd_table();
    SpinGuard g(t.lock);
    FdEntry* e = t.fds.load(static_cast<u32>(fd));
    return e && e->sfile ? sync_file_get(e->sfile) : nullptr;
}

dma_buf* drm_fd_get_dma_buf(int fd) {
    fd = resolve_fd(fd);
    if (fd < 0) return ERR_PTR<dma_buf>(fd == -EINVAL ? -EINVAL : -EBADF);
    FdTable& t = fd_table();
    SpinGuard g(t.lock);
    FdEntry* e = t.fds.load(static_cast<u32>(fd));
    if (!e) return ERR_PTR<dma_buf>(-EBADF);
    if (!e->dmabuf) return ERR_PTR<dma_buf>(-EINVAL);
    get_dma_buf(e->dmabuf);
    return e->dmabuf;
}

void drm_fd_set_ops(const DrmFdOps* ops) { g_fd_ops.store(ops, std::memory_order_release); }

size_t drm_fd_count() { return fd_table().fds.size(); }

int drm_fd_close(int fd) {
    const DrmFdOps* ops = g_fd_ops.load(std::memory_order_acquire);
    if (ops) fd = ops->resolve(fd);
    const int ret = drm_fd_forget(fd);
    if (!ret && ops) ops->close(fd);
    return ret;
}

int drm_fd_forget(int fd) {
    if (fd < 0) return -EBADF;
    FdTable& t = fd_table();
    FdEntry* e;
    {
        SpinGuard g(t.lock);
        e = t.fds.erase(static_cast<u32>(fd));
    }
    if (!e) return -EBADF;
    if (e->syncobj) drm_syncobj_put(e->syncobj);
    if (e->sfile) sync_file_put(e->sfile);
    dma_buf_put(e->dmabuf);
    kdelete(e);
    return 0;
}

}  // namespace drm
