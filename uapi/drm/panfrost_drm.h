// ABI of include/uapi/drm/panfrost_drm.h at driver version 1.6 (jm-interface.md §4): ioctl numbers,
// structs, flag values and the coredump format, with the kernel's names. Layouts are LP64 and
// checked below against the sizes and offsets of jm-interface.md §4.2. The structs live in the
// global namespace, as in C, so code written against the kernel header reads the same.
//
// No stored copy of the upstream header carries all of 1.4-1.6 (SET_LABEL_BO, JM_CTX_*, SYNC_BO,
// QUERY_BO_INFO); the newest stored torvalds/linux vintage is 1.2. The 1.3-1.6 additions are taken
// from jm-interface.md §4 and cross-checked against derived listings of the 1.6 header.
#pragma once
#include <cstddef>
#include <cstdint>

#include "uapi/drm/drm.h"

// The kernel's fixed-width ABI types (__u32, __s64, __u64), as userspace code sees them.
#include <linux/types.h>

// ---- ioctl indices, relative to DRM_COMMAND_BASE ----
inline constexpr unsigned DRM_PANFROST_SUBMIT = 0x00;
inline constexpr unsigned DRM_PANFROST_WAIT_BO = 0x01;
inline constexpr unsigned DRM_PANFROST_CREATE_BO = 0x02;
inline constexpr unsigned DRM_PANFROST_MMAP_BO = 0x03;
inline constexpr unsigned DRM_PANFROST_GET_PARAM = 0x04;
inline constexpr unsigned DRM_PANFROST_GET_BO_OFFSET = 0x05;
inline constexpr unsigned DRM_PANFROST_PERFCNT_ENABLE = 0x06;  // only with the unstable_ioctls module param
inline constexpr unsigned DRM_PANFROST_PERFCNT_DUMP = 0x07;    // likewise
inline constexpr unsigned DRM_PANFROST_MADVISE = 0x08;
inline constexpr unsigned DRM_PANFROST_SET_LABEL_BO = 0x09;    // 1.4
inline constexpr unsigned DRM_PANFROST_JM_CTX_CREATE = 0x0a;   // 1.5
inline constexpr unsigned DRM_PANFROST_JM_CTX_DESTROY = 0x0b;  // 1.5
inline constexpr unsigned DRM_PANFROST_SYNC_BO = 0x0c;         // 1.6
inline constexpr unsigned DRM_PANFROST_QUERY_BO_INFO = 0x0d;   // 1.6

// ---- SUBMIT ----
// requirements: FS sends the chain to slot 0 (fragment), otherwise slot 1.
inline constexpr __u32 PANFROST_JD_REQ_FS = 1u << 0;
// 1.3: keep the cycle counter and timestamp running while the job executes.
inline constexpr __u32 PANFROST_JD_REQ_CYCLE_COUNT = 1u << 1;

// 40 bytes before 1.5; the DRM core zero-fills the missing jm_ctx_handle/pad for old callers.
struct drm_panfrost_submit {
    __u64 jc;        // GPU VA of the first job header of the chain
    __u64 in_syncs;  // user pointer to in_sync_count u32 syncobj handles
    __u32 in_sync_count;
    __u32 out_sync;    // syncobj that receives the job's finished fence; 0 = none
    __u64 bo_handles;  // user pointer to bo_handle_count u32 GEM handles
    __u32 bo_handle_count;
    __u32 requirements;   // PANFROST_JD_REQ_*
    __u32 jm_ctx_handle;  // 1.5: 0 = the file's default context
    __u32 pad;            // 1.5: must be 0
};

// ---- WAIT_BO ----
struct drm_panfrost_wait_bo {
    __u32 handle;
    __u32 pad;         // must be 0
    __s64 timeout_ns;  // absolute CLOCK_MONOTONIC deadline; 0 or past = poll
};

