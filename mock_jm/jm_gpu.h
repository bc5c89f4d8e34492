// The mock Mali-G52 (a Job Manager GPU, driven by panfrost): its blocks on the chassis every mock
// GPU shares (mock_hw/gpu_base.h: the lock, the "job"/"mmu"/"gpu" IRQ lines, timers, MMIO entry,
// the power domains, the MMU in its JM flavour and the fault plan).
//
// MMIO map (docs/hw/jm/README.md): GPU_CONTROL 0x0000 (jm_control.cpp, power domains in
// mock_hw/power.cpp), JOB_CONTROL 0x1000 (job_control.cpp, chains in job_chain.cpp), MMU_CONTROL
// 0x2000 (mock_hw/mmu.cpp). Nothing above 0x2FFF decodes: a JM GPU has no doorbells, USER page or
// MCU. Unknown offsets read 0 and are logged once. Behaviour and the mock's choices: docs/mock_jm.md.
#pragma once
#include <memory>

#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu_base.h"
#include "mock_hw/mmu.h"
#include "mock_hw/power.h"
#include "mock_jm/config.h"
#include "mock_jm/jm_control.h"
#include "mock_jm/job_control.h"

namespace mock_jm {

class JmGpu : public mock_hw::GpuBase {
public:
    explicit JmGpu(JmConfig cfg = {});
    ~JmGpu() override;

    const JmConfig& jm_config() const { return jm_cfg_; }
    JmControl& control() { return *control_; }
    JobControl& jobs() { return *jobs_; }
    IrqBlock& gpu_irq() override { return control_->irq(); }

    // GPU_CMD SOFT_RESET / HARD_RESET was written: every job slot stops at once, raising nothing.
    void reset_started_locked();
    void reset_locked() override;
    void inject_locked(const mock_hw::FaultSpec& spec) override;
    void raise_gpu_fault_locked(u32 status, u64 addr) override { control_->raise_gpu_fault_locked(status, addr); }

private:
    RegisterBank* decode(u32 off) override;

    JmConfig jm_cfg_;
    std::unique_ptr<JmControl> control_;
    std::unique_ptr<JobControl> jobs_;
};

}  // namespace mock_jm
