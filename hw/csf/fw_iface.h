// CSF host <-> firmware interface blocks (GLB, CSG, CS control/input/output, queue user-I/O pages)
// and their request/ack bits: mirrors drivers/gpu/drm/panthor/panthor_fw.h. Definitions only.
// The structs keep the kernel's field names; sizes and offsets are checked against the reference.
#pragma once
#include <cstddef>
#include <cstdint>

#include "hw/bits.h"

namespace panthor {

// MCU address space (AS 0): the shared interface section starts the kernel auto-VA window.
inline constexpr uint32_t CSF_MCU_SHARED_REGION_START = 0x04000000;
inline constexpr uint32_t CSF_MCU_SHARED_REGION_SIZE = 0x04000000;
inline constexpr uint32_t CSF_GROUP_CONTROL_OFFSET = 0x1000;
inline constexpr uint32_t CSF_STREAM_CONTROL_OFFSET = 0x40;

inline constexpr uint32_t MIN_CS_PER_CSG = 8;
inline constexpr uint32_t MAX_CS_PER_CSG = 32;
inline constexpr uint32_t MIN_CSGS = 3;

constexpr uint32_t CSF_IFACE_VERSION(uint32_t major, uint32_t minor, uint32_t patch) {
    return (major << 24) | (minor << 16) | patch;
}
constexpr uint32_t CSF_IFACE_VERSION_MAJOR(uint32_t v) {
    return v >> 24;
}
constexpr uint32_t CSF_IFACE_VERSION_MINOR(uint32_t v) {
    return (v >> 16) & 0xFF;
}
constexpr uint32_t CSF_IFACE_VERSION_PATCH(uint32_t v) {
    return v & 0xFFFF;
}

// ---- CS (queue) slot --------------------------------------------------------------------------

struct panthor_fw_cs_control_iface {
    uint32_t features;
    uint32_t input_va;
    uint32_t output_va;
};
constexpr uint32_t CS_FEATURES_WORK_REGS(uint32_t x) {
    return (x & GENMASK(7, 0)) + 1;
}
constexpr uint32_t CS_FEATURES_SCOREBOARDS(uint32_t x) {
    return (x >> 8) & GENMASK(7, 0);
}
inline constexpr uint32_t CS_FEATURES_COMPUTE = BIT(16);
inline constexpr uint32_t CS_FEATURES_FRAGMENT = BIT(17);
inline constexpr uint32_t CS_FEATURES_TILER = BIT(18);

struct panthor_fw_cs_input_iface {
    uint32_t req;
    uint32_t config;
    uint32_t reserved1;
    uint32_t ack_irq_mask;
    uint64_t ringbuf_base;
    uint32_t ringbuf_size;
    uint32_t reserved2;
    uint64_t heap_start;
    uint64_t heap_end;
    uint64_t ringbuf_input;
    uint64_t ringbuf_output;
    uint32_t instr_config;
    uint32_t instrbuf_size;
    uint64_t instrbuf_base;
    uint64_t instrbuf_offset_ptr;
};
inline constexpr uint32_t CS_STATE_MASK = GENMASK(2, 0);
inline constexpr uint32_t CS_STATE_STOP = 0;
inline constexpr uint32_t CS_STATE_START = 1;
inline constexpr uint32_t CS_EXTRACT_EVENT = BIT(4);
inline constexpr uint32_t CS_IDLE_SYNC_WAIT = BIT(8);
inline constexpr uint32_t CS_IDLE_PROTM_PENDING = BIT(9);
inline constexpr uint32_t CS_IDLE_EMPTY = BIT(10);
inline constexpr uint32_t CS_IDLE_RESOURCE_REQ = BIT(11);
inline constexpr uint32_t CS_TILER_OOM = BIT(26);
inline constexpr uint32_t CS_PROTM_PENDING = BIT(27);
inline constexpr uint32_t CS_FATAL = BIT(30);
inline constexpr uint32_t CS_FAULT = BIT(31);
inline constexpr uint32_t CS_REQ_MASK =
    CS_STATE_MASK | CS_EXTRACT_EVENT | CS_IDLE_SYNC_WAIT | CS_IDLE_PROTM_PENDING | CS_IDLE_EMPTY | CS_IDLE_RESOURCE_REQ;
inline constexpr uint32_t CS_EVT_MASK = CS_TILER_OOM | CS_PROTM_PENDING | CS_FATAL | CS_FAULT;
constexpr uint32_t CS_CONFIG_PRIORITY(uint32_t x) {
    return x & GENMASK(3, 0);
}
constexpr uint32_t CS_CONFIG_DOORBELL(uint32_t x) {
    return (x & GENMASK(7, 0)) << 8;
}

struct panthor_fw_cs_output_iface {
    uint32_t ack;
    uint32_t reserved1[15];
    uint64_t status_cmd_ptr;
    uint32_t status_wait;
    uint32_t status_req_resource;
    uint64_t status_wait_sync_ptr;
    uint32_t status_wait_sync_value;
    uint32_t status_scoreboards;
    uint32_t status_blocked_reason;
    uint32_t status_wait_sync_value_hi;
    uint32_t reserved2[6];
    uint32_t fault;
    uint32_t fatal;
    uint64_t fault_info;
    uint64_t fatal_info;
    uint32_t reserved3[10];
    uint32_t heap_vt_start;
    uint32_t heap_vt_end;
    uint32_t reserved4;
    uint32_t heap_frag_end;
    uint64_t heap_address;
};
constexpr uint32_t CS_STATUS_WAIT_SB_MASK(uint32_t x) {
    return x & GENMASK(15, 0);
}
constexpr uint32_t CS_STATUS_WAIT_SB_SRC(uint32_t x) {
    return (x >> 16) & GENMASK(3, 0);
}
inline constexpr uint32_t CS_STATUS_WAIT_SB_SRC_NONE = 0;
inline constexpr uint32_t CS_STATUS_WAIT_SB_SRC_WAIT = 8;
inline constexpr uint32_t CS_STATUS_WAIT_SYNC_COND_LE = 0u << 24;
inline constexpr uint32_t CS_STATUS_WAIT_SYNC_COND_GT = 1u << 24;
inline constexpr uint32_t CS_STATUS_WAIT_SYNC_COND_MASK = GENMASK(27, 24);
inline constexpr uint32_t CS_STATUS_WAIT_PROGRESS = BIT(28);
inline constexpr uint32_t CS_STATUS_WAIT_PROTM = BIT(29);
inline constexpr uint32_t CS_STATUS_WAIT_SYNC_64B = BIT(30);
inline constexpr uint32_t CS_STATUS_WAIT_SYNC = BIT(31);
enum panthor_cs_blocked_reason : uint32_t {
    CS_STATUS_BLOCKED_REASON_UNBLOCKED = 0,
    CS_STATUS_BLOCKED_REASON_SB_WAIT = 1,
    CS_STATUS_BLOCKED_REASON_PROGRESS_WAIT = 2,
    CS_STATUS_BLOCKED_REASON_SYNC_WAIT = 3,
    CS_STATUS_BLOCKED_REASON_DEFERRED = 4,
    CS_STATUS_BLOCKED_REASON_RESOURCE = 5,
    CS_STATUS_BLOCKED_REASON_FLUSH = 6,
};
inline constexpr uint32_t CS_STATUS_BLOCKED_REASON_MASK = GENMASK(3, 0);
constexpr uint32_t CS_EXCEPTION_TYPE(uint32_t x) {
    return x & GENMASK(7, 0);
}
constexpr uint32_t CS_EXCEPTION_DATA(uint32_t x) {
    return x >> 8;
}

// ---- CSG (group) slot -------------------------------------------------------------------------

struct panthor_fw_csg_control_iface {
    uint32_t features;
    uint32_t input_va;
    uint32_t output_va;
    uint32_t suspend_size;
    uint32_t protm_suspend_size;
    uint32_t stream_num;
    uint32_t stream_stride;
};

struct panthor_fw_csg_input_iface {
    uint32_t req;
    uint32_t ack_irq_mask;
    uint32_t doorbell_req;
    uint32_t cs_irq_ack;
    uint32_t reserved1[4];
    uint64_t allow_compute;
    uint64_t allow_fragment;
    uint32_t allow_other;
    uint32_t endpoint_req;
    uint32_t reserved2[2];
    uint64_t suspend_buf;
    uint64_t protm_suspend_buf;
    uint32_t config;
    uint32_t iter_trace_config;
};
inline constexpr uint32_t CSG_STATE_MASK = GENMASK(2, 0);
inline constexpr uint32_t CSG_STATE_TERMINATE = 0;
inline constexpr uint32_t CSG_STATE_START = 1;
inline constexpr uint32_t CSG_STATE_SUSPEND = 2;
inline constexpr uint32_t CSG_STATE_RESUME = 3;
inline constexpr uint32_t CSG_ENDPOINT_CONFIG = BIT(4);
inline constexpr uint32_t CSG_STATUS_UPDATE = BIT(5);
inline constexpr uint32_t CSG_SYNC_UPDATE = BIT(28);
inline constexpr uint32_t CSG_IDLE = BIT(29);
inline constexpr uint32_t CSG_DOORBELL = BIT(30);
inline constexpr uint32_t CSG_PROGRESS_TIMER_EVENT = BIT(31);
inline constexpr uint32_t CSG_REQ_MASK = CSG_STATE_MASK | CSG_ENDPOINT_CONFIG | CSG_STATUS_UPDATE;
inline constexpr uint32_t CSG_EVT_MASK = CSG_SYNC_UPDATE | CSG_IDLE | CSG_PROGRESS_TIMER_EVENT;
constexpr uint32_t CSG_EP_REQ_COMPUTE(uint32_t x) {
    return x & GENMASK(7, 0);
}
constexpr uint32_t CSG_EP_REQ_FRAGMENT(uint32_t x) {
    return (x << 8) & GENMASK(15, 8);
}
constexpr uint32_t CSG_EP_REQ_TILER(uint32_t x) {
    return (x << 16) & GENMASK(19, 16);
}
inline constexpr uint32_t CSG_EP_REQ_EXCL_COMPUTE = BIT(20);
inline constexpr uint32_t CSG_EP_REQ_EXCL_FRAGMENT = BIT(21);
constexpr uint32_t CSG_EP_REQ_PRIORITY(uint32_t x) {
    return (x << 28) & GENMASK(31, 28);
}
inline constexpr uint32_t CSG_EP_REQ_PRIORITY_MASK = GENMASK(31, 28);
constexpr uint32_t CSG_CONFIG_AS(uint32_t x) {
    return x & GENMASK(3, 0);
}

struct panthor_fw_csg_output_iface {
    uint32_t ack;
    uint32_t reserved1;
    uint32_t doorbell_ack;
    uint32_t cs_irq_req;
    uint32_t status_ep_current;
    uint32_t status_ep_req;
    uint32_t status_state;
    uint32_t resource_dep;
};
inline constexpr uint32_t CSG_STATUS_STATE_IS_IDLE = BIT(0);

// ---- GLB (global) interface -------------------------------------------------------------------

struct panthor_fw_global_control_iface {
    uint32_t version;
    uint32_t features;
    uint32_t input_va;
    uint32_t output_va;
    uint32_t group_num;
    uint32_t group_stride;
    uint32_t perfcnt_size;
    uint32_t instr_features;
};

struct panthor_fw_global_input_iface {
    uint32_t req;
    uint32_t ack_irq_mask;
    uint32_t doorbell_req;
    uint32_t reserved1;
    uint32_t progress_timer;
    uint32_t poweroff_timer;
    uint64_t core_en_mask;
    uint32_t reserved2;
    uint32_t perfcnt_as;
    uint64_t perfcnt_base;
    uint32_t perfcnt_extract;
    uint32_t reserved3[3];
    uint32_t perfcnt_config;
    uint32_t perfcnt_csg_select;
    uint32_t perfcnt_fw_enable;
    uint32_t perfcnt_csg_enable;
    uint32_t perfcnt_csf_enable;
    uint32_t perfcnt_shader_enable;
    uint32_t perfcnt_tiler_enable;
    uint32_t perfcnt_mmu_l2_enable;
    uint32_t reserved4[8];
    uint32_t idle_timer;
};
inline constexpr uint32_t GLB_HALT = BIT(0);
inline constexpr uint32_t GLB_CFG_PROGRESS_TIMER = BIT(1);
inline constexpr uint32_t GLB_CFG_ALLOC_EN = BIT(2);
inline constexpr uint32_t GLB_CFG_POWEROFF_TIMER = BIT(3);
inline constexpr uint32_t GLB_PROTM_ENTER = BIT(4);
inline constexpr uint32_t GLB_PERFCNT_EN = BIT(5);
inline constexpr uint32_t GLB_PERFCNT_SAMPLE = BIT(6);
inline constexpr uint32_t GLB_COUNTER_EN = BIT(7);
inline constexpr uint32_t GLB_PING = BIT(8);
inline constexpr uint32_t GLB_FWCFG_UPDATE = BIT(9);
inline constexpr uint32_t GLB_IDLE_EN = BIT(10);
inline constexpr uint32_t GLB_SLEEP = BIT(12);
inline constexpr uint32_t GLB_STATE_MASK = GENMASK(14, 12);  // iface >= 4.1 only
inline constexpr uint32_t GLB_INACTIVE_COMPUTE = BIT(20);
inline constexpr uint32_t GLB_INACTIVE_FRAGMENT = BIT(21);
inline constexpr uint32_t GLB_INACTIVE_TILER = BIT(22);
inline constexpr uint32_t GLB_PROTM_EXIT = BIT(23);
inline constexpr uint32_t GLB_PERFCNT_THRESHOLD = BIT(24);
inline constexpr uint32_t GLB_PERFCNT_OVERFLOW = BIT(25);
inline constexpr uint32_t GLB_IDLE = BIT(26);
inline constexpr uint32_t GLB_DBG_CSF = BIT(30);
inline constexpr uint32_t GLB_DBG_HOST = BIT(31);
inline constexpr uint32_t GLB_REQ_MASK = GENMASK(10, 0);
inline constexpr uint32_t GLB_EVT_MASK = GENMASK(26, 20);
// poweroff_timer / idle_timer: [30:0] in units of 1024 ticks; BIT(31) selects the GPU cycle
// counter as the tick source (else the system timestamp).
constexpr uint32_t GLB_TIMER_VAL(uint32_t x) {
    return x & GENMASK(30, 0);
}
inline constexpr uint32_t GLB_TIMER_SOURCE_GPU_COUNTER = BIT(31);

struct panthor_fw_global_output_iface {
    uint32_t ack;
    uint32_t reserved1;
    uint32_t doorbell_ack;
    uint32_t reserved2;
    uint32_t halt_status;
    uint32_t perfcnt_status;
    uint32_t perfcnt_insert;
};
inline constexpr uint32_t GLB_HALT_STATUS_OK = 0;
inline constexpr uint32_t GLB_HALT_STATUS_PANIC = 0x4E;
inline constexpr uint32_t GLB_HALT_STATUS_WATCHDOG_EXPIRY = 0x4F;

// ---- Queue user-I/O pages (one 8 KiB BO per queue: input page, then output page) --------------

struct panthor_fw_ringbuf_input_iface {
    uint64_t insert;
    uint64_t extract;
};
struct panthor_fw_ringbuf_output_iface {
    uint64_t extract;
    uint32_t active;
};

// ---- Layout checks against docs/hw/csf/fw-interfaces.md -----------------------------------------

static_assert(sizeof(panthor_fw_global_control_iface) == 0x20);
static_assert(offsetof(panthor_fw_global_control_iface, group_num) == 0x10);
static_assert(offsetof(panthor_fw_global_control_iface, instr_features) == 0x1C);
static_assert(sizeof(panthor_fw_global_input_iface) == 0x88);
static_assert(offsetof(panthor_fw_global_input_iface, progress_timer) == 0x10);
static_assert(offsetof(panthor_fw_global_input_iface, poweroff_timer) == 0x14);
static_assert(offsetof(panthor_fw_global_input_iface, core_en_mask) == 0x18);
static_assert(offsetof(panthor_fw_global_input_iface, perfcnt_as) == 0x24);
static_assert(offsetof(panthor_fw_global_input_iface, perfcnt_base) == 0x28);
static_assert(offsetof(panthor_fw_global_input_iface, perfcnt_extract) == 0x30);
static_assert(offsetof(panthor_fw_global_input_iface, perfcnt_config) == 0x40);
static_assert(offsetof(panthor_fw_global_input_iface, perfcnt_fw_enable) == 0x48);
static_assert(offsetof(panthor_fw_global_input_iface, perfcnt_mmu_l2_enable) == 0x5C);
static_assert(offsetof(panthor_fw_global_input_iface, idle_timer) == 0x80);
static_assert(sizeof(panthor_fw_global_output_iface) == 0x1C);
static_assert(offsetof(panthor_fw_global_output_iface, halt_status) == 0x10);
static_assert(offsetof(panthor_fw_global_output_iface, perfcnt_insert) == 0x18);

static_assert(sizeof(panthor_fw_csg_control_iface) == 0x1C);
static_assert(offsetof(panthor_fw_csg_control_iface, stream_stride) == 0x18);
static_assert(sizeof(panthor_fw_csg_input_iface) == 0x58);
static_assert(offsetof(panthor_fw_csg_input_iface, allow_compute) == 0x20);
static_assert(offsetof(panthor_fw_csg_input_iface, allow_other) == 0x30);
static_assert(offsetof(panthor_fw_csg_input_iface, endpoint_req) == 0x34);
static_assert(offsetof(panthor_fw_csg_input_iface, suspend_buf) == 0x40);
static_assert(offsetof(panthor_fw_csg_input_iface, protm_suspend_buf) == 0x48);
static_assert(offsetof(panthor_fw_csg_input_iface, config) == 0x50);
static_assert(offsetof(panthor_fw_csg_input_iface, iter_trace_config) == 0x54);
static_assert(sizeof(panthor_fw_csg_output_iface) == 0x20);
static_assert(offsetof(panthor_fw_csg_output_iface, status_ep_current) == 0x10);
static_assert(offsetof(panthor_fw_csg_output_iface, status_state) == 0x18);
static_assert(offsetof(panthor_fw_csg_output_iface, resource_dep) == 0x1C);

static_assert(sizeof(panthor_fw_cs_control_iface) == 0xC);
static_assert(sizeof(panthor_fw_cs_input_iface) == 0x58);
static_assert(offsetof(panthor_fw_cs_input_iface, ack_irq_mask) == 0x0C);
static_assert(offsetof(panthor_fw_cs_input_iface, ringbuf_base) == 0x10);
static_assert(offsetof(panthor_fw_cs_input_iface, ringbuf_size) == 0x18);
static_assert(offsetof(panthor_fw_cs_input_iface, heap_start) == 0x20);
static_assert(offsetof(panthor_fw_cs_input_iface, heap_end) == 0x28);
static_assert(offsetof(panthor_fw_cs_input_iface, ringbuf_input) == 0x30);
static_assert(offsetof(panthor_fw_cs_input_iface, ringbuf_output) == 0x38);
static_assert(offsetof(panthor_fw_cs_input_iface, instr_config) == 0x40);
static_assert(offsetof(panthor_fw_cs_input_iface, instrbuf_base) == 0x48);
static_assert(offsetof(panthor_fw_cs_input_iface, instrbuf_offset_ptr) == 0x50);
static_assert(sizeof(panthor_fw_cs_output_iface) == 0xD8);
static_assert(offsetof(panthor_fw_cs_output_iface, status_cmd_ptr) == 0x40);
static_assert(offsetof(panthor_fw_cs_output_iface, status_wait) == 0x48);
static_assert(offsetof(panthor_fw_cs_output_iface, status_req_resource) == 0x4C);
static_assert(offsetof(panthor_fw_cs_output_iface, status_wait_sync_ptr) == 0x50);
static_assert(offsetof(panthor_fw_cs_output_iface, status_wait_sync_value) == 0x58);
static_assert(offsetof(panthor_fw_cs_output_iface, status_scoreboards) == 0x5C);
static_assert(offsetof(panthor_fw_cs_output_iface, status_blocked_reason) == 0x60);
static_assert(offsetof(panthor_fw_cs_output_iface, status_wait_sync_value_hi) == 0x64);
static_assert(offsetof(panthor_fw_cs_output_iface, fault) == 0x80);
static_assert(offsetof(panthor_fw_cs_output_iface, fatal) == 0x84);
static_assert(offsetof(panthor_fw_cs_output_iface, fault_info) == 0x88);
static_assert(offsetof(panthor_fw_cs_output_iface, fatal_info) == 0x90);
static_assert(offsetof(panthor_fw_cs_output_iface, heap_vt_start) == 0xC0);
static_assert(offsetof(panthor_fw_cs_output_iface, heap_vt_end) == 0xC4);
static_assert(offsetof(panthor_fw_cs_output_iface, heap_frag_end) == 0xCC);
static_assert(offsetof(panthor_fw_cs_output_iface, heap_address) == 0xD0);

static_assert(offsetof(panthor_fw_ringbuf_input_iface, extract) == 0x8);
static_assert(offsetof(panthor_fw_ringbuf_output_iface, active) == 0x8);

}  // namespace panthor
