// ABI of include/uapi/drm/drm.h for the ioctls upanthor serves: the generic core ioctls and the
// syncobj family. Written from the kernel's ABI (numbers, layouts, flag values); layouts are
// LP64 and checked below. Names follow the kernel's so userspace code reads the same.
#pragma once
#include <cstddef>
#include <cstdint>

namespace drm::uapi {

// ---- asm-generic/ioctl.h encoding: nr 8 bits, type 8 bits, size 14 bits, dir 2 bits ----
inline constexpr unsigned _IOC_NRBITS = 8;
inline constexpr unsigned _IOC_TYPEBITS = 8;
inline constexpr unsigned _IOC_SIZEBITS = 14;
inline constexpr unsigned _IOC_NRSHIFT = 0;
inline constexpr unsigned _IOC_TYPESHIFT = _IOC_NRSHIFT + _IOC_NRBITS;
inline constexpr unsigned _IOC_SIZESHIFT = _IOC_TYPESHIFT + _IOC_TYPEBITS;
inline constexpr unsigned _IOC_DIRSHIFT = _IOC_SIZESHIFT + _IOC_SIZEBITS;
inline constexpr unsigned _IOC_NONE = 0u;
inline constexpr unsigned _IOC_WRITE = 1u;  // userspace writes: the kernel copies in
inline constexpr unsigned _IOC_READ = 2u;   // userspace reads: the kernel copies out
inline constexpr unsigned IOC_IN = _IOC_WRITE << _IOC_DIRSHIFT;
inline constexpr unsigned IOC_OUT = _IOC_READ << _IOC_DIRSHIFT;

constexpr unsigned _IOC(unsigned dir, unsigned type, unsigned nr, unsigned size) {
    return (dir << _IOC_DIRSHIFT) | (type << _IOC_TYPESHIFT) | (nr << _IOC_NRSHIFT) | (size << _IOC_SIZESHIFT);
}
constexpr unsigned _IOC_DIR(unsigned cmd) {
    return (cmd >> _IOC_DIRSHIFT) & ((1u << 2) - 1);
}
constexpr unsigned _IOC_TYPE(unsigned cmd) {
    return (cmd >> _IOC_TYPESHIFT) & ((1u << _IOC_TYPEBITS) - 1);
}
constexpr unsigned _IOC_NR(unsigned cmd) {
    return (cmd >> _IOC_NRSHIFT) & ((1u << _IOC_NRBITS) - 1);
}
constexpr unsigned _IOC_SIZE(unsigned cmd) {
    return (cmd >> _IOC_SIZESHIFT) & ((1u << _IOC_SIZEBITS) - 1);
}

inline constexpr unsigned DRM_IOCTL_BASE = 'd';
constexpr unsigned DRM_IO(unsigned nr) {
    return _IOC(_IOC_NONE, DRM_IOCTL_BASE, nr, 0);
}
template <class T>
constexpr unsigned DRM_IOR(unsigned nr) {
    return _IOC(_IOC_READ, DRM_IOCTL_BASE, nr, sizeof(T));
}
template <class T>
constexpr unsigned DRM_IOW(unsigned nr) {
    return _IOC(_IOC_WRITE, DRM_IOCTL_BASE, nr, sizeof(T));
}
template <class T>
constexpr unsigned DRM_IOWR(unsigned nr) {
    return _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, nr, sizeof(T));
}
constexpr unsigned DRM_IOCTL_NR(unsigned cmd) {
    return _IOC_NR(cmd);
}

// Driver-private ioctls live in [DRM_COMMAND_BASE, DRM_COMMAND_END).
inline constexpr unsigned DRM_COMMAND_BASE = 0x40;
inline constexpr unsigned DRM_COMMAND_END = 0xA0;

// ---- structs ----
struct drm_version {
    int version_major;
    int version_minor;
    int version_patchlevel;
    std::size_t name_len;  // in: buffer size; out: the full length of the name
    char* name;            // user pointer; filled without a terminating NUL
    std::size_t date_len;
    char* date;
    std::size_t desc_len;
    char* desc;
};

// DRM_IOCTL_GET_MAGIC / AUTH_MAGIC (drm_magic_t is an unsigned int).
struct drm_auth {
    unsigned int magic;
};

struct drm_get_cap {
    std::uint64_t capability;
    std::uint64_t value;
};

struct drm_gem_close {
    std::uint32_t handle;
    std::uint32_t pad;
};

struct drm_syncobj_create {
    std::uint32_t handle;
    std::uint32_t flags;
};

struct drm_syncobj_destroy {
    std::uint32_t handle;
    std::uint32_t pad;
};

struct drm_syncobj_handle {
    std::uint32_t handle;
    std::uint32_t flags;
    std::int32_t fd;
    std::uint32_t pad;
    std::uint64_t point;  // sync_file import/export on a timeline point (added in 6.x)
};

struct drm_syncobj_transfer {
    std::uint32_t src_handle;
    std::uint32_t dst_handle;
    std::uint64_t src_point;
    std::uint64_t dst_point;
    std::uint32_t flags;
    std::uint32_t pad;
};

