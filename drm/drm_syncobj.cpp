// Mirrors drivers/gpu/drm/drm_syncobj.c (see drm/drm_syncobj.h for the design).
#include "drm/drm_syncobj.h"

#include <fcntl.h>

#include <climits>
#include <cstring>
#include <new>

#include "drm/drm_file.h"
#include "drm/uaccess.h"
#include "kernel_shim/dma-buf/dma-fence-unwrap.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/signal.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;
using namespace drm::uapi;

// How long find_fence(WAIT_FOR_SUBMIT) waits for a fence to appear.
static constexpr u64 DRM_SYNCOBJ_WAIT_FOR_SUBMIT_TIMEOUT = 5000000000ULL;

// ---- handles and lifetime ----

drm_syncobj* drm_syncobj_find(drm_file* file, u32 handle) {
    SpinGuard g(file->syncobj_table_lock);
    drm_syncobj* s = file->syncobj_idr.load(handle);
    return s ? drm_syncobj_get(s) : nullptr;
}

dma_fence* drm_syncobj_fence_get(drm_syncobj* syncobj) {
    SpinGuard g(syncobj->lock);
    return dma_fence_get(syncobj->fence);
}

// Caller holds syncobj->lock: hands the waiter its fence once (wait->point) has one.
static void syncobj_wait_syncobj_func(drm_syncobj* syncobj, syncobj_wait_entry* wait) {
    lockdep_assert_held(&syncobj->lock);
    dma_fence* fence = dma_fence_get(syncobj->fence);
    if (!fence || dma_fence_chain_find_seqno(&fence, wait->point)) {
        dma_fence_put(fence);
        return;
    }
    if (!fence)
        fence = dma_fence_get_stub();
    syncobj->cb_list.erase(syncobj->cb_list.iterator_to(*wait));
    wait->fence.store(fence, std::memory_order_release);
    wake_up_process(wait->task);
}

static void drm_syncobj_fence_add_wait(drm_syncobj* syncobj, syncobj_wait_entry* wait) {
    if (wait->fence.load(std::memory_order_acquire))
        return;
    SpinGuard g(syncobj->lock);
    // Try once more under the lock, so no callback is queued after a fence was set.
    dma_fence* fence = dma_fence_get(syncobj->fence);
    if (!fence || dma_fence_chain_find_seqno(&fence, wait->point)) {
        dma_fence_put(fence);
        wait->queued = true;
        syncobj->cb_list.push_back(*wait);
    } else if (!fence) {
        wait->fence.store(dma_fence_get_stub(), std::memory_order_release);
    } else {
        wait->fence.store(fence, std::memory_order_release);
    }
}

static void drm_syncobj_remove_wait(drm_syncobj* syncobj, syncobj_wait_entry* wait) {
    if (!wait->queued)
        return;  // never put on cb_list (the kernel's !wait->node.next)
    SpinGuard g(syncobj->lock);
    if (wait->node.is_linked())
        syncobj->cb_list.erase(syncobj->cb_list.iterator_to(*wait));
}

void drm_syncobj_add_point(drm_syncobj* syncobj, dma_fence_chain* chain, dma_fence* fence, u64 point) {
    dma_fence_get(fence);
    dma_fence* prev;
    {
        SpinGuard g(syncobj->lock);
        prev = dma_fence_get(syncobj->fence);
        // An unordered point (prev->seqno >= point) is accepted as upstream does; QUERY may then
        // report 0 for it.
        dma_fence_chain_init(chain, prev, fence, point);
        syncobj->fence = &chain->base;  // the reference from init
        for (auto it = syncobj->cb_list.begin(); it != syncobj->cb_list.end();) {
            syncobj_wait_entry& w = *it++;
            syncobj_wait_syncobj_func(syncobj, &w);
        }
        for (auto it = syncobj->ev_fd_list.begin(); it != syncobj->ev_fd_list.end();) {
            syncobj_eventfd_entry& e = *it++;
            syncobj_eventfd_entry_func(syncobj, &e);
        }
    }
    // Walk the old head once to garbage-collect signalled links, then drop the syncobj's
    // reference to it (the chain holds its own, taken above).
    dma_fence* iter;
    dma_fence_chain_for_each(iter, prev) {}
    dma_fence_put(prev);
}

