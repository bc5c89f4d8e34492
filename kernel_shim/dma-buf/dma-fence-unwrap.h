// Mirrors include/linux/dma-fence-unwrap.h: iterate the plain fences inside chains and arrays,
// and merge several fences into the smallest equivalent one.
#pragma once
#include <array>

#include "kernel_shim/dma-buf/dma-fence-array.h"
#include "kernel_shim/dma-buf/dma-fence-chain.h"

namespace kshim {

struct dma_fence_unwrap {
    dma_fence* chain = nullptr;  // the link being looked at (a reference)
    dma_fence* array = nullptr;  // the fence contained in it, possibly an array
    unsigned index = 0;          // position inside the array
};

dma_fence* dma_fence_unwrap_first(dma_fence* head, dma_fence_unwrap* cursor);
dma_fence* dma_fence_unwrap_next(dma_fence_unwrap* cursor);

// Breaking out early leaks the cursor's chain reference, as upstream: drop cursor.chain then.
#define dma_fence_unwrap_for_each(fence, cursor, head) \
    for (fence = ::kshim::dma_fence_unwrap_first(head, cursor); fence; fence = ::kshim::dma_fence_unwrap_next(cursor))

// Sorts by context and keeps the latest fence of each context (puts the others); returns the
// new count.
int dma_fence_dedup_array(dma_fence** fences, int num_fences);

// The unsignalled leaves of every input, deduplicated per context: nothing pending gives a
// private signalled stub (timestamped with the latest leaf), one gives that fence, more give a
// new array. Inputs keep their references; the result is a new one (nullptr on -ENOMEM).
dma_fence* __dma_fence_unwrap_merge(unsigned num_fences, dma_fence** fences, dma_fence_unwrap* cursors);

template <class... Fences>
dma_fence* dma_fence_unwrap_merge(Fences*... fs) {
    std::array<dma_fence*, sizeof...(fs)> fences{fs...};
    std::array<dma_fence_unwrap, sizeof...(fs)> cursors{};
    return __dma_fence_unwrap_merge(fences.size(), fences.data(), cursors.data());
}

}  // namespace kshim
