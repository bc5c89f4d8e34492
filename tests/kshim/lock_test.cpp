// Mutex, spinlock, rw_semaphore and ww_mutex semantics in simulated time.
#include <gtest/gtest.h>

#include <vector>

#include "kernel_shim/mutex.h"
#include "kernel_shim/rwsem.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/ww_mutex.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Locks : public kshim::testing::SweepableKernelTest {};

TEST_F(Locks, MutexExcludesAndRecordsItsOwner) {
    Mutex m("test.m");
    int inside = 0, max_inside = 0, done = 0;
    std::vector<Task*> ts;
    for (int i = 0; i < 4; i++)
        ts.push_back(kthread_run(
            [&] {
                for (int k = 0; k < 3; k++) {
                    MutexGuard g(m);
                    EXPECT_EQ(m.owner(), current());
                    max_inside = std::max(max_inside, ++inside);
                    msleep(1);  // sleep while holding: others must wait
                    inside--;
                }
                done++;
                return 0;
            },
            "locker"));
    for (Task* t : ts)
        kthread_stop(t);
    EXPECT_EQ(done, 4);
    EXPECT_EQ(max_inside, 1);
    EXPECT_EQ(ktime_get(), ms_to_ktime(12));  // 12 critical sections of 1 ms, serialised
    EXPECT_FALSE(m.is_locked());
}

TEST_F(Locks, MutexTrylockFailsWhenHeld) {
    Mutex m;
    m.lock();
    bool got = true;
    Task* t = kthread_run(
        [&] {
            got = m.try_lock();
            return 0;
        },
        "try");
    kthread_stop(t);
    EXPECT_FALSE(got);
    m.unlock();
    EXPECT_TRUE(m.try_lock());
    m.unlock();
}

TEST_F(Locks, MutexUnlockByNonOwnerIsReported) {
    Mutex m;
    Task* t = kthread_run(
        [&] {
            m.unlock();
            return 0;
        },
        "stray-unlock");
    kthread_stop(t);
    auto reports = take_reports();
    ASSERT_EQ(reports.size(), 2u);
    EXPECT_NE(reports[0].title.find("does not own it"), std::string::npos);
    EXPECT_NE(reports[1].title.find("bad unlock balance"), std::string::npos);
}

TEST_F(Locks, DestroyingAHeldLockIsReported) {
    {
        Mutex m("short.lived");
        m.lock();
    }
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));  // held lock freed!
}

TEST_F(Locks, SpinlockMakesAtomicContext) {
    SpinLock l;
    EXPECT_FALSE(in_atomic());
    l.lock();
    EXPECT_TRUE(in_atomic());
    l.unlock();
    EXPECT_FALSE(in_atomic());
    unsigned long flags;
    spin_lock_irqsave(&l, flags);
    EXPECT_TRUE(spin_is_locked(&l));
    spin_unlock_irqrestore(&l, flags);
}

TEST_F(Locks, RwsemReadersShareWritersExclude) {
    RwSemaphore s("test.rwsem");
    int readers = 0, max_readers = 0, writer_saw_readers = -1;
    std::vector<Task*> ts;
    for (int i = 0; i < 3; i++)
        ts.push_back(kthread_run(
            [&] {
                s.down_read();
                max_readers = std::max(max_readers, ++readers);
                msleep(10);
                readers--;
                s.up_read();
                return 0;
            },
            "reader"));
    msleep(1);
    s.down_write();  // waits for all three readers
    writer_saw_readers = readers;
    s.up_write();
    for (Task* t : ts)
        kthread_stop(t);
    EXPECT_EQ(max_readers, 3);
    EXPECT_EQ(writer_saw_readers, 0);
    EXPECT_EQ(ktime_get(), ms_to_ktime(10));
}

