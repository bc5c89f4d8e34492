// Mirrors kernel/locking/mutex.c: an owner word taken by compare-and-swap, with a FIFO of
// sleepers behind it. The unlocker wakes the first sleeper, which competes again (a late
// arrival may barge in first, as on the kernel's fast path).
#include "kernel_shim/mutex.h"

#include <algorithm>

#include "kernel_shim/report.h"
#include "kernel_shim/signal.h"

namespace kshim {

namespace {
// Out of line: the report's strings would give Mutex::unlock a large stack frame, which ASan
// poisons and clears on every unlock.
[[gnu::noinline, gnu::cold]] void report_unowned_unlock(const char* name, std::source_location loc) {
    report(
        ReportKind::LockUsage,
        std::string("DEBUG_LOCKS_WARN_ON: mutex unlocked by a task that does not own it: ") + (name ? name : "mutex"),
        std::string("at ") + loc.file_name() + ":" + std::to_string(loc.line()));
}
}  // namespace

Task* Mutex::self_token() {
    Task* t = current();
    // Outside a runtime (a benchmark's setup, a static destructor) the lock still works.
    return t ? t : reinterpret_cast<Task*>(alignof(Task));
}

void Mutex::lock_nested(u32 subclass, std::source_location loc) {
    might_sleep(loc);
    if (Runtime::get())
        preempt_point();
    lockdep_acquire(&dep_map_, subclass, false, 0, nullptr, loc);
    Task* me = self_token();
    Task* expected = nullptr;
    if (owner_.compare_exchange_strong(expected, me, std::memory_order_acquire))
        return;
    lock_slow(me, false);
}

int Mutex::lock_interruptible(std::source_location loc) {
    might_sleep(loc);
    if (Runtime::get())
        preempt_point();
    lockdep_acquire(&dep_map_, 0, false, 0, nullptr, loc);
    Task* me = self_token();
    Task* expected = nullptr;
    if (owner_.compare_exchange_strong(expected, me, std::memory_order_acquire))
        return 0;
    const int ret = lock_slow(me, current() != nullptr);
    if (ret)
        lockdep_release(&dep_map_, loc);
    return ret;
}

int Mutex::lock_slow(Task* me, bool interruptible) {
    bool queued = false;
    for (;;) {
        {
            std::lock_guard g(wait_lock_);
            has_waiters_.store(true);
            Task* expected = nullptr;
            if (owner_.compare_exchange_strong(expected, me)) {
                if (queued)
                    std::erase(waiters_, me);
                has_waiters_.store(!waiters_.empty());
                return 0;
            }
            if (!queued) {
                waiters_.push_back(me);
                queued = true;
            }
            if (interruptible && signal_pending(me)) {
                // Leaving the queue: a wake-up the unlocker meant for this waiter goes on to the
                // next one, as the kernel's interrupted waiter hands it on.
                const bool was_first = waiters_.front() == me;
                std::erase(waiters_, me);
                has_waiters_.store(!waiters_.empty());
                if (was_first && !waiters_.empty() && !owner_.load())
                    backend().unpark(waiters_.front());
                return -EINTR;
            }
        }
        me->wait_reason = "mutex";
        if (interruptible)
            me->sleep_state.store(TASK_INTERRUPTIBLE);
        backend().park(KTIME_MAX);
        me->sleep_state.store(TASK_RUNNING);
    }
}

bool Mutex::try_lock(std::source_location loc) {
    Task* expected = nullptr;
    if (!owner_.compare_exchange_strong(expected, self_token(), std::memory_order_acquire))
        return false;
    lockdep_acquire(&dep_map_, 0, true, 0, nullptr, loc);
    return true;
}

void Mutex::unlock(std::source_location loc) {
#if KSHIM_DEBUG_CHECKS
    if (owner_.load(std::memory_order_relaxed) != self_token())
        report_unowned_unlock(dep_map_.name, loc);
#endif
    lockdep_release(&dep_map_, loc);
    owner_.store(nullptr);
    if (has_waiters_.load()) {
        std::lock_guard g(wait_lock_);
        if (!waiters_.empty())
            backend().unpark(waiters_.front());
    }
    if (Runtime::get())
        preempt_point();
}

}  // namespace kshim
