// Mirrors include/linux/mutex.h: a sleeping lock with an owner, checked by lockdep-lite.
#pragma once
#include <atomic>
#include <mutex>
#include <source_location>
#include <vector>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/sched.h"

namespace kshim {

class Mutex {
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

    void lock(std::source_location loc = std::source_location::current()) { lock_nested(0, loc); }
    void lock_nested(u32 subclass, std::source_location loc = std::source_location::current());
    // 0, or -EINTR when a signal is pending (kernel_shim/signal.h) while it would wait.
    int lock_interruptible(std::source_location loc = std::source_location::current());
    // No fatal signals are modelled: never fails.
    int lock_killable(std::source_location loc = std::source_location::current()) {
        lock(loc);
        return 0;
    }
    bool try_lock(std::source_location loc = std::source_location::current());
    void unlock(std::source_location loc = std::source_location::current());

    bool is_locked() const { return owner_.load(std::memory_order_relaxed) != nullptr; }
    // The owner is only meaningful to debugging and the tests.
    Task* owner() const { return owner_.load(std::memory_order_relaxed); }
    LockdepMap* dep_map() { return &dep_map_; }

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
class MutexGuard {
public:
    explicit MutexGuard(Mutex& m, std::source_location loc = std::source_location::current()) : m_(m) { m_.lock(loc); }
    ~MutexGuard() { m_.unlock(); }
    MutexGuard(const MutexGuard&) = delete;
    MutexGuard& operator=(const MutexGuard&) = delete;

private:
    Mutex& m_;
};

inline void mutex_lock(Mutex* m, std::source_location loc = std::source_location::current()) { m->lock(loc); }
inline void mutex_lock_nested(Mutex* m, u32 sub, std::source_location loc = std::source_location::current()) {
    m->lock_nested(sub, loc);
}
inline int mutex_lock_interruptible(Mutex* m, std::source_location loc = std::source_location::current()) {
    return m->lock_interruptible(loc);
}
inline int mutex_trylock(Mutex* m, std::source_location loc = std::source_location::current()) { return m->try_lock(loc); }
inline void mutex_unlock(Mutex* m, std::source_location loc = std::source_location::current()) { m->unlock(loc); }
inline bool mutex_is_locked(const Mutex* m) { return m->is_locked(); }

}  // namespace kshim
