// Mirrors include/linux/workqueue.h: work items run by workqueue workers (kernel tasks).
//
// Semantics kept from the kernel: queue_work on a pending item returns false; the pending bit
// is cleared before the function runs, so an item may requeue itself; an item never runs on
// two workers at once; an ordered workqueue runs one item at a time in queueing order;
// cancel_*_sync waits for a running instance and blocks requeueing meanwhile; flush_work waits
// for the instance queued at the time of the call; delayed work fires when jiffies reaches its
// deadline. lockdep sees flushes as acquisitions of the work's and the workqueue's maps, so
// flushing a work from under a lock that work takes is reported.
#pragma once
#include <atomic>
#include <functional>
#include <source_location>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/time.h"

namespace kshim {

struct workqueue_struct;

struct work_struct;
// A plain function, as in the kernel: the item may free itself inside it; use container_of.
using work_func_t = void (*)(work_struct*);

struct work_struct {
    work_func_t func = nullptr;
    const char* name = "work";
    LockdepMap lockdep_map{static_cast<LockClass*>(nullptr), "work"};

    // Protected by the workqueue lock; `pending` is also read without it (work_pending).
    std::atomic<bool> pending{false};
    workqueue_struct* wq = nullptr;  // where it was last queued
    bool queued = false;             // on wq's list
    u64 seq = 0;                     // sequence of the queued instance
    int canceling = 0;               // cancel_*_sync in progress: queueing is refused
    int disabled = 0;                // disable_work*() depth: queueing is refused until enable_work()
};

struct delayed_work {
    work_struct work;
    TimerEvent timer;
    workqueue_struct* wq = nullptr;
    bool timer_active = false;  // protected by the workqueue lock
};

inline delayed_work* to_delayed_work(work_struct* w) {
    return container_of(w, delayed_work, work);
}

void init_work(work_struct* w, work_func_t fn, const char* name, std::source_location site);
void init_delayed_work(delayed_work* dw, work_func_t fn, const char* name, std::source_location site);
#define INIT_WORK(w, fn) ::kshim::init_work((w), (fn), #fn, std::source_location::current())
#define INIT_DELAYED_WORK(dw, fn) ::kshim::init_delayed_work((dw), (fn), #fn, std::source_location::current())

// Flags (include/linux/workqueue.h).
inline constexpr unsigned WQ_UNBOUND = 1u << 1;
inline constexpr unsigned WQ_FREEZABLE = 1u << 2;
inline constexpr unsigned WQ_MEM_RECLAIM = 1u << 3;
inline constexpr unsigned WQ_HIGHPRI = 1u << 4;
inline constexpr unsigned __WQ_ORDERED = 1u << 17;
inline constexpr int WQ_MAX_ACTIVE = 512;
inline constexpr int WQ_UNBOUND_MAX_ACTIVE = WQ_MAX_ACTIVE;
inline constexpr int WQ_DFL_ACTIVE = WQ_MAX_ACTIVE / 2;

// max_active 0 means the default. Returns nullptr on allocation failure.
workqueue_struct* alloc_workqueue(const char* fmt, unsigned flags, int max_active, ...)
    __attribute__((format(printf, 1, 4)));
workqueue_struct* alloc_ordered_workqueue(const char* fmt, unsigned flags, ...) __attribute__((format(printf, 1, 3)));
void destroy_workqueue(workqueue_struct* wq);
void flush_workqueue(workqueue_struct* wq);
void drain_workqueue(workqueue_struct* wq);

bool queue_work(workqueue_struct* wq, work_struct* w);
bool queue_delayed_work(workqueue_struct* wq, delayed_work* dw, unsigned long delay);
bool mod_delayed_work(workqueue_struct* wq, delayed_work* dw, unsigned long delay);
bool cancel_work(work_struct* w);
bool cancel_work_sync(work_struct* w);
bool cancel_delayed_work(delayed_work* dw);
bool cancel_delayed_work_sync(delayed_work* dw);
bool flush_work(work_struct* w);
// The kernel's disable/enable pair: like cancel_*(), and later queueing attempts are refused (they
// return false) until as many enable_*() calls as disable_*() ones. disable_* returns whether the
// item was pending; enable_* whether it is enabled again.
bool disable_work(work_struct* w);
bool disable_work_sync(work_struct* w);
bool enable_work(work_struct* w);
bool disable_delayed_work(delayed_work* dw);
bool disable_delayed_work_sync(delayed_work* dw);
bool enable_delayed_work(delayed_work* dw);
bool flush_delayed_work(delayed_work* dw);
inline bool work_pending(const work_struct* w) {
    return w->pending.load();
}
inline bool delayed_work_pending(const delayed_work* dw) {
    return work_pending(&dw->work);
}
// True while some worker runs the item.
bool work_busy(const work_struct* w);
work_struct* current_work();

// The system workqueues (they live as long as the runtime).
workqueue_struct* system_wq();
workqueue_struct* system_unbound_wq();
workqueue_struct* system_highpri_wq();
workqueue_struct* system_long_wq();
inline bool schedule_work(work_struct* w) {
    return queue_work(system_wq(), w);
}
inline bool schedule_delayed_work(delayed_work* dw, unsigned long delay) {
    return queue_delayed_work(system_wq(), dw, delay);
}

// Runtime hooks.
void workqueue_runtime_init();
void workqueue_runtime_exit();

}  // namespace kshim
