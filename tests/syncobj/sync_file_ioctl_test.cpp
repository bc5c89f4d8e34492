// The sync_file descriptor's ioctls (SYNC_IOC_FILE_INFO, SYNC_IOC_MERGE, SYNC_IOC_SET_DEADLINE)
// and poll, on sw_sync fences, with upstream's errnos.
#include <gtest/gtest.h>

#include <cstring>

#include "drm/drm_syncobj.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/sched.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/sw_sync_helpers.h"

using namespace sw_sync_test;

namespace {

long file_info(int fd, sync_file_info* info) {
    UserRange r(*info);
    return sync_file_fd_ioctl(fd, SYNC_IOC_FILE_INFO, user_ptr(info));
}

// FILE_INFO with room for `room` entries in `out`.
long file_info_with(int fd, sync_file_info* info, std::vector<sync_fence_info>* out, u32 room) {
    out->assign(room, sync_fence_info{});
    UserRange r(out->data(), room * sizeof(sync_fence_info));
    *info = {};
    info->num_fences = room;
    info->sync_fence_info = user_ptr(out->data());
    return file_info(fd, info);
}

// SYNC_IOC_MERGE: the new fd, or the errno.
int merge(int fd, int fd2, const char* name, u32 flags = 0, u32 pad = 0) {
    sync_merge_data m{};
    std::snprintf(m.name, sizeof m.name, "%s", name);
    m.fd2 = fd2;
    m.fence = -1;
    m.flags = flags;
    m.pad = pad;
    UserRange r(m);
    long ret = sync_file_fd_ioctl(fd, SYNC_IOC_MERGE, user_ptr(&m));
    return ret ? static_cast<int>(ret) : m.fence;
}

}  // namespace

class SyncFileIoctl : public kshim::testing::KernelTest {};

