// Mirrors include/drm/drm_file.h and drivers/gpu/drm/drm_file.c: per-open state of a DRM device.
//
// DOC: A File is what one open() of the device node gives: its GEM handle table, its syncobj
// handle table and the driver's private data. drm_open() runs the driver's open hook;
// drm_release() runs postclose, then drops every GEM handle and syncobj handle, then frees.
//
// fds: there is no VFS yet. Syncobj and sync_file exports (SYNCOBJ_HANDLE_TO_FD) get numbers
// from an in-process fd table (drm_fd_*) so fences and syncobjs move between Files as they do
// between processes; the preload library will map these onto real fds.
#pragma once
#include "drm/drm_device.h"
#include "drm/gem.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/xarray.h"

namespace kshim {
struct sync_file;
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
// A new reference to what fd holds, or nullptr when fd is closed or holds the other kind.
drm_syncobj* drm_fd_get_syncobj(int fd);
kshim::sync_file* drm_fd_get_sync_file(int fd);
// close(2): 0 or -EBADF.
int drm_fd_close(int fd);

}  // namespace drm
