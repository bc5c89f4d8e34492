// Mirrors include/linux/dma-fence.h: the cross-driver completion primitive.
//
// A fence is created unsignalled, signals exactly once, and may carry an error set before it
// signals. Callbacks run inside the signal with the fence lock held; waiters sleep through the
// shim (schedule_timeout), never on host primitives. The signalled test is a flag load inline
// here, because every layer above polls it on its fast paths.
#pragma once
#include <atomic>
#include <boost/intrusive/list.hpp>
#include <new>

#include "kernel_shim/err.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/report.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/types.h"

namespace kshim {

struct dma_fence;
struct dma_fence_cb;

enum dma_fence_flag_bits {
    DMA_FENCE_FLAG_SIGNALED_BIT,
    DMA_FENCE_FLAG_TIMESTAMP_BIT,
    DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT,
    DMA_FENCE_FLAG_SEQNO64_BIT,
    DMA_FENCE_FLAG_INLINE_LOCK_BIT,  // `lock` points at the fence's own inline_lock
    DMA_FENCE_FLAG_USER_BITS,        // first bit free for the fence's implementer
};

using dma_fence_func_t = void (*)(dma_fence* fence, dma_fence_cb* cb);

using dma_fence_cb_hook = boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>>;

// Embedded by the waiter (no allocation per callback). Unlinked again once it ran or was removed.
struct dma_fence_cb {
    dma_fence_cb_hook node;
    dma_fence_func_t func = nullptr;
};

// The kernel's `!list_empty(&cb->node)`: still queued on a fence.
inline bool dma_fence_cb_pending(const dma_fence_cb* cb) {
    return cb->node.is_linked();
}

using dma_fence_cb_list =
    boost::intrusive::list<dma_fence_cb,
                           boost::intrusive::member_hook<dma_fence_cb, dma_fence_cb_hook, &dma_fence_cb::node>,
                           boost::intrusive::constant_time_size<false>>;

struct dma_fence_ops {
    // Compare seqnos as 64-bit numbers instead of wrapping 32-bit ones.
    bool use_64bit_seqno = false;
    const char* (*get_driver_name)(dma_fence* fence) = nullptr;    // mandatory
    const char* (*get_timeline_name)(dma_fence* fence) = nullptr;  // mandatory
    // First waiter arrived; false means "already done" (the core then signals the fence).
    bool (*enable_signaling)(dma_fence* fence) = nullptr;
    // Peek at completion without enabling signalling.
    bool (*signaled)(dma_fence* fence) = nullptr;
    // Custom wait (deprecated upstream); jiffies left, 0 on timeout. Having it (or release)
    // keeps `ops` attached after the signal, since those run on a signalled fence.
    long (*wait)(dma_fence* fence, bool intr, long timeout) = nullptr;
    // Frees the fence; without it the fence is destroyed and kfree'd (it must come from kmalloc).
    void (*release)(dma_fence* fence) = nullptr;
    void (*set_deadline)(dma_fence* fence, ktime_t deadline) = nullptr;
};

struct dma_fence {
    // Protects cb_list and the signal transition: the creator's lock, or inline_lock when
    // dma_fence_init got none. Upstream has a union of the two and dma_fence_spinlock();
    // we keep the pointer so that code written against `fence->lock` keeps working.
    SpinLock* lock = nullptr;
    // Set by init; cleared by the signal when the ops have neither release nor wait, so that
    // a signalled fence no longer depends on who issued it (upstream's RCU-protected pointer).
    // Read it with dma_fence_ops_load() and expect nullptr once the fence signalled.
    std::atomic<const dma_fence_ops*> ops{nullptr};
    dma_fence_cb_list cb_list;  // waiters' callbacks, until the fence signals
    ktime_t timestamp = 0;      // valid once DMA_FENCE_FLAG_TIMESTAMP_BIT is set
    u64 context = 0;
    u64 seqno = 0;
    std::atomic<unsigned long> flags{0};
    kref refcount;
    // Only meaningful (< 0) once signalled; written before the signal publishes it.
    std::atomic<int> error{0};
    // Storage for the lock used when dma_fence_init gets a null lock (upstream's inline_lock).
    // Constructed only then, since building a lock registers its lockdep class: fences with an
    // external lock pay nothing. All inline locks share one class, as upstream's do.
    alignas(SpinLock) unsigned char inline_lock_storage[sizeof(SpinLock)];