TEST_F(SyncFileIoctl, FileInfoCountOnlyGivesTheFilesStatusAndName) {
    Timeline tl("tl");
    int fd = tl.create_fence(2);
    sync_file_info info{};
    info.status = 77;
    ASSERT_EQ(file_info(fd, &info), 0);
    EXPECT_EQ(info.num_fences, 1u);
    EXPECT_EQ(info.status, 0);
    dma_fence* f = fd_fence(fd);
    char want[32];
    std::snprintf(want, sizeof want, "sw_sync-tl%llu-2", static_cast<unsigned long long>(f->context));
    EXPECT_STREQ(info.name, want);  // no user name: driver-timeline-context-seqno
    dma_fence_put(f);
    EXPECT_EQ(tl.inc(2), 0);
    // The count came back in num_fences: asking again as is wants the array (none given).
    EXPECT_EQ(file_info(fd, &info), -EFAULT);
    info = {};
    ASSERT_EQ(file_info(fd, &info), 0);
    EXPECT_EQ(info.status, 1);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, FileInfoListsEveryFenceOfAMerge) {
    msleep(1);  // so that signal timestamps are not 0
    Timeline a("a"), b("b");
    int fa = a.create_fence(1), fb = b.create_fence(1);
    int m = merge(fa, fb, "both");
    ASSERT_GE(m, 3);
    sync_file_info info{};
    ASSERT_EQ(file_info(m, &info), 0);
    EXPECT_EQ(info.num_fences, 2u);
    EXPECT_STREQ(info.name, "both");
    std::vector<sync_fence_info> fi;
    ASSERT_EQ(file_info_with(m, &info, &fi, 4), 0);  // more room than needed is fine
    EXPECT_EQ(info.num_fences, 2u);
    EXPECT_EQ(info.status, 0);
    EXPECT_STREQ(fi[0].driver_name, "sw_sync");
    EXPECT_EQ(fi[0].status, 0);
    EXPECT_EQ(fi[0].timestamp_ns, 0u);
    EXPECT_EQ(a.inc(1), 0);
    ASSERT_EQ(file_info_with(m, &info, &fi, 2), 0);
    EXPECT_EQ(info.status, 0);  // one still pending
    int signalled = (fi[0].status == 1) + (fi[1].status == 1);
    EXPECT_EQ(signalled, 1);
    b.close();  // the other ends with -ENOENT
    ASSERT_EQ(file_info_with(m, &info, &fi, 2), 0);
    EXPECT_EQ(info.status, -ENOENT);  // an error wins over signalled
    EXPECT_NE(fi[0].timestamp_ns, 0u);
    EXPECT_NE(fi[1].timestamp_ns, 0u);
    for (int fd : {fa, fb, m})
        EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, FileInfoErrnos) {
    Timeline a("a"), b("b");
    int fa = a.create_fence(1), fb = b.create_fence(1);
    int m = merge(fa, fb, "both");
    sync_file_info info{};
    std::vector<sync_fence_info> fi;
    EXPECT_EQ(file_info_with(m, &info, &fi, 1), -EINVAL);  // room for fewer than there are
    info = {};
    info.flags = 1;
    EXPECT_EQ(file_info(m, &info), -EINVAL);
    info = {};
    info.pad = 1;
    EXPECT_EQ(file_info(m, &info), -EINVAL);
    info = {};
    info.num_fences = 2;
    info.sync_fence_info = user_ptr(fi.data());  // not registered: -EFAULT
    EXPECT_EQ(file_info(m, &info), -EFAULT);
    EXPECT_EQ(sync_file_fd_ioctl(m, SYNC_IOC_FILE_INFO, user_ptr(&info)), -EFAULT);  // struct itself
    for (int fd : {fa, fb, m})
        EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, MergedFenceSignalsWhenBothHave) {
    Timeline a("a"), b("b");
    int fa = a.create_fence(1), fb = b.create_fence(3);
    int m = merge(fa, fb, "m");
    EXPECT_NE(m, fa);
    EXPECT_NE(m, fb);
    EXPECT_EQ(fd_status(m), 0);
    EXPECT_EQ(b.inc(3), 0);
    EXPECT_EQ(fd_status(m), 0);
    EXPECT_EQ(a.inc(1), 0);
    EXPECT_EQ(fd_status(m), 1);
    for (int fd : {fa, fb, m})
        EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, MergingFencesOfOneTimelineKeepsTheLater) {
    Timeline tl;
    int f2 = tl.create_fence(2), f5 = tl.create_fence(5);
    int m = merge(f2, f5, "same");
    sync_file_info info{};
    ASSERT_EQ(file_info(m, &info), 0);
    EXPECT_EQ(info.num_fences, 1u);
    dma_fence* merged = fd_fence(m);
    dma_fence* later = fd_fence(f5);
    EXPECT_EQ(merged, later);
    dma_fence_put(merged);
    dma_fence_put(later);
    int self = merge(f2, f2, "self");
    ASSERT_GE(self, 3);
    info = {};
    ASSERT_EQ(file_info(self, &info), 0);
    EXPECT_EQ(info.num_fences, 1u);
    for (int fd : {f2, f5, m, self})
        EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, MergeErrnos) {
    Timeline tl;
    int fa = tl.create_fence(1);
    EXPECT_EQ(merge(fa, fa, "x", 1), -EINVAL);     // flags
    EXPECT_EQ(merge(fa, fa, "x", 0, 1), -EINVAL);  // pad
    EXPECT_EQ(merge(fa, fa + 50, "x"), -ENOENT);   // fd2 not open
    EXPECT_EQ(merge(fa, -1, "x"), -ENOENT);
    sync_merge_data m{};
    m.fd2 = fa;
    EXPECT_EQ(sync_file_fd_ioctl(fa, SYNC_IOC_MERGE, user_ptr(&m)), -EFAULT);
    EXPECT_EQ(drm_fd_close(fa), 0);
}

TEST_F(SyncFileIoctl, MergeNamesAreTruncatedToThirtyOneCharacters) {
    Timeline tl;
    int fa = tl.create_fence(1);
    sync_merge_data d{};
    std::memset(d.name, 'n', sizeof d.name);  // no NUL
    d.fd2 = fa;
    {
        UserRange r(d);
        ASSERT_EQ(sync_file_fd_ioctl(fa, SYNC_IOC_MERGE, user_ptr(&d)), 0);
    }
    sync_file_info info{};
    ASSERT_EQ(file_info(d.fence, &info), 0);
    EXPECT_EQ(std::strlen(info.name), 31u);
    EXPECT_EQ(drm_fd_close(fa), 0);
    EXPECT_EQ(drm_fd_close(d.fence), 0);
}

