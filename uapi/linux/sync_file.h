// ABI of include/uapi/linux/sync_file.h (SYNC_IOC_*), plus the sw_sync debug driver's ioctls,
// which upstream declares inside drivers/dma-buf/sw_sync.c (type 'W'). Layouts are LP64 and
// checked below; names follow the kernel's.
#pragma once
#include <cstddef>
#include <cstdint>

#include "uapi/drm/drm.h"

namespace drm::uapi {

// ---- sync_file ----
struct sync_merge_data {
    char name[32];        // name of the new fence
    std::int32_t fd2;     // the file to merge with
    std::int32_t fence;   // out: fd of the new sync_file
    std::uint32_t flags;  // must be 0
    std::uint32_t pad;    // must be 0
};

// struct sync_fence_info: the shim's sync_file code fills this very struct.
struct sync_fence_info {
    char obj_name[32];
    char driver_name[32];
    std::int32_t status;  // 1 signalled, 0 pending, < 0 error
    std::uint32_t flags;
    std::uint64_t timestamp_ns;
};

struct sync_file_info {
    char name[32];
    std::int32_t status;            // out: 1 signalled, 0 active, < 0 error
    std::uint32_t flags;            // must be 0
    std::uint32_t num_fences;       // in: room in sync_fence_info (0: only count); out: the count
    std::uint32_t pad;              // must be 0
    std::uint64_t sync_fence_info;  // user pointer to struct sync_fence_info[num_fences]
};

struct sync_set_deadline {
    std::uint64_t deadline_ns;  // absolute CLOCK_MONOTONIC
    std::uint64_t pad;          // must be 0
};

inline constexpr unsigned SYNC_IOC_MAGIC = '>';
template <class T>
constexpr unsigned IOWR(unsigned type, unsigned nr) {
    return _IOC(_IOC_READ | _IOC_WRITE, type, nr, sizeof(T));
}
template <class T>
constexpr unsigned IOW(unsigned type, unsigned nr) {
    return _IOC(_IOC_WRITE, type, nr, sizeof(T));
}
inline constexpr unsigned SYNC_IOC_MERGE = IOWR<sync_merge_data>(SYNC_IOC_MAGIC, 3);
inline constexpr unsigned SYNC_IOC_FILE_INFO = IOWR<sync_file_info>(SYNC_IOC_MAGIC, 4);
inline constexpr unsigned SYNC_IOC_SET_DEADLINE = IOW<sync_set_deadline>(SYNC_IOC_MAGIC, 5);

// ---- sw_sync (drivers/dma-buf/sw_sync.c) ----
struct sw_sync_create_fence_data {
    std::uint32_t value;  // the seqno of the new fence on the timeline
    char name[32];
    std::int32_t fence;  // out: fd of the new sync_file
};

struct sw_sync_get_deadline {
    std::uint64_t deadline_ns;  // in: must be 0; out: the fence's earliest deadline
    std::int32_t fence_fd;
    std::uint32_t pad;  // must be 0
};

inline constexpr unsigned SW_SYNC_IOC_MAGIC = 'W';
inline constexpr unsigned SW_SYNC_IOC_CREATE_FENCE = IOWR<sw_sync_create_fence_data>(SW_SYNC_IOC_MAGIC, 0);
inline constexpr unsigned SW_SYNC_IOC_INC = IOW<std::uint32_t>(SW_SYNC_IOC_MAGIC, 1);
inline constexpr unsigned SW_SYNC_GET_DEADLINE = IOWR<sw_sync_get_deadline>(SW_SYNC_IOC_MAGIC, 2);

// ---- layout checks (LP64) ----
static_assert(sizeof(sync_merge_data) == 48 && offsetof(sync_merge_data, fd2) == 32 &&
              offsetof(sync_merge_data, fence) == 36 && offsetof(sync_merge_data, flags) == 40);
static_assert(sizeof(sync_fence_info) == 80 && offsetof(sync_fence_info, driver_name) == 32 &&
              offsetof(sync_fence_info, status) == 64 && offsetof(sync_fence_info, flags) == 68 &&
              offsetof(sync_fence_info, timestamp_ns) == 72);
static_assert(sizeof(sync_file_info) == 56 && offsetof(sync_file_info, status) == 32 &&
              offsetof(sync_file_info, num_fences) == 40 && offsetof(sync_file_info, sync_fence_info) == 48);
static_assert(sizeof(sync_set_deadline) == 16);
static_assert(sizeof(sw_sync_create_fence_data) == 40 && offsetof(sw_sync_create_fence_data, name) == 4 &&
              offsetof(sw_sync_create_fence_data, fence) == 36);
static_assert(sizeof(sw_sync_get_deadline) == 16 && offsetof(sw_sync_get_deadline, fence_fd) == 8);
// The numbers userspace has compiled in.
static_assert(SYNC_IOC_MERGE == 0xC0303E03u);
static_assert(SYNC_IOC_FILE_INFO == 0xC0383E04u);
static_assert(SYNC_IOC_SET_DEADLINE == 0x40103E05u);
static_assert(SW_SYNC_IOC_CREATE_FENCE == 0xC0285700u);
static_assert(SW_SYNC_IOC_INC == 0x40045701u);
static_assert(SW_SYNC_GET_DEADLINE == 0xC0105702u);

}  // namespace drm::uapi
