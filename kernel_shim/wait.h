// Mirrors include/linux/wait.h: wait queues and the wait_event family.
//
// A waiter adds itself to the queue before it tests the condition, and the wake-up leaves a
// token on its task, so a wake-up between the test and the sleep is never lost.
#pragma once
#include <atomic>
#include <mutex>
#include <source_location>
#include <vector>

#include "kernel_shim/sched.h"

namespace kshim {

class wait_queue_head {
public:
    // wait_queue_entry: a sleeping task, or (func set) a callback run by the wake-up with the
    // queue's lock held, in the waker's context (poll_table entries: kernel_shim/fs/file.h).
    struct Entry {
        Task* task;
        void (*func)(Entry* e) = nullptr;
    };

    wait_queue_head() = default;
    wait_queue_head(const wait_queue_head&) = delete;
    wait_queue_head& operator=(const wait_queue_head&) = delete;

    void add(Entry* e);
    void remove(Entry* e);
    void wake_up_all();
    bool has_sleepers() const;

    // Runs fn with the queue's lock held: the kernel's wait.lock, which a completion takes to
    // keep its count and the wake-up together (see completion.h).
    template <class F>
    decltype(auto) locked(F&& fn) {
        std::lock_guard g(lock_);
        return fn();
    }
    // Inside locked(): wakes every waiter.
    void wake_up_all_locked();

private:
    mutable std::mutex lock_;  // protects entries_
    std::vector<Entry*> entries_;
    // entries_.size(), readable without the lock: a wake-up with nobody waiting (the common
    // case) skips the lock, as the kernel's wq_has_sleeper() callers do.
    std::atomic<u32> nr_entries_{0};
};

using wait_queue_head_t = wait_queue_head;
inline void init_waitqueue_head(wait_queue_head*) {}
// Every waiter here is non-exclusive, so wake_up wakes them all, as the kernel does for them.
inline void wake_up(wait_queue_head* wq) {
    wq->wake_up_all();
    preempt_point();
}
inline void wake_up_all(wait_queue_head* wq) {
    wake_up(wq);
}
inline void wake_up_interruptible(wait_queue_head* wq) {
    wake_up(wq);
}
inline void wake_up_interruptible_all(wait_queue_head* wq) {
    wake_up(wq);
}

// The loop of every wait_event-style wait: waits until cond() holds or `timeout` jiffies pass
// (MAX_SCHEDULE_TIMEOUT: forever). `enqueue(task)` puts the task where its waker looks before
// cond() is first tested, so a wake-up in between is not lost; `dequeue()` takes it out again.
// Returns, as the kernel's wait_event_timeout: 0 if cond() is still false after the timeout, else
// the jiffies left, at least 1. `interruptible`: the wait is TASK_INTERRUPTIBLE, and a pending
// signal (kernel_shim/signal.h) ends it with -ERESTARTSYS unless cond() holds.
template <class Cond, class Enqueue, class Dequeue>
long wait_cond_timeout(Cond&& cond, long timeout, std::source_location loc, const char* reason, Enqueue&& enqueue,
                       Dequeue&& dequeue, bool interruptible = false) {
    might_sleep(loc);
    auto ready = [&](long left) -> long { return left > 1 ? left : 1; };
    if (cond())
        return ready(timeout);
    Task* t = current();
    const bool forever = timeout == MAX_SCHEDULE_TIMEOUT;
    const ktime_t deadline = jiffies_timeout_deadline(timeout);
    enqueue(t);
    long result = 0;
    for (;;) {
        if (cond()) {
            result = forever ? MAX_SCHEDULE_TIMEOUT : ready(jiffies_until(deadline));
            break;
        }
        if (deadline != KTIME_MAX && ktime_get() >= deadline) {
            backend().catch_up_hardware(deadline);
            result = cond() ? 1 : 0;
            break;
        }
        if (interruptible && t->sigpending.load(std::memory_order_acquire)) {
            result = -ERESTARTSYS;
            break;
        }
        t->wait_reason = reason;
        t->wait_loc = loc;
        if (interruptible)
            t->sleep_state.store(TASK_INTERRUPTIBLE, std::memory_order_seq_cst);
        backend().park(deadline);
        t->sleep_state.store(TASK_RUNNING, std::memory_order_relaxed);
    }
    dequeue();
    return result;
}

template <class Cond>
long wait_event_timeout_impl(wait_queue_head& wq, Cond&& cond, long timeout, std::source_location loc,
                             bool interruptible = false) {
    wait_queue_head::Entry e{nullptr};
    return wait_cond_timeout(
        cond, timeout, loc, "wait_event",
        [&](Task* t) {
            e.task = t;
            wq.add(&e);
        },
        [&] { wq.remove(&e); }, interruptible);
}

// What an interruptible wait without a timeout returns, from the timed wait's result: 0, or
// -ERESTARTSYS when a signal ended it.
inline int interruptible_wait_result(long timed_result) {
    return timed_result < 0 ? -ERESTARTSYS : 0;
}

}  // namespace kshim

#define wait_event(wq, cond)                                                                                       \
    ((void)::kshim::wait_event_timeout_impl((wq), [&]() -> bool { return (cond); }, ::kshim::MAX_SCHEDULE_TIMEOUT, \
                                            std::source_location::current()))
#define wait_event_timeout(wq, cond, timeout) \
    ::kshim::wait_event_timeout_impl((wq), [&]() -> bool { return (cond); }, (timeout), std::source_location::current())
// 0, or -ERESTARTSYS when a signal is pending (kernel_shim/signal.h) before cond() holds.
#define wait_event_interruptible(wq, cond)                               \
    ::kshim::interruptible_wait_result(::kshim::wait_event_timeout_impl( \
        (wq), [&]() -> bool { return (cond); }, ::kshim::MAX_SCHEDULE_TIMEOUT, std::source_location::current(), true))
// No fatal signals are modelled: never interrupted.
#define wait_event_killable(wq, cond) (wait_event(wq, cond), 0)
// As wait_event_timeout, or -ERESTARTSYS.
#define wait_event_interruptible_timeout(wq, cond, timeout)                             \
    ::kshim::wait_event_timeout_impl((wq), [&]() -> bool { return (cond); }, (timeout), \
                                     std::source_location::current(), true)
