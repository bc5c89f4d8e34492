// lockdep-lite: inversions are reported even when no deadlock happens; might_sleep and
// assert_held really check.
#include <gtest/gtest.h>

#include "kernel_shim/completion.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Lockdep : public kshim::testing::KernelTest {};

TEST_F(Lockdep, AbBaOrderIsReportedWithoutADeadlock) {
    Mutex a("lock_a"), b("lock_b");
    // One task takes A then B, later another takes B then A: never at the same time.
    Task* t1 = kthread_run(
        [&] {
            MutexGuard ga(a);
            MutexGuard gb(b);
            return 0;
        },
        "ab");
    kthread_stop(t1);
    EXPECT_EQ(pending_report_count(), 0u);
    Task* t2 = kthread_run(
        [&] {
            MutexGuard gb(b);
            MutexGuard ga(a);
            return 0;
        },
        "ba");
    kthread_stop(t2);
    auto reports = take_reports();
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, ReportKind::LockOrder);
    EXPECT_NE(reports[0].title.find("lock_b -> lock_a"), std::string::npos) << reports[0].title;
    // Both chains, with source locations, are in the report.
    EXPECT_NE(reports[0].detail.find("ab: lock_a"), std::string::npos) << reports[0].detail;
    EXPECT_NE(reports[0].detail.find("ba: lock_b"), std::string::npos) << reports[0].detail;
    EXPECT_NE(reports[0].detail.find("lockdep_test.cpp:"), std::string::npos) << reports[0].detail;
}

TEST_F(Lockdep, ThreeLockCycleIsReported) {
    Mutex a("c_a"), b("c_b"), c("c_c");
    {
        MutexGuard ga(a);
        MutexGuard gb(b);
    }
    {
        MutexGuard gb(b);
        MutexGuard gc(c);
    }
    EXPECT_EQ(pending_report_count(), 0u);
    {
        MutexGuard gc(c);
        MutexGuard ga(a);
    }
    EXPECT_TRUE(expect_report(ReportKind::LockOrder));
}

TEST_F(Lockdep, ClassesAreKeyedByConstructionSiteNotInstance) {
    struct Obj {
        Mutex lock{"obj.lock"};
    };
    Obj x, y;
    Mutex outer("outer");
    {
        MutexGuard g(outer);
        MutexGuard gx(x.lock);
    }
    {
        MutexGuard gy(y.lock);  // another instance of the same class
        MutexGuard g(outer);
    }
    EXPECT_TRUE(expect_report(ReportKind::LockOrder));
}

TEST_F(Lockdep, RecursiveLockingOfOneClassIsReportedUnlessNested) {
    struct Obj {
        Mutex lock{"node.lock"};
    };
    Obj parent, child;
    parent.lock.lock();
    child.lock.lock_nested(1);  // annotated: fine
    child.lock.unlock();
    EXPECT_EQ(pending_report_count(), 0u);
    child.lock.try_lock();  // trylock cannot deadlock: fine
    child.lock.unlock();
    EXPECT_EQ(pending_report_count(), 0u);
    parent.lock.unlock();
}

TEST_F(Lockdep, MightSleepUnderASpinlockIsReported) {
    SpinLock s("test.spin");
    Mutex m;
    s.lock();
    m.lock();  // a mutex may sleep
    m.unlock();
    s.unlock();
    auto reports = take_reports();
    ASSERT_GE(reports.size(), 1u);
    EXPECT_EQ(reports[0].kind, ReportKind::MightSleep);
    EXPECT_NE(reports[0].title.find("sleeping function called from invalid context"), std::string::npos);
    EXPECT_NE(reports[0].detail.find("test.spin"), std::string::npos) << reports[0].detail;
}

TEST_F(Lockdep, GfpKernelAllocationUnderSpinlockIsReported) {
    SpinLock s;
    s.lock();
    void* p = kmalloc(64, GFP_KERNEL);
    void* q = kmalloc(64, GFP_NOWAIT);  // fine in atomic context
    s.unlock();
    kfree(p);
    kfree(q);
    EXPECT_TRUE(expect_report(ReportKind::MightSleep));
    EXPECT_FALSE(expect_report(ReportKind::MightSleep));
}

TEST_F(Lockdep, AssertHeldChecksTheCurrentTask) {
    Mutex m("asserted");
    lockdep_assert_not_held(&m);
    m.lock();
    lockdep_assert_held(&m);
    EXPECT_EQ(pending_report_count(), 0u);
    Task* t = kthread_run(
        [&] {
            lockdep_assert_held(&m);  // held, but by main, not by this task
            return 0;
        },
        "other");
    kthread_stop(t);
    m.unlock();
    lockdep_assert_held(&m);
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));
}

TEST_F(Lockdep, TaskExitingWithALockHeldIsReported) {
    Mutex m("leaked.lock");
    Task* t = kthread_run(
        [&] {
            m.lock();
            return 0;
        },
        "forgetful");
    kthread_stop(t);
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));
}

namespace {
Mutex* g_flush_lock;
bool g_work_takes_lock;
void maybe_takes_lock(work_struct*) {
    if (g_work_takes_lock)
        MutexGuard g(*g_flush_lock);
}
}  // namespace

TEST_F(Lockdep, FlushingWorkUnderALockTheWorkTakesIsReported) {
    Mutex m("flush.lock");
    g_flush_lock = &m;
    g_work_takes_lock = true;
    work_struct w;
    INIT_WORK(&w, maybe_takes_lock);
    workqueue_struct* wq = alloc_ordered_workqueue("flush-order", 0);
    queue_work(wq, &w);
    flush_workqueue(wq);        // ran once, under its map: work -> flush.lock recorded
    g_work_takes_lock = false;  // so the next run cannot really deadlock

    // Keep w pending behind a blocker, whatever the interleaving, until the flush waits.
    static completion release;
    init_completion(&release);
    work_struct blocker;
    INIT_WORK(&blocker, [](work_struct*) { wait_for_completion(&release); });
    queue_work(wq, &blocker);
    queue_work(wq, &w);
    Task* releaser = kthread_run(
        [] {
            msleep(1);
            complete(&release);
            return 0;
        },
        "releaser");
    {
        MutexGuard g(m);
        EXPECT_TRUE(flush_work(&w));  // flush.lock -> work: the inversion
    }
    kthread_stop(releaser);
    destroy_workqueue(wq);
    // Against the work's map and against its workqueue's, as the kernel reports both.
    EXPECT_TRUE(expect_report(ReportKind::LockOrder));
    EXPECT_TRUE(expect_report(ReportKind::LockOrder));
}

TEST_F(Lockdep, FlushingIdleWorkUnderALockIsNotReported) {
    Mutex m("flush.idle.lock");
    g_flush_lock = &m;
    g_work_takes_lock = true;
    work_struct w;
    INIT_WORK(&w, maybe_takes_lock);
    queue_work(system_wq(), &w);
    advance_until_idle();
    {
        MutexGuard g(m);
        EXPECT_FALSE(flush_work(&w));  // nothing to wait for: no dependency
    }
    EXPECT_EQ(pending_report_count(), 0u);
}
