// ABI of include/uapi/drm/panthor_drm.h at driver version 1.8 (docs/hw/csf/uapi.md): ioctl numbers,
// structs and flag values, with the kernel's names. Layouts are LP64 and checked below against the
// sizes and offsets of docs/hw/csf/uapi.md. The structs live in the global namespace, as in C, so
// code written against the kernel header reads the same.
#pragma once
#include <cstddef>
#include <cstdint>

#include "uapi/drm/drm.h"

// The kernel's fixed-width ABI types (__u8, __u32, __u64), as userspace code sees them.
#include <linux/types.h>

enum drm_panthor_ioctl_id {
    DRM_PANTHOR_DEV_QUERY = 0,
    DRM_PANTHOR_VM_CREATE,
    DRM_PANTHOR_VM_DESTROY,
    DRM_PANTHOR_VM_BIND,
    DRM_PANTHOR_VM_GET_STATE,
    DRM_PANTHOR_BO_CREATE,
    DRM_PANTHOR_BO_MMAP_OFFSET,
    DRM_PANTHOR_GROUP_CREATE,
    DRM_PANTHOR_GROUP_DESTROY,
    DRM_PANTHOR_GROUP_SUBMIT,
    DRM_PANTHOR_GROUP_GET_STATE,
    DRM_PANTHOR_TILER_HEAP_CREATE,
    DRM_PANTHOR_TILER_HEAP_DESTROY,
    DRM_PANTHOR_BO_SET_LABEL,
    DRM_PANTHOR_SET_USER_MMIO_OFFSET,
    DRM_PANTHOR_BO_SYNC,
    DRM_PANTHOR_BO_QUERY_INFO,
};

// ---- MMIO mmap offsets ----
inline constexpr __u64 DRM_PANTHOR_USER_MMIO_OFFSET_32BIT = __u64{1} << 43;
inline constexpr __u64 DRM_PANTHOR_USER_MMIO_OFFSET_64BIT = __u64{1} << 56;
inline constexpr __u64 DRM_PANTHOR_USER_MMIO_OFFSET = DRM_PANTHOR_USER_MMIO_OFFSET_64BIT;
inline constexpr __u64 DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET = DRM_PANTHOR_USER_MMIO_OFFSET;

// ---- common objects ----
struct drm_panthor_obj_array {
    __u32 stride;
    __u32 count;
    __u64 array;
};
#define DRM_PANTHOR_OBJ_ARRAY(cnt, ptr) \
    { sizeof((ptr)[0]), (cnt), reinterpret_cast<__u64>(ptr) }

enum drm_panthor_sync_op_flags {
    DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_MASK = 0xff,
    DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ = 0,
    DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ = 1,
    DRM_PANTHOR_SYNC_OP_WAIT = 0u << 31,
    DRM_PANTHOR_SYNC_OP_SIGNAL = 1u << 31,
};

struct drm_panthor_sync_op {
    __u32 flags;
    __u32 handle;
    __u64 timeline_value;
};

// ---- DEV_QUERY ----
enum drm_panthor_dev_query_type {
    DRM_PANTHOR_DEV_QUERY_GPU_INFO = 0,
    DRM_PANTHOR_DEV_QUERY_CSIF_INFO,
    DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO,
    DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO,
    DRM_PANTHOR_DEV_QUERY_MMU_INFO,  // 1.9: struct drm_panthor_mmu_info
};

// The values drm_panthor_gpu_info::selected_coherency takes, as GPU_COHERENCY_PROTOCOL does.
enum drm_panthor_gpu_coherency {
    DRM_PANTHOR_GPU_COHERENCY_ACE_LITE = 0,
    DRM_PANTHOR_GPU_COHERENCY_ACE = 1,
    DRM_PANTHOR_GPU_COHERENCY_NONE = 31,
};

