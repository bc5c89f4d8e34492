// Mirrors drivers/dma-buf/sw_sync.c (see sw_sync.h).
#include "kernel_shim/dma-buf/sw_sync.h"

#include <fcntl.h>

#include <climits>
#include <cstdio>

#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/err.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/task.h"
#include "kernel_shim/uaccess.h"
#include "uapi/linux/sync_file.h"

namespace kshim {

using namespace drm::uapi;

namespace {

// A fence flag of the implementer's: a deadline was set.
constexpr int SW_SYNC_HAS_DEADLINE_BIT = DMA_FENCE_FLAG_USER_BITS;

std::atomic<size_t> timelines_live{0};

using sync_pt_list =
    boost::intrusive::list<sync_pt, boost::intrusive::member_hook<sync_pt, decltype(sync_pt::link), &sync_pt::link>,
                           boost::intrusive::constant_time_size<false>>;

sync_timeline* dma_fence_parent(dma_fence* fence) {
    return container_of(fence->lock, sync_timeline, lock);
}

sync_timeline* sync_timeline_create(const char* name) {
    auto* obj = knew<sync_timeline>(GFP_KERNEL);
    if (!obj)
        return nullptr;
    obj->context = dma_fence_context_alloc(1);
    std::snprintf(obj->name, sizeof obj->name, "%s", name);
    timelines_live.fetch_add(1, std::memory_order_relaxed);
    return obj;
}

void sync_timeline_get(sync_timeline* obj) {
    kref_get(&obj->kref);
}

void sync_timeline_put(sync_timeline* obj) {
    kref_put(&obj->kref, [obj](kref*) {
        timelines_live.fetch_sub(1, std::memory_order_relaxed);
        kdelete(obj);
    });
}

const char* timeline_fence_get_driver_name(dma_fence*) {
    return "sw_sync";
}
const char* timeline_fence_get_timeline_name(dma_fence* fence) {
    return dma_fence_parent(fence)->name;
}

bool timeline_fence_signaled(dma_fence* fence) {
    sync_timeline* parent = dma_fence_parent(fence);
    return !__dma_fence_is_later(fence, fence->seqno, parent->value.load(std::memory_order_acquire));
}

bool timeline_fence_enable_signaling(dma_fence*) {
    return true;
}

void timeline_fence_release(dma_fence* fence);
void timeline_fence_set_deadline(dma_fence* fence, ktime_t deadline);

const dma_fence_ops timeline_fence_ops = {
    .get_driver_name = timeline_fence_get_driver_name,
    .get_timeline_name = timeline_fence_get_timeline_name,
    .enable_signaling = timeline_fence_enable_signaling,
    .signaled = timeline_fence_signaled,
    .release = timeline_fence_release,
    .set_deadline = timeline_fence_set_deadline,
};

void timeline_fence_release(dma_fence* fence) {
    sync_pt* pt = container_of(fence, sync_pt, base);
    sync_timeline* parent = dma_fence_parent(fence);
    {
        SpinGuard g(parent->lock);
        if (pt->node.is_linked())
            parent->pt_tree.erase(parent->pt_tree.iterator_to(*pt));
    }
    sync_timeline_put(parent);
    kdelete(pt);
}

void timeline_fence_set_deadline(dma_fence* fence, ktime_t deadline) {
    sync_pt* pt = container_of(fence, sync_pt, base);
    SpinGuard g(*fence->lock);
    if (dma_fence_test_flag(fence, SW_SYNC_HAS_DEADLINE_BIT)) {
        if (deadline < pt->deadline)
            pt->deadline = deadline;
    } else {
        pt->deadline = deadline;
        dma_fence_set_flag(fence, SW_SYNC_HAS_DEADLINE_BIT);
    }
}

// Takes the points the caller wants gone off the tree; the ones still referenced are signalled
// (with `error` when not 0) and collected so that their reference drops after the unlock: the
// last put runs timeline_fence_release, which takes the lock.
template <class Pred>
void sync_timeline_take_locked(sync_timeline* obj, Pred&& reached, int error, sync_pt_list* signalled) {
    lockdep_assert_held(&obj->lock);
    while (!obj->pt_tree.empty()) {
        sync_pt& pt = *obj->pt_tree.begin();
        if (!reached(&pt))
            break;
        obj->pt_tree.erase(obj->pt_tree.iterator_to(pt));
        // A point whose last reference is already gone is waiting for our lock in its release:
        // off the tree, it no longer needs us.
        if (!dma_fence_get_rcu(&pt.base))
            continue;
        if (error && !dma_fence_test_signaled_flag(&pt.base))
            dma_fence_set_error(&pt.base, error);
        dma_fence_signal_locked(&pt.base);
        signalled->push_back(pt);
    }
}

void put_signalled(sync_pt_list* signalled) {
    while (!signalled->empty()) {
        sync_pt& pt = signalled->front();
        signalled->pop_front();
        dma_fence_put(&pt.base);
    }
}

}  // namespace

sync_pt* dma_fence_to_sync_pt(dma_fence* fence) {
    if (dma_fence_ops_load(fence) != &timeline_fence_ops)
        return nullptr;
    return container_of(fence, sync_pt, base);
}

size_t sw_sync_timelines_live() {
    return timelines_live.load(std::memory_order_relaxed);
}

void sync_timeline_signal(sync_timeline* obj, unsigned int inc) {
    sync_pt_list signalled;
    {
        SpinGuard g(obj->lock);
        obj->value.store(obj->value.load(std::memory_order_relaxed) + inc, std::memory_order_release);
        sync_timeline_take_locked(
            obj, [](sync_pt* pt) { return timeline_fence_signaled(&pt->base); }, 0, &signalled);
    }
    put_signalled(&signalled);
}

sync_pt* sync_pt_create(sync_timeline* obj, unsigned int value) {
    auto* pt = knew<sync_pt>(GFP_KERNEL);
    if (!pt)
        return nullptr;
    sync_timeline_get(obj);
    dma_fence_init(&pt->base, &timeline_fence_ops, &obj->lock, obj->context, value);

    SpinGuard g(obj->lock);
    if (dma_fence_is_signaled_locked(&pt->base))
        return pt;  // born signalled: not on the tree
    // An unsignalled point at the same seqno is the same fence, as long as it is still alive.
    auto [it, end] = obj->pt_tree.equal_range(*pt);
    for (; it != end; ++it) {
        if (dma_fence_get_rcu(&it->base)) {
            sync_pt* other = &*it;
            // Never published: nobody else can see pt, so it goes without the release op.
            sync_timeline_put(obj);
            kdelete(pt);
            return other;
        }
    }
    obj->pt_tree.insert(*pt);
    return pt;
}

int sw_sync_debugfs_open(sync_timeline** out, const char* name) {
    if (!name) {
        Task* t = current();
        name = t && !t->name.empty() ? t->name.c_str() : "upanthor";
    }
    sync_timeline* obj = sync_timeline_create(name);
    if (!obj)
        return -ENOMEM;
    *out = obj;
    return 0;
}

int sw_sync_debugfs_release(sync_timeline* obj) {
    sync_pt_list signalled;
    {
        SpinGuard g(obj->lock);
        sync_timeline_take_locked(
            obj, [](sync_pt*) { return true; }, -ENOENT, &signalled);
    }
    put_signalled(&signalled);
    sync_timeline_put(obj);
    return 0;
}

static long sw_sync_ioctl_create_fence(sync_timeline* obj, u64 arg) {
    sw_sync_create_fence_data data;
    if (copy_from_user(&data, arg, sizeof data))
        return -EFAULT;
    sync_pt* pt = sync_pt_create(obj, data.value);
    if (!pt)
        return -ENOMEM;
    sync_file* sf = sync_file_create(&pt->base);
    dma_fence_put(&pt->base);
    if (!sf)
        return -ENOMEM;
    return sync_file_fd_to_user(sf, arg, data);
}

static long sw_sync_ioctl_inc(sync_timeline* obj, u64 arg) {
    u32 value;
    if (copy_from_user(&value, arg, sizeof value))
        return -EFAULT;
    while (value > INT_MAX) {
        sync_timeline_signal(obj, INT_MAX);
        value -= INT_MAX;
    }
    sync_timeline_signal(obj, value);
    return 0;
}

static long sw_sync_ioctl_get_deadline(sync_timeline*, u64 arg) {
    sw_sync_get_deadline data;
    if (copy_from_user(&data, arg, sizeof data))
        return -EFAULT;
    if (data.deadline_ns || data.pad)
        return -EINVAL;
    sync_file* sf = sync_file_fdget(data.fence_fd);
    if (!sf)
        return -EINVAL;
    dma_fence* fence = sync_file_get_fence(sf);
    sync_file_put(sf);
    sync_pt* pt = dma_fence_to_sync_pt(fence);
    if (!pt) {
        dma_fence_put(fence);
        return -EINVAL;
    }
    int ret = 0;
    {
        SpinGuard g(*fence->lock);
        if (dma_fence_test_flag(fence, SW_SYNC_HAS_DEADLINE_BIT))
            data.deadline_ns = static_cast<u64>(pt->deadline);
        else
            ret = -ENOENT;
    }
    dma_fence_put(fence);
    if (ret)
        return ret;
    if (copy_to_user(arg, &data, sizeof data))
        return -EFAULT;
    return 0;
}

long sw_sync_ioctl(sync_timeline* obj, unsigned int cmd, u64 arg) {
    switch (cmd) {
    case SW_SYNC_IOC_CREATE_FENCE: return sw_sync_ioctl_create_fence(obj, arg);
    case SW_SYNC_IOC_INC: return sw_sync_ioctl_inc(obj, arg);
    case SW_SYNC_GET_DEADLINE: return sw_sync_ioctl_get_deadline(obj, arg);
    default: return -ENOTTY;
    }
}

namespace {

int sw_sync_file_open(file* filp) {
    sync_timeline* obj = nullptr;
    const int ret = sw_sync_debugfs_open(&obj);
    if (ret)
        return ret;
    filp->private_data = obj;
    return 0;
}

int sw_sync_file_release(file* filp) {
    return sw_sync_debugfs_release(static_cast<sync_timeline*>(filp->private_data));
}

long sw_sync_file_ioctl(file* filp, unsigned int cmd, unsigned long arg) {
    return sw_sync_ioctl(static_cast<sync_timeline*>(filp->private_data), cmd, arg);
}

}  // namespace

const file_operations sw_sync_debugfs_fops = {
    .open = sw_sync_file_open,
    .release = sw_sync_file_release,
    .unlocked_ioctl = sw_sync_file_ioctl,
};

file* sw_sync_open_file(int flags) {
    return open_chrdev_file(&sw_sync_debugfs_fops, static_cast<unsigned int>(flags) & (O_ACCMODE | O_NONBLOCK),
                            "sw_sync");
}

}  // namespace kshim