void drm_syncobj_replace_fence(drm_syncobj* syncobj, dma_fence* fence) {
    if (fence)
        dma_fence_get(fence);
    dma_fence* old;
    {
        SpinGuard g(syncobj->lock);
        old = syncobj->fence;
        syncobj->fence = fence;
        if (fence != old) {
            for (auto it = syncobj->cb_list.begin(); it != syncobj->cb_list.end();) {
                syncobj_wait_entry& w = *it++;
                syncobj_wait_syncobj_func(syncobj, &w);
            }
            for (auto it = syncobj->ev_fd_list.begin(); it != syncobj->ev_fd_list.end();) {
                syncobj_eventfd_entry& e = *it++;
                syncobj_eventfd_entry_func(syncobj, &e);
            }
        }
    }
    dma_fence_put(old);
}

// drm_syncobj_assign_null_handle: a signalled stub (timestamped now).
static int drm_syncobj_assign_null_handle(drm_syncobj* syncobj) {
    dma_fence* fence = dma_fence_allocate_private_stub(ktime_get());
    if (!fence)
        return -ENOMEM;
    drm_syncobj_replace_fence(syncobj, fence);
    dma_fence_put(fence);
    return 0;
}

int drm_syncobj_find_fence(drm_file* file, u32 handle, u64 point, u64 flags, dma_fence** fence) {
    if (flags & ~static_cast<u64>(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT))
        return -EINVAL;
    drm_syncobj* syncobj = drm_syncobj_find(file, handle);
    if (!syncobj)
        return -ENOENT;
    // Waiting for userspace with locks held could deadlock: complain early.
    if (flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)
        might_sleep();

    int ret;
    *fence = drm_syncobj_fence_get(syncobj);
    if (*fence) {
        ret = dma_fence_chain_find_seqno(fence, point);
        if (!ret) {
            // The point already signalled: give the recipient a signalled fence, not null.
            if (!*fence)
                *fence = dma_fence_get_stub();
            drm_syncobj_put(syncobj);
            return 0;
        }
        dma_fence_put(*fence);
        *fence = nullptr;
    } else {
        ret = -EINVAL;
    }

    if (flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT) {
        long timeout = static_cast<long>(nsecs_to_jiffies(DRM_SYNCOBJ_WAIT_FOR_SUBMIT_TIMEOUT));
        syncobj_wait_entry wait;
        wait.task = current();
        wait.point = point;
        drm_syncobj_fence_add_wait(syncobj, &wait);
        for (;;) {
            set_current_state(TASK_INTERRUPTIBLE);
            if (wait.fence.load(std::memory_order_acquire)) {
                ret = 0;
                break;
            }
            if (timeout == 0) {
                ret = -ETIME;
                break;
            }
            if (signal_pending(current())) {
                ret = -ERESTARTSYS;
                break;
            }
            timeout = schedule_timeout(timeout);
        }
        __set_current_state(TASK_RUNNING);
        drm_syncobj_remove_wait(syncobj, &wait);
        *fence = wait.fence.load(std::memory_order_acquire);
    }
    drm_syncobj_put(syncobj);
    return ret;
}

void drm_syncobj_free(kref* kref) {
    drm_syncobj* syncobj = container_of(kref, drm_syncobj, refcount);
    drm_syncobj_replace_fence(syncobj, nullptr);
    // Entries still waiting for their point never fire: nobody can add a fence any more.
    while (!syncobj->ev_fd_list.empty())
        syncobj_eventfd_entry_free(&syncobj->ev_fd_list.front());
    kdelete(syncobj);
}