// ---- CREATE_BO ----
inline constexpr __u32 PANFROST_BO_NOEXEC = 1;
inline constexpr __u32 PANFROST_BO_HEAP = 2;     // grow-on-fault; needs NOEXEC
inline constexpr __u32 PANFROST_BO_WB_MMAP = 4;  // 1.6: CPU write-back cached mapping; not with HEAP

struct drm_panfrost_create_bo {
    __u32 size;
    __u32 flags;   // PANFROST_BO_*
    __u32 handle;  // out
    __u32 pad;     // must be 0
    __u64 offset;  // out: GPU VA in this file's VM, never 0
};

// ---- MMAP_BO ----
struct drm_panfrost_mmap_bo {
    __u32 handle;
    __u32 flags;   // must be 0
    __u64 offset;  // out: fake offset to pass to mmap(2) on the DRM fd
};

// ---- GET_PARAM ----
enum drm_panfrost_param {
    DRM_PANFROST_PARAM_GPU_PROD_ID,
    DRM_PANFROST_PARAM_GPU_REVISION,
    DRM_PANFROST_PARAM_SHADER_PRESENT,
    DRM_PANFROST_PARAM_TILER_PRESENT,
    DRM_PANFROST_PARAM_L2_PRESENT,
    DRM_PANFROST_PARAM_STACK_PRESENT,
    DRM_PANFROST_PARAM_AS_PRESENT,
    DRM_PANFROST_PARAM_JS_PRESENT,
    DRM_PANFROST_PARAM_L2_FEATURES,
    DRM_PANFROST_PARAM_CORE_FEATURES,
    DRM_PANFROST_PARAM_TILER_FEATURES,
    DRM_PANFROST_PARAM_MEM_FEATURES,
    DRM_PANFROST_PARAM_MMU_FEATURES,
    DRM_PANFROST_PARAM_THREAD_FEATURES,
    DRM_PANFROST_PARAM_MAX_THREADS,
    DRM_PANFROST_PARAM_THREAD_MAX_WORKGROUP_SZ,
    DRM_PANFROST_PARAM_THREAD_MAX_BARRIER_SZ,
    DRM_PANFROST_PARAM_COHERENCY_FEATURES,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES0,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES1,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES2,
    DRM_PANFROST_PARAM_TEXTURE_FEATURES3,
    DRM_PANFROST_PARAM_JS_FEATURES0,
    DRM_PANFROST_PARAM_JS_FEATURES1,
    DRM_PANFROST_PARAM_JS_FEATURES2,
    DRM_PANFROST_PARAM_JS_FEATURES3,
    DRM_PANFROST_PARAM_JS_FEATURES4,
    DRM_PANFROST_PARAM_JS_FEATURES5,
    DRM_PANFROST_PARAM_JS_FEATURES6,
    DRM_PANFROST_PARAM_JS_FEATURES7,
    DRM_PANFROST_PARAM_JS_FEATURES8,
    DRM_PANFROST_PARAM_JS_FEATURES9,
    DRM_PANFROST_PARAM_JS_FEATURES10,
    DRM_PANFROST_PARAM_JS_FEATURES11,
    DRM_PANFROST_PARAM_JS_FEATURES12,
    DRM_PANFROST_PARAM_JS_FEATURES13,
    DRM_PANFROST_PARAM_JS_FEATURES14,
    DRM_PANFROST_PARAM_JS_FEATURES15,
    DRM_PANFROST_PARAM_NR_CORE_GROUPS,
    DRM_PANFROST_PARAM_THREAD_TLS_ALLOC,
    DRM_PANFROST_PARAM_AFBC_FEATURES,               // 1.2
    DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP,            // 1.3
    DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP_FREQUENCY,  // 1.3
    DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES,   // 1.5: bit mask of drm_panfrost_jm_ctx_priority
    DRM_PANFROST_PARAM_SELECTED_COHERENCY,          // 1.6: a drm_panfrost_gpu_coherency value
};

