// sw_sync (/dev/sw_sync, simulated time): fences at seqnos on a timeline, signalled in order by
// SW_SYNC_IOC_INC, born signalled when already passed, shared at equal seqnos, -ENOENT on close,
// deadlines, errnos; and the timeline's fences used through syncobjs (import, WAIT_FOR_SUBMIT,
// SYNCOBJ_EVENTFD), as the syncobj conformance suites do.
#include <gtest/gtest.h>

#include "drm/drm_syncobj.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/sched.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/sw_sync_helpers.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace sw_sync_test;

class SwSync : public kshim::testing::KernelTest {};

TEST_F(SwSync, AFenceSignalsWhenTheTimelineReachesItsValue) {
    Timeline tl;
    int fd = tl.create_fence(3);
    ASSERT_GE(fd, 3);
    dma_fence* f = fd_fence(fd);
    ASSERT_NE(f, nullptr);
    EXPECT_STREQ(dma_fence_driver_name(f), "sw_sync");
    EXPECT_STREQ(dma_fence_timeline_name(f), "test-timeline");
    EXPECT_EQ(f->seqno, 3u);
    EXPECT_EQ(tl.inc(2), 0);
    EXPECT_FALSE(dma_fence_is_signaled(f));
    EXPECT_EQ(fd_status(fd), 0);
    EXPECT_EQ(tl.inc(1), 0);
    EXPECT_TRUE(dma_fence_is_signaled(f));
    EXPECT_EQ(fd_status(fd), 1);
    dma_fence_put(f);
    EXPECT_EQ(drm_fd_close(fd), 0);
    tl.close();
    EXPECT_EQ(sw_sync_timelines_live(), 0u);
}

TEST_F(SwSync, IncSignalsExactlyTheFencesItReached) {
    Timeline tl;
    int f1 = tl.create_fence(1), f5 = tl.create_fence(5), f3 = tl.create_fence(3);
    EXPECT_EQ(tl.inc(3), 0);
    EXPECT_EQ(fd_status(f1), 1);
    EXPECT_EQ(fd_status(f3), 1);
    EXPECT_EQ(fd_status(f5), 0);
    EXPECT_EQ(tl.inc(0), 0);  // a no-op
    EXPECT_EQ(fd_status(f5), 0);
    EXPECT_EQ(tl.inc(2), 0);
    EXPECT_EQ(fd_status(f5), 1);
    for (int fd : {f1, f3, f5})
        EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SwSync, AFenceAtAPassedValueIsBornSignalled) {
    Timeline tl;
    EXPECT_EQ(tl.inc(5), 0);
    int fd = tl.create_fence(4);
    EXPECT_EQ(fd_status(fd), 1);
    int same = tl.create_fence(5);
    EXPECT_EQ(fd_status(same), 1);
    EXPECT_EQ(drm_fd_close(fd), 0);
    EXPECT_EQ(drm_fd_close(same), 0);
}

TEST_F(SwSync, PendingFencesAtTheSameValueAreTheSameFence) {
    Timeline tl;
    int a = tl.create_fence(2), b = tl.create_fence(2), c = tl.create_fence(4);
    dma_fence* fa = fd_fence(a);
    dma_fence* fb = fd_fence(b);
    dma_fence* fc = fd_fence(c);
    EXPECT_EQ(fa, fb);
    EXPECT_NE(fa, fc);
    EXPECT_EQ(fa->context, fc->context);  // one context per timeline
    Timeline other;
    int d = other.create_fence(2);
    dma_fence* fd = fd_fence(d);
    EXPECT_NE(fd->context, fa->context);
    for (dma_fence* f : {fa, fb, fc, fd})
        dma_fence_put(f);
    for (int x : {a, b, c, d})
        EXPECT_EQ(drm_fd_close(x), 0);
}

TEST_F(SwSync, ClosingTheTimelineSignalsPendingFencesWithEnoent) {
    Timeline tl;
    int done = tl.create_fence(1), pending = tl.create_fence(7);
    EXPECT_EQ(tl.inc(1), 0);
    tl.close();
    EXPECT_EQ(fd_status(done), 1);
    EXPECT_EQ(fd_status(pending), -ENOENT);
    // The fences keep the timeline (their name and lock) alive until they go.
    EXPECT_EQ(sw_sync_timelines_live(), 1u);
    EXPECT_EQ(drm_fd_close(done), 0);
    EXPECT_EQ(drm_fd_close(pending), 0);
    EXPECT_EQ(sw_sync_timelines_live(), 0u);
}

