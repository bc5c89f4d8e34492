// Mirrors drivers/gpu/drm/panthor/panthor_fw.h: the MCU firmware: image loading, boot, the
// GLB/CSG/CS interfaces and their req/ack helpers, the ping watchdog, halt and restart.
#pragma once
#include <atomic>

#include "hw/csf/fw_iface.h"
#include "kernel_shim/spinlock.h"
#include "panthor/panthor_device.h"

namespace panthor {

struct panthor_kernel_bo;

struct panthor_fw_cs_iface {
    kshim::SpinLock lock{"panthor_fw_cs_iface.lock"};  // protects input->req updates
    const panthor_fw_cs_control_iface* control = nullptr;
    panthor_fw_cs_input_iface* input = nullptr;
    const panthor_fw_cs_output_iface* output = nullptr;
};

struct panthor_fw_csg_iface {
    kshim::SpinLock lock{"panthor_fw_csg_iface.lock"};  // protects input->req updates
    const panthor_fw_csg_control_iface* control = nullptr;
    panthor_fw_csg_input_iface* input = nullptr;
    const panthor_fw_csg_output_iface* output = nullptr;
};

struct panthor_fw_global_iface {
    kshim::SpinLock lock{"panthor_fw_global_iface.lock"};  // protects input->req updates
    const panthor_fw_global_control_iface* control = nullptr;
    panthor_fw_global_input_iface* input = nullptr;
    const panthor_fw_global_output_iface* output = nullptr;
};

// Shared with the MCU: every access to an interface field is a single 32-bit load or store
// (READ_ONCE/WRITE_ONCE), as the kernel's.
template <class T>
inline T fw_read_once(const T& field) {
    return std::atomic_ref<T>(const_cast<T&>(field)).load(std::memory_order_relaxed);
}
template <class T>
inline void fw_write_once(T& field, T value) {
    std::atomic_ref<T>(field).store(value, std::memory_order_relaxed);
}

// req := (req & ~mask) | ((ack ^ mask) & mask): flips the `mask` bits so that req != ack.
#define panthor_fw_toggle_reqs(__iface, __in_reg, __out_reg, __mask)                                                 \
    do {                                                                                                             \
        ::kshim::SpinGuard __g((__iface)->lock);                                                                     \
        const ::panthor::u32 __cur = ::panthor::fw_read_once((__iface)->input->__in_reg);                            \
        const ::panthor::u32 __ack = ::panthor::fw_read_once((__iface)->output->__out_reg);                          \
        ::panthor::fw_write_once((__iface)->input->__in_reg, (__cur & ~(__mask)) | ((__ack ^ (__mask)) & (__mask))); \
    } while (0)

// req := (req & ~mask) | (val & mask).
#define panthor_fw_update_reqs(__iface, __in_reg, __val, __mask)                                          \
    do {                                                                                                  \
        ::kshim::SpinGuard __g((__iface)->lock);                                                          \
        const ::panthor::u32 __cur = ::panthor::fw_read_once((__iface)->input->__in_reg);                 \
        ::panthor::fw_write_once((__iface)->input->__in_reg, (__cur & ~(__mask)) | ((__val) & (__mask))); \
    } while (0)

panthor_fw_global_iface* panthor_fw_get_glb_iface(panthor_device* ptdev);
panthor_fw_csg_iface* panthor_fw_get_csg_iface(panthor_device* ptdev, u32 csg_slot);
panthor_fw_cs_iface* panthor_fw_get_cs_iface(panthor_device* ptdev, u32 csg_slot, u32 cs_slot);

// Waits until (ack ^ req) & req_mask == 0 (the CSG state field counts as acked only when all its
// bits match). *acked gets the acked subset. 0 or -ETIMEDOUT.
int panthor_fw_csg_wait_acks(panthor_device* ptdev, u32 csg_id, u32 req_mask, u32* acked, u32 timeout_ms);
int panthor_fw_glb_wait_acks(panthor_device* ptdev, u32 req_mask, u32* acked, u32 timeout_ms);

// Toggles the GLB doorbell_req bits of the CSG slots in `csg_mask` and rings doorbell 0.
void panthor_fw_ring_csg_doorbells(panthor_device* ptdev, u32 csg_mask);

panthor_kernel_bo* panthor_fw_alloc_queue_iface_mem(panthor_device* ptdev, panthor_fw_ringbuf_input_iface** input,
                                                    const panthor_fw_ringbuf_output_iface** output, u32* input_fw_va,
                                                    u32* output_fw_va);
panthor_kernel_bo* panthor_fw_alloc_suspend_buf_mem(panthor_device* ptdev, size_t size);

panthor_vm* panthor_fw_vm(panthor_device* ptdev);

void panthor_fw_pre_reset(panthor_device* ptdev, bool on_hang);
int panthor_fw_post_reset(panthor_device* ptdev);

inline void panthor_fw_suspend(panthor_device* ptdev) {
    panthor_fw_pre_reset(ptdev, false);
}
inline int panthor_fw_resume(panthor_device* ptdev) {
    return panthor_fw_post_reset(ptdev);
}

int panthor_fw_init(panthor_device* ptdev);
void panthor_fw_unplug(panthor_device* ptdev);

// The firmware's file name for this GPU: "arm/mali/arch<major>.<minor>/mali_csffw.bin".
std::string panthor_fw_file_name(panthor_device* ptdev);

// What the FW reported (valid after a successful panthor_fw_init; 0 / nullptr before).
// The git SHA from the image's BUILD_INFO_METADATA entry, or nullptr when it has none.
const char* panthor_fw_git_sha(panthor_device* ptdev);
u32 panthor_fw_iface_version(panthor_device* ptdev);   // CSF_IFACE_VERSION(major, minor, patch)
u32 panthor_fw_features(panthor_device* ptdev);        // GLB control features
u32 panthor_fw_instr_features(panthor_device* ptdev);  // 0 for interfaces before 1.1.0
u32 panthor_fw_csg_count(panthor_device* ptdev);       // GLB group_num
u32 panthor_fw_cs_count(panthor_device* ptdev);        // CSG stream_num (identical for all CSGs)
// Number of loaded IFACE sections (protected ones are skipped); 0 after unplug.
u32 panthor_fw_section_count(panthor_device* ptdev);

// Constants (docs/hw/csf/fw-interfaces.md, "Driver constants").
inline constexpr u32 CSF_FW_NAME_LEN = 64;
inline constexpr u32 PING_INTERVAL_MS = 12000;
inline constexpr u32 IDLE_HYSTERESIS_US = 800;
inline constexpr u32 PWROFF_HYSTERESIS_US = 10000;
inline constexpr u64 PROGRESS_TIMEOUT_CYCLES = u64{5} * 500 * 1024 * 1024;
inline constexpr u32 PROGRESS_TIMEOUT_SCALE_SHIFT = 10;
inline constexpr u32 CSF_UNPRESERVED_REG_COUNT = 4;

}  // namespace panthor
