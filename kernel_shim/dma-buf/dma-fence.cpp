// Mirrors drivers/dma-buf/dma-fence.c: init, refcount release, signalling, callbacks, status.
#include "kernel_shim/dma-buf/dma-fence.h"

#include <new>
#include <string>

#include "kernel_shim/dma-buf/dma-fence-trace.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"

namespace kshim {
namespace {
// Context 0 is left to the stubs, as upstream starts the counter at 1.
std::atomic<u64> g_context_counter{1};

std::string fence_text(dma_fence* f) {
    return std::string(dma_fence_driver_name(f)) + ":" + dma_fence_timeline_name(f) + ":" + std::to_string(f->context) +
           ":" + std::to_string(f->seqno);
}
}  // namespace

u64 dma_fence_context_alloc(unsigned num) {
    WARN_ON(num == 0);
    return g_context_counter.fetch_add(num, std::memory_order_relaxed);
}

static void __dma_fence_init(dma_fence* fence, const dma_fence_ops* ops, SpinLock* lock, u64 context, u64 seqno,
                             unsigned long flags) {
    BUG_ON(!ops || !ops->get_driver_name || !ops->get_timeline_name);
    fence->refcount.refcount.store(1, std::memory_order_relaxed);
    // Callers may hand us raw kmalloc memory, as kernel code does: make the members valid.
    new (&fence->ops) std::atomic<const dma_fence_ops*>(ops);
    new (&fence->cb_list) dma_fence_cb_list();
    if (!lock) {
        // A re-init over an earlier inline lock just rebuilds it: a lock owns no resources.
        lock = new (fence->inline_lock_storage) SpinLock("dma_fence.inline_lock");
        flags |= 1ul << DMA_FENCE_FLAG_INLINE_LOCK_BIT;
    }
    fence->lock = lock;
    fence->context = context;
    fence->seqno = seqno;
    fence->timestamp = 0;
    fence->flags.store(flags | (ops->use_64bit_seqno ? 1ul << DMA_FENCE_FLAG_SEQNO64_BIT : 0),
                       std::memory_order_relaxed);
    fence->error.store(0, std::memory_order_relaxed);
    trace_dma_fence("dma_fence_init", fence);
}

void dma_fence_init(dma_fence* fence, const dma_fence_ops* ops, SpinLock* lock, u64 context, u64 seqno) {
    __dma_fence_init(fence, ops, lock, context, seqno, 0);
}

void dma_fence_init64(dma_fence* fence, const dma_fence_ops* ops, SpinLock* lock, u64 context, u64 seqno) {
    __dma_fence_init(fence, ops, lock, context, seqno, 1ul << DMA_FENCE_FLAG_SEQNO64_BIT);
}

void dma_fence_warn_refcount(const dma_fence* fence, const char* what) {
    report(ReportKind::Warn, std::string("dma_fence refcount: ") + what,
           "fence context " + std::to_string(fence->context) + " seqno " + std::to_string(fence->seqno));
}

void dma_fence_set_error_warn(dma_fence* fence, int error) {
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT))
        report(ReportKind::Warn, "dma_fence_set_error on a signalled fence", fence_text(fence));
    if (error >= 0 || error < -MAX_ERRNO)
        report(ReportKind::Warn, "dma_fence_set_error with a non-error value " + std::to_string(error),
               fence_text(fence));
}

void dma_fence_release(dma_fence* fence) {
    trace_dma_fence("dma_fence_destroy", fence);
    // A waiter still queued would never be woken. Upstream warns and then signals with
    // -EDEADLK so chains built on the fence do not dangle; we do the same.
    if (!fence->cb_list.empty() && !dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT)) [[unlikely]] {
#if KSHIM_DEBUG_CHECKS
        report(ReportKind::Fence, "fence " + fence_text(fence) + " released with pending signals",
               "the last reference was dropped before the fence signalled while callbacks were queued");
#endif
        spin_lock(fence->lock);
        fence->error.store(-EDEADLK, std::memory_order_relaxed);
        dma_fence_signal_locked(fence);
        spin_unlock(fence->lock);
    }
    // Detached ops had no release: the default free is what they asked for.
    const dma_fence_ops* ops = dma_fence_ops_load(fence);
    if (ops && ops->release)
        ops->release(fence);
    else
        dma_fence_free(fence);
}

void dma_fence_free(dma_fence* fence) {
    fence->~dma_fence();
    kfree(fence);
}

// After the SIGNALED bit: a reader that still saw the ops also saw the fence unsignalled, and
// the tables are static, so its call stays valid. Fences whose release or wait still has to run
// keep them. Traced before, so the event still names the driver.
static inline void dma_fence_detach_ops(dma_fence* fence) {
    const dma_fence_ops* ops = fence->ops.load(std::memory_order_relaxed);
    if (!ops->release && !ops->wait)
        fence->ops.store(nullptr, std::memory_order_release);
}

