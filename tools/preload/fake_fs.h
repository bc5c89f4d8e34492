// What libdrm and IGT read to find a DRM device, served from a small tree in a temporary folder:
// /dev/dri with card0 and renderD128, and the sysfs files under /sys/dev/char/226:<minor>/ that
// drmGetDevice2 reads (the `subsystem` link naming the platform bus, `uevent` with DRIVER= and
// the OF_* keys, the `device/drm/` folder listing the nodes). The board is the served GPU model's
// (host/gpu_models.h): an RK3588's panthor G610, an RK3568's panfrost G52.
#pragma once
#include <sys/stat.h>

#include <cstddef>

namespace upanthor::preload {

inline constexpr int kDrmMajor = 226;
inline constexpr int kCardMinor = 0;
inline constexpr int kRenderMinor = 128;

// The minor of a device-node path ("/dev/dri/card0" 0, "/dev/dri/renderD128" 128), else -1.
int node_minor(const char* path);
// "/dev/dri/card0" or "/dev/dri/renderD128".
const char* node_path(int minor);
// stat(2) of a node: a character device 226:minor, rw for everyone.
void node_stat(int minor, struct stat* st);

// /dev/sw_sync or the debugfs path clients probe next (/sys/kernel/debug/sync/sw_sync).
bool is_sw_sync_path(const char* path);
// stat(2) of it: the misc character device the kernel registers.
void sw_sync_stat(struct stat* st);

// `path` rewritten into the fake tree when it names a part of it (/dev/dri, /sys/dev/char/226:*,
// /sys/class/drm, the platform device's folder), else `path` itself. `buf` holds the rewrite.
// Creates the tree on first need. Absolute paths only.
const char* fake_path(const char* path, char* buf, size_t len);

// Removes the tree (at exit).
void fake_fs_cleanup();

}  // namespace upanthor::preload
