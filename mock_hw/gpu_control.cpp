// The GPU_CONTROL block: identity, GPU IRQ, GPU_CMD, status, counters, coherency (see gpu_control.h).
#include "mock_hw/gpu_control.h"

#include "hw/csf/regs/exceptions.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/log.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/gpu.h"
#include "mock_hw/gpu_identity_regs.h"

namespace mock_hw {

using namespace panthor;

GpuControl::GpuControl(Gpu& gpu, kshim::IrqLine& line)
    : gpu_(gpu), lock_(gpu.lock()), irq_(bank_, GPU_INT_BASE, line, gpu.lock(), "GPU_INT"), counters_(gpu.config()) {
    const GpuIdentity& id = gpu.config().id;
    auto ro = [this](u32 off, const char* name, u32 v) { bank_.add(off, RegDecl{.name = name, .reset = v}); };
    auto ro64 = [this](u32 off, const char* name, u64 v) { bank_.add64(off, name, v); };
    declare_identity_registers(
        bank_, id, [this] { return cycle_count_locked(); }, [this] { return timestamp_locked(); });
    ro(GPU_CSF_ID, "GPU_CSF_ID", id.csf_id);
    bank_.add(GPU_CMD,
              RegDecl{.name = "GPU_CMD", .write_only = true, .on_write = [this](u32 v) { command_locked(v); }});
    bank_.add(GPU_STATUS, RegDecl{.name = "GPU_STATUS", .on_read = [this] { return status_locked(); }});
    ro(GPU_FAULT_STATUS, "GPU_FAULT_STATUS", 0);
    ro64(GPU_FAULT_ADDR, "GPU_FAULT_ADDR", 0);
    bank_.add(GPU_L2_CONFIG, RegDecl{.name = "GPU_L2_CONFIG", .writable = ~0u});
    // The unlock key is accepted and has no further effect here (PWR_OVERRIDE is not modelled).
    bank_.add(GPU_PWR_KEY, RegDecl{.name = "GPU_PWR_KEY", .write_only = true, .on_write = [](u32) {}});
    bank_.add(GPU_PWR_OVERRIDE0, RegDecl{.name = "GPU_PWR_OVERRIDE0", .writable = ~0u});
    bank_.add(GPU_PWR_OVERRIDE1, RegDecl{.name = "GPU_PWR_OVERRIDE1", .writable = ~0u});
    ro64(GPU_FEATURES, "GPU_FEATURES", id.gpu_features);
    bank_.add64(GPU_TIMESTAMP_OFFSET, "GPU_TIMESTAMP_OFFSET", 0, ~0ull);
    ro(GPU_REVID, "GPU_REVID", id.revid);
    for (u32 n = 0; n < 3; n++)
        bank_.add(GPU_ASN_HASH(n), RegDecl{.name = "GPU_ASN_HASH", .writable = ~0u});
    bank_.add(GPU_COHERENCY_PROTOCOL,
              RegDecl{.name = "GPU_COHERENCY_PROTOCOL", .reset = GPU_COHERENCY_NONE, .writable = ~0u});
    bank_.add(MCU_CONTROL, RegDecl{.name = "MCU_CONTROL", .writable = 0x3, .on_write = [this](u32 v) {
                                       gpu_.mcu().control_write_locked(v & 0x3);
                                   }});
    bank_.add(MCU_STATUS, RegDecl{.name = "MCU_STATUS", .on_read = [this] { return gpu_.mcu().status_locked(); }});

    reset_ev_ = gpu.make_event("mock_hw reset", [this] { gpu_.reset_locked(); });
    flush_ev_ = gpu.make_event("mock_hw flush", [this] { flush_done_locked(); });
}

u32 GpuControl::status_locked() const {
    lockdep_assert_held(&lock_);
    u32 s = 0;
    if (gpu_.mcu().busy_locked())
        s |= GPU_STATUS_ACTIVE;
    if (gpu_.power().any_transition_locked())
        s |= GPU_STATUS_PWR_ACTIVE;
    if (gpu_.mmu().irq().rawstat_locked() & 0xFFFF)
        s |= GPU_STATUS_PAGE_FAULT;
    return s;
}

void GpuControl::command_locked(u32 cmd) {
    lockdep_assert_held(&lock_);
    if (const FaultSpec* f = gpu_.faults().occurrence_locked(FaultKind::GpuFault))
        raise_gpu_fault_locked(f->fault_status, f->fault_addr);

    const u32 type = cmd & GPU_CMD_TYPE_MASK;
    const u32 payload = cmd >> 8;
    switch (type) {
    case CMD_NOP: break;
    case CMD_RESET: {
        gpu_.trace_instant_locked("gpu_reset_start", payload == RESET_HARD ? "hard" : "soft");
        // Nothing else runs meanwhile: pending hardware effects are dropped at the end (reset).
        if (gpu_.faults().occurrence_locked(FaultKind::ResetNeverCompletes)) {
            reset_stuck_ = true;
            break;
        }
        const GpuLatencies& lat = gpu_.config().lat;
        reset_ev_->arm_locked(payload == RESET_HARD ? lat.hard_reset : lat.soft_reset);
        break;
    }
    case CMD_PRFCNT: break;  // performance counters are not modelled
    case CMD_TIME:
        cc_cmd_ = payload != 0;
        update_cycle_counter_locked();
        break;
    case CMD_FLUSH_CACHES:
        if (gpu_.faults().occurrence_locked(FaultKind::FlushNeverCompletes)) {
            flush_stuck_ = true;
            break;
        }
        pending_flush_ |= cmd;
        flush_ev_->arm_locked(gpu_.config().lat.cache_flush);
        break;
    case CMD_CLEAR_FAULT:
        bank_.set(GPU_FAULT_STATUS, 0);
        bank_.set64(GPU_FAULT_ADDR, 0);
        break;
    default: gpu_.log_once_locked(0x30000 | type, "GPU_CMD type %#x not modelled (ignored)", type); break;
    }
}

void GpuControl::flush_done_locked() {
    lockdep_assert_held(&lock_);
    // No cache is modelled (the GPU reads and writes memory directly); a flush is a delay, and
    // a full L2 clean+invalidate advances the flush ID userspace compares against.
    if (GPU_FLUSH_L2_MODE(pending_flush_) == (CACHE_CLEAN | CACHE_INV))
        advance_flush_id_locked();
    pending_flush_ = 0;
    irq_.raise_locked(GPU_IRQ_CLEAN_CACHES_COMPLETED);
}

void GpuControl::raise_gpu_fault_locked(u32 status, u64 addr) {
    lockdep_assert_held(&lock_);
    if (bank_.get(GPU_FAULT_STATUS) == 0) {
        bank_.set(GPU_FAULT_STATUS, status);
        bank_.set64(GPU_FAULT_ADDR, addr);
    }
    irq_.raise_locked(GPU_IRQ_FAULT);
}

void GpuControl::set_fw_counter_enable_locked(bool on) {
    lockdep_assert_held(&lock_);
    cc_fw_ = on;
    update_cycle_counter_locked();
}

void GpuControl::set_mcu_running_locked(bool on) {
    lockdep_assert_held(&lock_);
    if (on && !cc_mcu_)
        local_ts_since_ = kshim::ktime_get();
    cc_mcu_ = on;
    update_cycle_counter_locked();
}

void GpuControl::update_cycle_counter_locked() {
    lockdep_assert_held(&lock_);
    counters_.set_cycle_counter_running(cc_cmd_ || cc_fw_ || cc_mcu_);
}

u64 GpuControl::cycle_count_locked() const {
    lockdep_assert_held(&lock_);
    return counters_.cycle_count();
}

u64 GpuControl::timestamp_locked() const {
    lockdep_assert_held(&lock_);
    return counters_.timestamp() + bank_.get64(GPU_TIMESTAMP_OFFSET);
}

u64 GpuControl::shader_timestamp_locked() const {
    lockdep_assert_held(&lock_);
    if (cc_fw_)
        return timestamp_locked();
    return GpuCounters::ns_to_ticks(kshim::ktime_get() - local_ts_since_, counters_.timestamp_hz());
}

void GpuControl::reset_locked() {
    lockdep_assert_held(&lock_);
    reset_ev_->cancel_locked();
    flush_ev_->cancel_locked();
    reset_stuck_ = flush_stuck_ = false;
    pending_flush_ = 0;
    cc_cmd_ = cc_fw_ = false;
    counters_.reset();
    bank_.reset();
}

}  // namespace mock_hw
