// drm_syncobj through the ioctls (simulated time): create/destroy, binary wait/reset/signal,
// wait-all vs wait-any, WAIT_FOR_SUBMIT, timeouts, timelines (query, signal, wait on points,
// WAIT_AVAILABLE), transfer, -ENOENT atomicity, -EFAULT, and export/import between files.
#include <gtest/gtest.h>

#include "drm/drm_syncobj_sched.h"
#include "drm/sched/testing/mock_scheduler.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/sched.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

class Syncobj : public kshim::testing::KernelTest {
protected:
    s64 in(ktime_t d) { return ktime_get() + d; }
};

constexpr u32 WAIT_ALL = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
constexpr u32 WAIT_FOR_SUBMIT = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
constexpr u32 WAIT_AVAILABLE = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE;

// ---- create / destroy ----

TEST_F(Syncobj, CreateGivesDistinctHandlesFromOne) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    EXPECT_EQ(o.create(), 1u);
    EXPECT_EQ(o.create(), 2u);
}

TEST_F(Syncobj, CreateRejectsUnknownFlags) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    uapi::drm_syncobj_create c{0, 2};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_CREATE, &c), -EINVAL);
    EXPECT_TRUE(o.file->syncobj_idr.empty());
}

TEST_F(Syncobj, DestroyErrors) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    uapi::drm_syncobj_destroy d{h, 1};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_DESTROY, &d), -EINVAL);  // pad
    d = {h, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_DESTROY, &d), 0);
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_DESTROY, &d), -EINVAL);  // gone
    EXPECT_EQ(o.wait({h}, 0, 0), -ENOENT);
}

TEST_F(Syncobj, HandlesArePerFile) {
    DrmDevice dev(full_driver());
    Opened a(&dev), b(&dev);
    u32 h = a.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    EXPECT_EQ(a.wait({h}, 0, 0), 0);
    EXPECT_EQ(b.wait({h}, 0, 0), -ENOENT);
}

// ---- binary wait ----

TEST_F(Syncobj, WaitOnSyncobjWithoutFenceIsEinval) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    EXPECT_EQ(o.wait({h}, 0, 0), -EINVAL);
    EXPECT_EQ(o.wait({h}, 0, in(NSEC_PER_SEC)), -EINVAL);  // without WAIT_FOR_SUBMIT: no waiting
}

TEST_F(Syncobj, WaitRejectsBadFlagsAndAcceptsZeroCount) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    EXPECT_EQ(o.wait({h}, WAIT_AVAILABLE, 0), -EINVAL);  // timeline-only flag
    EXPECT_EQ(o.wait({h}, 1u << 4, 0), -EINVAL);
    u32 first = 1234;
    EXPECT_EQ(o.wait({}, 0, 0, &first), 0);  // upstream: an empty wait succeeds at once
    EXPECT_EQ(first, 0xdeadu);               // ...and leaves first_signaled alone
}

TEST_F(Syncobj, CreatedSignalledWaitsAtOnce) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    u32 first = 99;
    EXPECT_EQ(o.wait({h}, 0, 0, &first), 0);
    EXPECT_EQ(first, 0u);
    EXPECT_EQ(o.wait({h}, WAIT_ALL, 0), 0);
}

TEST_F(Syncobj, PollOnPendingFenceIsEtime) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    EXPECT_EQ(o.wait({h}, 0, 0), -ETIME);
    dma_fence_signal(f);
    EXPECT_EQ(o.wait({h}, 0, 0), 0);
    dma_fence_put(f);
}

TEST_F(Syncobj, AbsoluteTimeoutExpiresOnTheRuntimeClock) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    ktime_t start = ktime_get();
    EXPECT_EQ(o.wait({h}, 0, start + 100 * NSEC_PER_MSEC), -ETIME);
    EXPECT_GE(ktime_get() - start, 100 * NSEC_PER_MSEC);
    EXPECT_LT(ktime_get() - start, 120 * NSEC_PER_MSEC);
    // A deadline in the past is a poll.
    start = ktime_get();
    EXPECT_EQ(o.wait({h}, 0, start - 1), -ETIME);
    EXPECT_EQ(ktime_get(), start);
    dma_fence_put(f);
}

