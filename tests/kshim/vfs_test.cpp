// The VFS of the shim (kernel_shim/fs): file references, descriptor tables, anonymous files,
// poll tables.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <optional>

#include "kernel_shim/err.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {

// A file kind that counts its releases and can look at its own count while being released.
struct Probe {
    int releases = 0;
    long count_at_release = -1;
    file* got_during_release = nullptr;  // fget/get_file tried from inside release
    int fd_during_release = -1;
    int ioctls = 0;
};

int probe_release(file* f) {
    auto* p = static_cast<Probe*>(f->private_data);
    p->releases++;
    p->count_at_release = file_count(f);
    if (p->fd_during_release >= 0)
        p->got_during_release = fget(p->fd_during_release);
    return 0;
}

long probe_ioctl(file* f, unsigned int cmd, unsigned long) {
    static_cast<Probe*>(f->private_data)->ioctls++;
    return cmd == 1 ? 0 : -ENOTTY;
}

const file_operations probe_fops = {.release = probe_release, .unlocked_ioctl = probe_ioctl};
const file_operations other_fops = {};

class Vfs : public kshim::testing::SweepableKernelTest {
protected:
    // Each test is a client with its own table, numbered from 0 as a fresh process's would be
    // without stdio.
    files_struct files_{0};
    std::optional<FilesScope> scope_;
    void SetUp() override {
        SweepableKernelTest::SetUp();
        scope_.emplace(&files_);
    }
    void TearDown() override {
        close_files(&files_);
        scope_.reset();
        SweepableKernelTest::TearDown();
    }
};

TEST_F(Vfs, TheLastFputReleasesOnceAndNotBefore) {
    Probe p;
    file* f = anon_inode_getfile("[probe]", &probe_fops, &p, O_RDWR);
    ASSERT_FALSE(IS_ERR(f));
    EXPECT_EQ(file_count(f), 1);
    get_file(f);
    get_file(f);
    EXPECT_EQ(file_count(f), 3);
    fput(f);
    fput(f);
    EXPECT_EQ(p.releases, 0);
    fput(f);
    EXPECT_EQ(p.releases, 1);
    EXPECT_EQ(p.count_at_release, 0);
    EXPECT_EQ(files_live(), 0);
}

TEST_F(Vfs, ADescriptorHoldsItsOwnReference) {
    Probe p;
    const int fd = anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR | O_CLOEXEC);
    ASSERT_EQ(fd, 0);
    file* f = fget(fd);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->private_data, &p);
    EXPECT_EQ(f->f_flags & O_CLOEXEC, 0u);  // a descriptor's flag, never the file's
    EXPECT_EQ(file_count(f), 2);
    // Closing the descriptor while a caller holds the file: the release waits for that caller.
    EXPECT_EQ(close_fd(fd), 0);
    EXPECT_EQ(p.releases, 0);
    EXPECT_EQ(vfs_ioctl(f, 1, 0), 0);
    EXPECT_EQ(p.ioctls, 1);
    fput(f);
    EXPECT_EQ(p.releases, 1);
}

TEST_F(Vfs, AClosedOrNeverOpenedDescriptorIsEbadf) {
    Probe p;
    const int fd = anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(close_fd(fd), 0);
    EXPECT_EQ(fget(fd), nullptr);
    EXPECT_EQ(close_fd(fd), -EBADF);  // a second close
    EXPECT_EQ(close_fd(-1), -EBADF);
    EXPECT_EQ(close_fd(1 << 20), -EBADF);
    EXPECT_EQ(fget(-1), nullptr);
    EXPECT_EQ(fget(12345), nullptr);
    // A number reserved but not installed yet names nothing.
    const int reserved = get_unused_fd_flags(0);
    ASSERT_GE(reserved, 0);
    EXPECT_EQ(fget(reserved), nullptr);
    EXPECT_EQ(close_fd(reserved), -EBADF);
    put_unused_fd(reserved);
    EXPECT_EQ(p.releases, 1);
}

TEST_F(Vfs, NewDescriptorsTakeTheLowestFreeNumber) {
    Probe p;
    int fds[4];
    for (int& fd : fds)
        fd = anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR);
    EXPECT_EQ(fds[0], 0);
    EXPECT_EQ(fds[1], 1);
    EXPECT_EQ(fds[2], 2);
    EXPECT_EQ(fds[3], 3);
    EXPECT_EQ(close_fd(2), 0);
    EXPECT_EQ(close_fd(0), 0);
    EXPECT_EQ(anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR), 0);
    EXPECT_EQ(anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR), 2);
    EXPECT_EQ(anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR), 4);
    // A number given back unused is free again.
    const int r = get_unused_fd_flags(0);
    EXPECT_EQ(r, 5);
    put_unused_fd(r);
    EXPECT_EQ(get_unused_fd_flags(0), 5);
    put_unused_fd(5);
    EXPECT_EQ(fd_count(), 5u);
    close_files(&files_);
    EXPECT_EQ(fd_count(), 0u);
    EXPECT_EQ(p.releases, 7);
}

TEST_F(Vfs, TheProcessTableStartsAboveStdio) {
    // A task without a table of its own uses the process's, whose 0-2 are the stdio.
    scope_.reset();
    const int fd = get_unused_fd_flags(0);
    EXPECT_GE(fd, 3);
    put_unused_fd(fd);
    scope_.emplace(&files_);
}

