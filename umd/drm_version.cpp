#include "umd/drm_version.h"

#include "uapi/drm/drm.h"

namespace umd {

using namespace drm::uapi;

Result<DriverVersion> drm_get_version(Backend& be) {
    drm_version v{};
    if (int ret = be.ioctl(DRM_IOCTL_VERSION, &v))
        return err(ret);
    DriverVersion out;
    out.name.resize(v.name_len);
    out.date.resize(v.date_len);
    out.desc.resize(v.desc_len);
    v.name = out.name.data();
    v.date = out.date.data();
    v.desc = out.desc.data();
    // The strings are user memory the kernel writes (the in-process model checks user copies).
    be.user_memory_add(v.name, v.name_len);
    be.user_memory_add(v.date, v.date_len);
    be.user_memory_add(v.desc, v.desc_len);
    const int ret = be.ioctl(DRM_IOCTL_VERSION, &v);
    be.user_memory_remove(v.name, v.name_len);
    be.user_memory_remove(v.date, v.date_len);
    be.user_memory_remove(v.desc, v.desc_len);
    if (ret)
        return err(ret);
    out.major = v.version_major;
    out.minor = v.version_minor;
    out.patchlevel = v.version_patchlevel;
    return out;
}

}  // namespace umd
