// Mirrors drivers/base/power/runtime.c, and the per-device steps of drivers/base/power/main.c
// (device_prepare, device_suspend, device_resume, device_complete) for device_pm_suspend/resume.
//
// DOC: The request machinery is upstream's: rpm_idle/rpm_suspend/rpm_resume run under
// dev->power.lock and drop it around the driver's callbacks; RPM_ASYNC requests go to the
// device's PM work (pm_runtime_work) on its own ordered workqueue (our pm_wq); the autosuspend
// timer is an hrtimer at last_busy + autosuspend_delay that queues an RPM_REQ_AUTOSUSPEND.
// A caller that finds a transition in progress sleeps on power.wait_queue until it ends.
//
// Not modelled: parents and children, device links, PM QoS, irq_safe devices, pm_runtime_forbid,
// time accounting. One deliberate difference: upstream keeps a failed callback's errno in
// runtime_error and refuses every later transition with -EINVAL until pm_runtime_set_active/
// set_suspended; here runtime_error only records the last failure and the next transition is
// attempted (and clears it when it succeeds), so a driver's recovery path after a failed
// resume is reachable.
#include "kernel_shim/pm_runtime.h"

#include <atomic>

#include "kernel_shim/devres.h"
#include "kernel_shim/log.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/time.h"
#include "kernel_shim/wait.h"
#include "kernel_shim/workqueue.h"

namespace kshim {

namespace {
enum rpm_request { RPM_REQ_NONE = 0, RPM_REQ_IDLE, RPM_REQ_SUSPEND, RPM_REQ_AUTOSUSPEND, RPM_REQ_RESUME };

constexpr int RPM_ASYNC = 0x01;    // request asynchronous execution
constexpr int RPM_NOWAIT = 0x02;   // do not wait for concurrent transitions
constexpr int RPM_GET_PUT = 0x04;  // increment/decrement the usage count
constexpr int RPM_AUTO = 0x08;     // use autosuspend_delay
}  // namespace

struct DevPmInfo {
    Device* dev = nullptr;
    // dev->power.lock: protects the fields below that are not atomic, and every change of the
    // atomic ones but usage_count and last_busy. Callbacks run without it.
    SpinLock lock{"dev->power.lock"};
    wait_queue_head wait_queue;  // a transition or idle notification ended
    work_struct work;            // pm_runtime_work
    hrtimer suspend_timer;
    workqueue_struct* wq = nullptr;  // the device's pm_wq

    std::atomic<int> usage_count{0};
    // Read without the lock by waiters and by the pm_runtime_status/active/enabled queries.
    std::atomic<int> runtime_status{RPM_SUSPENDED};
    std::atomic<int> disable_depth{1};
    std::atomic<int> runtime_error{0};
    std::atomic<bool> idle_notification{false};
    // Read without the lock by pm_runtime_autosuspend_expiration, as upstream's READ_ONCEs.
    std::atomic<bool> use_autosuspend{false};
    std::atomic<int> autosuspend_delay{0};
    std::atomic<ktime_t> last_busy{0};