int drm_syncobj_create(drm_syncobj** out, u32 flags, dma_fence* fence) {
    drm_syncobj* syncobj = knew<drm_syncobj>(GFP_KERNEL);
    if (!syncobj)
        return -ENOMEM;
    if (flags & DRM_SYNCOBJ_CREATE_SIGNALED) {
        int ret = drm_syncobj_assign_null_handle(syncobj);
        if (ret) {
            drm_syncobj_put(syncobj);
            return ret;
        }
    }
    if (fence)
        drm_syncobj_replace_fence(syncobj, fence);
    *out = syncobj;
    return 0;
}

int drm_syncobj_get_handle(drm_file* file, drm_syncobj* syncobj, u32* handle) {
    drm_syncobj_get(syncobj);
    int ret;
    {
        // idr_preload + GFP_NOWAIT under the table lock, as upstream.
        SpinGuard g(file->syncobj_table_lock);
        ret = file->syncobj_idr.alloc(handle, syncobj, XaLimit{1, INT_MAX}, GFP_NOWAIT);
    }
    if (ret) {
        drm_syncobj_put(syncobj);
        return ret == -EBUSY ? -ENOSPC : ret;
    }
    return 0;
}

int drm_syncobj_destroy(drm_file* file, u32 handle) {
    drm_syncobj* syncobj;
    {
        SpinGuard g(file->syncobj_table_lock);
        syncobj = file->syncobj_idr.erase(handle);
    }
    if (!syncobj)
        return -EINVAL;
    drm_syncobj_put(syncobj);
    return 0;
}

void drm_syncobj_release(drm_file* file) {
    file->syncobj_idr.for_each([&](u32 id, drm_syncobj* s) {
        file->syncobj_idr.erase(id);
        drm_syncobj_put(s);
    });
}

// ---- sync_file export/import ----

int drm_syncobj_export_sync_file_obj(drm_file* file, u32 handle, u64 point, sync_file** out) {
    dma_fence* fence;
    int ret = drm_syncobj_find_fence(file, handle, point, 0, &fence);
    if (ret)
        return ret;
    sync_file* sf = sync_file_create(fence);
    dma_fence_put(fence);
    if (!sf)
        return -EINVAL;  // upstream's errno for a failed sync_file_create
    *out = sf;
    return 0;
}

int drm_syncobj_import_sync_file_obj(drm_file* file, sync_file* sfile, u32 handle, u64 point) {
    dma_fence* fence = sfile ? sync_file_get_fence(sfile) : nullptr;
    if (!fence)
        return -EINVAL;
    drm_syncobj* syncobj = drm_syncobj_find(file, handle);
    if (!syncobj) {
        dma_fence_put(fence);
        return -ENOENT;
    }
    int ret = 0;
    if (point) {
        // A sync_file exported from a timeline point holds a chain link. Upstream wraps it as is;
        // the shim's dma_fence_chain forbids a link inside a link (WARN), so flatten it first,
        // as TRANSFER does (the merged fence signals exactly when the original does).
        dma_fence* flat = dma_fence_unwrap_merge(fence);
        dma_fence_put(fence);
        fence = flat;
        dma_fence_chain* chain = fence ? dma_fence_chain_alloc() : nullptr;
        if (!chain)
            ret = -ENOMEM;
        else
            drm_syncobj_add_point(syncobj, chain, fence, point);
    } else {
        drm_syncobj_replace_fence(syncobj, fence);
    }
    dma_fence_put(fence);
    drm_syncobj_put(syncobj);
    return ret;
}

// ---- ioctls ----

int drm_syncobj_create_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<uapi::drm_syncobj_create*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ))
        return -EOPNOTSUPP;
    // No valid flags beyond CREATE_SIGNALED.
    if (args->flags & ~DRM_SYNCOBJ_CREATE_SIGNALED)
        return -EINVAL;
    drm_syncobj* syncobj;
    int ret = drm::drm_syncobj_create(&syncobj, args->flags, nullptr);
    if (ret)
        return ret;
    ret = drm_syncobj_get_handle(file, syncobj, &args->handle);
    drm_syncobj_put(syncobj);
    return ret;
}

