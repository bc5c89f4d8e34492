// The mock Mali-G610: the Gpu composed of its blocks, with MMIO address decode in one place.
//
// Blocks and ranges (docs/hw/csf/gpu-control.md, "MMIO map"): GPU_CONTROL 0x0000 (gpu_control.cpp,
// power.cpp, MCU_CONTROL in mcu.cpp), JOB_CONTROL 0x1000 (the JOB interrupt), MMU_CONTROL 0x2000
// (mmu.cpp), the USER page 0x10000 (LATEST_FLUSH_ID), doorbell pages 0x80000 + i * 0x10000. Unknown
// offsets read 0 and are logged once; writes to read-only registers are ignored and counted.
//
// Locking: one SpinLock (lock()) protects the state of every block, the register banks and the
// fault plan. MMIO entry points take it; hardware effects (HwEvent callbacks) run under it; the
// IRQ lines are driven under it (see irq_block.h for why that cannot re-enter). Methods ending in
// _locked expect it held.
#pragma once
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "kernel_shim/irq.h"
#include "kernel_shim/log.h"
#include "kernel_shim/spinlock.h"
#include "mock_hw/config.h"
#include "mock_hw/cs_engine.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu_control.h"
#include "mock_hw/mcu.h"
#include "mock_hw/mmu.h"
#include "mock_hw/power.h"

namespace mock_hw {

class Gpu {
public:
    explicit Gpu(GpuConfig cfg = {});
    ~Gpu();
    Gpu(const Gpu&) = delete;
    Gpu& operator=(const Gpu&) = delete;

    // MMIO, offsets from the GPU's MMIO base (what the driver's Iomem calls).
    u32 read32(u32 off);
    void write32(u32 off, u32 value);
    // Side-effect-free (no handlers, no logging): for dumps, devcoredump, tests.
    std::optional<u32> peek32(u32 off);
    bool poke32(u32 off, u32 value);

    // The three level-triggered interrupt lines ("job", "mmu", "gpu" in the DT).
    kshim::IrqLine& irq_job() { return irq_job_; }
    kshim::IrqLine& irq_mmu() { return irq_mmu_; }
    kshim::IrqLine& irq_gpu() { return irq_gpu_; }

    const GpuConfig& config() const { return cfg_; }
    kshim::SpinLock& lock() RETURN_CAPABILITY(lock_) { return lock_; }
    const kshim::Device* dev() const { return &dev_; }

    GpuControl& control() { return *control_; }
    Power& power() { return *power_; }
    Mmu& mmu() { return *mmu_; }
    Mcu& mcu() { return *mcu_; }
    IrqBlock& job_irq() { return *job_irq_; }
    FaultPlan& faults() { return *faults_; }
    // The CSG/CS engine, attached to the MCU at construction.
    CsEngine& engine() { return *engine_; }

    u64 readonly_writes() const { return ro_writes_.load(); }
    u64 unknown_accesses() const { return unknown_.load(); }

    // Everything back to power-on state; raises RESET_COMPLETED (the end of a GPU_CMD reset).
    void reset_locked();
    // A spontaneous injected fault (FaultPlan AtTime triggers).
    void inject_locked(const FaultSpec& spec);

    // A hardware effect bound to the Gpu lock; the Gpu stops them all before it is destroyed.
    std::unique_ptr<HwEvent> make_event(const char* name, std::function<void()> fn);
    void log_once_locked(u32 key, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
    void trace_instant_locked(const char* name, const char* what);

private:
    RegisterBank* decode(u32 off);
    // Real mode: runs every effect due by now, in due order, before an MMIO access.
    void catch_up_locked();

    GpuConfig cfg_;
    kshim::Device dev_{"mock_gpu"};
    // Protects every block's state (see the file comment).
    kshim::SpinLock lock_{"mock_gpu"};
    kshim::IrqLine irq_job_{"job", 1};
    kshim::IrqLine irq_mmu_{"mmu", 2};
    kshim::IrqLine irq_gpu_{"gpu", 3};
    std::vector<HwEvent*> events_;            // every HwEvent made by make_event
    const bool real_mode_;                    // the runtime's mode at construction
    std::set<u32> logged_ GUARDED_BY(lock_);  // log_once keys
    std::atomic<u64> ro_writes_{0}, unknown_{0};

    RegisterBank job_bank_{"JOB_CONTROL"};
    RegisterBank user_bank_{"USER"};
    RegisterBank doorbell_bank_{"DOORBELL"};
    std::unique_ptr<IrqBlock> job_irq_;
    std::unique_ptr<GpuControl> control_;
    std::unique_ptr<Power> power_;
    std::unique_ptr<Mmu> mmu_;
    std::unique_ptr<Mcu> mcu_;
    std::unique_ptr<FaultPlan> faults_;
    std::unique_ptr<CsEngine> engine_;
};

}  // namespace mock_hw
