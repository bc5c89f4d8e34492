// Mirrors the DRM_IOCTL_SYNCOBJ_EVENTFD part of drivers/gpu/drm/drm_syncobj.c.
//
// DOC: SYNCOBJ_EVENTFD lets an event loop wait for a syncobj without blocking: the eventfd gets
// signalled once, when the fence at (handle, point) signals, or with WAIT_AVAILABLE as soon as
// that point has a fence. Until the point has a fence the entry sits on the syncobj's
// ev_fd_list and every replace_fence / add_point re-checks it (so a reset followed by a new
// fence re-arms it, as upstream); once it has one, the entry leaves the list and lives on the
// fence's callback. An entry still on the list when the syncobj is freed is dropped without
// signalling. Binary syncobjs use point 0 (a non-zero point on one never gets a fence, as
// upstream).
#pragma once
#include <boost/intrusive/list.hpp>

#include "drm/drm_device.h"
#include "kernel_shim/dma-buf/dma-fence.h"

namespace kshim {
struct eventfd_ctx;
}

namespace drm {

struct drm_syncobj;
struct drm_file;

struct syncobj_eventfd_entry {
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> node;
    kshim::dma_fence* fence = nullptr;  // one reference, once the point has a fence
    kshim::dma_fence_cb fence_cb;
    drm_syncobj* syncobj = nullptr;           // no reference: the entry never outlives the list it is on
    kshim::eventfd_ctx* ev_fd_ctx = nullptr;  // one reference
    u64 point = 0;
    u32 flags = 0;
};
using syncobj_eventfd_list =
    boost::intrusive::list<syncobj_eventfd_entry,
                           boost::intrusive::member_hook<syncobj_eventfd_entry, decltype(syncobj_eventfd_entry::node),
                                                         &syncobj_eventfd_entry::node>,
                           boost::intrusive::constant_time_size<false>>;

// Under syncobj->lock: arms the entry once its point has a fence (signals it at once when that
// fence already signalled, or with WAIT_AVAILABLE).
void syncobj_eventfd_entry_func(drm_syncobj* syncobj, syncobj_eventfd_entry* entry);
// Drops the entry's references, takes it off ev_fd_list if still on it (caller holds the lock
// then, or the syncobj is being freed) and frees it.
void syncobj_eventfd_entry_free(syncobj_eventfd_entry* entry);

// DRM_IOCTL_SYNCOBJ_EVENTFD: -EOPNOTSUPP without DRIVER_SYNCOBJ_TIMELINE, -EINVAL for flags other
// than WAIT_AVAILABLE or a non-zero pad, -ENOENT for an unknown handle, then eventfd_ctx_fdget's
// -EBADF / -EINVAL, -ENOMEM.
int drm_syncobj_eventfd_ioctl(drm_device* dev, void* data, drm_file* file);

}  // namespace drm