TEST_F(Syncobj, WaitReturnsWhenAFenceSignalsLater) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    Task* t = kthread_run(
        [f] {
            msleep(30);
            dma_fence_signal(f);
            return 0;
        },
        "signaller");
    ktime_t start = ktime_get();
    EXPECT_EQ(o.wait({h}, 0, start + NSEC_PER_SEC), 0);
    EXPECT_GE(ktime_get() - start, 30 * NSEC_PER_MSEC);
    EXPECT_LT(ktime_get() - start, 40 * NSEC_PER_MSEC);
    kthread_stop(t);
    dma_fence_put(f);
}

TEST_F(Syncobj, WaitAnyReportsFirstSignaledAndWaitAllNeedsEvery) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 a = o.create(), b = o.create(), c = o.create();
    dma_fence* fa = new_fence();
    dma_fence* fb = new_fence();
    dma_fence* fc = new_fence();
    o.replace(a, fa);
    o.replace(b, fb);
    o.replace(c, fc);
    u32 first = 99;
    EXPECT_EQ(o.wait({a, b, c}, 0, 0, &first), -ETIME);
    dma_fence_signal(fb);
    EXPECT_EQ(o.wait({a, b, c}, 0, 0, &first), 0);
    EXPECT_EQ(first, 1u);
    EXPECT_EQ(o.wait({a, b, c}, WAIT_ALL, 0), -ETIME);
    dma_fence_signal(fc);
    EXPECT_EQ(o.wait({a, b, c}, 0, 0, &first), 0);
    EXPECT_EQ(first, 1u);  // the lowest signalled index
    EXPECT_EQ(o.wait({a, b, c}, WAIT_ALL, in(10 * NSEC_PER_MSEC)), -ETIME);
    // Blocking wait-all: returns once the last one signals.
    Task* t = kthread_run(
        [fa] {
            msleep(5);
            dma_fence_signal(fa);
            return 0;
        },
        "signaller");
    EXPECT_EQ(o.wait({a, b, c}, WAIT_ALL, in(NSEC_PER_SEC)), 0);
    kthread_stop(t);
    for (dma_fence* f : {fa, fb, fc})
        dma_fence_put(f);
}

TEST_F(Syncobj, BlockingWaitAnyWakesOnTheFirstToSignal) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 a = o.create(), b = o.create();
    dma_fence* fa = new_fence();
    dma_fence* fb = new_fence();
    o.replace(a, fa);
    o.replace(b, fb);
    Task* t = kthread_run(
        [fb] {
            msleep(7);
            dma_fence_signal(fb);
            return 0;
        },
        "signaller");
    u32 first = 99;
    EXPECT_EQ(o.wait({a, b}, 0, in(NSEC_PER_SEC), &first), 0);
    EXPECT_EQ(first, 1u);
    kthread_stop(t);
    dma_fence_put(fa);
    dma_fence_put(fb);
}

TEST_F(Syncobj, WaitForSubmitWaitsForAFenceToAppear) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    EXPECT_EQ(o.wait({h}, WAIT_FOR_SUBMIT, 0), -ETIME);  // poll: no fence yet
    dma_fence* f = new_fence();
    drm_file* file = o.file;
    Task* t = kthread_run(
        [file, h, f] {
            msleep(10);
            drm_syncobj* s = drm_syncobj_find(file, h);
            drm_syncobj_replace_fence(s, f);  // submitted...
            drm_syncobj_put(s);
            msleep(10);
            dma_fence_signal(f);  // ...and completed
            return 0;
        },
        "submitter");
    ktime_t start = ktime_get();
    EXPECT_EQ(o.wait({h}, WAIT_FOR_SUBMIT, start + NSEC_PER_SEC), 0);
    EXPECT_GE(ktime_get() - start, 20 * NSEC_PER_MSEC);
    kthread_stop(t);
    dma_fence_put(f);
}

