// Real mode's stand-in for a test's reference to a kernel fence (tests/umd/umd_client_test.h): a
// kshim::dma_fence of the test's own runtime that mirrors a sync_file descriptor, the way a process
// holds a fence past its DRM file. It is signalled, with the sync_file's error, the first time
// someone looks after the sync_file reports it done (the `signaled` op asks SYNC_IOC_FILE_INFO),
// so dma_fence_is_signaled() / dma_fence_get_status() read what the descriptor says. Dropping the
// last reference closes the descriptor.
#pragma once
#include <sys/ioctl.h>
#include <unistd.h>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/gfp.h"
#include "kernel_shim/slab.h"
#include "uapi/linux/sync_file.h"

namespace umd::testing {

struct SyncFileFence : kshim::dma_fence {
    int fd = -1;

    static SyncFileFence* from(kshim::dma_fence* f) { return static_cast<SyncFileFence*>(f); }
    static const char* name(kshim::dma_fence*) { return "umd_sync_file"; }
    static bool signaled(kshim::dma_fence* f) {
        drm::uapi::sync_file_info info{};
        if (::ioctl(from(f)->fd, drm::uapi::SYNC_IOC_FILE_INFO, &info) != 0 || info.status == 0)
            return false;
        if (info.status < 0)
            kshim::dma_fence_set_error(f, info.status);
        return true;
    }
    static void release(kshim::dma_fence* f) {
        SyncFileFence* s = from(f);
        ::close(s->fd);
        kshim::kdelete(s);
    }
    static constexpr kshim::dma_fence_ops kOps = {
        .get_driver_name = name, .get_timeline_name = name, .signaled = signaled, .release = release};
};

// A fence mirroring sync_file descriptor `fd` (owned from now on), or nullptr without memory (fd
// closed).
inline kshim::dma_fence* sync_file_fence_create(int fd) {
    SyncFileFence* s = kshim::knew<SyncFileFence>(kshim::GFP_KERNEL);
    if (!s) {
        ::close(fd);
        return nullptr;
    }
    s->fd = fd;
    kshim::dma_fence_init(s, &SyncFileFence::kOps, nullptr, kshim::dma_fence_context_alloc(1), 1);
    return s;
}

}  // namespace umd::testing
