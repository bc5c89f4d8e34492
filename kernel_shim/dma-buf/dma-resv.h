// Mirrors include/linux/dma-resv.h: the reservation object of a buffer.
//
// A ww_mutex (reservation_ww_class) serialises writers; the fences are kept in one list, each
// with a usage. Usages are ordered KERNEL < WRITE < READ < BOOKKEEP and asking for one includes
// every stronger one (READ returns KERNEL, WRITE and READ fences). Unlocked readers take
// references under `fences_lock`, our stand-in for the kernel's RCU: a reader re-checks the
// list generation under it and restarts when the list was replaced.
#pragma once
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/ww_mutex.h"

namespace kshim {

extern WwClass reservation_ww_class;

enum dma_resv_usage {
    DMA_RESV_USAGE_KERNEL,    // memory management: migrations, clears; everybody waits for these
    DMA_RESV_USAGE_WRITE,     // implicit-sync writers
    DMA_RESV_USAGE_READ,      // implicit-sync readers
    DMA_RESV_USAGE_BOOKKEEP,  // neither: tracked for eviction and teardown only
};

// What an access must wait for: a writer waits for readers too, a reader only for writers.
inline dma_resv_usage dma_resv_usage_rw(bool write) {
    return write ? DMA_RESV_USAGE_READ : DMA_RESV_USAGE_WRITE;
}

struct dma_resv_list {
    struct entry {
        dma_fence* fence;  // one reference
        dma_resv_usage usage;
    };
    u32 num_fences;
    u32 max_fences;
    entry table[];  // max_fences slots
};

struct dma_resv {
    WwMutex lock{&reservation_ww_class};
    // Protects `fences` (the pointer, the list's entries and num_fences) and `generation`
    // against unlocked readers; writers also hold `lock`.
    SpinLock fences_lock{"dma_resv.fences"};
    dma_resv_list* fences = nullptr;
    u64 generation = 0;  // bumped whenever `fences` is replaced
};

void dma_resv_init(dma_resv* obj);
void dma_resv_fini(dma_resv* obj);

inline int dma_resv_lock(dma_resv* obj, WwAcquireCtx* ctx, std::source_location loc = std::source_location::current()) {
    return ww_mutex_lock(&obj->lock, ctx, loc);
}
inline int dma_resv_lock_interruptible(dma_resv* obj, WwAcquireCtx* ctx,
                                       std::source_location loc = std::source_location::current()) {
    return ww_mutex_lock_interruptible(&obj->lock, ctx, loc);
}
inline void dma_resv_lock_slow(dma_resv* obj, WwAcquireCtx* ctx,
                               std::source_location loc = std::source_location::current()) {
    ww_mutex_lock_slow(&obj->lock, ctx, loc);
}
inline int dma_resv_lock_slow_interruptible(dma_resv* obj, WwAcquireCtx* ctx,
                                            std::source_location loc = std::source_location::current()) {
    return obj->lock.lock_slow_interruptible(ctx, loc);
}
inline bool dma_resv_trylock(dma_resv* obj) {
    return ww_mutex_trylock(&obj->lock, nullptr);
}
void dma_resv_unlock(dma_resv* obj);
inline bool dma_resv_is_locked(dma_resv* obj) {
    return ww_mutex_is_locked(&obj->lock);
}
inline WwAcquireCtx* dma_resv_locking_ctx(dma_resv* obj) {
    return obj->lock.owner_ctx();
}
#define dma_resv_assert_held(obj) lockdep_assert_held(&(obj)->lock)
inline bool dma_resv_held(dma_resv* obj) {
    return lock_is_held(obj->lock.dep_map());
}

// Makes room for `num_fences` more add_fence calls; must be called (locked) before them.
int dma_resv_reserve_fences(dma_resv* obj, unsigned num_fences);
// Takes its own reference; replaces an older fence of the same context with a usage no
// stronger than `usage`, or any signalled fence.
void dma_resv_add_fence(dma_resv* obj, dma_fence* fence, dma_resv_usage usage);
// Every fence of `context` becomes `replacement` with `usage`.
void dma_resv_replace_fences(dma_resv* obj, u64 context, dma_fence* replacement, dma_resv_usage usage);
// dst (locked) gets the unsignalled fences of src (unlocked read).
int dma_resv_copy_fences(dma_resv* dst, dma_resv* src);
// A kmalloc'ed array of references to the unsignalled fences of `usage` (and stronger).
int dma_resv_get_fences(dma_resv* obj, dma_resv_usage usage, unsigned* num_fences, dma_fence*** fences);
// Those fences as one: nullptr, the only one, or a new dma_fence_array.
int dma_resv_get_singleton(dma_resv* obj, dma_resv_usage usage, dma_fence** fence);
long dma_resv_wait_timeout(dma_resv* obj, dma_resv_usage usage, bool intr, unsigned long timeout);
bool dma_resv_test_signaled(dma_resv* obj, dma_resv_usage usage);
void dma_resv_set_deadline(dma_resv* obj, dma_resv_usage usage, ktime_t deadline);

// ---- iterators ----
struct dma_resv_iter {
    dma_resv* obj = nullptr;
    dma_resv_usage usage = DMA_RESV_USAGE_KERNEL;  // include fences of this usage and stronger
    dma_fence* fence = nullptr;                    // current fence (a reference when unlocked)
    dma_resv_usage fence_usage = DMA_RESV_USAGE_KERNEL;
    unsigned index = 0;
    dma_resv_list* fences = nullptr;
    unsigned num_fences = 0;  // snapshot at the last (re)start
    u64 generation = 0;
    bool is_restarted = false;  // the walk started over: drop what was collected
};

inline void dma_resv_iter_begin(dma_resv_iter* cursor, dma_resv* obj, dma_resv_usage usage) {
    cursor->obj = obj;
    cursor->usage = usage;
    cursor->fence = nullptr;
}
inline void dma_resv_iter_end(dma_resv_iter* cursor) {
    dma_fence_put(cursor->fence);
    cursor->fence = nullptr;
}
inline dma_resv_usage dma_resv_iter_usage(const dma_resv_iter* cursor) {
    return cursor->fence_usage;
}
inline bool dma_resv_iter_is_restarted(const dma_resv_iter* cursor) {
    return cursor->is_restarted;
}

// Unlocked: yields references (dropped by the next step or iter_end) to unsignalled fences.
dma_fence* dma_resv_iter_first_unlocked(dma_resv_iter* cursor);
dma_fence* dma_resv_iter_next_unlocked(dma_resv_iter* cursor);
// Locked: borrowed pointers to every fence, signalled or not.
dma_fence* dma_resv_iter_first(dma_resv_iter* cursor);
dma_fence* dma_resv_iter_next(dma_resv_iter* cursor);

#define dma_resv_for_each_fence_unlocked(cursor, fence)                \
    for (fence = ::kshim::dma_resv_iter_first_unlocked(cursor); fence; \
         fence = ::kshim::dma_resv_iter_next_unlocked(cursor))

#define dma_resv_for_each_fence(cursor, obj, usage, fence)                                                      \
    for (::kshim::dma_resv_iter_begin(cursor, obj, usage), fence = ::kshim::dma_resv_iter_first(cursor); fence; \
         fence = ::kshim::dma_resv_iter_next(cursor))

// The boot-time priming of lockdep (dma_resv -> fs_reclaim -> dma_fence_map); registered as a
// lockdep primer so every runtime starts with it.
void dma_resv_lockdep();

}  // namespace kshim
