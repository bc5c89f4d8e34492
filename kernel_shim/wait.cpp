// Mirrors kernel/sched/wait.c.
#include "kernel_shim/wait.h"

#include <algorithm>

namespace kshim {

// The waiter publishes itself, then tests its condition; the waker changes the condition, then
// looks for waiters. Both steps are read-modify-writes of nr_entries_, so they are ordered: either
// the waker's comes later and sees the waiter, or the waiter's comes later and (acquiring what
// the waker released) sees the new condition. Fences would do too, but TSan does not model them.
void wait_queue_head::add(Entry* e) {
    std::lock_guard g(lock_);
    entries_.push_back(e);
    nr_entries_.fetch_add(1, std::memory_order_acq_rel);
}

void wait_queue_head::remove(Entry* e) {
    std::lock_guard g(lock_);
    const size_t before = entries_.size();
    std::erase(entries_, e);
    nr_entries_.fetch_sub(static_cast<u32>(before - entries_.size()), std::memory_order_relaxed);
}

void wait_queue_head::wake_up_all() {
    if (!nr_entries_.fetch_add(0, std::memory_order_acq_rel))
        return;
    std::lock_guard g(lock_);
    wake_up_all_locked();
}

void wait_queue_head::wake_up_all_locked() {
    for (Entry* e : entries_) {
        if (e->func)
            e->func(e);
        else
            backend().unpark(e->task);
    }
}

bool wait_queue_head::has_sleepers() const {
    std::lock_guard g(lock_);
    return !entries_.empty();
}

}  // namespace kshim
