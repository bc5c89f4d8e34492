// Mirrors kernel/locking/ww_mutex.h (wait-die): every ownership change wakes the waiters so a
// younger waiter that holds locks re-checks and dies instead of waiting behind an older context.
#include "kernel_shim/ww_mutex.h"

#include <algorithm>

#include "kernel_shim/report.h"
#include "kernel_shim/signal.h"

namespace kshim {

void ww_acquire_init(WwAcquireCtx* ctx, WwClass* ww_class, std::source_location loc) {
    ctx->task = current();
    ctx->stamp = ww_class->stamp.fetch_add(1) + 1;
    ctx->ww_class = ww_class;
    ctx->acquired = 0;
    ctx->done = false;
    ctx->contending_lock = nullptr;
    ctx->dep_map = LockdepMap(ww_class->acquire_map.cls, "ww_acquire_ctx");
    lockdep_acquire(&ctx->dep_map, 0, false, 0, nullptr, loc);
}

void ww_acquire_done(WwAcquireCtx* ctx) {
    ctx->done = true;
}

void ww_acquire_fini(WwAcquireCtx* ctx) {
    WARN_ON(ctx->acquired != 0);
    lockdep_release(&ctx->dep_map);
    ctx->task = nullptr;
}

void WwMutex::take_locked(WwAcquireCtx* ctx) {
    owner_ = current();
    ctx_ = ctx;
    if (ctx)
        ctx->acquired++;
    for (Task* w : waiters_)
        backend().unpark(w);
}

int WwMutex::lock_common(WwAcquireCtx* ctx, bool slow, bool interruptible, std::source_location loc) {
    might_sleep(loc);
    if (ctx) {
        if (ctx->ww_class != ww_class_)
            WARN(true, "ww_mutex locked with a context of another class");
        if (ctx->done)
            WARN(true, "ww_mutex locked after ww_acquire_done");
        std::lock_guard l(lock_);
        if (ctx_ == ctx)
            return -EALREADY;
    }
    if (slow)
        WARN_ON(ctx && ctx->contending_lock != this);
    lockdep_acquire(&dep_map_, 0, false, 0, ctx ? static_cast<const void*>(ctx) : nullptr, loc);
    Task* me = current();
    bool queued = false;
    std::unique_lock l(lock_);
    for (;;) {
        if (!owner_) {
            if (queued)
                std::erase(waiters_, me);
            take_locked(ctx);
            if (ctx)
                ctx->contending_lock = nullptr;
            return 0;
        }
        if (ctx && !slow && ctx->acquired > 0 && ctx_ && ctx->stamp > ctx_->stamp) {
            if (queued)
                std::erase(waiters_, me);
            ctx->contending_lock = this;
            l.unlock();
            lockdep_release(&dep_map_, loc);
            return -EDEADLK;
        }
        if (interruptible && signal_pending(me)) {
            if (queued)
                std::erase(waiters_, me);
            l.unlock();
            lockdep_release(&dep_map_, loc);
            return -EINTR;
        }
        if (!queued) {
            waiters_.push_back(me);
            queued = true;
        }
        l.unlock();
        me->wait_reason = "ww_mutex";
        if (interruptible)
            me->sleep_state.store(TASK_INTERRUPTIBLE);
        backend().park(KTIME_MAX);
        me->sleep_state.store(TASK_RUNNING);
        l.lock();
    }
}

int WwMutex::lock(WwAcquireCtx* ctx, std::source_location loc) {
    return lock_common(ctx, false, false, loc);
}

void WwMutex::lock_slow(WwAcquireCtx* ctx, std::source_location loc) {
    if (ctx)
        WARN_ON(ctx->acquired != 0);
    lock_common(ctx, true, false, loc);
}

int WwMutex::lock_slow_interruptible(WwAcquireCtx* ctx, std::source_location loc) {
    if (ctx)
        WARN_ON(ctx->acquired != 0);
    return lock_common(ctx, true, true, loc);
}

bool WwMutex::trylock(WwAcquireCtx* ctx, std::source_location loc) {
    std::unique_lock l(lock_);
    if (owner_)
        return false;
    take_locked(ctx);
    l.unlock();
    lockdep_acquire(&dep_map_, 0, true, 0, ctx, loc);
    return true;
}

void WwMutex::unlock(std::source_location loc) {
    lockdep_release(&dep_map_, loc);
    std::lock_guard l(lock_);
    WARN_ON(owner_ != current());
    if (ctx_)
        ctx_->acquired--;
    owner_ = nullptr;
    ctx_ = nullptr;
    for (Task* w : waiters_)
        backend().unpark(w);
}

bool WwMutex::is_locked() const {
    std::lock_guard l(lock_);
    return owner_ != nullptr;
}

WwAcquireCtx* WwMutex::owner_ctx() const {
    std::lock_guard l(lock_);
    return ctx_;
}

Task* WwMutex::owner() const {
    std::lock_guard l(lock_);
    return owner_;
}

}  // namespace kshim