    dma_fence() = default;
    dma_fence(const dma_fence&) = delete;
    dma_fence& operator=(const dma_fence&) = delete;
    ~dma_fence() {
        if (flags.load(std::memory_order_relaxed) & (1ul << DMA_FENCE_FLAG_INLINE_LOCK_BIT))
            std::launder(reinterpret_cast<SpinLock*>(inline_lock_storage))->~SpinLock();
    }
};

// The ops of a fence, or nullptr once it signalled and detached from them. The table itself
// is static, so the pointer stays usable after the load even if the signal clears it.
inline const dma_fence_ops* dma_fence_ops_load(const dma_fence* f) {
    return f->ops.load(std::memory_order_acquire);
}

// Upstream's accessors for the lock that protects the fence.
inline SpinLock* dma_fence_spinlock(dma_fence* f) {
    return f->lock;
}
#define dma_fence_lock_irqsave(fence, flags) spin_lock_irqsave(::kshim::dma_fence_spinlock(fence), flags)
#define dma_fence_unlock_irqrestore(fence, flags) spin_unlock_irqrestore(::kshim::dma_fence_spinlock(fence), flags)
#define dma_fence_assert_held(fence) lockdep_assert_held(::kshim::dma_fence_spinlock(fence))

// ---- flag helpers (the kernel's test_bit/set_bit on fence->flags) ----
// Reads need no lock. Every write happens under fence->lock (unlike upstream, where set_bit
// may run anywhere): that lets the signal publish its bits with a plain release store instead
// of a second locked instruction. The setters check the lock in debug builds.
inline bool dma_fence_test_flag(const dma_fence* f, int bit) {
    return f->flags.load(std::memory_order_acquire) & (1ul << bit);
}
// Only looks at the flag: never asks the driver (ops->signaled) nor signals.
inline bool dma_fence_test_signaled_flag(const dma_fence* f) {
    return dma_fence_test_flag(f, DMA_FENCE_FLAG_SIGNALED_BIT);
}
inline void __dma_fence_or_flags_locked(dma_fence* f, unsigned long bits) {
    f->flags.store(f->flags.load(std::memory_order_relaxed) | bits, std::memory_order_release);
}
inline void dma_fence_set_flag(dma_fence* f, int bit) {
    lockdep_assert_held(f->lock);
    __dma_fence_or_flags_locked(f, 1ul << bit);
}
inline bool dma_fence_test_and_set_flag(dma_fence* f, int bit) {
    lockdep_assert_held(f->lock);
    bool was = f->flags.load(std::memory_order_relaxed) & (1ul << bit);
    if (!was)
        __dma_fence_or_flags_locked(f, 1ul << bit);
    return was;
}

// A null `lock` means the fence's own inline_lock (upstream's preferred form).
void dma_fence_init(dma_fence* fence, const dma_fence_ops* ops, SpinLock* lock, u64 context, u64 seqno);
// Same, with 64-bit seqno ordering whatever the ops say.
void dma_fence_init64(dma_fence* fence, const dma_fence_ops* ops, SpinLock* lock, u64 context, u64 seqno);
u64 dma_fence_context_alloc(unsigned num);

void dma_fence_release(dma_fence* fence);
void dma_fence_free(dma_fence* fence);
void dma_fence_warn_refcount(const dma_fence* fence, const char* what);

inline dma_fence* dma_fence_get(dma_fence* fence) {
    if (fence) {
        unsigned old = fence->refcount.refcount.fetch_add(1, std::memory_order_relaxed);
        if (old == 0) [[unlikely]]
            dma_fence_warn_refcount(fence, "get on a released fence");
    }
    return fence;
}
// Only succeeds while somebody else still holds a reference (the kernel's RCU lookup).
inline dma_fence* dma_fence_get_rcu(dma_fence* fence) {
    return kref_get_unless_zero(&fence->refcount) ? fence : nullptr;
}
inline void dma_fence_put(dma_fence* fence) {
    if (!fence)
        return;
    unsigned old = fence->refcount.refcount.fetch_sub(1, std::memory_order_acq_rel);
    if (old == 1) [[unlikely]]
        dma_fence_release(fence);
    else if (old == 0) [[unlikely]]
        dma_fence_warn_refcount(fence, "put on a released fence");
}

// ---- signalling annotations (lockdep-lite; no-ops when the debug checks are compiled out) ----
#if KSHIM_DEBUG_CHECKS
bool dma_fence_begin_signalling(std::source_location loc = std::source_location::current());
void dma_fence_end_signalling(bool cookie);
void __dma_fence_might_wait(std::source_location loc = std::source_location::current());
#else
inline bool dma_fence_begin_signalling(std::source_location = std::source_location::current()) {
    return true;
}
inline void dma_fence_end_signalling(bool) {}
inline void __dma_fence_might_wait(std::source_location = std::source_location::current()) {}
#endif
inline void dma_fence_might_wait(std::source_location loc = std::source_location::current()) {
    __dma_fence_might_wait(loc);
}
// The map every signalling section holds (for tests and lockdep_assert-style checks).
extern LockdepMap dma_fence_lockdep_map;

// ---- signalling: 0 on the first call, -EINVAL once signalled ----
// The newest upstream returns void here and moved the "was it already signalled" answer to
// dma_fence_check_and_signal(). We keep the int: callers written for either API compile
// and behave the same (new ones ignore the value, old ones still get it).
int dma_fence_signal(dma_fence* fence);
int dma_fence_signal_locked(dma_fence* fence);
int dma_fence_signal_timestamp(dma_fence* fence, ktime_t timestamp);
int dma_fence_signal_timestamp_locked(dma_fence* fence, ktime_t timestamp);
// Signals if not yet signalled; true when it already was.
bool dma_fence_check_and_signal(dma_fence* fence);
bool dma_fence_check_and_signal_locked(dma_fence* fence);

int dma_fence_add_callback(dma_fence* fence, dma_fence_cb* cb, dma_fence_func_t func);
bool dma_fence_remove_callback(dma_fence* fence, dma_fence_cb* cb);
void dma_fence_enable_sw_signaling(dma_fence* fence);
void dma_fence_set_deadline(dma_fence* fence, ktime_t deadline);

inline bool dma_fence_is_signaled_locked(dma_fence* fence) {
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT)) [[likely]]
        return true;
    const dma_fence_ops* ops = dma_fence_ops_load(fence);
    if (ops && ops->signaled && ops->signaled(fence)) {
        dma_fence_signal_locked(fence);
        return true;
    }
    return false;
}