struct drm_syncobj_wait {
    std::uint64_t handles;      // user pointer to u32[count_handles]
    std::int64_t timeout_nsec;  // absolute, CLOCK_MONOTONIC
    std::uint32_t count_handles;
    std::uint32_t flags;
    std::uint32_t first_signaled;  // only valid when not WAIT_ALL
    std::uint32_t pad;
    std::uint64_t deadline_nsec;  // with DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE
};

struct drm_syncobj_timeline_wait {
    std::uint64_t handles;
    std::uint64_t points;  // user pointer to u64[count_handles]
    std::int64_t timeout_nsec;
    std::uint32_t count_handles;
    std::uint32_t flags;
    std::uint32_t first_signaled;
    std::uint32_t pad;
    std::uint64_t deadline_nsec;
};

struct drm_syncobj_eventfd {
    std::uint32_t handle;
    std::uint32_t flags;
    std::uint64_t point;
    std::int32_t fd;
    std::uint32_t pad;
};

struct drm_prime_handle {
    std::uint32_t handle;
    std::uint32_t flags;  // DRM_CLOEXEC | DRM_RDWR (HANDLE_TO_FD only)
    std::int32_t fd;
};

struct drm_syncobj_array {
    std::uint64_t handles;
    std::uint32_t count_handles;
    std::uint32_t pad;
};

struct drm_syncobj_timeline_array {
    std::uint64_t handles;
    std::uint64_t points;
    std::uint32_t count_handles;
    std::uint32_t flags;
};

// ---- flags and capabilities ----
inline constexpr std::uint32_t DRM_SYNCOBJ_CREATE_SIGNALED = 1u << 0;
inline constexpr std::uint32_t DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE = 1u << 0;
inline constexpr std::uint32_t DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE = 1u << 0;
// Linux 6.16+: drm_syncobj_handle.point is only read with these (a sync_file of a timeline point).
inline constexpr std::uint32_t DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE = 1u << 1;
inline constexpr std::uint32_t DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE = 1u << 1;
inline constexpr std::uint32_t DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL = 1u << 0;
inline constexpr std::uint32_t DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT = 1u << 1;
inline constexpr std::uint32_t DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE = 1u << 2;
inline constexpr std::uint32_t DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE = 1u << 3;
inline constexpr std::uint32_t DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED = 1u << 0;

// PRIME export flags: the O_CLOEXEC and O_RDWR of the new descriptor.
inline constexpr std::uint32_t DRM_CLOEXEC = 02000000;
inline constexpr std::uint32_t DRM_RDWR = 02;

inline constexpr std::uint64_t DRM_CAP_PRIME = 0x5;
inline constexpr std::uint64_t DRM_PRIME_CAP_IMPORT = 0x1;
inline constexpr std::uint64_t DRM_PRIME_CAP_EXPORT = 0x2;
inline constexpr std::uint64_t DRM_CAP_TIMESTAMP_MONOTONIC = 0x6;
inline constexpr std::uint64_t DRM_CAP_SYNCOBJ = 0x13;
inline constexpr std::uint64_t DRM_CAP_SYNCOBJ_TIMELINE = 0x14;

// ---- ioctl numbers ----
inline constexpr unsigned DRM_IOCTL_VERSION = DRM_IOWR<drm_version>(0x00);
inline constexpr unsigned DRM_IOCTL_GET_MAGIC = DRM_IOR<drm_auth>(0x02);
inline constexpr unsigned DRM_IOCTL_GEM_CLOSE = DRM_IOW<drm_gem_close>(0x09);
inline constexpr unsigned DRM_IOCTL_AUTH_MAGIC = DRM_IOW<drm_auth>(0x11);
inline constexpr unsigned DRM_IOCTL_SET_MASTER = DRM_IO(0x1e);
inline constexpr unsigned DRM_IOCTL_DROP_MASTER = DRM_IO(0x1f);
inline constexpr unsigned DRM_IOCTL_GET_CAP = DRM_IOWR<drm_get_cap>(0x0c);
inline constexpr unsigned DRM_IOCTL_PRIME_HANDLE_TO_FD = DRM_IOWR<drm_prime_handle>(0x2d);
inline constexpr unsigned DRM_IOCTL_PRIME_FD_TO_HANDLE = DRM_IOWR<drm_prime_handle>(0x2e);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_CREATE = DRM_IOWR<drm_syncobj_create>(0xBF);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_DESTROY = DRM_IOWR<drm_syncobj_destroy>(0xC0);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD = DRM_IOWR<drm_syncobj_handle>(0xC1);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE = DRM_IOWR<drm_syncobj_handle>(0xC2);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_WAIT = DRM_IOWR<drm_syncobj_wait>(0xC3);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_RESET = DRM_IOWR<drm_syncobj_array>(0xC4);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_SIGNAL = DRM_IOWR<drm_syncobj_array>(0xC5);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT = DRM_IOWR<drm_syncobj_timeline_wait>(0xCA);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_QUERY = DRM_IOWR<drm_syncobj_timeline_array>(0xCB);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_TRANSFER = DRM_IOWR<drm_syncobj_transfer>(0xCC);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL = DRM_IOWR<drm_syncobj_timeline_array>(0xCD);
inline constexpr unsigned DRM_IOCTL_SYNCOBJ_EVENTFD = DRM_IOWR<drm_syncobj_eventfd>(0xCF);

