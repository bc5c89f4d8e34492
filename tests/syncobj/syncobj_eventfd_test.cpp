// DRM_IOCTL_SYNCOBJ_EVENTFD (simulated time): fires once when the fence at the point signals (at
// once if it has), or when the point gets a fence with WAIT_AVAILABLE; re-armed across
// reset/replace until then; entries of a freed syncobj go without firing; upstream's errnos. Also
// the kshim eventfd itself (counter, semaphore mode, table, real descriptors via the resolver).
#include <gtest/gtest.h>

#include <optional>

#include <sys/eventfd.h>
#include <unistd.h>

#include "kernel_shim/eventfd.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/sched.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

namespace {

constexpr u32 WAIT_AVAILABLE = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE;

int eventfd_ioctl(drm_file* f, u32 handle, u64 point, int fd, u32 flags = 0, u32 pad = 0) {
    drm_syncobj_eventfd a{handle, flags, point, fd, pad};
    return call(f, DRM_IOCTL_SYNCOBJ_EVENTFD, &a);
}

// What a non-blocking read(2) returns: the count, 0 for -EAGAIN.
u64 drain(int efd) {
    u64 v = 0;
    int ret = eventfd_fd_read(efd, &v, true);
    EXPECT_TRUE(ret == 0 || ret == -EAGAIN) << ret;
    return ret == 0 ? v : 0;
}

// An eventfd of the in-process table, closed at the end of the scope.
struct Efd {
    Efd() : fd(eventfd_fd_create(0, 0)) { EXPECT_GE(fd, 0); }
    ~Efd() { EXPECT_EQ(eventfd_fd_close(fd), 0); }
    int fd;
};

}  // namespace

class SyncobjEventfd : public kshim::testing::KernelTest {};

// ---- binary syncobjs (point 0) ----

TEST_F(SyncobjEventfd, SignalledFenceFiresImmediatelyAndOnlyOnce) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), 0);
    EXPECT_EQ(drain(e.fd), 1u);
    // The entry is gone: later fences on the syncobj do not fire it again.
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, {h}), 0);
    EXPECT_EQ(drain(e.fd), 0u);
}

TEST_F(SyncobjEventfd, PendingFenceFiresWhenItSignalsLater) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), 0);
    EXPECT_EQ(drain(e.fd), 0u);
    Task* t = kthread_run(
        [f] {
            msleep(10);
            dma_fence_signal(f);
            return 0;
        },
        "signaller");
    ktime_t start = ktime_get();
    u64 v = 0;
    ASSERT_EQ(eventfd_fd_read(e.fd, &v, false), 0);  // blocks until the fence signals
    EXPECT_EQ(v, 1u);
    EXPECT_GE(ktime_get() - start, 10 * NSEC_PER_MSEC);
    EXPECT_LT(ktime_get() - start, 20 * NSEC_PER_MSEC);
    kthread_stop(t);
    dma_fence_put(f);
}

TEST_F(SyncobjEventfd, NoFenceYetArmsOnTheNextReplaceNotOnReset) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), 0);
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_RESET, {h}), 0);  // still no fence: keeps waiting
    EXPECT_EQ(drain(e.fd), 0u);
    dma_fence* f = new_fence();
    o.replace(h, f);
    EXPECT_EQ(drain(e.fd), 0u);  // armed on f, which is pending
    // Replacing f afterwards does not matter: the entry waits for the fence it found.
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_RESET, {h}), 0);
    EXPECT_EQ(drain(e.fd), 0u);
    dma_fence_signal(f);
    EXPECT_EQ(drain(e.fd), 1u);
    dma_fence_put(f);
}

TEST_F(SyncobjEventfd, EachRegistrationFiresItsOwnEventfdOnce) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    Efd a, b;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, a.fd), 0);
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, a.fd), 0);  // twice on the same eventfd
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, b.fd), 0);
    dma_fence_signal(f);
    EXPECT_EQ(drain(a.fd), 2u);
    EXPECT_EQ(drain(b.fd), 1u);
    dma_fence_put(f);
}

TEST_F(SyncobjEventfd, TheEventfdMayBeClosedBeforeItFires) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    int efd = eventfd_fd_create(0, 0);
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, efd), 0);
    EXPECT_EQ(eventfd_fd_close(efd), 0);  // the entry keeps its own reference to the context
    EXPECT_EQ(eventfd_fd_count(), 0u);
    dma_fence_signal(f);  // signals the orphaned context, then frees it (teardown checks leaks)
    dma_fence_put(f);
}

