// The MCU: MCU_CONTROL/MCU_STATUS, boot through AS 0, halt, disable, fatal (see mcu.h).
//
// Boot reads the firmware's code header through AS 0 as an instruction fetch, then writes the
// interface control blocks into the shared section through AS 0, so a boot with AS 0 not (or
// wrongly) programmed, without the code section or without a writable shared section fails
// like real firmware: the AS 0 fault is latched (MMU_INT bit 0), MCU_STATUS becomes FATAL and
// no JOB interrupt is raised. A restart after HALT keeps the interface ("fast reset"); a restart
// after a GPU reset or MCU disable rebuilds it at the same addresses.
#include "mock_hw/mcu.h"

#include <cstring>
#include <string>

#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/job_regs.h"
#include "kernel_shim/trace.h"
#include "mock_hw/fw_image.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

using namespace panthor;

Mcu::Mcu(Gpu& gpu) : gpu_(gpu), lock_(gpu.lock()) {
    layout_.group_num = gpu.config().mcu.group_num;
    layout_.stream_num = gpu.config().mcu.stream_num;
    boot_ev_ = gpu.make_event("mock_hw MCU boot", [this] { boot_locked(); });
    halt_ev_ = gpu.make_event("mock_hw MCU halt", [this] { halt_done_locked(); });
    disable_ev_ = gpu.make_event("mock_hw MCU disable", [this] { disable_done_locked(); });
    glb_ev_ = gpu.make_event("mock_hw GLB", [this] { glb_scan_locked(); });
    delayed_ack_ev_ = gpu.make_event("mock_hw GLB delayed ack", [this] { delayed_ack_locked(); });
    idle_ev_ = gpu.make_event("mock_hw GLB idle", [this] { idle_timer_fired_locked(); });
    poweroff_ev_ = gpu.make_event("mock_hw poweroff", [this] { poweroff_timer_fired_locked(); });
    if (kshim::trace::enabled())
        track_ = kshim::trace::track("MCU");
}

MemResult Mcu::read_locked(u32 va, void* dst, size_t len) {
    lockdep_assert_held(&lock_);
    return gpu_.mmu().read_locked(0, va, dst, len, Access::Read, kSourceMcu);
}

MemResult Mcu::write_locked(u32 va, const void* src, size_t len) {
    lockdep_assert_held(&lock_);
    return gpu_.mmu().write_locked(0, va, src, len, kSourceMcu);
}

void Mcu::set_status_locked(u32 s) {
    lockdep_assert_held(&lock_);
    if (s == status_)
        return;
    status_ = s;
    gpu_.control().set_mcu_running_locked(s == MCU_STATUS_ENABLED);
    static const char* names[] = {"MCU_DISABLED", "MCU_ENABLED", "MCU_HALT", "MCU_FATAL"};
    gpu_.trace_instant_locked("mcu_status", names[s & 3]);
    gpu_.control().irq().raise_locked(GPU_IRQ_MCU_STATUS_CHANGED);
}

void Mcu::control_write_locked(u32 value) {
    lockdep_assert_held(&lock_);
    switch (value) {
    case MCU_CONTROL_ENABLE:
    case MCU_CONTROL_AUTO:
        if ((status_ == MCU_STATUS_DISABLED || status_ == MCU_STATUS_HALT) && !boot_ev_->pending_locked() &&
            !halting_) {
            disable_ev_->cancel_locked();
            if (kshim::trace::enabled())
                kshim::trace::begin_on(track_, "mcu_boot", "mock_hw");
            boot_ev_->arm_locked(gpu_.config().lat.mcu_boot);
        }
        break;
    case MCU_CONTROL_DISABLE:
        if (boot_ev_->pending_locked()) {
            boot_ev_->cancel_locked();
            if (kshim::trace::enabled())
                kshim::trace::end_on(track_, "mcu_boot", "mock_hw");
        }
        halt_ev_->cancel_locked();
        halting_ = false;
        stop_locked();
        disable_ev_->arm_locked(gpu_.config().lat.mcu_disable);
        break;
    default: break;
    }
}