TEST_F(SwSync, AFenceReleasedBeforeTheIncLeavesTheTimeline) {
    Timeline tl;
    int fd = tl.create_fence(3);
    EXPECT_EQ(drm_fd_close(fd), 0);  // last reference: the point leaves the tree
    EXPECT_TRUE(tl.obj->pt_tree.empty());
    EXPECT_EQ(tl.inc(5), 0);
}

TEST_F(SwSync, IncAboveIntMaxAdvancesInSteps) {
    Timeline tl;
    int fd = tl.create_fence(5);
    EXPECT_EQ(tl.inc(0xFFFFFFFFu), 0);  // INT_MAX, INT_MAX, then 1: the first step reaches 5
    EXPECT_EQ(fd_status(fd), 1);
    EXPECT_EQ(tl.obj->value.load(), 0xFFFFFFFFu);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SwSync, SeqnosCompareAcrossTheWrap) {
    Timeline tl;
    EXPECT_EQ(tl.inc(0xFFFFFFF0u), 0);
    int before = tl.create_fence(0xFFFFFFF8u), after = tl.create_fence(4);  // 4 is "after" the wrap
    EXPECT_EQ(fd_status(before), 0);
    EXPECT_EQ(fd_status(after), 0);
    EXPECT_EQ(tl.inc(0x10), 0);  // value 0: 0xFFFFFFF8 passed, 4 not yet
    EXPECT_EQ(fd_status(before), 1);
    EXPECT_EQ(fd_status(after), 0);
    EXPECT_EQ(tl.inc(4), 0);
    EXPECT_EQ(fd_status(after), 1);
    EXPECT_EQ(drm_fd_close(before), 0);
    EXPECT_EQ(drm_fd_close(after), 0);
}

TEST_F(SwSync, DeadlinesAreReadBackEarliestFirst) {
    Timeline tl;
    int fd = tl.create_fence(1);
    u64 dl = 0;
    EXPECT_EQ(tl.get_deadline(fd, &dl), -ENOENT);  // none set yet
    sync_set_deadline ts{5000, 0};
    {
        UserRange r(ts);
        EXPECT_EQ(sync_file_fd_ioctl(fd, SYNC_IOC_SET_DEADLINE, user_ptr(&ts)), 0);
    }
    EXPECT_EQ(tl.get_deadline(fd, &dl), 0);
    EXPECT_EQ(dl, 5000u);
    ts = {9000, 0};
    {
        UserRange r(ts);
        EXPECT_EQ(sync_file_fd_ioctl(fd, SYNC_IOC_SET_DEADLINE, user_ptr(&ts)), 0);  // later: ignored
        ts = {3000, 0};
        EXPECT_EQ(sync_file_fd_ioctl(fd, SYNC_IOC_SET_DEADLINE, user_ptr(&ts)), 0);
    }
    EXPECT_EQ(tl.get_deadline(fd, &dl), 0);
    EXPECT_EQ(dl, 3000u);
    EXPECT_EQ(tl.get_deadline(fd, &dl, 1), -EINVAL);     // deadline_ns must be 0 on input
    EXPECT_EQ(tl.get_deadline(fd, &dl, 0, 1), -EINVAL);  // pad
    EXPECT_EQ(tl.get_deadline(fd + 100, &dl), -EINVAL);  // not a sync_file
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SwSync, GetDeadlineOfAForeignFenceIsEinval) {
    Timeline tl;
    dma_fence* stub = dma_fence_get_stub();
    sync_file* sf = sync_file_create(stub);
    dma_fence_put(stub);
    int fd = drm_fd_install_sync_file(sf);
    sync_file_put(sf);
    u64 dl = 0;
    EXPECT_EQ(tl.get_deadline(fd, &dl), -EINVAL);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SwSync, BadPointersAndUnknownCommands) {
    Timeline tl;
    sw_sync_create_fence_data d{};
    EXPECT_EQ(sw_sync_ioctl(tl.obj, SW_SYNC_IOC_CREATE_FENCE, user_ptr(&d)), -EFAULT);
    u32 n = 1;
    EXPECT_EQ(sw_sync_ioctl(tl.obj, SW_SYNC_IOC_INC, user_ptr(&n)), -EFAULT);
    EXPECT_EQ(tl.obj->value.load(), 0u);
    EXPECT_EQ(sw_sync_ioctl(tl.obj, SW_SYNC_IOC_INC + 1, 0), -ENOTTY);
    EXPECT_EQ(sw_sync_ioctl(tl.obj, SYNC_IOC_MERGE, 0), -ENOTTY);
    EXPECT_TRUE(tl.obj->pt_tree.empty());
}