struct drm_panthor_gpu_info {
    __u32 gpu_id;
    __u32 gpu_rev;
    __u32 csf_id;
    __u32 l2_features;
    __u32 tiler_features;
    __u32 mem_features;
    __u32 mmu_features;
    __u32 thread_features;
    __u32 max_threads;
    __u32 thread_max_workgroup_size;
    __u32 thread_max_barrier_size;
    __u32 coherency_features;
    __u32 texture_features[4];
    __u32 as_present;
    // enum drm_panthor_gpu_coherency: the protocol the driver selected (1.7; was padding).
    __u32 selected_coherency;
    __u64 shader_present;
    __u64 l2_present;
    __u64 tiler_present;
    __u32 core_features;
    __u32 pad;
    // GPU_FEATURES (arch >= 11; 0 before). Added without a version bump.
    __u64 gpu_features;
};
#define DRM_PANTHOR_ARCH_MAJOR(x) ((x) >> 28)
#define DRM_PANTHOR_ARCH_MINOR(x) (((x) >> 24) & 0xf)
#define DRM_PANTHOR_ARCH_REV(x) (((x) >> 20) & 0xf)
#define DRM_PANTHOR_PRODUCT_MAJOR(x) (((x) >> 16) & 0xf)
#define DRM_PANTHOR_VERSION_MAJOR(x) (((x) >> 12) & 0xf)
#define DRM_PANTHOR_VERSION_MINOR(x) (((x) >> 4) & 0xff)
#define DRM_PANTHOR_VERSION_STATUS(x) ((x)&0xf)
#define DRM_PANTHOR_CSHW_MAJOR(x) (((x) >> 26) & 0x3f)
#define DRM_PANTHOR_CSHW_MINOR(x) (((x) >> 20) & 0x3f)
#define DRM_PANTHOR_CSHW_REV(x) (((x) >> 16) & 0xf)
#define DRM_PANTHOR_MCU_MAJOR(x) (((x) >> 10) & 0x3f)
#define DRM_PANTHOR_MCU_MINOR(x) (((x) >> 4) & 0x3f)
#define DRM_PANTHOR_MCU_REV(x) ((x)&0xf)

struct drm_panthor_csif_info {
    __u32 csg_slot_count;
    __u32 cs_slot_count;
    __u32 cs_reg_count;
    __u32 scoreboard_slot_count;
    __u32 unpreserved_cs_reg_count;
    __u32 pad;
};

// TIMESTAMP_INFO's input flags (1.8): what to sample. 0 means GPU | GPU_OFFSET | FREQ, the
// pre-1.8 answer.
enum drm_panthor_timestamp_info_flags {
    DRM_PANTHOR_TIMESTAMP_GPU = 1 << 0,
    DRM_PANTHOR_TIMESTAMP_CPU_NONE = 0 << 1,
    DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC = 1 << 1,
    DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC_RAW = 2 << 1,
    DRM_PANTHOR_TIMESTAMP_CPU_TYPE_MASK = 7 << 1,
    DRM_PANTHOR_TIMESTAMP_GPU_OFFSET = 1 << 4,
    DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT = 1 << 5,
    DRM_PANTHOR_TIMESTAMP_FREQ = 1 << 6,
    DRM_PANTHOR_TIMESTAMP_DURATION = 1 << 7,
};

struct drm_panthor_timestamp_info {
    __u64 timestamp_frequency;  // FREQ
    __u64 current_timestamp;    // GPU: GPU_TIMESTAMP
    __u64 timestamp_offset;     // GPU_OFFSET: GPU_TIMESTAMP_OFFSET
    // 1.8 (the struct was 24 bytes before; the kernel zero-extends an older caller's).
    __u32 flags;              // in: drm_panthor_timestamp_info_flags
    __u32 duration_nsec;      // DURATION: how long the sampling took
    __u64 cycle_count;        // GPU_CYCLE_COUNT
    __u64 cpu_timestamp_sec;  // CPU_*: the CPU clock
    __u64 cpu_timestamp_nsec;
};

struct drm_panthor_group_priorities_info {
    __u8 allowed_mask;
    __u8 pad[3];
};

// ---- 1.9: DRM_PANTHOR_DEV_QUERY_MMU_INFO ----
// The page sizes (a bitmap of sizes in bytes) the GPU page tables are built with.
struct drm_panthor_mmu_info {
    __u64 page_size_bitmap;
};
static_assert(sizeof(drm_panthor_mmu_info) == 8);

struct drm_panthor_dev_query {
    __u32 type;
    __u32 size;
    __u64 pointer;
};

