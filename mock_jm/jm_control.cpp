// GPU_CONTROL of the mock Mali-G52 (see jm_control.h).
#include "mock_jm/jm_control.h"

#include "hw/jm/regs/gpu_regs.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu_identity_regs.h"
#include "mock_hw/power.h"
#include "mock_jm/jm_gpu.h"

namespace mock_jm {

using namespace panfrost;
using mock_hw::FaultKind;
using mock_hw::RegDecl;

JmControl::JmControl(JmGpu& gpu, kshim::IrqLine& line)
    : gpu_(gpu),
      lock_(gpu.lock()),
      irq_(bank_, GPU_INT_RAWSTAT, line, gpu.lock(), "GPU_INT", false),
      counters_(gpu.config()) {
    const mock_hw::GpuIdentity& id = gpu.config().id;
    const JmConfig& jc = gpu.jm_config();
    auto ro = [this](u32 off, const char* name, u32 v) { bank_.add(off, RegDecl{.name = name, .reset = v}); };
    auto ro64 = [this](u32 off, const char* name, u64 v) { bank_.add64(off, name, v); };
    auto rw = [this](u32 off, const char* name) { bank_.add(off, RegDecl{.name = name, .writable = ~0u}); };
    mock_hw::declare_identity_registers(
        bank_, id, [this] { return cycle_count_locked(); }, [this] { return timestamp_locked(); });
    ro(GPU_JS_PRESENT, "GPU_JS_PRESENT", jc.js_present);
    bank_.add(GPU_CMD,
              RegDecl{.name = "GPU_CMD", .write_only = true, .on_write = [this](u32 v) { command_locked(v); }});
    bank_.add(GPU_STATUS, RegDecl{.name = "GPU_STATUS", .on_read = [this] { return status_locked(); }});
    bank_.add(GPU_LATEST_FLUSH_ID,
              RegDecl{.name = "GPU_LATEST_FLUSH_ID", .on_read = [this] { return latest_flush_id_locked(); }});
    ro(GPU_FAULT_STATUS, "GPU_FAULT_STATUS", 0);
    ro64(GPU_FAULT_ADDRESS, "GPU_FAULT_ADDRESS", 0);
    ro(GPU_AFBC_FEATURES, "GPU_AFBC_FEATURES", jc.afbc_features);
    // The Amlogic unlock sequence is accepted; power overrides have no modelled effect.
    bank_.add(GPU_PWR_KEY, RegDecl{.name = "GPU_PWR_KEY", .write_only = true, .on_write = [](u32) {}});
    rw(GPU_PWR_OVERRIDE0, "GPU_PWR_OVERRIDE0");
    rw(GPU_PWR_OVERRIDE1, "GPU_PWR_OVERRIDE1");
    // Performance counters: the configuration is storage; a MANUAL-mode PERFCNT_SAMPLE writes a
    // deterministic counter block (perfcnt_sample_locked).
    bank_.add64(GPU_PERFCNT_BASE, "GPU_PERFCNT_BASE", 0, ~0ull);
    rw(GPU_PERFCNT_CFG, "GPU_PERFCNT_CFG");
    rw(GPU_PRFCNT_JM_EN, "GPU_PRFCNT_JM_EN");
    rw(GPU_PRFCNT_SHADER_EN, "GPU_PRFCNT_SHADER_EN");
    rw(GPU_PRFCNT_TILER_EN, "GPU_PRFCNT_TILER_EN");
    rw(GPU_PRFCNT_MMU_L2_EN, "GPU_PRFCNT_MMU_L2_EN");
    for (u32 n = 0; n < GPU_JS_FEATURES_COUNT; n++)
        ro(GPU_JS_FEATURES(n), "GPU_JS_FEATURES", n < 3 && (jc.js_present & (1u << n)) ? jc.js_features[n] : 0);
    ro(GPU_THREAD_TLS_ALLOC, "GPU_THREAD_TLS_ALLOC", jc.thread_tls_alloc);
    // Core stacks: panfrost reads STACK_PRESENT only; the rest is accepted and stays 0.
    ro64(GPU_STACK_PRESENT_LO, "GPU_STACK_PRESENT", jc.stack_present);
    ro64(STACK_READY_LO, "STACK_READY", 0);
    bank_.add64(STACK_PWRON_LO, "STACK_PWRON", 0, ~0ull, true);
    bank_.add64(STACK_PWROFF_LO, "STACK_PWROFF", 0, ~0ull, true);
    ro64(STACK_PWRTRANS_LO, "STACK_PWRTRANS", 0);
    // Quirk registers panfrost writes at every power-on (docs/hw/jm/gpu-control.md, "Quirks").
    rw(GPU_JM_CONFIG, "GPU_JM_CONFIG");
    rw(GPU_SHADER_CONFIG, "GPU_SHADER_CONFIG");
    rw(GPU_TILER_CONFIG, "GPU_TILER_CONFIG");
    rw(GPU_L2_MMU_CONFIG, "GPU_L2_MMU_CONFIG");

    reset_ev_ = gpu.make_event("mock_jm reset", [this] { gpu_.reset_locked(); });
    flush_ev_ = gpu.make_event("mock_jm flush", [this] {
        // No cache is modelled: a flush is a delay; a clean+invalidate advances the flush ID.
        if (pending_flush_ == GPU_CMD_CLEAN_INV_CACHES)
            advance_flush_id_locked();
        if (pending_flush_ == GPU_CMD_PERFCNT_SAMPLE)
            perfcnt_sample_locked();
        const u32 irq = pending_flush_ == GPU_CMD_PERFCNT_SAMPLE ? GPU_IRQ_PERFCNT_SAMPLE_COMPLETED
                                                                 : GPU_IRQ_CLEAN_CACHES_COMPLETED;
        pending_flush_ = 0;
        irq_.raise_locked(irq);
    });
}

// Only PRFCNT_ACTIVE is defined for a JM GPU, and performance counters are not modelled.
u32 JmControl::status_locked() const {
    lockdep_assert_held(&lock_);
    return 0;
}

void JmControl::command_locked(u32 cmd) {
    lockdep_assert_held(&lock_);
    if (const mock_hw::FaultSpec* f = gpu_.faults().occurrence_locked(FaultKind::GpuFault))
        raise_gpu_fault_locked(f->fault_status, f->fault_addr);
    const mock_hw::GpuLatencies& lat = gpu_.config().lat;
    switch (cmd) {
    case GPU_CMD_SOFT_RESET:
    case GPU_CMD_HARD_RESET:
        gpu_.trace_instant_locked("gpu_reset_start", cmd == GPU_CMD_HARD_RESET ? "hard" : "soft");
        // Every slot stops where it is and raises nothing more; the rest returns to its power-on
        // state when the reset completes.
        gpu_.reset_started_locked();
        if (gpu_.faults().occurrence_locked(FaultKind::ResetNeverCompletes)) {
            reset_stuck_ = true;
            break;
        }
        reset_ev_->arm_locked(cmd == GPU_CMD_HARD_RESET ? lat.hard_reset : lat.soft_reset);
        break;
    case GPU_CMD_PERFCNT_CLEAR: perfcnt_samples_ = 0; break;
    case GPU_CMD_PERFCNT_SAMPLE:
    case GPU_CMD_CLEAN_CACHES:
    case GPU_CMD_CLEAN_INV_CACHES:
        // One flush at a time; a second command while one runs merges into it (the stronger wins).
        if (!pending_flush_ || cmd == GPU_CMD_CLEAN_INV_CACHES)
            pending_flush_ = cmd;
        flush_ev_->arm_locked(lat.cache_flush);
        break;
    case GPU_CMD_CYCLE_COUNT_START: counters_.set_cycle_counter_running(true); break;
    case GPU_CMD_CYCLE_COUNT_STOP: counters_.set_cycle_counter_running(false); break;
    default: gpu_.log_once_locked(0x30000 | cmd, "GPU_CMD %#x not modelled (ignored)", cmd); break;
    }
}

// Counter i of block b in sample n (1 after a CLEAR) reads (n << 16) | (b << 8) | i; a block
// whose enable register is 0 dumps zeros. Blocks as a Bifrost dump lays them out: JM, tiler, one
// per L2 slice (MEM_FEATURES[11:8] + 1), one per shader core up to the highest present.
void JmControl::perfcnt_sample_locked() {
    lockdep_assert_held(&lock_);
    const u32 cfg = bank_.get(GPU_PERFCNT_CFG);
    if ((cfg & 0xf) != GPU_PERFCNT_CFG_MODE_MANUAL)
        return;
    perfcnt_samples_++;
    const mock_hw::GpuIdentity& id = gpu_.config().id;
    const u32 nl2c = ((id.mem_features >> 8) & 0xf) + 1;
    const u32 ncores = static_cast<u32>(64 - __builtin_clzll(id.shader_present | 1));
    const u32 nblocks = 2 + nl2c + ncores;
    const u32 as = (cfg >> 4) & 0xf;
    u64 va = bank_.get64(GPU_PERFCNT_BASE);
    for (u32 b = 0; b < nblocks; b++) {
        u32 en_reg = GPU_PRFCNT_SHADER_EN;
        if (b == 0)
            en_reg = GPU_PRFCNT_JM_EN;
        else if (b == 1)
            en_reg = GPU_PRFCNT_TILER_EN;
        else if (b < 2 + nl2c)
            en_reg = GPU_PRFCNT_MMU_L2_EN;
        u32 block[kPerfcntCountersPerBlock] = {};
        if (bank_.get(en_reg))
            for (u32 i = 0; i < kPerfcntCountersPerBlock; i++)
                block[i] = (perfcnt_samples_ << 16) | (b << 8) | i;
        // A fault of the dump's AS is reported by the MMU; the rest of the dump is dropped.
        if (!gpu_.mmu().write_locked(as, va, block, sizeof(block), kSourcePerfcnt).ok())
            return;
        va += sizeof(block);
    }
}

void JmControl::advance_flush_id_locked() {
    lockdep_assert_held(&lock_);
    flush_id_ = (flush_id_ + 1) & 0xFFFFFF;
    if (flush_id_ == 0)
        flush_id_ = 1;
}

void JmControl::raise_gpu_fault_locked(u32 status, u64 addr) {
    lockdep_assert_held(&lock_);
    if (irq_.rawstat_locked() & GPU_IRQ_FAULT) {
        irq_.raise_locked(GPU_IRQ_MULTIPLE_FAULT);
        return;
    }
    bank_.set(GPU_FAULT_STATUS, status);
    bank_.set64(GPU_FAULT_ADDRESS, addr);
    irq_.raise_locked(GPU_IRQ_FAULT);
}

u64 JmControl::cycle_count_locked() const {
    lockdep_assert_held(&lock_);
    return counters_.cycle_count();
}

u64 JmControl::timestamp_locked() const {
    lockdep_assert_held(&lock_);
    return counters_.timestamp();
}

void JmControl::reset_locked() {
    lockdep_assert_held(&lock_);
    reset_ev_->cancel_locked();
    flush_ev_->cancel_locked();
    reset_stuck_ = false;
    pending_flush_ = 0;
    perfcnt_samples_ = 0;
    counters_.reset();
    bank_.reset();
}

}  // namespace mock_jm
