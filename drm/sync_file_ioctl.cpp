// Mirrors the file operations of drivers/dma-buf/sync_file.c (see drm/sync_file_ioctl.h).
#include "drm/sync_file_ioctl.h"

#include <cstring>

#include "drm/drm_file.h"
#include "drm/syncobj.h"
#include "drm/uaccess.h"
#include "drm/uapi/sync_file.h"
#include "kernel_shim/dma-buf/dma-fence-unwrap.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;
using namespace drm::uapi;

static long sync_file_ioctl_merge(sync_file* file, u64 arg) {
    sync_merge_data data;
    if (copy_from_user(&data, arg, sizeof data)) return -EFAULT;
    if (data.flags || data.pad) return -EINVAL;
    sync_file* fence2 = drm_fd_get_sync_file(data.fd2);
    if (!fence2) return -ENOENT;
    data.name[sizeof data.name - 1] = '\0';
    sync_file* fence3 = sync_file_merge(data.name, file, fence2);
    sync_file_put(fence2);
    if (!fence3) return -ENOMEM;
    return sync_file_fd_to_user(fence3, arg, data);
}

static long sync_file_ioctl_fence_info(sync_file* file, u64 arg) {
    sync_file_info info;
    if (copy_from_user(&info, arg, sizeof info)) return -EFAULT;
    if (info.flags || info.pad) return -EINVAL;

    dma_fence_unwrap iter;
    dma_fence* fence;
    u32 num_fences = 0;
    dma_fence_unwrap_for_each(fence, &iter, file->fence) { ++num_fences; }

    sync_fence_info* fence_info = nullptr;
    long ret = 0;
    // num_fences == 0 asks for the count only, with the status of the whole file.
    if (!info.num_fences) {
        info.status = dma_fence_get_status(file->fence);
    } else {
        if (info.num_fences < num_fences) return -EINVAL;
        size_t size = num_fences * sizeof(sync_fence_info);
        fence_info = static_cast<sync_fence_info*>(kzalloc(size, GFP_KERNEL));
        if (!fence_info) return -ENOMEM;
        u32 filled = num_fences;
        ret = sync_file_get_fence_info(file, fence_info, &filled);
        if (!ret) {
            // The first error wins; otherwise pending (0) beats signalled (1).
            info.status = 1;
            for (u32 i = 0; i < filled; i++) info.status = info.status <= 0 ? info.status : fence_info[i].status;
            if (copy_to_user(info.sync_fence_info, fence_info, size)) ret = -EFAULT;
        }
    }
    if (!ret) {
        sync_file_get_name(file, info.name, sizeof info.name);
        info.num_fences = num_fences;
        if (copy_to_user(arg, &info, sizeof info)) ret = -EFAULT;
    }
    kfree(fence_info);
    return ret;
}

static long sync_file_ioctl_set_deadline(sync_file* file, u64 arg) {
    sync_set_deadline ts;
    if (copy_from_user(&ts, arg, sizeof ts)) return -EFAULT;
    if (ts.pad) return -EINVAL;
    dma_fence_set_deadline(file->fence, static_cast<ktime_t>(ts.deadline_ns));
    return 0;
}

long sync_file_ioctl(sync_file* file, unsigned int cmd, u64 arg) {
    switch (cmd) {
    case SYNC_IOC_MERGE:
        return sync_file_ioctl_merge(file, arg);
    case SYNC_IOC_FILE_INFO:
        return sync_file_ioctl_fence_info(file, arg);
    case SYNC_IOC_SET_DEADLINE:
        return sync_file_ioctl_set_deadline(file, arg);
    default:
        return -ENOTTY;
    }
}

long sync_file_fd_ioctl(int fd, unsigned int cmd, u64 arg) {
    sync_file* file = drm_fd_get_sync_file(fd);
    if (!file) {
        drm_syncobj* syncobj = drm_fd_get_syncobj(fd);
        if (!syncobj) return -EBADF;
        drm_syncobj_put(syncobj);
        return -ENOTTY;
    }
    long ret = sync_file_ioctl(file, cmd, arg);
    sync_file_put(file);
    return ret;
}

unsigned int sync_file_poll(sync_file* file) { return dma_fence_is_signaled(file->fence) ? 0x1u : 0u; }

// ---- poll through an eventfd ----

struct sync_file_poll_waiter {
    dma_fence_cb cb;
    dma_fence* fence = nullptr;     // one reference
    eventfd_ctx* ctx = nullptr;     // one reference
};

static void fence_check_cb_func(dma_fence*, dma_fence_cb* cb) {
    sync_file_poll_waiter* w = container_of(cb, sync_file_poll_waiter, cb);
    eventfd_signal(w->ctx);
}

sync_file_poll_waiter* sync_file_poll_eventfd_arm(sync_file* file, eventfd_ctx* ctx) {
    auto* w = knew<sync_file_poll_waiter>(GFP_KERNEL);
    if (!w) return nullptr;
    w->fence = sync_file_get_fence(file);
    w->ctx = eventfd_ctx_get(ctx);
    if (dma_fence_add_callback(w->fence, &w->cb, fence_check_cb_func) < 0) eventfd_signal(w->ctx);
    return w;
}

void sync_file_poll_eventfd_disarm(sync_file_poll_waiter* w) {
    if (!w) return;
    // A callback that already ran is off the list: removing it again is a no-op.
    dma_fence_remove_callback(w->fence, &w->cb);
    dma_fence_put(w->fence);
    eventfd_ctx_put(w->ctx);
    kdelete(w);
}

}  // namespace drm
