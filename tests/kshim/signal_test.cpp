// Signals and interruptible sleeps (kernel_shim/signal.h): a pending signal ends a
// TASK_INTERRUPTIBLE sleep and an interruptible fence wait with -ERESTARTSYS, and leaves every
// uninterruptible one alone; in real mode a POSIX signal handler can deliver it.
#include <gtest/gtest.h>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <vector>

#include "kernel_shim/completion.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/kthread.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/sanitizers.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/signal.h"
#include "kernel_shim/wait_bit.h"
#include "kernel_shim/ww_mutex.h"
#include "tests/dma_fence/mock_fence.h"
#include "tests/support/kernel_test.h"

using namespace kshim;
using dma_fence_test::mock_fence;

namespace {

// A kthread that waits on `f` (interruptibly or not) for up to 1 s and records the result.
struct FenceWaiter {
    dma_fence* f;
    bool intr;
    std::atomic<long> ret{1234};
    std::atomic<bool> done{false};
    Task* task = nullptr;
    void start() {
        task = kthread_run(
            [this] {
                ret = dma_fence_wait_timeout(f, intr, static_cast<long>(msecs_to_jiffies(1000)));
                done = true;
                return 0;
            },
            intr ? "intr_waiter" : "waiter");
    }
};

// `slack`: how far the clock may move meanwhile (none in simulated time).
void sleep_interruptible_with_signal_pending_returns_at_once(ktime_t slack) {
    Task* self = current();
    signal_wake_up(self);
    const ktime_t t0 = ktime_get();
    set_current_state(TASK_INTERRUPTIBLE);
    const long left = schedule_timeout(static_cast<long>(msecs_to_jiffies(100)));
    EXPECT_LE(ktime_get() - t0, slack);
    EXPECT_GE(left, static_cast<long>(msecs_to_jiffies(100)) - 1);
    EXPECT_EQ(self->sleep_state.load(), TASK_RUNNING);
    EXPECT_TRUE(signal_pending(self));  // the syscall layer clears it, not the sleep
    clear_signal_pending(self);
}

}  // namespace

class Signal : public kshim::testing::KernelTest {};

