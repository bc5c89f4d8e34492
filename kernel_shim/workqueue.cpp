// Mirrors kernel/workqueue.c's behaviour with one pool per workqueue: workers are spawned on
// demand up to max_active and park when the list is empty.
//
// One lock (g_wq_lock) protects every workqueue's list, every item's queue state and the set
// of busy workers; it is a leaf lock held only for list operations, never across a work
// function. "Running" is found from the busy workers' current_work (by address, as the kernel's
// busy hash), so an item may free itself in its own function. Each queued instance gets a
// sequence number; a list stays in sequence order, so flushes compare against its head and the
// busy workers' sequences: nothing is allocated per work item.
#include "kernel_shim/workqueue.h"

#include <climits>
#include <cstdarg>
#include <cstdio>
#include <deque>
#include <mutex>
#include <vector>

#include "kernel_shim/report.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/trace.h"
#include "kernel_shim/wait.h"

namespace kshim {

struct workqueue_struct {
    std::string name;
    unsigned flags = 0;
    int max_active = WQ_DFL_ACTIVE;
    bool system = false;  // allocated by the runtime, not accounted as a leak

    std::deque<work_struct*> list;  // pending instances, in sequence order
    std::vector<Task*> workers;
    std::vector<Task*> idle;
    u64 next_seq = 0;
    int flushers = 0;  // tasks waiting on done_wq: finishing an item wakes them only if any
    bool stopping = false;

    wait_queue_head done_wq;  // woken whenever an item of this workqueue finishes or is cancelled
    LockdepMap lockdep_map;

