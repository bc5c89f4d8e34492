// Mirrors include/linux/rwsem.h: a sleeping reader/writer lock, FIFO-fair: the releaser hands
// the lock to the head of the queue (one writer, or every reader at the head).
#pragma once
#include <deque>
#include <mutex>
#include <source_location>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/thread_safety.h"

namespace kshim {

class CAPABILITY("rw_semaphore") RwSemaphore {
public:
    explicit RwSemaphore(const char* name = nullptr, std::source_location site = std::source_location::current())
        : dep_map_(name, site) {}
    ~RwSemaphore() {
#if KSHIM_DEBUG_CHECKS
        lockdep_free_map(&dep_map_);
#endif
    }
    RwSemaphore(const RwSemaphore&) = delete;
    RwSemaphore& operator=(const RwSemaphore&) = delete;

    // The primitives themselves are outside the analysis.
    void down_read(std::source_location loc = std::source_location::current())
        ACQUIRE_SHARED() NO_THREAD_SAFETY_ANALYSIS;
    bool down_read_trylock(std::source_location loc = std::source_location::current())
        TRY_ACQUIRE_SHARED(true) NO_THREAD_SAFETY_ANALYSIS;
    void up_read(std::source_location loc = std::source_location::current()) RELEASE_SHARED() NO_THREAD_SAFETY_ANALYSIS;
    void down_write(std::source_location loc = std::source_location::current()) ACQUIRE() NO_THREAD_SAFETY_ANALYSIS;
    bool down_write_trylock(std::source_location loc = std::source_location::current())
        TRY_ACQUIRE(true) NO_THREAD_SAFETY_ANALYSIS;
    void up_write(std::source_location loc = std::source_location::current()) RELEASE() NO_THREAD_SAFETY_ANALYSIS;
    // Turns the write hold into a read hold without letting a writer in between.
    void downgrade_write(std::source_location loc = std::source_location::current()) RELEASE()
        ACQUIRE_SHARED() NO_THREAD_SAFETY_ANALYSIS;

    bool is_locked() const;
    LockdepMap* dep_map() {
        return &dep_map_;
    }

private:
    struct Waiter {
        Task* task;
        bool write;
        bool granted;
    };
    void wait_for_grant(Waiter& w, std::unique_lock<std::mutex>& l);
    void grant_locked();

    mutable std::mutex lock_;  // protects readers_, writer_, queue_
    int readers_ = 0;
    Task* writer_ = nullptr;
    std::deque<Waiter*> queue_;
    LockdepMap dep_map_;
};

inline void down_read(RwSemaphore* s, std::source_location loc = std::source_location::current()) ACQUIRE_SHARED(s) {
    s->down_read(loc);
}
inline void up_read(RwSemaphore* s, std::source_location loc = std::source_location::current()) RELEASE_SHARED(s) {
    s->up_read(loc);
}
inline void down_write(RwSemaphore* s, std::source_location loc = std::source_location::current()) ACQUIRE(s) {
    s->down_write(loc);
}
inline void up_write(RwSemaphore* s, std::source_location loc = std::source_location::current()) RELEASE(s) {
    s->up_write(loc);
}
inline int down_read_trylock(RwSemaphore* s) TRY_ACQUIRE_SHARED(1, s) {
    return s->down_read_trylock();
}
inline int down_write_trylock(RwSemaphore* s) TRY_ACQUIRE(1, s) {
    return s->down_write_trylock();
}
inline void downgrade_write(RwSemaphore* s) RELEASE(s) ACQUIRE_SHARED(s) {
    s->downgrade_write();
}

}  // namespace kshim
