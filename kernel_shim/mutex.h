// Mirrors include/linux/mutex.h: a sleeping lock with an owner, checked by lockdep-lite.
#pragma once
#include <atomic>
#include <mutex>
#include <source_location>
#include <vector>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/thread_safety.h"

namespace kshim {

class CAPABILITY("mutex") Mutex {
public:
    explicit Mutex(const char* name = nullptr, std::source_location site = std::source_location::current())
        : dep_map_(name, site) {}
    ~Mutex() {
#if KSHIM_DEBUG_CHECKS
        lockdep_free_map(&dep_map_);
#endif
    }
    Mutex(const Mutex&) = delete;
    Mutex& operator=(const Mutex&) = delete;

    void lock(std::source_location loc = std::source_location::current()) ACQUIRE() {
        lock_nested(0, loc);
    }
    // The primitives themselves are outside the analysis (it cannot see the owner_ atomic).
    void lock_nested(u32 subclass, std::source_location loc = std::source_location::current())
        ACQUIRE() NO_THREAD_SAFETY_ANALYSIS;
    // 0, or -EINTR when a signal is pending (kernel_shim/signal.h) while it would wait.
    int lock_interruptible(std::source_location loc = std::source_location::current())
        TRY_ACQUIRE(0) NO_THREAD_SAFETY_ANALYSIS;
    // No fatal signals are modelled: never fails.
    int lock_killable(std::source_location loc = std::source_location::current()) ACQUIRE() {
        lock(loc);
        return 0;
    }
    bool try_lock(std::source_location loc = std::source_location::current())
        TRY_ACQUIRE(true) NO_THREAD_SAFETY_ANALYSIS;
    void unlock(std::source_location loc = std::source_location::current()) RELEASE() NO_THREAD_SAFETY_ANALYSIS;

    bool is_locked() const {
        return owner_.load(std::memory_order_relaxed) != nullptr;
    }
    // The owner is only meaningful to debugging and the tests.
    Task* owner() const {
        return owner_.load(std::memory_order_relaxed);
    }
    LockdepMap* dep_map() {
        return &dep_map_;
    }

private:
    static Task* self_token();
    int lock_slow(Task* me, bool interruptible);

    std::atomic<Task*> owner_{nullptr};
    std::atomic<bool> has_waiters_{false};
    std::mutex wait_lock_;  // protects waiters_
    std::vector<Task*> waiters_;
    LockdepMap dep_map_;
};

// RAII guard that records the caller's location for lockdep (std::lock_guard would record the
// standard library's).
class SCOPED_CAPABILITY MutexGuard {
public:
    explicit MutexGuard(Mutex& m, std::source_location loc = std::source_location::current()) ACQUIRE(m) : m_(m) {
        m_.lock(loc);
    }
    ~MutexGuard() RELEASE() { m_.unlock(); }
    MutexGuard(const MutexGuard&) = delete;
    MutexGuard& operator=(const MutexGuard&) = delete;

private:
    Mutex& m_;
};

inline void mutex_lock(Mutex* m, std::source_location loc = std::source_location::current()) ACQUIRE(m) {
    m->lock(loc);
}
inline void mutex_lock_nested(Mutex* m, u32 sub, std::source_location loc = std::source_location::current())
    ACQUIRE(m) {
    m->lock_nested(sub, loc);
}
inline int mutex_lock_interruptible(Mutex* m, std::source_location loc = std::source_location::current())
    TRY_ACQUIRE(0, m) {
    return m->lock_interruptible(loc);
}
inline int mutex_trylock(Mutex* m, std::source_location loc = std::source_location::current()) TRY_ACQUIRE(1, m) {
    return m->try_lock(loc);
}
inline void mutex_unlock(Mutex* m, std::source_location loc = std::source_location::current()) RELEASE(m) {
    m->unlock(loc);
}
inline bool mutex_is_locked(const Mutex* m) {
    return m->is_locked();
}

}  // namespace kshim