inline bool dma_fence_is_signaled(dma_fence* fence) {
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT)) [[likely]]
        return true;
    const dma_fence_ops* ops = dma_fence_ops_load(fence);
    if (ops && ops->signaled && ops->signaled(fence)) {
        dma_fence_signal(fence);
        return true;
    }
    return false;
}

// ---- seqno ordering within one context ----
inline bool __dma_fence_is_later(const dma_fence* fence, u64 f1, u64 f2) {
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SEQNO64_BIT))
        return f1 > f2;
    // 32-bit timelines wrap: compare the distance, as the kernel does.
    return static_cast<s32>(static_cast<u32>(f1) - static_cast<u32>(f2)) > 0;
}
inline bool dma_fence_is_later(dma_fence* f1, dma_fence* f2) {
    if (f1->context != f2->context) [[unlikely]] {
        WARN_ON(true);
        return false;
    }
    return __dma_fence_is_later(f1, f1->seqno, f2->seqno);
}
inline bool dma_fence_is_later_or_same(dma_fence* f1, dma_fence* f2) {
    return f1 == f2 || dma_fence_is_later(f1, f2);
}
// The fence that signals last, or nullptr when that one already signalled.
inline dma_fence* dma_fence_later(dma_fence* f1, dma_fence* f2) {
    if (f1->context != f2->context) [[unlikely]] {
        WARN_ON(true);
        return nullptr;
    }
    if (dma_fence_is_later(f1, f2))
        return dma_fence_is_signaled(f1) ? nullptr : f1;
    return dma_fence_is_signaled(f2) ? nullptr : f2;
}