TEST_F(Syncobj, WaitForSubmitTimesOutWithoutAFence) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    ktime_t start = ktime_get();
    EXPECT_EQ(o.wait({h}, WAIT_FOR_SUBMIT, start + 50 * NSEC_PER_MSEC), -ETIME);
    EXPECT_GE(ktime_get() - start, 50 * NSEC_PER_MSEC);
    drm_syncobj* s = drm_syncobj_find(o.file, h);
    EXPECT_TRUE(s->cb_list.empty());  // the waiter left nothing behind
    drm_syncobj_put(s);
}

TEST_F(Syncobj, AWaiterKeepsTheFencesItCaptured) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    int result = 1;
    ktime_t done_at = 0;
    Opened* po = &o;
    Task* t = kthread_run(
        [&, po, h] {
            result = po->wait({h}, 0, ktime_get() + NSEC_PER_SEC);
            done_at = ktime_get();
            return 0;
        },
        "waiter");
    advance(5 * NSEC_PER_MSEC);
    // Resetting, then signalling the syncobj does not complete the ongoing wait.
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_RESET, {h}), 0);
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, {h}), 0);
    advance(5 * NSEC_PER_MSEC);
    EXPECT_EQ(result, 1);
    ktime_t signal_at = ktime_get();
    dma_fence_signal(f);
    ASSERT_TRUE(run_until([&] { return done_at != 0; }, NSEC_PER_SEC));
    EXPECT_EQ(result, 0);
    EXPECT_GE(done_at, signal_at);
    kthread_stop(t);
    dma_fence_put(f);
}

// ---- reset / signal ----

TEST_F(Syncobj, ResetAndSignal) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 a = o.create(DRM_SYNCOBJ_CREATE_SIGNALED), b = o.create();
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_RESET, {a}), 0);
    EXPECT_EQ(o.wait({a}, 0, 0), -EINVAL);
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, {a, b}), 0);
    EXPECT_EQ(o.wait({a, b}, WAIT_ALL, 0), 0);
}

TEST_F(Syncobj, ArrayOpsRejectPadAndZeroCount) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    UserRange r(&h, sizeof h);
    for (unsigned cmd : {DRM_IOCTL_SYNCOBJ_RESET, DRM_IOCTL_SYNCOBJ_SIGNAL}) {
        drm_syncobj_array a{user_ptr(&h), 1, 1};
        EXPECT_EQ(call(o.file, cmd, &a), -EINVAL);
        a = {user_ptr(&h), 0, 0};
        EXPECT_EQ(call(o.file, cmd, &a), -EINVAL);
    }
    EXPECT_EQ(o.wait({h}, 0, 0), -EINVAL);  // not signalled by the rejected calls
}

TEST_F(Syncobj, InvalidHandleIsEnoentAndChangesNothing) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 pending = o.create(), signalled = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    // Signal: the valid handle before the bad one stays unsignalled.
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, {pending, 77}), -ENOENT);
    EXPECT_EQ(o.wait({pending}, 0, 0), -EINVAL);
    // Reset: the signalled one stays signalled.
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_RESET, {signalled, 0}), -ENOENT);
    EXPECT_EQ(o.wait({signalled}, 0, 0), 0);
    // Timeline signal: no point is added.
    EXPECT_EQ(o.timeline_signal({pending, 77}, {3, 3}), -ENOENT);
    EXPECT_EQ(o.query(pending), 0u);
    EXPECT_EQ(o.wait({pending}, 0, 0), -EINVAL);
    // Waits and queries.
    EXPECT_EQ(o.wait({signalled, 77}, 0, 0), -ENOENT);
    EXPECT_EQ(o.timeline_wait({signalled, 77}, {0, 0}, 0, 0), -ENOENT);
    u32 handles[2] = {signalled, 77};
    u64 points[2] = {5, 5};
    UserRange rh(handles), rp(points);
    drm_syncobj_timeline_array q{user_ptr(handles), user_ptr(points), 2, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_QUERY, &q), -ENOENT);
    EXPECT_EQ(points[0], 5u);  // nothing written
}