int dma_fence_signal_timestamp_locked(dma_fence* fence, ktime_t timestamp) {
    lockdep_assert_held(fence->lock);
    constexpr unsigned long done = (1ul << DMA_FENCE_FLAG_SIGNALED_BIT) | (1ul << DMA_FENCE_FLAG_TIMESTAMP_BIT);
    if (fence->flags.load(std::memory_order_relaxed) & (1ul << DMA_FENCE_FLAG_SIGNALED_BIT)) [[unlikely]]
        return -EINVAL;
    // The timestamp is written before the bits that publish it.
    fence->timestamp = timestamp;
    if (fence->cb_list.empty()) [[likely]] {
        __dma_fence_or_flags_locked(fence, done);
        trace_dma_fence("dma_fence_signaled", fence);
        dma_fence_detach_ops(fence);
        return 0;
    }
    // Detach the list first, so the callbacks see an empty list on the signalled fence.
    dma_fence_cb_list cbs;
    cbs.swap(fence->cb_list);
    __dma_fence_or_flags_locked(fence, done);
    trace_dma_fence("dma_fence_signaled", fence);
    dma_fence_detach_ops(fence);
    // Each node is unlinked before its callback runs, which may free it or re-arm it elsewhere;
    // the detached list itself is not repaired node by node since it is dropped whole.
    cbs.clear_and_dispose([fence](dma_fence_cb* cb) { cb->func(fence, cb); });
    return 0;
}

// Not under the fence lock: yielding there would stall every waiter spinning on it. Only the
// simulated runtime preempts, so real mode skips the call.
static inline void dma_fence_signal_preempt_point() {
    Runtime* rt = Runtime::get();
    if (rt && rt->mode() == Mode::Simulated)
        preempt_point();
}

int dma_fence_signal_locked(dma_fence* fence) {
    return dma_fence_signal_timestamp_locked(fence, ktime_get());
}

int dma_fence_signal_timestamp(dma_fence* fence, ktime_t timestamp) {
    if (!fence) [[unlikely]] {
        WARN_ON(true);
        return -EINVAL;
    }
    bool cookie = dma_fence_begin_signalling();
    spin_lock(fence->lock);
    int ret = dma_fence_signal_timestamp_locked(fence, timestamp);
    spin_unlock(fence->lock);
    dma_fence_end_signalling(cookie);
    dma_fence_signal_preempt_point();
    return ret;
}

int dma_fence_signal(dma_fence* fence) {
    if (!fence) [[unlikely]]
        return -EINVAL;
    bool cookie = dma_fence_begin_signalling();
    spin_lock(fence->lock);
    int ret = dma_fence_signal_timestamp_locked(fence, ktime_get());
    spin_unlock(fence->lock);
    dma_fence_end_signalling(cookie);
    dma_fence_signal_preempt_point();
    return ret;
}

bool dma_fence_check_and_signal_locked(dma_fence* fence) {
    return dma_fence_signal_locked(fence) != 0;
}

bool dma_fence_check_and_signal(dma_fence* fence) {
    return dma_fence_signal(fence) != 0;
}

// Sets ENABLE_SIGNAL and calls the driver the first time; false when the fence is (now) done.
static bool __dma_fence_enable_signaling(dma_fence* fence) {
    lockdep_assert_held(fence->lock);
    bool was_set = dma_fence_test_and_set_flag(fence, DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT);
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT))
        return false;
    // Unsignalled (checked above, under the lock the signal takes): the ops are still there.
    const dma_fence_ops* ops = dma_fence_ops_load(fence);
    if (!was_set && ops->enable_signaling) {
        trace_dma_fence("dma_fence_enable_signal", fence);
        if (!ops->enable_signaling(fence)) {
            dma_fence_signal_locked(fence);
            return false;
        }
    }
    return true;
}

void dma_fence_enable_sw_signaling(dma_fence* fence) {
    spin_lock(fence->lock);
    __dma_fence_enable_signaling(fence);
    spin_unlock(fence->lock);
}

int dma_fence_add_callback(dma_fence* fence, dma_fence_cb* cb, dma_fence_func_t func) {
    if (!fence || !func) [[unlikely]] {
        WARN_ON(true);
        return -EINVAL;
    }
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT))
        return -ENOENT;
    int ret = 0;
    spin_lock(fence->lock);
    if (__dma_fence_enable_signaling(fence)) {
        cb->func = func;
        fence->cb_list.push_back(*cb);
    } else {
        ret = -ENOENT;
    }
    spin_unlock(fence->lock);
    return ret;
}

bool dma_fence_remove_callback(dma_fence* fence, dma_fence_cb* cb) {
    spin_lock(fence->lock);
    // Linked means still on this fence's list: the signal detaches nodes under this lock.
    bool ret = cb->node.is_linked();
    if (ret)
        fence->cb_list.erase(fence->cb_list.iterator_to(*cb));
    spin_unlock(fence->lock);
    return ret;
}

void dma_fence_set_deadline(dma_fence* fence, ktime_t deadline) {
    const dma_fence_ops* ops = dma_fence_ops_load(fence);
    if (ops && ops->set_deadline && !dma_fence_is_signaled(fence))
        ops->set_deadline(fence, deadline);
}

int dma_fence_get_status(dma_fence* fence) {
    spin_lock(fence->lock);
    int status = dma_fence_get_status_locked(fence);
    spin_unlock(fence->lock);
    return status;
}

ktime_t dma_fence_timestamp(dma_fence* fence) {
    if (!dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT)) [[unlikely]] {
        WARN_ON(true);
        return ktime_get();
    }
    // Set together with SIGNALED here; the wait only matters for a fence signalled elsewhere.
    while (!dma_fence_test_flag(fence, DMA_FENCE_FLAG_TIMESTAMP_BIT))
        cond_resched();
    return fence->timestamp;
}

}  // namespace kshim
