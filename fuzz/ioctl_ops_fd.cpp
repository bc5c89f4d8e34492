// (no upstream counterpart) fuzz_ioctl's descriptor ops (fuzz/ioctl_ops.h, family Fd): PRIME
// export/import (drm_prime.c), the ioctls of a sync_file (sync_file.c) and of a dma-buf
// (dma-buf.c), mmap(2) of a dma-buf, and close(2) before process exit. Descriptors live in drm's
// in-process fd table; the program's fd pool holds those it was given (IoctlProgram::pick_fd).
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "drm/drm_prime.h"
#include "drm/sync_file_ioctl.h"
#include "fuzz/ioctl_program.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "uapi/drm/drm.h"
#include "uapi/linux/sync_file.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

void IoctlProgram::op_prime_handle_to_fd(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_prime_handle a{};
    a.handle = pick(bos_);
    a.flags = in_.pick<u32>({DRM_CLOEXEC | DRM_RDWR, DRM_CLOEXEC, 0, DRM_RDWR, in_.edge_u32()});
    a.fd = -1;
    if (!ioctl(f, DRM_IOCTL_PRIME_HANDLE_TO_FD, a, "PRIME_HANDLE_TO_FD") && a.fd >= 0)
        fds_.push_back(a.fd);
}

void IoctlProgram::op_prime_fd_to_handle(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    drm_prime_handle a{};
    a.fd = pick_fd();
    a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
    if (!ioctl(f, DRM_IOCTL_PRIME_FD_TO_HANDLE, a, "PRIME_FD_TO_HANDLE"))
        bos_.push_back({fi, a.handle});
}

void IoctlProgram::op_sync_file_ioctl(const IoctlOpCall&) {
    const int fd = pick_fd();
    auto on_fd = [fd](unsigned c, void* host) { return drm::sync_file_fd_ioctl(fd, c, drm::user_ptr(host)); };
    switch (in_.below(3)) {
    case 0: {
        sync_merge_data a{};
        std::snprintf(a.name, sizeof a.name, "fuzz");
        a.fd2 = pick_fd();
        a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
        a.pad = in_.u8() < 250 ? 0 : 1;
        a.fence = -1;
        if (!user_ioctl(SYNC_IOC_MERGE, a, "SYNC_IOC_MERGE", on_fd) && a.fence >= 0)
            fds_.push_back(a.fence);
        break;
    }
    case 1: {
        sync_file_info a{};
        a.num_fences = count_edge(3);
        a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
        a.pad = in_.u8() < 250 ? 0 : 1;
        uint8_t* host = nullptr;
        size_t cap = 0;
        a.sync_fence_info =
            user_buffer(std::min<size_t>(size_t{a.num_fences} * sizeof(sync_fence_info), 4096), &host, &cap);
        user_ioctl(SYNC_IOC_FILE_INFO, a, "SYNC_IOC_FILE_INFO", on_fd);
        break;
    }
    default: {
        sync_set_deadline a{};
        a.deadline_ns = deadline();
        a.pad = in_.u8() < 250 ? 0 : 1;
        user_ioctl(SYNC_IOC_SET_DEADLINE, a, "SYNC_IOC_SET_DEADLINE", on_fd);
        break;
    }
    }
}

void IoctlProgram::op_dma_buf_fd(const IoctlOpCall&) {
    const int fd = pick_fd();
    if (in_.u8() < 128) {  // DMA_BUF_IOCTL_SYNC (begin/end CPU access)
        drm::uapi::dma_buf_sync a{};
        a.flags = in_.u8() < 220 ? in_.u8() & 7 : in_.edge_u64();
        kshim::dma_buf* buf = drm::drm_fd_get_dma_buf(fd);
        if (kshim::IS_ERR_OR_NULL(buf)) {
            note("DMA_BUF_IOCTL_SYNC", buf ? static_cast<int>(kshim::PTR_ERR(buf)) : -EBADF);
            return;
        }
        user_ioctl(drm::uapi::DMA_BUF_IOCTL_SYNC, a, "DMA_BUF_IOCTL_SYNC",
                   [buf](unsigned c, void* host) { return drm::dma_buf_ioctl(buf, c, drm::user_ptr(host)); });
        kshim::dma_buf_put(buf);
        return;
    }
    // mmap(2) of the descriptor.
    const u64 off = in_.u8() < 220 ? 0x1000 * (in_.u8() % 4) : in_.edge_u64();
    const size_t len = in_.u8() < 220 ? 0x1000 * (1 + in_.u8() % 4) : in_.edge_u64();
    const int prot = in_.u8() < 230 ? (PROT_READ | PROT_WRITE) : static_cast<int>(in_.u8());
    const int flags = in_.u8() < 230 ? MAP_SHARED : in_.pick<int>({MAP_PRIVATE, 0});
    drm::VmArea* vma = nullptr;
    const int ret = drm::dma_buf_fd_mmap(fd, off, len, prot, flags, &vma);
    note("dma_buf_mmap", ret);
    if (!ret && vma)
        vmas_.push_back(vma);
}

void IoctlProgram::op_close_fd(const IoctlOpCall&) {
    if (fds_.empty())
        return;
    const size_t i = in_.below(static_cast<u32>(fds_.size()));
    note("close_fd", drm::drm_fd_close(fds_[i]));
    fds_.erase(fds_.begin() + static_cast<long>(i));
}

}  // namespace upanthor_fuzz
