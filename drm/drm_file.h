// Mirrors include/drm/drm_file.h and drivers/gpu/drm/drm_file.c: per-open state of a DRM device.
//
// DOC: A File is what one open() of the device node gives: its GEM handle table, its syncobj
// handle table and the driver's private data. drm_open() runs the driver's open hook;
// drm_release() runs postclose, then drops every GEM handle and syncobj handle, then frees.
//
// fds: there is no VFS yet. Syncobj, sync_file and dma_buf exports (SYNCOBJ_HANDLE_TO_FD,
// PRIME_HANDLE_TO_FD) get numbers
// from an in-process fd table (drm_fd_*) so fences and syncobjs move between Files as they do
// between processes. The preload library plugs real descriptors in (drm_fd_set_ops): each
// export is then a real fd of the process, and the table maps its number back to the object.
#pragma once
#include "drm/drm_device.h"
#include "drm/drm_prime.h"
#include "drm/gem.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/xarray.h"

namespace kshim {
struct sync_file;
struct dma_buf;
}

namespace drm {

struct drm_syncobj;

struct File {
    Device* dev = nullptr;
    bool is_render = true;  // opened on the render node: only DRM_RENDER_ALLOW ioctls

    // object_idr + table_lock.
    GemHandleTable gem;

    // Protects the lookup-then-get of syncobj_idr against a concurrent destroy.
    kshim::SpinLock syncobj_table_lock{"drm_file.syncobj_table_lock"};
    kshim::XArray<drm_syncobj> syncobj_idr{kshim::XA_FLAGS_ALLOC1};

    // drm_file.prime: this file's (dma_buf, handle) pairs (drm/drm_prime.h).
    drm_prime_file_private prime;

    void* driver_priv = nullptr;
    // drm_file.client_id: unique per open file, for fdinfo and scheduler job ownership.
    u64 client_id = 0;
};
using drm_file = File;

// drm_open_helper: a new File on dev (render node unless render == false), after the driver's
// open hook accepted it. 0 or the hook's error / -ENOMEM / -ENODEV (unplugged).
int drm_open(Device* dev, File** out, bool render = true);
// drm_release / drm_file_free: postclose, then the GEM and syncobj handles go, then the File.
void drm_release(File* file);

// ---- the in-process fd table (stand-in for the VFS) ----
// Each installs a new fd holding its own reference; returns the fd (>= 3) or -ENOMEM/-EMFILE.
int drm_fd_install_syncobj(drm_syncobj* syncobj);
int drm_fd_install_sync_file(kshim::sync_file* file);
int drm_fd_install_dma_buf(kshim::dma_buf* dmabuf);
// A new reference to what fd holds, or nullptr when fd is closed or holds the other kind.
drm_syncobj* drm_fd_get_syncobj(int fd);
kshim::sync_file* drm_fd_get_sync_file(int fd);
// dma_buf_get: a new reference, or ERR_PTR(-EBADF) when fd is closed, ERR_PTR(-EINVAL) when it
// holds something else.
kshim::dma_buf* drm_fd_get_dma_buf(int fd);
// close(2): 0 or -EBADF.
int drm_fd_close(int fd);

// Real descriptors instead of in-process numbers (the preload library). Set before the first
// export; nullptr goes back to the in-process numbering.
struct DrmFdOps {
    // A new real descriptor for an export: its number (what drm_fd_install_* returns) or -errno.
    // `sfile` is the exported sync_file (nullptr for a syncobj or a dma_buf), so the descriptor can be made
    // pollable; it holds no reference of its own.
    int (*install)(kshim::sync_file* sfile);
    // The number an export was installed under for a descriptor a caller passes in (itself, or
    // the original of a dup); -EBADF when it is not open, -EINVAL when it is open but not an
    // export (dma_buf_get's errnos for a file of another kind).
    int (*resolve)(int fd);
    // drm_fd_close dropped the entry: close the real descriptor too.
    void (*close)(int fd);
};
void drm_fd_set_ops(const DrmFdOps* ops);
// Drops the entry and its reference without touching any real descriptor (the process closed
// the last descriptor of that export itself): 0 or -EBADF.
int drm_fd_forget(int fd);
// Live entries (leak checks at exit).
size_t drm_fd_count();

}  // namespace drm