// ---- timelines ----

TEST_F(SyncobjEventfd, TimelinePointFiresWhenThatPointSignals) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 2, e.fd), 0);
    dma_fence* f1 = new_fence();
    dma_fence* f2 = new_fence();
    o.add_point(h, f1, 1);
    EXPECT_EQ(drain(e.fd), 0u);  // point 2 not submitted yet
    o.add_point(h, f2, 2);
    dma_fence_signal(f2);
    EXPECT_EQ(drain(e.fd), 0u);  // point 2 is a chain link: it also waits for point 1
    dma_fence_signal(f1);
    EXPECT_EQ(drain(e.fd), 1u);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(SyncobjEventfd, AnAlreadySignalledPointBehindLaterOnesFiresAtOnce) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    EXPECT_EQ(o.timeline_signal({h}, {3}), 0);
    dma_fence* f = new_fence();
    o.add_point(h, f, 5);
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 2, e.fd), 0);  // 2 <= 3: signalled, though 5 is pending
    EXPECT_EQ(drain(e.fd), 1u);
    Efd later;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 4, later.fd), 0);  // 4 belongs to 5's link
    EXPECT_EQ(drain(later.fd), 0u);
    dma_fence_signal(f);
    EXPECT_EQ(drain(later.fd), 1u);
    dma_fence_put(f);
}

TEST_F(SyncobjEventfd, WaitAvailableFiresWhenThePointGetsAFence) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 3, e.fd, WAIT_AVAILABLE), 0);
    dma_fence* f1 = new_fence();
    dma_fence* f3 = new_fence();
    o.add_point(h, f1, 1);
    EXPECT_EQ(drain(e.fd), 0u);
    o.add_point(h, f3, 3);
    EXPECT_EQ(drain(e.fd), 1u);  // f3 and f1 still pending
    dma_fence_signal(f1);
    dma_fence_signal(f3);
    EXPECT_EQ(drain(e.fd), 0u);  // once only
    // On a point that exists already, WAIT_AVAILABLE fires during the ioctl.
    ASSERT_EQ(eventfd_ioctl(o.file, h, 1, e.fd, WAIT_AVAILABLE), 0);
    EXPECT_EQ(drain(e.fd), 1u);
    dma_fence_put(f1);
    dma_fence_put(f3);
}

TEST_F(SyncobjEventfd, ANonZeroPointOnABinarySyncobjNeverFires) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 1, e.fd), 0);  // accepted, as upstream
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, {h}), 0);
    EXPECT_EQ(drain(e.fd), 0u);
    // Destroying the syncobj frees the waiting entry (teardown's leak check).
}

// ---- lifetime ----

TEST_F(SyncobjEventfd, DestroyingTheSyncobjDropsWaitingEntriesWithoutFiring) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), 0);
    ASSERT_EQ(eventfd_ioctl(o.file, h, 7, e.fd, WAIT_AVAILABLE), 0);
    MemCounters before = mem_counters();
    uapi::drm_syncobj_destroy d{h, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_DESTROY, &d), 0);
    // The syncobj and both entries are freed now, not at file close.
    EXPECT_EQ(mem_counters().kmalloc_live, before.kmalloc_live - 3);
    EXPECT_EQ(drain(e.fd), 0u);
}

TEST_F(SyncobjEventfd, AnArmedEntryOutlivesTheSyncobjUntilItsFenceSignals) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    Efd e;
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), 0);
    uapi::drm_syncobj_destroy d{h, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_DESTROY, &d), 0);
    dma_fence_signal(f);
    EXPECT_EQ(drain(e.fd), 1u);
    dma_fence_put(f);
}

TEST_F(SyncobjEventfd, ClosingTheFileFreesEverything) {
    DrmDevice dev(full_driver());
    Efd e;
    {
        Opened o(&dev);
        u32 a = o.create(), b = o.create();
        EXPECT_EQ(o.timeline_signal({b}, {1}), 0);
        ASSERT_EQ(eventfd_ioctl(o.file, a, 0, e.fd), 0);
        ASSERT_EQ(eventfd_ioctl(o.file, b, 9, e.fd), 0);
    }
    EXPECT_EQ(drain(e.fd), 0u);
}