int drm_syncobj_destroy_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<uapi::drm_syncobj_destroy*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ))
        return -EOPNOTSUPP;
    if (args->pad)
        return -EINVAL;
    return drm::drm_syncobj_destroy(file, args->handle);
}

// ---- the syncobj's file (SYNCOBJ_HANDLE_TO_FD) ----
namespace {

int drm_syncobj_file_release(kshim::file* filp) {
    drm_syncobj_put(static_cast<drm_syncobj*>(filp->private_data));
    return 0;
}

const kshim::file_operations drm_syncobj_file_fops = {.release = drm_syncobj_file_release};

}  // namespace

int drm_syncobj_fd_install(drm_syncobj* syncobj) {
    const int fd = get_unused_fd_flags(O_CLOEXEC);
    if (fd < 0)
        return fd;
    kshim::file* f = anon_inode_getfile("syncobj_file", &drm_syncobj_file_fops, syncobj, 0);
    if (IS_ERR(f)) {
        put_unused_fd(fd);
        return static_cast<int>(PTR_ERR(f));
    }
    drm_syncobj_get(syncobj);
    fd_install(fd, f);
    return fd;
}

drm_syncobj* drm_syncobj_fdget(int fd) {
    kshim::file* f = fget(fd);
    if (!f)
        return nullptr;
    drm_syncobj* syncobj =
        f->f_op == &drm_syncobj_file_fops ? drm_syncobj_get(static_cast<drm_syncobj*>(f->private_data)) : nullptr;
    fput(f);
    return syncobj;
}

int drm_syncobj_handle_to_fd_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_handle*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ))
        return -EOPNOTSUPP;
    if (args->pad)
        return -EINVAL;
    if (args->flags & ~(DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE | DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE))
        return -EINVAL;
    // `point` is only read with the TIMELINE flag, so old userspace's garbage there is ignored.
    u64 point = (args->flags & DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE) ? args->point : 0;
    if (args->flags & DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE) {
        sync_file* sf;
        int ret = drm_syncobj_export_sync_file_obj(file, args->handle, point, &sf);
        if (ret)
            return ret;
        // drm_syncobj_export_sync_file: the number first, then the file goes in.
        const int fd = get_unused_fd_flags(O_CLOEXEC);
        if (fd < 0) {
            sync_file_put(sf);
            return fd;
        }
        fd_install(fd, sf->file);
        args->fd = fd;
        return 0;
    }
    if (point)
        return -EINVAL;  // a point only makes sense for a sync_file
    // drm_syncobj_handle_to_fd: the syncobj itself becomes shareable.
    drm_syncobj* syncobj = drm_syncobj_find(file, args->handle);
    if (!syncobj)
        return -EINVAL;
    int fd = drm_syncobj_fd_install(syncobj);
    drm_syncobj_put(syncobj);
    if (fd < 0)
        return fd;
    args->fd = fd;
    return 0;
}

int drm_syncobj_fd_to_handle_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_handle*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ))
        return -EOPNOTSUPP;
    if (args->pad)
        return -EINVAL;
    if (args->flags & ~(DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE | DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE))
        return -EINVAL;
    u64 point = (args->flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE) ? args->point : 0;
    if (args->flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE) {
        sync_file* sf = sync_file_fdget(args->fd);
        if (!sf)
            return -EINVAL;
        int ret = drm_syncobj_import_sync_file_obj(file, sf, args->handle, point);
        sync_file_put(sf);
        return ret;
    }
    if (point)
        return -EINVAL;
    // drm_syncobj_fd_to_handle: a bad fd or one that is not a syncobj gives -EINVAL.
    drm_syncobj* syncobj = drm_syncobj_fdget(args->fd);
    if (!syncobj)
        return -EINVAL;
    int ret = drm_syncobj_get_handle(file, syncobj, &args->handle);
    drm_syncobj_put(syncobj);
    return ret;
}