// ---- VMs ----
struct drm_panthor_vm_create {
    __u32 flags;
    __u32 id;
    __u64 user_va_range;
};

struct drm_panthor_vm_destroy {
    __u32 id;
    __u32 pad;
};

enum drm_panthor_vm_bind_op_flags {
    DRM_PANTHOR_VM_BIND_OP_MAP_READONLY = 1 << 0,
    DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC = 1 << 1,
    DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED = 1 << 2,
    // 1.9: map [va, va + size) cyclically over a per-file dummy object. MAP only, with
    // bo_handle = bo_offset = 0 and MAP_NOEXEC set; GPU reads return undefined values.
    DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE = 1 << 3,
    DRM_PANTHOR_VM_BIND_OP_TYPE_MASK = static_cast<int>(0xfu << 28),
    DRM_PANTHOR_VM_BIND_OP_TYPE_MAP = 0 << 28,
    DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP = 1 << 28,
    DRM_PANTHOR_VM_BIND_OP_TYPE_SYNC_ONLY = 2 << 28,
};

struct drm_panthor_vm_bind_op {
    __u32 flags;
    __u32 bo_handle;
    __u64 bo_offset;
    __u64 va;
    __u64 size;
    drm_panthor_obj_array syncs;
};

enum drm_panthor_vm_bind_flags {
    DRM_PANTHOR_VM_BIND_ASYNC = 1 << 0,
};

struct drm_panthor_vm_bind {
    __u32 vm_id;
    __u32 flags;
    drm_panthor_obj_array ops;
};

enum drm_panthor_vm_state {
    DRM_PANTHOR_VM_STATE_USABLE,
    DRM_PANTHOR_VM_STATE_UNUSABLE,
};

struct drm_panthor_vm_get_state {
    __u32 vm_id;
    __u32 state;
};

// ---- BOs ----
enum drm_panthor_bo_flags {
    DRM_PANTHOR_BO_NO_MMAP = 1 << 0,
    // 1.7: CPU mappings are write-back cacheable on a non-coherent device; the caller keeps the
    // caches coherent with BO_SYNC. Exclusive with NO_MMAP.
    DRM_PANTHOR_BO_WB_MMAP = 1 << 1,
};

struct drm_panthor_bo_create {
    __u64 size;
    __u32 flags;
    __u32 exclusive_vm_id;
    __u32 handle;
    __u32 pad;
};

struct drm_panthor_bo_mmap_offset {
    __u32 handle;
    __u32 pad;
    __u64 offset;
};

struct drm_panthor_bo_set_label {
    __u32 handle;
    __u32 pad;
    __u64 label;
};
inline constexpr std::size_t PANTHOR_BO_LABEL_MAXLEN = 4096;

struct drm_panthor_set_user_mmio_offset {
    __u64 offset;
};

// ---- BO_SYNC (1.7) ----
enum drm_panthor_bo_sync_op_type {
    // Clean the CPU caches of the range (CPU writes become visible to the GPU).
    DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH = 0,
    // Clean, then invalidate (GPU writes become visible to the CPU as well).
    DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE = 1,
};

struct drm_panthor_bo_sync_op {
    __u32 handle;
    __u32 type;  // enum drm_panthor_bo_sync_op_type
    __u64 offset;
    __u64 size;
};

struct drm_panthor_bo_sync {
    drm_panthor_obj_array ops;  // of drm_panthor_bo_sync_op
};

// ---- BO_QUERY_INFO (1.7) ----
enum drm_panthor_bo_extra_flags {
    // The BO comes from another device or driver (a re-import of our own export is not flagged).
    DRM_PANTHOR_BO_IS_IMPORTED = 1 << 0,
};

struct drm_panthor_bo_query_info {
    __u32 handle;
    __u32 extra_flags;   // out: drm_panthor_bo_extra_flags
    __u32 create_flags;  // out: the BO_CREATE flags (0 for a foreign import)
    __u32 pad;           // out: 0
};

// ---- groups and queues ----
struct drm_panthor_queue_create {
    __u8 priority;
    __u8 pad[3];
    __u32 ringbuf_size;
};

