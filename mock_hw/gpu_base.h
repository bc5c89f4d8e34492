// What every mock Mali GPU is built on, whatever the family (the CSF Mali-G610 in gpu.h, the Job
// Manager Mali-G52 in mock_jm/): the configuration, the device, the one lock, the three IRQ lines,
// the hardware-effect timers with real-mode catch-up, the MMIO entry points over a family-specific
// address decode, and the blocks that are the same hardware in both families (power domains, the
// MMU with its address spaces, the fault plan).
//
// Locking: one SpinLock (lock()) protects the state of every block, the register banks and the
// fault plan. MMIO entry points take it; hardware effects (HwEvent callbacks) run under it; the
// IRQ lines are driven under it (see irq_block.h for why that cannot re-enter). Methods ending in
// _locked expect it held.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "kernel_shim/irq.h"
#include "kernel_shim/log.h"
#include "kernel_shim/spinlock.h"
#include "mock_hw/config.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/register_bank.h"

namespace mock_hw {

class FaultPlan;
class IrqBlock;
class Mmu;
class Power;
struct FaultSpec;

class GpuBase {
public:
    GpuBase(GpuConfig cfg, const char* name);
    virtual ~GpuBase();
    GpuBase(const GpuBase&) = delete;
    GpuBase& operator=(const GpuBase&) = delete;

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

    Power& power() { return *power_; }
    Mmu& mmu() { return *mmu_; }
    FaultPlan& faults() { return *faults_; }
    // The GPU_INT block (FAULT, RESET_COMPLETED, POWER_CHANGED, cache-flush completion).
    virtual IrqBlock& gpu_irq() = 0;

    u64 readonly_writes() const { return ro_writes_.load(); }
    u64 unknown_accesses() const { return unknown_.load(); }

    // Everything back to power-on state; raises RESET_COMPLETED (the end of a GPU_CMD reset).
    virtual void reset_locked() = 0;
    // A spontaneous injected fault (FaultPlan AtTime triggers).
    virtual void inject_locked(const FaultSpec& spec) = 0;
    // Latches GPU_FAULT_STATUS/ADDRESS and raises GPU_INT FAULT (a bus fault on a physical access).
    virtual void raise_gpu_fault_locked(u32 status, u64 addr) = 0;

    // A hardware effect bound to the Gpu lock; the Gpu stops them all before it is destroyed.
    std::unique_ptr<HwEvent> make_event(const char* name, std::function<void()> fn);
    void log_once_locked(u32 key, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
    void trace_instant_locked(const char* name, const char* what);

protected:
    // The register bank that decodes `off`, or nullptr.
    virtual RegisterBank* decode(u32 off) = 0;
    // Stops every effect and the fault plan's timers, without the lock. The most derived
    // destructor calls it first, while the blocks the effects touch still exist.
    void stop_hardware();

    std::unique_ptr<Power> power_;
    std::unique_ptr<Mmu> mmu_;
    std::unique_ptr<FaultPlan> faults_;

private:
    // Real mode: runs every effect due by now, in due order, before an MMIO access.
    void catch_up_locked();

    GpuConfig cfg_;
    kshim::Device dev_;
    // Protects every block's state (see the file comment).
    kshim::SpinLock lock_;
    kshim::IrqLine irq_job_{"job", 1};
    kshim::IrqLine irq_mmu_{"mmu", 2};
    kshim::IrqLine irq_gpu_{"gpu", 3};
    std::vector<HwEvent*> events_;            // every HwEvent made by make_event
    const bool real_mode_;                    // the runtime's mode at construction
    bool stopped_ = false;                    // stop_hardware ran
    std::set<u32> logged_ GUARDED_BY(lock_);  // log_once keys
    std::atomic<u64> ro_writes_{0}, unknown_{0};
};

}  // namespace mock_hw
