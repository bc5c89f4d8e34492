// Behaviours of drivers/dma-buf/st-dma-fence.c and what drm_sched / syncobj rely on.
#include <gtest/gtest.h>

#include <string>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/trace.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class Fence : public kshim::testing::KernelTest {};

TEST_F(Fence, SignalOnceSecondSignalFails) {
    dma_fence* f = mock_fence();
    EXPECT_FALSE(dma_fence_is_signaled(f));
    EXPECT_EQ(dma_fence_signal(f), 0);
    EXPECT_TRUE(dma_fence_is_signaled(f));
    EXPECT_EQ(dma_fence_signal(f), -EINVAL);
    spin_lock(f->lock);
    EXPECT_EQ(dma_fence_signal_locked(f), -EINVAL);
    spin_unlock(f->lock);
    dma_fence_put(f);
}

TEST_F(Fence, SignalRecordsTimestamp) {
    advance(3 * NSEC_PER_MSEC);
    dma_fence* f = mock_fence();
    ktime_t before = ktime_get();
    EXPECT_FALSE(dma_fence_test_flag(f, DMA_FENCE_FLAG_TIMESTAMP_BIT));
    dma_fence_signal(f);
    EXPECT_TRUE(dma_fence_test_flag(f, DMA_FENCE_FLAG_TIMESTAMP_BIT));
    EXPECT_EQ(dma_fence_timestamp(f), before);
    EXPECT_GT(dma_fence_timestamp(f), 0);
    dma_fence_put(f);
}

TEST_F(Fence, SignalTimestampUsesCallersTime) {
    dma_fence* f = mock_fence();
    EXPECT_EQ(dma_fence_signal_timestamp(f, 12345), 0);
    EXPECT_EQ(dma_fence_timestamp(f), 12345);
    EXPECT_EQ(dma_fence_signal_timestamp(f, 99), -EINVAL);
    EXPECT_EQ(dma_fence_timestamp(f), 12345);
    dma_fence_put(f);
}

TEST_F(Fence, TimestampOfUnsignalledFenceWarns) {
    dma_fence* f = mock_fence();
    dma_fence_timestamp(f);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(Fence, CallbackRunsOnSignalWithLockHeld) {
    dma_fence* f = mock_fence();
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), 0);
    EXPECT_TRUE(dma_fence_cb_pending(&cb.cb));
    EXPECT_EQ(cb.runs, 0);
    dma_fence_signal(f);
    EXPECT_EQ(cb.runs, 1);
    EXPECT_TRUE(cb.lock_held);
    EXPECT_FALSE(dma_fence_cb_pending(&cb.cb));
    dma_fence_signal(f);
    EXPECT_EQ(cb.runs, 1);
    dma_fence_put(f);
}

TEST_F(Fence, CallbacksRunInOrderOfAddition) {
    dma_fence* f = mock_fence();
    static std::string order;
    order.clear();
    struct Cb {
        dma_fence_cb cb;
        char tag;
    } a{{}, 'a'}, b{{}, 'b'}, c{{}, 'c'};
    auto fn = [](dma_fence*, dma_fence_cb* cb) { order += container_of(cb, Cb, cb)->tag; };
    dma_fence_add_callback(f, &a.cb, fn);
    dma_fence_add_callback(f, &b.cb, fn);
    dma_fence_add_callback(f, &c.cb, fn);
    dma_fence_signal(f);
    EXPECT_EQ(order, "abc");
    dma_fence_put(f);
}

TEST_F(Fence, LateAddCallbackFailsWithENOENT) {
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    CountingCb cb;
    EXPECT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), -ENOENT);
    EXPECT_EQ(cb.runs, 0);
    EXPECT_FALSE(dma_fence_cb_pending(&cb.cb));
    dma_fence_put(f);
}

TEST_F(Fence, RemoveCallbackBeforeSignalPreventsIt) {
    dma_fence* f = mock_fence();
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), 0);
    EXPECT_TRUE(dma_fence_remove_callback(f, &cb.cb));
    dma_fence_signal(f);
    EXPECT_EQ(cb.runs, 0);
    dma_fence_put(f);
}

