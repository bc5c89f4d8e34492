// Mirrors include/linux/dma-fence-array.h: one fence standing for several (all, or any one).
#pragma once
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/irq_work.h"

namespace kshim {

struct dma_fence_array;

struct dma_fence_array_cb {
    dma_fence_cb cb;
    dma_fence_array* array = nullptr;
};

struct dma_fence_array {
    dma_fence base;
    SpinLock lock{"dma_fence_array"};  // the fence lock of `base`
    unsigned num_fences = 0;
    std::atomic<int> num_pending{0};  // members still to signal (1 for signal-on-any)
    dma_fence** fences = nullptr;     // kmalloc'ed, owned with one reference per member
    // Signals `base` right after the member's signal returns: signalling from inside the
    // member's callback would nest fence locks.
    irq_work work;
    dma_fence_array_cb* callbacks = nullptr;  // num_fences entries, allocated with the array
};

extern const dma_fence_ops dma_fence_array_ops;

inline bool dma_fence_is_array(const dma_fence* fence) {
    return fence->ops == &dma_fence_array_ops;
}
inline dma_fence_array* to_dma_fence_array(dma_fence* fence) {
    if (!fence || !dma_fence_is_array(fence))
        return nullptr;
    return container_of(fence, dma_fence_array, base);
}

dma_fence_array* dma_fence_array_alloc(int num_fences);
// Takes ownership of `fences` (kmalloc'ed) and of one reference to each member.
void dma_fence_array_init(dma_fence_array* array, int num_fences, dma_fence** fences, u64 context, unsigned seqno,
                          bool signal_on_any);
dma_fence_array* dma_fence_array_create(int num_fences, dma_fence** fences, u64 context, unsigned seqno,
                                        bool signal_on_any);

bool dma_fence_match_context(dma_fence* fence, u64 context);
dma_fence* dma_fence_array_first(dma_fence* head);
dma_fence* dma_fence_array_next(dma_fence* head, unsigned index);

#define dma_fence_array_for_each(fence, index, head)                     \
    for (index = 0, fence = ::kshim::dma_fence_array_first(head); fence; \
         fence = ::kshim::dma_fence_array_next(head, ++(index)))

}  // namespace kshim
