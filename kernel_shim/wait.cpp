// Mirrors kernel/sched/wait.c.
#include "kernel_shim/wait.h"

#include <algorithm>

namespace kshim {

void WaitQueueHead::add(Entry* e) {
    std::lock_guard g(lock_);
    entries_.push_back(e);
}

void WaitQueueHead::remove(Entry* e) {
    std::lock_guard g(lock_);
    std::erase(entries_, e);
}

void WaitQueueHead::wake_up_all() {
    std::lock_guard g(lock_);
    for (Entry* e : entries_) backend().unpark(e->task);
}

bool WaitQueueHead::has_sleepers() const {
    std::lock_guard g(lock_);
    return !entries_.empty();
}

}  // namespace kshim
