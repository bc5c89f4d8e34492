// Mirrors drivers/dma-buf/dma-fence.c (stub part): the shared and private signalled fences.
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/slab.h"

namespace kshim {
namespace {
const char* dma_fence_stub_get_name(dma_fence*) {
    return "stub";
}

const dma_fence_ops dma_fence_stub_ops = {
    .get_driver_name = dma_fence_stub_get_name,
    .get_timeline_name = dma_fence_stub_get_name,
};

SpinLock& stub_lock() {
    static SpinLock lock("dma_fence_stub_lock");
    return lock;
}
}  // namespace

dma_fence* dma_fence_get_stub() {
    // Never released: its first reference is never dropped. Built once, under the lock, with
    // the caller's clock (0 when no runtime is alive).
    static dma_fence stub;
    static std::atomic<bool> ready{false};
    if (!ready.load(std::memory_order_acquire)) {
        spin_lock(&stub_lock());
        // Not stub.ops: the signal below detaches the stub from its ops.
        if (!ready.load(std::memory_order_relaxed)) {
            dma_fence_init(&stub, &dma_fence_stub_ops, &stub_lock(), 0, 0);
            dma_fence_set_flag(&stub, DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT);
            dma_fence_signal_locked(&stub);
            ready.store(true, std::memory_order_release);
        }
        spin_unlock(&stub_lock());
    }
    return dma_fence_get(&stub);
}

dma_fence* dma_fence_allocate_private_stub(ktime_t timestamp) {
    auto* fence = knew<dma_fence>(GFP_KERNEL);
    if (!fence)
        return nullptr;
    dma_fence_init(fence, &dma_fence_stub_ops, &stub_lock(), 0, 0);
    spin_lock(fence->lock);
    dma_fence_set_flag(fence, DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT);
    dma_fence_signal_timestamp_locked(fence, timestamp);
    spin_unlock(fence->lock);
    return fence;
}

}  // namespace kshim
