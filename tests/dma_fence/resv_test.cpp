// Behaviours of drivers/dma-buf/st-dma-resv.c and what drm_gpuvm / drm_sched's implicit
// dependencies rely on.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "kernel_shim/dma-buf/dma-fence-array.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/sched.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class Resv : public kshim::testing::KernelTest {
protected:
    void lock() { ASSERT_EQ(dma_resv_lock(&obj_, nullptr), 0); }
    void unlock() { dma_resv_unlock(&obj_); }
    // Adds a fresh fence with `usage` (locks around it); returns the caller's reference.
    dma_fence* add(dma_resv_usage usage, u64 context = 0, u64 seqno = 1) {
        if (!context)
            context = dma_fence_context_alloc(1);
        dma_fence* f = mock_fence(context, seqno);
        lock();
        EXPECT_EQ(dma_resv_reserve_fences(&obj_, 1), 0);
        dma_resv_add_fence(&obj_, f, usage);
        unlock();
        return f;
    }
    std::set<dma_fence*> unlocked(dma_resv_usage usage) {
        std::set<dma_fence*> s;
        dma_resv_iter cursor;
        dma_fence* f;
        dma_resv_iter_begin(&cursor, &obj_, usage);
        dma_resv_for_each_fence_unlocked(&cursor, f) s.insert(f);
        dma_resv_iter_end(&cursor);
        return s;
    }
    void TearDown() override {
        dma_resv_fini(&obj_);
        KernelTest::TearDown();
    }
    dma_resv obj_;
};

static const dma_resv_usage kUsages[] = {DMA_RESV_USAGE_KERNEL, DMA_RESV_USAGE_WRITE, DMA_RESV_USAGE_READ,
                                         DMA_RESV_USAGE_BOOKKEEP};

TEST_F(Resv, Sanity) {
    WwAcquireCtx ctx;
    ww_acquire_init(&ctx, &reservation_ww_class);
    ASSERT_EQ(dma_resv_lock(&obj_, &ctx), 0);
    EXPECT_TRUE(dma_resv_is_locked(&obj_));
    EXPECT_EQ(dma_resv_locking_ctx(&obj_), &ctx);
    EXPECT_EQ(dma_resv_lock(&obj_, &ctx), -EALREADY);
    dma_resv_unlock(&obj_);
    ww_acquire_fini(&ctx);
    EXPECT_TRUE(dma_resv_trylock(&obj_));
    EXPECT_FALSE(dma_resv_trylock(&obj_));
    dma_resv_unlock(&obj_);
}

TEST_F(Resv, UsageRwRule) {
    EXPECT_EQ(dma_resv_usage_rw(true), DMA_RESV_USAGE_READ);
    EXPECT_EQ(dma_resv_usage_rw(false), DMA_RESV_USAGE_WRITE);
}

class ResvUsage : public Resv, public ::testing::WithParamInterface<dma_resv_usage> {};

TEST_P(ResvUsage, TestSignaledFollowsTheFence) {
    dma_resv_usage usage = GetParam();
    dma_fence* f = add(usage);
    for (dma_resv_usage u : kUsages)
        EXPECT_EQ(dma_resv_test_signaled(&obj_, u), u < usage) << u;
    dma_fence_signal(f);
    for (dma_resv_usage u : kUsages)
        EXPECT_TRUE(dma_resv_test_signaled(&obj_, u)) << u;
    dma_fence_put(f);
}

TEST_P(ResvUsage, LockedIteratorSeesFenceForIncludingUsages) {
    dma_resv_usage usage = GetParam();
    dma_fence* f = add(usage);
    dma_fence_signal(f);  // the locked walk includes signalled fences
    lock();
    for (dma_resv_usage u : kUsages) {
        dma_resv_iter cursor;
        dma_fence* it;
        int found = 0;
        dma_resv_for_each_fence(&cursor, &obj_, u, it) {
            EXPECT_EQ(it, f);
            EXPECT_EQ(dma_resv_iter_usage(&cursor), usage);
            found++;
        }
        EXPECT_EQ(found, u >= usage ? 1 : 0) << u;
    }
    unlock();
    dma_fence_put(f);
}

TEST_P(ResvUsage, UnlockedIteratorSkipsSignalled) {
    dma_resv_usage usage = GetParam();
    dma_fence* f = add(usage);
    for (dma_resv_usage u : kUsages)
        EXPECT_EQ(unlocked(u), u >= usage ? std::set<dma_fence*>{f} : std::set<dma_fence*>{}) << u;
    dma_fence_signal(f);
    EXPECT_TRUE(unlocked(DMA_RESV_USAGE_BOOKKEEP).empty());
    dma_fence_put(f);
}