static int drm_syncobj_transfer_to_timeline(drm_file* file, drm_syncobj_transfer* args) {
    drm_syncobj* timeline = drm_syncobj_find(file, args->dst_handle);
    if (!timeline)
        return -ENOENT;
    dma_fence* tmp;
    int ret = drm_syncobj_find_fence(file, args->src_handle, args->src_point, args->flags, &tmp);
    if (ret) {
        drm_syncobj_put(timeline);
        return ret;
    }
    dma_fence* fence = dma_fence_unwrap_merge(tmp);
    dma_fence_put(tmp);
    if (!fence) {
        drm_syncobj_put(timeline);
        return -ENOMEM;
    }
    dma_fence_chain* chain = dma_fence_chain_alloc();
    if (!chain)
        ret = -ENOMEM;
    else
        drm_syncobj_add_point(timeline, chain, fence, args->dst_point);
    dma_fence_put(fence);
    drm_syncobj_put(timeline);
    return ret;
}

static int drm_syncobj_transfer_to_binary(drm_file* file, drm_syncobj_transfer* args) {
    drm_syncobj* binary = drm_syncobj_find(file, args->dst_handle);
    if (!binary)
        return -ENOENT;
    dma_fence* fence;
    int ret = drm_syncobj_find_fence(file, args->src_handle, args->src_point, args->flags, &fence);
    if (!ret) {
        drm_syncobj_replace_fence(binary, fence);
        dma_fence_put(fence);
    }
    drm_syncobj_put(binary);
    return ret;
}

int drm_syncobj_transfer_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_transfer*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ_TIMELINE))
        return -EOPNOTSUPP;
    if (args->pad)
        return -EINVAL;
    return args->dst_point ? drm_syncobj_transfer_to_timeline(file, args) : drm_syncobj_transfer_to_binary(file, args);
}

// kmalloc_array for a user-controlled count. The kernel's kmalloc fails (with an allocation
// warning) above KMALLOC_MAX_SIZE, so a huge count_handles is -ENOMEM there; the shim's kmalloc
// has no such limit and would try to allocate gigabytes (found by fuzz_ioctl).
static void* kmalloc_user_array(u64 count, size_t size) {
    constexpr u64 KMALLOC_MAX_SIZE = u64{1} << 22;  // x86-64: MAX_PAGE_ORDER 10, 4 KiB pages
    if (count && size > KMALLOC_MAX_SIZE / count)
        return nullptr;
    return kmalloc(count * size, GFP_KERNEL);
}

// drm_syncobj_array_find: copies the handles and looks every one up before anything changes.
static int drm_syncobj_array_find(drm_file* file, u64 user_handles, u32 count, drm_syncobj*** out) {
    u32* handles = static_cast<u32*>(kmalloc_user_array(count, sizeof(u32)));
    if (!handles)
        return -ENOMEM;
    if (copy_from_user(handles, user_handles, sizeof(u32) * count)) {
        kfree(handles);
        return -EFAULT;
    }
    auto** syncobjs = static_cast<drm_syncobj**>(kmalloc_user_array(count, sizeof(drm_syncobj*)));
    if (!syncobjs) {
        kfree(handles);
        return -ENOMEM;
    }
    for (u32 i = 0; i < count; i++) {
        syncobjs[i] = drm_syncobj_find(file, handles[i]);
        if (!syncobjs[i]) {
            while (i--)
                drm_syncobj_put(syncobjs[i]);
            kfree(syncobjs);
            kfree(handles);
            return -ENOENT;
        }
    }
    kfree(handles);
    *out = syncobjs;
    return 0;
}

static void drm_syncobj_array_free(drm_syncobj** syncobjs, u32 count) {
    for (u32 i = 0; i < count; i++)
        drm_syncobj_put(syncobjs[i]);
    kfree(syncobjs);
}