void Mcu::boot_locked() {
    lockdep_assert_held(&lock_);
    boots_++;
    if (kshim::trace::enabled())
        kshim::trace::end_on(track_, "mcu_boot", "mock_hw");
    if (gpu_.faults().occurrence_locked(FaultKind::BootFail)) {
        gpu_.log_once_locked(0x40000, "MCU boot failed (injected)");
        set_status_locked(MCU_STATUS_FATAL);
        return;
    }
    if (status_ == MCU_STATUS_HALT && iface_built_) {
        set_status_locked(MCU_STATUS_ENABLED);
        gpu_.job_irq().raise_locked(JOB_INT_GLOBAL_IF);
        if (engine_)
            engine_->mcu_started_locked(false);
        rearm_idle_locked();
        return;
    }
    MockFwHeader h{};
    MemResult r = gpu_.mmu().read_locked(0, kMockFwCodeVa, &h, sizeof(h), Access::Execute, kSourceMcu);
    if (!r.ok() || h.magic != kMockFwMagic || h.abi != kMockFwAbi) {
        gpu_.log_once_locked(0x40001, "MCU boot failed: no firmware code at MCU VA %#x", kMockFwCodeVa);
        set_status_locked(MCU_STATUS_FATAL);
        return;
    }
    if (!build_interface_locked()) {
        gpu_.log_once_locked(0x40002, "MCU boot failed: shared section at %#x not writable through AS 0",
                             McuLayout::kShared);
        set_status_locked(MCU_STATUS_FATAL);
        return;
    }
    progress_timer_ = poweroff_timer_ = idle_timer_ = 0;
    core_en_mask_ = 0;
    idle_en_ = counter_en_ = idle_reported_ = false;
    dropped_ = delayed_ = 0;
    iface_built_ = true;
    set_status_locked(MCU_STATUS_ENABLED);
    gpu_.job_irq().raise_locked(JOB_INT_GLOBAL_IF);
    if (engine_)
        engine_->mcu_started_locked(true);
}

bool Mcu::build_interface_locked() {
    lockdep_assert_held(&lock_);
    const McuConfig& mc = gpu_.config().mcu;
    const McuLayout& L = layout_;
    panthor_fw_global_control_iface glb{};
    glb.version = mc.iface_version;
    glb.features = mc.glb_features;
    glb.input_va = shared_va(McuLayout::kGlbInput);
    glb.output_va = shared_va(McuLayout::kGlbOutput);
    glb.group_num = L.group_num;
    glb.group_stride = L.group_stride();
    glb.perfcnt_size = mc.perfcnt_size;
    glb.instr_features = mc.instr_features;
    panthor_fw_global_output_iface glb_out{};
    if (!write_locked(shared_va(McuLayout::kGlbControl), &glb, sizeof(glb)).ok())
        return false;
    if (!write_locked(glb.output_va, &glb_out, sizeof(glb_out)).ok())
        return false;

    for (u32 i = 0; i < L.group_num; i++) {
        panthor_fw_csg_control_iface csg{};
        csg.features = mc.csg_features;
        csg.input_va = shared_va(L.csg_input(i));
        csg.output_va = shared_va(L.csg_output(i));
        csg.suspend_size = mc.suspend_size;
        csg.protm_suspend_size = mc.protm_suspend_size;
        csg.stream_num = L.stream_num;
        csg.stream_stride = McuLayout::kStreamStride;
        panthor_fw_csg_output_iface csg_out{};
        if (!write_locked(shared_va(L.csg_control(i)), &csg, sizeof(csg)).ok())
            return false;
        if (!write_locked(csg.output_va, &csg_out, sizeof(csg_out)).ok())
            return false;
        for (u32 j = 0; j < L.stream_num; j++) {
            panthor_fw_cs_control_iface cs{};
            cs.features = mc.cs_features();
            cs.input_va = shared_va(L.cs_input(i, j));
            cs.output_va = shared_va(L.cs_output(i, j));
            panthor_fw_cs_output_iface cs_out{};
            if (!write_locked(shared_va(L.cs_control(i, j)), &cs, sizeof(cs)).ok())
                return false;
            if (!write_locked(cs.output_va, &cs_out, sizeof(cs_out)).ok())
                return false;
        }
    }
    return true;
}

void Mcu::halt_done_locked() {
    lockdep_assert_held(&lock_);
    halting_ = false;
    set_status_locked(MCU_STATUS_HALT);
}