// ---- bad arguments ----

TEST_F(SyncobjEventfd, BadArgumentsGetUpstreamErrnos) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    Efd e;
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, e.fd, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL), -EINVAL);
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, e.fd, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT), -EINVAL);
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, e.fd, 0, 1), -EINVAL);  // pad
    EXPECT_EQ(eventfd_ioctl(o.file, 99, 0, e.fd), -ENOENT);
    // The handle is checked before the descriptor.
    EXPECT_EQ(eventfd_ioctl(o.file, 99, 0, -1), -ENOENT);
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, -1), -EBADF);
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, e.fd + 1), -EBADF);  // not open
    EXPECT_EQ(drain(e.fd), 0u);                                // nothing was registered by the failed calls
    drm_syncobj_eventfd a{h, 0, 0, e.fd, 0};
    EXPECT_EQ(drm::ioctl(o.file, DRM_IOCTL_SYNCOBJ_EVENTFD, &a), -EFAULT);  // not user memory
}

TEST_F(SyncobjEventfd, AllocationFailureIsEnomemAndRegistersNothing) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    Efd e;
    fault_inject_arm(FaultPlan{.fail_nth = 1});
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), -ENOMEM);
    EXPECT_GT(fault_inject_failures(), 0u);
    fault_inject_disarm();
    EXPECT_EQ(o.array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, {h}), 0);
    EXPECT_EQ(drain(e.fd), 0u);  // nothing was waiting (teardown: the eventfd reference went too)
}

TEST_F(SyncobjEventfd, NeedsTheTimelineFeature) {
    DriverDesc d = full_driver();
    d.driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ;  // upstream checks TIMELINE
    DrmDevice dev(d);
    Opened o(&dev);
    u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    Efd e;
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), -EOPNOTSUPP);
    EXPECT_EQ(drain(e.fd), 0u);
}

TEST_F(SyncobjEventfd, ServedOnRenderAndPrimaryNodes) {
    DrmDevice dev(full_driver());
    drm_file* primary;
    ASSERT_EQ(drm_open(&dev, &primary, false), 0);
    uapi::drm_syncobj_create c{0, DRM_SYNCOBJ_CREATE_SIGNALED};
    ASSERT_EQ(call(primary, DRM_IOCTL_SYNCOBJ_CREATE, &c), 0);
    Efd e;
    EXPECT_EQ(eventfd_ioctl(primary, c.handle, 0, e.fd), 0);
    EXPECT_EQ(drain(e.fd), 1u);
    drm_release(primary);
}

// ---- real descriptors: a client whose table looks the process's eventfds up (the preload) ----

class SyncobjEventfdHost : public kshim::testing::KernelTest {
protected:
    // An open descriptor that is not an eventfd stands for a file of another kind.
    static constexpr file_operations kHostFops = {};
    static constexpr files_struct_ops kHostOps = {
        .lookup_miss = [](files_struct*, int fd) -> file* {
            file* f = eventfd_host_file(fd);
            if (IS_ERR(f) && PTR_ERR(f) == -EINVAL)
                f = anon_inode_getfile("host", &kHostFops, nullptr, 0);
            return IS_ERR(f) ? nullptr : f;
        },
    };
    files_struct files_{0, &kHostOps};
    std::optional<FilesScope> scope_;
    void SetUp() override {
        KernelTest::SetUp();
        scope_.emplace(&files_);
    }
    void TearDown() override {
        scope_.reset();
        KernelTest::TearDown();
    }
};

TEST_F(SyncobjEventfdHost, ARealEventfdIsWrittenWhenTheFenceSignals) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT_GE(efd, 0);
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, efd), 0);
    u64 v = 0;
    EXPECT_EQ(::read(efd, &v, sizeof v), -1);  // EAGAIN: nothing yet
    dma_fence_signal(f);
    ASSERT_EQ(::read(efd, &v, sizeof v), static_cast<ssize_t>(sizeof v));
    EXPECT_EQ(v, 1u);
    ::close(efd);
    dma_fence_put(f);
}

