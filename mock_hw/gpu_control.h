// The GPU_CONTROL block (0x0000-0x0FFF): identity and feature registers, the GPU interrupt,
// GPU_CMD (reset, cache flush, cycle counter, fault clear), GPU_STATUS, GPU fault status, the
// timestamp and cycle counters, coherency, MCU_CONTROL/MCU_STATUS (behaviour in mcu.cpp) and the
// power-domain registers (power.cpp). Also serves the USER page's LATEST_FLUSH_ID.
#pragma once
#include "kernel_shim/spinlock.h"
#include "mock_hw/gpu_counters.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/irq_block.h"
#include "mock_hw/register_bank.h"

namespace mock_hw {

class Gpu;

class GpuControl {
public:
    GpuControl(Gpu& gpu, kshim::IrqLine& line);

    RegisterBank& bank() { return bank_; }
    IrqBlock& irq() { return irq_; }

    // Latches GPU_FAULT_STATUS/GPU_FAULT_ADDR (first fault wins until CLEAR_FAULT) and raises
    // GPU_IRQ_FAULT.
    void raise_gpu_fault_locked(u32 status, u64 addr);
    // The FW's GLB COUNTER_EN keeps the cycle counter running like GPU_CMD TIME start does.
    void set_fw_counter_enable_locked(bool on);
    // The cycle counter also runs while the MCU is enabled: the firmware keeps it going for the
    // STORE_STATE cycle samples that kernel job profiling takes (panthor never starts it itself).
    void set_mcu_running_locked(bool on);
    u64 cycle_count_locked() const;
    u64 timestamp_locked() const;
    // The timestamp command streams and shader cores see (STORE_STATE TIMESTAMP). The system
    // timestamp reaches them only while the firmware's GLB COUNTER_EN is set (driver >= 1.6);
    // without it they count from their own start, the last time the MCU came up, and know nothing
    // of GPU_TIMESTAMP_OFFSET: the value is not comparable with GPU_TIMESTAMP.
    u64 shader_timestamp_locked() const;
    u32 latest_flush_id_locked() const {
        lockdep_assert_held(&lock_);
        return flush_id_;
    }
    // A command stream's FLUSH_CACHE2 completed; an L2 clean+invalidate advances the flush ID.
    void cs_flush_done_locked(bool l2_clean_invalidate) {
        lockdep_assert_held(&lock_);
        if (l2_clean_invalidate)
            advance_flush_id_locked();
    }
    // The 24-bit flush ID skips 0, which a FLUSH_CACHE2 reads as "flush unconditionally".
    void advance_flush_id_locked() {
        lockdep_assert_held(&lock_);
        flush_id_ = (flush_id_ + 1) & 0xFFFFFF;
        if (flush_id_ == 0)
            flush_id_ = 1;
    }
    bool reset_pending_locked() const {
        lockdep_assert_held(&lock_);
        return reset_ev_->pending_locked() || reset_stuck_;
    }
    bool flush_pending_locked() const {
        lockdep_assert_held(&lock_);
        return flush_ev_->pending_locked() || flush_stuck_;
    }

    // Back to power-on state (called by Gpu::reset_locked at the end of a reset).
    void reset_locked();

private:
    void command_locked(u32 cmd);
    void flush_done_locked();
    void update_cycle_counter_locked() REQUIRES(lock_);
    u32 status_locked() const;

    Gpu& gpu_;
    kshim::SpinLock& lock_;  // gpu_.lock(): every _locked method asserts it
    RegisterBank bank_{"GPU_CONTROL"};
    IrqBlock irq_;
    std::unique_ptr<HwEvent> reset_ev_;
    std::unique_ptr<HwEvent> flush_ev_;
    bool reset_stuck_ = false;  // FaultPlan: a reset that never completes
    bool flush_stuck_ = false;
    u32 pending_flush_ = 0;
    u32 flush_id_ = 1;
    // Cycle counter: runs while started by GPU_CMD or enabled by the FW.
    bool cc_cmd_ = false, cc_fw_ = false, cc_mcu_ = false;
    // When the MCU last came up: where the cores' local timestamp starts without COUNTER_EN.
    ktime_t local_ts_since_ = 0;
    GpuCounters counters_;
};

}  // namespace mock_hw
