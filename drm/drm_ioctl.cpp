// Mirrors drivers/gpu/drm/drm_ioctl.c (drm_ioctl, drm_ioctl_kernel, drm_version, drm_getcap)
// and drm_gem.c's drm_gem_close_ioctl. See drm/drm_ioctl.h for the rules.
#include "drm/drm_ioctl.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "drm/drm_auth.h"
#include "drm/drm_prime.h"
#include "drm/drm_syncobj.h"
#include "drm/uaccess.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;
using namespace drm::uapi;

// drm_copy_field: copies min(len, *buf_len) bytes (no NUL) and reports the full length back.
static int drm_copy_field(char* buf, size_t* buf_len, const char* value) {
    if (WARN_ON(!value)) {
        *buf_len = 0;
        return 0;
    }
    size_t len = std::strlen(value);
    if (len > *buf_len)
        len = *buf_len;
    // Userspace learns the exact length even when its buffer was smaller.
    *buf_len = std::strlen(value);
    if (len && buf && copy_to_user(reinterpret_cast<u64>(buf), value, len))
        return -EFAULT;
    return 0;
}

int drm_version(drm_device* dev, void* data, drm_file*) {
    auto* v = static_cast<uapi::drm_version*>(data);
    const DriverDesc& d = dev->driver();
    v->version_major = d.major;
    v->version_minor = d.minor;
    v->version_patchlevel = d.patchlevel;
    int err = drm_copy_field(v->name, &v->name_len, d.name);
    if (!err)
        err = drm_copy_field(v->date, &v->date_len, d.date);
    if (!err)
        err = drm_copy_field(v->desc, &v->desc_len, d.desc);
    return err;
}

int drm_getcap(drm_device* dev, void* data, drm_file*) {
    auto* req = static_cast<drm_get_cap*>(data);
    req->value = 0;
    switch (req->capability) {
    case DRM_CAP_TIMESTAMP_MONOTONIC: req->value = 1; return 0;
    case DRM_CAP_PRIME: req->value = DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT; return 0;
    case DRM_CAP_SYNCOBJ: req->value = drm_core_check_feature(dev, DRIVER_SYNCOBJ); return 0;
    case DRM_CAP_SYNCOBJ_TIMELINE: req->value = drm_core_check_feature(dev, DRIVER_SYNCOBJ_TIMELINE); return 0;
    }
    // The remaining caps only exist for KMS drivers; we model no KMS, so a modeset driver's
    // unknown cap is -EINVAL (the kernel's default case) and everything else -EOPNOTSUPP.
    if (!drm_core_check_feature(dev, DRIVER_MODESET))
        return -EOPNOTSUPP;
    return -EINVAL;
}

int drm_gem_close_ioctl(drm_device* dev, void* data, drm_file* file) {
    auto* args = static_cast<drm_gem_close*>(data);
    if (!drm_core_check_feature(dev, DRIVER_GEM))
        return -EOPNOTSUPP;
    return file->gem.handle_delete(args->handle);
}

