// The in-process Backend: a client's calls go straight to a drm::drm_file of the modelled kernel.
//
// DOC: There is no separate user address space in-process, so what a real kernel would reach
// through the process's page tables is spelled out: the ioctl's argument struct (_IOC_SIZE(cmd)
// bytes) and everything the client announces through user_memory_add() are registered with the
// uaccess registry for the call (drm/uaccess.h), so a pointer the client did not mean to pass still
// faults with -EFAULT. mmap() goes through drm_mmap(): a memory mapping returns the CPU address of
// the object's pages; an I/O mapping (the LATEST_FLUSH_ID page) has none and returns an address
// that is only a name for the mapping, read through read32(). The VmAreas are kept to unmap, and
// whatever is still mapped when the backend goes is unmapped then.
#pragma once
#include <vector>

#include "drm/drm_file.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/spinlock.h"
#include "umd/backend.h"

namespace drm {
struct VmArea;
}

namespace umd {

class DrmFileBackend final : public Backend {
public:
    // `file` must outlive the backend.
    explicit DrmFileBackend(drm::drm_file* file) : file_(file) {}
    ~DrmFileBackend() override;
    DrmFileBackend(const DrmFileBackend&) = delete;
    DrmFileBackend& operator=(const DrmFileBackend&) = delete;

    int ioctl(unsigned long cmd, void* arg) override;
    Result<void*> mmap(std::uint64_t offset, std::size_t length, int prot, int flags) override;
    int munmap(void* addr, std::size_t length) override;
    std::uint32_t read32(const void* mapping, std::uint64_t offset) override;
    int close_fd(int fd) override;
    std::int64_t monotonic_ns() override;
    void user_memory_add(const void* addr, std::size_t len) override;
    void user_memory_remove(const void* addr, std::size_t len) override;

    drm::drm_file* file() const { return file_; }
    // The credentials of the client process this backend stands for: every call acts with them
    // (override_creds), as a real process's ioctl acts with its own. An ordinary user without
    // capabilities by default; e.g. raise CAP_SYS_NICE for HIGH and REALTIME groups.
    kshim::cred& creds() { return creds_; }
    // Mappings made through this backend and not unmapped yet.
    std::size_t live_mappings();

private:
    struct Mapping {
        void* addr;  // what mmap() returned
        std::size_t length;
        drm::VmArea* vma;
    };

    drm::drm_file* file_;
    kshim::cred creds_ = kshim::user_cred();
    // Protects maps_ (never held across a call into the kernel).
    kshim::SpinLock lock_{"umd_drm_file_backend.lock"};
    std::vector<Mapping> maps_;
};

}  // namespace umd
