// The MCU's global (GLB) interface: the req/ack protocol on doorbell 0
// (docs/hw/csf/fw-interfaces.md). On each scan the FW reads the GLB input block, performs every
// request bit whose req differs from ack, copies those bits into ack, and raises JOB_INT GLOBAL_IF
// when a changed ack bit is selected by ack_irq_mask. HALT is a level request answered through
// MCU_STATUS, not ack. The doorbell_req bitmap is acked the same way and handed to the CSG engine.
#include <cstring>

#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/job_regs.h"
#include "kernel_shim/trace.h"
#include "mock_hw/gpu.h"
#include "mock_hw/mcu.h"

namespace mock_hw {

using namespace panthor;

namespace {
constexpr u32 kAckOff = offsetof(panthor_fw_global_output_iface, ack);
constexpr u32 kDoorbellAckOff = offsetof(panthor_fw_global_output_iface, doorbell_ack);
}  // namespace

void Mcu::glb_scan_locked() {
    lockdep_assert_held(&lock_);
    glb_scans_++;
    panthor_fw_global_input_iface in{};
    panthor_fw_global_output_iface out{};
    const u32 in_va = shared_va(McuLayout::kGlbInput);
    const u32 out_va = shared_va(McuLayout::kGlbOutput);
    if (!read_locked(in_va, &in, sizeof(in)).ok() || !read_locked(out_va, &out, sizeof(out)).ok()) {
        fatal_locked(GLB_HALT_STATUS_PANIC);
        return;
    }

    if ((in.req & GLB_HALT) && !halting_) {
        // The FW stops serving requests and reports HALT through MCU_STATUS.
        halting_ = true;
        stop_locked();
        halt_ev_->arm_locked(gpu_.config().lat.mcu_halt);
        return;
    }

    const u32 pending = (in.req ^ out.ack) & GLB_REQ_MASK & ~GLB_HALT;
    // A request the host withdrew (toggled back) is forgotten; a new toggle is a new request.
    dropped_ &= pending;
    delayed_ &= pending;
    u32 acked = 0;
    for (u32 todo = pending & ~dropped_ & ~delayed_; todo; todo &= todo - 1) {
        const u32 bit = todo & -todo;
        if (gpu_.faults().occurrence_locked(FaultKind::GlbAckDrop, bit)) {
            dropped_ |= bit;
            continue;
        }
        if (const FaultSpec* f = gpu_.faults().occurrence_locked(FaultKind::GlbAckDelay, bit)) {
            delayed_ |= bit;
            const ktime_t due = kshim::ktime_get() + f->delay;
            if (!delayed_ack_ev_->pending_locked() || delayed_ack_ev_->due_locked() < due)
                delayed_ack_ev_->arm_at_locked(due);
            continue;
        }
        glb_apply_locked(bit, in);
        acked |= bit;
    }
    if (acked) {
        const u32 ack = (out.ack & ~acked) | (in.req & acked);
        write_locked(out_va + kAckOff, &ack, 4);
        gpu_.trace_instant_locked("glb_ack", "mock_hw");
        if (acked & in.ack_irq_mask)
            gpu_.job_irq().raise_locked(JOB_INT_GLOBAL_IF);
    }

    const u32 db = in.doorbell_req ^ out.doorbell_ack;
    if (db) {
        write_locked(out_va + kDoorbellAckOff, &in.doorbell_req, 4);
        if (engine_)
            engine_->csg_doorbell_locked(db);
        else
            gpu_.log_once_locked(0x41001, "CSG doorbell_req %#x; no CSF engine attached (part 2)", db);
    }
}

void Mcu::glb_apply_locked(u32 bit, const panthor_fw_global_input_iface& in) {
    lockdep_assert_held(&lock_);
    switch (bit) {
    case GLB_CFG_PROGRESS_TIMER: progress_timer_ = in.progress_timer; break;
    case GLB_CFG_ALLOC_EN:
        core_en_mask_ = in.core_en_mask;
        if (busy_)
            gpu_.power().power_on_locked(Power::kShader, core_en_mask_);
        break;
    case GLB_CFG_POWEROFF_TIMER: poweroff_timer_ = in.poweroff_timer; break;
    case GLB_COUNTER_EN:
        counter_en_ = (in.req & GLB_COUNTER_EN) != 0;
        gpu_.control().set_fw_counter_enable_locked(counter_en_);
        break;
    case GLB_IDLE_EN:
        idle_en_ = (in.req & GLB_IDLE_EN) != 0;
        idle_timer_ = in.idle_timer;
        idle_reported_ = false;
        rearm_idle_locked();
        break;
    default:
        // PING needs only the ack; PROTM_ENTER, PERFCNT_*, FWCFG_UPDATE are acked without effect.
        break;
    }
}

void Mcu::delayed_ack_locked() {
    lockdep_assert_held(&lock_);
    if (status_ != MCU_STATUS_ENABLED || hung_)
        return;
    panthor_fw_global_input_iface in{};
    panthor_fw_global_output_iface out{};
    const u32 out_va = shared_va(McuLayout::kGlbOutput);
    if (!read_locked(shared_va(McuLayout::kGlbInput), &in, sizeof(in)).ok() ||
        !read_locked(out_va, &out, sizeof(out)).ok())
        return;
    const u32 bits = delayed_ & (in.req ^ out.ack);
    delayed_ = 0;
    if (!bits)
        return;
    for (u32 todo = bits; todo; todo &= todo - 1)
        glb_apply_locked(todo & -todo, in);
    const u32 ack = (out.ack & ~bits) | (in.req & bits);
    write_locked(out_va + kAckOff, &ack, 4);
    if (bits & in.ack_irq_mask)
        gpu_.job_irq().raise_locked(JOB_INT_GLOBAL_IF);
}

void Mcu::rearm_idle_locked() {
    lockdep_assert_held(&lock_);
    idle_ev_->cancel_locked();
    if (idle_en_ && !busy_ && !idle_reported_ && status_ == MCU_STATUS_ENABLED && !hung_)
        idle_ev_->arm_locked(decode_timer_locked(idle_timer_));
}

void Mcu::idle_timer_fired_locked() {
    lockdep_assert_held(&lock_);
    if (!idle_en_ || busy_ || hung_ || status_ != MCU_STATUS_ENABLED)
        return;
    const u32 out_va = shared_va(McuLayout::kGlbOutput);
    u32 ack = 0, mask = 0;
    if (!read_locked(out_va + kAckOff, &ack, 4).ok())
        return;
    if (!read_locked(shared_va(McuLayout::kGlbInput) + offsetof(panthor_fw_global_input_iface, ack_irq_mask), &mask, 4)
             .ok())
        return;
    // An event: the FW toggles the ack bit; the host acknowledges by copying it into req.
    ack ^= GLB_IDLE;
    write_locked(out_va + kAckOff, &ack, 4);
    idle_reported_ = true;
    gpu_.trace_instant_locked("glb_idle", "mock_hw");
    if (mask & GLB_IDLE)
        gpu_.job_irq().raise_locked(JOB_INT_GLOBAL_IF);
}

}  // namespace mock_hw