TEST_F(Locks, RwsemQueuedWriterBlocksNewReaders) {
    RwSemaphore s;
    std::vector<int> order;
    s.down_read();
    Task* w = kthread_run(
        [&] {
            s.down_write();
            order.push_back(1);
            msleep(5);
            s.up_write();
            return 0;
        },
        "writer");
    msleep(1);  // the writer is queued now
    Task* r = kthread_run(
        [&] {
            s.down_read();  // must not overtake the queued writer
            order.push_back(2);
            s.up_read();
            return 0;
        },
        "late-reader");
    msleep(1);
    EXPECT_FALSE(s.down_read_trylock());
    s.up_read();
    kthread_stop(w);
    kthread_stop(r);
    EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST_F(Locks, RwsemDowngradeKeepsWritersOut) {
    RwSemaphore s;
    s.down_write();
    s.downgrade_write();
    EXPECT_TRUE(s.down_read_trylock());
    EXPECT_FALSE(s.down_write_trylock());
    s.up_read();
    s.up_read();
    EXPECT_TRUE(s.down_write_trylock());
    s.up_write();
}

static WwClass test_ww_class("test_ww_class");

TEST_F(Locks, WwMutexAlreadyHeldByContextReturnsEalready) {
    WwMutex a(&test_ww_class);
    WwAcquireCtx ctx;
    ww_acquire_init(&ctx, &test_ww_class);
    EXPECT_EQ(a.lock(&ctx), 0);
    EXPECT_EQ(a.lock(&ctx), -EALREADY);
    EXPECT_EQ(a.owner_ctx(), &ctx);
    a.unlock();
    ww_acquire_fini(&ctx);
}

// Locks all of `order` with back-off, as drm_exec does, counting the back-offs.
static int lock_all(std::vector<WwMutex*> order, int* backoffs) {
    WwAcquireCtx ctx;
    ww_acquire_init(&ctx, &test_ww_class);
    std::vector<WwMutex*> held;
    WwMutex* contended = nullptr;
    for (;;) {
        bool retry = false;
        if (contended) {
            contended->lock_slow(&ctx);
            held.push_back(contended);
        }
        for (WwMutex* m : order) {
            if (m == contended)
                continue;
            int r = m->lock(&ctx);
            if (r == -EDEADLK) {
                for (WwMutex* h : held)
                    h->unlock();
                held.clear();
                contended = m;
                ++*backoffs;
                retry = true;
                break;
            }
            EXPECT_EQ(r, 0);
            held.push_back(m);
            msleep(1);  // widen the window so both contexts hold something
        }
        if (!retry)
            break;
    }
    ww_acquire_done(&ctx);
    msleep(1);
    for (WwMutex* h : held)
        h->unlock();
    ww_acquire_fini(&ctx);
    return static_cast<int>(held.size());
}

TEST_F(Locks, WwMutexOppositeOrdersBothCompleteWithBackoff) {
    WwMutex a(&test_ww_class), b(&test_ww_class), c(&test_ww_class);
    int backoffs = 0, got1 = 0, got2 = 0;
    Task* t1 = kthread_run(
        [&] {
            got1 = lock_all({&a, &b, &c}, &backoffs);
            return 0;
        },
        "ctx1");
    Task* t2 = kthread_run(
        [&] {
            got2 = lock_all({&c, &b, &a}, &backoffs);
            return 0;
        },
        "ctx2");
    kthread_stop(t1);
    kthread_stop(t2);
    EXPECT_EQ(got1, 3);
    EXPECT_EQ(got2, 3);
    EXPECT_GE(backoffs, 1);  // the younger context had to back off at least once
    EXPECT_FALSE(a.is_locked() || b.is_locked() || c.is_locked());
}

TEST_F(Locks, WwMutexYoungerContextDiesOlderWaits) {
    WwMutex a(&test_ww_class), b(&test_ww_class);
    WwAcquireCtx old_ctx;
    ww_acquire_init(&old_ctx, &test_ww_class);  // stamped first: older
    ASSERT_EQ(a.lock(&old_ctx), 0);
    int young_result = 1;
    WwMutex* contending = nullptr;
    Task* t = kthread_run(
        [&] {
            WwAcquireCtx young_ctx;
            ww_acquire_init(&young_ctx, &test_ww_class);
            EXPECT_EQ(b.lock(&young_ctx), 0);
            young_result = a.lock(&young_ctx);  // holds b, wants a held by the older context
            contending = young_ctx.contending_lock;
            b.unlock();
            ww_acquire_fini(&young_ctx);
            return 0;
        },
        "young");
    kthread_stop(t);
    EXPECT_EQ(young_result, -EDEADLK);
    EXPECT_EQ(contending, &a);
    // The older context, by contrast, waits for b instead of dying.
    WwMutex c(&test_ww_class);
    bool old_waited = false;
    Task* holder = kthread_run(
        [&] {
            WwAcquireCtx younger;
            ww_acquire_init(&younger, &test_ww_class);
            EXPECT_EQ(c.lock(&younger), 0);
            msleep(5);
            c.unlock();
            ww_acquire_fini(&younger);
            return 0;
        },
        "younger-holder");
    msleep(1);
    ktime_t t0 = ktime_get();
    EXPECT_EQ(c.lock(&old_ctx), 0);
    old_waited = ktime_get() - t0 == ms_to_ktime(4);
    EXPECT_TRUE(old_waited);
    c.unlock();
    kthread_stop(holder);
    a.unlock();
    ww_acquire_fini(&old_ctx);
}
