// Mirrors drivers/dma-buf/dma-resv.c: fence slots, reservation, lookups, waits, lockdep priming.
#include "kernel_shim/dma-buf/dma-resv.h"

#include <algorithm>
#include <cstring>

#include "kernel_shim/dma-buf/dma-fence-array.h"
#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "kernel_shim/slab.h"

namespace kshim {

WwClass reservation_ww_class("reservation_ww_class");

namespace {
dma_resv_list* dma_resv_list_alloc(unsigned max_fences) {
    auto* list = static_cast<dma_resv_list*>(
        kmalloc(sizeof(dma_resv_list) + sizeof(dma_resv_list::entry) * max_fences, GFP_KERNEL));
    if (!list)
        return nullptr;
    list->num_fences = 0;
    list->max_fences = max_fences;
    return list;
}

void dma_resv_list_free(dma_resv_list* list) {
    if (!list)
        return;
    for (u32 i = 0; i < list->num_fences; ++i)
        dma_fence_put(list->table[i].fence);
    kfree(list);
}

// Publishes a new list to unlocked readers; returns the old one.
dma_resv_list* dma_resv_swap_list(dma_resv* obj, dma_resv_list* list) {
    SpinGuard g(obj->fences_lock);
    dma_resv_list* old = obj->fences;
    obj->fences = list;
    obj->generation++;
    return old;
}
}  // namespace

void dma_resv_init(dma_resv* obj) {
    obj->fences = nullptr;
    obj->generation = 0;
}

void dma_resv_fini(dma_resv* obj) {
    dma_resv_list_free(obj->fences);
    obj->fences = nullptr;
}

void dma_resv_unlock(dma_resv* obj) {
#if KSHIM_DEBUG_CHECKS
    // Forget the reservation so an add_fence in the next locked section without its own
    // reserve_fences is caught, as CONFIG_DEBUG_MUTEXES does upstream.
    if (obj->fences)
        obj->fences->max_fences = obj->fences->num_fences;
#endif
    ww_mutex_unlock(&obj->lock);
}

int dma_resv_reserve_fences(dma_resv* obj, unsigned num_fences) {
    dma_resv_assert_held(obj);
    dma_resv_list* old = obj->fences;
    unsigned max;
    if (old && old->max_fences) {
        if (old->num_fences + num_fences <= old->max_fences)
            return 0;
        max = std::max(old->num_fences + num_fences, old->max_fences * 2);
    } else {
        max = std::max(4u, num_fences);
    }
    dma_resv_list* list = dma_resv_list_alloc(max);
    if (!list)
        return -ENOMEM;

    // Carry the pending fences over; park the signalled ones at the tail to drop them.
    unsigned j = 0, k = max;
    for (u32 i = 0; old && i < old->num_fences; ++i) {
        if (dma_fence_is_signaled(old->table[i].fence))
            list->table[--k] = old->table[i];
        else
            list->table[j++] = old->table[i];
    }
    list->num_fences = j;
    dma_resv_swap_list(obj, list);
    if (!old)
        return 0;
    for (unsigned i = k; i < max; ++i)
        dma_fence_put(list->table[i].fence);
    kfree(old);
    return 0;
}

void dma_resv_add_fence(dma_resv* obj, dma_fence* fence, dma_resv_usage usage) {
    dma_resv_assert_held(obj);
    // Containers go in member by member, or every lookup would have to recurse.
    WARN_ON(dma_fence_is_container(fence));
    dma_fence_get(fence);
    dma_resv_list* list = obj->fences;
    u32 count = list ? list->num_fences : 0;
    for (u32 i = 0; i < count; ++i) {
        dma_fence* old = list->table[i].fence;
        dma_resv_usage old_usage = list->table[i].usage;
        if ((old->context == fence->context && old_usage >= usage && dma_fence_is_later_or_same(fence, old)) ||
            dma_fence_is_signaled(old)) {
            {
                SpinGuard g(obj->fences_lock);
                list->table[i] = {fence, usage};
            }
            dma_fence_put(old);
            return;
        }
    }
    if (!list || list->num_fences >= list->max_fences) [[unlikely]] {
        WARN(true, "dma_resv_add_fence without a slot reserved by dma_resv_reserve_fences");
        dma_fence_put(fence);
        return;
    }
    SpinGuard g(obj->fences_lock);
    list->table[count] = {fence, usage};
    list->num_fences = count + 1;
}

void dma_resv_replace_fences(dma_resv* obj, u64 context, dma_fence* replacement, dma_resv_usage usage) {
    dma_resv_assert_held(obj);
    dma_resv_list* list = obj->fences;
    for (u32 i = 0; list && i < list->num_fences; ++i) {
        dma_fence* old = list->table[i].fence;
        if (old->context != context)
            continue;
        {
            SpinGuard g(obj->fences_lock);
            list->table[i] = {dma_fence_get(replacement), usage};
        }
        dma_fence_put(old);
    }
}

int dma_resv_copy_fences(dma_resv* dst, dma_resv* src) {
    dma_resv_assert_held(dst);
    dma_resv_iter cursor;
    dma_fence* f;
    dma_resv_list* list = nullptr;
    dma_resv_iter_begin(&cursor, src, DMA_RESV_USAGE_BOOKKEEP);
    dma_resv_for_each_fence_unlocked(&cursor, f) {
        if (dma_resv_iter_is_restarted(&cursor)) {
            dma_resv_list_free(list);
            list = dma_resv_list_alloc(cursor.num_fences);
            if (!list) {
                dma_resv_iter_end(&cursor);
                return -ENOMEM;
            }
        }
        list->table[list->num_fences++] = {dma_fence_get(f), dma_resv_iter_usage(&cursor)};
    }
    dma_resv_iter_end(&cursor);
    dma_resv_list_free(dma_resv_swap_list(dst, list));
    return 0;
}

int dma_resv_get_fences(dma_resv* obj, dma_resv_usage usage, unsigned* num_fences, dma_fence*** fences) {
    dma_resv_iter cursor;
    dma_fence* fence;
    *num_fences = 0;
    *fences = nullptr;
    dma_resv_iter_begin(&cursor, obj, usage);
    dma_resv_for_each_fence_unlocked(&cursor, fence) {
        if (dma_resv_iter_is_restarted(&cursor)) {
            while (*num_fences)
                dma_fence_put((*fences)[--(*num_fences)]);
            kfree(*fences);
            // The list may only grow in place up to the snapshot's count, which bounds us.
            *fences = static_cast<dma_fence**>(kmalloc(sizeof(dma_fence*) * (cursor.num_fences + 1), GFP_KERNEL));
            if (!*fences) {
                dma_resv_iter_end(&cursor);
                return -ENOMEM;
            }
        }
        (*fences)[(*num_fences)++] = dma_fence_get(fence);
    }
    dma_resv_iter_end(&cursor);
    return 0;
}

int dma_resv_get_singleton(dma_resv* obj, dma_resv_usage usage, dma_fence** fence) {
    dma_fence** fences;
    unsigned count;
    int r = dma_resv_get_fences(obj, usage, &count, &fences);
    if (r)
        return r;
    if (count == 0) {
        *fence = nullptr;
        kfree(fences);
        return 0;
    }
    if (count == 1) {
        *fence = fences[0];
        kfree(fences);
        return 0;
    }
    dma_fence_array* array =
        dma_fence_array_create(static_cast<int>(count), fences, dma_fence_context_alloc(1), 1, false);
    if (!array) {
        while (count--)
            dma_fence_put(fences[count]);
        kfree(fences);
        return -ENOMEM;
    }
    *fence = &array->base;
    return 0;
}

long dma_resv_wait_timeout(dma_resv* obj, dma_resv_usage usage, bool intr, unsigned long timeout) {
    long ret = timeout ? static_cast<long>(timeout) : 1;
    dma_resv_iter cursor;
    dma_fence* fence;
    dma_resv_iter_begin(&cursor, obj, usage);
    dma_resv_for_each_fence_unlocked(&cursor, fence) {
        ret = dma_fence_wait_timeout(fence, intr, ret);
        if (ret <= 0) {
            dma_resv_iter_end(&cursor);
            return ret;
        }
    }
    dma_resv_iter_end(&cursor);
    return ret;
}

bool dma_resv_test_signaled(dma_resv* obj, dma_resv_usage usage) {
    dma_resv_iter cursor;
    dma_fence* fence;
    dma_resv_iter_begin(&cursor, obj, usage);
    dma_resv_for_each_fence_unlocked(&cursor, fence) {
        dma_resv_iter_end(&cursor);
        return false;
    }
    dma_resv_iter_end(&cursor);
    return true;
}

void dma_resv_set_deadline(dma_resv* obj, dma_resv_usage usage, ktime_t deadline) {
    dma_resv_iter cursor;
    dma_fence* fence;
    dma_resv_iter_begin(&cursor, obj, usage);
    dma_resv_for_each_fence_unlocked(&cursor, fence) {
        dma_fence_set_deadline(fence, deadline);
    }
    dma_resv_iter_end(&cursor);
}

void dma_resv_lockdep() {
    // Record once what the kernel allows: waiting for fences under a dma_resv lock and in
    // reclaim. Any later edge the other way (a signalling path taking these) closes a cycle.
    WwAcquireCtx ctx;
    dma_resv obj;
    ww_acquire_init(&ctx, &reservation_ww_class);
    int ret = dma_resv_lock(&obj, &ctx);
    if (ret == -EDEADLK)
        dma_resv_lock_slow(&obj, &ctx);
    fs_reclaim_acquire(GFP_KERNEL);
    __dma_fence_might_wait();
    fs_reclaim_release(GFP_KERNEL);
    dma_resv_unlock(&obj);
    ww_acquire_fini(&ctx);
    dma_resv_fini(&obj);
}

}  // namespace kshim
