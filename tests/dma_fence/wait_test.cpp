// dma_fence_wait_timeout / dma_fence_wait_any_timeout in simulated time (st-dma-fence.c's
// wait tests, plus the return conventions the scheduler and syncobj waits rely on).
#include <gtest/gtest.h>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/time.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class FenceWait : public kshim::testing::KernelTest {};

// Signals `f` after `ms` of simulated time from a kthread.
static Task* signal_after(dma_fence* f, unsigned ms, int error = 0) {
    return kthread_run(
        [f, ms, error] {
            msleep(ms);
            if (error)
                dma_fence_set_error(f, error);
            dma_fence_signal(f);
            return 0;
        },
        "signaller");
}

TEST_F(FenceWait, ZeroTimeoutPollsStatus) {
    dma_fence* f = mock_fence();
    EXPECT_EQ(dma_fence_wait_timeout(f, false, 0), 0);
    dma_fence_signal(f);
    EXPECT_EQ(dma_fence_wait_timeout(f, false, 0), 1);
    dma_fence_put(f);
}

TEST_F(FenceWait, TimesOutWithZeroAfterTheTimeout) {
    dma_fence* f = mock_fence();
    ktime_t t0 = ktime_get();
    long ret = dma_fence_wait_timeout(f, false, 10);
    ktime_t waited = ktime_get() - t0;
    EXPECT_EQ(ret, 0);
    EXPECT_GE(waited, 9 * static_cast<ktime_t>(TICK_NSEC));
    EXPECT_LE(waited, 10 * static_cast<ktime_t>(TICK_NSEC));
    EXPECT_FALSE(dma_fence_is_signaled(f));
    // The waiter's callback is gone: a later signal must not touch the finished wait.
    EXPECT_TRUE(f->cb_list.empty());
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(FenceWait, ReturnsRemainingJiffiesWhenSignalled) {
    dma_fence* f = mock_fence();
    Task* t = signal_after(f, 20);  // 5 jiffies at HZ=250
    ktime_t t0 = ktime_get();
    long ret = dma_fence_wait_timeout(f, false, msecs_to_jiffies(100));
    EXPECT_EQ(ktime_get() - t0, 20 * NSEC_PER_MSEC);
    EXPECT_GE(ret, 19);
    EXPECT_LE(ret, 20);
    kthread_stop(t);
    dma_fence_put(f);
}

TEST_F(FenceWait, AlreadySignalledReturnsFullTimeout) {
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    EXPECT_EQ(dma_fence_wait_timeout(f, false, 37), 37);
    EXPECT_EQ(dma_fence_wait(f, true), 0);
    dma_fence_put(f);
}

TEST_F(FenceWait, WaitForeverReturnsZeroOnceSignalled) {
    dma_fence* f = mock_fence();
    Task* t = signal_after(f, 5000);
    EXPECT_EQ(dma_fence_wait(f, false), 0);
    EXPECT_TRUE(dma_fence_is_signaled(f));
    EXPECT_EQ(dma_fence_wait_timeout(f, false, MAX_SCHEDULE_TIMEOUT), MAX_SCHEDULE_TIMEOUT);
    kthread_stop(t);
    dma_fence_put(f);
}

TEST_F(FenceWait, NegativeTimeoutIsRejected) {
    dma_fence* f = mock_fence();
    EXPECT_EQ(dma_fence_wait_timeout(f, false, -1), -EINVAL);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    dma_fence_put(f);
}

TEST_F(FenceWait, WaitEnablesSignaling) {
    static int enables;
    enables = 0;
    static const dma_fence_ops ops = {
        .get_driver_name = mock_name,
        .get_timeline_name = mock_name,
        .enable_signaling =
            [](dma_fence*) {
                enables++;
                return true;
            },
        .release = mock_release,
    };
    dma_fence* f = mock_fence(0, 0, &ops);
    EXPECT_EQ(dma_fence_wait_timeout(f, false, 1), 0);
    EXPECT_EQ(enables, 1);
    EXPECT_TRUE(dma_fence_test_flag(f, DMA_FENCE_FLAG_ENABLE_SIGNAL_BIT));
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(FenceWait, CustomWaitOpIsUsed) {
    static const dma_fence_ops ops = {
        .get_driver_name = mock_name,
        .get_timeline_name = mock_name,
        .wait = [](dma_fence*, bool, long timeout) -> long { return timeout - 3; },
        .release = mock_release,
    };
    dma_fence* f = mock_fence(0, 0, &ops);
    EXPECT_EQ(dma_fence_wait_timeout(f, false, 10), 7);
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(FenceWait, ManyWaitersAllWoken) {
    dma_fence* f = mock_fence();
    int woken = 0;
    Task* waiters[4];
    for (auto& w : waiters)
        w = kthread_run(
            [&] {
                if (dma_fence_wait_timeout(f, false, msecs_to_jiffies(1000)) > 0)
                    woken++;
                return 0;
            },
            "waiter");
    advance(10 * NSEC_PER_MSEC);
    EXPECT_EQ(woken, 0);
    dma_fence_signal(f);
    for (auto* w : waiters)
        kthread_stop(w);
    EXPECT_EQ(woken, 4);
    dma_fence_put(f);
}

TEST_F(FenceWait, WaitAnyReturnsIndexOfSignalledFence) {
    dma_fence* f[3] = {mock_fence(), mock_fence(), mock_fence()};
    Task* t = signal_after(f[1], 12);
    u32 idx = 99;
    long ret = dma_fence_wait_any_timeout(f, 3, false, msecs_to_jiffies(1000), &idx);
    EXPECT_GT(ret, 0);
    EXPECT_EQ(idx, 1u);
    kthread_stop(t);
    for (auto* x : f)
        EXPECT_TRUE(x->cb_list.empty());
    dma_fence_signal(f[0]);
    dma_fence_signal(f[2]);
    for (auto* x : f)
        dma_fence_put(x);
}

TEST_F(FenceWait, WaitAnyAlreadySignalled) {
    dma_fence* f[2] = {mock_fence(), mock_fence()};
    dma_fence_signal(f[1]);
    u32 idx = 99;
    EXPECT_EQ(dma_fence_wait_any_timeout(f, 2, false, 50, &idx), 50);
    EXPECT_EQ(idx, 1u);
    idx = 99;
    EXPECT_EQ(dma_fence_wait_any_timeout(f, 2, false, 0, &idx), 1);
    EXPECT_EQ(idx, 1u);
    dma_fence_signal(f[0]);
    for (auto* x : f)
        dma_fence_put(x);
}

TEST_F(FenceWait, WaitAnyTimesOut) {
    dma_fence* f[2] = {mock_fence(), mock_fence()};
    ktime_t t0 = ktime_get();
    EXPECT_EQ(dma_fence_wait_any_timeout(f, 2, false, 25, nullptr), 0);
    EXPECT_GE(ktime_get() - t0, 24 * static_cast<ktime_t>(TICK_NSEC));
    EXPECT_EQ(dma_fence_wait_any_timeout(f, 2, false, 0, nullptr), 0);
    for (auto* x : f) {
        EXPECT_TRUE(x->cb_list.empty());
        dma_fence_signal(x);
        dma_fence_put(x);
    }
}

TEST_F(FenceWait, WaitAnyRejectsBadArguments) {
    EXPECT_EQ(dma_fence_wait_any_timeout(nullptr, 0, false, 1, nullptr), -EINVAL);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
}

TEST_F(FenceWait, WaitUnderSpinlockIsReported) {
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    SpinLock l("outer");
    spin_lock(&l);
    dma_fence_wait_timeout(f, false, 1);
    spin_unlock(&l);
    EXPECT_TRUE(expect_report(ReportKind::MightSleep));
    dma_fence_put(f);
}
