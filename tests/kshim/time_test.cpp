// Time, timers and sleeping in simulated time.
#include <gtest/gtest.h>

#include <chrono>

#include "kernel_shim/backend.h"
#include "kernel_shim/completion.h"
#include "kernel_shim/iopoll.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/sim_abort.h"
#include "kernel_shim/time.h"
#include "kernel_shim/wait.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Time : public kshim::testing::SweepableKernelTest {};

namespace {
int g_ran_now = 0, g_ran_later = 0;
void run_now(work_struct*) {
    g_ran_now++;
}
void run_later(work_struct*) {
    g_ran_later++;
}
}  // namespace

// The two ways to drive the runtime say whether time passes: run_pending runs what is runnable
// at the current instant and stops before the next timer; advance_until_idle lets time pass.
TEST_F(Time, RunPendingDoesNotLetTimePassAdvanceUntilIdleDoes) {
    g_ran_now = g_ran_later = 0;
    work_struct now_work;
    delayed_work later_work;
    INIT_WORK(&now_work, run_now);
    INIT_DELAYED_WORK(&later_work, run_later);
    const ktime_t t0 = ktime_get();
    schedule_work(&now_work);
    schedule_delayed_work(&later_work, msecs_to_jiffies(10));
    EXPECT_FALSE(run_pending()) << "the delayed work is still pending";
    EXPECT_EQ(g_ran_now, 1);
    EXPECT_EQ(g_ran_later, 0);
    EXPECT_EQ(ktime_get(), t0) << "run_pending let time pass";
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(g_ran_later, 1);
    EXPECT_GE(ktime_get() - t0, 10 * NSEC_PER_MSEC);
    EXPECT_TRUE(run_pending()) << "nothing pending any more";
}

TEST_F(Time, JiffiesConversionsRoundUpAsTheKernel) {
    EXPECT_EQ(msecs_to_jiffies(0), 0u);
    EXPECT_EQ(msecs_to_jiffies(1), 1u);  // 4 ms per jiffy at HZ=250, rounded up
    EXPECT_EQ(msecs_to_jiffies(4), 1u);
    EXPECT_EQ(msecs_to_jiffies(5), 2u);
    EXPECT_EQ(msecs_to_jiffies(1000), HZ);
    EXPECT_EQ(usecs_to_jiffies(1), 1u);
    EXPECT_EQ(jiffies_to_msecs(HZ), 1000u);
}

TEST_F(Time, JiffiesStartNearTheirWrapAndTimeAfterHandlesIt) {
    unsigned long j0 = jiffies;
    EXPECT_EQ(j0, INITIAL_JIFFIES);
    EXPECT_TRUE(time_after(j0 + 1, j0));
    EXPECT_TRUE(time_before(ULONG_MAX, ULONG_MAX + 2));  // across the wrap
    advance(NSEC_PER_SEC);
    EXPECT_EQ(jiffies - j0, HZ);
}

TEST_F(Time, MsleepAdvancesVirtualTimeExactly) {
    ktime_t t0 = ktime_get();
    msleep(250);
    EXPECT_EQ(ktime_get() - t0, ms_to_ktime(250));
    usleep_range(100, 200);
    EXPECT_EQ(ktime_get() - t0, ms_to_ktime(250) + us_to_ktime(100));
}

TEST_F(Time, FiveSecondTimeoutCostsAlmostNoWallTime) {
    wait_queue_head wq;
    auto wall0 = std::chrono::steady_clock::now();
    long left = wait_event_timeout(wq, false, msecs_to_jiffies(5000));
    auto wall = std::chrono::steady_clock::now() - wall0;
    EXPECT_EQ(left, 0);
    EXPECT_GE(ktime_get(), ms_to_ktime(5000));
    EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(wall).count(), 100);
}

TEST_F(Time, TimerListFiresAtItsJiffyAndNotBefore) {
    timer_list t;
    unsigned long fired_at = 0;
    timer_setup(&t, [&](timer_list*) { fired_at = jiffies; });
    unsigned long start = jiffies;
    EXPECT_EQ(mod_timer(&t, start + 10), 0);
    EXPECT_TRUE(timer_pending(&t));
    advance(jiffies_to_nsecs(9));
    EXPECT_EQ(fired_at, 0u);
    advance(jiffies_to_nsecs(1));
    EXPECT_EQ(fired_at, start + 10);
    EXPECT_FALSE(timer_pending(&t));
}

TEST_F(Time, ModTimerReportsPendingAndDelTimerCancels) {
    timer_list t;
    int fired = 0;
    timer_setup(&t, [&](timer_list*) { fired++; });
    EXPECT_EQ(mod_timer(&t, jiffies + 5), 0);
    EXPECT_EQ(mod_timer(&t, jiffies + 50), 1);  // was pending: moved, not duplicated
    EXPECT_EQ(del_timer_sync(&t), 1);
    EXPECT_EQ(del_timer(&t), 0);
    advance(NSEC_PER_SEC);
    EXPECT_EQ(fired, 0);
}

