// Mirrors include/linux/completion.h.
#pragma once
#include <atomic>
#include <climits>

#include "kernel_shim/wait.h"

namespace kshim {

struct completion {
    std::atomic<unsigned> done{0};  // UINT_MAX after complete_all: every wait passes
    WaitQueueHead wait;

    // Takes one completion if there is one.
    bool try_consume() {
        unsigned d = done.load();
        while (d) {
            if (d == UINT_MAX) return true;
            if (done.compare_exchange_weak(d, d - 1)) return true;
        }
        return false;
    }
};

inline void init_completion(completion* x) { x->done.store(0); }
// A plain store, as the kernel's: whoever hands the completion over (a lock, a queue) orders it.
inline void reinit_completion(completion* x) { x->done.store(0, std::memory_order_relaxed); }
inline void complete(completion* x) {
    unsigned d = x->done.load();
    while (d != UINT_MAX && !x->done.compare_exchange_weak(d, d + 1)) {
    }
    wake_up(&x->wait);
}
// wake_up's full barrier orders the store before its look for waiters (see WaitQueueHead).
inline void complete_all(completion* x) {
    x->done.store(UINT_MAX, std::memory_order_release);
    wake_up(&x->wait);
}
#define wait_for_completion(x) wait_event((x)->wait, (x)->try_consume())
// 0 on timeout, else the jiffies left (at least 1).
#define wait_for_completion_timeout(x, timeout) wait_event_timeout((x)->wait, (x)->try_consume(), (timeout))
#define wait_for_completion_interruptible(x) (wait_for_completion(x), 0)
#define wait_for_completion_interruptible_timeout(x, timeout) wait_for_completion_timeout(x, timeout)
inline bool try_wait_for_completion(completion* x) { return x->try_consume(); }
inline bool completion_done(completion* x) { return x->done.load() != 0; }

}  // namespace kshim
