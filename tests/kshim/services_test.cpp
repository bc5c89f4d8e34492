// Kernel services that upstream tests and drivers use beside workqueues: the kthread worker,
// variable waits (wait_var_event / wake_up_var), on-stack timers, num_online_cpus,
// kthread_stop_put, WQ_UNBOUND_MAX_ACTIVE.
#include <gtest/gtest.h>

#include <vector>

#include "kernel_shim/err.h"
#include "kernel_shim/kthread.h"
#include "kernel_shim/wait_bit.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {

class Services : public kshim::testing::SweepableKernelTest {};

struct Item {
    kthread_work work;
    std::vector<int>* log;
    int id;
    ktime_t sleep = 0;
};

void item_fn(kthread_work* w) {
    Item* it = container_of(w, Item, work);
    if (it->sleep)
        msleep(static_cast<unsigned>(it->sleep / NSEC_PER_MSEC));
    it->log->push_back(it->id);
}

TEST_F(Services, KthreadWorkerRunsWorksInQueueingOrderOnOneThread) {
    kthread_worker* worker = kthread_create_worker(0, "test-worker-%d", 3);
    ASSERT_FALSE(IS_ERR(worker));
    EXPECT_EQ(worker->task->name, "test-worker-3");
    std::vector<int> log;
    std::vector<Item> items(5);
    for (int i = 0; i < 5; i++) {
        items[i].log = &log;
        items[i].id = i;
        items[i].sleep = i == 1 ? 5 * NSEC_PER_MSEC : 0;  // a sleeping work holds the later ones back
        kthread_init_work(&items[i].work, item_fn);
        EXPECT_TRUE(kthread_queue_work(worker, &items[i].work));
    }
    EXPECT_FALSE(kthread_queue_work(worker, &items[4].work));  // already queued
    kthread_flush_worker(worker);
    EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3, 4}));
    // Requeueable once it ran.
    EXPECT_TRUE(kthread_queue_work(worker, &items[0].work));
    kthread_flush_work(&items[0].work);
    EXPECT_EQ(log.back(), 0);
    kthread_destroy_worker(worker);
}

TEST_F(Services, KthreadFlushWorkWaitsForThatWorkOnly) {
    kthread_worker* worker = kthread_run_worker(0, "flush");
    std::vector<int> log;
    Item a{{}, &log, 1, 10 * NSEC_PER_MSEC}, b{{}, &log, 2, 10 * NSEC_PER_MSEC};
    kthread_init_work(&a.work, item_fn);
    kthread_init_work(&b.work, item_fn);
    kthread_queue_work(worker, &a.work);
    kthread_queue_work(worker, &b.work);
    const ktime_t t0 = ktime_get();
    kthread_flush_work(&a.work);
    EXPECT_EQ(log, std::vector<int>{1});  // b not waited for
    EXPECT_EQ(ktime_get() - t0, 10 * NSEC_PER_MSEC);
    kthread_flush_work(&a.work);  // neither queued nor running: returns at once
    EXPECT_EQ(ktime_get() - t0, 10 * NSEC_PER_MSEC);
    kthread_destroy_worker(worker);  // flushes b first
    EXPECT_EQ(log, (std::vector<int>{1, 2}));
}

TEST_F(Services, KthreadCancelWorkSyncTakesAQueuedWorkOff) {
    kthread_worker* worker = kthread_create_worker(0, "cancel");
    std::vector<int> log;
    Item a{{}, &log, 1, 10 * NSEC_PER_MSEC}, b{{}, &log, 2, 0};
    kthread_init_work(&a.work, item_fn);
    kthread_init_work(&b.work, item_fn);
    kthread_queue_work(worker, &a.work);
    kthread_queue_work(worker, &b.work);
    EXPECT_TRUE(kthread_cancel_work_sync(&b.work));
    // a is queued (taken off: never runs) or, under a preemption sweep, maybe running already
    // (waited for: done on return).
    const bool was_queued = kthread_cancel_work_sync(&a.work);
    EXPECT_EQ(log, was_queued ? std::vector<int>{} : std::vector<int>{1});
    kthread_flush_worker(worker);
    EXPECT_EQ(log, was_queued ? std::vector<int>{} : std::vector<int>{1});
    EXPECT_TRUE(kthread_queue_work(worker, &b.work));  // cancelled works can be queued again
    kthread_flush_work(&b.work);
    EXPECT_EQ(log.back(), 2);
    kthread_destroy_worker(worker);
}