    // runtime_status when runtime PM was last disabled; RPM_ACTIVE (upstream's zeroed field)
    // before it was ever enabled, so a device declared active that way resumes as a no-op.
    int last_status = RPM_ACTIVE;
    rpm_request request = RPM_REQ_NONE;
    bool request_pending = false;  // `work` is queued for `request`
    bool deferred_resume = false;  // resume once the suspend in progress is done
    bool timer_autosuspends = false;
    bool needs_force_resume = false;
    ktime_t timer_expires = 0;  // suspend_timer's expiry, 0 when inactive
};

namespace {

using pm_callback_t = int (*)(Device*);

DevPmInfo* pm(const Device* dev) {
    return dev->power;
}
int status(const DevPmInfo* p) {
    return p->runtime_status.load();
}
void update_runtime_status(DevPmInfo* p, rpm_status s) {
    p->runtime_status.store(s);
}

pm_callback_t get_callback(Device* dev, pm_callback_t DevPmOps::*cb) {
    return dev->pm ? dev->pm->*cb : nullptr;
}

// Called with the device's power lock held, like the kernel's (which drop it around callbacks).
int rpm_idle(Device* dev, int rpmflags) REQUIRES(pm(dev)->lock);
int rpm_suspend(Device* dev, int rpmflags) REQUIRES(pm(dev)->lock);
int rpm_resume(Device* dev, int rpmflags) REQUIRES(pm(dev)->lock);

// Sleeps until busy() turns false; the lock is dropped meanwhile (prepare_to_wait/schedule).
template <class Busy>
void rpm_wait_locked(DevPmInfo* p, Busy busy) REQUIRES(p->lock) {
    lockdep_assert_held(&p->lock);
    p->lock.unlock();
    wait_event(p->wait_queue, !busy());
    p->lock.lock();
}

void pm_runtime_deactivate_timer(DevPmInfo* p) {
    if (p->timer_expires > 0) {
        hrtimer_try_to_cancel(&p->suspend_timer);
        p->timer_expires = 0;
    }
}

// The work function of a request still queued finds RPM_REQ_NONE and does nothing.
void pm_runtime_cancel_pending(DevPmInfo* p) {
    pm_runtime_deactivate_timer(p);
    p->request = RPM_REQ_NONE;
}

void queue_request(DevPmInfo* p, rpm_request req) {
    p->request = req;
    if (!p->request_pending) {
        p->request_pending = true;
        queue_work(p->wq, &p->work);
    }
}

// When the autosuspend delay expires (runtime-clock ns), or 0 if it has or autosuspend is off.
ktime_t pm_runtime_autosuspend_expiration(DevPmInfo* p) {
    if (!p->use_autosuspend.load())
        return 0;
    const int delay = p->autosuspend_delay.load();
    if (delay < 0)
        return 0;
    const ktime_t expires = p->last_busy.load() + static_cast<ktime_t>(delay) * NSEC_PER_MSEC;
    return expires > ktime_get() ? expires : 0;
}

int rpm_check_suspend_allowed(DevPmInfo* p) {
    if (p->disable_depth.load() > 0)
        return -EACCES;
    if (p->usage_count.load() > 0)
        return -EAGAIN;
    // Pending resume requests take precedence over suspends.
    if ((p->deferred_resume && status(p) == RPM_SUSPENDING) || (p->request_pending && p->request == RPM_REQ_RESUME))
        return -EAGAIN;
    if (status(p) == RPM_SUSPENDED)
        return 1;
    return 0;
}

int __rpm_callback(pm_callback_t cb, Device* dev) REQUIRES(pm(dev)->lock) {
    pm(dev)->lock.unlock();
    int retval = cb ? cb(dev) : 0;
    pm(dev)->lock.lock();
    return retval;
}

int rpm_callback(pm_callback_t cb, Device* dev) REQUIRES(pm(dev)->lock) {
    int retval = __rpm_callback(cb, dev);
    // -EACCES means "runtime PM disabled" to callers; a callback returning it asks for a retry.
    if (retval == -EACCES)
        retval = -EAGAIN;
    if (retval != -EAGAIN && retval != -EBUSY)
        pm(dev)->runtime_error.store(retval);
    return retval;
}

int rpm_idle(Device* dev, int rpmflags) {
    DevPmInfo* p = pm(dev);
    int retval = rpm_check_suspend_allowed(p);
    if (retval < 0)
        ;
    else if (status(p) != RPM_ACTIVE)  // idle notifications only for active devices
        retval = -EAGAIN;
    else if (p->request_pending && p->request > RPM_REQ_IDLE)
        retval = -EAGAIN;
    else if (p->idle_notification.load())
        retval = -EINPROGRESS;
    if (retval)
        return retval;

    p->request = RPM_REQ_NONE;
    pm_callback_t cb = get_callback(dev, &DevPmOps::runtime_idle);
    if (cb) {
        if (rpmflags & RPM_ASYNC) {
            queue_request(p, RPM_REQ_IDLE);
            return 0;
        }
        p->idle_notification.store(true);
        retval = __rpm_callback(cb, dev);
        p->idle_notification.store(false);
        wake_up_all(&p->wait_queue);
    }
    // No idle callback (or one that agreed): go for an autosuspend.
    return retval ? retval : rpm_suspend(dev, rpmflags | RPM_AUTO);
}

int rpm_suspend(Device* dev, int rpmflags) {
    DevPmInfo* p = pm(dev);
    int retval;
repeat:
    retval = rpm_check_suspend_allowed(p);
    if (retval < 0)
        return retval;
    // Synchronous suspends are not allowed while resuming.
    if (status(p) == RPM_RESUMING && !(rpmflags & RPM_ASYNC))
        retval = -EAGAIN;
    if (retval)
        return retval;

    if ((rpmflags & RPM_AUTO) && status(p) != RPM_SUSPENDING) {
        const ktime_t expires = pm_runtime_autosuspend_expiration(p);
        if (expires != 0) {
            p->request = RPM_REQ_NONE;
            // A timer due at or before the new expiry re-checks when it fires.
            if (!(p->timer_expires && p->timer_expires <= expires)) {
                p->timer_expires = expires;
                hrtimer_start(&p->suspend_timer, expires, HRTIMER_MODE_ABS);
            }
            p->timer_autosuspends = true;
            return 0;
        }
    }

    pm_runtime_cancel_pending(p);

    if (status(p) == RPM_SUSPENDING) {
        if (rpmflags & (RPM_ASYNC | RPM_NOWAIT))
            return -EINPROGRESS;
        rpm_wait_locked(p, [p] { return status(p) == RPM_SUSPENDING; });
        goto repeat;
    }

    if (rpmflags & RPM_ASYNC) {
        queue_request(p, (rpmflags & RPM_AUTO) ? RPM_REQ_AUTOSUSPEND : RPM_REQ_SUSPEND);
        return 0;
    }

    update_runtime_status(p, RPM_SUSPENDING);
    retval = rpm_callback(get_callback(dev, &DevPmOps::runtime_suspend), dev);
    if (retval)
        goto fail;

    update_runtime_status(p, RPM_SUSPENDED);
    pm_runtime_deactivate_timer(p);
    wake_up_all(&p->wait_queue);

    if (p->deferred_resume) {
        p->deferred_resume = false;
        rpm_resume(dev, 0);
        return -EAGAIN;
    }
    return 0;

fail:
    update_runtime_status(p, RPM_ACTIVE);
    p->deferred_resume = false;
    wake_up_all(&p->wait_queue);
    if (retval == -EAGAIN || retval == -EBUSY) {
        p->runtime_error.store(0);
        // The device became busy again meanwhile: try again when the new delay expires.
        if ((rpmflags & RPM_AUTO) && pm_runtime_autosuspend_expiration(p) != 0)
            goto repeat;
    } else {
        pm_runtime_cancel_pending(p);
    }
    return retval;
}

int rpm_resume(Device* dev, int rpmflags) {
    DevPmInfo* p = pm(dev);
    int retval = 0;
repeat:
    if (p->disable_depth.load() > 0) {
        // Disabled while active: resuming is a no-op that succeeds.
        if (status(p) == RPM_ACTIVE && p->last_status == RPM_ACTIVE)
            retval = 1;
        else
            retval = -EACCES;
    }
    if (retval)
        return retval;

    // An autosuspend timer is left running: it would be re-armed soon anyway.
    p->request = RPM_REQ_NONE;
    if (!p->timer_autosuspends)
        pm_runtime_deactivate_timer(p);

    if (status(p) == RPM_ACTIVE)
        return 1;

    if (status(p) == RPM_RESUMING || status(p) == RPM_SUSPENDING) {
        if (rpmflags & (RPM_ASYNC | RPM_NOWAIT)) {
            if (status(p) == RPM_SUSPENDING)
                p->deferred_resume = true;
            else
                retval = -EINPROGRESS;
            return retval;
        }
        rpm_wait_locked(p, [p] { return status(p) == RPM_RESUMING || status(p) == RPM_SUSPENDING; });
        goto repeat;
    }

    if (rpmflags & RPM_ASYNC) {
        queue_request(p, RPM_REQ_RESUME);
        return 0;
    }

    update_runtime_status(p, RPM_RESUMING);
    retval = rpm_callback(get_callback(dev, &DevPmOps::runtime_resume), dev);
    if (retval) {
        update_runtime_status(p, RPM_SUSPENDED);
        pm_runtime_cancel_pending(p);
    } else {
        update_runtime_status(p, RPM_ACTIVE);
        p->last_busy.store(ktime_get());
    }
    wake_up_all(&p->wait_queue);

    if (retval >= 0)
        rpm_idle(dev, RPM_ASYNC);
    return retval;
}

void pm_runtime_work(work_struct* work) {
    DevPmInfo* p = container_of(work, DevPmInfo, work);
    SpinGuard g(p->lock);
    if (!p->request_pending)
        return;
    const rpm_request req = p->request;
    p->request = RPM_REQ_NONE;
    p->request_pending = false;
    switch (req) {
    case RPM_REQ_NONE: break;
    case RPM_REQ_IDLE: rpm_idle(p->dev, RPM_NOWAIT); break;
    case RPM_REQ_SUSPEND: rpm_suspend(p->dev, RPM_NOWAIT); break;
    case RPM_REQ_AUTOSUSPEND: rpm_suspend(p->dev, RPM_NOWAIT | RPM_AUTO); break;
    case RPM_REQ_RESUME: rpm_resume(p->dev, RPM_NOWAIT); break;
    }
}

hrtimer_restart pm_suspend_timer_fn(DevPmInfo* p) {
    SpinGuard g(p->lock);
    const ktime_t expires = p->timer_expires;
    // A cancelled or moved timer that fired anyway finds nothing due.
    if (expires > 0 && expires <= ktime_get()) {
        p->timer_expires = 0;
        rpm_suspend(p->dev, p->timer_autosuspends ? (RPM_ASYNC | RPM_AUTO) : RPM_ASYNC);
    }
    return HRTIMER_NORESTART;
}

// Returns the new count, or -EINVAL (count unchanged) on underflow.
int rpm_drop_usage_count(Device* dev) {
    DevPmInfo* p = pm(dev);
    int ret = p->usage_count.fetch_sub(1) - 1;
    if (ret >= 0)
        return ret;
    p->usage_count.fetch_add(1);
    dev_warn(dev, "Runtime PM usage count underflow!");
    return -EINVAL;
}

int __pm_runtime_idle(Device* dev, int rpmflags) {
    if (rpmflags & RPM_GET_PUT) {
        int ret = rpm_drop_usage_count(dev);
        if (ret != 0)
            return ret < 0 ? ret : 0;
    }
    if (!(rpmflags & RPM_ASYNC))
        might_sleep();
    SpinGuard g(pm(dev)->lock);
    return rpm_idle(dev, rpmflags);
}

int __pm_runtime_suspend(Device* dev, int rpmflags) {
    if (rpmflags & RPM_GET_PUT) {
        int ret = rpm_drop_usage_count(dev);
        if (ret != 0)
            return ret < 0 ? ret : 0;
    }
    if (!(rpmflags & RPM_ASYNC))
        might_sleep();
    SpinGuard g(pm(dev)->lock);
    return rpm_suspend(dev, rpmflags);
}

int __pm_runtime_resume(Device* dev, int rpmflags) {
    DevPmInfo* p = pm(dev);
    if (!(rpmflags & RPM_ASYNC) && status(p) != RPM_ACTIVE)
        might_sleep();
    if (rpmflags & RPM_GET_PUT)
        p->usage_count.fetch_add(1);
    SpinGuard g(p->lock);
    return rpm_resume(dev, rpmflags);
}

int pm_runtime_get_conditional(Device* dev, bool ign_usage_count) {
    DevPmInfo* p = pm(dev);
    SpinGuard g(p->lock);
    if (p->disable_depth.load() > 0)
        return -EINVAL;
    if (status(p) != RPM_ACTIVE)
        return 0;
    if (ign_usage_count) {
        p->usage_count.fetch_add(1);
        return 1;
    }
    int c = p->usage_count.load();
    while (c != 0)
        if (p->usage_count.compare_exchange_weak(c, c + 1))
            return 1;
    return 0;
}

int __pm_runtime_set_status(Device* dev, rpm_status new_status) {
    DevPmInfo* p = pm(dev);
    {
        SpinGuard g(p->lock);
        // Keeps runtime PM from being enabled meanwhile; refused while it is enabled and working.
        if (p->runtime_error.load() || p->disable_depth.load())
            p->disable_depth.fetch_add(1);
        else
            return -EAGAIN;
        update_runtime_status(p, new_status);
        p->runtime_error.store(0);
    }
    pm_runtime_enable(dev);
    return 0;
}

// Cancels the pending request and waits for the transition in progress. Lock held.
void __pm_runtime_barrier(Device* dev) REQUIRES(pm(dev)->lock) {
    DevPmInfo* p = pm(dev);
    pm_runtime_deactivate_timer(p);
    if (p->request_pending) {
        p->request = RPM_REQ_NONE;
        pm(dev)->lock.unlock();
        cancel_work_sync(&p->work);
        pm(dev)->lock.lock();
        p->request_pending = false;
    }
    rpm_wait_locked(p, [p] {
        int s = status(p);
        return s == RPM_SUSPENDING || s == RPM_RESUMING || p->idle_notification.load();
    });
}

void __pm_runtime_disable(Device* dev, bool check_resume) {
    DevPmInfo* p = pm(dev);
    SpinGuard g(p->lock);
    if (p->disable_depth.load() > 0) {
        p->disable_depth.fetch_add(1);
        return;
    }
    // A pending resume means there is I/O to do: do it before runtime PM stops.
    if (check_resume && p->request_pending && p->request == RPM_REQ_RESUME) {
        p->usage_count.fetch_add(1);
        rpm_resume(dev, 0);
        pm_runtime_put_noidle(dev);
    }
    if (p->disable_depth.fetch_add(1) == 0) {
        __pm_runtime_barrier(dev);
        p->last_status = status(p);
    }
}

// Lock held. A negative delay with autosuspend in use forbids runtime suspend (holding a
// usage reference); otherwise the device may suspend now.
void update_autosuspend(Device* dev, int old_delay, bool old_use) REQUIRES(pm(dev)->lock) {
    DevPmInfo* p = pm(dev);
    const int delay = p->autosuspend_delay.load();
    if (p->use_autosuspend.load() && delay < 0) {
        if (!old_use || old_delay >= 0) {
            p->usage_count.fetch_add(1);
            rpm_resume(dev, 0);
        }
    } else {
        if (old_use && old_delay < 0)
            p->usage_count.fetch_sub(1);
        rpm_idle(dev, RPM_AUTO);
    }
}

void __pm_runtime_use_autosuspend(Device* dev, bool use) {
    DevPmInfo* p = pm(dev);
    SpinGuard g(p->lock);
    const int old_delay = p->autosuspend_delay.load();
    const bool old_use = p->use_autosuspend.load();
    p->use_autosuspend.store(use);
    update_autosuspend(dev, old_delay, old_use);
}

bool pm_runtime_need_not_resume(DevPmInfo* p) {
    return p->usage_count.load() <= 1;
}

}  // namespace

int pm_runtime_init(Device* dev) {
    if (dev->power)
        return 0;
    auto* p = knew<DevPmInfo>(GFP_KERNEL);
    if (!p)
        return -ENOMEM;
    p->dev = dev;
    p->wq = alloc_ordered_workqueue("pm:%s", WQ_FREEZABLE, dev->name.c_str());
    if (!p->wq) {
        kdelete(p);
        return -ENOMEM;
    }
    INIT_WORK(&p->work, pm_runtime_work);
    hrtimer_setup(
        &p->suspend_timer, [p](hrtimer*) { return pm_suspend_timer_fn(p); }, CLOCK_MONOTONIC_, HRTIMER_MODE_ABS);
    dev->power = p;
    return 0;
}

void pm_runtime_release(Device* dev) {
    DevPmInfo* p = pm(dev);
    if (!p)
        return;
    // pm_runtime_remove: whatever the driver left, stop runtime PM before the state goes.
    __pm_runtime_disable(dev, false);
    hrtimer_cancel(&p->suspend_timer);
    cancel_work_sync(&p->work);
    destroy_workqueue(p->wq);
    dev->power = nullptr;
    kdelete(p);
}

void pm_runtime_enable(Device* dev) {
    DevPmInfo* p = pm(dev);
    SpinGuard g(p->lock);
    if (p->disable_depth.load() > 0) {
        if (p->disable_depth.fetch_sub(1) == 1)
            p->last_status = RPM_INVALID;
    } else {
        dev_warn(dev, "Unbalanced pm_runtime_enable!");
    }
}

void pm_runtime_disable(Device* dev) {
    __pm_runtime_disable(dev, true);
}

int devm_pm_runtime_enable(Device* dev) {
    pm_runtime_enable(dev);
    return devm_add_action_or_reset(dev, [dev] {
        pm_runtime_dont_use_autosuspend(dev);
        pm_runtime_disable(dev);
    });
}

int pm_runtime_set_active(Device* dev) {
    return __pm_runtime_set_status(dev, RPM_ACTIVE);
}
int pm_runtime_set_suspended(Device* dev) {
    return __pm_runtime_set_status(dev, RPM_SUSPENDED);
}

int pm_runtime_resume_and_get(Device* dev) {
    int ret = __pm_runtime_resume(dev, RPM_GET_PUT);
    if (ret < 0) {
        pm_runtime_put_noidle(dev);
        return ret;
    }
    return 0;
}

int pm_runtime_get_sync(Device* dev) {
    return __pm_runtime_resume(dev, RPM_GET_PUT);
}
int pm_runtime_get_if_in_use(Device* dev) {
    return pm_runtime_get_conditional(dev, false);
}
int pm_runtime_get_if_active(Device* dev) {
    return pm_runtime_get_conditional(dev, true);
}
void pm_runtime_get_noresume(Device* dev) {
    pm(dev)->usage_count.fetch_add(1);
}

void pm_runtime_put_noidle(Device* dev) {
    DevPmInfo* p = pm(dev);
    int c = p->usage_count.load();
    while (c != 0 && !p->usage_count.compare_exchange_weak(c, c - 1)) {
    }
}

int pm_runtime_put(Device* dev) {
    return __pm_runtime_idle(dev, RPM_GET_PUT | RPM_ASYNC);
}
int pm_runtime_put_autosuspend(Device* dev) {
    return __pm_runtime_suspend(dev, RPM_GET_PUT | RPM_ASYNC | RPM_AUTO);
}
int pm_runtime_put_sync(Device* dev) {
    return __pm_runtime_idle(dev, RPM_GET_PUT);
}
int pm_runtime_put_sync_suspend(Device* dev) {
    return __pm_runtime_suspend(dev, RPM_GET_PUT);
}
void pm_runtime_mark_last_busy(Device* dev) {
    pm(dev)->last_busy.store(ktime_get());
}
void pm_runtime_use_autosuspend(Device* dev) {
    __pm_runtime_use_autosuspend(dev, true);
}
void pm_runtime_dont_use_autosuspend(Device* dev) {
    __pm_runtime_use_autosuspend(dev, false);
}

void pm_runtime_set_autosuspend_delay(Device* dev, int delay_ms) {
    DevPmInfo* p = pm(dev);
    SpinGuard g(p->lock);
    const int old_delay = p->autosuspend_delay.load();
    const bool old_use = p->use_autosuspend.load();
    p->autosuspend_delay.store(delay_ms);
    update_autosuspend(dev, old_delay, old_use);
}

int pm_runtime_suspend(Device* dev) {
    return __pm_runtime_suspend(dev, 0);
}
int pm_runtime_resume(Device* dev) {
    return __pm_runtime_resume(dev, 0);
}

void pm_runtime_barrier(Device* dev) {
    DevPmInfo* p = pm(dev);
    pm_runtime_get_noresume(dev);
    {
        SpinGuard g(p->lock);
        if (p->request_pending && p->request == RPM_REQ_RESUME)
            rpm_resume(dev, 0);
        __pm_runtime_barrier(dev);
    }
    pm_runtime_put_noidle(dev);
}

bool pm_runtime_active(const Device* dev) {
    return status(pm(dev)) == RPM_ACTIVE || pm(dev)->disable_depth.load();
}
bool pm_runtime_suspended(const Device* dev) {
    return status(pm(dev)) == RPM_SUSPENDED && !pm(dev)->disable_depth.load();
}
bool pm_runtime_enabled(const Device* dev) {
    return !pm(dev)->disable_depth.load();
}
int pm_runtime_usage_count(const Device* dev) {
    return pm(dev)->usage_count.load();
}
rpm_status pm_runtime_status(const Device* dev) {
    return static_cast<rpm_status>(status(pm(dev)));
}
int pm_runtime_error(const Device* dev) {
    return pm(dev)->runtime_error.load();
}

int pm_runtime_force_suspend(Device* dev) {
    DevPmInfo* p = pm(dev);
    pm_runtime_disable(dev);
    if (status(p) == RPM_SUSPENDED || p->needs_force_resume)
        return 0;

    pm_callback_t cb = get_callback(dev, &DevPmOps::runtime_suspend);
    int ret = cb ? cb(dev) : 0;
    if (ret) {
        pm_runtime_enable(dev);
        return ret;
    }
    // Runtime PM is disabled: nothing else changes the status until force_resume.
    if (pm_runtime_need_not_resume(p)) {
        pm_runtime_set_suspended(dev);
    } else {
        update_runtime_status(p, RPM_SUSPENDED);
        p->needs_force_resume = true;
    }
    return 0;
}

int pm_runtime_force_resume(Device* dev) {
    DevPmInfo* p = pm(dev);
    int ret = 0;
    if (status(p) == RPM_SUSPENDED && p->needs_force_resume) {
        update_runtime_status(p, RPM_ACTIVE);
        pm_callback_t cb = get_callback(dev, &DevPmOps::runtime_resume);
        ret = cb ? cb(dev) : 0;
        if (ret)
            pm_runtime_set_suspended(dev);
        else
            pm_runtime_mark_last_busy(dev);
    }
    p->needs_force_resume = false;
    pm_runtime_enable(dev);
    return ret;
}

int device_pm_suspend(Device* dev) {
    // device_prepare holds a usage reference over the whole sleep; device_suspend first lets
    // runtime transitions in progress finish.
    pm_runtime_get_noresume(dev);
    pm_runtime_barrier(dev);
    int ret = (dev->pm && dev->pm->suspend) ? dev->pm->suspend(dev) : 0;
    if (ret) {
        dev_err(dev, "PM: failed to suspend: error %d", ret);
        pm_runtime_put(dev);  // device_complete of the aborted transition
    }
    return ret;
}

int device_pm_resume(Device* dev) {
    int ret = (dev->pm && dev->pm->resume) ? dev->pm->resume(dev) : 0;
    if (ret)
        dev_err(dev, "PM: failed to resume: error %d", ret);
    pm_runtime_put(dev);  // device_complete
    return ret;
}

}  // namespace kshim
