// What the DRM file of the fake node answers before its own ioctl (ioctl_answers.h).
#include "tools/preload/ioctl_answers.h"

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/uaccess.h"
#include "uapi/drm/drm.h"
#include "uapi/drm/panfrost_drm.h"

namespace upanthor::preload {
namespace {

using s64_t = long long;

// DRM timeouts are absolute CLOCK_MONOTONIC; the runtime's clock starts at 0 (device.h).
template <class T>
int wait_with_host_clock(drm::drm_file* f, unsigned cmd, void* arg, long long off) {
    // Older clients pass the struct without deadline_nsec (40 bytes): only what they pass.
    const size_t n = drm::uapi::_IOC_SIZE(cmd);
    if (n > sizeof(T) || n < offsetof(T, timeout_nsec) + sizeof(s64_t))
        return drm::ioctl(f, cmd, arg);
    T w{};
    if (drm::copy_from_user(&w, drm::user_ptr(arg), n))
        return -EFAULT;
    const T orig = w;
    if (w.timeout_nsec > 0)
        w.timeout_nsec -= off;
    const bool has_deadline = n >= offsetof(T, deadline_nsec) + sizeof(w.deadline_nsec);
    if (has_deadline && (w.flags & drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_DEADLINE) &&
        w.deadline_nsec > static_cast<unsigned long long>(off))
        w.deadline_nsec -= off;
    // The shifted struct goes through the caller's own memory (the ioctl's user pointer): the
    // caller may be another process (`upanthor serve`), whose pointers the kernel code reads.
    if (drm::copy_to_user(drm::user_ptr(arg), &w, n))
        return -EFAULT;
    const int ret = drm::ioctl(f, cmd, arg);
    if (drm::copy_from_user(&w, drm::user_ptr(arg), n))
        return -EFAULT;
    w.timeout_nsec = orig.timeout_nsec;
    w.deadline_nsec = orig.deadline_nsec;
    if (drm::copy_to_user(drm::user_ptr(arg), &w, n))
        return -EFAULT;
    return ret;
}

// KMS on the primary node. panthor has no display, and the kernel answers the MODE_* ioctls of a
// driver without DRIVER_MODESET with -EOPNOTSUPP; Debian's drm_info 2.4.0 then gives up on the
// node ("Failed to retrieve information"), as it does with the real panthor. So that a client
// that dumps every node (drm_info) can list this one, the primary node answers the two resource
// queries as a KMS device with no CRTC, connector, encoder, framebuffer or plane would. Every
// other MODE_* ioctl keeps the DRM core's answer. (Deviation; docs/preload.md.)
constexpr unsigned kModeGetResources = 0xA0;
constexpr unsigned kModeGetPlaneResources = 0xB5;
struct ModeCardRes {  // struct drm_mode_card_res
    unsigned long long fb_id_ptr, crtc_id_ptr, connector_id_ptr, encoder_id_ptr;
    unsigned count_fbs, count_crtcs, count_connectors, count_encoders;
    unsigned min_width, max_width, min_height, max_height;
};
struct ModePlaneRes {  // struct drm_mode_get_plane_res
    unsigned long long plane_id_ptr;
    unsigned count_planes;
};

int empty_kms_ioctl(unsigned cmd, void* arg, bool* handled) {
    const unsigned nr = drm::uapi::_IOC_NR(cmd);
    *handled = drm::uapi::_IOC_TYPE(cmd) == drm::uapi::DRM_IOCTL_BASE &&
               ((nr == kModeGetResources && drm::uapi::_IOC_SIZE(cmd) == sizeof(ModeCardRes)) ||
                (nr == kModeGetPlaneResources && drm::uapi::_IOC_SIZE(cmd) >= 12));
    if (!*handled)
        return 0;
    if (nr == kModeGetResources) {
        ModeCardRes r{};
        if (drm::copy_from_user(&r, drm::user_ptr(arg), sizeof(r)))
            return -EFAULT;
        r.count_fbs = r.count_crtcs = r.count_connectors = r.count_encoders = 0;
        r.min_width = r.min_height = 0;
        r.max_width = r.max_height = 0;
        return drm::copy_to_user(drm::user_ptr(arg), &r, sizeof(r)) ? -EFAULT : 0;
    }
    const unsigned zero = 0;
    return drm::copy_to_user(drm::user_ptr(arg) + offsetof(ModePlaneRes, count_planes), &zero, sizeof(zero)) ? -EFAULT
                                                                                                             : 0;
}

// panfrost's WAIT_BO: timeout_ns is an absolute CLOCK_MONOTONIC deadline (0 or past: poll).
int panfrost_wait_bo_with_host_clock(drm::drm_file* f, unsigned cmd, void* arg, long long off) {
    drm_panfrost_wait_bo w{};
    if (drm::uapi::_IOC_SIZE(cmd) != sizeof(w))
        return drm::ioctl(f, cmd, arg);
    if (drm::copy_from_user(&w, drm::user_ptr(arg), sizeof(w)))
        return -EFAULT;
    const long long orig = w.timeout_ns;
    // A deadline already past stays past (the runtime clock is behind the host's by `off`).
    w.timeout_ns = orig > off ? orig - off : 0;
    if (drm::copy_to_user(drm::user_ptr(arg), &w, sizeof(w)))
        return -EFAULT;
    const int ret = drm::ioctl(f, cmd, arg);
    w.timeout_ns = orig;
    if (drm::copy_to_user(drm::user_ptr(arg), &w, sizeof(w)))
        return -EFAULT;
    return ret;
}

}  // namespace

int drm_file_ioctl(drm::drm_file* f, unsigned cmd, void* arg, long long mono_offset_ns) {
    using namespace drm::uapi;
    if (!f->is_render) {
        bool handled;
        const int ret = empty_kms_ioctl(cmd, arg, &handled);
        if (handled)
            return ret;
    }
    // By number, not by the whole cmd: older clients encode a smaller struct size.
    const unsigned nr = _IOC_NR(cmd);
    if (nr == _IOC_NR(DRM_IOCTL_SYNCOBJ_WAIT))
        return wait_with_host_clock<drm_syncobj_wait>(f, cmd, arg, mono_offset_ns);
    if (nr == _IOC_NR(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT))
        return wait_with_host_clock<drm_syncobj_timeline_wait>(f, cmd, arg, mono_offset_ns);
    if (nr == DRM_COMMAND_BASE + DRM_PANFROST_WAIT_BO && std::strcmp(f->dev->driver().name, "panfrost") == 0)
        return panfrost_wait_bo_with_host_clock(f, cmd, arg, mono_offset_ns);
    return -ENOIOCTLCMD;  // the file's own unlocked_ioctl
}

}  // namespace upanthor::preload