// Values of DRM_PANFROST_PARAM_SELECTED_COHERENCY; they match the GPU's COHERENCY_ENABLE encoding.
enum drm_panfrost_gpu_coherency {
    DRM_PANFROST_GPU_COHERENCY_ACE_LITE = 0,
    DRM_PANFROST_GPU_COHERENCY_ACE = 1,
    DRM_PANFROST_GPU_COHERENCY_NONE = 31,
};

struct drm_panfrost_get_param {
    __u32 param;  // drm_panfrost_param
    __u32 pad;    // must be 0
    __u64 value;  // out
};

// ---- GET_BO_OFFSET ----
struct drm_panfrost_get_bo_offset {
    __u32 handle;
    __u32 pad;
    __u64 offset;  // out: the BO's GPU VA in the caller's VM
};

// ---- PERFCNT_ENABLE / PERFCNT_DUMP (unstable) ----
struct drm_panfrost_perfcnt_enable {
    __u32 enable;
    __u32 counterset;  // Bifrost has two counter sets (0, 1); Midgard only 0
};

struct drm_panfrost_perfcnt_dump {
    __u64 buf_ptr;  // user pointer the counter block is copied to
};

// ---- MADVISE ----
inline constexpr __u32 PANFROST_MADV_WILLNEED = 0;
inline constexpr __u32 PANFROST_MADV_DONTNEED = 1;  // the shrinker may purge the pages

struct drm_panfrost_madvise {
    __u32 handle;
    __u32 madv;      // PANFROST_MADV_*
    __u32 retained;  // out: 0 once the pages have been purged
};

// ---- SET_LABEL_BO (1.4) ----
struct drm_panfrost_set_label_bo {
    __u32 handle;
    __u32 pad;    // must be 0
    __u64 label;  // user pointer to a NUL-terminated string of at most 4096 bytes; 0 clears
};

// ---- SYNC_BO (1.6) ----
// drm_panfrost_bo_sync_op::type
inline constexpr __u32 PANFROST_BO_SYNC_CPU_CACHE_FLUSH = 0;
inline constexpr __u32 PANFROST_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE = 1;

struct drm_panfrost_bo_sync_op {
    __u32 handle;
    __u32 type;    // PANFROST_BO_SYNC_*
    __u32 offset;  // byte range inside the BO; widened to cache lines by the kernel
    __u32 size;
};

struct drm_panfrost_sync_bo {
    __u64 ops;  // user pointer to op_count drm_panfrost_bo_sync_op
    __u32 op_count;
    __u32 pad;  // must be 0
};

// ---- QUERY_BO_INFO (1.6) ----
// drm_panfrost_query_bo_info::extra_flags: the BO was imported through PRIME.
inline constexpr __u32 DRM_PANFROST_BO_IS_IMPORTED = 1u << 0;

struct drm_panfrost_query_bo_info {
    __u32 handle;
    __u32 extra_flags;   // out: DRM_PANFROST_BO_IS_IMPORTED
    __u32 create_flags;  // out: the PANFROST_BO_* the BO was created with (0 for imports)
    __u32 pad;           // out: 0
};

// ---- coredump format (devcoredump of a faulted job) ----
// Fields are in the dumping machine's byte order; a reader detects it from the magic.
inline constexpr __u32 PANFROSTDUMP_MAJOR = 1;
inline constexpr __u32 PANFROSTDUMP_MINOR = 0;
inline constexpr __u32 PANFROSTDUMP_MAGIC = 0x464E4150;  // "PANF" read as little-endian bytes

inline constexpr __u32 PANFROSTDUMP_BUF_REG = 0;
inline constexpr __u32 PANFROSTDUMP_BUF_BOMAP = PANFROSTDUMP_BUF_REG + 1;
inline constexpr __u32 PANFROSTDUMP_BUF_BO = PANFROSTDUMP_BUF_BOMAP + 1;
inline constexpr __u32 PANFROSTDUMP_BUF_TRAILER = PANFROSTDUMP_BUF_BO + 1;