TEST_F(Fence, LateRemoveCallbackReportsFalse) {
    dma_fence* f = mock_fence();
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), 0);
    dma_fence_signal(f);
    EXPECT_EQ(cb.runs, 1);
    EXPECT_FALSE(dma_fence_remove_callback(f, &cb.cb));
    dma_fence_put(f);
}

TEST_F(Fence, CallbackNestingSameLockClassIsReported) {
    // Why chains and arrays defer work: taking a second fence lock of the same class inside
    // a callback is reported, as lockdep does upstream.
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    struct Cb {
        dma_fence_cb cb;
        dma_fence* other;
    } c{{}, f2};
    dma_fence_add_callback(f1, &c.cb,
                           [](dma_fence*, dma_fence_cb* cb) { dma_fence_signal(container_of(cb, Cb, cb)->other); });
    dma_fence_signal(f1);
#if KSHIM_DEBUG_CHECKS
    EXPECT_TRUE(expect_report(ReportKind::LockUsage));
#endif
    EXPECT_TRUE(dma_fence_is_signaled(f2));
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(Fence, CallbackMayReaddItselfElsewhere) {
    // A callback may arm itself on another fence (what dma_fence_chain does). The second
    // fence has a lock of another class: nesting two locks of one class is a lockdep report.
    dma_fence* f1 = mock_fence();
    SpinLock other_lock("other_fence_lock");
    auto* m2 = knew<MockFence>(GFP_KERNEL);
    dma_fence_init(&m2->base, &mock_ops, &other_lock, 0, 0);
    dma_fence* f2 = &m2->base;
    struct Cb {
        dma_fence_cb cb;
        dma_fence* next;
        int runs = 0;
    } c{{}, f2};
    auto fn = [](dma_fence*, dma_fence_cb* cb) {
        auto* self = container_of(cb, Cb, cb);
        self->runs++;
        if (self->next) {
            dma_fence* n = self->next;
            self->next = nullptr;
            EXPECT_EQ(dma_fence_add_callback(n, cb, cb->func), 0);
        }
    };
    ASSERT_EQ(dma_fence_add_callback(f1, &c.cb, fn), 0);
    dma_fence_signal(f1);
    EXPECT_EQ(c.runs, 1);
    dma_fence_signal(f2);
    EXPECT_EQ(c.runs, 2);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(Fence, StatusAndErrorSetBeforeSignal) {
    dma_fence* f = mock_fence();
    EXPECT_EQ(dma_fence_get_status(f), 0);
    dma_fence_set_error(f, -EIO);
    EXPECT_EQ(dma_fence_get_status(f), 0);  // not signalled yet: pending
    dma_fence_signal(f);
    EXPECT_EQ(dma_fence_get_status(f), -EIO);
    EXPECT_EQ(f->error, -EIO);
    dma_fence_put(f);

    dma_fence* ok = mock_fence();
    dma_fence_signal(ok);
    EXPECT_EQ(dma_fence_get_status(ok), 1);
    dma_fence_put(ok);
}

TEST_F(Fence, ErrorVisibleToCallbacks) {
    dma_fence* f = mock_fence();
    struct Cb {
        dma_fence_cb cb;
        int seen = 0;
    } c;
    dma_fence_add_callback(f, &c.cb, [](dma_fence* fence, dma_fence_cb* cb) {
        container_of(cb, Cb, cb)->seen = dma_fence_get_status_locked(fence);
    });
    dma_fence_set_error(f, -ECANCELED);
    dma_fence_signal(f);
    EXPECT_EQ(c.seen, -ECANCELED);
    dma_fence_put(f);
}

TEST_F(Fence, SetErrorAfterSignalWarns) {
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    dma_fence_set_error(f, -EIO);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    dma_fence_put(f);
}

TEST_F(Fence, SetErrorWithPositiveValueWarns) {
    dma_fence* f = mock_fence();
    dma_fence_set_error(f, 5);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(Fence, ContextAllocReturnsDistinctRanges) {
    u64 a = dma_fence_context_alloc(1);
    u64 b = dma_fence_context_alloc(4);
    u64 c = dma_fence_context_alloc(1);
    EXPECT_NE(a, 0u);
    EXPECT_EQ(b, a + 1);
    EXPECT_EQ(c, b + 4);
}

TEST_F(Fence, IsLaterWithin32BitTimelineWraps) {
    u64 ctx = dma_fence_context_alloc(1);
    dma_fence* a = mock_fence(ctx, 0xfffffff0u);
    dma_fence* b = mock_fence(ctx, 0x00000010u);  // after the wrap: later
    EXPECT_TRUE(dma_fence_is_later(b, a));
    EXPECT_FALSE(dma_fence_is_later(a, b));
    EXPECT_FALSE(dma_fence_is_later(a, a));
    EXPECT_TRUE(dma_fence_is_later_or_same(a, a));
    EXPECT_EQ(dma_fence_later(a, b), b);
    dma_fence_signal(b);
    EXPECT_EQ(dma_fence_later(a, b), nullptr);  // the later one is done: nothing to wait for
    dma_fence_signal(a);
    dma_fence_put(a);
    dma_fence_put(b);
}

TEST_F(Fence, IsLaterWith64BitSeqnoDoesNotWrap) {
    u64 ctx = dma_fence_context_alloc(1);
    dma_fence* a = mock_fence(ctx, 0xfffffff0u, &mock_ops64);
    dma_fence* b = mock_fence(ctx, 0x100000010ull, &mock_ops64);
    dma_fence* c = mock_fence(ctx, 0x10u, &mock_ops64);
    EXPECT_TRUE(dma_fence_is_later(b, a));
    EXPECT_FALSE(dma_fence_is_later(c, a));  // 32-bit compare would say "later"
    EXPECT_TRUE(dma_fence_is_later(a, c));
    for (dma_fence* f : {a, b, c}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(Fence, Init64ForcesSixtyFourBitOrdering) {
    u64 ctx = dma_fence_context_alloc(1);
    auto* m1 = knew<MockFence>(GFP_KERNEL);
    auto* m2 = knew<MockFence>(GFP_KERNEL);
    dma_fence_init64(&m1->base, &mock_ops, &m1->lock, ctx, 0xfffffff0u);
    dma_fence_init64(&m2->base, &mock_ops, &m2->lock, ctx, 0x10u);
    EXPECT_TRUE(dma_fence_is_later(&m1->base, &m2->base));
    dma_fence_put(&m1->base);
    dma_fence_put(&m2->base);
}

TEST_F(Fence, IsLaterAcrossContextsWarns) {
    dma_fence* a = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* b = mock_fence(dma_fence_context_alloc(1), 2);
    EXPECT_FALSE(dma_fence_is_later(b, a));
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    dma_fence_put(a);
    dma_fence_put(b);
}

// ---- ops: enable_signaling, signaled, release ----
struct OpsFence {
    MockFence m;
    int enables = 0;
    bool enable_result = true;
    bool hw_done = false;
    ktime_t deadline = 0;
};
static OpsFence* to_ops(dma_fence* f) {
    return container_of(container_of(f, MockFence, base), OpsFence, m);
}
static const dma_fence_ops ops_with_hooks = {
    .get_driver_name = mock_name,
    .get_timeline_name = mock_name,
    .enable_signaling =
        [](dma_fence* f) {
            to_ops(f)->enables++;
            return to_ops(f)->enable_result;
        },
    .signaled = [](dma_fence* f) { return to_ops(f)->hw_done; },
    .release = [](dma_fence* f) { kdelete(to_ops(f)); },
    .set_deadline = [](dma_fence* f, ktime_t d) { to_ops(f)->deadline = d; },
};
static OpsFence* ops_fence() {
    auto* o = knew<OpsFence>(GFP_KERNEL);
    dma_fence_init(&o->m.base, &ops_with_hooks, &o->m.lock, 0, 0);
    return o;
}

TEST_F(Fence, EnableSignalingCalledOnceOnFirstWaiter) {
    OpsFence* o = ops_fence();
    dma_fence* f = &o->m.base;
    EXPECT_EQ(o->enables, 0);
    CountingCb a, b;
    EXPECT_EQ(dma_fence_add_callback(f, &a.cb, CountingCb::func), 0);
    EXPECT_EQ(dma_fence_add_callback(f, &b.cb, CountingCb::func), 0);
    dma_fence_enable_sw_signaling(f);
    EXPECT_EQ(o->enables, 1);
    dma_fence_signal(f);
    EXPECT_EQ(a.runs + b.runs, 2);
    dma_fence_put(f);
}

TEST_F(Fence, EnableSignalingFalseMeansAlreadySignalled) {
    OpsFence* o = ops_fence();
    o->enable_result = false;
    dma_fence* f = &o->m.base;
    CountingCb cb;
    EXPECT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), -ENOENT);
    EXPECT_TRUE(dma_fence_test_flag(f, DMA_FENCE_FLAG_SIGNALED_BIT));
    EXPECT_EQ(cb.runs, 0);
    dma_fence_put(f);
}

TEST_F(Fence, SignaledOpMakesIsSignaledSignal) {
    OpsFence* o = ops_fence();
    dma_fence* f = &o->m.base;
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), 0);
    EXPECT_FALSE(dma_fence_is_signaled(f));
    o->hw_done = true;
    EXPECT_FALSE(dma_fence_test_flag(f, DMA_FENCE_FLAG_SIGNALED_BIT));
    EXPECT_TRUE(dma_fence_is_signaled(f));  // the slow path signals it
    EXPECT_TRUE(dma_fence_test_flag(f, DMA_FENCE_FLAG_SIGNALED_BIT));
    EXPECT_EQ(cb.runs, 1);
    dma_fence_put(f);
}

TEST_F(Fence, SetDeadlineReachesDriverOnlyWhilePending) {
    OpsFence* o = ops_fence();
    dma_fence* f = &o->m.base;
    dma_fence_set_deadline(f, 777);
    EXPECT_EQ(o->deadline, 777);
    dma_fence_signal(f);
    dma_fence_set_deadline(f, 888);
    EXPECT_EQ(o->deadline, 777);
    dma_fence_put(f);
}

TEST_F(Fence, RefcountReleasesThroughOpsOnLastPut) {
    static int releases;
    releases = 0;
    static const dma_fence_ops counting_ops = {
        .get_driver_name = mock_name,
        .get_timeline_name = mock_name,
        .release =
            [](dma_fence* f) {
                releases++;
                mock_release(f);
            },
    };
    dma_fence* f = mock_fence(0, 0, &counting_ops);
    dma_fence_get(f);
    dma_fence_get(f);
    dma_fence_put(f);
    dma_fence_put(f);
    EXPECT_EQ(releases, 0);
    EXPECT_EQ(kref_read(&f->refcount), 1u);
    dma_fence_put(f);
    EXPECT_EQ(releases, 1);
    dma_fence_put(nullptr);  // allowed, as upstream
}

TEST_F(Fence, DefaultReleaseFreesKmallocFence) {
    static const dma_fence_ops plain_ops = {.get_driver_name = mock_name, .get_timeline_name = mock_name};
    static SpinLock lock("plain_fence");
    auto* f = static_cast<dma_fence*>(kmalloc(sizeof(dma_fence), GFP_KERNEL));
    dma_fence_init(f, &plain_ops, &lock, 0, 0);  // raw memory, as kernel code hands it
    dma_fence_signal(f);
    dma_fence_put(f);  // teardown fails on a kmalloc leak if this did not free it
}

TEST_F(Fence, FencesFromKmemCache) {
    KmemCache* cache = kmem_cache_create("test_fences", sizeof(MockFence), alignof(MockFence), SLAB_HWCACHE_ALIGN);
    static KmemCache* g_cache;
    g_cache = cache;
    static const dma_fence_ops slab_ops = {
        .get_driver_name = mock_name,
        .get_timeline_name = mock_name,
        .release = [](dma_fence* f) { kmem_cache_delete(g_cache, container_of(f, MockFence, base)); },
    };
    for (int i = 0; i < 16; i++) {
        auto* m = kmem_cache_new<MockFence>(cache, GFP_KERNEL);
        dma_fence_init(&m->base, &slab_ops, &m->lock, 0, i);
        dma_fence_signal(&m->base);
        dma_fence_put(&m->base);
    }
    EXPECT_EQ(kmem_cache_live(cache), 0u);
    kmem_cache_destroy(cache);
}

TEST_F(Fence, ReleasedUnsignalledWithCallbacksIsReportedAndSignalled) {
    dma_fence* f = mock_fence();
    struct Cb {
        dma_fence_cb cb;
        int status = 0;
    } c;
    dma_fence_add_callback(f, &c.cb,
                           [](dma_fence* fence, dma_fence_cb* cb) { container_of(cb, Cb, cb)->status = fence->error; });
    dma_fence_put(f);  // a refcounting bug: the waiter would otherwise hang forever
    EXPECT_TRUE(expect_report(ReportKind::Fence));
    EXPECT_EQ(c.status, -EDEADLK);
}

TEST_F(Fence, ReleasedUnsignalledWithoutWaitersIsFine) {
    // A job torn down before it was armed drops fences nobody waits on.
    dma_fence* f = mock_fence();
    dma_fence_put(f);
    EXPECT_FALSE(expect_report(ReportKind::Fence));
}

TEST_F(Fence, GetAfterReleaseWarns) {
    auto* m = knew<MockFence>(GFP_KERNEL);
    static const dma_fence_ops keep_ops = {
        .get_driver_name = mock_name, .get_timeline_name = mock_name, .release = [](dma_fence*) {}};
    dma_fence_init(&m->base, &keep_ops, &m->lock, 0, 0);
    dma_fence_put(&m->base);
    dma_fence_get(&m->base);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    EXPECT_EQ(dma_fence_get_rcu(&m->base), &m->base);  // count is 1 again after the bad get
    kdelete(m);
}

TEST_F(Fence, GetRcuFailsOnDeadFence) {
    auto* m = knew<MockFence>(GFP_KERNEL);
    static const dma_fence_ops keep_ops = {
        .get_driver_name = mock_name, .get_timeline_name = mock_name, .release = [](dma_fence*) {}};
    dma_fence_init(&m->base, &keep_ops, &m->lock, 0, 0);
    EXPECT_EQ(dma_fence_get_rcu(&m->base), &m->base);
    dma_fence_put(&m->base);
    dma_fence_put(&m->base);
    EXPECT_EQ(dma_fence_get_rcu(&m->base), nullptr);
    kdelete(m);
}

// ---- stubs ----
TEST_F(Fence, StubIsSignalledAndShared) {
    dma_fence* a = dma_fence_get_stub();
    dma_fence* b = dma_fence_get_stub();
    EXPECT_EQ(a, b);
    EXPECT_TRUE(dma_fence_is_signaled(a));
    EXPECT_EQ(dma_fence_get_status(a), 1);
    CountingCb cb;
    EXPECT_EQ(dma_fence_add_callback(a, &cb.cb, CountingCb::func), -ENOENT);
    EXPECT_EQ(dma_fence_wait_timeout(a, false, 10), 10);
    dma_fence_put(a);
    dma_fence_put(b);
}

TEST_F(Fence, PrivateStubCarriesTimestamp) {
    dma_fence* s = dma_fence_allocate_private_stub(4242);
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(dma_fence_is_signaled(s));
    EXPECT_EQ(dma_fence_timestamp(s), 4242);
    dma_fence* t = dma_fence_get_stub();
    EXPECT_NE(s, t);
    dma_fence_put(t);
    dma_fence_put(s);  // kmalloc'ed: teardown checks it is freed
}

// ---- trace ----
TEST_F(Fence, TraceEventsForInitSignalWait) {
    trace::clear();
    trace::set_enabled(true);
    dma_fence* f = mock_fence(0, 7);
    dma_fence_signal(f);
    dma_fence_wait(f, false);
    std::string json = trace::to_json();
    trace::set_enabled(false);
    EXPECT_NE(json.find("dma_fence_init"), std::string::npos);
    EXPECT_NE(json.find("dma_fence_signaled"), std::string::npos);
    EXPECT_NE(json.find("dma_fence_wait_start"), std::string::npos);
    EXPECT_NE(json.find("dma_fence_wait_end"), std::string::npos);
    EXPECT_NE(json.find("\"seqno\":7"), std::string::npos);
    dma_fence_put(f);
    trace::clear();
}

TEST_F(Fence, NoTraceEventsWhenDisabled) {
    trace::set_enabled(false);
    size_t before = trace::event_count();
    dma_fence* f = mock_fence();
    dma_fence_signal(f);
    EXPECT_EQ(trace::event_count(), before);
    dma_fence_put(f);
}

// ---- the newest upstream's API: detached ops, check_and_signal, the inline lock ----

namespace {
const char* plain_driver(dma_fence*) {
    return "plain-driver";
}
const char* plain_timeline(dma_fence*) {
    return "plain-timeline";
}
const dma_fence_ops detachable_ops = {.get_driver_name = plain_driver, .get_timeline_name = plain_timeline};

dma_fence* kmalloc_fence(const dma_fence_ops* ops, SpinLock* lock) {
    auto* f = static_cast<dma_fence*>(kmalloc(sizeof(dma_fence), GFP_KERNEL));
    dma_fence_init(f, ops, lock, 7, 1);
    return f;
}
}  // namespace

TEST_F(Fence, SignalDetachesOpsWithoutReleaseOrWait) {
    dma_fence* f = kmalloc_fence(&detachable_ops, nullptr);
    EXPECT_EQ(dma_fence_ops_load(f), &detachable_ops);
    EXPECT_STREQ(dma_fence_driver_name(f), "plain-driver");
    EXPECT_STREQ(dma_fence_timeline_name(f), "plain-timeline");
    dma_fence_signal(f);
    EXPECT_EQ(dma_fence_ops_load(f), nullptr);
    EXPECT_STREQ(dma_fence_driver_name(f), "detached-driver");
    EXPECT_STREQ(dma_fence_timeline_name(f), "signaled-timeline");
    // Every reader copes with the null ops.
    EXPECT_TRUE(dma_fence_is_signaled(f));
    spin_lock(f->lock);
    EXPECT_TRUE(dma_fence_is_signaled_locked(f));
    spin_unlock(f->lock);
    EXPECT_EQ(dma_fence_get_status(f), 1);
    dma_fence_set_deadline(f, ktime_get());
    dma_fence_enable_sw_signaling(f);
    CountingCb cb;
    EXPECT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), -ENOENT);
    EXPECT_GT(dma_fence_wait_timeout(f, false, 10), 0);
    EXPECT_TRUE(dma_fence_check_and_signal(f));
    dma_fence_put(f);  // default free: the teardown fails on a leak
}