TEST_F(Services, WaitVarEventWakesOnlyTheWaitersOfThatVariable) {
    int a = 0, b = 0;
    int woke_a = 0, woke_b = 0;
    Task* ta = kthread_run(
        [&] {
            wait_var_event(&a, a == 1);
            woke_a++;
            return 0;
        },
        "wait-a");
    Task* tb = kthread_run(
        [&] {
            long left = wait_var_event_timeout(&b, b == 1, msecs_to_jiffies(50));
            EXPECT_EQ(left, 0);  // never set: times out after the full time
            woke_b++;
            return 0;
        },
        "wait-b");
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(woke_a, 0);
    b = 2;
    wake_up_var(&b);  // b's waiter rechecks and sleeps on; a's is not woken
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(woke_a + woke_b, 0);
    a = 1;
    wake_up_var(&a);
    ASSERT_TRUE(run_until([&] { return woke_a == 1; }, NSEC_PER_MSEC));
    EXPECT_EQ(woke_b, 0);
    const ktime_t t0 = ktime_get();
    kthread_stop_put(ta);
    EXPECT_EQ(kthread_stop_put(tb), 0);
    EXPECT_EQ(woke_b, 1);
    EXPECT_GE(ktime_get() - t0, 40 * NSEC_PER_MSEC);
}

TEST_F(Services, WaitVarEventTimeoutReturnsTheJiffiesLeft) {
    int v = 0;
    Task* t = kthread_run(
        [&] {
            msleep(20);
            v = 1;
            wake_up_var(&v);
            return 0;
        },
        "setter");
    long left = wait_var_event_timeout(&v, v == 1, msecs_to_jiffies(100));
    EXPECT_GT(left, 0);
    EXPECT_LE(left, static_cast<long>(msecs_to_jiffies(80)) + 1);
    EXPECT_EQ(wait_var_event_timeout(&v, v == 1, 0), 1);  // already true: at least 1
    kthread_stop(t);
}

TEST_F(Services, TimerOnStackFiresAndIsCheckedAtDestroy) {
    int fired = 0;
    {
        timer_list t;
        timer_setup_on_stack(&t, [&](timer_list*) { fired++; });
        mod_timer(&t, jiffies_now() + msecs_to_jiffies(10));
        ASSERT_TRUE(run_until([&] { return fired == 1; }, 20 * NSEC_PER_MSEC));
        destroy_timer_on_stack(&t);
    }
    EXPECT_FALSE(expect_report(ReportKind::Warn));
    {
        timer_list t;
        timer_setup_on_stack(&t, [&](timer_list*) { fired++; });
        mod_timer(&t, jiffies_now() + msecs_to_jiffies(10));
        destroy_timer_on_stack(&t);  // still armed: reported
        EXPECT_TRUE(expect_report(ReportKind::Warn));
        del_timer_sync(&t);
    }
    EXPECT_EQ(fired, 1);
}

TEST_F(Services, CpusAndWorkqueueLimits) {
    EXPECT_EQ(num_online_cpus(), 8u);  // fixed in simulated mode
    static_assert(WQ_UNBOUND_MAX_ACTIVE == 512);
    workqueue_struct* wq = alloc_workqueue("unbound", WQ_UNBOUND, WQ_UNBOUND_MAX_ACTIVE);
    ASSERT_NE(wq, nullptr);
    destroy_workqueue(wq);
}

}  // namespace
