// Shared by the sw_sync and sync_file ioctl tests: a sw_sync timeline as an open file, and the
// ioctl calls with their arguments registered as user memory.
#pragma once
#include <gtest/gtest.h>

#include <cstring>

#include "drm/drm_file.h"
#include "drm/sw_sync.h"
#include "drm/sync_file_ioctl.h"
#include "drm/uaccess.h"
#include "uapi/linux/sync_file.h"

namespace sw_sync_test {

using namespace kshim;
using namespace drm;
using namespace drm::uapi;

// One open of /dev/sw_sync; closed at the end of the scope unless close() ran first.
struct Timeline {
    explicit Timeline(const char* name = "test-timeline") { EXPECT_EQ(sw_sync_debugfs_open(&obj, name), 0); }
    ~Timeline() { close(); }
    void close() {
        if (obj)
            sw_sync_debugfs_release(obj);
        obj = nullptr;
    }

    // SW_SYNC_IOC_CREATE_FENCE: the sync_file fd (or the negative errno).
    int create_fence(u32 value, const char* name = "pt") {
        sw_sync_create_fence_data d{};
        d.value = value;
        std::snprintf(d.name, sizeof d.name, "%s", name);
        d.fence = -1;
        UserRange r(d);
        long ret = sw_sync_ioctl(obj, SW_SYNC_IOC_CREATE_FENCE, user_ptr(&d));
        return ret ? static_cast<int>(ret) : d.fence;
    }
    long inc(u32 n) {
        UserRange r(n);
        return sw_sync_ioctl(obj, SW_SYNC_IOC_INC, user_ptr(&n));
    }
    long get_deadline(int fd, u64* deadline, u64 in = 0, u32 pad = 0) {
        sw_sync_get_deadline d{in, fd, pad};
        UserRange r(d);
        long ret = sw_sync_ioctl(obj, SW_SYNC_GET_DEADLINE, user_ptr(&d));
        if (!ret)
            *deadline = d.deadline_ns;
        return ret;
    }

    sync_timeline* obj = nullptr;
};

// The fence behind a sync_file fd (a new reference), or nullptr.
inline dma_fence* fd_fence(int fd) {
    sync_file* sf = drm_fd_get_sync_file(fd);
    if (!sf)
        return nullptr;
    dma_fence* f = sync_file_get_fence(sf);
    sync_file_put(sf);
    return f;
}

// SYNC_IOC_FILE_INFO's status with num_fences == 0 (the whole file's status).
inline int fd_status(int fd) {
    sync_file_info info{};
    UserRange r(info);
    long ret = sync_file_fd_ioctl(fd, SYNC_IOC_FILE_INFO, user_ptr(&info));
    EXPECT_EQ(ret, 0);
    return info.status;
}

}  // namespace sw_sync_test
