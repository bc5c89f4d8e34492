// Mirrors include/linux/rwsem.h: a sleeping reader/writer lock, FIFO-fair: the releaser hands
// the lock to the head of the queue (one writer, or every reader at the head).
#pragma once
#include <deque>
#include <mutex>
#include <source_location>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/sched.h"

namespace kshim {

class RwSemaphore {
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

    void down_read(std::source_location loc = std::source_location::current());
    bool down_read_trylock(std::source_location loc = std::source_location::current());
    void up_read(std::source_location loc = std::source_location::current());
    void down_write(std::source_location loc = std::source_location::current());
    bool down_write_trylock(std::source_location loc = std::source_location::current());
    void up_write(std::source_location loc = std::source_location::current());
    // Turns the write hold into a read hold without letting a writer in between.
    void downgrade_write(std::source_location loc = std::source_location::current());

    bool is_locked() const;
    LockdepMap* dep_map() { return &dep_map_; }

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

inline void down_read(RwSemaphore* s, std::source_location loc = std::source_location::current()) { s->down_read(loc); }
inline void up_read(RwSemaphore* s, std::source_location loc = std::source_location::current()) { s->up_read(loc); }
inline void down_write(RwSemaphore* s, std::source_location loc = std::source_location::current()) { s->down_write(loc); }
inline void up_write(RwSemaphore* s, std::source_location loc = std::source_location::current()) { s->up_write(loc); }
inline int down_read_trylock(RwSemaphore* s) { return s->down_read_trylock(); }
inline int down_write_trylock(RwSemaphore* s) { return s->down_write_trylock(); }
inline void downgrade_write(RwSemaphore* s) { s->downgrade_write(); }

}  // namespace kshim
