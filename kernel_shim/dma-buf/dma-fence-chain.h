// Mirrors include/linux/dma-fence-chain.h: a timeline of links, each wrapping one fence.
//
// A link's seqno is its timeline point; it signals once its own fence and every earlier link's
// fence have. Walking a chain drops links whose fences signalled, so long-lived timelines do
// not keep every old fence alive.
#pragma once
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/irq_work.h"

namespace kshim {

struct dma_fence_chain {
    dma_fence base;
    // The previous link (or a plain fence); one reference. Swapped by the garbage collection
    // in dma_fence_chain_walk while readers look at it, so it is read and replaced under
    // prev_lock (our stand-in for the kernel's RCU).
    dma_fence* prev = nullptr;
    SpinLock prev_lock{"dma_fence_chain.prev"};
    u64 prev_seqno = 0;          // seqno of prev when it is on the same timeline, else 0
    dma_fence* fence = nullptr;  // the wrapped fence; one reference
    dma_fence_cb cb;             // armed on the first unsignalled fence of the chain
    // Re-arms or signals right after the signal that fired `cb` returns, outside its lock.
    irq_work work;
    SpinLock lock{"dma_fence_chain"};  // the fence lock of `base`
};

extern const dma_fence_ops dma_fence_chain_ops;

inline bool dma_fence_is_chain(const dma_fence* fence) {
    return fence->ops == &dma_fence_chain_ops;
}
inline dma_fence_chain* to_dma_fence_chain(dma_fence* fence) {
    if (!fence || !dma_fence_is_chain(fence))
        return nullptr;
    return container_of(fence, dma_fence_chain, base);
}
// Defined here for dma-fence-array.h users too: arrays and chains are the containers.
bool dma_fence_is_container(const dma_fence* fence);

// The fence inside a link, or the fence itself when it is not a chain.
inline dma_fence* dma_fence_chain_contained(dma_fence* fence) {
    dma_fence_chain* chain = to_dma_fence_chain(fence);
    return chain ? chain->fence : fence;
}

dma_fence_chain* dma_fence_chain_alloc();
// For a link that was never initialised; initialised links are freed by their last put.
void dma_fence_chain_free(dma_fence_chain* chain);
// Takes ownership of the references to `prev` and `fence`.
void dma_fence_chain_init(dma_fence_chain* chain, dma_fence* prev, dma_fence* fence, u64 seqno);

// Consumes the reference to `fence`; returns a reference to the previous unsignalled link (or
// plain fence), or nullptr at the end.
dma_fence* dma_fence_chain_walk(dma_fence* fence);
// Links the walks have looked at since the process started: a statistic for tests and
// benchmarks (the cost of signalling a chain is proportional to it).
u64 dma_fence_chain_walk_steps();
// Replaces *pfence by the earliest link that must be waited for to reach `seqno` (nullptr when
// that point already signalled); -EINVAL when `seqno` is past the head.
int dma_fence_chain_find_seqno(dma_fence** pfence, u64 seqno);

#define dma_fence_chain_for_each(iter, head) \
    for (iter = ::kshim::dma_fence_get(head); iter; iter = ::kshim::dma_fence_chain_walk(iter))

}  // namespace kshim