enum drm_panthor_group_priority {
    PANTHOR_GROUP_PRIORITY_LOW = 0,
    PANTHOR_GROUP_PRIORITY_MEDIUM,
    PANTHOR_GROUP_PRIORITY_HIGH,
    PANTHOR_GROUP_PRIORITY_REALTIME,
};

struct drm_panthor_group_create {
    drm_panthor_obj_array queues;
    __u8 max_compute_cores;
    __u8 max_fragment_cores;
    __u8 max_tiler_cores;
    __u8 priority;
    __u32 pad;
    __u64 compute_core_mask;
    __u64 fragment_core_mask;
    __u64 tiler_core_mask;
    __u32 vm_id;
    __u32 group_handle;
};

struct drm_panthor_group_destroy {
    __u32 group_handle;
    __u32 pad;
};

struct drm_panthor_queue_submit {
    __u32 queue_index;
    __u32 stream_size;
    __u64 stream_addr;
    __u32 latest_flush;
    __u32 pad;
    drm_panthor_obj_array syncs;
};

struct drm_panthor_group_submit {
    __u32 group_handle;
    __u32 pad;
    drm_panthor_obj_array queue_submits;
};

enum drm_panthor_group_state_flags {
    DRM_PANTHOR_GROUP_STATE_TIMEDOUT = 1 << 0,
    DRM_PANTHOR_GROUP_STATE_FATAL_FAULT = 1 << 1,
    DRM_PANTHOR_GROUP_STATE_INNOCENT = 1 << 2,
};

struct drm_panthor_group_get_state {
    __u32 group_handle;
    __u32 state;
    __u32 fatal_queues;
    __u32 pad;
};

struct drm_panthor_tiler_heap_create {
    __u32 vm_id;
    __u32 initial_chunk_count;
    __u32 chunk_size;
    __u32 max_chunks;
    __u32 target_in_flight;
    __u32 handle;
    __u64 tiler_heap_ctx_gpu_va;
    __u64 first_heap_chunk_gpu_va;
};

struct drm_panthor_tiler_heap_destroy {
    __u32 handle;
    __u32 pad;
};