// Upstream declares these two inside the header's anonymous union; C gives such tags file scope,
// C++ forbids types in an anonymous union, so they are declared here with the same names.
struct pan_reg_hdr {
    __u64 jc;
    __u32 gpu_id;
    __u32 major;
    __u32 minor;
    __u64 nbos;
};

struct pan_bomap_hdr {
    __u32 valid;
    __u64 iova;
    __u32 data[2];
};

struct panfrost_dump_object_header {
    __u32 magic;  // PANFROSTDUMP_MAGIC
    __u32 type;   // PANFROSTDUMP_BUF_*
    __u32 file_size;
    __u32 file_offset;

    union {
        pan_reg_hdr reghdr;
        pan_bomap_hdr bomap;
        // Pins the header size so later fields do not move the objects behind it.
        __u32 sizer[496];
    };
};

// The REG object is an array of these.
struct panfrost_dump_registers {
    __u32 reg;
    __u32 value;
};

// ---- JM contexts (1.5) ----
enum drm_panfrost_jm_ctx_priority {
    PANFROST_JM_CTX_PRIORITY_LOW = 0,
    PANFROST_JM_CTX_PRIORITY_MEDIUM,
    PANFROST_JM_CTX_PRIORITY_HIGH,  // needs CAP_SYS_NICE or DRM master
};

struct drm_panfrost_jm_ctx_create {
    __u32 handle;    // out
    __u32 priority;  // drm_panfrost_jm_ctx_priority
};

struct drm_panfrost_jm_ctx_destroy {
    __u32 handle;  // not 0: the default context cannot be destroyed
    __u32 pad;     // must be 0
};

