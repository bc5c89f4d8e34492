/* The panthor uapi in C, for clients built against a libdrm that predates panthor_drm.h
 * (Debian bookworm's 2.4.114). Layouts and numbers as include/uapi/drm/panthor_drm.h; the
 * static asserts pin them to the values uapi/drm/panthor_drm.h asserts. */
#ifndef UPANTHOR_TESTS_PRELOAD_PANTHOR_UAPI_H
#define UPANTHOR_TESTS_PRELOAD_PANTHOR_UAPI_H
#include <drm.h>
#include <stdint.h>

#define DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET (1ull << 56)

struct drm_panthor_obj_array {
    uint32_t stride;
    uint32_t count;
    uint64_t array;
};

#define DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ 0u
#define DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ 1u
#define DRM_PANTHOR_SYNC_OP_WAIT 0u
#define DRM_PANTHOR_SYNC_OP_SIGNAL (1u << 31)
struct drm_panthor_sync_op {
    uint32_t flags;
    uint32_t handle;
    uint64_t timeline_value;
};

#define DRM_PANTHOR_DEV_QUERY_GPU_INFO 0u
struct drm_panthor_gpu_info {
    uint32_t gpu_id, gpu_rev, csf_id, l2_features, tiler_features, mem_features, mmu_features, thread_features;
    uint32_t max_threads, thread_max_workgroup_size, thread_max_barrier_size, coherency_features;
    uint32_t texture_features[4];
    uint32_t as_present, pad0;
    uint64_t shader_present, l2_present, tiler_present;
    uint32_t core_features, pad;
};
struct drm_panthor_dev_query {
    uint32_t type;
    uint32_t size;
    uint64_t pointer;
};
struct drm_panthor_vm_create {
    uint32_t flags;
    uint32_t id;
    uint64_t user_va_range;
};
#define DRM_PANTHOR_VM_BIND_OP_TYPE_MAP 0u
struct drm_panthor_vm_bind_op {
    uint32_t flags;
    uint32_t bo_handle;
    uint64_t bo_offset, va, size;
    struct drm_panthor_obj_array syncs;
};
struct drm_panthor_vm_bind {
    uint32_t vm_id;
    uint32_t flags;
    struct drm_panthor_obj_array ops;
};
struct drm_panthor_vm_get_state {
    uint32_t vm_id;
    uint32_t state;
};
struct drm_panthor_bo_create {
    uint64_t size;
    uint32_t flags, exclusive_vm_id, handle, pad;
};
struct drm_panthor_bo_mmap_offset {
    uint32_t handle, pad;
    uint64_t offset;
};
struct drm_panthor_queue_create {
    uint8_t priority;
    uint8_t pad[3];
    uint32_t ringbuf_size;
};
#define PANTHOR_GROUP_PRIORITY_MEDIUM 1
struct drm_panthor_group_create {
    struct drm_panthor_obj_array queues;
    uint8_t max_compute_cores, max_fragment_cores, max_tiler_cores, priority;
    uint32_t pad;
    uint64_t compute_core_mask, fragment_core_mask, tiler_core_mask;
    uint32_t vm_id;
    uint32_t group_handle;
};
struct drm_panthor_group_destroy {
    uint32_t group_handle, pad;
};
struct drm_panthor_queue_submit {
    uint32_t queue_index, stream_size;
    uint64_t stream_addr;
    uint32_t latest_flush, pad;
    struct drm_panthor_obj_array syncs;
};
struct drm_panthor_group_submit {
    uint32_t group_handle, pad;
    struct drm_panthor_obj_array queue_submits;
};

#define DRM_IOCTL_PANTHOR_DEV_QUERY DRM_IOWR(0x40, struct drm_panthor_dev_query)
#define DRM_IOCTL_PANTHOR_VM_CREATE DRM_IOWR(0x41, struct drm_panthor_vm_create)
#define DRM_IOCTL_PANTHOR_VM_BIND DRM_IOWR(0x43, struct drm_panthor_vm_bind)
#define DRM_IOCTL_PANTHOR_BO_CREATE DRM_IOWR(0x45, struct drm_panthor_bo_create)
#define DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET DRM_IOWR(0x46, struct drm_panthor_bo_mmap_offset)
#define DRM_IOCTL_PANTHOR_GROUP_CREATE DRM_IOWR(0x47, struct drm_panthor_group_create)
#define DRM_IOCTL_PANTHOR_GROUP_DESTROY DRM_IOWR(0x48, struct drm_panthor_group_destroy)
#define DRM_IOCTL_PANTHOR_GROUP_SUBMIT DRM_IOWR(0x49, struct drm_panthor_group_submit)

_Static_assert(DRM_IOCTL_PANTHOR_DEV_QUERY == 0xC0106440u, "DEV_QUERY");
_Static_assert(DRM_IOCTL_PANTHOR_VM_CREATE == 0xC0106441u, "VM_CREATE");
_Static_assert(DRM_IOCTL_PANTHOR_VM_BIND == 0xC0186443u, "VM_BIND");
_Static_assert(DRM_IOCTL_PANTHOR_BO_CREATE == 0xC0186445u, "BO_CREATE");
_Static_assert(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET == 0xC0106446u, "BO_MMAP_OFFSET");
_Static_assert(DRM_IOCTL_PANTHOR_GROUP_CREATE == 0xC0386447u, "GROUP_CREATE");
_Static_assert(DRM_IOCTL_PANTHOR_GROUP_DESTROY == 0xC0086448u, "GROUP_DESTROY");
_Static_assert(DRM_IOCTL_PANTHOR_GROUP_SUBMIT == 0xC0186449u, "GROUP_SUBMIT");
#endif
