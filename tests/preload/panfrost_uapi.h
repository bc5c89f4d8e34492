/* The part of the panfrost uapi the C clients use, for a libdrm that ships no panfrost_drm.h
 * (Debian's libdrm-dev has none). Layouts and numbers as include/uapi/drm/panfrost_drm.h at
 * driver version 1.6; the static asserts pin them to the values uapi/drm/panfrost_drm.h asserts. */
#ifndef UPANTHOR_TESTS_PRELOAD_PANFROST_UAPI_H
#define UPANTHOR_TESTS_PRELOAD_PANFROST_UAPI_H
#include <drm.h>
#include <stddef.h>
#include <stdint.h>

#define DRM_PANFROST_SUBMIT 0x00
#define DRM_PANFROST_WAIT_BO 0x01
#define DRM_PANFROST_CREATE_BO 0x02
#define DRM_PANFROST_MMAP_BO 0x03
#define DRM_PANFROST_GET_PARAM 0x04
#define DRM_PANFROST_GET_BO_OFFSET 0x05
#define DRM_PANFROST_JM_CTX_CREATE 0x0a
#define DRM_PANFROST_JM_CTX_DESTROY 0x0b

/* requirements: FS sends the chain to job slot 0, anything else to slot 1. */
#define PANFROST_JD_REQ_FS (1u << 0)

struct drm_panfrost_submit {
    uint64_t jc;       /* GPU VA of the first job header */
    uint64_t in_syncs; /* pointer to in_sync_count syncobj handles */
    uint32_t in_sync_count;
    uint32_t out_sync; /* syncobj that gets the job's fence; 0 none */
    uint64_t bo_handles;
    uint32_t bo_handle_count;
    uint32_t requirements;
    uint32_t jm_ctx_handle; /* 1.5: 0 the file's default context */
    uint32_t pad;
};

struct drm_panfrost_wait_bo {
    uint32_t handle;
    uint32_t pad;
    int64_t timeout_ns; /* absolute CLOCK_MONOTONIC */
};

#define PANFROST_BO_NOEXEC 1u
#define PANFROST_BO_HEAP 2u
struct drm_panfrost_create_bo {
    uint32_t size;
    uint32_t flags;
    uint32_t handle; /* out */
    uint32_t pad;
    uint64_t offset; /* out: the BO's GPU VA in this file's VM */
};

struct drm_panfrost_mmap_bo {
    uint32_t handle;
    uint32_t flags;
    uint64_t offset; /* out: the fake offset for mmap(2) */
};

#define DRM_PANFROST_PARAM_GPU_PROD_ID 0u
#define DRM_PANFROST_PARAM_JS_PRESENT 7u
#define DRM_PANFROST_PARAM_AS_PRESENT 6u
struct drm_panfrost_get_param {
    uint32_t param;
    uint32_t pad;
    uint64_t value;
};

struct drm_panfrost_get_bo_offset {
    uint32_t handle;
    uint32_t pad;
    uint64_t offset; /* out: the BO's GPU VA in the caller's VM */
};

#define PANFROST_JM_CTX_PRIORITY_MEDIUM 1u
struct drm_panfrost_jm_ctx_create {
    uint32_t handle; /* out */
    uint32_t priority;
};
struct drm_panfrost_jm_ctx_destroy {
    uint32_t handle;
    uint32_t pad;
};

#define DRM_IOCTL_PANFROST_SUBMIT DRM_IOW(DRM_COMMAND_BASE + DRM_PANFROST_SUBMIT, struct drm_panfrost_submit)
#define DRM_IOCTL_PANFROST_WAIT_BO DRM_IOW(DRM_COMMAND_BASE + DRM_PANFROST_WAIT_BO, struct drm_panfrost_wait_bo)
#define DRM_IOCTL_PANFROST_CREATE_BO DRM_IOWR(DRM_COMMAND_BASE + DRM_PANFROST_CREATE_BO, struct drm_panfrost_create_bo)
#define DRM_IOCTL_PANFROST_MMAP_BO DRM_IOWR(DRM_COMMAND_BASE + DRM_PANFROST_MMAP_BO, struct drm_panfrost_mmap_bo)
#define DRM_IOCTL_PANFROST_GET_PARAM DRM_IOWR(DRM_COMMAND_BASE + DRM_PANFROST_GET_PARAM, struct drm_panfrost_get_param)
#define DRM_IOCTL_PANFROST_GET_BO_OFFSET \
    DRM_IOWR(DRM_COMMAND_BASE + DRM_PANFROST_GET_BO_OFFSET, struct drm_panfrost_get_bo_offset)
#define DRM_IOCTL_PANFROST_JM_CTX_CREATE \
    DRM_IOWR(DRM_COMMAND_BASE + DRM_PANFROST_JM_CTX_CREATE, struct drm_panfrost_jm_ctx_create)
#define DRM_IOCTL_PANFROST_JM_CTX_DESTROY \
    DRM_IOWR(DRM_COMMAND_BASE + DRM_PANFROST_JM_CTX_DESTROY, struct drm_panfrost_jm_ctx_destroy)

_Static_assert(sizeof(struct drm_panfrost_submit) == 48 && offsetof(struct drm_panfrost_submit, out_sync) == 20 &&
                   offsetof(struct drm_panfrost_submit, bo_handles) == 24 &&
                   offsetof(struct drm_panfrost_submit, jm_ctx_handle) == 40,
               "drm_panfrost_submit layout");
_Static_assert(sizeof(struct drm_panfrost_create_bo) == 24 && offsetof(struct drm_panfrost_create_bo, offset) == 16,
               "drm_panfrost_create_bo layout");
_Static_assert(DRM_IOCTL_PANFROST_SUBMIT == 0x40306440u, "SUBMIT number");
_Static_assert(DRM_IOCTL_PANFROST_WAIT_BO == 0x40106441u, "WAIT_BO number");
_Static_assert(DRM_IOCTL_PANFROST_CREATE_BO == 0xC0186442u, "CREATE_BO number");
_Static_assert(DRM_IOCTL_PANFROST_MMAP_BO == 0xC0106443u, "MMAP_BO number");
_Static_assert(DRM_IOCTL_PANFROST_GET_PARAM == 0xC0106444u, "GET_PARAM number");
_Static_assert(DRM_IOCTL_PANFROST_GET_BO_OFFSET == 0xC0106445u, "GET_BO_OFFSET number");
_Static_assert(DRM_IOCTL_PANFROST_JM_CTX_CREATE == 0xC008644Au, "JM_CTX_CREATE number");
_Static_assert(DRM_IOCTL_PANFROST_JM_CTX_DESTROY == 0xC008644Bu, "JM_CTX_DESTROY number");

#endif
