// The GET_PARAM part of include/uapi/drm/panfrost_drm.h (driver 1.6) that this slice of panfrost
// serves: the ioctl, its argument and enum drm_panfrost_param.
// To be replaced by uapi/drm/panfrost_drm.h: nothing here is meant to outlive that header.
#pragma once
#include <linux/types.h>

#include <cstddef>

#include "uapi/drm/drm.h"

// As in C, the uAPI structs live in the global namespace.
struct drm_panfrost_get_param {
    __u32 param;
    __u32 pad;  // must be 0
    __u64 value;
};
static_assert(sizeof(drm_panfrost_get_param) == 16 && offsetof(drm_panfrost_get_param, value) == 8);

enum drm_panfrost_param {
    DRM_PANFROST_PARAM_GPU_PROD_ID = 0,
    DRM_PANFROST_PARAM_GPU_REVISION = 1,
    DRM_PANFROST_PARAM_SHADER_PRESENT = 2,
    DRM_PANFROST_PARAM_TILER_PRESENT = 3,
    DRM_PANFROST_PARAM_L2_PRESENT = 4,
    DRM_PANFROST_PARAM_STACK_PRESENT = 5,
    DRM_PANFROST_PARAM_AS_PRESENT = 6,
    DRM_PANFROST_PARAM_JS_PRESENT = 7,
    DRM_PANFROST_PARAM_L2_FEATURES = 8,
    DRM_PANFROST_PARAM_CORE_FEATURES = 9,
    DRM_PANFROST_PARAM_TILER_FEATURES = 10,
    DRM_PANFROST_PARAM_MEM_FEATURES = 11,
    DRM_PANFROST_PARAM_MMU_FEATURES = 12,
    DRM_PANFROST_PARAM_THREAD_FEATURES = 13,
    DRM_PANFROST_PARAM_MAX_THREADS = 14,
    DRM_PANFROST_PARAM_THREAD_MAX_WORKGROUP_SZ = 15,
    DRM_PANFROST_PARAM_THREAD_MAX_BARRIER_SZ = 16,
    DRM_PANFROST_PARAM_COHERENCY_FEATURES = 17,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES0 = 18,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES1 = 19,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES2 = 20,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES3 = 21,
    DRM_PANFROST_PARAM_JS_FEATURES0 = 22,
    DRM_PANFROST_PARAM_JS_FEATURES15 = 37,
    DRM_PANFROST_PARAM_NR_CORE_GROUPS = 38,
    DRM_PANFROST_PARAM_THREAD_TLS_ALLOC = 39,
    DRM_PANFROST_PARAM_AFBC_FEATURES = 40,
    DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP = 41,
    DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP_FREQUENCY = 42,
    DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES = 43,
    DRM_PANFROST_PARAM_SELECTED_COHERENCY = 44,
};

// enum drm_panfrost_jm_ctx_priority and the SELECTED_COHERENCY values.
enum drm_panfrost_jm_ctx_priority {
    PANFROST_JM_CTX_PRIORITY_LOW = 0,
    PANFROST_JM_CTX_PRIORITY_MEDIUM = 1,
    PANFROST_JM_CTX_PRIORITY_HIGH = 2,
};
inline constexpr __u32 DRM_PANFROST_GPU_COHERENCY_ACE_LITE = 0;
inline constexpr __u32 DRM_PANFROST_GPU_COHERENCY_ACE = 1;
inline constexpr __u32 DRM_PANFROST_GPU_COHERENCY_NONE = 31;

namespace drm::uapi {
inline constexpr unsigned DRM_PANFROST_GET_PARAM = 0x04;
inline constexpr unsigned DRM_IOCTL_PANFROST_GET_PARAM =
    DRM_IOWR<drm_panfrost_get_param>(DRM_COMMAND_BASE + DRM_PANFROST_GET_PARAM);
static_assert(DRM_IOCTL_PANFROST_GET_PARAM == 0xC0106444u);
}  // namespace drm::uapi