    workqueue_struct(std::string n) : name(std::move(n)), lockdep_map(nullptr) {}
};

namespace {
std::mutex g_wq_lock;       // protects all of the above and work_struct queue state
std::vector<Task*> g_busy;  // workers running an item
workqueue_struct* g_system[4];

void worker_loop(workqueue_struct* wq);

// As the kernel's kick_pool: wakes the most recently idled worker, which stays on the idle list
// until it runs, so items queued before it runs wake that same worker rather than one each (a
// worker that takes an item kicks the next one: chain_kick_locked).
void kick_locked(workqueue_struct* wq) {
    if (!wq->idle.empty()) {
        backend().unpark(wq->idle.back());
        return;
    }
    if (static_cast<int>(wq->workers.size()) < wq->max_active) {
        std::string name = "kworker/" + wq->name + ":" + std::to_string(wq->workers.size());
        wq->workers.push_back(backend().spawn(name, TaskKind::Worker, [wq] { worker_loop(wq); }));
    }
}

void insert_locked(workqueue_struct* wq, work_struct* w) {
    w->wq = wq;
    w->queued = true;
    w->seq = ++wq->next_seq;
    wq->list.push_back(w);
    kick_locked(wq);
}

// Takes a queued instance off its list; true if there was one.
bool unqueue_locked(work_struct* w) {
    if (!w->queued)
        return false;
    workqueue_struct* wq = w->wq;
    for (auto it = wq->list.begin(); it != wq->list.end(); ++it)
        if (*it == w) {
            wq->list.erase(it);
            break;
        }
    w->queued = false;
    return true;
}

// The running instance of `w` with a sequence up to `max_seq`, if any.
bool running_locked(const work_struct* w, u64 max_seq = ~u64{0}) {
    for (Task* t : g_busy)
        if (t->current_work == w && t->current_work_seq <= max_seq)
            return true;
    return false;
}

bool pickable_locked(const workqueue_struct* wq) {
    for (const work_struct* w : wq->list)
        if (!running_locked(w))
            return true;
    return false;
}

// A worker that took an item while more wait wakes another, as process_one_work chains the
// pending items of an unbound pool from one worker to the next.
void chain_kick_locked(workqueue_struct* wq) {
    if (pickable_locked(wq))
        kick_locked(wq);
}

// The first item of the list that is not running on another worker (items are non-reentrant).
work_struct* pick_locked(workqueue_struct* wq) {
    for (auto it = wq->list.begin(); it != wq->list.end(); ++it) {
        if (running_locked(*it))
            continue;
        work_struct* w = *it;
        wq->list.erase(it);
        return w;
    }
    return nullptr;
}

void worker_loop(workqueue_struct* wq) {
    Task* me = current();
    std::unique_lock l(g_wq_lock);
    for (;;) {
        work_struct* w = pick_locked(wq);
        if (!w) {
            if (wq->stopping)
                break;
            wq->idle.push_back(me);
            me->idle_park = true;
            me->wait_reason = "work";
            l.unlock();
            backend().park(KTIME_MAX);
            l.lock();
            me->idle_park = false;
            std::erase(wq->idle, me);
            continue;
        }
        w->queued = false;
        w->pending.store(false);
        me->current_work = w;
        me->current_work_seq = w->seq;
        g_busy.push_back(me);
        chain_kick_locked(wq);
        // The item may free itself: keep what is needed after it runs.
        LockdepMap work_map = w->lockdep_map;
        const char* name = w->name;
        work_func_t func = w->func;
        l.unlock();
        {
            trace::Slice s(name, "workqueue");
            lock_map_acquire(&wq->lockdep_map);
            lock_map_acquire(&work_map);
            func(w);
            lock_map_release(&work_map);
            lock_map_release(&wq->lockdep_map);
        }
        l.lock();
        me->current_work = nullptr;
        std::erase(g_busy, me);
        if (wq->flushers) {
            l.unlock();
            wq->done_wq.wake_up_all();
            l.lock();
        }
    }
}

workqueue_struct* make_wq(const std::string& name, unsigned flags, int max_active, bool system) {
    workqueue_struct* wq = system ? new workqueue_struct(name) : knew<workqueue_struct>(GFP_KERNEL, name);
    if (!wq)
        return nullptr;
    wq->flags = flags;
    wq->max_active = max_active > 0 ? max_active : WQ_DFL_ACTIVE;
    wq->system = system;
    // One lockdep class per workqueue name, as the kernel registers a key per workqueue.
    wq->lockdep_map = LockdepMap(("wq:" + name).c_str(), std::source_location{});
    wq->lockdep_map.name = "workqueue";
    return wq;
}

std::string format(const char* fmt, va_list ap) {
    char buf[128];
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    return buf;
}

// Waits on done_wq until pred() holds (evaluated under g_wq_lock).
template <class Pred>
void wait_wq(workqueue_struct* wq, Pred pred, std::source_location loc = std::source_location::current()) {
    {
        std::lock_guard g(g_wq_lock);
        wq->flushers++;
    }
    wait_event_timeout_impl(
        wq->done_wq,
        [&] {
            std::lock_guard g(g_wq_lock);
            return pred();
        },
        MAX_SCHEDULE_TIMEOUT, loc);
    std::lock_guard g(g_wq_lock);
    wq->flushers--;
}

// Whether instances of `wq` with a sequence up to `seq` are still queued or running.
bool outstanding_locked(workqueue_struct* wq, u64 seq) {
    if (!wq->list.empty() && wq->list.front()->seq <= seq)
        return true;
    for (Task* t : wq->workers)
        if (t->current_work && t->current_work_seq <= seq)
            return true;
    return false;
}

// Waits for a running instance; lockdep sees the wait as taking the work's map, but only when
// there is something to wait for (as the kernel's start_flush_work).
void wait_not_running(work_struct* w) {
    workqueue_struct* wq;
    {
        std::lock_guard g(g_wq_lock);
        wq = w->wq;
        if (!wq || !running_locked(w))
            return;
    }
    lock_map_acquire(&w->lockdep_map);
    lock_map_release(&w->lockdep_map);
    wait_wq(wq, [&] { return !running_locked(w); });
}

void delayed_work_timer_fn(TimerEvent* ev, u64 gen) {
    auto* dw = static_cast<delayed_work*>(ev->owner);
    std::lock_guard g(g_wq_lock);
    if (!dw->timer_active || ev->gen != gen)
        return;  // cancelled or re-armed meanwhile
    dw->timer_active = false;
    insert_locked(dw->wq, &dw->work);
}

ktime_t delay_deadline(unsigned long delay) {
    return jiffies_timeout_deadline(delay > static_cast<unsigned long>(LONG_MAX) ? MAX_SCHEDULE_TIMEOUT
                                                                                 : static_cast<long>(delay));
}

// Arms or queues a delayed work whose pending bit the caller holds.
void queue_delayed_locked(workqueue_struct* wq, delayed_work* dw, unsigned long delay) {
    dw->wq = wq;
    dw->work.wq = wq;
    if (delay == 0) {
        insert_locked(wq, &dw->work);
        return;
    }
    dw->timer_active = true;
    backend().timer_arm(&dw->timer, delay_deadline(delay));
}

// Takes a pending delayed work off its timer or list; true if it was pending.
bool grab_pending_locked(delayed_work* dw) {
    bool was = false;
    if (dw->timer_active) {
        backend().timer_cancel(&dw->timer);
        dw->timer_active = false;
        was = true;
    }
    was |= unqueue_locked(&dw->work);
    dw->work.pending.store(false);
    return was;
}
}  // namespace

void init_work(work_struct* w, work_func_t fn, const char* name, std::source_location site) {
    w->func = fn;
    w->name = name;
    w->lockdep_map = LockdepMap(name, site);
    w->pending.store(false);
    w->wq = nullptr;
    w->queued = false;
    w->canceling = 0;
    w->disabled = 0;
}

void init_delayed_work(delayed_work* dw, work_func_t fn, const char* name, std::source_location site) {
    init_work(&dw->work, fn, name, site);
    dw->timer.fire = &delayed_work_timer_fn;
    dw->timer.owner = dw;
    dw->timer.band = kBandTimer;
    dw->timer.name = "delayed_work";
    dw->timer_active = false;
    dw->wq = nullptr;
}

workqueue_struct* alloc_workqueue(const char* fmt, unsigned flags, int max_active, ...) {
    va_list ap;
    va_start(ap, max_active);
    std::string name = format(fmt, ap);
    va_end(ap);
    return make_wq(name, flags, (flags & __WQ_ORDERED) ? 1 : max_active, false);
}

workqueue_struct* alloc_ordered_workqueue(const char* fmt, unsigned flags, ...) {
    va_list ap;
    va_start(ap, flags);
    std::string name = format(fmt, ap);
    va_end(ap);
    return make_wq(name, flags | __WQ_ORDERED | WQ_UNBOUND, 1, false);
}

bool queue_work(workqueue_struct* wq, work_struct* w) {
    preempt_point();
    std::lock_guard g(g_wq_lock);
    if (w->pending.load() || w->canceling || w->disabled)
        return false;
    w->pending.store(true);
    insert_locked(wq, w);
    return true;
}

bool queue_delayed_work(workqueue_struct* wq, delayed_work* dw, unsigned long delay) {
    preempt_point();
    std::lock_guard g(g_wq_lock);
    if (dw->work.pending.load() || dw->work.canceling || dw->work.disabled)
        return false;
    dw->work.pending.store(true);
    queue_delayed_locked(wq, dw, delay);
    return true;
}

bool mod_delayed_work(workqueue_struct* wq, delayed_work* dw, unsigned long delay) {
    preempt_point();
    std::lock_guard g(g_wq_lock);
    if (dw->work.canceling || dw->work.disabled)
        return false;
    bool was = grab_pending_locked(dw);
    dw->work.pending.store(true);
    queue_delayed_locked(wq, dw, delay);
    return was;
}

bool cancel_work(work_struct* w) {
    std::lock_guard g(g_wq_lock);
    bool was = unqueue_locked(w);
    w->pending.store(false);
    if (was && w->wq)
        w->wq->done_wq.wake_up_all();
    return was;
}

bool cancel_work_sync(work_struct* w) {
    might_sleep();
    {
        std::lock_guard g(g_wq_lock);
        w->canceling++;
    }
    bool was = cancel_work(w);
    wait_not_running(w);
    std::lock_guard g(g_wq_lock);
    w->canceling--;
    return was;
}

bool cancel_delayed_work(delayed_work* dw) {
    std::lock_guard g(g_wq_lock);
    bool was = grab_pending_locked(dw);
    if (was && dw->work.wq)
        dw->work.wq->done_wq.wake_up_all();
    return was;
}

bool cancel_delayed_work_sync(delayed_work* dw) {
    might_sleep();
    {
        std::lock_guard g(g_wq_lock);
        dw->work.canceling++;
    }
    bool was = cancel_delayed_work(dw);
    wait_not_running(&dw->work);
    std::lock_guard g(g_wq_lock);
    dw->work.canceling--;
    return was;
}

bool disable_work(work_struct* w) {
    {
        std::lock_guard g(g_wq_lock);
        w->disabled++;
    }
    return cancel_work(w);
}

bool disable_work_sync(work_struct* w) {
    might_sleep();
    const bool was = disable_work(w);
    wait_not_running(w);
    return was;
}

bool enable_work(work_struct* w) {
    std::lock_guard g(g_wq_lock);
    if (WARN_ON(w->disabled <= 0))
        return true;
    return --w->disabled == 0;
}

bool disable_delayed_work(delayed_work* dw) {
    {
        std::lock_guard g(g_wq_lock);
        dw->work.disabled++;
    }
    return cancel_delayed_work(dw);
}

bool disable_delayed_work_sync(delayed_work* dw) {
    might_sleep();
    const bool was = disable_delayed_work(dw);
    wait_not_running(&dw->work);
    return was;
}

bool enable_delayed_work(delayed_work* dw) {
    return enable_work(&dw->work);
}

bool flush_work(work_struct* w) {
    might_sleep();
    workqueue_struct* wq;
    u64 target;
    {
        std::lock_guard g(g_wq_lock);
        wq = w->wq;
        if (!wq || (!w->queued && !running_locked(w)))
            return false;
        target = w->seq;  // the instance queued now, or the one running
    }
    lock_map_acquire(&w->lockdep_map);
    lock_map_release(&w->lockdep_map);
    lock_map_acquire(&wq->lockdep_map);
    lock_map_release(&wq->lockdep_map);
    wait_wq(wq, [&] { return !(w->queued && w->seq <= target) && !running_locked(w, target); });
    return true;
}

bool flush_delayed_work(delayed_work* dw) {
    {
        std::lock_guard g(g_wq_lock);
        if (dw->timer_active) {  // run it now rather than at its deadline
            backend().timer_cancel(&dw->timer);
            dw->timer_active = false;
            insert_locked(dw->wq, &dw->work);
        }
    }
    return flush_work(&dw->work);
}

bool work_busy(const work_struct* w) {
    std::lock_guard g(g_wq_lock);
    return running_locked(w);
}

work_struct* current_work() {
    Task* t = current();
    return t ? t->current_work : nullptr;
}

void flush_workqueue(workqueue_struct* wq) {
    might_sleep();
    lock_map_acquire(&wq->lockdep_map);
    lock_map_release(&wq->lockdep_map);
    u64 target;
    {
        std::lock_guard g(g_wq_lock);
        target = wq->next_seq;
    }
    wait_wq(wq, [&] { return !outstanding_locked(wq, target); });
}

void drain_workqueue(workqueue_struct* wq) {
    for (;;) {
        flush_workqueue(wq);
        std::lock_guard g(g_wq_lock);
        if (!outstanding_locked(wq, ~u64{0}))
            return;
    }
}

void destroy_workqueue(workqueue_struct* wq) {
    if (!wq)
        return;
    drain_workqueue(wq);
    std::vector<Task*> workers;
    {
        std::lock_guard g(g_wq_lock);
        wq->stopping = true;
        for (Task* t : wq->idle)
            backend().unpark(t);
        wq->idle.clear();
        workers.swap(wq->workers);
    }
    for (Task* t : workers)
        backend().join(t);
    if (wq->system)
        delete wq;
    else
        kdelete(wq);
}

workqueue_struct* system_wq() {
    return g_system[0];
}
workqueue_struct* system_unbound_wq() {
    return g_system[1];
}
workqueue_struct* system_highpri_wq() {
    return g_system[2];
}
workqueue_struct* system_long_wq() {
    return g_system[3];
}

void workqueue_runtime_init() {
    g_system[0] = make_wq("events", 0, 16, true);
    g_system[1] = make_wq("events_unbound", WQ_UNBOUND, 16, true);
    g_system[2] = make_wq("events_highpri", WQ_HIGHPRI, 16, true);
    g_system[3] = make_wq("events_long", 0, 16, true);
}

void workqueue_runtime_exit() {
    for (workqueue_struct*& wq : g_system) {
        destroy_workqueue(wq);
        wq = nullptr;
    }
}

}  // namespace kshim