TEST_F(Time, TimerCallbackRunsInAtomicContext) {
    timer_list t;
    bool atomic = false;
    timer_setup(&t, [&](timer_list*) { atomic = in_atomic() && in_softirq(); });
    mod_timer(&t, jiffies + 1);
    advance(NSEC_PER_SEC);
    EXPECT_TRUE(atomic);
}

TEST_F(Time, HrtimerPeriodicWithForwardNow) {
    hrtimer t;
    std::vector<ktime_t> at;
    hrtimer_setup(&t, [&](hrtimer* h) {
        at.push_back(ktime_get());
        if (at.size() == 3)
            return HRTIMER_NORESTART;
        hrtimer_forward_now(h, us_to_ktime(500));
        return HRTIMER_RESTART;
    });
    hrtimer_start(&t, us_to_ktime(500), HRTIMER_MODE_REL);
    EXPECT_TRUE(hrtimer_active(&t));
    advance(ms_to_ktime(10));
    ASSERT_EQ(at.size(), 3u);
    EXPECT_EQ(at[0], us_to_ktime(500));
    EXPECT_EQ(at[1], us_to_ktime(1000));
    EXPECT_EQ(at[2], us_to_ktime(1500));
    EXPECT_FALSE(hrtimer_active(&t));
}

TEST_F(Time, HrtimerCancelReportsWhetherItWasActive) {
    hrtimer t;
    int fired = 0;
    hrtimer_setup(&t, [&](hrtimer*) {
        fired++;
        return HRTIMER_NORESTART;
    });
    hrtimer_start(&t, ms_to_ktime(1), HRTIMER_MODE_REL);
    EXPECT_EQ(hrtimer_cancel(&t), 1);
    EXPECT_EQ(hrtimer_try_to_cancel(&t), 0);
    advance(ms_to_ktime(5));
    EXPECT_EQ(fired, 0);
}

TEST_F(Time, ScheduleTimeoutReturnsJiffiesLeftWhenWoken) {
    Task* me = current();
    Task* waker = kthread_run(
        [me] {
            msleep(40);  // 10 jiffies
            wake_up_process(me);
            return 0;
        },
        "waker");
    long left = schedule_timeout(100);
    EXPECT_EQ(left, 90);
    EXPECT_EQ(schedule_timeout(5), 0);  // nobody wakes us: the full timeout passes
    kthread_stop(waker);
}

TEST_F(Time, UdelayLetsTimePassWithoutSleepChecks) {
    ktime_t t0 = ktime_get();
    preempt_disable();
    udelay(30);  // busy-waiting in atomic context is allowed
    preempt_enable();
    EXPECT_EQ(ktime_get() - t0, us_to_ktime(30));
}

// cpu_relax busy-waits in simulated mode: a task spinning for a peer that sleeps on a timer
// must let virtual time move, or the peer never wakes.
TEST_F(Time, SpinningForASleepingPeerMovesTheClockToItsTimer) {
    std::atomic<bool> flag{false};
    Task* sleeper = kthread_run(
        [&] {
            msleep(10);
            flag.store(true);
            return 0;
        },
        "sleeper");
    Task* spinner = kthread_run(
        [&] {
            for (unsigned i = 0; !flag.load(); i++)
                cpu_relax(i);
            return 0;
        },
        "spinner");
    // The test body spins too: every runnable task is spinning.
    for (unsigned i = 0; !flag.load(); i++)
        cpu_relax(i);
    EXPECT_EQ(ktime_get(), 10 * NSEC_PER_MSEC);
    kthread_stop(spinner);
    kthread_stop(sleeper);
}

// Spinners whose peers never come (nothing pending on the clock) are a livelock: reported with
// where each spins, and the main task unwound, as a deadlock is.
TEST_F(Time, SpinningWithNoTimerPendingIsReportedAsALivelock) {
    std::atomic<bool> flag{false};
    Task* spinner = kthread_run(
        [&] {
            for (unsigned i = 0; !flag.load(); i++)
                cpu_relax(i);
            return 0;
        },
        "spinner");
    bool aborted = false;
    try {
        advance_until_idle();
    } catch (const SimAbort&) {
        aborted = true;
    }
    EXPECT_TRUE(aborted);
    std::vector<Report> reports = take_reports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, ReportKind::Deadlock);
    EXPECT_NE(reports[0].title.find("livelock"), std::string::npos);
    EXPECT_NE(reports[0].detail.find("spinning: spinner"), std::string::npos);
    EXPECT_NE(reports[0].detail.find("time_test.cpp"), std::string::npos);
    flag.store(true);
    kthread_stop(spinner);
}

