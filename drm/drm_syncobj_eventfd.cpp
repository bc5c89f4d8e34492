// Mirrors the DRM_IOCTL_SYNCOBJ_EVENTFD part of drivers/gpu/drm/drm_syncobj.c (see
// drm/drm_syncobj_eventfd.h).
#include "drm/drm_syncobj_eventfd.h"

#include "drm/drm_file.h"
#include "drm/drm_syncobj.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;
using namespace drm::uapi;

void syncobj_eventfd_entry_free(syncobj_eventfd_entry* entry) {
    eventfd_ctx_put(entry->ev_fd_ctx);
    dma_fence_put(entry->fence);
    if (entry->node.is_linked())
        entry->syncobj->ev_fd_list.erase(entry->syncobj->ev_fd_list.iterator_to(*entry));
    kdelete(entry);
}

// Runs inside the fence's signal (its lock held): the entry is off ev_fd_list already.
static void syncobj_eventfd_entry_fence_func(dma_fence*, dma_fence_cb* cb) {
    syncobj_eventfd_entry* entry = container_of(cb, syncobj_eventfd_entry, fence_cb);
    eventfd_signal(entry->ev_fd_ctx);
    syncobj_eventfd_entry_free(entry);
}

void syncobj_eventfd_entry_func(drm_syncobj* syncobj, syncobj_eventfd_entry* entry) {
    lockdep_assert_held(&syncobj->lock);
    dma_fence* fence = dma_fence_get(syncobj->fence);
    if (!fence)
        return;
    if (dma_fence_chain_find_seqno(&fence, entry->point)) {
        // The point has not been submitted yet: stay on the list for the next fence.
        dma_fence_put(fence);
        return;
    }
    // A null fence with success means the point signalled and later points exist: the stub
    // still lets the eventfd fire below.
    if (!fence)
        fence = dma_fence_get_stub();

    syncobj->ev_fd_list.erase(syncobj->ev_fd_list.iterator_to(*entry));
    entry->fence = fence;
    if (entry->flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE) {
        eventfd_signal(entry->ev_fd_ctx);
        syncobj_eventfd_entry_free(entry);
        return;
    }
    if (dma_fence_add_callback(fence, &entry->fence_cb, syncobj_eventfd_entry_fence_func) == -ENOENT) {
        eventfd_signal(entry->ev_fd_ctx);
        syncobj_eventfd_entry_free(entry);
    }
}

// drm_syncobj_add_eventfd
static void drm_syncobj_add_eventfd(drm_syncobj* syncobj, syncobj_eventfd_entry* entry) {
    SpinGuard g(syncobj->lock);
    syncobj->ev_fd_list.push_back(*entry);
    syncobj_eventfd_entry_func(syncobj, entry);
}

int drm_syncobj_eventfd_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<uapi::drm_syncobj_eventfd*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ_TIMELINE))
        return -EOPNOTSUPP;
    if (args->flags & ~DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE)
        return -EINVAL;
    if (args->pad)
        return -EINVAL;

    drm_syncobj* syncobj = drm_syncobj_find(file, args->handle);
    if (!syncobj)
        return -ENOENT;
    eventfd_ctx* ev_fd_ctx = eventfd_ctx_fdget(args->fd);
    if (IS_ERR(ev_fd_ctx)) {
        drm_syncobj_put(syncobj);
        return static_cast<int>(PTR_ERR(ev_fd_ctx));
    }
    auto* entry = knew<syncobj_eventfd_entry>(GFP_KERNEL);
    if (!entry) {
        eventfd_ctx_put(ev_fd_ctx);
        drm_syncobj_put(syncobj);
        return -ENOMEM;
    }
    entry->syncobj = syncobj;
    entry->ev_fd_ctx = ev_fd_ctx;
    entry->point = args->point;
    entry->flags = args->flags;
    drm_syncobj_add_eventfd(syncobj, entry);
    drm_syncobj_put(syncobj);
    return 0;
}

}  // namespace drm