TEST_F(Vfs, TablesOfTwoClientsAreApart) {
    Probe p;
    files_struct other{0};
    const int a = anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR);
    int b;
    {
        FilesScope s(&other);
        b = anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR);
        EXPECT_EQ(b, 0);  // its own numbering
        EXPECT_EQ(close_fd(b), 0);
        EXPECT_EQ(fget(b), nullptr);
    }
    EXPECT_EQ(a, 0);
    file* f = fget(a);  // still open in this client's table
    ASSERT_NE(f, nullptr);
    fput(f);
    EXPECT_EQ(p.releases, 1);  // b's
    EXPECT_EQ(close_fd(a), 0);
    EXPECT_EQ(p.releases, 2);
    close_files(&other);
}

TEST_F(Vfs, ReplaceFdIsDup2) {
    Probe p, q;
    const int a = anon_inode_getfd("[p]", &probe_fops, &p, O_RDWR);
    const int b = anon_inode_getfd("[q]", &probe_fops, &q, O_RDWR);
    file* f = fget(a);
    ASSERT_EQ(replace_fd(b, f), 0);  // b's old file goes
    EXPECT_EQ(q.releases, 1);
    EXPECT_EQ(file_count(f), 3);  // a, b, and ours
    fput(f);
    EXPECT_EQ(close_fd(a), 0);
    EXPECT_EQ(p.releases, 0);  // b still names it
    EXPECT_EQ(close_fd(b), 0);
    EXPECT_EQ(p.releases, 1);
    EXPECT_EQ(replace_fd(-1, f), -EBADF);
}

TEST_F(Vfs, ReleaseSeesTheDescriptorAlreadyGone) {
    // The table drops its entry before the file's last reference: a lookup of the number from
    // inside the release (what get_file on a dying file would need) finds nothing.
    Probe p;
    const int fd = anon_inode_getfd("[probe]", &probe_fops, &p, O_RDWR);
    p.fd_during_release = fd;
    EXPECT_EQ(close_fd(fd), 0);
    EXPECT_EQ(p.releases, 1);
    EXPECT_EQ(p.got_during_release, nullptr);
}

TEST_F(Vfs, GetFileUnlessZeroRefusesADyingFile) {
    Probe p;
    file* f = anon_inode_getfile("[probe]", &probe_fops, &p, O_RDWR);
    EXPECT_TRUE(get_file_unless_zero(f));
    fput(f);
    f->f_count.store(0);  // as seen by a racing lookup after the last fput
    EXPECT_FALSE(get_file_unless_zero(f));
    EXPECT_EQ(file_count(f), 0);
    f->f_count.store(1);
    fput(f);
    EXPECT_EQ(p.releases, 1);
}

TEST_F(Vfs, TheLastFputInAtomicContextIsDeferred) {
    Probe p;
    file* f = anon_inode_getfile("[probe]", &probe_fops, &p, O_RDWR);
    SpinLock lock{"vfs_test.lock"};
    {
        SpinGuard g(lock);
        fput(f);
        EXPECT_EQ(p.releases, 0);  // a release may sleep: not under a spinlock
    }
    flush_workqueue(system_wq());
    EXPECT_EQ(p.releases, 1);
}

TEST_F(Vfs, OperationsAFileLacksGiveTheKernelsErrnos) {
    file* f = anon_inode_getfile("[other]", &other_fops, nullptr, O_RDONLY);
    EXPECT_EQ(vfs_ioctl(f, 1, 0), -ENOTTY);
    EXPECT_EQ(vfs_read(f, 0, 8), -EINVAL);
    EXPECT_EQ(vfs_write(f, 0, 8), -EBADF);  // not open for writing
    EXPECT_EQ(vfs_poll(f, nullptr), DEFAULT_POLLMASK);
    fput(f);
}

// poll_wait reaches the table's queue proc with the file's queue, and a wake-up of that queue
// runs an entry with a callback instead of waking a task.
struct PollProbe {
    wait_queue_head wq;
    bool ready = false;
};
__poll_t probe_poll(file* f, poll_table* pt) {
    auto* p = static_cast<PollProbe*>(f->private_data);
    poll_wait(f, &p->wq, pt);
    return p->ready ? EPOLLIN : 0;
}
const file_operations poll_fops = {.poll = probe_poll};

struct Watch {
    poll_table pt;
    wait_queue_head::Entry entry{nullptr};
    wait_queue_head* wqh = nullptr;
    int woken = 0;
};

TEST_F(Vfs, PollWaitArmsACallbackOnTheFilesQueue) {
    PollProbe pp;
    file* f = anon_inode_getfile("[poll]", &poll_fops, &pp, O_RDWR);
    Watch w;
    w.pt._qproc = [](file*, wait_queue_head* wqh, poll_table* pt) {
        Watch* w = container_of(pt, Watch, pt);
        w->wqh = wqh;
        w->entry.func = [](wait_queue_head::Entry* e) { container_of(e, Watch, entry)->woken++; };
        wqh->add(&w->entry);
    };
    EXPECT_EQ(vfs_poll(f, &w.pt), 0u);
    ASSERT_EQ(w.wqh, &pp.wq);
    pp.ready = true;
    wake_up_all(&pp.wq);
    EXPECT_EQ(w.woken, 1);
    EXPECT_EQ(vfs_poll(f, nullptr), EPOLLIN);
    w.wqh->remove(&w.entry);
    fput(f);
}

}  // namespace