// ---- status ----
// 0 while pending, 1 when signalled cleanly, the error when signalled with one.
inline int dma_fence_get_status_locked(dma_fence* fence) {
    if (!dma_fence_is_signaled_locked(fence))
        return 0;
    int err = fence->error.load(std::memory_order_relaxed);
    return err ? err : 1;
}
int dma_fence_get_status(dma_fence* fence);

void dma_fence_set_error_warn(dma_fence* fence, int error);
inline void dma_fence_set_error(dma_fence* fence, int error) {
    // After the signal, waiters may already have read the status.
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT) || error >= 0 || error < -MAX_ERRNO) [[unlikely]]
        dma_fence_set_error_warn(fence, error);
    fence->error.store(error, std::memory_order_relaxed);
}

// When it signalled; only valid on a signalled fence (warns and returns now otherwise).
ktime_t dma_fence_timestamp(dma_fence* fence);

// ---- waiting: jiffies left (> 0) when signalled, 0 on timeout ----
long dma_fence_default_wait(dma_fence* fence, bool intr, long timeout);
long dma_fence_wait_timeout(dma_fence* fence, bool intr, long timeout);
// Index of a signalled fence in *idx when it returns > 0; -ENOMEM, -EINVAL on bad arguments.
long dma_fence_wait_any_timeout(dma_fence** fences, u32 count, bool intr, long timeout, u32* idx);
// 0 once signalled (the kernel's convention for the untimed wait).
inline long dma_fence_wait(dma_fence* fence, bool intr) {
    long ret = dma_fence_wait_timeout(fence, intr, MAX_SCHEDULE_TIMEOUT);
    return ret < 0 ? ret : 0;
}

// ---- stubs: already-signalled fences ----
dma_fence* dma_fence_get_stub();
dma_fence* dma_fence_allocate_private_stub(ktime_t timestamp);

// Names for debug output; fixed strings once the fence signalled, as upstream's helpers: the
// timeline (e.g. a drm_sched scheduler) may be gone by then, fences outliving their issuer.
inline const char* dma_fence_driver_name(dma_fence* f) {
    const dma_fence_ops* ops = dma_fence_ops_load(f);
    return ops && !dma_fence_test_signaled_flag(f) ? ops->get_driver_name(f) : "detached-driver";
}
inline const char* dma_fence_timeline_name(dma_fence* f) {
    const dma_fence_ops* ops = dma_fence_ops_load(f);
    return ops && !dma_fence_test_signaled_flag(f) ? ops->get_timeline_name(f) : "signaled-timeline";
}

}  // namespace kshim

// ---- dma_fence_get_rcu_safe (kept apart from the rest of this header) ----
namespace kshim {

// A reference to the fence published at *fencep, or nullptr when none is. Retries when the
// fence seen is being released or was replaced meanwhile, as upstream does. Upstream relies on
// RCU to keep the memory of a fence it failed to get readable; the shim has no RCU, so this is
// safe only where the publisher does not free a fence it unpublishes before readers are done:
// always in simulated mode (nothing runs between the load and the get: no preemption point),
// and in real mode under whatever keeps the container and its fence alive.
inline dma_fence* dma_fence_get_rcu_safe(std::atomic<dma_fence*>* fencep) {
    for (;;) {
        dma_fence* fence = fencep->load(std::memory_order_acquire);
        if (!fence)
            return nullptr;
        if (!dma_fence_get_rcu(fence))
            continue;
        if (fence == fencep->load(std::memory_order_acquire))
            return fence;
        dma_fence_put(fence);
    }
}
// For a plain pointer field that writers publish with release stores (rcu_assign_pointer).
inline dma_fence* dma_fence_get_rcu_safe(dma_fence** fencep) {
    std::atomic_ref<dma_fence*> ref(*fencep);
    for (;;) {
        dma_fence* fence = ref.load(std::memory_order_acquire);
        if (!fence)
            return nullptr;
        if (!dma_fence_get_rcu(fence))
            continue;
        if (fence == ref.load(std::memory_order_acquire))
            return fence;
        dma_fence_put(fence);
    }
}

}  // namespace kshim
