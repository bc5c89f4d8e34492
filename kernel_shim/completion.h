// Mirrors include/linux/completion.h.
#pragma once
#include <atomic>
#include <climits>

#include "kernel_shim/wait.h"

namespace kshim {

// The count changes under the wait queue's lock, and a waiter takes that lock to consume it, as
// the kernel's do: a waiter that returns has seen complete() finish with the completion, so the
// usual on-stack completion (complete() in another thread, then the waiter's frame goes) never
// has complete() touch a dead wait queue.
struct completion {
    std::atomic<unsigned> done{0};  // UINT_MAX after complete_all: every wait passes
    wait_queue_head wait;

    // Takes one completion if there is one.
    bool try_consume() {
        if (!done.load(std::memory_order_acquire))
            return false;
        return wait.locked([&] {
            const unsigned d = done.load(std::memory_order_relaxed);
            if (!d)
                return false;
            if (d != UINT_MAX)
                done.store(d - 1, std::memory_order_relaxed);
            return true;
        });
    }
};

inline void init_completion(completion* x) {
    x->done.store(0);
}
// A plain store, as the kernel's: whoever hands the completion over (a lock, a queue) orders it.
inline void reinit_completion(completion* x) {
    x->done.store(0, std::memory_order_relaxed);
}
inline void complete(completion* x) {
    x->wait.locked([&] {
        const unsigned d = x->done.load(std::memory_order_relaxed);
        if (d != UINT_MAX)
            x->done.store(d + 1, std::memory_order_release);
        x->wait.wake_up_all_locked();
    });
    preempt_point();
}
inline void complete_all(completion* x) {
    x->wait.locked([&] {
        x->done.store(UINT_MAX, std::memory_order_release);
        x->wait.wake_up_all_locked();
    });
    preempt_point();
}
#define wait_for_completion(x) wait_event((x)->wait, (x)->try_consume())
// 0 on timeout, else the jiffies left (at least 1).
#define wait_for_completion_timeout(x, timeout) wait_event_timeout((x)->wait, (x)->try_consume(), (timeout))
// 0, or -ERESTARTSYS when a signal is pending (kernel_shim/signal.h) before it completes.
#define wait_for_completion_interruptible(x) wait_event_interruptible((x)->wait, (x)->try_consume())
// As wait_for_completion_timeout, or -ERESTARTSYS.
#define wait_for_completion_interruptible_timeout(x, timeout) \
    wait_event_interruptible_timeout((x)->wait, (x)->try_consume(), (timeout))
inline bool try_wait_for_completion(completion* x) {
    return x->try_consume();
}
// Like the kernel's: true only once complete() has also released the wait lock.
inline bool completion_done(completion* x) {
    if (!x->done.load(std::memory_order_acquire))
        return false;
    x->wait.locked([] {});
    return true;
}

}  // namespace kshim