long drm_timeout_abs_to_jiffies(s64 timeout_nsec) {
    // 0 means poll: an absolute 0 is not a meaningful deadline.
    if (timeout_nsec == 0)
        return 0;
    ktime_t now = ktime_get();
    if (timeout_nsec <= now)
        return 0;
    u64 timeout_jiffies64 = nsecs_to_jiffies(static_cast<u64>(timeout_nsec - now));
    // Clamp so that a huge timeout is not MAX_SCHEDULE_TIMEOUT (infinite).
    if (timeout_jiffies64 >= static_cast<u64>(MAX_SCHEDULE_TIMEOUT) - 1)
        return MAX_SCHEDULE_TIMEOUT - 1;
    return static_cast<long>(timeout_jiffies64) + 1;
}

static void syncobj_wait_fence_func(dma_fence*, dma_fence_cb* cb) {
    syncobj_wait_entry* wait = container_of(cb, syncobj_wait_entry, fence_cb);
    wake_up_process(wait->task);
}

long drm_syncobj_array_wait_timeout(drm_syncobj** syncobjs, const u64* points, u32 count, u32 flags, long timeout,
                                    u32* idx, ktime_t* deadline) {
    if (flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT)
        might_sleep();
    auto* entries = static_cast<syncobj_wait_entry*>(kmalloc_user_array(count, sizeof(syncobj_wait_entry)));
    if (!entries)
        return -ENOMEM;
    for (u32 i = 0; i < count; i++)
        new (&entries[i]) syncobj_wait_entry();

    const bool want_all = flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    const bool available = flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE;
    const bool may_wait_submit =
        flags & (DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE);

    // Capture every fence up front, so -EINVAL for a missing fence can only come now and the
    // wait keeps these fences whatever later happens to the syncobjs.
    u32 signaled_count = 0;
    for (u32 i = 0; i < count; i++) {
        entries[i].task = current();
        entries[i].point = points ? points[i] : 0;
        dma_fence* fence = drm_syncobj_fence_get(syncobjs[i]);
        if (!fence || dma_fence_chain_find_seqno(&fence, entries[i].point)) {
            dma_fence_put(fence);
            if (may_wait_submit)
                continue;
            timeout = -EINVAL;
            goto cleanup_entries;
        }
        if (!fence)
            fence = dma_fence_get_stub();
        entries[i].fence.store(fence, std::memory_order_relaxed);
        if (available || dma_fence_is_signaled(fence)) {
            if (signaled_count == 0 && idx)
                *idx = i;
            signaled_count++;
        }
    }
    if (signaled_count == count || (signaled_count > 0 && !want_all))
        goto cleanup_entries;

    if (may_wait_submit)
        for (u32 i = 0; i < count; i++)
            drm_syncobj_fence_add_wait(syncobjs[i], &entries[i]);

    if (deadline) {
        for (u32 i = 0; i < count; i++) {
            dma_fence* fence = entries[i].fence.load(std::memory_order_acquire);
            if (fence)
                dma_fence_set_deadline(fence, *deadline);
        }
    }

    for (;;) {
        set_current_state(TASK_INTERRUPTIBLE);
        signaled_count = 0;
        for (u32 i = 0; i < count; i++) {
            dma_fence* fence = entries[i].fence.load(std::memory_order_acquire);
            if (!fence)
                continue;
            if (available || dma_fence_is_signaled(fence) ||
                (!entries[i].fence_cb.func &&
                 dma_fence_add_callback(fence, &entries[i].fence_cb, syncobj_wait_fence_func))) {
                if (want_all) {
                    signaled_count++;
                } else {
                    if (idx)
                        *idx = i;
                    goto done_waiting;
                }
            }
        }
        if (signaled_count == count)
            goto done_waiting;
        if (timeout == 0) {
            timeout = -ETIME;
            goto done_waiting;
        }
        if (signal_pending(current())) {
            timeout = -ERESTARTSYS;
            goto done_waiting;
        }
        timeout = schedule_timeout(timeout);
    }

done_waiting:
    __set_current_state(TASK_RUNNING);
cleanup_entries:
    for (u32 i = 0; i < count; i++) {
        drm_syncobj_remove_wait(syncobjs[i], &entries[i]);
        dma_fence* fence = entries[i].fence.load(std::memory_order_acquire);
        if (entries[i].fence_cb.func)
            dma_fence_remove_callback(fence, &entries[i].fence_cb);
        dma_fence_put(fence);
        entries[i].~syncobj_wait_entry();
    }
    kfree(entries);
    return timeout;
}