TEST_F(Fence, OpsWithReleaseOrWaitStayAttached) {
    dma_fence* f = mock_fence();  // has release
    EXPECT_STREQ(dma_fence_driver_name(f), "mock");
    dma_fence_signal(f);
    EXPECT_EQ(dma_fence_ops_load(f), &mock_ops);
    // The names are fixed strings once signalled, ops or not (the issuer may be gone).
    EXPECT_STREQ(dma_fence_driver_name(f), "detached-driver");
    EXPECT_STREQ(dma_fence_timeline_name(f), "signaled-timeline");
    dma_fence_put(f);  // still released through ops->release

    static const dma_fence_ops wait_ops = {
        .get_driver_name = plain_driver,
        .get_timeline_name = plain_timeline,
        .wait = [](dma_fence* fence, bool intr, long timeout) { return dma_fence_default_wait(fence, intr, timeout); },
    };
    dma_fence* g = kmalloc_fence(&wait_ops, nullptr);
    dma_fence_signal(g);
    EXPECT_EQ(dma_fence_ops_load(g), &wait_ops);
    dma_fence_put(g);
}

TEST_F(Fence, ReleasedUnsignalledDetachedFenceUsesDefaultFree) {
    // The release signals it with -EDEADLK (which detaches the ops) and must then still free it.
    dma_fence* f = kmalloc_fence(&detachable_ops, nullptr);
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), 0);
    dma_fence_put(f);
    EXPECT_TRUE(expect_report(ReportKind::Fence));
    EXPECT_EQ(cb.runs, 1);
}

