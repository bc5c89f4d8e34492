// drm_syncobj in real mode (real threads and clock; run under TSan by the tsan preset): a wait
// that is blocked while another thread submits or signals.
#include <gtest/gtest.h>

#include <atomic>

#include "kernel_shim/sched.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

class SyncobjReal : public kshim::testing::RealKernelTest {};

TEST_F(SyncobjReal, SignalFromAnotherThreadWakesABlockedWait) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 a = o.create(), b = o.create();
    dma_fence* fa = new_fence();
    dma_fence* fb = new_fence();
    o.replace(a, fa);
    o.replace(b, fb);
    Task* t = kthread_run(
        [fa, fb] {
            msleep(20);
            dma_fence_signal(fa);
            msleep(5);
            dma_fence_signal(fb);
            return 0;
        },
        "signaller");
    EXPECT_EQ(o.wait({a, b}, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, ktime_get() + 10 * NSEC_PER_SEC), 0);
    EXPECT_TRUE(dma_fence_is_signaled(fa));
    EXPECT_TRUE(dma_fence_is_signaled(fb));
    kthread_stop(t);
    dma_fence_put(fa);
    dma_fence_put(fb);
}

TEST_F(SyncobjReal, WaitForSubmitSeesAFenceFromAnotherThread) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    drm_file* file = o.file;
    Task* t = kthread_run(
        [file, h] {
            msleep(10);
            u32 handle = h;
            UserRange r(&handle, sizeof handle);
            drm_syncobj_array arr{user_ptr(&handle), 1, 0};
            return call(file, DRM_IOCTL_SYNCOBJ_SIGNAL, &arr);
        },
        "submitter");
    EXPECT_EQ(o.wait({h}, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, ktime_get() + 10 * NSEC_PER_SEC), 0);
    EXPECT_EQ(kthread_stop(t), 0);
}

TEST_F(SyncobjReal, TimelinePointsSignalledConcurrentlyWithAWait) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    drm_file* file = o.file;
    Task* t = kthread_run(
        [file, h] {
            for (u64 p = 1; p <= 50; p++) {
                u32 handle = h;
                u64 point = p;
                UserRange rh(&handle, sizeof handle), rp(&point, sizeof point);
                drm_syncobj_timeline_array a{user_ptr(&handle), user_ptr(&point), 1, 0};
                if (call(file, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a))
                    return -1;
            }
            return 0;
        },
        "timeline");
    EXPECT_EQ(o.timeline_wait({h}, {50}, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, ktime_get() + 10 * NSEC_PER_SEC), 0);
    EXPECT_EQ(kthread_stop(t), 0);
    EXPECT_EQ(o.query(h), 50u);
}
