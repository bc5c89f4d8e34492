// Mirrors include/linux/ww_mutex.h: wound/wait mutexes for locking many objects in any order.
//
// A context (ww_acquire_ctx) gets a stamp from its class; when a context that already holds
// locks would wait for a lock held by an older context, it "dies": the lock call returns
// -EDEADLK, the caller drops everything and takes the contended lock first with lock_slow
// (wait-die, the algorithm dma_resv's reservation_ww_class uses). Re-locking a lock the context
// already holds returns -EALREADY.
#pragma once
#include <atomic>
#include <mutex>
#include <source_location>
#include <vector>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/sched.h"

namespace kshim {

struct WwClass {
    explicit WwClass(const char* name, std::source_location site = std::source_location::current())
        : name(name), acquire_map(name, site), mutex_map(name, std::source_location{}) {}
    const char* name;
    std::atomic<u64> stamp{0};
    LockdepMap acquire_map;  // class of the acquire contexts
    LockdepMap mutex_map;    // class shared by every ww_mutex of this ww_class
};

class WwMutex;

struct WwAcquireCtx {
    Task* task = nullptr;
    u64 stamp = 0;
    WwClass* ww_class = nullptr;
    u32 acquired = 0;
    bool done = false;
    WwMutex* contending_lock = nullptr;
    LockdepMap dep_map{static_cast<LockClass*>(nullptr), "ww_acquire_ctx"};
};

void ww_acquire_init(WwAcquireCtx* ctx, WwClass* ww_class, std::source_location loc = std::source_location::current());
// Marks the end of the acquire phase: no more locks will be taken with this context.
void ww_acquire_done(WwAcquireCtx* ctx);
void ww_acquire_fini(WwAcquireCtx* ctx);

class WwMutex {
public:
    explicit WwMutex(WwClass* ww_class) : ww_class_(ww_class), dep_map_(ww_class->mutex_map.cls, ww_class->name) {}
    ~WwMutex() {
#if KSHIM_DEBUG_CHECKS
        lockdep_free_map(&dep_map_);
#endif
    }
    WwMutex(const WwMutex&) = delete;
    WwMutex& operator=(const WwMutex&) = delete;

    // 0, -EDEADLK (back off) or -EALREADY (this context holds it). ctx may be null: a plain lock.
    int lock(WwAcquireCtx* ctx, std::source_location loc = std::source_location::current());
    // As lock(), or -EINTR when a signal is pending (kernel_shim/signal.h) while it would wait.
    int lock_interruptible(WwAcquireCtx* ctx, std::source_location loc = std::source_location::current()) {
        return lock_common(ctx, false, true, loc);
    }
    // After -EDEADLK, with every other lock of the context dropped: waits, never dies.
    void lock_slow(WwAcquireCtx* ctx, std::source_location loc = std::source_location::current());
    // 0, or -EINTR as lock_interruptible().
    int lock_slow_interruptible(WwAcquireCtx* ctx, std::source_location loc = std::source_location::current());
    bool trylock(WwAcquireCtx* ctx, std::source_location loc = std::source_location::current());
    void unlock(std::source_location loc = std::source_location::current());

    bool is_locked() const;
    WwAcquireCtx* owner_ctx() const;
    Task* owner() const;
    LockdepMap* dep_map() {
        return &dep_map_;
    }

private:
    int lock_common(WwAcquireCtx* ctx, bool slow, bool interruptible, std::source_location loc);
    void take_locked(WwAcquireCtx* ctx);

    WwClass* ww_class_;
    mutable std::mutex lock_;  // protects owner_, ctx_, waiters_
    Task* owner_ = nullptr;
    WwAcquireCtx* ctx_ = nullptr;
    std::vector<Task*> waiters_;
    LockdepMap dep_map_;
};

inline int ww_mutex_lock(WwMutex* m, WwAcquireCtx* ctx, std::source_location loc = std::source_location::current()) {
    return m->lock(ctx, loc);
}
inline int ww_mutex_lock_interruptible(WwMutex* m, WwAcquireCtx* ctx,
                                       std::source_location loc = std::source_location::current()) {
    return m->lock_interruptible(ctx, loc);
}
inline int ww_mutex_lock_slow_interruptible(WwMutex* m, WwAcquireCtx* ctx,
                                            std::source_location loc = std::source_location::current()) {
    return m->lock_slow_interruptible(ctx, loc);
}
inline void ww_mutex_lock_slow(WwMutex* m, WwAcquireCtx* ctx,
                               std::source_location loc = std::source_location::current()) {
    m->lock_slow(ctx, loc);
}
inline int ww_mutex_trylock(WwMutex* m, WwAcquireCtx* ctx) {
    return m->trylock(ctx);
}
inline void ww_mutex_unlock(WwMutex* m, std::source_location loc = std::source_location::current()) {
    m->unlock(loc);
}
inline bool ww_mutex_is_locked(const WwMutex* m) {
    return m->is_locked();
}

}  // namespace kshim
