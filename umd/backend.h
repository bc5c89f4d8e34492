// The seam between the userspace client and a DRM device: what a process does with a render-node
// fd (ioctl, mmap, munmap, close of exported fds) plus the few things the in-process model needs
// on top (making the memory an ioctl reads visible to the kernel's user-copy checks, reading an
// I/O page, the clock the kernel's absolute timeouts are on). The in-process backend is
// DrmFileBackend (drm_file_backend.h); a real-fd backend implements the same calls with the libc
// functions of the same name.
#pragma once
#include <cstddef>
#include <cstdint>

#include "umd/result.h"

namespace umd {

class Backend {
public:
    virtual ~Backend() = default;

    // ioctl(2) on the device: 0 or a negative errno (a real fd: -errno, restarted on EINTR/EAGAIN
    // as libdrm's drmIoctl does). `arg` is the argument struct of _IOC_SIZE(cmd) bytes.
    virtual int ioctl(unsigned long cmd, void* arg) = 0;

    // mmap(2) of the device at `offset`: the mapping's address or a negative errno. An I/O mapping
    // (a register page) may come back as an address that is only good for read32().
    virtual Result<void*> mmap(std::uint64_t offset, std::size_t length, int prot, int flags) = 0;
    // munmap(2) of a mapping this backend returned: 0 or -EINVAL.
    virtual int munmap(void* addr, std::size_t length) = 0;
    // A 32-bit load at byte `offset` of a mapping mmap() returned (MMIO-style: never cached).
    virtual std::uint32_t read32(const void* mapping, std::uint64_t offset) = 0;

    // close(2) of an fd the device gave out (SYNCOBJ_HANDLE_TO_FD): 0 or -EBADF.
    virtual int close_fd(int fd) = 0;

    // The clock DRM's absolute timeouts are measured on (CLOCK_MONOTONIC), in ns.
    virtual std::int64_t monotonic_ns() = 0;

    // The client announces every buffer an ioctl argument points at (nested arrays, strings)
    // before the ioctl and withdraws it after. A real process has nothing to do; the in-process
    // kernel checks user pointers against what was announced.
    virtual void user_memory_add(const void* addr, std::size_t len) { (void)addr, (void)len; }
    virtual void user_memory_remove(const void* addr, std::size_t len) { (void)addr, (void)len; }
};

}  // namespace umd
