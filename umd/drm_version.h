// DRM_IOCTL_VERSION the way libdrm's drmGetVersion asks it (one call for the string lengths, one
// for the strings), for any driver behind a Backend: panthor's and panfrost's clients and tools.
#pragma once
#include <string>

#include "umd/backend.h"
#include "umd/result.h"

namespace umd {

struct DriverVersion {
    int major = 0, minor = 0, patchlevel = 0;
    std::string name, date, desc;
};

Result<DriverVersion> drm_get_version(Backend& be);

}  // namespace umd
