// Mirrors include/drm/drm_syncobj.h and drivers/gpu/drm/drm_syncobj.c: sync objects.
//
// DOC: A syncobj is a container for a fence. Binary syncobjs hold one fence (or none); the
// handle-level operations replace it (signal: an already-signalled stub; reset: none).
// Timeline syncobjs hold the head of a dma_fence_chain; each link is a point, added by
// drm_syncobj_add_point, and point 0 means "the fence itself" (the binary slot). Waiters that
// find no fence yet (WAIT_FOR_SUBMIT / WAIT_AVAILABLE) queue a syncobj_wait_entry on cb_list;
// every replace_fence / add_point re-checks them under the syncobj lock and wakes the task once
// the point it wants has a fence. A waiter keeps the fences it captured: replacing the fence of
// a syncobj does not change what an ongoing wait waits for.
//
// Deviation: the kernel reads syncobj->fence under RCU; we take the syncobj lock for the read.
#pragma once
#include <atomic>
#include <boost/intrusive/list.hpp>

#include "drm/drm_device.h"
#include "drm/drm_syncobj_eventfd.h"
#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/spinlock.h"

namespace drm {

using kshim::dma_fence;
using kshim::dma_fence_chain;
using kshim::s64;

struct drm_file;

// One waiter's interest in one syncobj (struct syncobj_wait_entry).
struct syncobj_wait_entry {
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> node;
    kshim::Task* task = nullptr;
    // Written by replace_fence/add_point under the syncobj lock while the waiter polls it.
    std::atomic<dma_fence*> fence{nullptr};
    kshim::dma_fence_cb fence_cb;
    u64 point = 0;
    bool queued = false;  // was put on a cb_list (only the waiter reads or writes this)
};
using syncobj_wait_list = boost::intrusive::list<
    syncobj_wait_entry,
    boost::intrusive::member_hook<syncobj_wait_entry, decltype(syncobj_wait_entry::node), &syncobj_wait_entry::node>,
    boost::intrusive::constant_time_size<false>>;

struct drm_syncobj {
    kshim::kref refcount;
    // Protects fence (the pointer and its reference) and cb_list.
    kshim::SpinLock lock{"drm_syncobj.lock"};
    dma_fence* fence = nullptr;       // one reference; a dma_fence_chain head on timelines
    syncobj_wait_list cb_list;        // waiters for a fence (point) that is not there yet
    syncobj_eventfd_list ev_fd_list;  // SYNCOBJ_EVENTFD entries whose point has no fence yet
};

// ---- kernel API ----
// DRM_SYNCOBJ_CREATE_SIGNALED in flags: starts with a signalled stub; else with `fence` (may be
// null). 0, -ENOMEM.
int drm_syncobj_create(drm_syncobj** out, u32 flags, dma_fence* fence);
inline drm_syncobj* drm_syncobj_get(drm_syncobj* s) {
    kshim::kref_get(&s->refcount);
    return s;
}
void drm_syncobj_free(kshim::kref* kref);
inline void drm_syncobj_put(drm_syncobj* s) {
    kshim::kref_put(&s->refcount, drm_syncobj_free);
}
// drm_syncobj_handle_to_fd's second half: a new descriptor on the current table naming a
// "syncobj_file" that holds its own reference to syncobj. The fd or -errno.
int drm_syncobj_fd_install(drm_syncobj* syncobj);
// The syncobj behind a descriptor (a new reference), or nullptr when it is closed or not a
// syncobj file.
drm_syncobj* drm_syncobj_fdget(int fd);
// A new reference to the current fence (nullptr when none).
dma_fence* drm_syncobj_fence_get(drm_syncobj* syncobj);
// Looks a handle up in file; a new reference or nullptr.
drm_syncobj* drm_syncobj_find(drm_file* file, u32 handle);
// A new handle in file for syncobj (takes its own reference). 0, -ENOMEM, -ENOSPC.
int drm_syncobj_get_handle(drm_file* file, drm_syncobj* syncobj, u32* handle);
// Drops the file's handle: 0 or -EINVAL for an unknown handle.
int drm_syncobj_destroy(drm_file* file, u32 handle);
// Replaces the fence (binary slot); a null fence resets. Wakes waiters that can now proceed.
void drm_syncobj_replace_fence(drm_syncobj* syncobj, dma_fence* fence);
// Adds `fence` as timeline point `point` using the preallocated `chain` (which it consumes).
void drm_syncobj_add_point(drm_syncobj* syncobj, dma_fence_chain* chain, dma_fence* fence, u64 point);
// The fence a waiter for (handle, point) must wait for; flags: 0 or WAIT_FOR_SUBMIT (waits up to
// 5 s for the point to get a fence). 0 with a reference in *fence (a signalled stub when the
// point already signalled); -ENOENT (handle), -EINVAL (no fence / point past the head, or bad
// flags), -ETIME (WAIT_FOR_SUBMIT timed out).
int drm_syncobj_find_fence(drm_file* file, u32 handle, u64 point, u64 flags, dma_fence** fence);
// Closing a file: drops all of its syncobj handles.
void drm_syncobj_release(drm_file* file);

// Waits on syncobjs[0..count) at points (nullptr: all 0) with the ioctl semantics: returns the
// jiffies left (>= 0), or -ETIME, -EINVAL, -ENOMEM. *idx gets the first signalled index.
long drm_syncobj_array_wait_timeout(drm_syncobj** syncobjs, const u64* points, u32 count, u32 flags, long timeout,
                                    u32* idx, kshim::ktime_t* deadline);
// drm_timeout_abs_to_jiffies: absolute ns on the runtime clock -> jiffies (0 = poll).
long drm_timeout_abs_to_jiffies(s64 timeout_nsec);

// ---- sync_file export/import (the fd-less half of HANDLE_TO_FD / FD_TO_HANDLE) ----
// A new sync_file with the fence of (handle, point): 0, -ENOENT, -EINVAL, -ENOMEM.
int drm_syncobj_export_sync_file_obj(drm_file* file, u32 handle, u64 point, kshim::sync_file** out);
// Puts the sync_file's fence into (handle, point): point 0 replaces, else adds a point.
int drm_syncobj_import_sync_file_obj(drm_file* file, kshim::sync_file* sfile, u32 handle, u64 point);

// ---- ioctls (drm_ioctl.cpp's core table points here) ----
int drm_syncobj_create_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_destroy_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_handle_to_fd_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_fd_to_handle_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_transfer_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_wait_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_timeline_wait_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_reset_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_signal_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_timeline_signal_ioctl(drm_device* dev, void* data, drm_file* file);
int drm_syncobj_query_ioctl(drm_device* dev, void* data, drm_file* file);
// drm_syncobj_eventfd_ioctl: drm/drm_syncobj_eventfd.h

}  // namespace drm