TEST_F(SwSync, AllocationFailuresAreEnomemAndLeaveNothingBehind) {
    Timeline tl;
    for (u64 nth = 1;; nth++) {
        fault_inject_arm(FaultPlan{.fail_nth = nth});
        int fd = tl.create_fence(1);
        bool failed = fault_inject_failures() > 0;
        fault_inject_disarm();
        if (!failed) {
            ASSERT_GE(fd, 3);
            EXPECT_EQ(drm_fd_close(fd), 0);
            break;
        }
        // The fd table reports its own allocation failure as -ENOMEM too.
        EXPECT_EQ(fd, -ENOMEM) << "allocation " << nth;
        EXPECT_TRUE(tl.obj->pt_tree.empty()) << "allocation " << nth;
    }
    tl.close();
    EXPECT_EQ(sw_sync_timelines_live(), 0u);
}

// ---- with syncobjs ----

class SwSyncSyncobj : public kshim::testing::KernelTest {};

TEST_F(SwSyncSyncobj, ImportedFenceIsWaitedForThenSignalledByInc) {
    using namespace syncobj_test;
    DrmDevice dev(full_driver());
    Opened o(&dev);
    Timeline tl;
    int fd = tl.create_fence(1);
    u32 h = o.create();
    uapi::drm_syncobj_handle imp{h, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE, fd, 0, 0};
    ASSERT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp), 0);
    EXPECT_EQ(o.wait({h}, 0, 0), -ETIME);
    sync_timeline* obj = tl.obj;
    Task* t = kthread_run(
        [obj] {
            msleep(5);
            sync_timeline_signal(obj, 1);
            return 0;
        },
        "inc");
    ktime_t start = ktime_get();
    EXPECT_EQ(o.wait({h}, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, start + NSEC_PER_SEC), 0);
    EXPECT_GE(ktime_get() - start, 5 * NSEC_PER_MSEC);
    kthread_stop(t);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SwSyncSyncobj, WaitForSubmitWaitsForTheImportThenTheInc) {
    using namespace syncobj_test;
    DrmDevice dev(full_driver());
    Opened o(&dev);
    Timeline tl;
    u32 h = o.create();
    drm_file* file = o.file;
    sync_timeline* obj = tl.obj;
    int efd = eventfd_fd_create(0, 0);
    drm_syncobj_eventfd ev{h, 0, 0, efd, 0};
    ASSERT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_EVENTFD, &ev), 0);
    Task* t = kthread_run(
        [file, obj, h] {
            msleep(5);
            // What a client's other thread does: make a fence, put it in the syncobj, signal it.
            sync_pt* pt = sync_pt_create(obj, 1);
            sync_file* sf = sync_file_create(&pt->base);
            dma_fence_put(&pt->base);
            EXPECT_EQ(drm_syncobj_import_sync_file_obj(file, sf, h, 0), 0);
            sync_file_put(sf);
            msleep(5);
            sync_timeline_signal(obj, 1);
            return 0;
        },
        "client");
    ktime_t start = ktime_get();
    EXPECT_EQ(o.wait({h}, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, start + NSEC_PER_SEC), 0);
    EXPECT_GE(ktime_get() - start, 10 * NSEC_PER_MSEC);
    u64 v = 0;
    EXPECT_EQ(eventfd_fd_read(efd, &v, true), 0);
    EXPECT_EQ(v, 1u);
    kthread_stop(t);
    EXPECT_EQ(eventfd_fd_close(efd), 0);
}

TEST_F(SwSyncSyncobj, TimelinePointsFromSwSyncFences) {
    using namespace syncobj_test;
    DrmDevice dev(full_driver());
    Opened o(&dev);
    Timeline tl;
    u32 h = o.create();
    for (u32 p = 1; p <= 3; p++) {
        int fd = tl.create_fence(p);
        uapi::drm_syncobj_handle imp{
            h, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE | DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE, fd, 0, p};
        ASSERT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp), 0);
        EXPECT_EQ(drm_fd_close(fd), 0);
    }
    EXPECT_EQ(o.query(h), 0u);
    EXPECT_EQ(tl.inc(2), 0);
    EXPECT_EQ(o.query(h), 2u);
    EXPECT_EQ(o.timeline_wait({h}, {2}, 0, 0), 0);
    EXPECT_EQ(o.timeline_wait({h}, {3}, 0, 0), -ETIME);
    tl.close();  // point 3 signals with -ENOENT
    EXPECT_EQ(o.timeline_wait({h}, {3}, 0, 0), 0);
}
