// Mirrors include/linux/sync_file.h and drivers/dma-buf/sync_file.c: a fence as a file.
//
// DOC: A sync_file is one fence behind an anonymous file ("sync_file", sync_file_fops): its
// references are the file's (sync_file_get is get_file, sync_file_put is fput) and the file's
// release drops the fence. The file answers SYNC_IOC_MERGE, SYNC_IOC_FILE_INFO and
// SYNC_IOC_SET_DEADLINE (sync_file_ioctl) and poll: EPOLLIN once the fence signalled; the first
// poll arms a fence callback that wakes the file's wait queue, so a poller (poll_wait) is told.
// New descriptors (MERGE's, the creators') go on the current descriptor table
// (kernel_shim/fs/fdtable.h); MERGE's second operand is looked up there.
#pragma once
#include <fcntl.h>

#include <atomic>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/uaccess.h"
#include "kernel_shim/wait.h"
#include "uapi/linux/sync_file.h"

namespace kshim {

struct eventfd_ctx;

struct sync_file {
    struct file* file = nullptr;  // its references are the sync_file's
    char user_name[32] = {};
    wait_queue_head wq;                     // pollers; woken when the fence signals (once polled)
    std::atomic<bool> poll_enabled{false};  // upstream's POLL_ENABLED bit: cb armed
    dma_fence* fence = nullptr;             // one reference
    dma_fence_cb cb;
};

// struct sync_fence_info of include/uapi/linux/sync_file.h: the uAPI's own.
using sync_fence_info = drm::uapi::sync_fence_info;

// A new sync_file (and its file, one reference) holding its own reference to `fence`; nullptr
// on -ENOMEM.
sync_file* sync_file_create(dma_fence* fence);
sync_file* sync_file_get(sync_file* file);
void sync_file_put(sync_file* file);
// The sync_file behind fd with a reference, or nullptr when fd is closed or not a sync_file.
sync_file* sync_file_fdget(int fd);
bool is_sync_file(struct file* f);
// A new reference to the file's fence.
dma_fence* sync_file_get_fence(sync_file* file);
// The user-set name, or "driver-timeline-context-seqno" of the fence.
const char* sync_file_get_name(sync_file* file, char* buf, int len);
void sync_file_set_name(sync_file* file, const char* name);
// SYNC_IOC_MERGE: a new file whose fence is the merge of both (nullptr on -ENOMEM).
sync_file* sync_file_merge(const char* name, sync_file* a, sync_file* b);
// SYNC_IOC_FILE_INFO's status.
int sync_file_get_status(sync_file* file);
// SYNC_IOC_FILE_INFO's per-fence list: with *num_fences == 0 only counts; else fills up to it.
int sync_file_get_fence_info(sync_file* file, sync_fence_info* info, u32* num_fences);

// The file's unlocked_ioctl; `arg` is the user pointer (kernel_shim/uaccess.h). -ENOTTY for
// another cmd. MERGE: -EFAULT, -EINVAL (flags/pad), -ENOENT (fd2 is not a sync_file), -ENOMEM,
// or the fd table's error. FILE_INFO: -EFAULT, -EINVAL (flags/pad, or num_fences smaller than the
// count), -ENOMEM. SET_DEADLINE: -EFAULT, -EINVAL (pad).
long sync_file_ioctl(sync_file* file, unsigned int cmd, u64 arg);
// The file's poll without a poll table: EPOLLIN (0x1) once the fence signalled, else 0.
unsigned int sync_file_poll(sync_file* file);

// Hands `sf` (its reference is consumed) to the caller as a new descriptor, as the kernel's
// creators do: a number is reserved, the fd stored in data.fence and `data` copied back to
// `arg`, and only then is the file installed, so on -EFAULT the caller never sees it. 0 or -errno.
template <class Data>
long sync_file_fd_to_user(sync_file* sf, u64 arg, Data& data) {
    const int fd = get_unused_fd_flags(O_CLOEXEC);
    if (fd < 0) {
        sync_file_put(sf);
        return fd;
    }
    data.fence = fd;
    if (copy_to_user(arg, &data, sizeof data)) {
        put_unused_fd(fd);
        sync_file_put(sf);
        return -EFAULT;
    }
    fd_install(fd, sf->file);
    return 0;
}

// Poll through an eventfd, for in-kernel users without a poll table: `ctx` is signalled once,
// when the file's fence signals (at once if it already has). Holds references to the file's
// fence and to ctx until disarmed.
struct sync_file_poll_waiter;
// nullptr on -ENOMEM.
sync_file_poll_waiter* sync_file_poll_eventfd_arm(sync_file* file, eventfd_ctx* ctx);
void sync_file_poll_eventfd_disarm(sync_file_poll_waiter* waiter);

}  // namespace kshim
