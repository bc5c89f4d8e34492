// Mirrors drivers/dma-buf/dma-fence.c (the wait half): dma_fence_default_wait,
// dma_fence_wait_timeout and dma_fence_wait_any_timeout, sleeping through schedule_timeout.
#include "kernel_shim/dma-buf/dma-fence-trace.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/signal.h"
#include "kernel_shim/slab.h"

namespace kshim {
namespace {
struct default_wait_cb {
    dma_fence_cb base;
    Task* task;
};

void dma_fence_default_wait_cb(dma_fence*, dma_fence_cb* cb) {
    wake_up_process(container_of(cb, default_wait_cb, base)->task);
}

bool dma_fence_test_signaled_any(dma_fence** fences, u32 count, u32* idx) {
    for (u32 i = 0; i < count; ++i) {
        if (dma_fence_test_flag(fences[i], DMA_FENCE_FLAG_SIGNALED_BIT)) {
            if (idx)
                *idx = i;
            return true;
        }
    }
    return false;
}
}  // namespace

long dma_fence_default_wait(dma_fence* fence, bool intr, long timeout) {
    long ret = timeout ? timeout : 1;
    default_wait_cb cb;
    spin_lock(fence->lock);
    if (dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT))
        goto out;
    if (!timeout) {
        ret = 0;
        goto out;
    }
    cb.base.func = dma_fence_default_wait_cb;
    cb.task = current();
    fence->cb_list.push_front(cb.base);
    while (!dma_fence_test_flag(fence, DMA_FENCE_FLAG_SIGNALED_BIT) && ret > 0) {
        __set_current_state(intr ? TASK_INTERRUPTIBLE : TASK_UNINTERRUPTIBLE);
        spin_unlock(fence->lock);
        ret = schedule_timeout(ret);
        spin_lock(fence->lock);
        if (ret > 0 && intr && signal_pending(current()))
            ret = -ERESTARTSYS;
    }
    if (cb.base.node.is_linked())
        fence->cb_list.erase(fence->cb_list.iterator_to(cb.base));
out:
    spin_unlock(fence->lock);
    return ret;
}

long dma_fence_wait_timeout(dma_fence* fence, bool intr, long timeout) {
    if (timeout < 0) [[unlikely]] {
        WARN_ON(true);
        return -EINVAL;
    }
    might_sleep();
    __dma_fence_might_wait();
    dma_fence_enable_sw_signaling(fence);
    trace_dma_fence("dma_fence_wait_start", fence);
    // A fence with a wait op never detaches from its ops, so no null check beyond the pointer.
    const dma_fence_ops* ops = dma_fence_ops_load(fence);
    long ret = ops && ops->wait ? ops->wait(fence, intr, timeout) : dma_fence_default_wait(fence, intr, timeout);
    trace_dma_fence("dma_fence_wait_end", fence);
    return ret;
}

long dma_fence_wait_any_timeout(dma_fence** fences, u32 count, bool intr, long timeout, u32* idx) {
    if (!fences || !count || timeout < 0) [[unlikely]] {
        WARN_ON(true);
        return -EINVAL;
    }
    if (timeout == 0) {
        for (u32 i = 0; i < count; ++i) {
            if (dma_fence_is_signaled(fences[i])) {
                if (idx)
                    *idx = i;
                return 1;
            }
        }
        return 0;
    }
    might_sleep();
    __dma_fence_might_wait();

    // Constructed in place: the callback nodes carry Boost hooks, which must start unlinked.
    auto* cb = static_cast<default_wait_cb*>(kcalloc(count, sizeof(default_wait_cb), GFP_KERNEL));
    if (!cb)
        return -ENOMEM;
    for (u32 i = 0; i < count; ++i)
        new (&cb[i]) default_wait_cb{};

    long ret = timeout;
    u32 i = 0;
    for (; i < count; ++i) {
        cb[i].task = current();
        if (dma_fence_add_callback(fences[i], &cb[i].base, dma_fence_default_wait_cb)) {
            // Already signalled: no need to sleep.
            if (idx)
                *idx = i;
            goto fence_rm_cb;
        }
    }
    while (ret > 0) {
        __set_current_state(intr ? TASK_INTERRUPTIBLE : TASK_UNINTERRUPTIBLE);
        if (dma_fence_test_signaled_any(fences, count, idx))
            break;
        ret = schedule_timeout(ret);
        if (ret > 0 && intr && signal_pending(current()))
            ret = -ERESTARTSYS;
    }
    __set_current_state(TASK_RUNNING);
fence_rm_cb:
    while (i-- > 0)
        dma_fence_remove_callback(fences[i], &cb[i].base);
    for (u32 j = 0; j < count; ++j)
        cb[j].~default_wait_cb();
    kfree(cb);
    return ret;
}

}  // namespace kshim
