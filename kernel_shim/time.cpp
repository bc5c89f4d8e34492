// Mirrors kernel/time/timer.c and hrtimer.c on the runtime's TimerEvents.
#include "kernel_shim/time.h"

#include "kernel_shim/backend.h"
#include "kernel_shim/irq_work.h"
#include "kernel_shim/trace.h"

namespace kshim {
namespace {
// The instant jiffies reaches `j` (at once, if that has passed).
ktime_t jiffies_to_deadline(unsigned long j) {
    return jiffies_timeout_deadline(static_cast<long>(j - jiffies_now()));
}

void timer_list_fire(TimerEvent* ev, u64) {
    auto* t = static_cast<timer_list*>(ev->owner);
    trace::Slice s("timer", "timer");
    t->function(t);
}

void hrtimer_fire(TimerEvent* ev, u64) {
    auto* t = static_cast<hrtimer*>(ev->owner);
    Task* cur = current();
    bool saved = cur->hardirq;
    cur->hardirq = true;
    hrtimer_restart r;
    {
        trace::Slice s("hrtimer", "timer");
        r = t->function(t);
    }
    cur->hardirq = saved;
    if (!saved && cur->irq_work_head && cur->preempt_count == 0)
        irq_work_run();  // raised by the callback
    if (r == HRTIMER_RESTART)
        backend().timer_arm(&t->ev, t->expires);
}
}  // namespace

void timer_setup(timer_list* t, std::function<void(timer_list*)> fn, unsigned) {
    t->ev.fire = &timer_list_fire;
    t->ev.owner = t;
    t->ev.band = kBandTimer;
    t->ev.name = "timer_list";
    t->function = std::move(fn);
}

int mod_timer(timer_list* t, unsigned long expires) {
    int was = backend().timer_cancel(&t->ev) ? 1 : 0;
    t->expires = expires;
    backend().timer_arm(&t->ev, jiffies_to_deadline(expires));
    return was;
}

void add_timer(timer_list* t) {
    mod_timer(t, t->expires);
}

bool timer_pending(const timer_list* t) {
    return t->ev.armed;
}

int del_timer(timer_list* t) {
    return backend().timer_cancel(&t->ev) ? 1 : 0;
}

int del_timer_sync(timer_list* t) {
    int was = del_timer(t);
    backend().timer_wait_idle(&t->ev);
    return was;
}

void hrtimer_setup(hrtimer* t, std::function<hrtimer_restart(hrtimer*)> fn, int, hrtimer_mode) {
    t->ev.fire = &hrtimer_fire;
    t->ev.owner = t;
    t->ev.band = kBandTimer;
    t->ev.name = "hrtimer";
    t->function = std::move(fn);
}

void hrtimer_start(hrtimer* t, ktime_t tim, hrtimer_mode mode) {
    t->expires = mode == HRTIMER_MODE_REL ? ktime_get() + tim : tim;
    backend().timer_arm(&t->ev, t->expires);
}

int hrtimer_try_to_cancel(hrtimer* t) {
    return backend().timer_cancel(&t->ev) ? 1 : 0;
}

int hrtimer_cancel(hrtimer* t) {
    int was = hrtimer_try_to_cancel(t);
    backend().timer_wait_idle(&t->ev);
    return was;
}

bool hrtimer_active(const hrtimer* t) {
    return t->ev.armed;
}

u64 hrtimer_forward_now(hrtimer* t, ktime_t interval) {
    ktime_t now = ktime_get();
    if (t->expires > now || interval <= 0)
        return 0;
    u64 overruns = static_cast<u64>((now - t->expires) / interval) + 1;
    t->expires += static_cast<ktime_t>(overruns) * interval;
    return overruns;
}

}  // namespace kshim

// ---- on-stack timers ----
#include "kernel_shim/report.h"

namespace kshim {

void destroy_timer_on_stack(timer_list* t) {
    WARN(t->ev.armed || t->ev.running, "destroy_timer_on_stack: timer still active");
}

u64 host_monotonic_ns() {
    return clock_ns(CLOCK_MONOTONIC);
}

}  // namespace kshim