TEST_F(Syncobj, BadHandleArrayPointerIsEfault) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    drm_syncobj_array a{user_ptr(&h), 1, 0};  // &h not registered
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_SIGNAL, &a), -EFAULT);
    drm_syncobj_wait w{};
    w.handles = user_ptr(&h);
    w.count_handles = 1;
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_WAIT, &w), -EFAULT);
    UserRange r(&h, sizeof h);
    u64 point = 0;
    drm_syncobj_timeline_array q{user_ptr(&h), user_ptr(&point), 1, 0};  // points not registered
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_QUERY, &q), -EFAULT);
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &q), -EFAULT);
    EXPECT_EQ(o.wait({h}, 0, 0), -EINVAL);  // still no fence
    drm_syncobj_timeline_wait tw{};
    tw.handles = user_ptr(&h);
    tw.points = user_ptr(&point);
    tw.count_handles = 1;
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &tw), -EFAULT);
}

// ---- timelines ----

TEST_F(Syncobj, TimelineSignalAndQuery) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    EXPECT_EQ(o.query(h), 0u);
    EXPECT_EQ(o.timeline_signal({h}, {1}), 0);
    EXPECT_EQ(o.query(h), 1u);
    EXPECT_EQ(o.timeline_signal({h}, {5}), 0);
    EXPECT_EQ(o.query(h), 5u);
    EXPECT_EQ(o.query(h, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED), 5u);
}

TEST_F(Syncobj, TimelineIoctlsRejectBadFlags) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    u64 p = 1;
    UserRange rh(&h, sizeof h), rp(&p, sizeof p);
    drm_syncobj_timeline_array a{user_ptr(&h), user_ptr(&p), 1, 1};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a), -EINVAL);
    a.flags = 2;
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_QUERY, &a), -EINVAL);
    a = {user_ptr(&h), user_ptr(&p), 0, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a), -EINVAL);
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_QUERY, &a), -EINVAL);
    EXPECT_EQ(o.timeline_wait({h}, {1}, 1u << 4, 0), -EINVAL);
    EXPECT_EQ(o.timeline_wait({}, {}, 0, 0), 0);  // empty wait: 0, as upstream
}

TEST_F(Syncobj, QueryNeverJumpsOverAnUnsignalledPointAndNeverDecreases) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f1 = new_fence();
    dma_fence* f2 = new_fence();
    dma_fence* f3 = new_fence();
    o.add_point(h, f1, 1);
    o.add_point(h, f2, 2);
    o.add_point(h, f3, 3);
    EXPECT_EQ(o.query(h), 0u);
    EXPECT_EQ(o.query(h, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED), 3u);
    dma_fence_signal(f1);
    dma_fence_signal(f3);  // a later point signalled before point 2
    advance_until_idle();
    u64 seen = o.query(h);
    EXPECT_EQ(seen, 1u);
    dma_fence_signal(f2);
    advance_until_idle();
    u64 now = o.query(h);
    EXPECT_EQ(now, 3u);
    EXPECT_GE(now, seen);
    o.add_point(h, new_fence(), 4);  // the syncobj owns this one's only reference... see below
    EXPECT_EQ(o.query(h), 3u);
    // Signal point 4 through its chain link so nothing leaks.
    drm_syncobj* s = drm_syncobj_find(o.file, h);
    dma_fence* head = drm_syncobj_fence_get(s);
    dma_fence* p4 = dma_fence_chain_contained(head);
    dma_fence_signal(p4);
    dma_fence_put(p4);  // the reference new_fence() gave us, which add_point did not consume
    dma_fence_put(head);
    drm_syncobj_put(s);
    advance_until_idle();
    EXPECT_EQ(o.query(h), 4u);
    for (dma_fence* f : {f1, f2, f3})
        dma_fence_put(f);
}