// A spinner that sees progress is not a livelock: the clock does not jump while a peer that
// is not spinning still has work to do.
TEST_F(Time, SpinningBehindABusyPeerDoesNotMoveTheClock) {
    std::atomic<int> steps{0};
    Task* worker = kthread_run(
        [&] {
            for (int i = 0; i < 100; i++) {
                steps.fetch_add(1);
                backend().yield();
            }
            return 0;
        },
        "worker");
    Task* timer_task = kthread_run(
        [&] {
            msleep(1000);
            return 0;
        },
        "far-timer");
    for (unsigned i = 0; steps.load() < 100; i++)
        cpu_relax(i);
    EXPECT_EQ(ktime_get(), 0);
    kthread_stop(worker);
    kthread_stop(timer_task);
}

// A task that waits alone runs the clock itself (docs/kshim.md, "A wait alone does not switch"):
// the events due before its wake-up fire in order, in the loop's context, and it switches only
// when one of them lets someone else run.
class SimWait : public kshim::testing::KernelTest {};

namespace {
// A register bit the "hardware" sets at a known time: a kBandHardware event, as a device model's.
struct HwBit {
    std::atomic<u32> value{0};
    TimerEvent ev{&HwBit::fire, this, kBandHardware, "hw bit"};
    completion* wakes = nullptr;  // the event also completes this, if set
    static void fire(TimerEvent* e, u64) {
        auto* b = static_cast<HwBit*>(e->owner);
        b->value.store(1);
        if (b->wakes)
            complete(b->wakes);
    }
};
}  // namespace

TEST_F(SimWait, ALonePollSeesAHardwareEffectWithoutATaskSwitch) {
    HwBit bit;
    int ret = -1;
    ktime_t done_at = 0;
    u64 switches = 0;
    Task* poller = kthread_run(
        [&] {
            const u64 s0 = Runtime::get()->context_switches();
            backend().timer_arm(&bit.ev, ktime_get() + 5 * NSEC_PER_USEC);
            u32 v = 0;
            ret = read_poll_timeout_atomic(bit.value.load, v, v == 1, 0, 100, false);
            done_at = ktime_get();
            switches = Runtime::get()->context_switches() - s0;
            return 0;
        },
        "poller");
    const ktime_t t0 = ktime_get();
    kthread_stop(poller);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(done_at - t0, 5 * NSEC_PER_USEC) << "the poll sees the bit at the first read after it was set";
    EXPECT_EQ(switches, 0u) << "five 1 us steps of a lone poll each went through the scheduler";
}

TEST_F(SimWait, AnEventThatWakesAnotherTaskLetsItRunAtItsTime) {
    HwBit bit;
    completion go;
    init_completion(&go);
    bit.wakes = &go;
    std::atomic<int> flag{0};
    ktime_t woke_at = 0, seen_at = 0;
    Task* waiter = kthread_run(
        [&] {
            wait_for_completion(&go);
            woke_at = ktime_get();
            flag.store(1);
            return 0;
        },
        "waiter");
    Task* poller = kthread_run(
        [&] {
            backend().timer_arm(&bit.ev, ktime_get() + 3 * NSEC_PER_USEC);
            int v = 0;
            EXPECT_EQ(read_poll_timeout_atomic(flag.load, v, v == 1, 0, 100, false), 0);
            seen_at = ktime_get();
            return 0;
        },
        "poller");
    const ktime_t t0 = ktime_get();
    kthread_stop(poller);
    kthread_stop(waiter);
    EXPECT_EQ(woke_at - t0, 3 * NSEC_PER_USEC) << "the woken task ran when its event fired";
    EXPECT_GE(seen_at, woke_at);
    EXPECT_LE(seen_at - t0, 4 * NSEC_PER_USEC) << "the poll saw its store at its next read";
}

TEST_F(SimWait, ATimedSleepAloneEndsAtItsDeadlineAndAWakeUpEndsItEarly) {
    Task* me = current();
    const u64 s0 = Runtime::get()->context_switches();
    EXPECT_EQ(schedule_timeout(25), 0);  // nobody else: the clock runs to the deadline
    EXPECT_EQ(Runtime::get()->context_switches(), s0);
    HwBit bit;
    completion go;
    init_completion(&go);
    bit.wakes = &go;
    backend().timer_arm(&bit.ev, ktime_get() + 7 * NSEC_PER_MSEC);
    const ktime_t t0 = ktime_get();
    EXPECT_GT(wait_for_completion_timeout(&go, msecs_to_jiffies(100)), 0u);
    EXPECT_EQ(ktime_get() - t0, 7 * NSEC_PER_MSEC) << "the event inside the wait ended it";
    EXPECT_EQ(Runtime::get()->context_switches(), s0) << "main waited alone: no switch";
    (void)me;
}