// ---- ioctl numbers ----
namespace drm::uapi {
// Directions as upstream's: SUBMIT, WAIT_BO and the PERFCNT pair are write-only, the rest read-write.
inline constexpr unsigned DRM_IOCTL_PANFROST_SUBMIT =
    DRM_IOW<drm_panfrost_submit>(DRM_COMMAND_BASE + DRM_PANFROST_SUBMIT);
inline constexpr unsigned DRM_IOCTL_PANFROST_WAIT_BO =
    DRM_IOW<drm_panfrost_wait_bo>(DRM_COMMAND_BASE + DRM_PANFROST_WAIT_BO);
inline constexpr unsigned DRM_IOCTL_PANFROST_CREATE_BO =
    DRM_IOWR<drm_panfrost_create_bo>(DRM_COMMAND_BASE + DRM_PANFROST_CREATE_BO);
inline constexpr unsigned DRM_IOCTL_PANFROST_MMAP_BO =
    DRM_IOWR<drm_panfrost_mmap_bo>(DRM_COMMAND_BASE + DRM_PANFROST_MMAP_BO);
inline constexpr unsigned DRM_IOCTL_PANFROST_GET_PARAM =
    DRM_IOWR<drm_panfrost_get_param>(DRM_COMMAND_BASE + DRM_PANFROST_GET_PARAM);
inline constexpr unsigned DRM_IOCTL_PANFROST_GET_BO_OFFSET =
    DRM_IOWR<drm_panfrost_get_bo_offset>(DRM_COMMAND_BASE + DRM_PANFROST_GET_BO_OFFSET);
inline constexpr unsigned DRM_IOCTL_PANFROST_MADVISE =
    DRM_IOWR<drm_panfrost_madvise>(DRM_COMMAND_BASE + DRM_PANFROST_MADVISE);
inline constexpr unsigned DRM_IOCTL_PANFROST_SET_LABEL_BO =
    DRM_IOWR<drm_panfrost_set_label_bo>(DRM_COMMAND_BASE + DRM_PANFROST_SET_LABEL_BO);
inline constexpr unsigned DRM_IOCTL_PANFROST_JM_CTX_CREATE =
    DRM_IOWR<drm_panfrost_jm_ctx_create>(DRM_COMMAND_BASE + DRM_PANFROST_JM_CTX_CREATE);
inline constexpr unsigned DRM_IOCTL_PANFROST_JM_CTX_DESTROY =
    DRM_IOWR<drm_panfrost_jm_ctx_destroy>(DRM_COMMAND_BASE + DRM_PANFROST_JM_CTX_DESTROY);
inline constexpr unsigned DRM_IOCTL_PANFROST_SYNC_BO =
    DRM_IOWR<drm_panfrost_sync_bo>(DRM_COMMAND_BASE + DRM_PANFROST_SYNC_BO);
inline constexpr unsigned DRM_IOCTL_PANFROST_QUERY_BO_INFO =
    DRM_IOWR<drm_panfrost_query_bo_info>(DRM_COMMAND_BASE + DRM_PANFROST_QUERY_BO_INFO);
inline constexpr unsigned DRM_IOCTL_PANFROST_PERFCNT_ENABLE =
    DRM_IOW<drm_panfrost_perfcnt_enable>(DRM_COMMAND_BASE + DRM_PANFROST_PERFCNT_ENABLE);
inline constexpr unsigned DRM_IOCTL_PANFROST_PERFCNT_DUMP =
    DRM_IOW<drm_panfrost_perfcnt_dump>(DRM_COMMAND_BASE + DRM_PANFROST_PERFCNT_DUMP);

// jm-interface.md §4.1: the values userspace has compiled in.
static_assert(DRM_IOCTL_PANFROST_SUBMIT == 0x40306440u);
static_assert(DRM_IOCTL_PANFROST_WAIT_BO == 0x40106441u);
static_assert(DRM_IOCTL_PANFROST_CREATE_BO == 0xC0186442u);
static_assert(DRM_IOCTL_PANFROST_MMAP_BO == 0xC0106443u);
static_assert(DRM_IOCTL_PANFROST_GET_PARAM == 0xC0106444u);
static_assert(DRM_IOCTL_PANFROST_GET_BO_OFFSET == 0xC0106445u);
static_assert(DRM_IOCTL_PANFROST_PERFCNT_ENABLE == 0x40086446u);
static_assert(DRM_IOCTL_PANFROST_PERFCNT_DUMP == 0x40086447u);
static_assert(DRM_IOCTL_PANFROST_MADVISE == 0xC00C6448u);
static_assert(DRM_IOCTL_PANFROST_SET_LABEL_BO == 0xC0106449u);
static_assert(DRM_IOCTL_PANFROST_JM_CTX_CREATE == 0xC008644Au);
static_assert(DRM_IOCTL_PANFROST_JM_CTX_DESTROY == 0xC008644Bu);
static_assert(DRM_IOCTL_PANFROST_SYNC_BO == 0xC010644Cu);
static_assert(DRM_IOCTL_PANFROST_QUERY_BO_INFO == 0xC010644Du);
}  // namespace drm::uapi

// ---- layout checks (jm-interface.md §4.2) ----
static_assert(sizeof(drm_panfrost_submit) == 48 && offsetof(drm_panfrost_submit, in_syncs) == 8 &&
              offsetof(drm_panfrost_submit, in_sync_count) == 16 && offsetof(drm_panfrost_submit, out_sync) == 20 &&
              offsetof(drm_panfrost_submit, bo_handles) == 24 && offsetof(drm_panfrost_submit, bo_handle_count) == 32 &&
              offsetof(drm_panfrost_submit, requirements) == 36 && offsetof(drm_panfrost_submit, jm_ctx_handle) == 40 &&
              offsetof(drm_panfrost_submit, pad) == 44);