TEST_F(Syncobj, TimelineWaitOnMultiplePoints) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 a = o.create(), b = o.create();
    dma_fence* fa2 = new_fence();
    EXPECT_EQ(o.timeline_signal({a, b}, {1, 4}), 0);
    o.add_point(a, fa2, 2);
    u32 first = 99;
    EXPECT_EQ(o.timeline_wait({a, b}, {1, 4}, WAIT_ALL, 0), 0);
    EXPECT_EQ(o.timeline_wait({a, b}, {2, 4}, WAIT_ALL, 0), -ETIME);
    EXPECT_EQ(o.timeline_wait({a, b}, {2, 3}, 0, 0, &first), 0);  // point 3 <= 4: signalled
    EXPECT_EQ(first, 1u);
    EXPECT_EQ(o.timeline_wait({a}, {3}, 0, 0), -EINVAL);  // past the head, no WAIT_FOR_SUBMIT
    Task* t = kthread_run(
        [fa2] {
            msleep(3);
            dma_fence_signal(fa2);
            return 0;
        },
        "signaller");
    EXPECT_EQ(o.timeline_wait({a, b}, {2, 4}, WAIT_ALL, in(NSEC_PER_SEC)), 0);
    kthread_stop(t);
    dma_fence_put(fa2);
}

TEST_F(Syncobj, TimelineWaitForSubmitAndWaitAvailable) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    drm_file* file = o.file;
    Task* t = kthread_run(
        [file, h, f] {
            msleep(10);
            drm_syncobj* s = drm_syncobj_find(file, h);
            drm_syncobj_add_point(s, dma_fence_chain_alloc(), f, 7);
            drm_syncobj_put(s);
            msleep(10);
            dma_fence_signal(f);
            return 0;
        },
        "submitter");
    // WAIT_AVAILABLE returns when point 7 exists, before it signals.
    ktime_t start = ktime_get();
    EXPECT_EQ(o.timeline_wait({h}, {7}, WAIT_AVAILABLE, in(NSEC_PER_SEC)), 0);
    EXPECT_GE(ktime_get() - start, 10 * NSEC_PER_MSEC);
    EXPECT_FALSE(dma_fence_is_signaled(f));
    EXPECT_EQ(o.timeline_wait({h}, {7}, 0, 0), -ETIME);
    // WAIT_FOR_SUBMIT on it waits for the signal.
    EXPECT_EQ(o.timeline_wait({h}, {7}, WAIT_FOR_SUBMIT, in(NSEC_PER_SEC)), 0);
    EXPECT_TRUE(dma_fence_is_signaled(f));
    EXPECT_GE(ktime_get() - start, 20 * NSEC_PER_MSEC);
    kthread_stop(t);
    dma_fence_put(f);
}

TEST_F(Syncobj, TimelinePointZeroIsTheBinarySlot) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    EXPECT_EQ(o.timeline_wait({h}, {0}, 0, 0), -EINVAL);
    EXPECT_EQ(o.timeline_signal({h}, {2}), 0);
    EXPECT_EQ(o.timeline_wait({h}, {0}, 0, 0), 0);  // the head fence
    EXPECT_EQ(o.wait({h}, 0, 0), 0);
}

// ---- transfer ----