// ---- layout checks (LP64) ----
static_assert(sizeof(void*) == 8, "the DRM ABI here is the LP64 one");
static_assert(sizeof(drm_version) == 64);
static_assert(offsetof(drm_version, name_len) == 16 && offsetof(drm_version, name) == 24);
static_assert(offsetof(drm_version, date_len) == 32 && offsetof(drm_version, date) == 40);
static_assert(offsetof(drm_version, desc_len) == 48 && offsetof(drm_version, desc) == 56);
static_assert(sizeof(drm_get_cap) == 16 && offsetof(drm_get_cap, value) == 8);
static_assert(sizeof(drm_gem_close) == 8);
static_assert(sizeof(drm_prime_handle) == 12 && offsetof(drm_prime_handle, fd) == 8);
static_assert(sizeof(drm_syncobj_create) == 8 && offsetof(drm_syncobj_create, flags) == 4);
static_assert(sizeof(drm_syncobj_destroy) == 8);
static_assert(sizeof(drm_syncobj_handle) == 24 && offsetof(drm_syncobj_handle, fd) == 8 &&
              offsetof(drm_syncobj_handle, point) == 16);
static_assert(sizeof(drm_syncobj_transfer) == 32 && offsetof(drm_syncobj_transfer, src_point) == 8 &&
              offsetof(drm_syncobj_transfer, dst_point) == 16 && offsetof(drm_syncobj_transfer, flags) == 24);
static_assert(sizeof(drm_syncobj_wait) == 40 && offsetof(drm_syncobj_wait, timeout_nsec) == 8 &&
              offsetof(drm_syncobj_wait, count_handles) == 16 && offsetof(drm_syncobj_wait, flags) == 20 &&
              offsetof(drm_syncobj_wait, first_signaled) == 24 && offsetof(drm_syncobj_wait, deadline_nsec) == 32);
static_assert(sizeof(drm_syncobj_timeline_wait) == 48 && offsetof(drm_syncobj_timeline_wait, points) == 8 &&
              offsetof(drm_syncobj_timeline_wait, timeout_nsec) == 16 &&
              offsetof(drm_syncobj_timeline_wait, count_handles) == 24 &&
              offsetof(drm_syncobj_timeline_wait, first_signaled) == 32 &&
              offsetof(drm_syncobj_timeline_wait, deadline_nsec) == 40);
static_assert(sizeof(drm_syncobj_eventfd) == 24 && offsetof(drm_syncobj_eventfd, fd) == 16);
static_assert(sizeof(drm_syncobj_array) == 16 && offsetof(drm_syncobj_array, count_handles) == 8);
static_assert(sizeof(drm_syncobj_timeline_array) == 24 && offsetof(drm_syncobj_timeline_array, count_handles) == 16);
// The numbers userspace has compiled in.
static_assert(DRM_IOCTL_VERSION == 0xC0406400u);
static_assert(DRM_IOCTL_GEM_CLOSE == 0x40086409u);
static_assert(sizeof(drm_auth) == 4);
static_assert(DRM_IOCTL_GET_MAGIC == 0x80046402u && DRM_IOCTL_AUTH_MAGIC == 0x40046411u);
static_assert(DRM_IOCTL_SET_MASTER == 0x641Eu && DRM_IOCTL_DROP_MASTER == 0x641Fu);
static_assert(DRM_IOCTL_GET_CAP == 0xC010640Cu);
static_assert(DRM_IOCTL_PRIME_HANDLE_TO_FD == 0xC00C642Du && DRM_IOCTL_PRIME_FD_TO_HANDLE == 0xC00C642Eu);
static_assert(DRM_IOCTL_SYNCOBJ_CREATE == 0xC00864BFu);
static_assert(DRM_IOCTL_SYNCOBJ_DESTROY == 0xC00864C0u);
static_assert(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD == 0xC01864C1u);
static_assert(DRM_IOCTL_SYNCOBJ_WAIT == 0xC02864C3u);
static_assert(DRM_IOCTL_SYNCOBJ_RESET == 0xC01064C4u);
static_assert(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT == 0xC03064CAu);
static_assert(DRM_IOCTL_SYNCOBJ_QUERY == 0xC01864CBu);
static_assert(DRM_IOCTL_SYNCOBJ_TRANSFER == 0xC02064CCu);
static_assert(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL == 0xC01864CDu);
static_assert(DRM_IOCTL_SYNCOBJ_EVENTFD == 0xC01864CFu);

}  // namespace drm::uapi
