// GPU_CONTROL of the mock Mali-G52 (0x0000-0x0FFF) as panfrost uses it: identity and feature
// registers, the GPU interrupt, GPU_CMD in the JM encoding (soft/hard reset, performance-counter
// clear/sample, cycle counter start/stop, cache clean and clean+invalidate), GPU_STATUS, the GPU
// fault registers, the cycle counter and timestamp, LATEST_FLUSH_ID, the quirk/config registers and
// the power-domain registers (mock_hw/power.cpp). Register facts: docs/hw/jm/gpu-control.md.
#pragma once
#include "kernel_shim/spinlock.h"
#include "mock_hw/gpu_counters.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/irq_block.h"
#include "mock_hw/register_bank.h"
#include "mock_jm/config.h"

namespace mock_jm {

using mock_hw::HwEvent;
using mock_hw::IrqBlock;
using mock_hw::RegisterBank;

class JmGpu;

class JmControl {
public:
    JmControl(JmGpu& gpu, kshim::IrqLine& line);

    RegisterBank& bank() { return bank_; }
    IrqBlock& irq() { return irq_; }

    // Latches GPU_FAULT_STATUS/ADDRESS (the first fault until the IRQ is cleared) and raises FAULT,
    // or MULTIPLE_FAULT when one is already latched.
    void raise_gpu_fault_locked(u32 status, u64 addr);
    u64 cycle_count_locked() const;
    u64 timestamp_locked() const;
    u32 latest_flush_id_locked() const {
        lockdep_assert_held(&lock_);
        return flush_id_;
    }
    // A cache flush completed (GPU_CMD or a job chain's start/end flush): a clean+invalidate of
    // the caches advances LATEST_FLUSH_ID, which panfrost compares to skip redundant flushes.
    void advance_flush_id_locked();
    bool reset_pending_locked() const {
        lockdep_assert_held(&lock_);
        return reset_ev_->pending_locked() || reset_stuck_;
    }

    // Back to power-on state (JmGpu::reset_locked, at the end of a reset).
    void reset_locked();

    // Performance counters per block of a dump, and the MMU source id of the dump's writes.
    static constexpr u32 kPerfcntCountersPerBlock = 64;
    static constexpr u32 kSourcePerfcnt = 0x4;

private:
    void command_locked(u32 cmd);
    // PERFCNT_SAMPLE completed: the counter block to GPU_PERFCNT_BASE in the configured AS.
    void perfcnt_sample_locked();
    u32 status_locked() const;

    JmGpu& gpu_;
    kshim::SpinLock& lock_;  // gpu_.lock(): every _locked method asserts it
    RegisterBank bank_{"GPU_CONTROL"};
    IrqBlock irq_;
    std::unique_ptr<HwEvent> reset_ev_;
    std::unique_ptr<HwEvent> flush_ev_;
    bool reset_stuck_ = false;  // FaultPlan: a reset that never completes
    u32 pending_flush_ = 0;     // the GPU_CMD of the flush in progress
    u32 flush_id_ = 1;
    u32 perfcnt_samples_ = 0;  // samples since the last PERFCNT_CLEAR
    // The cycle counter runs between CYCLE_COUNT_START and CYCLE_COUNT_STOP (panfrost counts its
    // users and issues one START for the first, one STOP for the last).
    mock_hw::GpuCounters counters_;
};

}  // namespace mock_jm
