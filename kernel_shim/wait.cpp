// Mirrors kernel/sched/wait.c.
#include "kernel_shim/wait.h"

#include <algorithm>

namespace kshim {

// The waiter publishes itself, then (full barrier) tests its condition; the waker changes the
// condition, then (full barrier) looks for waiters. One of the two sees the other.
void WaitQueueHead::add(Entry* e) {
    {
        std::lock_guard g(lock_);
        entries_.push_back(e);
        nr_entries_.store(static_cast<u32>(entries_.size()), std::memory_order_relaxed);
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);
}

void WaitQueueHead::remove(Entry* e) {
    std::lock_guard g(lock_);
    std::erase(entries_, e);
    nr_entries_.store(static_cast<u32>(entries_.size()), std::memory_order_relaxed);
}

void WaitQueueHead::wake_up_all() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (!nr_entries_.load(std::memory_order_relaxed)) return;
    std::lock_guard g(lock_);
    for (Entry* e : entries_) backend().unpark(e->task);
}

bool WaitQueueHead::has_sleepers() const {
    std::lock_guard g(lock_);
    return !entries_.empty();
}

}  // namespace kshim