void Mcu::disable_done_locked() {
    lockdep_assert_held(&lock_);
    set_status_locked(MCU_STATUS_DISABLED);
    // The firmware restarts from its reset vector next time and rebuilds the interface.
    iface_built_ = false;
    hung_ = false;
}

void Mcu::stop_locked() {
    lockdep_assert_held(&lock_);
    glb_ev_->cancel_locked();
    delayed_ack_ev_->cancel_locked();
    idle_ev_->cancel_locked();
    poweroff_ev_->cancel_locked();
    delayed_ = 0;
    if (engine_)
        engine_->mcu_stopped_locked();
}

void Mcu::fatal_locked(u32 halt_status) {
    lockdep_assert_held(&lock_);
    if (status_ != MCU_STATUS_ENABLED)
        return;
    u32 hs = halt_status;
    write_locked(shared_va(McuLayout::kGlbOutput) + offsetof(panthor_fw_global_output_iface, halt_status), &hs, 4);
    stop_locked();
    set_status_locked(MCU_STATUS_FATAL);
}

void Mcu::hang_locked() {
    lockdep_assert_held(&lock_);
    if (hung_)
        return;
    hung_ = true;
    gpu_.trace_instant_locked("mcu_hang", "injected");
    stop_locked();
}

void Mcu::glb_doorbell_locked() {
    lockdep_assert_held(&lock_);
    if (status_ != MCU_STATUS_ENABLED || hung_ || halting_)
        return;
    if (gpu_.faults().occurrence_locked(FaultKind::FwHang)) {
        hang_locked();
        return;
    }
    if (const FaultSpec* f = gpu_.faults().occurrence_locked(FaultKind::McuFatal)) {
        fatal_locked(f->halt_status);
        return;
    }
    if (!glb_ev_->pending_locked())
        glb_ev_->arm_locked(gpu_.config().lat.glb_request);
}

void Mcu::user_doorbell_locked(u32 index) {
    lockdep_assert_held(&lock_);
    if (status_ != MCU_STATUS_ENABLED || hung_)
        return;
    if (engine_)
        engine_->user_doorbell_locked(index);
    else
        gpu_.log_once_locked(0x41000, "user doorbell %u rung; no CSF engine attached (part 2)", index);
}

void Mcu::reset_locked() {
    lockdep_assert_held(&lock_);
    boot_ev_->cancel_locked();
    halt_ev_->cancel_locked();
    disable_ev_->cancel_locked();
    stop_locked();
    status_ = MCU_STATUS_DISABLED;
    gpu_.control().set_mcu_running_locked(false);
    iface_built_ = halting_ = hung_ = busy_ = false;
    progress_timer_ = poweroff_timer_ = idle_timer_ = 0;
    core_en_mask_ = 0;
    idle_en_ = counter_en_ = idle_reported_ = false;
    dropped_ = delayed_ = 0;
}

ktime_t Mcu::decode_timer_locked(u32 value) const {
    lockdep_assert_held(&lock_);
    const u64 ticks = u64{GLB_TIMER_VAL(value)} * 1024;
    const u64 hz = (value & GLB_TIMER_SOURCE_GPU_COUNTER) ? gpu_.config().gpu_clock_hz : gpu_.config().timestamp_hz;
    return static_cast<ktime_t>(static_cast<unsigned __int128>(ticks) * 1'000'000'000u / hz);
}

void Mcu::set_busy_locked(bool busy) {
    lockdep_assert_held(&lock_);
    if (busy == busy_)
        return;
    busy_ = busy;
    if (busy) {
        idle_ev_->cancel_locked();
        poweroff_ev_->cancel_locked();
        idle_reported_ = false;
        // The FW powers the cores it may use; the host never does.
        gpu_.power().power_on_locked(Power::kShader, core_en_mask_);
        gpu_.power().power_on_locked(Power::kTiler, ~0ull);
    } else {
        rearm_idle_locked();
        if (status_ == MCU_STATUS_ENABLED && !hung_)
            poweroff_ev_->arm_locked(decode_timer_locked(poweroff_timer_));
    }
}

void Mcu::poweroff_timer_fired_locked() {
    lockdep_assert_held(&lock_);
    if (busy_)
        return;
    gpu_.power().power_off_locked(Power::kShader, ~0ull);
    gpu_.power().power_off_locked(Power::kTiler, ~0ull);
}

}  // namespace mock_hw
