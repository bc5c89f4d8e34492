// Mirrors kernel/locking/rwsem.c (behaviour, not its optimistic spinning): hand-off to the queue
// head keeps writers from starving behind a stream of readers.
#include "kernel_shim/rwsem.h"

#include "kernel_shim/report.h"

namespace kshim {

void RwSemaphore::wait_for_grant(Waiter& w, std::unique_lock<std::mutex>& l) {
    queue_.push_back(&w);
    while (!w.granted) {
        l.unlock();
        w.task->wait_reason = w.write ? "rwsem (write)" : "rwsem (read)";
        backend().park(KTIME_MAX);
        l.lock();
    }
}

// Called with lock_ held when the semaphore may have become available.
void RwSemaphore::grant_locked() {
    while (!queue_.empty() && !writer_) {
        Waiter* w = queue_.front();
        if (w->write) {
            if (readers_)
                return;
            writer_ = w->task;
        } else {
            readers_++;
        }
        queue_.pop_front();
        w->granted = true;
        backend().unpark(w->task);
        if (w->write)
            return;
    }
}

void RwSemaphore::down_read(std::source_location loc) {
    might_sleep(loc);
    lockdep_acquire(&dep_map_, 0, false, 1, nullptr, loc);
    std::unique_lock l(lock_);
    if (!writer_ && queue_.empty()) {
        readers_++;
        return;
    }
    Waiter w{current(), false, false};
    wait_for_grant(w, l);
}

bool RwSemaphore::down_read_trylock(std::source_location loc) {
    std::unique_lock l(lock_);
    if (writer_ || !queue_.empty())
        return false;
    readers_++;
    l.unlock();
    lockdep_acquire(&dep_map_, 0, true, 1, nullptr, loc);
    return true;
}

void RwSemaphore::up_read(std::source_location loc) {
    lockdep_release(&dep_map_, loc);
    std::lock_guard l(lock_);
    if (WARN_ON(readers_ <= 0))
        return;
    readers_--;
    grant_locked();
}

void RwSemaphore::down_write(std::source_location loc) {
    might_sleep(loc);
    lockdep_acquire(&dep_map_, 0, false, 0, nullptr, loc);
    std::unique_lock l(lock_);
    if (!writer_ && !readers_ && queue_.empty()) {
        writer_ = current();
        return;
    }
    Waiter w{current(), true, false};
    wait_for_grant(w, l);
}

bool RwSemaphore::down_write_trylock(std::source_location loc) {
    std::unique_lock l(lock_);
    if (writer_ || readers_ || !queue_.empty())
        return false;
    writer_ = current();
    l.unlock();
    lockdep_acquire(&dep_map_, 0, true, 0, nullptr, loc);
    return true;
}

void RwSemaphore::up_write(std::source_location loc) {
    lockdep_release(&dep_map_, loc);
    std::lock_guard l(lock_);
    WARN_ON(writer_ != current());
    writer_ = nullptr;
    grant_locked();
}

void RwSemaphore::downgrade_write(std::source_location loc) {
    lockdep_release(&dep_map_, loc);
    lockdep_acquire(&dep_map_, 0, false, 1, nullptr, loc);
    std::lock_guard l(lock_);
    WARN_ON(writer_ != current());
    writer_ = nullptr;
    readers_++;
    // Let the readers queued at the head in with us; a writer at the head keeps waiting.
    while (!queue_.empty() && !queue_.front()->write) {
        Waiter* w = queue_.front();
        queue_.pop_front();
        readers_++;
        w->granted = true;
        backend().unpark(w->task);
    }
}

bool RwSemaphore::is_locked() const {
    std::lock_guard l(lock_);
    return writer_ || readers_;
}

}  // namespace kshim
