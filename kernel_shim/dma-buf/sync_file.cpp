// Mirrors drivers/dma-buf/sync_file.c (see sync_file.h).
#include "kernel_shim/dma-buf/sync_file.h"

#include <cstdio>
#include <cstring>

#include "kernel_shim/dma-buf/dma-fence-unwrap.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/slab.h"
#include "uapi/linux/sync_file.h"

namespace kshim {
namespace {
void copy_name(char* dst, size_t size, const char* src) {
    std::snprintf(dst, size, "%s", src ? src : "");
}

int sync_file_release(file* filp) {
    auto* sf = static_cast<sync_file*>(filp->private_data);
    if (sf->poll_enabled.load(std::memory_order_acquire))
        dma_fence_remove_callback(sf->fence, &sf->cb);
    dma_fence_put(sf->fence);
    kdelete(sf);
    return 0;
}

long sync_file_file_ioctl(file* filp, unsigned int cmd, unsigned long arg) {
    return sync_file_ioctl(static_cast<sync_file*>(filp->private_data), cmd, arg);
}

void fence_check_cb_func(dma_fence*, dma_fence_cb* cb) {
    sync_file* sf = container_of(cb, sync_file, cb);
    sf->wq.wake_up_all();
}

__poll_t sync_file_file_poll(file* filp, poll_table* wait) {
    auto* sf = static_cast<sync_file*>(filp->private_data);
    poll_wait(filp, &sf->wq, wait);
    if (!dma_fence_cb_pending(&sf->cb) && !sf->poll_enabled.exchange(true, std::memory_order_acq_rel)) {
        if (dma_fence_add_callback(sf->fence, &sf->cb, fence_check_cb_func) < 0)
            sf->wq.wake_up_all();
    }
    return dma_fence_is_signaled(sf->fence) ? EPOLLIN : 0;
}

const file_operations sync_file_fops = {
    .release = sync_file_release,
    .unlocked_ioctl = sync_file_file_ioctl,
    .poll = sync_file_file_poll,
};

}  // namespace

sync_file* sync_file_create(dma_fence* fence) {
    auto* sf = knew<sync_file>(GFP_KERNEL);
    if (!sf)
        return nullptr;
    sf->file = anon_inode_getfile("sync_file", &sync_file_fops, sf, 0);
    if (IS_ERR(sf->file)) {
        kdelete(sf);
        return nullptr;
    }
    sf->fence = dma_fence_get(fence);
    return sf;
}

sync_file* sync_file_get(sync_file* file) {
    get_file(file->file);
    return file;
}

void sync_file_put(sync_file* file) {
    if (!file)
        return;
    fput(file->file);
}

bool is_sync_file(struct file* f) {
    return f->f_op == &sync_file_fops;
}

sync_file* sync_file_fdget(int fd) {
    file* f = fget(fd);
    if (!f)
        return nullptr;
    if (!is_sync_file(f)) {
        fput(f);
        return nullptr;
    }
    return static_cast<sync_file*>(f->private_data);
}

unsigned int sync_file_poll(sync_file* file) {
    return vfs_poll(file->file, nullptr) & EPOLLIN;
}

dma_fence* sync_file_get_fence(sync_file* file) {
    return dma_fence_get(file->fence);
}

const char* sync_file_get_name(sync_file* file, char* buf, int len) {
    if (file->user_name[0]) {
        copy_name(buf, static_cast<size_t>(len), file->user_name);
    } else {
        dma_fence* f = file->fence;
        std::snprintf(buf, static_cast<size_t>(len), "%s-%s%llu-%llu", dma_fence_driver_name(f),
                      dma_fence_timeline_name(f), static_cast<unsigned long long>(f->context),
                      static_cast<unsigned long long>(f->seqno));
    }
    return buf;
}

void sync_file_set_name(sync_file* file, const char* name) {
    copy_name(file->user_name, sizeof file->user_name, name);
}

sync_file* sync_file_merge(const char* name, sync_file* a, sync_file* b) {
    dma_fence* fence = dma_fence_unwrap_merge(a->fence, b->fence);
    if (!fence)
        return nullptr;
    sync_file* file = sync_file_create(fence);
    dma_fence_put(fence);
    if (!file)
        return nullptr;
    sync_file_set_name(file, name);
    return file;
}

int sync_file_get_status(sync_file* file) {
    return dma_fence_get_status(file->fence);
}

int sync_file_get_fence_info(sync_file* file, sync_fence_info* info, u32* num_fences) {
    dma_fence_unwrap iter;
    dma_fence* fence;
    u32 count = 0;
    dma_fence_unwrap_for_each(fence, &iter, file->fence)++ count;
    if (*num_fences == 0) {
        *num_fences = count;
        return 0;
    }
    if (*num_fences < count)
        return -EINVAL;
    u32 i = 0;
    dma_fence_unwrap_for_each(fence, &iter, file->fence) {
        sync_fence_info& fi = info[i++];
        std::memset(&fi, 0, sizeof fi);
        copy_name(fi.obj_name, sizeof fi.obj_name, dma_fence_timeline_name(fence));
        copy_name(fi.driver_name, sizeof fi.driver_name, dma_fence_driver_name(fence));
        fi.status = dma_fence_get_status(fence);
        fi.timestamp_ns = fi.status ? static_cast<u64>(dma_fence_timestamp(fence)) : 0;
    }
    *num_fences = count;
    return 0;
}

using namespace drm::uapi;

static long sync_file_ioctl_merge(sync_file* file, u64 arg) {
    sync_merge_data data;
    if (copy_from_user(&data, arg, sizeof data))
        return -EFAULT;
    if (data.flags || data.pad)
        return -EINVAL;
    sync_file* fence2 = sync_file_fdget(data.fd2);
    if (!fence2)
        return -ENOENT;
    data.name[sizeof data.name - 1] = '\0';
    sync_file* fence3 = sync_file_merge(data.name, file, fence2);
    sync_file_put(fence2);
    if (!fence3)
        return -ENOMEM;
    return sync_file_fd_to_user(fence3, arg, data);
}

static long sync_file_ioctl_fence_info(sync_file* file, u64 arg) {
    sync_file_info info;
    if (copy_from_user(&info, arg, sizeof info))
        return -EFAULT;
    if (info.flags || info.pad)
        return -EINVAL;

    dma_fence_unwrap iter;
    dma_fence* fence;
    u32 num_fences = 0;
    dma_fence_unwrap_for_each(fence, &iter, file->fence) {
        ++num_fences;
    }

    sync_fence_info* fence_info = nullptr;
    long ret = 0;
    // num_fences == 0 asks for the count only, with the status of the whole file.
    if (!info.num_fences) {
        info.status = dma_fence_get_status(file->fence);
    } else {
        if (info.num_fences < num_fences)
            return -EINVAL;
        size_t size = num_fences * sizeof(sync_fence_info);
        fence_info = static_cast<sync_fence_info*>(kzalloc(size, GFP_KERNEL));
        if (!fence_info)
            return -ENOMEM;
        u32 filled = num_fences;
        ret = sync_file_get_fence_info(file, fence_info, &filled);
        if (!ret) {
            // The first error wins; otherwise pending (0) beats signalled (1).
            info.status = 1;
            for (u32 i = 0; i < filled; i++)
                info.status = info.status <= 0 ? info.status : fence_info[i].status;
            if (copy_to_user(info.sync_fence_info, fence_info, size))
                ret = -EFAULT;
        }
    }
    if (!ret) {
        sync_file_get_name(file, info.name, sizeof info.name);
        info.num_fences = num_fences;
        if (copy_to_user(arg, &info, sizeof info))
            ret = -EFAULT;
    }
    kfree(fence_info);
    return ret;
}

static long sync_file_ioctl_set_deadline(sync_file* file, u64 arg) {
    sync_set_deadline ts;
    if (copy_from_user(&ts, arg, sizeof ts))
        return -EFAULT;
    if (ts.pad)
        return -EINVAL;
    dma_fence_set_deadline(file->fence, static_cast<ktime_t>(ts.deadline_ns));
    return 0;
}

long sync_file_ioctl(sync_file* file, unsigned int cmd, u64 arg) {
    switch (cmd) {
    case SYNC_IOC_MERGE: return sync_file_ioctl_merge(file, arg);
    case SYNC_IOC_FILE_INFO: return sync_file_ioctl_fence_info(file, arg);
    case SYNC_IOC_SET_DEADLINE: return sync_file_ioctl_set_deadline(file, arg);
    default: return -ENOTTY;
    }
}

// ---- poll through an eventfd ----

struct sync_file_poll_waiter {
    dma_fence_cb cb;
    dma_fence* fence = nullptr;  // one reference
    eventfd_ctx* ctx = nullptr;  // one reference
};

static void eventfd_waiter_cb_func(dma_fence*, dma_fence_cb* cb) {
    sync_file_poll_waiter* w = container_of(cb, sync_file_poll_waiter, cb);
    eventfd_signal(w->ctx);
}

sync_file_poll_waiter* sync_file_poll_eventfd_arm(sync_file* file, eventfd_ctx* ctx) {
    auto* w = knew<sync_file_poll_waiter>(GFP_KERNEL);
    if (!w)
        return nullptr;
    w->fence = sync_file_get_fence(file);
    w->ctx = eventfd_ctx_get(ctx);
    if (dma_fence_add_callback(w->fence, &w->cb, eventfd_waiter_cb_func) < 0)
        eventfd_signal(w->ctx);
    return w;
}

void sync_file_poll_eventfd_disarm(sync_file_poll_waiter* w) {
    if (!w)
        return;
    // A callback that already ran is off the list: removing it again is a no-op.
    dma_fence_remove_callback(w->fence, &w->cb);
    dma_fence_put(w->fence);
    eventfd_ctx_put(w->ctx);
    kdelete(w);
}

}  // namespace kshim