static int drm_syncobj_array_wait(drm_syncobj** syncobjs, u64 user_points, u32 count, u32 flags, s64 timeout_nsec,
                                  u32* first_signaled, ktime_t* deadline) {
    u64* points = nullptr;
    if (user_points) {
        points = static_cast<u64*>(kmalloc_user_array(count, sizeof(u64)));
        if (!points)
            return -ENOMEM;
        if (copy_from_user(points, user_points, sizeof(u64) * count)) {
            kfree(points);
            return -EFAULT;
        }
    }
    u32 first = ~0u;
    long timeout = drm_timeout_abs_to_jiffies(timeout_nsec);
    timeout = drm_syncobj_array_wait_timeout(syncobjs, points, count, flags, timeout, &first, deadline);
    kfree(points);
    if (timeout < 0)
        return static_cast<int>(timeout);
    *first_signaled = first;
    return 0;
}

int drm_syncobj_wait_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_wait*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ))
        return -EOPNOTSUPP;
    if (args->flags & ~(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
                        DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE))
        return -EINVAL;
    if (args->count_handles == 0)
        return 0;  // nothing to wait for (upstream: 0, not -EINVAL)
    drm_syncobj** syncobjs;
    int ret = drm_syncobj_array_find(file, args->handles, args->count_handles, &syncobjs);
    if (ret)
        return ret;
    ktime_t deadline = static_cast<ktime_t>(args->deadline_nsec);
    ret =
        drm_syncobj_array_wait(syncobjs, 0, args->count_handles, args->flags, args->timeout_nsec, &args->first_signaled,
                               (args->flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE) ? &deadline : nullptr);
    drm_syncobj_array_free(syncobjs, args->count_handles);
    return ret;
}

int drm_syncobj_timeline_wait_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_timeline_wait*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ_TIMELINE))
        return -EOPNOTSUPP;
    if (args->flags & ~(DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT |
                        DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE))
        return -EINVAL;
    if (args->count_handles == 0)
        return 0;  // nothing to wait for (upstream: 0, not -EINVAL)
    drm_syncobj** syncobjs;
    int ret = drm_syncobj_array_find(file, args->handles, args->count_handles, &syncobjs);
    if (ret)
        return ret;
    ktime_t deadline = static_cast<ktime_t>(args->deadline_nsec);
    ret = drm_syncobj_array_wait(syncobjs, args->points, args->count_handles, args->flags, args->timeout_nsec,
                                 &args->first_signaled,
                                 (args->flags & DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE) ? &deadline : nullptr);
    drm_syncobj_array_free(syncobjs, args->count_handles);
    return ret;
}

int drm_syncobj_reset_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_array*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ))
        return -EOPNOTSUPP;
    if (args->pad)
        return -EINVAL;
    if (args->count_handles == 0)
        return -EINVAL;
    drm_syncobj** syncobjs;
    int ret = drm_syncobj_array_find(file, args->handles, args->count_handles, &syncobjs);
    if (ret)
        return ret;
    for (u32 i = 0; i < args->count_handles; i++)
        drm_syncobj_replace_fence(syncobjs[i], nullptr);
    drm_syncobj_array_free(syncobjs, args->count_handles);
    return 0;
}