// ---- ioctl numbers ----
namespace drm::uapi {
#define PANTHOR_IOCTL(__access, __id, __type) \
    DRM_IO##__access<drm_panthor_##__type>(DRM_COMMAND_BASE + DRM_PANTHOR_##__id)
inline constexpr unsigned DRM_IOCTL_PANTHOR_DEV_QUERY = PANTHOR_IOCTL(WR, DEV_QUERY, dev_query);
inline constexpr unsigned DRM_IOCTL_PANTHOR_VM_CREATE = PANTHOR_IOCTL(WR, VM_CREATE, vm_create);
inline constexpr unsigned DRM_IOCTL_PANTHOR_VM_DESTROY = PANTHOR_IOCTL(WR, VM_DESTROY, vm_destroy);
inline constexpr unsigned DRM_IOCTL_PANTHOR_VM_BIND = PANTHOR_IOCTL(WR, VM_BIND, vm_bind);
inline constexpr unsigned DRM_IOCTL_PANTHOR_VM_GET_STATE = PANTHOR_IOCTL(WR, VM_GET_STATE, vm_get_state);
inline constexpr unsigned DRM_IOCTL_PANTHOR_BO_CREATE = PANTHOR_IOCTL(WR, BO_CREATE, bo_create);
inline constexpr unsigned DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET = PANTHOR_IOCTL(WR, BO_MMAP_OFFSET, bo_mmap_offset);
inline constexpr unsigned DRM_IOCTL_PANTHOR_GROUP_CREATE = PANTHOR_IOCTL(WR, GROUP_CREATE, group_create);
inline constexpr unsigned DRM_IOCTL_PANTHOR_GROUP_DESTROY = PANTHOR_IOCTL(WR, GROUP_DESTROY, group_destroy);
inline constexpr unsigned DRM_IOCTL_PANTHOR_GROUP_SUBMIT = PANTHOR_IOCTL(WR, GROUP_SUBMIT, group_submit);
inline constexpr unsigned DRM_IOCTL_PANTHOR_GROUP_GET_STATE = PANTHOR_IOCTL(WR, GROUP_GET_STATE, group_get_state);
inline constexpr unsigned DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE = PANTHOR_IOCTL(WR, TILER_HEAP_CREATE, tiler_heap_create);
inline constexpr unsigned DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY =
    PANTHOR_IOCTL(WR, TILER_HEAP_DESTROY, tiler_heap_destroy);
inline constexpr unsigned DRM_IOCTL_PANTHOR_BO_SET_LABEL = PANTHOR_IOCTL(WR, BO_SET_LABEL, bo_set_label);
inline constexpr unsigned DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET =
    PANTHOR_IOCTL(WR, SET_USER_MMIO_OFFSET, set_user_mmio_offset);
inline constexpr unsigned DRM_IOCTL_PANTHOR_BO_SYNC = PANTHOR_IOCTL(WR, BO_SYNC, bo_sync);
inline constexpr unsigned DRM_IOCTL_PANTHOR_BO_QUERY_INFO = PANTHOR_IOCTL(WR, BO_QUERY_INFO, bo_query_info);
#undef PANTHOR_IOCTL

// docs/hw/csf/uapi.md, "Ioctl numbers": the values userspace has compiled in.
static_assert(DRM_IOCTL_PANTHOR_DEV_QUERY == 0xC0106440u);
static_assert(DRM_IOCTL_PANTHOR_VM_CREATE == 0xC0106441u);
static_assert(DRM_IOCTL_PANTHOR_VM_DESTROY == 0xC0086442u);
static_assert(DRM_IOCTL_PANTHOR_VM_BIND == 0xC0186443u);
static_assert(DRM_IOCTL_PANTHOR_VM_GET_STATE == 0xC0086444u);
static_assert(DRM_IOCTL_PANTHOR_BO_CREATE == 0xC0186445u);
static_assert(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET == 0xC0106446u);
static_assert(DRM_IOCTL_PANTHOR_GROUP_CREATE == 0xC0386447u);
static_assert(DRM_IOCTL_PANTHOR_GROUP_DESTROY == 0xC0086448u);
static_assert(DRM_IOCTL_PANTHOR_GROUP_SUBMIT == 0xC0186449u);
static_assert(DRM_IOCTL_PANTHOR_GROUP_GET_STATE == 0xC010644Au);
static_assert(DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE == 0xC028644Bu);
static_assert(DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY == 0xC008644Cu);
static_assert(DRM_IOCTL_PANTHOR_BO_SET_LABEL == 0xC010644Du);
static_assert(DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET == 0xC008644Eu);
static_assert(DRM_IOCTL_PANTHOR_BO_SYNC == 0xC010644Fu);
static_assert(DRM_IOCTL_PANTHOR_BO_QUERY_INFO == 0xC0106450u);
}  // namespace drm::uapi

// ---- layout checks (docs/hw/csf/uapi.md) ----
static_assert(sizeof(drm_panthor_obj_array) == 16 && offsetof(drm_panthor_obj_array, array) == 8);
static_assert(sizeof(drm_panthor_sync_op) == 16 && offsetof(drm_panthor_sync_op, timeline_value) == 8);
static_assert(sizeof(drm_panthor_dev_query) == 16 && offsetof(drm_panthor_dev_query, pointer) == 8);
static_assert(sizeof(drm_panthor_gpu_info) == 112 && offsetof(drm_panthor_gpu_info, selected_coherency) == 68 &&
              offsetof(drm_panthor_gpu_info, gpu_features) == 104);
static_assert(offsetof(drm_panthor_gpu_info, texture_features) == 48 &&
              offsetof(drm_panthor_gpu_info, as_present) == 64);
static_assert(offsetof(drm_panthor_gpu_info, shader_present) == 72 && offsetof(drm_panthor_gpu_info, l2_present) == 80);
static_assert(offsetof(drm_panthor_gpu_info, tiler_present) == 88 &&
              offsetof(drm_panthor_gpu_info, core_features) == 96);