static_assert(sizeof(drm_panfrost_wait_bo) == 16 && offsetof(drm_panfrost_wait_bo, pad) == 4 &&
              offsetof(drm_panfrost_wait_bo, timeout_ns) == 8);
static_assert(sizeof(drm_panfrost_create_bo) == 24 && offsetof(drm_panfrost_create_bo, flags) == 4 &&
              offsetof(drm_panfrost_create_bo, handle) == 8 && offsetof(drm_panfrost_create_bo, pad) == 12 &&
              offsetof(drm_panfrost_create_bo, offset) == 16);
static_assert(sizeof(drm_panfrost_mmap_bo) == 16 && offsetof(drm_panfrost_mmap_bo, flags) == 4 &&
              offsetof(drm_panfrost_mmap_bo, offset) == 8);
static_assert(sizeof(drm_panfrost_get_param) == 16 && offsetof(drm_panfrost_get_param, pad) == 4 &&
              offsetof(drm_panfrost_get_param, value) == 8);
static_assert(sizeof(drm_panfrost_get_bo_offset) == 16 && offsetof(drm_panfrost_get_bo_offset, offset) == 8);
static_assert(sizeof(drm_panfrost_perfcnt_enable) == 8 && offsetof(drm_panfrost_perfcnt_enable, counterset) == 4);
static_assert(sizeof(drm_panfrost_perfcnt_dump) == 8);
static_assert(sizeof(drm_panfrost_madvise) == 12 && offsetof(drm_panfrost_madvise, madv) == 4 &&
              offsetof(drm_panfrost_madvise, retained) == 8);
static_assert(sizeof(drm_panfrost_set_label_bo) == 16 && offsetof(drm_panfrost_set_label_bo, pad) == 4 &&
              offsetof(drm_panfrost_set_label_bo, label) == 8);
static_assert(sizeof(drm_panfrost_jm_ctx_create) == 8 && offsetof(drm_panfrost_jm_ctx_create, priority) == 4);
static_assert(sizeof(drm_panfrost_jm_ctx_destroy) == 8 && offsetof(drm_panfrost_jm_ctx_destroy, pad) == 4);
static_assert(sizeof(drm_panfrost_bo_sync_op) == 16 && offsetof(drm_panfrost_bo_sync_op, type) == 4 &&
              offsetof(drm_panfrost_bo_sync_op, offset) == 8 && offsetof(drm_panfrost_bo_sync_op, size) == 12);
static_assert(sizeof(drm_panfrost_sync_bo) == 16 && offsetof(drm_panfrost_sync_bo, op_count) == 8 &&
              offsetof(drm_panfrost_sync_bo, pad) == 12);
static_assert(sizeof(drm_panfrost_query_bo_info) == 16 && offsetof(drm_panfrost_query_bo_info, extra_flags) == 4 &&
              offsetof(drm_panfrost_query_bo_info, create_flags) == 8 &&
              offsetof(drm_panfrost_query_bo_info, pad) == 12);
static_assert(DRM_PANFROST_PARAM_AFBC_FEATURES == 40 && DRM_PANFROST_PARAM_SELECTED_COHERENCY == 44);
static_assert(sizeof(pan_reg_hdr) == 32 && offsetof(pan_reg_hdr, gpu_id) == 8 && offsetof(pan_reg_hdr, minor) == 16 &&
              offsetof(pan_reg_hdr, nbos) == 24);
static_assert(sizeof(pan_bomap_hdr) == 24 && offsetof(pan_bomap_hdr, iova) == 8 && offsetof(pan_bomap_hdr, data) == 16);
static_assert(sizeof(panfrost_dump_object_header) == 2000 && offsetof(panfrost_dump_object_header, reghdr) == 16 &&
              offsetof(panfrost_dump_object_header, bomap) == 16 && offsetof(panfrost_dump_object_header, sizer) == 16);
static_assert(sizeof(panfrost_dump_registers) == 8 && offsetof(panfrost_dump_registers, value) == 4);
