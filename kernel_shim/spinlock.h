// Mirrors include/linux/spinlock.h: a busy-waiting lock; holding one is atomic context, so
// might_sleep fires inside it. In simulated mode a contended spinlock yields so the holder runs.
#pragma once
#include <atomic>
#include <source_location>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/thread_safety.h"

namespace kshim {

class CAPABILITY("spinlock") SpinLock {
public:
    explicit SpinLock(const char* name = nullptr, std::source_location site = std::source_location::current())
        : dep_map_(name, site) {}
    ~SpinLock() {
#if KSHIM_DEBUG_CHECKS
        lockdep_free_map(&dep_map_);
#endif
    }
    SpinLock(const SpinLock&) = delete;
    SpinLock& operator=(const SpinLock&) = delete;

    // The primitives themselves are outside the analysis (it cannot see locked_).
    void lock(std::source_location loc = std::source_location::current()) ACQUIRE() NO_THREAD_SAFETY_ANALYSIS {
        preempt_disable();
        lockdep_acquire(&dep_map_, 0, false, 0, nullptr, loc);
        if (locked_.exchange(true, std::memory_order_acquire))
            lock_slow();
    }
    bool try_lock(std::source_location loc = std::source_location::current())
        TRY_ACQUIRE(true) NO_THREAD_SAFETY_ANALYSIS {
        preempt_disable();
        if (locked_.exchange(true, std::memory_order_acquire)) {
            preempt_enable();
            return false;
        }
        lockdep_acquire(&dep_map_, 0, true, 0, nullptr, loc);
        return true;
    }
    void unlock(std::source_location loc = std::source_location::current()) RELEASE() NO_THREAD_SAFETY_ANALYSIS {
        lockdep_release(&dep_map_, loc);
        locked_.store(false, std::memory_order_release);
        preempt_enable();
    }
    bool is_locked() const {
        return locked_.load(std::memory_order_relaxed);
    }
    LockdepMap* dep_map() {
        return &dep_map_;
    }

private:
    void lock_slow();

    std::atomic<bool> locked_{false};
    LockdepMap dep_map_;
};

class SCOPED_CAPABILITY SpinGuard {
public:
    explicit SpinGuard(SpinLock& l, std::source_location loc = std::source_location::current()) ACQUIRE(l) : l_(l) {
        l_.lock(loc);
    }
    ~SpinGuard() RELEASE() { l_.unlock(); }
    SpinGuard(const SpinGuard&) = delete;
    SpinGuard& operator=(const SpinGuard&) = delete;

private:
    SpinLock& l_;
};

inline void spin_lock(SpinLock* l, std::source_location loc = std::source_location::current()) ACQUIRE(l) {
    l->lock(loc);
}
inline void spin_unlock(SpinLock* l, std::source_location loc = std::source_location::current()) RELEASE(l) {
    l->unlock(loc);
}
inline bool spin_trylock(SpinLock* l, std::source_location loc = std::source_location::current()) TRY_ACQUIRE(true, l) {
    return l->try_lock(loc);
}
// IRQ-disabling forms: the shim has no interrupts to disable beyond the atomic section, so
// `flags` only keeps the kernel's calling shape.
#define spin_lock_irqsave(l, flags) \
    do {                            \
        (flags) = 0;                \
        (l)->lock();                \
    } while (0)
#define spin_unlock_irqrestore(l, flags) \
    do {                                 \
        (void)(flags);                   \
        (l)->unlock();                   \
    } while (0)
inline void spin_lock_irq(SpinLock* l, std::source_location loc = std::source_location::current()) ACQUIRE(l) {
    l->lock(loc);
}
inline void spin_unlock_irq(SpinLock* l, std::source_location loc = std::source_location::current()) RELEASE(l) {
    l->unlock(loc);
}
inline bool spin_is_locked(const SpinLock* l) {
    return l->is_locked();
}

}  // namespace kshim