int drm_syncobj_signal_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_array*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ))
        return -EOPNOTSUPP;
    if (args->pad)
        return -EINVAL;
    if (args->count_handles == 0)
        return -EINVAL;
    drm_syncobj** syncobjs;
    int ret = drm_syncobj_array_find(file, args->handles, args->count_handles, &syncobjs);
    if (ret)
        return ret;
    for (u32 i = 0; i < args->count_handles; i++) {
        ret = drm_syncobj_assign_null_handle(syncobjs[i]);
        if (ret < 0)
            break;
    }
    drm_syncobj_array_free(syncobjs, args->count_handles);
    return ret;
}

int drm_syncobj_timeline_signal_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_timeline_array*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ_TIMELINE))
        return -EOPNOTSUPP;
    if (args->flags != 0)
        return -EINVAL;
    if (args->count_handles == 0)
        return -EINVAL;
    const u32 count = args->count_handles;
    drm_syncobj** syncobjs;
    int ret = drm_syncobj_array_find(file, args->handles, count, &syncobjs);
    if (ret)
        return ret;
    auto* points = static_cast<u64*>(kmalloc_user_array(count, sizeof(u64)));
    auto** chains = static_cast<dma_fence_chain**>(kmalloc_user_array(count, sizeof(void*)));
    if (!points || !chains) {
        ret = -ENOMEM;
        goto out;
    }
    if (!args->points)
        std::memset(points, 0, sizeof(u64) * count);
    else if (copy_from_user(points, args->points, sizeof(u64) * count)) {
        ret = -EFAULT;
        goto out;
    }
    // Every allocation before the first point goes in: nothing changes on -ENOMEM.
    for (u32 i = 0; i < count; i++) {
        chains[i] = dma_fence_chain_alloc();
        if (!chains[i]) {
            for (u32 j = 0; j < i; j++)
                dma_fence_chain_free(chains[j]);
            ret = -ENOMEM;
            goto out;
        }
    }
    for (u32 i = 0; i < count; i++) {
        dma_fence* fence = dma_fence_get_stub();
        drm_syncobj_add_point(syncobjs[i], chains[i], fence, points[i]);
        dma_fence_put(fence);
    }
out:
    kfree(chains);
    kfree(points);
    drm_syncobj_array_free(syncobjs, count);
    return ret;
}

int drm_syncobj_query_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_syncobj_timeline_array*>(data);
    if (!drm_core_check_feature(dev, DRIVER_SYNCOBJ_TIMELINE))
        return -EOPNOTSUPP;
    if (args->flags & ~DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED)
        return -EINVAL;
    if (args->count_handles == 0)
        return -EINVAL;
    drm_syncobj** syncobjs;
    int ret = drm_syncobj_array_find(file, args->handles, args->count_handles, &syncobjs);
    if (ret)
        return ret;
    for (u32 i = 0; i < args->count_handles; i++) {
        dma_fence* fence = drm_syncobj_fence_get(syncobjs[i]);
        u64 point = 0;
        if (to_dma_fence_chain(fence)) {
            dma_fence* last_signaled = dma_fence_get(fence);
            if (args->flags & DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED) {
                point = fence->seqno;
            } else {
                // The walk stops at (and drops) signalled links, so the last link it reaches is
                // the earliest unsignalled one: everything before it has signalled.
                dma_fence* iter;
                dma_fence_chain_for_each(iter, fence) {
                    if (iter->context != fence->context) {
                        dma_fence_put(iter);
                        break;  // most likely unordered points
                    }
                    dma_fence_put(last_signaled);
                    last_signaled = dma_fence_get(iter);
                }
                point = dma_fence_is_signaled(last_signaled) ? last_signaled->seqno
                                                             : to_dma_fence_chain(last_signaled)->prev_seqno;
            }
            dma_fence_put(last_signaled);
        }
        dma_fence_put(fence);
        if (copy_to_user(args->points + sizeof(u64) * i, &point, sizeof(u64))) {
            ret = -EFAULT;
            break;
        }
    }
    drm_syncobj_array_free(syncobjs, args->count_handles);
    return ret;
}

}  // namespace drm