namespace {

// The core table, indexed by nr like the kernel's drm_ioctls[] (only the entries we serve).
constexpr unsigned DRM_CORE_IOCTL_COUNT = 0xD0;  // through DRM_IOCTL_SYNCOBJ_EVENTFD (0xCF)

constexpr std::array<IoctlDesc, DRM_CORE_IOCTL_COUNT> make_core_table() {
    std::array<IoctlDesc, DRM_CORE_IOCTL_COUNT> t{};
    auto def = [&](unsigned cmd, ioctl_t func, u32 flags, const char* name) {
        t[DRM_IOCTL_NR(cmd)] = IoctlDesc{cmd, flags, func, name};
    };
    def(DRM_IOCTL_VERSION, drm::drm_version, DRM_RENDER_ALLOW, "DRM_IOCTL_VERSION");
    def(DRM_IOCTL_GET_MAGIC, drm_getmagic, 0, "DRM_IOCTL_GET_MAGIC");
    def(DRM_IOCTL_GEM_CLOSE, drm_gem_close_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_GEM_CLOSE");
    def(DRM_IOCTL_AUTH_MAGIC, drm_authmagic, DRM_AUTH | DRM_MASTER, "DRM_IOCTL_AUTH_MAGIC");
    def(DRM_IOCTL_SET_MASTER, drm_setmaster_ioctl, 0, "DRM_IOCTL_SET_MASTER");
    def(DRM_IOCTL_DROP_MASTER, drm_dropmaster_ioctl, 0, "DRM_IOCTL_DROP_MASTER");
    def(DRM_IOCTL_GET_CAP, drm_getcap, DRM_RENDER_ALLOW, "DRM_IOCTL_GET_CAP");
    def(DRM_IOCTL_PRIME_HANDLE_TO_FD, drm_prime_handle_to_fd_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_PRIME_HANDLE_TO_FD");
    def(DRM_IOCTL_PRIME_FD_TO_HANDLE, drm_prime_fd_to_handle_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_PRIME_FD_TO_HANDLE");
    def(DRM_IOCTL_SYNCOBJ_CREATE, drm_syncobj_create_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_CREATE");
    def(DRM_IOCTL_SYNCOBJ_DESTROY, drm_syncobj_destroy_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_DESTROY");
    def(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, drm_syncobj_handle_to_fd_ioctl, DRM_RENDER_ALLOW,
        "DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD");
    def(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, drm_syncobj_fd_to_handle_ioctl, DRM_RENDER_ALLOW,
        "DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE");
    def(DRM_IOCTL_SYNCOBJ_WAIT, drm_syncobj_wait_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_WAIT");
    def(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, drm_syncobj_timeline_wait_ioctl, DRM_RENDER_ALLOW,
        "DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT");
    def(DRM_IOCTL_SYNCOBJ_RESET, drm_syncobj_reset_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_RESET");
    def(DRM_IOCTL_SYNCOBJ_SIGNAL, drm_syncobj_signal_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_SIGNAL");
    def(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, drm_syncobj_timeline_signal_ioctl, DRM_RENDER_ALLOW,
        "DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL");
    def(DRM_IOCTL_SYNCOBJ_QUERY, drm_syncobj_query_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_QUERY");
    def(DRM_IOCTL_SYNCOBJ_TRANSFER, drm_syncobj_transfer_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_TRANSFER");
    def(DRM_IOCTL_SYNCOBJ_EVENTFD, drm_syncobj_eventfd_ioctl, DRM_RENDER_ALLOW, "DRM_IOCTL_SYNCOBJ_EVENTFD");
    return t;
}

constexpr std::array<IoctlDesc, DRM_CORE_IOCTL_COUNT> drm_ioctls = make_core_table();
static_assert(DRM_IOCTL_NR(DRM_IOCTL_SYNCOBJ_EVENTFD) < DRM_CORE_IOCTL_COUNT);

// drm_ioctl_permit: the caller's capabilities (kernel_shim/cred.h) and the file's standing with
// its master (drm/drm_auth.h) against the ioctl's flags.
int drm_ioctl_permit(u32 flags, drm_file* file) {
    if ((flags & DRM_ROOT_ONLY) && !capable(CAP_SYS_ADMIN))
        return -EACCES;
    if ((flags & DRM_AUTH) && !file->is_render && !file->authenticated)
        return -EACCES;
    if ((flags & DRM_MASTER) && !drm_is_current_master(file))
        return -EACCES;
    if (file->is_render && !(flags & DRM_RENDER_ALLOW))
        return -EACCES;
    return 0;
}

}  // namespace

int drm_ioctl_kernel(drm_file* file, ioctl_t func, void* kdata, u32 flags) {
    drm_device* dev = file->dev;
    if (dev->is_unplugged())
        return -ENODEV;
    int ret = drm_ioctl_permit(flags, file);
    if (ret)
        return ret;
    return func(dev, kdata, file);
}

int drm_ioctl(drm_file* file, unsigned cmd, u64 arg) {
    drm_device* dev = file->dev;
    unsigned nr = DRM_IOCTL_NR(cmd);
    const IoctlDesc* ioctl = nullptr;

    if (nr >= DRM_COMMAND_BASE && nr < DRM_COMMAND_END) {
        unsigned index = nr - DRM_COMMAND_BASE;
        if (index >= dev->driver().ioctls.size())
            return -EINVAL;
        ioctl = &dev->driver().ioctls[index];
    } else {
        if (nr >= DRM_CORE_IOCTL_COUNT)
            return -EINVAL;
        ioctl = &drm_ioctls[nr];
    }
    if (!ioctl->func)
        return -EINVAL;

    unsigned drv_size = _IOC_SIZE(ioctl->cmd);
    unsigned in_size = _IOC_SIZE(cmd);
    unsigned out_size = in_size;
    if ((cmd & ioctl->cmd & IOC_IN) == 0)
        in_size = 0;
    if ((cmd & ioctl->cmd & IOC_OUT) == 0)
        out_size = 0;
    unsigned ksize = std::max(std::max(in_size, out_size), drv_size);

    // Small arguments live on the stack, as upstream (128 bytes), bigger ones in kmalloc.
    alignas(8) char stack_kdata[128];
    char* kdata = stack_kdata;
    if (ksize > sizeof(stack_kdata)) {
        kdata = static_cast<char*>(kmalloc(ksize, GFP_KERNEL));
        if (!kdata)
            return -ENOMEM;
    }
    int retcode;
    if (copy_from_user(kdata, arg, in_size) != 0) {
        retcode = -EFAULT;
    } else {
        if (ksize > in_size)
            std::memset(kdata + in_size, 0, ksize - in_size);
        retcode = drm_ioctl_kernel(file, ioctl->func, kdata, ioctl->flags);
        if (copy_to_user(arg, kdata, out_size) != 0)
            retcode = -EFAULT;
    }
    if (kdata != stack_kdata)
        kfree(kdata);
    return retcode;
}

}  // namespace drm
