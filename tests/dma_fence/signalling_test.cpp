// The fence-signalling contract (docs/dma_fence.md, "Fence-signalling contract"): on a path that
// leads to dma_fence_signal nothing may wait for a fence, take a dma_resv lock, allocate with
// GFP_KERNEL or take a lock that is also held around a fence wait. Each case is reported.
#include <gtest/gtest.h>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/slab.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class FenceSignalling : public kshim::testing::KernelTest {};

#if KSHIM_DEBUG_CHECKS

TEST_F(FenceSignalling, CleanSectionIsQuiet) {
    dma_fence* f = mock_fence();
    SpinLock irq_lock("hw_lock");
    bool cookie = dma_fence_begin_signalling();
    EXPECT_FALSE(cookie);
    EXPECT_TRUE(lock_is_held(&dma_fence_lockdep_map));
    spin_lock(&irq_lock);
    void* p = kmalloc(32, GFP_ATOMIC);  // atomic allocations are what the contract allows
    spin_unlock(&irq_lock);
    kfree(p);
    dma_fence_signal(f);
    dma_fence_end_signalling(cookie);
    EXPECT_FALSE(lock_is_held(&dma_fence_lockdep_map));
    EXPECT_EQ(pending_report_count(), 0u);
    dma_fence_put(f);
}

TEST_F(FenceSignalling, NestedSectionsReturnCookie) {
    bool outer = dma_fence_begin_signalling();
    bool inner = dma_fence_begin_signalling();
    EXPECT_FALSE(outer);
    EXPECT_TRUE(inner);
    dma_fence_end_signalling(inner);
    EXPECT_TRUE(lock_is_held(&dma_fence_lockdep_map));
    dma_fence_end_signalling(outer);
    EXPECT_FALSE(lock_is_held(&dma_fence_lockdep_map));
}

TEST_F(FenceSignalling, WaitingInsideSectionIsReported) {
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    bool cookie = dma_fence_begin_signalling();
    dma_fence_wait(f, false);
    dma_fence_end_signalling(cookie);
    EXPECT_TRUE(expect_report(ReportKind::FenceSignalling));
    dma_fence_put(f);
}

TEST_F(FenceSignalling, GfpKernelAllocationInsideSectionIsReported) {
    bool cookie = dma_fence_begin_signalling();
    void* p = kmalloc(64, GFP_KERNEL);
    dma_fence_end_signalling(cookie);
    kfree(p);
    EXPECT_TRUE(expect_report(ReportKind::FenceSignalling));
}

TEST_F(FenceSignalling, DmaResvLockInsideSectionIsReported) {
    dma_resv obj;
    bool cookie = dma_fence_begin_signalling();
    ASSERT_EQ(dma_resv_lock(&obj, nullptr), 0);
    dma_resv_unlock(&obj);
    dma_fence_end_signalling(cookie);
    EXPECT_TRUE(expect_report(ReportKind::FenceSignalling));
    dma_resv_fini(&obj);
}

TEST_F(FenceSignalling, MutexHeldAroundWaitThenTakenInSectionIsReported) {
    Mutex m("driver_lock");
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    mutex_lock(&m);
    dma_fence_wait(f, false);  // records driver_lock -> dma_fence_map
    mutex_unlock(&m);
    EXPECT_EQ(pending_report_count(), 0u);

    bool cookie = dma_fence_begin_signalling();
    mutex_lock(&m);  // closes the cycle
    mutex_unlock(&m);
    dma_fence_end_signalling(cookie);
    EXPECT_TRUE(expect_report(ReportKind::FenceSignalling));
    dma_fence_put(f);
}

TEST_F(FenceSignalling, MutexTakenInSectionThenHeldAroundWaitIsReported) {
    Mutex m("driver_lock2");
    bool cookie = dma_fence_begin_signalling();
    mutex_lock(&m);
    mutex_unlock(&m);
    dma_fence_end_signalling(cookie);
    EXPECT_EQ(pending_report_count(), 0u);

    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    mutex_lock(&m);
    dma_fence_wait(f, false);
    mutex_unlock(&m);
    EXPECT_TRUE(expect_report(ReportKind::FenceSignalling));
    dma_fence_put(f);
}

TEST_F(FenceSignalling, MutexOnlyInSectionsIsFine) {
    Mutex m("signalling_only");
    for (int i = 0; i < 2; i++) {
        bool cookie = dma_fence_begin_signalling();
        mutex_lock(&m);
        mutex_unlock(&m);
        dma_fence_end_signalling(cookie);
    }
    EXPECT_EQ(pending_report_count(), 0u);
}

TEST_F(FenceSignalling, WaitUnderDmaResvIsAllowed) {
    // The contract allows waits under dma_resv; only the reverse order is a bug.
    dma_resv obj;
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    WwAcquireCtx ctx;
    ww_acquire_init(&ctx, &reservation_ww_class);
    ASSERT_EQ(dma_resv_lock(&obj, &ctx), 0);
    dma_fence_wait(f, false);
    void* p = kmalloc(16, GFP_KERNEL);
    kfree(p);
    dma_resv_unlock(&obj);
    ww_acquire_fini(&ctx);
    EXPECT_EQ(pending_report_count(), 0u);
    dma_fence_put(f);
    dma_resv_fini(&obj);
}

TEST_F(FenceSignalling, CallbacksRunInsideTheSignalSection) {
    // A callback is on the signalling path: if it allocates with GFP_KERNEL, that is a bug.
    dma_fence* f = mock_fence();
    struct Cb {
        dma_fence_cb cb;
        bool in_section = false;
    } c;
    dma_fence_add_callback(f, &c.cb, [](dma_fence*, dma_fence_cb* cb) {
        container_of(cb, Cb, cb)->in_section = lock_is_held(&dma_fence_lockdep_map);
    });
    dma_fence_signal(f);
    EXPECT_TRUE(c.in_section);
    dma_fence_put(f);
}

TEST_F(FenceSignalling, SectionInAtomicContextIsNotTracked) {
    SpinLock l("atomic_ctx");
    spin_lock(&l);
    bool cookie = dma_fence_begin_signalling();
    EXPECT_TRUE(cookie);
    EXPECT_FALSE(lock_is_held(&dma_fence_lockdep_map));
    dma_fence_end_signalling(cookie);
    spin_unlock(&l);
}

#else
TEST_F(FenceSignalling, CompiledOut) {
    EXPECT_TRUE(dma_fence_begin_signalling());
}
#endif
