// The DRM code's names for kernel_shim/uaccess.h (include/linux/uaccess.h is not DRM's).
#pragma once
#include "kernel_shim/uaccess.h"

namespace drm {
using kshim::copy_from_user;
using kshim::copy_to_user;
using kshim::u64;
using kshim::uaccess_mode;
using kshim::uaccess_ok;
using kshim::uaccess_register;
using kshim::uaccess_set_mode;
using kshim::uaccess_set_trust_all;
using kshim::uaccess_unregister;
using kshim::UaccessMode;
using kshim::user_ptr;
using kshim::UserRange;
}  // namespace drm