static_assert(sizeof(drm_panthor_csif_info) == 24);
static_assert(sizeof(drm_panthor_timestamp_info) == 56 &&
              offsetof(drm_panthor_timestamp_info, timestamp_offset) == 16 &&
              offsetof(drm_panthor_timestamp_info, flags) == 24 &&
              offsetof(drm_panthor_timestamp_info, duration_nsec) == 28 &&
              offsetof(drm_panthor_timestamp_info, cycle_count) == 32 &&
              offsetof(drm_panthor_timestamp_info, cpu_timestamp_sec) == 40 &&
              offsetof(drm_panthor_timestamp_info, cpu_timestamp_nsec) == 48);
static_assert(sizeof(drm_panthor_group_priorities_info) == 4);
static_assert(sizeof(drm_panthor_vm_create) == 16 && offsetof(drm_panthor_vm_create, user_va_range) == 8);
static_assert(sizeof(drm_panthor_vm_destroy) == 8);
static_assert(sizeof(drm_panthor_vm_bind_op) == 48 && offsetof(drm_panthor_vm_bind_op, bo_offset) == 8 &&
              offsetof(drm_panthor_vm_bind_op, va) == 16 && offsetof(drm_panthor_vm_bind_op, size) == 24 &&
              offsetof(drm_panthor_vm_bind_op, syncs) == 32);
static_assert(sizeof(drm_panthor_vm_bind) == 24 && offsetof(drm_panthor_vm_bind, ops) == 8);
static_assert(sizeof(drm_panthor_vm_get_state) == 8);
static_assert(sizeof(drm_panthor_bo_create) == 24 && offsetof(drm_panthor_bo_create, flags) == 8 &&
              offsetof(drm_panthor_bo_create, exclusive_vm_id) == 12 && offsetof(drm_panthor_bo_create, handle) == 16);
static_assert(sizeof(drm_panthor_bo_mmap_offset) == 16 && offsetof(drm_panthor_bo_mmap_offset, offset) == 8);
static_assert(sizeof(drm_panthor_bo_set_label) == 16 && offsetof(drm_panthor_bo_set_label, label) == 8);
static_assert(sizeof(drm_panthor_set_user_mmio_offset) == 8);
static_assert(sizeof(drm_panthor_bo_sync_op) == 24 && offsetof(drm_panthor_bo_sync_op, type) == 4 &&
              offsetof(drm_panthor_bo_sync_op, offset) == 8 && offsetof(drm_panthor_bo_sync_op, size) == 16);
static_assert(sizeof(drm_panthor_bo_sync) == 16);
static_assert(sizeof(drm_panthor_bo_query_info) == 16 && offsetof(drm_panthor_bo_query_info, extra_flags) == 4 &&
              offsetof(drm_panthor_bo_query_info, create_flags) == 8 && offsetof(drm_panthor_bo_query_info, pad) == 12);
static_assert(sizeof(drm_panthor_queue_create) == 8 && offsetof(drm_panthor_queue_create, ringbuf_size) == 4);
static_assert(sizeof(drm_panthor_group_create) == 56 && offsetof(drm_panthor_group_create, max_compute_cores) == 16 &&
              offsetof(drm_panthor_group_create, priority) == 19 &&
              offsetof(drm_panthor_group_create, compute_core_mask) == 24 &&
              offsetof(drm_panthor_group_create, vm_id) == 48 &&
              offsetof(drm_panthor_group_create, group_handle) == 52);
static_assert(sizeof(drm_panthor_queue_submit) == 40 && offsetof(drm_panthor_queue_submit, latest_flush) == 16 &&
              offsetof(drm_panthor_queue_submit, syncs) == 24);
static_assert(sizeof(drm_panthor_group_submit) == 24 && offsetof(drm_panthor_group_submit, queue_submits) == 8);
static_assert(sizeof(drm_panthor_group_get_state) == 16 && offsetof(drm_panthor_group_get_state, fatal_queues) == 8);
static_assert(sizeof(drm_panthor_tiler_heap_create) == 40 && offsetof(drm_panthor_tiler_heap_create, handle) == 20 &&
              offsetof(drm_panthor_tiler_heap_create, tiler_heap_ctx_gpu_va) == 24 &&
              offsetof(drm_panthor_tiler_heap_create, first_heap_chunk_gpu_va) == 32);
static_assert(sizeof(drm_panthor_tiler_heap_destroy) == 8);
