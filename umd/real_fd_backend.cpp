// The Backend over a real descriptor (real_fd_backend.h).
#include "umd/real_fd_backend.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace umd {

Result<std::unique_ptr<RealFdBackend>> RealFdBackend::open(const char* path) {
    const int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return err(-errno);
    return std::make_unique<RealFdBackend>(fd);
}

RealFdBackend::~RealFdBackend() {
    for (const Mapping& m : maps_)
        ::munmap(m.addr, m.length);
    if (fd_ >= 0)
        ::close(fd_);
    pthread_mutex_destroy(&lock_);
}

int RealFdBackend::ioctl(unsigned long cmd, void* arg) {
    // drmIoctl's loop: a signal or a transient refusal is not the ioctl's answer. DRM waits are
    // restartable because their timeout is absolute.
    int ret;
    do {
        ret = ::ioctl(fd_, cmd, arg);
    } while (ret == -1 && (errno == EINTR || errno == EAGAIN));
    return ret < 0 ? -errno : ret;
}

Result<void*> RealFdBackend::mmap(std::uint64_t offset, std::size_t length, int prot, int flags) {
    void* p = ::mmap(nullptr, length, prot, flags, fd_, static_cast<off_t>(offset));
    if (p == MAP_FAILED)
        return err(-errno);
    pthread_mutex_lock(&lock_);
    maps_.push_back({p, length});
    pthread_mutex_unlock(&lock_);
    return p;
}

int RealFdBackend::munmap(void* addr, std::size_t length) {
    bool found = false;
    pthread_mutex_lock(&lock_);
    for (auto it = maps_.begin(); it != maps_.end(); ++it) {
        if (it->addr == addr && it->length == length) {
            maps_.erase(it);
            found = true;
            break;
        }
    }
    pthread_mutex_unlock(&lock_);
    // Only what this backend mapped, whole (a partial unmap would leave the record wrong).
    if (!found)
        return -EINVAL;
    return ::munmap(addr, length) ? -errno : 0;
}

std::uint32_t RealFdBackend::read32(const void* mapping, std::uint64_t offset) {
    // An I/O page may change under the CPU: one uncached-style load each time.
    return *reinterpret_cast<const volatile std::uint32_t*>(static_cast<const char*>(mapping) + offset);
}

int RealFdBackend::close_fd(int fd) {
    return ::close(fd) ? -errno : 0;
}

// A userspace process's own clock, the one DRM's absolute timeouts are on (this is not kernel
// code, so not the kshim runtime's clock).
std::int64_t RealFdBackend::monotonic_ns() {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace umd
