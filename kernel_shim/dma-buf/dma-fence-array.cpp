// Mirrors drivers/dma-buf/dma-fence-array.c.
#include "kernel_shim/dma-buf/dma-fence-array.h"

#include <new>

#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "kernel_shim/slab.h"

namespace kshim {
namespace {
// The array's error starts as this placeholder so the first member error can be claimed
// with one compare-and-swap; it is cleared to 0 before the array signals cleanly.
constexpr int PENDING_ERROR = 1;

const char* dma_fence_array_get_driver_name(dma_fence*) {
    return "dma_fence_array";
}
const char* dma_fence_array_get_timeline_name(dma_fence*) {
    return "unbound";
}

void dma_fence_array_set_pending_error(dma_fence_array* array, int error) {
    int expected = PENDING_ERROR;
    if (error)
        array->base.error.compare_exchange_strong(expected, error);
}

void dma_fence_array_clear_pending_error(dma_fence_array* array) {
    int expected = PENDING_ERROR;
    array->base.error.compare_exchange_strong(expected, 0);
}

void dma_fence_array_irq_work(irq_work* work) {
    dma_fence_array* array = container_of(work, dma_fence_array, work);
    dma_fence_array_clear_pending_error(array);
    dma_fence_signal(&array->base);
    dma_fence_put(&array->base);  // the reference of the callback that completed the array
}

void dma_fence_array_cb_func(dma_fence* f, dma_fence_cb* cb) {
    auto* array_cb = container_of(cb, dma_fence_array_cb, cb);
    dma_fence_array* array = array_cb->array;
    dma_fence_array_set_pending_error(array, f->error.load(std::memory_order_relaxed));
    if (array->num_pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
        irq_work_queue(&array->work);
    else
        dma_fence_put(&array->base);
}

bool dma_fence_array_enable_signaling(dma_fence* fence) {
    dma_fence_array* array = to_dma_fence_array(fence);
    dma_fence_array_cb* cb = array->callbacks;
    for (unsigned i = 0; i < array->num_fences; ++i) {
        cb[i].array = array;
        // The array may report itself signalled before every callback ran: each armed
        // callback keeps the array alive until it has.
        dma_fence_get(&array->base);
        if (dma_fence_add_callback(array->fences[i], &cb[i].cb, dma_fence_array_cb_func)) {
            dma_fence_array_set_pending_error(array, array->fences[i]->error.load(std::memory_order_relaxed));
            dma_fence_put(&array->base);
            if (array->num_pending.fetch_sub(1, std::memory_order_acq_rel) == 1) {
                dma_fence_array_clear_pending_error(array);
                return false;
            }
        }
    }
    return true;
}

bool dma_fence_array_signaled(dma_fence* fence) {
    dma_fence_array* array = to_dma_fence_array(fence);
    // Read before the flag: enable_signaling may be decrementing concurrently.
    int num_pending = array->num_pending.load(std::memory_order_acquire);
    if (dma_fence_test_flag(&array->base, DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT)) {
        if (num_pending > 0)
            return false;
    } else {
        bool done = false;
        for (unsigned i = 0; i < array->num_fences && !done; ++i)
            if (dma_fence_is_signaled(array->fences[i]) && !--num_pending)
                done = true;
        if (!done)
            return false;
    }
    dma_fence_array_clear_pending_error(array);
    return true;
}

void dma_fence_array_release(dma_fence* fence) {
    dma_fence_array* array = to_dma_fence_array(fence);
    for (unsigned i = 0; i < array->num_fences; ++i)
        dma_fence_put(array->fences[i]);
    kfree(array->fences);
    for (unsigned i = 0; i < array->num_fences; ++i)
        array->callbacks[i].~dma_fence_array_cb();
    array->~dma_fence_array();
    kfree(array);
}

void dma_fence_array_set_deadline(dma_fence* fence, ktime_t deadline) {
    dma_fence_array* array = to_dma_fence_array(fence);
    for (unsigned i = 0; i < array->num_fences; ++i)
        dma_fence_set_deadline(array->fences[i], deadline);
}
}  // namespace

const dma_fence_ops dma_fence_array_ops = {
    .get_driver_name = dma_fence_array_get_driver_name,
    .get_timeline_name = dma_fence_array_get_timeline_name,
    .enable_signaling = dma_fence_array_enable_signaling,
    .signaled = dma_fence_array_signaled,
    .release = dma_fence_array_release,
    .set_deadline = dma_fence_array_set_deadline,
};

dma_fence_array* dma_fence_array_alloc(int num_fences) {
    // One allocation for the array and its callbacks, as the kernel's flexible array member.
    size_t bytes = sizeof(dma_fence_array) + sizeof(dma_fence_array_cb) * static_cast<size_t>(num_fences);
    void* mem = kmalloc(bytes, GFP_KERNEL);
    if (!mem)
        return nullptr;
    auto* array = new (mem) dma_fence_array();
    array->callbacks = reinterpret_cast<dma_fence_array_cb*>(array + 1);
    for (int i = 0; i < num_fences; ++i)
        new (&array->callbacks[i]) dma_fence_array_cb();
    array->num_fences = static_cast<unsigned>(num_fences);
    return array;
}

void dma_fence_array_init(dma_fence_array* array, int num_fences, dma_fence** fences, u64 context, unsigned seqno,
                          bool signal_on_any) {
    WARN_ON(!num_fences || !fences);
    array->num_fences = static_cast<unsigned>(num_fences);
    dma_fence_init(&array->base, &dma_fence_array_ops, &array->lock, context, seqno);
    init_irq_work(&array->work, dma_fence_array_irq_work);
    array->num_pending.store(signal_on_any ? 1 : num_fences, std::memory_order_relaxed);
    array->fences = fences;
    array->base.error.store(PENDING_ERROR, std::memory_order_relaxed);
    // Containers inside containers would make every operation recursive: flatten first
    // (dma_fence_unwrap_merge does).
    while (num_fences--)
        WARN_ON(dma_fence_is_container(fences[num_fences]));
}

dma_fence_array* dma_fence_array_create(int num_fences, dma_fence** fences, u64 context, unsigned seqno,
                                        bool signal_on_any) {
    dma_fence_array* array = dma_fence_array_alloc(num_fences);
    if (!array)
        return nullptr;
    dma_fence_array_init(array, num_fences, fences, context, seqno, signal_on_any);
    return array;
}

bool dma_fence_match_context(dma_fence* fence, u64 context) {
    dma_fence_array* array = to_dma_fence_array(fence);
    if (!array)
        return fence->context == context;
    for (unsigned i = 0; i < array->num_fences; i++)
        if (array->fences[i]->context != context)
            return false;
    return true;
}

dma_fence* dma_fence_array_first(dma_fence* head) {
    if (!head)
        return nullptr;
    dma_fence_array* array = to_dma_fence_array(head);
    if (!array)
        return head;
    return array->num_fences ? array->fences[0] : nullptr;
}

dma_fence* dma_fence_array_next(dma_fence* head, unsigned index) {
    dma_fence_array* array = to_dma_fence_array(head);
    if (!array || index >= array->num_fences)
        return nullptr;
    return array->fences[index];
}

}  // namespace kshim
