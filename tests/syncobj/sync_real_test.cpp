// sw_sync, sync_file poll and SYNCOBJ_EVENTFD in real mode (real threads; the tsan preset runs
// it): what the preload library's clients do from several threads at once.
#include <gtest/gtest.h>

#include <atomic>

#include "drm/drm_syncobj.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/sched.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/sw_sync_helpers.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace sw_sync_test;

class SyncReal : public kshim::testing::RealKernelTest {};

TEST_F(SyncReal, IncFromAnotherThreadWakesEventfdAndSyncobjWaiters) {
    using namespace syncobj_test;
    DrmDevice dev(full_driver());
    Opened o(&dev);
    Timeline tl;
    u32 h = o.create();
    int efd = eventfd_fd_create(0, 0);
    drm_syncobj_eventfd ev{h, 0, 0, efd, 0};
    ASSERT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_EVENTFD, &ev), 0);
    drm_file* file = o.file;
    sync_timeline* obj = tl.obj;
    Task* t = kthread_run(
        [file, obj, h] {
            msleep(5);
            sync_pt* pt = sync_pt_create(obj, 1);
            sync_file* sf = sync_file_create(&pt->base);
            dma_fence_put(&pt->base);
            drm_syncobj_import_sync_file_obj(file, sf, h, 0);
            sync_file_put(sf);
            msleep(5);
            sync_timeline_signal(obj, 1);
            return 0;
        },
        "client");
    u64 v = 0;
    EXPECT_EQ(eventfd_fd_read(efd, &v, false), 0);  // blocks until the inc
    EXPECT_EQ(v, 1u);
    EXPECT_EQ(o.wait({h}, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, ktime_get() + 10 * NSEC_PER_SEC), 0);
    kthread_stop(t);
    EXPECT_EQ(eventfd_fd_close(efd), 0);
}

TEST_F(SyncReal, ConcurrentCreatesIncsAndClosesOnOneTimeline) {
    Timeline tl;
    sync_timeline* obj = tl.obj;
    constexpr int kThreads = 4, kFences = 200;
    std::atomic<int> bad{0};
    Task* workers[kThreads];
    for (int i = 0; i < kThreads; i++) {
        workers[i] = kthread_run(
            [obj, &bad] {
                for (int n = 0; n < kFences; n++) {
                    sync_pt* pt = sync_pt_create(obj, obj->value.load() + 1 + n % 3);
                    if (!pt) {
                        bad++;
                        continue;
                    }
                    sync_file* sf = sync_file_create(&pt->base);
                    eventfd_ctx* ctx = eventfd_ctx_create(0, 0);
                    sync_file_poll_waiter* w = sync_file_poll_eventfd_arm(sf, ctx);
                    dma_fence_put(&pt->base);
                    if (n % 2)
                        sync_timeline_signal(obj, 1);
                    sync_file_poll_eventfd_disarm(w);
                    eventfd_ctx_put(ctx);
                    sync_file_put(sf);
                }
                return 0;
            },
            "worker");
    }
    for (Task* w : workers)
        kthread_stop(w);
    EXPECT_EQ(bad.load(), 0);
    EXPECT_TRUE(obj->pt_tree.empty());  // every fence was released
}
