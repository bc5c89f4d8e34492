// The sync_file's file operations are drivers/dma-buf/sync_file.c's: kernel_shim/dma-buf/
// sync_file.h. These are the DRM code's and its tests' names for them.
#pragma once
#include "drm/drm_file.h"
#include "drm/uaccess.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/fs/fdtable.h"

namespace drm {

using kshim::sync_file_fd_to_user;
using kshim::sync_file_ioctl;
using kshim::sync_file_poll;
using kshim::sync_file_poll_eventfd_arm;
using kshim::sync_file_poll_eventfd_disarm;
using kshim::sync_file_poll_waiter;

// ioctl(2) on a descriptor of the current table: -EBADF when it is not open, else the file's
// unlocked_ioctl (-ENOTTY for a file without one, a syncobj's).
inline long sync_file_fd_ioctl(int fd, unsigned int cmd, u64 arg) {
    return kshim::ksys_ioctl(fd, cmd, arg);
}

}  // namespace drm
