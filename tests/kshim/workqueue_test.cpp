// Workqueues: the kernel semantics drivers rely on, in simulated time.
#include <gtest/gtest.h>

#include <vector>

#include "kernel_shim/completion.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {
struct Item {
    work_struct work;
    int runs = 0;
    ktime_t sleep = 0;  // how long the function sleeps
    std::vector<unsigned long>* log = nullptr;
    unsigned long tag = 0;
    int* concurrent = nullptr;
    int* max_concurrent = nullptr;
    completion started;
    bool signal_start = false;

    static void fn(work_struct* w) {
        Item* it = container_of(w, Item, work);
        it->runs++;
        if (it->log)
            it->log->push_back(it->tag);
        if (it->signal_start)
            complete(&it->started);
        if (it->concurrent) {
            ++*it->concurrent;
            *it->max_concurrent = std::max(*it->max_concurrent, *it->concurrent);
        }
        if (it->sleep)
            msleep(static_cast<unsigned>(it->sleep / NSEC_PER_MSEC));
        if (it->concurrent)
            --*it->concurrent;
    }
    Item() { INIT_WORK(&work, fn); }
};

struct DItem {
    delayed_work dw;
    std::vector<ktime_t> ran_at;
    static void fn(work_struct* w) {
        DItem* d = container_of(to_delayed_work(w), DItem, dw);
        d->ran_at.push_back(ktime_get());
    }
    DItem() { INIT_DELAYED_WORK(&dw, fn); }
};
}  // namespace

class WorkqueueTest : public kshim::testing::KernelTest {};

TEST_F(WorkqueueTest, QueueWorkOnPendingItemReturnsFalse) {
    Item it;
    EXPECT_TRUE(queue_work(system_wq(), &it.work));
    EXPECT_TRUE(work_pending(&it.work));
    EXPECT_FALSE(queue_work(system_wq(), &it.work));
    advance_until_idle();
    EXPECT_EQ(it.runs, 1);
    EXPECT_FALSE(work_pending(&it.work));
    EXPECT_TRUE(queue_work(system_wq(), &it.work));  // queueable again once it ran
    advance_until_idle();
    EXPECT_EQ(it.runs, 2);
}

TEST_F(WorkqueueTest, DelayedWorkFiresExactlyAtItsVirtualDeadline) {
    DItem d;
    advance(1234567);  // start between two ticks
    unsigned long j0 = jiffies;
    EXPECT_TRUE(queue_delayed_work(system_wq(), &d.dw, 25));
    advance(jiffies_to_nsecs(24));
    EXPECT_TRUE(d.ran_at.empty());
    advance_until_idle();
    ASSERT_EQ(d.ran_at.size(), 1u);
    // It ran as jiffies reached j0 + 25: at that tick's instant.
    EXPECT_EQ(d.ran_at[0], static_cast<ktime_t>(j0 + 25 - INITIAL_JIFFIES) * TICK_NSEC);
}

TEST_F(WorkqueueTest, DelayedWorkWithZeroDelayRunsAtOnce) {
    DItem d;
    EXPECT_TRUE(queue_delayed_work(system_wq(), &d.dw, 0));
    advance_until_idle();
    ASSERT_EQ(d.ran_at.size(), 1u);
    EXPECT_EQ(d.ran_at[0], 0);
}

TEST_F(WorkqueueTest, ModDelayedWorkMovesTheDeadline) {
    DItem d;
    EXPECT_FALSE(mod_delayed_work(system_wq(), &d.dw, 100));  // was idle
    EXPECT_TRUE(mod_delayed_work(system_wq(), &d.dw, 10));    // was pending: rescheduled
    advance_until_idle();
    ASSERT_EQ(d.ran_at.size(), 1u);
    EXPECT_EQ(d.ran_at[0], static_cast<ktime_t>(jiffies_to_nsecs(10)));
}

TEST_F(WorkqueueTest, CancelDelayedWorkBeforeItFires) {
    DItem d;
    queue_delayed_work(system_wq(), &d.dw, 10);
    EXPECT_TRUE(cancel_delayed_work_sync(&d.dw));
    EXPECT_FALSE(cancel_delayed_work(&d.dw));
    advance_until_idle();
    EXPECT_TRUE(d.ran_at.empty());
}

