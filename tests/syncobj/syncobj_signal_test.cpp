// SYNCOBJ_WAIT / TIMELINE_WAIT and signals (simulated time): a signal that reaches the waiting
// task ends the wait with -ERESTARTSYS, the waiter leaves nothing behind, and the restarted ioctl
// (the same arguments, as the syscall layer re-issues it) still ends at the absolute deadline.
#include <gtest/gtest.h>

#include "kernel_shim/sched.h"
#include "kernel_shim/signal.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

class SyncobjSignal : public kshim::testing::KernelTest {
protected:
    // A kthread that signals `target` `after` from now; stopped at the end of the test.
    void signal_after(ktime_t after) {
        Task* target = current();
        sender_ = kthread_run(
            [target, after] {
                msleep(static_cast<unsigned>(after / NSEC_PER_MSEC));
                signal_wake_up(target);
                return 0;
            },
            "sender");
    }
    void TearDown() override {
        if (sender_)
            kthread_stop(sender_);
        clear_signal_pending(current());
        KernelTest::TearDown();
    }
    Task* sender_ = nullptr;
};

TEST_F(SyncobjSignal, WaitEndsWithErestartsysAndTheRestartKeepsTheAbsoluteDeadline) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    const ktime_t start = ktime_get();
    const s64 deadline = start + 100 * NSEC_PER_MSEC;
    signal_after(30 * NSEC_PER_MSEC);
    EXPECT_EQ(o.wait({h}, 0, deadline), -ERESTARTSYS);
    EXPECT_EQ(ktime_get() - start, 30 * NSEC_PER_MSEC);
    drm_syncobj* s = drm_syncobj_find(o.file, h);
    EXPECT_TRUE(s->cb_list.empty());
    EXPECT_FALSE(dma_fence_is_signaled(f));
    drm_syncobj_put(s);
    // The syscall layer delivered the signal and re-issues the call unchanged.
    clear_signal_pending(current());
    EXPECT_EQ(o.wait({h}, 0, deadline), -ETIME);
    EXPECT_EQ(ktime_get(), deadline);
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(SyncobjSignal, WaitForSubmitWithoutAFenceIsInterruptedToo) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    signal_after(20 * NSEC_PER_MSEC);
    EXPECT_EQ(o.wait({h}, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, ktime_get() + NSEC_PER_SEC), -ERESTARTSYS);
    drm_syncobj* s = drm_syncobj_find(o.file, h);
    EXPECT_TRUE(s->cb_list.empty());  // the submit waiter is gone
    drm_syncobj_put(s);
}

TEST_F(SyncobjSignal, TimelineWaitIsInterrupted) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.add_point(h, f, 5);
    signal_after(10 * NSEC_PER_MSEC);
    EXPECT_EQ(o.timeline_wait({h}, {5}, 0, ktime_get() + NSEC_PER_SEC), -ERESTARTSYS);
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(SyncobjSignal, APendingSignalStopsOnlyAWaitThatWouldSleep) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 done = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    u32 busy = o.create();
    dma_fence* f = new_fence();
    o.replace(busy, f);
    signal_wake_up(current());
    const ktime_t start = ktime_get();
    EXPECT_EQ(o.wait({done}, 0, start + NSEC_PER_SEC), 0);             // satisfied: no sleep to end
    EXPECT_EQ(o.wait({busy}, 0, 0), -ETIME);                           // a poll times out first, as upstream
    EXPECT_EQ(o.wait({busy}, 0, start + NSEC_PER_SEC), -ERESTARTSYS);  // would sleep: does not
    EXPECT_EQ(ktime_get(), start);
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(SyncobjSignal, ASignalAfterTheFenceDoesNotChangeTheResult) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    Task* target = current();
    sender_ = kthread_run(
        [target, f] {
            msleep(10);
            dma_fence_signal(f);
            signal_wake_up(target);
            return 0;
        },
        "signal_then_sender");
    EXPECT_EQ(o.wait({h}, 0, ktime_get() + NSEC_PER_SEC), 0);
    dma_fence_put(f);
}
