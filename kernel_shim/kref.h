// Mirrors include/linux/kref.h.
#pragma once
#include <atomic>

#include "kernel_shim/mutex.h"
#include "kernel_shim/report.h"

namespace kshim {

struct kref {
    std::atomic<unsigned> refcount{1};
};

inline void kref_init(kref* k) {
    k->refcount.store(1, std::memory_order_relaxed);
}
inline unsigned kref_read(const kref* k) {
    return k->refcount.load(std::memory_order_relaxed);
}
inline void kref_get(kref* k) {
    unsigned old = k->refcount.fetch_add(1, std::memory_order_relaxed);
    WARN_ON(old == 0);  // refcount_t's "addition on 0; use-after-free"
}
inline bool kref_get_unless_zero(kref* k) {
    unsigned c = k->refcount.load(std::memory_order_relaxed);
    while (c && !k->refcount.compare_exchange_weak(c, c + 1, std::memory_order_acquire)) {
    }
    return c != 0;
}
// Calls release(k) when the count drops to zero; returns 1 then, 0 otherwise.
template <class Release>
int kref_put(kref* k, Release&& release) {
    unsigned old = k->refcount.fetch_sub(1, std::memory_order_acq_rel);
    if (WARN_ON(old == 0))
        return 0;
    if (old == 1) {
        release(k);
        return 1;
    }
    return 0;
}

// Drops a reference; the last one is dropped with `lock` taken, and release(k) runs with it
// held and must unlock it (the kernel's kref_put_mutex). Returns 1 if released.
// Outside the thread-safety analysis: on the last reference it returns with `lock` handed to
// release(), which drops it; the analysis cannot follow a lock released by a callback.
template <class Release>
int kref_put_mutex(kref* k, Release&& release, Mutex* lock) NO_THREAD_SAFETY_ANALYSIS {
    unsigned c = k->refcount.load(std::memory_order_relaxed);
    while (c > 1)
        if (k->refcount.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel))
            return 0;
    lock->lock();
    if (k->refcount.fetch_sub(1, std::memory_order_acq_rel) != 1) {
        lock->unlock();
        return 0;
    }
    release(k);
    return 1;
}

}  // namespace kshim