TEST_F(WorkqueueTest, CancelWorkSyncOnARunningItemWaitsForIt) {
    Item it;
    it.sleep = ms_to_ktime(30);
    it.signal_start = true;
    queue_work(system_wq(), &it.work);
    wait_for_completion(&it.started);  // it is running now, asleep for 30 ms
    ktime_t t0 = ktime_get();
    EXPECT_FALSE(cancel_work_sync(&it.work));  // not pending, but running: wait
    EXPECT_EQ(ktime_get() - t0, ms_to_ktime(30));
    EXPECT_FALSE(work_busy(&it.work));
    EXPECT_EQ(it.runs, 1);
}

TEST_F(WorkqueueTest, CancelWorkSyncRemovesAPendingItem) {
    Item it;
    queue_work(system_wq(), &it.work);
    EXPECT_TRUE(cancel_work_sync(&it.work));
    advance_until_idle();
    EXPECT_EQ(it.runs, 0);
}

namespace {
struct Requeuer {
    work_struct work;
    int runs = 0;
    int limit = 0;
    kshim::workqueue_struct* wq = nullptr;
    static void fn(work_struct* w) {
        Requeuer* r = container_of(w, Requeuer, work);
        r->runs++;
        msleep(1);
        if (r->limit == 0 || r->runs < r->limit)
            queue_work(r->wq, w);
    }
};
}  // namespace

TEST_F(WorkqueueTest, AnItemMayRequeueItselfAndCancelSyncStopsIt) {
    Requeuer r;
    r.wq = system_wq();
    INIT_WORK(&r.work, Requeuer::fn);
    queue_work(r.wq, &r.work);
    advance(ms_to_ktime(10));
    EXPECT_GE(r.runs, 5);
    cancel_work_sync(&r.work);  // its own requeue is refused while cancelling
    int runs = r.runs;
    advance(ms_to_ktime(10));
    EXPECT_EQ(r.runs, runs);
    EXPECT_FALSE(work_pending(&r.work));
}