TEST_F(SyncobjEventfdHost, TheContextSurvivesTheClientClosingItsDescriptor) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create();
    dma_fence* f = new_fence();
    o.replace(h, f);
    int efd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT_EQ(eventfd_ioctl(o.file, h, 0, efd), 0);
    int dup = ::dup(efd);
    ::close(efd);  // the entry holds its own duplicate
    dma_fence_signal(f);
    u64 v = 0;
    ASSERT_EQ(::read(dup, &v, sizeof v), static_cast<ssize_t>(sizeof v));
    EXPECT_EQ(v, 1u);
    ::close(dup);
    dma_fence_put(f);
}

TEST_F(SyncobjEventfdHost, AnotherKindOfDescriptorIsEinvalAndAClosedOneEbadf) {
    DrmDevice dev(full_driver());
    Opened o(&dev);
    u32 h = o.create(DRM_SYNCOBJ_CREATE_SIGNALED);
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, p[0]), -EINVAL);
    ::close(p[0]);
    ::close(p[1]);
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, p[0]), -EBADF);
    // In-process descriptors still resolve behind the hook.
    Efd e;
    EXPECT_EQ(eventfd_ioctl(o.file, h, 0, e.fd), 0);
    EXPECT_EQ(drain(e.fd), 1u);
}

// ---- the eventfd model itself ----

class Eventfd : public kshim::testing::KernelTest {};

TEST_F(Eventfd, CountsAccumulateAndAReadTakesThemAll) {
    int fd = eventfd_fd_create(2, 0);
    eventfd_ctx* ctx = eventfd_ctx_fdget(fd);
    ASSERT_FALSE(IS_ERR(ctx));
    eventfd_signal(ctx);
    eventfd_signal(ctx);
    EXPECT_EQ(eventfd_ctx_count(ctx), 4u);
    u64 v = 0;
    EXPECT_EQ(eventfd_fd_read(fd, &v, true), 0);
    EXPECT_EQ(v, 4u);
    EXPECT_EQ(eventfd_fd_read(fd, &v, true), -EAGAIN);
    eventfd_ctx_put(ctx);
    EXPECT_EQ(eventfd_fd_close(fd), 0);
    EXPECT_EQ(eventfd_fd_close(fd), -EBADF);
    EXPECT_EQ(eventfd_fd_read(fd, &v, true), -EBADF);
}

TEST_F(Eventfd, SemaphoreModeReadsOneAtATime) {
    int fd = eventfd_fd_create(2, EFD_SEMAPHORE);
    u64 v = 0;
    EXPECT_EQ(eventfd_fd_read(fd, &v, true), 0);
    EXPECT_EQ(v, 1u);
    EXPECT_EQ(eventfd_fd_read(fd, &v, true), 0);
    EXPECT_EQ(eventfd_fd_read(fd, &v, true), -EAGAIN);
    EXPECT_EQ(eventfd_fd_close(fd), 0);
}

TEST_F(Eventfd, NonblockFlagOfTheDescriptorApplies) {
    int fd = eventfd_fd_create(0, EFD_NONBLOCK);
    u64 v = 0;
    EXPECT_EQ(eventfd_fd_read(fd, &v, false), -EAGAIN);
    EXPECT_EQ(eventfd_fd_close(fd), 0);
}

TEST_F(Eventfd, BadFlagsAndUnknownDescriptors) {
    EXPECT_EQ(eventfd_fd_create(0, 0x100), -EINVAL);
    EXPECT_EQ(PTR_ERR(eventfd_ctx_fdget(-1)), -EBADF);
    EXPECT_EQ(PTR_ERR(eventfd_ctx_fdget(3)), -EBADF);
    EXPECT_EQ(PTR_ERR(eventfd_ctx_fdget(1 << 24)), -EBADF);
}

TEST_F(Eventfd, ABlockedReaderWakesOnSignal) {
    int fd = eventfd_fd_create(0, 0);
    eventfd_ctx* ctx = eventfd_ctx_fdget(fd);
    ktime_t start = ktime_get();
    Task* t = kthread_run(
        [ctx] {
            msleep(3);
            eventfd_signal(ctx);
            return 0;
        },
        "signaller");
    u64 v = 0;
    EXPECT_EQ(eventfd_fd_read(fd, &v, false), 0);
    EXPECT_EQ(v, 1u);
    EXPECT_GE(ktime_get() - start, 3 * NSEC_PER_MSEC);
    kthread_stop(t);
    eventfd_ctx_put(ctx);
    EXPECT_EQ(eventfd_fd_close(fd), 0);
}