TEST_F(Fence, CheckAndSignalTellsWhetherItWasAlreadySignalled) {
    dma_fence* f = mock_fence();
    EXPECT_FALSE(dma_fence_check_and_signal(f));
    EXPECT_TRUE(dma_fence_test_signaled_flag(f));
    EXPECT_TRUE(dma_fence_check_and_signal(f));
    dma_fence_put(f);

    dma_fence* g = mock_fence();
    spin_lock(g->lock);
    EXPECT_FALSE(dma_fence_check_and_signal_locked(g));
    EXPECT_TRUE(dma_fence_check_and_signal_locked(g));
    spin_unlock(g->lock);
    dma_fence_put(g);
}

TEST_F(Fence, TestSignaledFlagNeverAsksTheDriver) {
    static int asked;
    asked = 0;
    static const dma_fence_ops peek_ops = {
        .get_driver_name = mock_name,
        .get_timeline_name = mock_name,
        .signaled = [](dma_fence*) { return ++asked > 0; },
        .release = mock_release,
    };
    dma_fence* f = mock_fence(0, 0, &peek_ops);
    EXPECT_FALSE(dma_fence_test_signaled_flag(f));
    EXPECT_EQ(asked, 0);
    EXPECT_TRUE(dma_fence_is_signaled(f));  // asks, and signals
    EXPECT_EQ(asked, 1);
    EXPECT_TRUE(dma_fence_test_signaled_flag(f));
    dma_fence_put(f);
}