TEST_F(Syncobj, TransferBinaryToTimelineAndBack) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 bin = o.create(), tl = o.create(), bin2 = o.create();
    dma_fence* f = new_fence();
    o.replace(bin, f);
    EXPECT_EQ(o.transfer(bin, 0, tl, 5), 0);
    EXPECT_EQ(o.query(tl, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED), 5u);
    EXPECT_EQ(o.query(tl), 0u);
    EXPECT_EQ(o.transfer(tl, 5, bin2, 0), 0);
    EXPECT_EQ(o.wait({bin2}, 0, 0), -ETIME);
    dma_fence_signal(f);
    advance_until_idle();
    EXPECT_EQ(o.query(tl), 5u);
    EXPECT_EQ(o.wait({bin2}, 0, 0), 0);
    // Between points: 5 -> 9 on the same timeline.
    EXPECT_EQ(o.transfer(tl, 5, tl, 9), 0);
    EXPECT_EQ(o.query(tl), 9u);
    dma_fence_put(f);
}

TEST_F(Syncobj, TransferErrors) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 a = o.create(), b = o.create();
    EXPECT_EQ(o.transfer(a, 0, 99, 0), -ENOENT);
    EXPECT_EQ(o.transfer(99, 0, b, 0), -ENOENT);
    EXPECT_EQ(o.transfer(99, 0, b, 3), -ENOENT);
    EXPECT_EQ(o.transfer(a, 0, b, 0), -EINVAL);     // no fence in the source
    EXPECT_EQ(o.transfer(a, 0, b, 0, 4), -EINVAL);  // bad flags
    drm_syncobj_transfer t{a, b, 0, 0, 0, 1};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_TRANSFER, &t), -EINVAL);  // pad
    EXPECT_EQ(o.transfer(a, 0, b, 0, WAIT_FOR_SUBMIT), -ETIME);        // find_fence waits 5 s
    EXPECT_EQ(o.query(b), 0u);
    EXPECT_EQ(o.wait({b}, 0, 0), -EINVAL);
}

// ---- export / import ----

TEST_F(Syncobj, SyncFileExportImportMovesFencesBetweenFiles) {
    DrmDevice dev(full_driver());
    Opened a(&dev), b(&dev);
    u32 ha = a.create(), hb = b.create();
    dma_fence* f = new_fence();
    a.replace(ha, f);
    sync_file* sf = nullptr;
    ASSERT_EQ(drm_syncobj_export_sync_file_obj(a.file, ha, 0, &sf), 0);
    EXPECT_EQ(drm_syncobj_import_sync_file_obj(b.file, sf, hb, 0), 0);
    EXPECT_EQ(drm_syncobj_import_sync_file_obj(b.file, sf, 42, 0), -ENOENT);
    EXPECT_EQ(drm_syncobj_import_sync_file_obj(b.file, sf, hb, 3), 0);  // as timeline point 3
    EXPECT_EQ(b.wait({hb}, 0, 0), -ETIME);
    dma_fence_signal(f);
    advance_until_idle();
    EXPECT_EQ(b.wait({hb}, 0, 0), 0);
    EXPECT_EQ(b.query(hb), 3u);
    sync_file_put(sf);
    dma_fence_put(f);
}

TEST_F(Syncobj, HandleToFdAndBackSharesTheSyncobj) {
    DrmDevice dev(full_driver());
    Opened a(&dev), b(&dev);
    u32 ha = a.create();
    drm_syncobj_handle h{ha, 0, -1, 0, 0};
    ASSERT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h), 0);
    EXPECT_GE(h.fd, 3);
    drm_syncobj_handle in{0, 0, h.fd, 0, 0};
    ASSERT_EQ(call(b.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &in), 0);
    EXPECT_EQ(drm_fd_close(h.fd), 0);
    EXPECT_EQ(drm_fd_close(h.fd), -EBADF);
    // Same object: a signal through file a is seen in file b.
    EXPECT_EQ(a.array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, {ha}), 0);
    EXPECT_EQ(b.wait({in.handle}, 0, 0), 0);
}

