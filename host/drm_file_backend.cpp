// The in-process Backend over a drm::drm_file (drm_file_backend.h).
#include "host/drm_file_backend.h"

#include <cerrno>
#include <cstring>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "kernel_shim/runtime.h"
#include "uapi/drm/drm.h"

namespace umd {

DrmFileBackend::~DrmFileBackend() {
    std::vector<Mapping> left;
    {
        kshim::SpinGuard g(lock_);
        left.swap(maps_);
    }
    for (const Mapping& m : left)
        drm::drm_munmap(m.vma);
}

int DrmFileBackend::ioctl(unsigned long cmd, void* arg) {
    const size_t size = drm::uapi::_IOC_SIZE(static_cast<unsigned>(cmd));
    if (arg && size)
        drm::uaccess_register(arg, size);
    int ret;
    {
        kshim::ScopedCreds as_client(&creds_);
        ret = drm::drm_ioctl(file_, static_cast<unsigned>(cmd), drm::user_ptr(arg));
    }
    if (arg && size)
        drm::uaccess_unregister(arg, size);
    return ret;
}

Result<void*> DrmFileBackend::mmap(std::uint64_t offset, std::size_t length, int prot, int flags) {
    drm::VmArea* vma = nullptr;
    if (int ret = drm::drm_mmap(file_, offset, length, prot, flags, &vma))
        return err(ret);
    // An I/O mapping has no CPU address: the VmArea itself names it (never dereferenced by a
    // client that reads it through read32()).
    void* addr = vma->addr ? vma->addr : static_cast<void*>(vma);
    kshim::SpinGuard g(lock_);
    maps_.push_back({addr, length, vma});
    return addr;
}

int DrmFileBackend::munmap(void* addr, std::size_t length) {
    drm::VmArea* vma = nullptr;
    {
        kshim::SpinGuard g(lock_);
        // Two mappings of one BO have the same address; either may go first.
        for (auto it = maps_.begin(); it != maps_.end(); ++it) {
            if (it->addr == addr && it->length == length) {
                vma = it->vma;
                maps_.erase(it);
                break;
            }
        }
    }
    if (!vma)
        return -EINVAL;
    drm::drm_munmap(vma);
    return 0;
}

std::uint32_t DrmFileBackend::read32(const void* mapping, std::uint64_t offset) {
    drm::VmArea* vma = nullptr;
    {
        kshim::SpinGuard g(lock_);
        for (const Mapping& m : maps_)
            if (m.addr == mapping) {
                vma = m.vma;
                break;
            }
    }
    if (vma && !vma->addr)
        return drm::vma_read32(vma, offset);
    std::uint32_t v;
    std::memcpy(&v, static_cast<const char*>(mapping) + offset, sizeof(v));
    return v;
}

int DrmFileBackend::close_fd(int fd) {
    return drm::drm_fd_close(fd);
}

std::int64_t DrmFileBackend::monotonic_ns() {
    return kshim::ktime_get();
}

void DrmFileBackend::user_memory_add(const void* addr, std::size_t len) {
    drm::uaccess_register(addr, len);
}

void DrmFileBackend::user_memory_remove(const void* addr, std::size_t len) {
    drm::uaccess_unregister(addr, len);
}

std::size_t DrmFileBackend::live_mappings() {
    kshim::SpinGuard g(lock_);
    return maps_.size();
}

}  // namespace umd
