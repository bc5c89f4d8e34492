// The Backend of a real process: a DRM render-node descriptor driven with the libc calls of the
// same name (open, ioctl, mmap, munmap, close) and CLOCK_MONOTONIC. Under the preload library
// (tools/preload/, docs/preload.md) the node is served by the in-process driver; the backend does
// not know or care.
//
// DOC: ioctl() restarts on EINTR and EAGAIN as libdrm's drmIoctl does and returns -errno. A DRM
// wait's absolute timeout is on CLOCK_MONOTONIC (drm_timeout_abs_to_jiffies in the kernel); the
// preload library converts it to its runtime's clock, which starts at 0 (tools/preload/device.h,
// monotonic_offset_ns), so monotonic_ns() is the host clock, unchanged. The USER_FLUSH_ID page is
// ordinary readable memory for a real mapping: read32() loads from it. As DrmFileBackend does, the
// backend unmaps what is still mapped through it when it goes (what process exit does), then
// closes the descriptor; it may be shared by threads.
#pragma once
#include <pthread.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "umd/backend.h"

namespace umd {

class RealFdBackend final : public Backend {
public:
    // The render node a client opens by default (the preload library serves this path).
    static constexpr const char* kRenderNode = "/dev/dri/renderD128";

    // open(path, O_RDWR | O_CLOEXEC): the backend or -errno.
    static Result<std::unique_ptr<RealFdBackend>> open(const char* path = kRenderNode);
    // Takes ownership of an open descriptor.
    explicit RealFdBackend(int fd) : fd_(fd) {}
    // Unmaps what is still mapped through the backend, then closes the descriptor.
    ~RealFdBackend() override;
    RealFdBackend(const RealFdBackend&) = delete;
    RealFdBackend& operator=(const RealFdBackend&) = delete;

    int ioctl(unsigned long cmd, void* arg) override;
    Result<void*> mmap(std::uint64_t offset, std::size_t length, int prot, int flags) override;
    int munmap(void* addr, std::size_t length) override;
    std::uint32_t read32(const void* mapping, std::uint64_t offset) override;
    int close_fd(int fd) override;
    std::int64_t monotonic_ns() override;

    int fd() const { return fd_; }

private:
    struct Mapping {
        void* addr;
        std::size_t length;
    };

    int fd_;
    // Protects maps_ (a plain process mutex: this is userspace code, not the kernel shim's).
    pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
    std::vector<Mapping> maps_;
};

}  // namespace umd