TEST_F(Signal, InterruptibleFenceWaitEndsWithErestartsys) {
    dma_fence* f = mock_fence();
    FenceWaiter w{f, true};
    w.start();
    advance(30 * NSEC_PER_MSEC);
    EXPECT_FALSE(w.done);
    signal_wake_up(w.task);
    advance_until_idle();
    EXPECT_TRUE(w.done);
    EXPECT_EQ(w.ret, -ERESTARTSYS);
    EXPECT_LT(ktime_get(), 100 * NSEC_PER_MSEC);  // ended by the signal, not the timeout
    kthread_stop(w.task);
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(Signal, UninterruptibleFenceWaitIgnoresTheSignal) {
    dma_fence* f = mock_fence();
    FenceWaiter w{f, false};
    w.start();
    advance(30 * NSEC_PER_MSEC);
    signal_wake_up(w.task);
    advance(30 * NSEC_PER_MSEC);
    EXPECT_FALSE(w.done);
    dma_fence_signal(f);
    advance_until_idle();
    EXPECT_TRUE(w.done);
    EXPECT_GT(w.ret, 0);  // the fence, with time left
    kthread_stop(w.task);
    dma_fence_put(f);
}

TEST_F(Signal, WaitAnyInterruptibleEndsWithErestartsys) {
    dma_fence* fs[2] = {mock_fence(), mock_fence()};
    std::atomic<long> ret{1234};
    Task* t = kthread_run(
        [&] {
            ret = dma_fence_wait_any_timeout(fs, 2, true, static_cast<long>(msecs_to_jiffies(1000)), nullptr);
            return 0;
        },
        "any_waiter");
    advance(10 * NSEC_PER_MSEC);
    signal_wake_up(t);
    advance_until_idle();
    EXPECT_EQ(ret, -ERESTARTSYS);
    kthread_stop(t);
    for (dma_fence* f : fs) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(Signal, AlreadySignalledFenceWinsOverAPendingSignal) {
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    signal_wake_up(current());
    EXPECT_GT(dma_fence_wait_timeout(f, true, 10), 0);
    clear_signal_pending(current());
    dma_fence_put(f);
}

TEST_F(Signal, InterruptibleSleepWithASignalPendingDoesNotSleep) {
    sleep_interruptible_with_signal_pending_returns_at_once(0);
}

TEST_F(Signal, UninterruptibleSleepsIgnoreSignals) {
    Task* t = kthread_run(
        [] {
            msleep(50);
            schedule_timeout(static_cast<long>(msecs_to_jiffies(50)));  // TASK_UNINTERRUPTIBLE by default
            return 0;
        },
        "sleeper");
    advance(10 * NSEC_PER_MSEC);
    signal_wake_up(t);
    advance_until_idle();
    EXPECT_GE(ktime_get(), 100 * NSEC_PER_MSEC);
    kthread_stop(t);
}

TEST_F(Signal, MutexLockInterruptibleGivesEintrToAWaiterAndHandsTheWakeOn) {
    Mutex m("signal.m");
    mutex_lock(&m);
    std::atomic<int> first{1234}, second{1234};
    Task* a = kthread_run(
        [&] {
            first = mutex_lock_interruptible(&m);
            if (first == 0)
                mutex_unlock(&m);
            return 0;
        },
        "waiter_a");
    advance(NSEC_PER_MSEC);
    Task* b = kthread_run(
        [&] {
            second = mutex_lock_interruptible(&m);
            if (second == 0)
                mutex_unlock(&m);
            return 0;
        },
        "waiter_b");
    advance(NSEC_PER_MSEC);
    signal_wake_up(a);
    advance_until_idle();
    EXPECT_EQ(first, -EINTR);
    EXPECT_EQ(second, 1234);  // still waiting
    EXPECT_EQ(m.owner(), current());
    mutex_unlock(&m);  // the first waiter is gone: the wake-up reaches the second
    advance_until_idle();
    EXPECT_EQ(second, 0);
    kthread_stop(a);
    kthread_stop(b);
    EXPECT_FALSE(m.is_locked());
}

TEST_F(Signal, UncontendedInterruptibleLocksIgnoreAPendingSignal) {
    Mutex m("signal.free");
    signal_wake_up(current());
    EXPECT_EQ(mutex_lock_interruptible(&m), 0);
    mutex_unlock(&m);
    clear_signal_pending(current());
}

TEST_F(Signal, WwMutexLockInterruptibleGivesEintrAndTheContextStaysUsable) {
    WwClass cls("signal_ww");
    WwMutex x(&cls), y(&cls);
    WwAcquireCtx holder;
    ww_acquire_init(&holder, &cls);
    ASSERT_EQ(ww_mutex_lock(&x, &holder), 0);
    std::atomic<int> ret{1234}, slow_ret{1234};
    Task* t = kthread_run(
        [&] {
            WwAcquireCtx ctx;
            ww_acquire_init(&ctx, &cls);
            ret = ww_mutex_lock_interruptible(&x, &ctx);  // younger, holds nothing: waits
            EXPECT_EQ(ctx.acquired, 0);
            clear_signal_pending(current());
            EXPECT_EQ(ww_mutex_lock_interruptible(&y, &ctx), 0);  // free: taken
            EXPECT_EQ(ww_mutex_lock(&x, &ctx), -EDEADLK);         // younger and holding: backs off
            ww_mutex_unlock(&y);
            signal_wake_up(current());
            slow_ret = ww_mutex_lock_slow_interruptible(&x, &ctx);  // would wait, a signal is pending
            ww_acquire_fini(&ctx);
            return 0;
        },
        "ww_waiter");
    advance(NSEC_PER_MSEC);
    signal_wake_up(t);
    advance_until_idle();
    EXPECT_EQ(ret, -EINTR);
    EXPECT_EQ(slow_ret, -EINTR);
    kthread_stop(t);
    ww_mutex_unlock(&x);
    ww_acquire_fini(&holder);
}

TEST_F(Signal, InterruptibleWaitEventCompletionAndVarWaitsGiveErestartsys) {
    wait_queue_head wq;
    completion c;
    init_completion(&c);
    int var = 0;
    std::atomic<long> ev{1234}, ev_timeout{1234}, comp{1234}, comp_timeout{1234}, var_ret{1234};
    std::vector<Task*> ts;
    ts.push_back(kthread_run(
        [&] {
            ev = wait_event_interruptible(wq, false);
            return 0;
        },
        "ev"));
    ts.push_back(kthread_run(
        [&] {
            ev_timeout = wait_event_interruptible_timeout(wq, false, static_cast<long>(msecs_to_jiffies(1000)));
            return 0;
        },
        "ev_timeout"));
    ts.push_back(kthread_run(
        [&] {
            comp = wait_for_completion_interruptible(&c);
            return 0;
        },
        "comp"));
    ts.push_back(kthread_run(
        [&] {
            comp_timeout = wait_for_completion_interruptible_timeout(&c, static_cast<long>(msecs_to_jiffies(1000)));
            return 0;
        },
        "comp_timeout"));
    ts.push_back(kthread_run(
        [&] {
            var_ret = wait_var_event_interruptible(&var, var != 0);
            return 0;
        },
        "var"));
    advance(10 * NSEC_PER_MSEC);
    for (Task* t : ts)
        signal_wake_up(t);
    advance_until_idle();
    EXPECT_EQ(ev, -ERESTARTSYS);
    EXPECT_EQ(ev_timeout, -ERESTARTSYS);
    EXPECT_EQ(comp, -ERESTARTSYS);
    EXPECT_EQ(comp_timeout, -ERESTARTSYS);
    EXPECT_EQ(var_ret, -ERESTARTSYS);
    EXPECT_LT(ktime_get(), 100 * NSEC_PER_MSEC);
    for (Task* t : ts)
        kthread_stop(t);
    EXPECT_FALSE(wq.has_sleepers());
}

TEST_F(Signal, ASatisfiedInterruptibleWaitReturnsZeroDespiteASignal) {
    completion c;
    init_completion(&c);
    complete(&c);
    signal_wake_up(current());
    EXPECT_EQ(wait_for_completion_interruptible(&c), 0);
    wait_queue_head wq;
    EXPECT_GT(wait_event_interruptible_timeout(wq, true, 10), 0);
    clear_signal_pending(current());
}

// ---- real threads ----

class SignalReal : public kshim::testing::RealKernelTest {};

TEST_F(SignalReal, InterruptibleFenceWaitEndsWithErestartsys) {
    dma_fence* f = mock_fence();
    FenceWaiter w{f, true};
    w.start();
    while (w.task->sleep_state.load() != TASK_INTERRUPTIBLE)
        cpu_relax();
    signal_wake_up(w.task);
    kthread_stop(w.task);
    EXPECT_EQ(w.ret, -ERESTARTSYS);
    dma_fence_signal(f);
    dma_fence_put(f);
}

// A timeout the host clock cannot express (a client's INT64_MAX deadline, turned into jiffies
// by drm_timeout_abs_to_jiffies, lands just below KTIME_MAX) sleeps as an untimed wait: the
// futex deadline is not computed (it would overflow), and the signal still ends the wait.
TEST_F(SignalReal, AnInterruptibleWaitWithAHugeTimeoutEndsWithTheSignal) {
    dma_fence* f = mock_fence();
    std::atomic<long> ret{1234};
    const long huge = static_cast<long>(KTIME_MAX / TICK_NSEC) - 1000;
    Task* t = kthread_run(
        [&] {
            ret = dma_fence_wait_timeout(f, true, huge);
            return 0;
        },
        "huge_waiter");
    while (t->sleep_state.load() != TASK_INTERRUPTIBLE)
        cpu_relax();
    signal_wake_up(t);
    kthread_stop(t);
    EXPECT_EQ(ret, -ERESTARTSYS);
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(SignalReal, InterruptibleSleepWithASignalPendingDoesNotSleep) {
    sleep_interruptible_with_signal_pending_returns_at_once(50 * NSEC_PER_MSEC);
}

// TSan defers a signal's handler to its next interceptor, which a thread blocked in the raw
// futex wait never reaches: the handler-delivered form is checked in the other builds.
#if !KSHIM_TSAN
namespace {
std::atomic<Task*> g_signal_target{nullptr};
void deliver_to_task(int) {
    if (Task* t = g_signal_target.load())
        signal_wake_up(t);
}
}  // namespace

TEST_F(SignalReal, APosixSignalHandlerEndsTheWaitOfItsThread) {
    struct sigaction sa {
    }, old{};
    sa.sa_handler = deliver_to_task;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
    dma_fence* f = mock_fence();
    std::atomic<pthread_t> thread{};
    std::atomic<bool> ready{false};
    std::atomic<long> ret{1234};
    Task* t = kthread_run(
        [&] {
            // Kernel threads block signals; this one stands for a client thread in an ioctl.
            sigset_t s;
            sigemptyset(&s);
            sigaddset(&s, SIGUSR1);
            pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
            g_signal_target = current();
            thread = pthread_self();
            ready = true;
            ret = dma_fence_wait_timeout(f, true, static_cast<long>(msecs_to_jiffies(10000)));
            return 0;
        },
        "client");
    while (!ready || t->sleep_state.load() != TASK_INTERRUPTIBLE)
        cpu_relax();
    pthread_kill(thread.load(), SIGUSR1);
    kthread_stop(t);
    EXPECT_EQ(ret, -ERESTARTSYS);
    g_signal_target = nullptr;
    sigaction(SIGUSR1, &old, nullptr);
    dma_fence_signal(f);
    dma_fence_put(f);
}
#endif
