// Mirrors drivers/gpu/drm/drm_ioctl.c: the ioctl entry point of a DRM file.
//
// DOC: drm_ioctl() decodes cmd as the kernel does: nr selects a core ioctl (nr < the core table
// size) or a driver ioctl (DRM_COMMAND_BASE <= nr < DRM_COMMAND_END, index nr - base in the
// driver table); the type byte is not checked (the VFS routed the call already). The copy sizes
// come from the caller's cmd: `in` bytes are copied in only when both the caller's and the
// table's direction have IOC_IN, `out` bytes only when both have IOC_OUT; the kernel buffer is
// max(in, out, table size) bytes and zero-filled past what was copied in, so a caller with an
// older, smaller struct gets the new fields as zero and receives a truncated struct back. The
// out-copy happens whatever the handler returned. Unknown nr / empty slot: -EINVAL; a bad user
// pointer: -EFAULT; a non-RENDER_ALLOW ioctl on a render file: -EACCES; unplugged: -ENODEV.
#pragma once
#include "drm/drm_file.h"

namespace drm {

// `arg` is the user pointer of the argument struct (see drm/uaccess.h). 0 or a negative errno.
int drm_ioctl(drm_file* file, unsigned cmd, u64 arg);
inline int ioctl(drm_file* file, unsigned cmd, void* arg) {
    return drm_ioctl(file, cmd, reinterpret_cast<u64>(arg));
}

// drm_ioctl_kernel: the permission checks and the handler, on an argument already in kernel
// memory (for in-kernel callers and the compat paths).
int drm_ioctl_kernel(drm_file* file, ioctl_t func, void* kdata, u32 flags);

// Core handlers (exposed for in-kernel callers and tests).
int drm_version(drm_device* dev, void* data, drm_file* file);
int drm_getcap(drm_device* dev, void* data, drm_file* file);
int drm_gem_close_ioctl(drm_device* dev, void* data, drm_file* file);

}  // namespace drm
