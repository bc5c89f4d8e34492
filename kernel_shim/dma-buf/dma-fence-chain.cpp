// Mirrors drivers/dma-buf/dma-fence-chain.c.
#include "kernel_shim/dma-buf/dma-fence-chain.h"

#include <algorithm>

#include "kernel_shim/dma-buf/dma-fence-array.h"
#include "kernel_shim/slab.h"

namespace kshim {
namespace {
std::atomic<u64> g_walk_steps{0};

dma_fence* dma_fence_chain_get_prev(dma_fence_chain* chain) {
    SpinGuard g(chain->prev_lock);
    // The link's own reference keeps prev alive while we hold prev_lock.
    return dma_fence_get(chain->prev);
}

const char* dma_fence_chain_get_driver_name(dma_fence*) {
    return "dma_fence_chain";
}
const char* dma_fence_chain_get_timeline_name(dma_fence*) {
    return "unbound";
}

bool dma_fence_chain_arm(dma_fence_chain* head, bool from_irq_work);

void dma_fence_chain_irq_work(irq_work* work) {
    dma_fence_chain* chain = container_of(work, dma_fence_chain, work);
    // Re-arm on the next unsignalled fence; none left means the whole prefix is done.
    if (!dma_fence_chain_arm(chain, true))
        dma_fence_signal(&chain->base);
    dma_fence_put(&chain->base);
}

void dma_fence_chain_cb(dma_fence* f, dma_fence_cb* cb) {
    dma_fence_chain* chain = container_of(cb, dma_fence_chain, cb);
    irq_work_queue(&chain->work);
    dma_fence_put(f);
}

// Arms head->cb on the first unsignalled fence of the chain; false when there is none.
//
// Upstream always arms on a link's contained fence. When many links have signalling enabled
// and their fences signal backwards, every pending later link then waits on the same earliest
// fence and re-arms on each signal: n²/2 callbacks for n links. From the re-arm (no fence lock
// held) we arm instead on the first pending link itself when somebody already enabled it: it
// signals exactly when its prefix is done, and the links then signal one after the other. The
// first arm, under head's fence lock, stays upstream's, since arming on another link there
// would nest two chain locks.
bool dma_fence_chain_arm(dma_fence_chain* head, bool from_irq_work) {
    dma_fence* fence;
    dma_fence_get(&head->base);
    dma_fence_chain_for_each(fence, &head->base) {
        if (from_irq_work && fence != &head->base && dma_fence_is_chain(fence) &&
            dma_fence_test_flag(fence, DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT) &&
            !dma_fence_add_callback(fence, &head->cb, dma_fence_chain_cb))
            return true;  // the callback owns the iterator's reference and head's
        dma_fence* f = dma_fence_chain_contained(fence);
        dma_fence_get(f);
        if (!dma_fence_add_callback(f, &head->cb, dma_fence_chain_cb)) {
            dma_fence_put(fence);
            return true;  // the callback now owns the references to head and f
        }
        dma_fence_put(f);
    }
    dma_fence_put(&head->base);
    return false;
}

bool dma_fence_chain_enable_signaling(dma_fence* fence) {
    return dma_fence_chain_arm(to_dma_fence_chain(fence), false);
}

bool dma_fence_chain_signaled(dma_fence* fence) {
    dma_fence_chain_for_each(fence, fence) {
        dma_fence* f = dma_fence_chain_contained(fence);
        if (!dma_fence_is_signaled(f)) {
            dma_fence_put(fence);
            return false;
        }
    }
    return true;
}

void dma_fence_chain_release(dma_fence* fence) {
    dma_fence_chain* chain = to_dma_fence_chain(fence);
    // Unlink predecessors only we hold by hand: a recursive put down a long chain would
    // overflow the stack.
    dma_fence* prev;
    while ((prev = chain->prev)) {
        if (kref_read(&prev->refcount) > 1)
            break;
        dma_fence_chain* prev_chain = to_dma_fence_chain(prev);
        if (!prev_chain)
            break;
        // We hold the last reference to prev_chain: nobody else can look at its prev.
        chain->prev = prev_chain->prev;
        prev_chain->prev = nullptr;
        dma_fence_put(prev);
    }
    dma_fence_put(prev);
    dma_fence_put(chain->fence);
    chain->~dma_fence_chain();
    kfree(chain);
}

void dma_fence_chain_set_deadline(dma_fence* fence, ktime_t deadline) {
    dma_fence_chain_for_each(fence, fence) {
        dma_fence_set_deadline(dma_fence_chain_contained(fence), deadline);
    }
}
}  // namespace

const dma_fence_ops dma_fence_chain_ops = {
    .use_64bit_seqno = true,
    .get_driver_name = dma_fence_chain_get_driver_name,
    .get_timeline_name = dma_fence_chain_get_timeline_name,
    .enable_signaling = dma_fence_chain_enable_signaling,
    .signaled = dma_fence_chain_signaled,
    .release = dma_fence_chain_release,
    .set_deadline = dma_fence_chain_set_deadline,
};

bool dma_fence_is_container(const dma_fence* fence) {
    return dma_fence_is_array(fence) || dma_fence_is_chain(fence);
}

dma_fence* dma_fence_chain_walk(dma_fence* fence) {
    dma_fence_chain* chain = to_dma_fence_chain(fence);
    if (!chain) {
        dma_fence_put(fence);
        return nullptr;
    }
    dma_fence* prev;
    while ((prev = dma_fence_chain_get_prev(chain))) {
        g_walk_steps.fetch_add(1, std::memory_order_relaxed);
        dma_fence* replacement;
        dma_fence_chain* prev_chain = to_dma_fence_chain(prev);
        if (prev_chain) {
            if (!dma_fence_is_signaled(prev_chain->fence))
                break;
            replacement = dma_fence_chain_get_prev(prev_chain);
        } else {
            if (!dma_fence_is_signaled(prev))
                break;
            replacement = nullptr;
        }
        // Skip the signalled link, unless another walker already changed chain->prev.
        bool swapped = false;
        {
            SpinGuard g(chain->prev_lock);
            if (chain->prev == prev) {
                chain->prev = replacement;
                swapped = true;
            }
        }
        if (swapped)
            dma_fence_put(prev);  // the reference chain->prev held
        else
            dma_fence_put(replacement);
        dma_fence_put(prev);  // ours, from get_prev
    }
    dma_fence_put(fence);
    return prev;
}

u64 dma_fence_chain_walk_steps() {
    return g_walk_steps.load(std::memory_order_relaxed);
}

int dma_fence_chain_find_seqno(dma_fence** pfence, u64 seqno) {
    if (!seqno)
        return 0;
    dma_fence_chain* chain = to_dma_fence_chain(*pfence);
    if (!chain || chain->base.seqno < seqno)
        return -EINVAL;
    dma_fence_chain_for_each(*pfence, &chain->base) {
        if ((*pfence)->context != chain->base.context || to_dma_fence_chain(*pfence)->prev_seqno < seqno)
            break;
    }
    dma_fence_put(&chain->base);
    return 0;
}

dma_fence_chain* dma_fence_chain_alloc() {
    return knew<dma_fence_chain>(GFP_KERNEL);
}

void dma_fence_chain_free(dma_fence_chain* chain) {
    kdelete(chain);
}

void dma_fence_chain_init(dma_fence_chain* chain, dma_fence* prev, dma_fence* fence, u64 seqno) {
    dma_fence_chain* prev_chain = to_dma_fence_chain(prev);
    u64 context;
    chain->prev = prev;
    chain->fence = fence;
    chain->prev_seqno = 0;
    // Stay on the previous link's timeline when the new point is after it.
    if (prev_chain && __dma_fence_is_later(prev, seqno, prev->seqno)) {
        context = prev->context;
        chain->prev_seqno = prev->seqno;
    } else {
        context = dma_fence_context_alloc(1);
        if (prev_chain)
            seqno = std::max(prev->seqno, seqno);  // never go backwards
    }
    init_irq_work(&chain->work, dma_fence_chain_irq_work);
    dma_fence_init64(&chain->base, &dma_fence_chain_ops, &chain->lock, context, seqno);
}

}  // namespace kshim