TEST_F(Syncobj, HandleToFdSyncFileExportAndImport) {
    DrmDevice dev(full_driver());
    Opened a(&dev), b(&dev);
    u32 ha = a.create(), hb = b.create();
    EXPECT_EQ(a.timeline_signal({ha}, {4}), 0);
    constexpr u32 EXPORT = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
    constexpr u32 IMPORT = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
    drm_syncobj_handle h{ha, EXPORT | DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE, -1, 0, 4};
    ASSERT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h), 0);
    drm_syncobj_handle in{hb, IMPORT | DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE, h.fd, 0, 6};
    ASSERT_EQ(call(b.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &in), 0);
    EXPECT_EQ(b.wait({hb}, 0, 0), 0);
    EXPECT_EQ(b.query(hb), 6u);  // imported as timeline point 6
    // Without the TIMELINE flag `point` is ignored: point 9 (past the head) would fail.
    drm_syncobj_handle h0{ha, EXPORT, -1, 0, 9};
    ASSERT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h0), 0);
    EXPECT_EQ(drm_fd_close(h0.fd), 0);
    // A sync_file fd is not a syncobj fd, and vice versa.
    drm_syncobj_handle wrong{0, 0, h.fd, 0, 0};
    EXPECT_EQ(call(b.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &wrong), -EINVAL);
    EXPECT_EQ(drm_fd_close(h.fd), 0);
    // Errors.
    drm_syncobj_handle bad{ha, 8, -1, 0, 0};
    EXPECT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &bad), -EINVAL);  // flags
    bad = {ha, 0, -1, 1, 0};
    EXPECT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &bad), -EINVAL);  // pad
    bad = {77, 0, -1, 0, 0};
    EXPECT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &bad), -EINVAL);  // unknown handle
    bad = {77, EXPORT, -1, 0, 0};
    EXPECT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &bad), -ENOENT);
    bad = {ha, EXPORT | DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE, -1, 0, 9};
    EXPECT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &bad), -EINVAL);  // point past the head
    bad = {ha, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE, -1, 0, 4};
    EXPECT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &bad), -EINVAL);  // point without sync_file
    bad = {ha, 4, -1, 0, 0};
    EXPECT_EQ(call(a.file, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &bad), -EINVAL);
    bad = {hb, 4, 3, 0, 0};
    EXPECT_EQ(call(b.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &bad), -EINVAL);
    bad = {hb, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE, 3, 0, 2};
    EXPECT_EQ(call(b.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &bad), -EINVAL);
    bad = {hb, 0, 12345, 0, 0};
    EXPECT_EQ(call(b.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &bad), -EINVAL);  // closed fd
    bad = {hb, IMPORT, 12345, 0, 0};
    EXPECT_EQ(call(b.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &bad), -EINVAL);
}

TEST_F(Syncobj, FileCloseDropsSyncobjsButNotSharedOnes) {
    DrmDevice dev(full_driver());
    drm_syncobj* kept = nullptr;
    {
        Opened o(&dev);
        u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
        o.create();
        kept = drm_syncobj_find(o.file, h);
    }
    EXPECT_EQ(kref_read(&kept->refcount), 1u);
    drm_syncobj_put(kept);
}

TEST_F(Syncobj, FindFenceKernelApi) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = nullptr;
    EXPECT_EQ(drm_syncobj_find_fence(o.file, 99, 0, 0, &f), -ENOENT);
    EXPECT_EQ(drm_syncobj_find_fence(o.file, h, 0, 0, &f), -EINVAL);
    EXPECT_EQ(drm_syncobj_find_fence(o.file, h, 0, WAIT_ALL, &f), -EINVAL);
    ktime_t start = ktime_get();
    EXPECT_EQ(drm_syncobj_find_fence(o.file, h, 0, WAIT_FOR_SUBMIT, &f), -ETIME);
    EXPECT_GE(ktime_get() - start, 5 * NSEC_PER_SEC);  // DRM_SYNCOBJ_WAIT_FOR_SUBMIT_TIMEOUT
    EXPECT_EQ(o.timeline_signal({h}, {3}), 0);
    ASSERT_EQ(drm_syncobj_find_fence(o.file, h, 2, 0, &f), 0);
    ASSERT_NE(f, nullptr);  // an already-signalled point gives a signalled fence, not null
    EXPECT_TRUE(dma_fence_is_signaled(f));
    dma_fence_put(f);
}

