// The mock Mali-G610: the Gpu composed of its blocks, with MMIO address decode in one place.
//
// Blocks and ranges (docs/hw/csf/gpu-control.md, "MMIO map"): GPU_CONTROL 0x0000 (gpu_control.cpp,
// power.cpp, MCU_CONTROL in mcu.cpp), JOB_CONTROL 0x1000 (the JOB interrupt), MMU_CONTROL 0x2000
// (mmu.cpp), the USER page 0x10000 (LATEST_FLUSH_ID), doorbell pages 0x80000 + i * 0x10000. Unknown
// offsets read 0 and are logged once; writes to read-only registers are ignored and counted.
// The lock, the IRQ lines, MMIO entry and the shared blocks are GpuBase's (gpu_base.h).
#pragma once
#include <memory>

#include "mock_hw/cs_engine.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu_base.h"
#include "mock_hw/gpu_control.h"
#include "mock_hw/mcu.h"
#include "mock_hw/mmu.h"
#include "mock_hw/power.h"

namespace mock_hw {

class Gpu : public GpuBase {
public:
    explicit Gpu(GpuConfig cfg = {});
    ~Gpu() override;

    GpuControl& control() { return *control_; }
    Mcu& mcu() { return *mcu_; }
    IrqBlock& job_irq() { return *job_irq_; }
    IrqBlock& gpu_irq() override { return control_->irq(); }
    // The CSG/CS engine, attached to the MCU at construction.
    CsEngine& engine() { return *engine_; }

    void reset_locked() override;
    void inject_locked(const FaultSpec& spec) override;
    void raise_gpu_fault_locked(u32 status, u64 addr) override { control_->raise_gpu_fault_locked(status, addr); }

private:
    RegisterBank* decode(u32 off) override;

    RegisterBank job_bank_{"JOB_CONTROL"};
    RegisterBank user_bank_{"USER"};
    RegisterBank doorbell_bank_{"DOORBELL"};
    std::unique_ptr<IrqBlock> job_irq_;
    std::unique_ptr<GpuControl> control_;
    std::unique_ptr<Mcu> mcu_;
    std::unique_ptr<CsEngine> engine_;
};

}  // namespace mock_hw
