// Wait queues, completions, kthreads, and the simulation's deadlock detection.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "kernel_shim/completion.h"
#include "kernel_shim/sim_abort.h"
#include "kernel_shim/wait.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Wait : public kshim::testing::SweepableKernelTest {};

TEST_F(Wait, WaitEventTimeoutReturnsRemainingJiffies) {
    wait_queue_head wq;
    bool flag = false;
    Task* t = kthread_run(
        [&] {
            msleep(40);  // 10 jiffies
            flag = true;
            wake_up(&wq);
            return 0;
        },
        "setter");
    long left = wait_event_timeout(wq, flag, 100);
    EXPECT_EQ(left, 90);
    kthread_stop(t);
}

TEST_F(Wait, WaitEventTimeoutReturnsZeroOnTimeoutAfterTheFullTime) {
    wait_queue_head wq;
    ktime_t t0 = ktime_get();
    EXPECT_EQ(wait_event_timeout(wq, false, 25), 0);
    EXPECT_EQ(ktime_get() - t0, jiffies_to_nsecs(25));
}

TEST_F(Wait, WaitEventTimeoutReturnsAtLeastOneWhenTrueAtOnce) {
    wait_queue_head wq;
    EXPECT_EQ(wait_event_timeout(wq, true, 0), 1);
    EXPECT_EQ(wait_event_timeout(wq, true, 7), 7);
}

TEST_F(Wait, ConditionIsRecheckedAfterEveryWakeUp) {
    wait_queue_head wq;
    int value = 0;
    Task* t = kthread_run(
        [&] {
            for (int i = 1; i <= 5; i++) {
                msleep(1);
                value = i;
                wake_up(&wq);  // four of these wake the waiter for nothing
            }
            return 0;
        },
        "stepper");
    wait_event(wq, value == 5);
    EXPECT_EQ(ktime_get(), ms_to_ktime(5));
    kthread_stop(t);
}

TEST_F(Wait, CompletionCountsAndCompleteAllReleasesEveryone) {
    completion c;
    complete(&c);
    complete(&c);
    EXPECT_TRUE(try_wait_for_completion(&c));
    EXPECT_TRUE(try_wait_for_completion(&c));
    EXPECT_FALSE(try_wait_for_completion(&c));
    int woken = 0;
    std::vector<Task*> ts;
    for (int i = 0; i < 3; i++)
        ts.push_back(kthread_run(
            [&] {
                wait_for_completion(&c);
                woken++;
                return 0;
            },
            "waiter"));
    advance_until_idle();
    EXPECT_EQ(woken, 0);
    complete_all(&c);
    advance_until_idle();
    EXPECT_EQ(woken, 3);
    EXPECT_TRUE(completion_done(&c));
    reinit_completion(&c);
    EXPECT_FALSE(completion_done(&c));
    for (Task* t : ts)
        kthread_stop(t);
}

TEST_F(Wait, WaitForCompletionTimeout) {
    completion c;
    EXPECT_EQ(wait_for_completion_timeout(&c, msecs_to_jiffies(100)), 0u);
    Task* t = kthread_run(
        [&] {
            msleep(20);
            complete(&c);
            return 0;
        },
        "completer");
    EXPECT_EQ(wait_for_completion_timeout(&c, msecs_to_jiffies(100)), static_cast<long>(msecs_to_jiffies(80)));
    kthread_stop(t);
}

TEST_F(Wait, KthreadShouldStopEndsALoop) {
    int loops = 0;
    Task* t = kthread_run(
        [&] {
            while (!kthread_should_stop()) {
                loops++;
                schedule_timeout(1);
            }
            return 42;
        },
        "looper");
    advance(jiffies_to_nsecs(10));
    EXPECT_EQ(kthread_stop(t), 42);
    EXPECT_GE(loops, 10);
}

TEST_F(Wait, DeadlockIsReportedAndUnwindsTheWaiter) {
    wait_queue_head wq;
    EXPECT_THROW(wait_event(wq, false), SimAbort);
    auto reports = take_reports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, ReportKind::Deadlock);
    EXPECT_NE(reports[0].detail.find("main (task 1) waits on wait_event at"), std::string::npos) << reports[0].detail;
    EXPECT_NE(reports[0].detail.find("wait_test.cpp"), std::string::npos);
}

// The end-of-test checks themselves, in worlds of their own.
static void world_with_a_stuck_task() {
    kshim::testing::TestWorld w(RuntimeOptions{});
    static completion never;
    init_completion(&never);
    kthread_run(
        [] {
            wait_for_completion(&never);
            return 0;
        },
        "stuck-forever");
}

TEST(WaitChecks, ATaskStillBlockedAtTheEndFailsTheTest) {
    EXPECT_NONFATAL_FAILURE(world_with_a_stuck_task(), "task still blocked at the end of the test: stuck-forever");
}
