// The mock Mali-G52: composition, MMIO decode and reset (see jm_gpu.h).
#include "mock_jm/jm_gpu.h"

#include "hw/jm/regs/gpu_regs.h"
#include "hw/jm/regs/job_regs.h"
#include "hw/jm/regs/mmu_regs.h"

namespace mock_jm {

using namespace panfrost;

JmGpu::JmGpu(JmConfig cfg) : GpuBase(cfg.gpu, "mock_jm_gpu"), jm_cfg_(std::move(cfg)) {
    control_ = std::make_unique<JmControl>(*this, irq_gpu());
    power_ = std::make_unique<mock_hw::Power>(*this, control_->bank());
    mmu_ = std::make_unique<mock_hw::Mmu>(*this, irq_mmu(), mock_hw::MmuFlavour::Jm);
    faults_ = std::make_unique<mock_hw::FaultPlan>(*this);
    jobs_ = std::make_unique<JobControl>(*this, irq_job());
    mmu_->set_command_listener([this](u32 as, u32 cmd) { jobs_->as_command_locked(as, cmd); });
}

JmGpu::~JmGpu() {
    stop_hardware();
}

RegisterBank* JmGpu::decode(u32 off) {
    if (off & 3)
        return nullptr;
    if (off < GPU_CONTROL_SIZE)
        return &control_->bank();
    if (off < JOB_CONTROL_BASE + JOB_CONTROL_SIZE)
        return &jobs_->bank();
    if (off < MMU_INT_RAWSTAT + 0x1000)
        return &mmu_->bank();
    return nullptr;
}

void JmGpu::reset_started_locked() {
    lockdep_assert_held(&lock());
    jobs_->abort_all_locked();
}

void JmGpu::reset_locked() {
    lockdep_assert_held(&lock());
    control_->reset_locked();
    power_->reset_locked();
    mmu_->reset_locked();
    jobs_->reset_locked();
    control_->irq().resync_locked();
    mmu_->irq().resync_locked();
    trace_instant_locked("gpu_reset_done", "mock_jm");
    control_->irq().raise_locked(GPU_IRQ_RESET_COMPLETED);
}

void JmGpu::inject_locked(const mock_hw::FaultSpec& spec) {
    lockdep_assert_held(&lock());
    trace_instant_locked("fault_injected", mock_hw::fault_kind_name(spec.kind));
    if (spec.kind == mock_hw::FaultKind::GpuFault)
        control_->raise_gpu_fault_locked(spec.fault_status, spec.fault_addr);
}

}  // namespace mock_jm