TEST_F(SyncFileIoctl, SetDeadlineReachesTheFence) {
    Timeline tl;
    int fd = tl.create_fence(1);
    sync_set_deadline ts{1234, 1};
    UserRange r(ts);
    EXPECT_EQ(sync_file_fd_ioctl(fd, SYNC_IOC_SET_DEADLINE, user_ptr(&ts)), -EINVAL);  // pad
    u64 dl = 0;
    EXPECT_EQ(tl.get_deadline(fd, &dl), -ENOENT);
    ts.pad = 0;
    EXPECT_EQ(sync_file_fd_ioctl(fd, SYNC_IOC_SET_DEADLINE, user_ptr(&ts)), 0);
    EXPECT_EQ(tl.get_deadline(fd, &dl), 0);
    EXPECT_EQ(dl, 1234u);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, DescriptorsThatAreNotSyncFiles) {
    using namespace drm;
    drm_syncobj* s;
    ASSERT_EQ(drm::drm_syncobj_create(&s, 0, nullptr), 0);
    int sfd = drm_fd_install_syncobj(s);
    drm_syncobj_put(s);
    sync_file_info info{};
    EXPECT_EQ(file_info(sfd, &info), -ENOTTY);  // a syncobj file has no ioctls
    EXPECT_EQ(file_info(sfd + 1, &info), -EBADF);
    EXPECT_EQ(file_info(-1, &info), -EBADF);
    Timeline tl;
    int fd = tl.create_fence(1);
    EXPECT_EQ(sync_file_fd_ioctl(fd, SW_SYNC_IOC_INC, 0), -ENOTTY);
    // A syncobj fd is no merge partner either.
    EXPECT_EQ(merge(fd, sfd, "x"), -ENOENT);
    EXPECT_EQ(drm_fd_close(fd), 0);
    EXPECT_EQ(drm_fd_close(sfd), 0);
}

// ---- poll ----

TEST_F(SyncFileIoctl, PollIsReadableOnceTheFenceSignalled) {
    Timeline tl;
    int fd = tl.create_fence(1);
    sync_file* sf = drm_fd_get_sync_file(fd);
    EXPECT_EQ(sync_file_poll(sf), 0u);
    EXPECT_EQ(tl.inc(1), 0);
    EXPECT_EQ(sync_file_poll(sf), 1u);
    sync_file_put(sf);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, AnArmedEventfdIsSignalledByTheFence) {
    Timeline tl;
    int fd = tl.create_fence(1);
    sync_file* sf = drm_fd_get_sync_file(fd);
    eventfd_ctx* ctx = eventfd_ctx_create(0, 0);
    sync_file_poll_waiter* w = sync_file_poll_eventfd_arm(sf, ctx);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(eventfd_ctx_count(ctx), 0u);
    EXPECT_EQ(tl.inc(1), 0);
    EXPECT_EQ(eventfd_ctx_count(ctx), 1u);
    sync_file_poll_eventfd_disarm(w);
    // Armed on a signalled fence: at once.
    w = sync_file_poll_eventfd_arm(sf, ctx);
    EXPECT_EQ(eventfd_ctx_count(ctx), 2u);
    sync_file_poll_eventfd_disarm(w);
    eventfd_ctx_put(ctx);
    sync_file_put(sf);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(SyncFileIoctl, DisarmingBeforeTheSignalNeverFiresAndFreesAll) {
    Timeline tl;
    int fd = tl.create_fence(1);
    sync_file* sf = drm_fd_get_sync_file(fd);
    eventfd_ctx* ctx = eventfd_ctx_create(0, 0);
    sync_file_poll_waiter* w = sync_file_poll_eventfd_arm(sf, ctx);
    sync_file_poll_eventfd_disarm(w);
    EXPECT_EQ(tl.inc(1), 0);
    EXPECT_EQ(eventfd_ctx_count(ctx), 0u);
    eventfd_ctx_put(ctx);
    sync_file_put(sf);
    EXPECT_EQ(drm_fd_close(fd), 0);
}