TEST_F(Fence, NullLockMeansTheInlineLock) {
    dma_fence* f = kmalloc_fence(&detachable_ops, nullptr);
    EXPECT_TRUE(dma_fence_test_flag(f, DMA_FENCE_FLAG_INLINE_LOCK_BIT));
    SpinLock* lock = dma_fence_spinlock(f);
    ASSERT_NE(lock, nullptr);
    EXPECT_EQ(lock, f->lock);
    // The lock lives inside the fence.
    EXPECT_GE(reinterpret_cast<uintptr_t>(lock), reinterpret_cast<uintptr_t>(f));
    EXPECT_LT(reinterpret_cast<uintptr_t>(lock), reinterpret_cast<uintptr_t>(f + 1));
    unsigned long flags;
    dma_fence_lock_irqsave(f, flags);
    dma_fence_assert_held(f);
    EXPECT_TRUE(lock->is_locked());
    dma_fence_unlock_irqrestore(f, flags);
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(f, &cb.cb, CountingCb::func), 0);
    dma_fence_signal(f);
    EXPECT_EQ(cb.runs, 1);
    EXPECT_TRUE(cb.lock_held);  // callbacks run under the inline lock
    dma_fence_put(f);

    static SpinLock external("external_fence_lock");
    dma_fence* g = kmalloc_fence(&detachable_ops, &external);
    EXPECT_FALSE(dma_fence_test_flag(g, DMA_FENCE_FLAG_INLINE_LOCK_BIT));
    EXPECT_EQ(dma_fence_spinlock(g), &external);
    dma_fence_signal(g);
    dma_fence_put(g);
}

