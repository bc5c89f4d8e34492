// Mirrors drivers/dma-buf/dma-resv.c (iterator part): locked and unlocked fence walks.
#include "kernel_shim/dma-buf/dma-resv.h"

namespace kshim {
namespace {
// Caller holds fences_lock.
void dma_resv_iter_restart_unlocked(dma_resv_iter* cursor) {
    dma_resv* obj = cursor->obj;
    cursor->index = 0;
    cursor->fences = obj->fences;
    cursor->num_fences = obj->fences ? obj->fences->num_fences : 0;
    cursor->generation = obj->generation;
    cursor->is_restarted = true;
}

// Steps to the next unsignalled fence of a wanted usage, holding a reference to it.
void dma_resv_iter_walk_unlocked(dma_resv_iter* cursor, bool restart) {
    dma_resv* obj = cursor->obj;
    for (;;) {
        dma_fence_put(cursor->fence);
        cursor->fence = nullptr;
        {
            SpinGuard g(obj->fences_lock);
            if (restart || cursor->generation != obj->generation)
                dma_resv_iter_restart_unlocked(cursor);
            restart = false;
            // The list only grows in place, but stay inside what it holds now.
            if (cursor->index >= cursor->num_fences || cursor->index >= cursor->fences->num_fences)
                return;
            const dma_resv_list::entry& e = cursor->fences->table[cursor->index++];
            cursor->fence = dma_fence_get(e.fence);
            cursor->fence_usage = e.usage;
        }
        if (cursor->usage >= cursor->fence_usage && !dma_fence_is_signaled(cursor->fence))
            return;
    }
}
}  // namespace

dma_fence* dma_resv_iter_first_unlocked(dma_resv_iter* cursor) {
    dma_resv_iter_walk_unlocked(cursor, true);
    return cursor->fence;
}

dma_fence* dma_resv_iter_next_unlocked(dma_resv_iter* cursor) {
    cursor->is_restarted = false;
    dma_resv_iter_walk_unlocked(cursor, false);
    return cursor->fence;
}

dma_fence* dma_resv_iter_first(dma_resv_iter* cursor) {
    dma_resv_assert_held(cursor->obj);
    cursor->index = 0;
    cursor->fences = cursor->obj->fences;
    dma_fence* fence = dma_resv_iter_next(cursor);
    cursor->is_restarted = true;
    return fence;
}

dma_fence* dma_resv_iter_next(dma_resv_iter* cursor) {
    dma_resv_assert_held(cursor->obj);
    cursor->is_restarted = false;
    for (;;) {
        if (!cursor->fences || cursor->index >= cursor->fences->num_fences)
            return nullptr;
        const dma_resv_list::entry& e = cursor->fences->table[cursor->index++];
        cursor->fence_usage = e.usage;
        if (cursor->fence_usage <= cursor->usage)
            return e.fence;
    }
}

}  // namespace kshim