TEST_F(Syncobj, SchedDependencyHelperPropagatesLookupErrors) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    // The lookup fails before the job is touched.
    EXPECT_EQ(drm_sched_job_add_syncobj_dependency(nullptr, o.file, 99, 0), -ENOENT);
    EXPECT_EQ(drm_sched_job_add_syncobj_dependency(nullptr, o.file, h, 0), -EINVAL);
}

TEST_F(Syncobj, SchedJobWaitsForTheSyncobjFence) {
    using namespace drm::testing;
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 bin = o.create(), tl = o.create();
    dma_fence* fb = new_fence();
    dma_fence* ft = new_fence();
    o.replace(bin, fb);
    o.add_point(tl, ft, 3);
    // Fini'd and freed when the test ends, also after a failed ASSERT_ (newest first).
    auto* sched = drm_mock_sched_new(test);
    ASSERT_EQ(kunit_add_action_or_reset(
                  test, [](void* s) { drm_mock_sched_fini(static_cast<drm_mock_scheduler*>(s)); }, sched),
              0);
    auto* entity = drm_mock_sched_entity_new(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    ASSERT_EQ(kunit_add_action_or_reset(
                  test, [](void* e) { drm_mock_sched_entity_free(static_cast<drm_mock_sched_entity*>(e)); }, entity),
              0);
    auto* job = drm_mock_sched_job_new(test, entity);
    ASSERT_EQ(drm_sched_job_add_syncobj_dependency(&job->base, o.file, bin, 0), 0);
    ASSERT_EQ(drm_sched_job_add_syncobj_dependency(&job->base, o.file, tl, 3), 0);
    EXPECT_EQ(drm_sched_job_add_syncobj_dependency(&job->base, o.file, tl, 4), -EINVAL);  // not submitted
    drm_mock_sched_job_submit(job);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(job));
    dma_fence_signal(fb);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(job));  // the timeline point is still pending
    dma_fence_signal(ft);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(job));
    EXPECT_EQ(drm_mock_sched_advance(sched, 1), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_finished(job));
    dma_fence_put(fb);
    dma_fence_put(ft);
}

TEST_F(Syncobj, AllocationFailureIsEnomemAndChangesNothing) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 a = o.create(), b = o.create();
    EXPECT_EQ(o.timeline_signal({a, b}, {1, 1}), 0);
    // Every allocation of TIMELINE_SIGNAL in turn: a failure leaves both timelines at point 1.
    for (u64 nth = 1;; nth++) {
        fault_inject_arm(FaultPlan{.fail_nth = nth});
        int ret = o.timeline_signal({a, b}, {2, 2});
        bool failed = fault_inject_failures() > 0;
        fault_inject_disarm();
        if (!failed) {
            EXPECT_EQ(ret, 0);
            break;
        }
        EXPECT_EQ(ret, -ENOMEM) << "allocation " << nth;
        EXPECT_EQ(o.query(a, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED), 1u) << "allocation " << nth;
        EXPECT_EQ(o.query(b, DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED), 1u) << "allocation " << nth;
    }
    EXPECT_EQ(o.query(a), 2u);
    EXPECT_EQ(o.query(b), 2u);
    // Create: -ENOMEM and no handle.
    fault_inject_arm(FaultPlan{.fail_nth = 1});
    uapi::drm_syncobj_create c{0, DRM_SYNCOBJ_CREATE_SIGNALED};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_CREATE, &c), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(o.file->syncobj_idr.size(), 2u);
}