TEST_P(ResvUsage, GetFences) {
    dma_resv_usage usage = GetParam();
    dma_fence* f = add(usage);
    for (dma_resv_usage u : kUsages) {
        unsigned n = 99;
        dma_fence** fences = nullptr;
        ASSERT_EQ(dma_resv_get_fences(&obj_, u, &n, &fences), 0);
        EXPECT_EQ(n, u >= usage ? 1u : 0u);
        if (n) {
            EXPECT_EQ(fences[0], f);
        }
        for (unsigned i = 0; i < n; i++)
            dma_fence_put(fences[i]);
        kfree(fences);
    }
    dma_fence_signal(f);
    dma_fence_put(f);
}

static std::string usage_name(const ::testing::TestParamInfo<dma_resv_usage>& info) {
    static const char* names[] = {"Kernel", "Write", "Read", "Bookkeep"};
    return names[info.param];
}
INSTANTIATE_TEST_SUITE_P(Usages, ResvUsage, ::testing::ValuesIn(kUsages), usage_name);

TEST_F(Resv, AddFenceReplacesSameContext) {
    u64 ctx = dma_fence_context_alloc(1);
    dma_fence* f1 = add(DMA_RESV_USAGE_READ, ctx, 1);
    dma_fence* f2 = add(DMA_RESV_USAGE_READ, ctx, 2);
    EXPECT_EQ(unlocked(DMA_RESV_USAGE_BOOKKEEP), (std::set<dma_fence*>{f2}));
    EXPECT_EQ(kref_read(&f1->refcount), 1u);  // the object dropped its reference
    // A stronger usage replaces a weaker one of the same context, not the other way round.
    dma_fence* f3 = add(DMA_RESV_USAGE_WRITE, ctx, 3);
    EXPECT_EQ(unlocked(DMA_RESV_USAGE_BOOKKEEP), (std::set<dma_fence*>{f3}));
    dma_fence* f4 = add(DMA_RESV_USAGE_BOOKKEEP, ctx, 4);
    EXPECT_EQ(unlocked(DMA_RESV_USAGE_BOOKKEEP), (std::set<dma_fence*>{f3, f4}));
    EXPECT_EQ(unlocked(DMA_RESV_USAGE_WRITE), (std::set<dma_fence*>{f3}));
    for (dma_fence* f : {f1, f2, f3, f4}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(Resv, AddFenceReusesSignalledSlots) {
    dma_fence* f1 = add(DMA_RESV_USAGE_READ);
    dma_fence_signal(f1);
    dma_fence* f2 = mock_fence(dma_fence_context_alloc(1), 1);
    lock();
    // No reserve: the signalled fence's slot is reused (the upstream replace path).
    dma_resv_add_fence(&obj_, f2, DMA_RESV_USAGE_WRITE);
    unlock();
    EXPECT_EQ(pending_report_count(), 0u);
    EXPECT_EQ(unlocked(DMA_RESV_USAGE_BOOKKEEP), (std::set<dma_fence*>{f2}));
    dma_fence_signal(f2);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(Resv, AddFenceWithoutReserveWarns) {
    dma_fence* f1 = add(DMA_RESV_USAGE_READ);
    dma_fence* f2 = mock_fence(dma_fence_context_alloc(1), 1);
    lock();
    dma_resv_add_fence(&obj_, f2, DMA_RESV_USAGE_READ);  // the reservation ended with the unlock
    unlock();
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    EXPECT_EQ(unlocked(DMA_RESV_USAGE_BOOKKEEP), (std::set<dma_fence*>{f1}));
    EXPECT_EQ(kref_read(&f2->refcount), 1u);
    for (dma_fence* f : {f1, f2}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(Resv, AddFenceNotLockedIsReported) {
    dma_fence* f = mock_fence(dma_fence_context_alloc(1), 1);
    lock();
    ASSERT_EQ(dma_resv_reserve_fences(&obj_, 1), 0);
    unlock();
    dma_resv_add_fence(&obj_, f, DMA_RESV_USAGE_READ);
#if KSHIM_DEBUG_CHECKS
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));
    EXPECT_TRUE(expect_report(ReportKind::Warn));  // and the reservation ended with the unlock
#endif
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(Resv, AddContainerWarns) {
    dma_fence* f = mock_fence();
    auto** members = static_cast<dma_fence**>(kmalloc(sizeof(dma_fence*), GFP_KERNEL));
    members[0] = dma_fence_get(f);
    dma_fence_array* a = dma_fence_array_create(1, members, dma_fence_context_alloc(1), 1, false);
    lock();
    ASSERT_EQ(dma_resv_reserve_fences(&obj_, 1), 0);
    dma_resv_add_fence(&obj_, &a->base, DMA_RESV_USAGE_READ);
    unlock();
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    dma_fence_signal(f);
    dma_fence_put(&a->base);
    dma_fence_put(f);
}

TEST_F(Resv, ReserveGrowsAndDropsSignalled) {
    std::vector<dma_fence*> fences;
    lock();
    ASSERT_EQ(dma_resv_reserve_fences(&obj_, 2), 0);
    EXPECT_EQ(obj_.fences->max_fences, 4u);
    for (int i = 0; i < 4; i++) {
        if (i >= 2) {
            ASSERT_EQ(dma_resv_reserve_fences(&obj_, 1), 0);
        }
        fences.push_back(mock_fence(dma_fence_context_alloc(1), 1));
        dma_resv_add_fence(&obj_, fences.back(), DMA_RESV_USAGE_BOOKKEEP);
    }
    dma_fence_signal(fences[0]);
    dma_fence_signal(fences[2]);
    ASSERT_EQ(dma_resv_reserve_fences(&obj_, 8), 0);
    EXPECT_GE(obj_.fences->max_fences, 10u);
    EXPECT_EQ(obj_.fences->num_fences, 2u);  // signalled fences were dropped on the copy
    EXPECT_EQ(kref_read(&fences[0]->refcount), 1u);
    unlock();
    for (dma_fence* f : fences) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(Resv, ReserveWithoutLockIsReported) {
#if KSHIM_DEBUG_CHECKS
    ASSERT_EQ(dma_resv_reserve_fences(&obj_, 1), 0);
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));
#endif
}

TEST_F(Resv, ReplaceFences) {
    u64 ctx = dma_fence_context_alloc(1);
    dma_fence* f1 = add(DMA_RESV_USAGE_BOOKKEEP, ctx, 1);
    dma_fence* other = add(DMA_RESV_USAGE_READ);
    dma_fence* repl = dma_fence_get_stub();
    lock();
    dma_resv_replace_fences(&obj_, ctx, repl, DMA_RESV_USAGE_BOOKKEEP);
    dma_resv_iter cursor;
    dma_fence* it;
    std::set<dma_fence*> seen;
    dma_resv_for_each_fence(&cursor, &obj_, DMA_RESV_USAGE_BOOKKEEP, it) seen.insert(it);
    unlock();
    EXPECT_EQ(seen, (std::set<dma_fence*>{repl, other}));
    EXPECT_EQ(kref_read(&f1->refcount), 1u);
    for (dma_fence* f : {f1, other}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
    dma_fence_put(repl);
}

TEST_F(Resv, CopyFences) {
    dma_fence* f1 = add(DMA_RESV_USAGE_WRITE);
    dma_fence* f2 = add(DMA_RESV_USAGE_BOOKKEEP);
    dma_fence* gone = add(DMA_RESV_USAGE_READ);
    dma_fence_signal(gone);
    dma_resv dst;
    ASSERT_EQ(dma_resv_lock(&dst, nullptr), 0);
    ASSERT_EQ(dma_resv_copy_fences(&dst, &obj_), 0);
    dma_resv_iter cursor;
    dma_fence* it;
    std::set<dma_fence*> seen;
    dma_resv_for_each_fence(&cursor, &dst, DMA_RESV_USAGE_BOOKKEEP, it) {
        seen.insert(it);
        if (it == f1) {
            EXPECT_EQ(dma_resv_iter_usage(&cursor), DMA_RESV_USAGE_WRITE);
        }
    }
    dma_resv_unlock(&dst);
    EXPECT_EQ(seen, (std::set<dma_fence*>{f1, f2}));
    dma_resv_fini(&dst);
    for (dma_fence* f : {f1, f2, gone}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(Resv, GetSingleton) {
    dma_fence* out = reinterpret_cast<dma_fence*>(1);
    ASSERT_EQ(dma_resv_get_singleton(&obj_, DMA_RESV_USAGE_BOOKKEEP, &out), 0);
    EXPECT_EQ(out, nullptr);

    dma_fence* f1 = add(DMA_RESV_USAGE_WRITE);
    ASSERT_EQ(dma_resv_get_singleton(&obj_, DMA_RESV_USAGE_BOOKKEEP, &out), 0);
    EXPECT_EQ(out, f1);
    dma_fence_put(out);

    dma_fence* f2 = add(DMA_RESV_USAGE_READ);
    ASSERT_EQ(dma_resv_get_singleton(&obj_, DMA_RESV_USAGE_READ, &out), 0);
    ASSERT_TRUE(dma_fence_is_array(out));
    dma_fence_signal(f1);
    EXPECT_FALSE(dma_fence_is_signaled(out));
    dma_fence_signal(f2);
    EXPECT_TRUE(dma_fence_is_signaled(out));
    dma_fence_put(out);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(Resv, WaitTimeout) {
    dma_fence* w = add(DMA_RESV_USAGE_WRITE);
    dma_fence* r = add(DMA_RESV_USAGE_READ);
    // A reader waits for the writer only.
    Task* t = kthread_run(
        [w] {
            msleep(8);
            dma_fence_signal(w);
            return 0;
        },
        "signal_writer");
    long ret = dma_resv_wait_timeout(&obj_, dma_resv_usage_rw(false), false, msecs_to_jiffies(1000));
    EXPECT_GT(ret, 0);
    EXPECT_TRUE(dma_fence_is_signaled(w));
    EXPECT_FALSE(dma_fence_is_signaled(r));
    kthread_stop(t);
    // A writer also waits for the reader: times out.
    EXPECT_EQ(dma_resv_wait_timeout(&obj_, dma_resv_usage_rw(true), false, 5), 0);
    EXPECT_EQ(dma_resv_wait_timeout(&obj_, DMA_RESV_USAGE_READ, false, 0), 0);
    dma_fence_signal(r);
    EXPECT_EQ(dma_resv_wait_timeout(&obj_, DMA_RESV_USAGE_BOOKKEEP, false, 0), 1);
    EXPECT_EQ(dma_resv_wait_timeout(&obj_, DMA_RESV_USAGE_BOOKKEEP, false, 30), 30);
    dma_fence_put(w);
    dma_fence_put(r);
}

TEST_F(Resv, UnlockedIteratorRestartsWhenListReplaced) {
    dma_fence* f1 = add(DMA_RESV_USAGE_READ);
    dma_fence* f2 = add(DMA_RESV_USAGE_READ);
    dma_resv_iter cursor;
    dma_resv_iter_begin(&cursor, &obj_, DMA_RESV_USAGE_BOOKKEEP);
    dma_fence* first = dma_resv_iter_first_unlocked(&cursor);
    ASSERT_NE(first, nullptr);
    EXPECT_TRUE(dma_resv_iter_is_restarted(&cursor));
    // A writer reallocates the list between two steps.
    lock();
    ASSERT_EQ(dma_resv_reserve_fences(&obj_, 16), 0);
    unlock();
    dma_fence* next = dma_resv_iter_next_unlocked(&cursor);
    EXPECT_TRUE(dma_resv_iter_is_restarted(&cursor));
    EXPECT_EQ(next, first);  // started over from the first entry
    int more = 0;
    while (dma_resv_iter_next_unlocked(&cursor)) {
        EXPECT_FALSE(dma_resv_iter_is_restarted(&cursor));
        more++;
    }
    EXPECT_EQ(more, 1);
    dma_resv_iter_end(&cursor);
    for (dma_fence* f : {f1, f2}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(Resv, AssertHeld) {
#if KSHIM_DEBUG_CHECKS
    dma_resv_assert_held(&obj_);
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));
    lock();
    dma_resv_assert_held(&obj_);
    EXPECT_TRUE(dma_resv_held(&obj_));
    unlock();
    EXPECT_FALSE(expect_report(ReportKind::LockUsage));
#endif
}

TEST_F(Resv, WwBackoffBetweenTwoObjects) {
    // Two tasks lock two objects in opposite orders; wait-die makes one back off with
    // -EDEADLK and both finish.
    dma_resv other;
    int done = 0;
    int backoffs = 0;
    auto locker = [&](dma_resv* a, dma_resv* b) {
        WwAcquireCtx ctx;
        ww_acquire_init(&ctx, &reservation_ww_class);
        dma_resv* objs[2] = {a, b};
        dma_resv* contended = nullptr;
        for (;;) {
            std::vector<dma_resv*> held;
            if (contended) {
                dma_resv_lock_slow(contended, &ctx);
                held.push_back(contended);
            }
            dma_resv* failed = nullptr;
            for (dma_resv* o : objs) {
                if (o == contended)
                    continue;
                if (dma_resv_lock(o, &ctx) == -EDEADLK) {
                    failed = o;
                    break;
                }
                held.push_back(o);
                msleep(1);
            }
            if (!failed)
                break;
            for (dma_resv* h : held)
                dma_resv_unlock(h);
            contended = failed;
            backoffs++;
        }
        ww_acquire_done(&ctx);
        done++;
        dma_resv_unlock(a);
        dma_resv_unlock(b);
        ww_acquire_fini(&ctx);
        return 0;
    };
    Task* t1 = kthread_run([&] { return locker(&obj_, &other); }, "t1");
    Task* t2 = kthread_run([&] { return locker(&other, &obj_); }, "t2");
    kthread_stop(t1);
    kthread_stop(t2);
    EXPECT_EQ(done, 2);
    EXPECT_GE(backoffs, 1);
    dma_resv_fini(&other);
}
