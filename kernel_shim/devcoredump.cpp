// Mirrors drivers/base/devcoredump.c: pending device coredumps, their reads, the write that
// frees them, the DEVCD_TIMEOUT expiry, and the uevent (a listener here).
//
// A dump goes CREATING (bookkeeping in the list, work items being queued) -> PENDING (readable;
// the listener is told) -> DYING (cleared, timed out or put: no longer visible; a new dump of the
// device may be taken). The release work is queued exactly once, by whatever made it DYING, so a
// clear from inside the listener or racing the timeout is safe. The entry is refcounted: its life
// (dropped by the release work) and each queued work item hold a reference, so a work item queued
// or running around the release never sees it freed; the last reference frees the data. The list lock is a host mutex private to the shim:
// nothing that can switch tasks (queueing, allocating, waiting) runs under it.
#include "kernel_shim/devcoredump.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "kernel_shim/completion.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/workqueue.h"

namespace kshim {

namespace {

enum class DevcdState { CREATING, PENDING, DYING };

struct devcd_entry {
    Device* failing_dev = nullptr;
    void* data = nullptr;
    size_t datalen = 0;
    devcd_read_fn read = nullptr;
    devcd_free_fn free = nullptr;
    delayed_work del_wk;       // DEVCD_TIMEOUT
    work_struct notify_wk;     // the KOBJ_ADD uevent
    work_struct release_wk;    // frees the dump; queued once, by whoever makes it DYING
    std::atomic<int> refs{1};  // its life, plus one per queued del_wk / notify_wk
    DevcdState state = DevcdState::CREATING;
    bool put_requested = false;      // dev_coredump_put came while CREATING: the creator releases
    completion* put_done = nullptr;  // completed once the dump is freed
};

struct Registry {
    std::mutex lock;
    std::vector<devcd_entry*> entries;  // every dump not freed yet, in creation order
    bool disabled = false;
    std::function<void(Device*)> listener;
};

Registry& registry() {
    static Registry r;
    return r;
}

// The dump of `dev` that is not DYING, or nullptr. Registry lock held.
devcd_entry* find_live(Registry& r, const Device* dev) {
    for (devcd_entry* e : r.entries)
        if (e->failing_dev == dev && e->state != DevcdState::DYING)
            return e;
    return nullptr;
}

devcd_entry* find_pending(Registry& r, const Device* dev) {
    devcd_entry* e = find_live(r, dev);
    return e && e->state == DevcdState::PENDING ? e : nullptr;
}

// PENDING -> DYING, which happens once per dump under the lock, so release_wk is queued once.
bool devcd_kill_locked(devcd_entry* e) {
    if (e->state != DevcdState::PENDING)
        return false;
    e->state = DevcdState::DYING;
    return true;
}

void devcd_put(devcd_entry* e) {
    if (e->refs.fetch_sub(1) != 1)
        return;
    Registry& r = registry();
    completion* done;
    {
        std::lock_guard g(r.lock);
        r.entries.erase(std::find(r.entries.begin(), r.entries.end(), e));
        done = e->put_done;
    }
    e->free(e->data);
    kdelete(e);
    if (done)
        complete(done);
}

void devcd_release(work_struct* work) {
    devcd_entry* e = container_of(work, devcd_entry, release_wk);
    // A work item cancelled before it ran gives its reference back here; one running (the timer
    // firing now, the listener, maybe the one that cleared us) gives it back itself.
    if (cancel_delayed_work_sync(&e->del_wk))
        devcd_put(e);
    if (cancel_work_sync(&e->notify_wk))
        devcd_put(e);
    devcd_put(e);
}

void devcd_del(work_struct* work) {
    devcd_entry* e = container_of(to_delayed_work(work), devcd_entry, del_wk);
    Registry& r = registry();
    bool kill;
    {
        std::lock_guard g(r.lock);
        kill = devcd_kill_locked(e);
    }
    if (kill)
        queue_work(system_wq(), &e->release_wk);
    devcd_put(e);
}

void devcd_notify(work_struct* work) {
    devcd_entry* e = container_of(work, devcd_entry, notify_wk);
    Registry& r = registry();
    std::function<void(Device*)> listener;
    Device* dev = nullptr;
    {
        std::lock_guard g(r.lock);
        if (e->state == DevcdState::PENDING && r.listener) {
            listener = r.listener;
            dev = e->failing_dev;
        }
    }
    if (listener)
        listener(dev);
    devcd_put(e);
}

ssize_t devcd_readv(char* buffer, loff_t offset, size_t count, void* data, size_t datalen) {
    if (offset < 0)
        return -EINVAL;
    if (static_cast<size_t>(offset) >= datalen)
        return 0;
    const size_t n = std::min(count, datalen - static_cast<size_t>(offset));
    std::memcpy(buffer, static_cast<const char*>(data) + offset, n);
    return static_cast<ssize_t>(n);
}

void devcd_freev(void* data) {
    kfree(data);
}

// Whether a new dump of `dev` may be taken. Registry lock held.
bool devcd_may_take_locked(Registry& r, const Device* dev) {
    return !r.disabled && !find_live(r, dev);
}

}  // namespace

void dev_coredumpm_timeout(Device* dev, void* data, size_t datalen, gfp_t gfp, devcd_read_fn read, devcd_free_fn free,
                           unsigned long timeout) {
    Registry& r = registry();
    bool take;
    {
        std::lock_guard g(r.lock);
        // One dump per failing device until it is cleared or expires.
        take = devcd_may_take_locked(r, dev);
    }
    devcd_entry* e = take ? knew<devcd_entry>(gfp) : nullptr;
    if (!e) {
        free(data);
        return;
    }
    e->failing_dev = dev;
    e->data = data;
    e->datalen = datalen;
    e->read = read;
    e->free = free;
    INIT_DELAYED_WORK(&e->del_wk, devcd_del);
    INIT_WORK(&e->notify_wk, devcd_notify);
    INIT_WORK(&e->release_wk, devcd_release);
    {
        std::lock_guard g(r.lock);
        // Another dump of the device got in while we allocated: it wins.
        take = devcd_may_take_locked(r, dev);
        if (take)
            r.entries.push_back(e);
    }
    if (!take) {
        kdelete(e);
        free(data);
        return;
    }
    // The references of both work items, taken before anyone else can see the dump.
    e->refs += 2;
    schedule_delayed_work(&e->del_wk, timeout);
    bool release = false;
    {
        std::lock_guard g(r.lock);
        e->state = DevcdState::PENDING;
        if (e->put_requested)
            release = devcd_kill_locked(e);
    }
    if (release) {
        queue_work(system_wq(), &e->release_wk);
        devcd_put(e);  // notify_wk's: never queued
        return;
    }
    // Queued once PENDING, so the listener always finds the dump (unless it was cleared or put
    // meanwhile; then the work only drops its reference).
    schedule_work(&e->notify_wk);
}

void dev_coredumpm(Device* dev, void* data, size_t datalen, gfp_t gfp, devcd_read_fn read, devcd_free_fn free) {
    dev_coredumpm_timeout(dev, data, datalen, gfp, read, free, DEVCD_TIMEOUT);
}

void dev_coredumpv(Device* dev, void* data, size_t datalen, gfp_t gfp) {
    dev_coredumpm(dev, data, datalen, gfp, devcd_readv, devcd_freev);
}

void dev_coredump_put(Device* dev) {
    might_sleep();
    Registry& r = registry();
    // Also waits for dumps of the device already cleared but not freed yet, so that nothing of
    // it outlives the device.
    for (;;) {
        completion done;
        init_completion(&done);
        devcd_entry* e = nullptr;
        bool release = false;
        {
            std::lock_guard g(r.lock);
            for (devcd_entry* it : r.entries) {
                if (it->failing_dev == dev && !it->put_done) {
                    e = it;
                    break;
                }
            }
            if (!e)
                return;
            e->put_done = &done;
            if (e->state == DevcdState::CREATING)
                e->put_requested = true;
            else
                release = devcd_kill_locked(e);
        }
        if (release)
            queue_work(system_wq(), &e->release_wk);
        wait_for_completion(&done);
    }
}

bool dev_coredump_pending(const Device* dev) {
    Registry& r = registry();
    std::lock_guard g(r.lock);
    return find_pending(r, dev) != nullptr;
}

ssize_t devcd_size(const Device* dev) {
    Registry& r = registry();
    std::lock_guard g(r.lock);
    devcd_entry* e = find_pending(r, dev);
    return e ? static_cast<ssize_t>(e->datalen) : -ENOENT;
}

ssize_t devcd_read(Device* dev, char* buffer, loff_t offset, size_t count) {
    if (offset < 0)
        return -EINVAL;
    Registry& r = registry();
    // Under the lock: a concurrent clear must not free the data mid-copy (upstream serialises
    // the read and the delete with devcd->mutex). The read callbacks only copy.
    std::lock_guard g(r.lock);
    devcd_entry* e = find_pending(r, dev);
    if (!e)
        return -ENOENT;
    return e->read(buffer, offset, count, e->data, e->datalen);
}

int dev_coredump_clear(Device* dev) {
    Registry& r = registry();
    devcd_entry* e;
    {
        std::lock_guard g(r.lock);
        e = find_pending(r, dev);
        if (!e)
            return -ENOENT;
        devcd_kill_locked(e);
    }
    queue_work(system_wq(), &e->release_wk);
    return 0;
}

void devcoredump_set_disabled(bool disabled) {
    Registry& r = registry();
    std::lock_guard g(r.lock);
    r.disabled = disabled;
}

void devcoredump_set_listener(std::function<void(Device*)> listener) {
    Registry& r = registry();
    std::lock_guard g(r.lock);
    r.listener = std::move(listener);
}

size_t devcoredump_live_count() {
    Registry& r = registry();
    std::lock_guard g(r.lock);
    return r.entries.size();
}

}  // namespace kshim