TEST_F(Fence, EmbeddedFenceWithInlineLock) {
    struct Job {
        dma_fence fence;
    };
    static const dma_fence_ops embedded_ops = {
        .get_driver_name = mock_name, .get_timeline_name = mock_name, .release = [](dma_fence*) {}};
    Job job;
    dma_fence_init(&job.fence, &embedded_ops, nullptr, 1, 1);
    dma_fence_signal(&job.fence);
    EXPECT_TRUE(dma_fence_is_signaled(&job.fence));
    dma_fence_put(&job.fence);
}

// dma_fence_get_rcu_safe: a reference to the fence published at the pointer, none
// when nothing is published, and never one whose refcount already dropped to zero.
TEST_F(Fence, GetRcuSafeTakesAReferenceToThePublishedFence) {
    std::atomic<dma_fence*> slot{nullptr};
    EXPECT_EQ(dma_fence_get_rcu_safe(&slot), nullptr);
    dma_fence* f = mock_fence();
    slot.store(f);
    dma_fence* got = dma_fence_get_rcu_safe(&slot);
    EXPECT_EQ(got, f);
    EXPECT_EQ(kref_read(&f->refcount), 2u);
    dma_fence_put(got);

    // The plain-pointer form, for fields published with a release store.
    dma_fence* plain = f;
    got = dma_fence_get_rcu_safe(&plain);
    EXPECT_EQ(got, f);
    dma_fence_put(got);
    dma_fence_signal(f);
    dma_fence_put(f);
}
