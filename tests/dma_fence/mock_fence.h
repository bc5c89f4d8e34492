// Test doubles in the style of drivers/dma-buf/st-dma-fence*.c: a fence with its own lock.
#pragma once
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/slab.h"
#include "tests/support/kernel_test.h"

namespace dma_fence_test {
using namespace kshim;

struct MockFence {
    dma_fence base;
    SpinLock lock{"mock_fence"};
};

inline const char* mock_name(dma_fence*) {
    return "mock";
}
inline void mock_release(dma_fence* f) {
    kdelete(container_of(f, MockFence, base));
}

inline const dma_fence_ops mock_ops = {
    .get_driver_name = mock_name,
    .get_timeline_name = mock_name,
    .release = mock_release,
};
inline const dma_fence_ops mock_ops64 = {
    .use_64bit_seqno = true,
    .get_driver_name = mock_name,
    .get_timeline_name = mock_name,
    .release = mock_release,
};

inline dma_fence* mock_fence(u64 context = 0, u64 seqno = 0, const dma_fence_ops* ops = &mock_ops) {
    auto* f = knew<MockFence>(GFP_KERNEL);
    dma_fence_init(&f->base, ops, &f->lock, context, seqno);
    return &f->base;
}

// A callback that counts its runs.
struct CountingCb {
    dma_fence_cb cb;
    int runs = 0;
    bool lock_held = false;
    static void func(dma_fence* f, dma_fence_cb* cb) {
        auto* self = container_of(cb, CountingCb, cb);
        self->runs++;
        self->lock_held = f->lock->is_locked();
    }
};

}  // namespace dma_fence_test
