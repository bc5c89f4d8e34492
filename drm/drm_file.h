// Mirrors include/drm/drm_file.h and drivers/gpu/drm/drm_file.c: per-open state of a DRM device.
//
// DOC: A File is what one open() of the device node gives: its GEM handle table, its syncobj
// handle table and the driver's private data. drm_open() runs the driver's open hook;
// drm_release() runs postclose, then drops every GEM handle and syncobj handle, then frees.
//
// A File is the private_data of a `struct file` (kernel_shim/fs/file.h) when it was opened as
// one (drm_open_file): that file's operations are the driver's fops, by default drm_fops
// (release, unlocked_ioctl, mmap, poll, read), and its last fput releases the File. In-process
// callers (tests, the UMD's in-process backend) may use a bare File from drm_open instead.
// Exports (SYNCOBJ_HANDLE_TO_FD, PRIME_HANDLE_TO_FD) are files of their own on the current
// descriptor table (kernel_shim/fs/fdtable.h).
#pragma once
#include "drm/drm_device.h"
#include "drm/drm_gem.h"
#include "drm/drm_prime.h"
#include "kernel_shim/fs/file.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/xarray.h"

namespace kshim {
struct sync_file;
struct dma_buf;
}  // namespace kshim

namespace drm {

struct drm_syncobj;

struct drm_file {
    drm_device* dev = nullptr;
    bool is_render = true;  // opened on the render node: only DRM_RENDER_ALLOW ioctls

    // object_idr + table_lock.
    GemHandleTable gem;

    // Protects the lookup-then-get of syncobj_idr against a concurrent destroy.
    kshim::SpinLock syncobj_table_lock{"drm_file.syncobj_table_lock"};
    kshim::XArray<drm_syncobj> syncobj_idr{kshim::XA_FLAGS_ALLOC1};

    // drm_file.prime: this file's (dma_buf, handle) pairs (drm/drm_prime.h).
    drm_prime_file_private prime;

    void* driver_priv = nullptr;
    // drm_file.filp: the struct file this File is the private_data of (nullptr for a bare File).
    kshim::file* filp = nullptr;
    // drm_file.event_wait: readers of DRM events. No event is ever queued here (no KMS, no
    // DRM_EVENT_*), so read(2) blocks or gives -EAGAIN, and poll reports nothing.
    kshim::wait_queue_head event_wait;
    // drm_file.client_id: unique per open file, for fdinfo and scheduler job ownership.
    u64 client_id = 0;
    // drm_file.pid: the process that opened the file (task_tgid_nr of the opener).
    int pid = 0;

    // The DRM master and authentication (drm/drm_auth.h), for primary-node files.
    // authenticated: may use DRM_AUTH ioctls (a master, a client its master authenticated, or an
    // opener with CAP_SYS_ADMIN). is_master: has been the device's master with its own
    // drm_master; was_master: has held the master role (SET/DROP_MASTER without privileges).
    bool authenticated = false;
    bool is_master = false;
    bool was_master = false;
    u32 magic = 0;  // from GET_MAGIC, 0 before
    // master_lookup_lock protects master against drm_new_set_master (readers without
    // dev->master_mutex); writers hold both.
    kshim::SpinLock master_lookup_lock{"drm_file.master_lookup_lock"};
    drm_master* master = nullptr;
};
using drm_file = drm_file;

// drm_open_helper: a new File on dev (render node unless render == false), after the driver's
// open hook accepted it. 0 or the hook's error / -ENOMEM / -ENODEV (unplugged).
int drm_open(drm_device* dev, drm_file** out, bool render = true);
// drm_release / drm_file_free: postclose, then the GEM and syncobj handles go, then the File.
void drm_release(drm_file* file);

// ---- files (drm_fops) ----
// The DRM core's file operations: release (drm_release), unlocked_ioctl (drm_ioctl), mmap
// (the driver's mmap hook or drm_gem_mmap), poll and read (drm_poll, drm_read).
extern const kshim::file_operations drm_fops;
// open(2) of one of dev's nodes (render or primary): a file with dev's fops (DriverDesc::fops,
// else drm_fops) whose private_data is a new File; `flags` are open(2)'s (O_ACCMODE,
// O_NONBLOCK). One reference, or ERR_PTR(drm_open's errno).
kshim::file* drm_open_file(drm_device* dev, bool render, int flags);
// The File of a DRM file, or nullptr for a file of another kind.
drm_file* drm_file_from(kshim::file* filp);

// ---- descriptors of the current table, for in-process callers and tests ----
// Each installs a new descriptor holding its own reference; the fd or -errno.
int drm_fd_install_syncobj(drm_syncobj* syncobj);
int drm_fd_install_sync_file(kshim::sync_file* file);
int drm_fd_install_dma_buf(kshim::dma_buf* dmabuf);
// A new reference to what fd holds, or nullptr when fd is closed or holds another kind.
drm_syncobj* drm_fd_get_syncobj(int fd);
kshim::sync_file* drm_fd_get_sync_file(int fd);
// dma_buf_get: a new reference, or ERR_PTR(-EBADF) when fd is closed, ERR_PTR(-EINVAL) when it
// holds something else.
kshim::dma_buf* drm_fd_get_dma_buf(int fd);
// close(2): 0 or -EBADF.
int drm_fd_close(int fd);
// Open descriptors of the current table (leak checks).
size_t drm_fd_count();

}  // namespace drm
