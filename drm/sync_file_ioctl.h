// Mirrors the file operations of drivers/dma-buf/sync_file.c: SYNC_IOC_MERGE, SYNC_IOC_FILE_INFO,
// SYNC_IOC_SET_DEADLINE and poll.
//
// DOC: kshim::sync_file is the fd-less object; this is what a descriptor of one answers. New
// descriptors (MERGE) and the second operand (fd2) go through drm's fd table, so with the
// preload library they are the process's real fds. Poll: a sync_file is readable (EPOLLIN) once
// its fence signalled; for a real fd the preload library arms an eventfd that the fence's
// signal bumps (sync_file_poll_eventfd_arm), so poll(2) on that eventfd needs no thread.
#pragma once
#include "drm/drm_file.h"
#include "drm/uaccess.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/types.h"

namespace kshim {
struct eventfd_ctx;
}

namespace drm {

using kshim::u64;

// The sync_file's unlocked_ioctl; `arg` is the user pointer (drm/uaccess.h). -ENOTTY for another
// cmd. MERGE: -EFAULT, -EINVAL (flags/pad), -ENOENT (fd2 is not a sync_file), -ENOMEM, or an fd
// table error. FILE_INFO: -EFAULT, -EINVAL (flags/pad, or num_fences smaller than the count),
// -ENOMEM. SET_DEADLINE: -EFAULT, -EINVAL (pad).
long sync_file_ioctl(kshim::sync_file* file, unsigned int cmd, u64 arg);
// The same on a descriptor of drm's fd table: -EBADF when it is not open, -ENOTTY when it is a
// syncobj file (which has no ioctls).
long sync_file_fd_ioctl(int fd, unsigned int cmd, u64 arg);

// Hands `sf` (its reference is consumed) to the caller as a new descriptor: installs it, stores
// the fd in data.fence and copies `data` back to `arg`. The kernel installs the fd only after that
// copy, so on -EFAULT the caller never sees it: the descriptor is closed again here. 0 or -errno.
template <class Data>
long sync_file_fd_to_user(kshim::sync_file* sf, u64 arg, Data& data) {
    const int fd = drm_fd_install_sync_file(sf);
    kshim::sync_file_put(sf);
    if (fd < 0) return fd;
    data.fence = fd;
    if (copy_to_user(arg, &data, sizeof data)) {
        drm_fd_close(fd);
        return -EFAULT;
    }
    return 0;
}

// sync_file_poll without the poll table: EPOLLIN (0x1) once the fence signalled, else 0.
unsigned int sync_file_poll(kshim::sync_file* file);

// Poll support for a real descriptor: `ctx` is signalled once, when the file's fence signals (at
// once if it already has). Holds references to the file's fence and to ctx until disarmed; disarm
// when the descriptor closes (the kernel's sync_file_release removes its callback the same way).
struct sync_file_poll_waiter;
// nullptr on -ENOMEM.
sync_file_poll_waiter* sync_file_poll_eventfd_arm(kshim::sync_file* file, kshim::eventfd_ctx* ctx);
void sync_file_poll_eventfd_disarm(sync_file_poll_waiter* waiter);

}  // namespace drm