TEST_F(WorkqueueTest, OrderedWorkqueueRunsOneAtATimeInOrder) {
    workqueue_struct* wq = alloc_ordered_workqueue("ordered-test", 0);
    ASSERT_NE(wq, nullptr);
    std::vector<unsigned long> log;
    int concurrent = 0, max_concurrent = 0;
    std::vector<std::unique_ptr<Item>> items;
    for (unsigned long i = 0; i < 8; i++) {
        auto it = std::make_unique<Item>();
        it->sleep = ms_to_ktime(1);
        it->log = &log;
        it->tag = i;
        it->concurrent = &concurrent;
        it->max_concurrent = &max_concurrent;
        queue_work(wq, &it->work);
        items.push_back(std::move(it));
    }
    flush_workqueue(wq);
    EXPECT_EQ(max_concurrent, 1);
    EXPECT_EQ(log, (std::vector<unsigned long>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(ktime_get(), ms_to_ktime(8));
    destroy_workqueue(wq);
}

TEST_F(WorkqueueTest, UnboundWorkqueueRunsUpToMaxActiveAtOnce) {
    workqueue_struct* wq = alloc_workqueue("wide", WQ_UNBOUND, 3);
    int concurrent = 0, max_concurrent = 0;
    std::vector<std::unique_ptr<Item>> items;
    for (int i = 0; i < 9; i++) {
        auto it = std::make_unique<Item>();
        it->sleep = ms_to_ktime(10);
        it->concurrent = &concurrent;
        it->max_concurrent = &max_concurrent;
        queue_work(wq, &it->work);
        items.push_back(std::move(it));
    }
    flush_workqueue(wq);
    EXPECT_EQ(max_concurrent, 3);
    EXPECT_EQ(ktime_get(), ms_to_ktime(30));  // 9 items, 3 at a time, 10 ms each
    destroy_workqueue(wq);
}

TEST_F(WorkqueueTest, AnItemNeverRunsOnTwoWorkersAtOnce) {
    workqueue_struct* wq = alloc_workqueue("reentrant", WQ_UNBOUND, 4);
    Item it;
    int concurrent = 0, max_concurrent = 0;
    it.sleep = ms_to_ktime(5);
    it.concurrent = &concurrent;
    it.max_concurrent = &max_concurrent;
    it.signal_start = true;
    queue_work(wq, &it.work);
    wait_for_completion(&it.started);
    EXPECT_TRUE(queue_work(wq, &it.work));  // pending again while running
    flush_workqueue(wq);
    EXPECT_EQ(it.runs, 2);
    EXPECT_EQ(max_concurrent, 1);
    EXPECT_EQ(ktime_get(), ms_to_ktime(10));
    destroy_workqueue(wq);
}

TEST_F(WorkqueueTest, FlushWorkWaitsForTheQueuedInstance) {
    Item it;
    it.sleep = ms_to_ktime(7);
    EXPECT_FALSE(flush_work(&it.work));  // never queued
    queue_work(system_wq(), &it.work);
    EXPECT_TRUE(flush_work(&it.work));
    EXPECT_EQ(it.runs, 1);
    EXPECT_EQ(ktime_get(), ms_to_ktime(7));
}

TEST_F(WorkqueueTest, FlushDelayedWorkRunsItNow) {
    DItem d;
    queue_delayed_work(system_wq(), &d.dw, 1000);
    EXPECT_TRUE(flush_delayed_work(&d.dw));
    ASSERT_EQ(d.ran_at.size(), 1u);
    EXPECT_EQ(d.ran_at[0], 0);
}

TEST_F(WorkqueueTest, CurrentWorkIsTheRunningItem) {
    static work_struct* seen;
    seen = nullptr;
    work_struct w;
    INIT_WORK(&w, [](work_struct* self) { seen = current_work() == self ? self : nullptr; });
    queue_work(system_wq(), &w);
    advance_until_idle();
    EXPECT_EQ(seen, &w);
    EXPECT_EQ(current_work(), nullptr);
}

TEST_F(WorkqueueTest, DrainRunsSelfRequeueingChainsToTheEnd) {
    workqueue_struct* wq = alloc_workqueue("drain", 0, 1);
    Requeuer r;
    r.wq = wq;
    r.limit = 5;
    INIT_WORK(&r.work, Requeuer::fn);
    queue_work(wq, &r.work);
    drain_workqueue(wq);
    EXPECT_EQ(r.runs, 5);
    destroy_workqueue(wq);
}

TEST_F(WorkqueueTest, ForgottenWorkqueueIsALeak) {
    // The workqueue object is accounted like any kernel allocation: allocate and free it here,
    // and check the accounting saw it.
    long before = mem_counters().kmalloc_live;
    workqueue_struct* wq = alloc_workqueue("counted", 0, 0);
    EXPECT_EQ(mem_counters().kmalloc_live, before + 1);
    destroy_workqueue(wq);
    EXPECT_EQ(mem_counters().kmalloc_live, before);
}

TEST_F(WorkqueueTest, AnEndlessDelayNeverFiresAndDoesNotOverflow) {
    DItem d;
    EXPECT_TRUE(queue_delayed_work(system_wq(), &d.dw, MAX_SCHEDULE_TIMEOUT));
    EXPECT_TRUE(mod_delayed_work(system_wq(), &d.dw, ULONG_MAX));
    advance(3600 * NSEC_PER_SEC);
    EXPECT_TRUE(d.ran_at.empty());
    EXPECT_TRUE(cancel_delayed_work_sync(&d.dw));
}

// As the kernel's unbound pools: items queued before the woken idle worker runs all wake that
// worker, and a worker that takes an item while more wait wakes one more, so a burst of items
// on a pool of idle workers does not wake every worker for one to find the list empty.
TEST_F(WorkqueueTest, ABurstOfItemsWakesOneIdleWorkerAndChainsTheNext) {
    workqueue_struct* wq = alloc_workqueue("burst", WQ_UNBOUND, 0);
    ASSERT_NE(wq, nullptr);
    constexpr int kWorkers = 8;
    {  // eight sleeping items leave eight idle workers behind
        std::vector<Item> sleepers(kWorkers);
        for (Item& it : sleepers) {
            it.sleep = NSEC_PER_MSEC;
            queue_work(wq, &it.work);
        }
        advance_until_idle();
    }
    std::vector<Item> burst(kWorkers);
    const u64 switches = Runtime::get()->context_switches();
    for (Item& it : burst)
        queue_work(wq, &it.work);
    run_pending();
    for (const Item& it : burst)
        EXPECT_EQ(it.runs, 1);
    // The woken worker runs the burst (nothing in it sleeps), the one it chained finds it done,
    // and main resumes: three switches, where waking a worker per item made nine.
    EXPECT_LE(Runtime::get()->context_switches() - switches, 3u);
    destroy_workqueue(wq);
}
