// Mirrors drivers/dma-buf/dma-fence-unwrap.c.
#include "kernel_shim/dma-buf/dma-fence-unwrap.h"

#include <algorithm>

#include "kernel_shim/slab.h"

namespace kshim {

static dma_fence* __dma_fence_unwrap_array(dma_fence_unwrap* cursor) {
    cursor->array = dma_fence_chain_contained(cursor->chain);
    cursor->index = 0;
    return dma_fence_array_first(cursor->array);
}

dma_fence* dma_fence_unwrap_first(dma_fence* head, dma_fence_unwrap* cursor) {
    cursor->chain = dma_fence_get(head);
    return __dma_fence_unwrap_array(cursor);
}

dma_fence* dma_fence_unwrap_next(dma_fence_unwrap* cursor) {
    ++cursor->index;
    if (dma_fence* tmp = dma_fence_array_next(cursor->array, cursor->index))
        return tmp;
    cursor->chain = dma_fence_chain_walk(cursor->chain);
    return __dma_fence_unwrap_array(cursor);
}

int dma_fence_dedup_array(dma_fence** fences, int num_fences) {
    if (num_fences <= 0)
        return 0;
    // Context ascending, and the latest first within a context.
    std::sort(fences, fences + num_fences, [](dma_fence* a, dma_fence* b) {
        if (a->context != b->context)
            return a->context < b->context;
        return dma_fence_is_later(a, b);
    });
    int j = 0;
    for (int i = 1; i < num_fences; i++) {
        if (fences[i]->context == fences[j]->context)
            dma_fence_put(fences[i]);
        else
            fences[++j] = fences[i];
    }
    return j + 1;
}

dma_fence* __dma_fence_unwrap_merge(unsigned num_fences, dma_fence** fences, dma_fence_unwrap* iter) {
    dma_fence* tmp;
    dma_fence* unsignaled = nullptr;
    ktime_t timestamp = 0;
    int count = 0;

    // First pass: count, and find out whether one fence (or none) is all we need.
    for (unsigned i = 0; i < num_fences; ++i) {
        dma_fence_unwrap_for_each(tmp, &iter[i], fences[i]) {
            if (!dma_fence_is_signaled(tmp)) {
                dma_fence_put(unsignaled);
                unsignaled = dma_fence_get(tmp);
                ++count;
            } else {
                timestamp = std::max(timestamp, dma_fence_timestamp(tmp));
            }
        }
    }
    if (count == 0)
        return dma_fence_allocate_private_stub(timestamp);
    if (count == 1)
        return unsignaled;
    dma_fence_put(unsignaled);

    auto* array = static_cast<dma_fence**>(kmalloc(sizeof(dma_fence*) * static_cast<size_t>(count), GFP_KERNEL));
    if (!array)
        return nullptr;

    // Second pass: fences may have signalled meanwhile, so recount, bounded by the first.
    int n = 0;
    for (unsigned i = 0; i < num_fences; ++i) {
        dma_fence_unwrap_for_each(tmp, &iter[i], fences[i]) {
            if (!dma_fence_is_signaled(tmp) && n < count) {
                array[n++] = dma_fence_get(tmp);
            } else if (dma_fence_is_signaled(tmp)) {
                timestamp = std::max(timestamp, dma_fence_timestamp(tmp));
            }
        }
    }
    count = n;
    if (count > 1)
        count = dma_fence_dedup_array(array, count);
    if (count > 1) {
        dma_fence_array* result = dma_fence_array_create(count, array, dma_fence_context_alloc(1), 1, false);
        if (result)
            return &result->base;
        for (int i = 0; i < count; i++)
            dma_fence_put(array[i]);
        kfree(array);
        return nullptr;
    }
    tmp = count == 0 ? dma_fence_allocate_private_stub(timestamp) : array[0];
    kfree(array);
    return tmp;
}

}  // namespace kshim
