// The mock Mali-G610: composition and MMIO address decode (see gpu.h).
#include "mock_hw/gpu.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "hw/csf/regs/csf_regs.h"
#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/job_regs.h"
#include "kernel_shim/cputime.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/time.h"
#include "kernel_shim/trace.h"

namespace mock_hw {

using namespace panthor;

Gpu::Gpu(GpuConfig cfg) : GpuBase(std::move(cfg), "mock_gpu") {
    job_irq_ = std::make_unique<IrqBlock>(job_bank_, JOB_INT_BASE, irq_job(), lock(), "JOB_INT");
    control_ = std::make_unique<GpuControl>(*this, irq_gpu());
    power_ = std::make_unique<Power>(*this, control_->bank());
    mmu_ = std::make_unique<Mmu>(*this, irq_mmu(), MmuFlavour::Csf);
    mcu_ = std::make_unique<Mcu>(*this);
    faults_ = std::make_unique<FaultPlan>(*this);
    engine_ = std::make_unique<CsEngine>(*this);
    mcu_->set_engine(engine_.get());
    mmu_->set_command_listener([this](u32 as, u32 cmd) {
        if (cmd == AS_COMMAND_UPDATE)
            engine_->as_updated_locked(as);
    });

    user_bank_.add(CSF_GPU_LATEST_FLUSH_ID, RegDecl{.name = "CSF_GPU_LATEST_FLUSH_ID",
                                                    .on_read = [this] { return control_->latest_flush_id_locked(); }});
    for (u32 i = 0; i < config().doorbell_count; i++) {
        // Any write rings (panthor writes 1).
        doorbell_bank_.add(CSF_DOORBELL(i),
                           RegDecl{.name = "CSF_DOORBELL", .write_only = true, .on_write = [this, i](u32) {
                                       if (i == CSF_GLB_DOORBELL_ID)
                                           mcu_->glb_doorbell_locked();
                                       else
                                           mcu_->user_doorbell_locked(i);
                                   }});
    }
}

Gpu::~Gpu() {
    stop_hardware();
}

RegisterBank* Gpu::decode(u32 off) {
    if (off & 3)
        return nullptr;
    if (off < GPU_CONTROL_SIZE)
        return &control_->bank();
    if (off < 0x2000)
        return &job_bank_;
    if (off < 0x3000)
        return &mmu_->bank();
    if (off >= CSF_USER_PAGE_BASE && off < CSF_USER_PAGE_BASE + CSF_USER_PAGE_SIZE)
        return &user_bank_;
    if (off >= CSF_DOORBELL_BASE && off < CSF_DOORBELL(config().doorbell_count))
        return &doorbell_bank_;
    return nullptr;
}

void Gpu::reset_locked() {
    lockdep_assert_held(&lock());
    control_->reset_locked();
    power_->reset_locked();
    mmu_->reset_locked();
    job_bank_.reset();
    mcu_->reset_locked();
    control_->irq().resync_locked();
    mmu_->irq().resync_locked();
    job_irq_->resync_locked();
    trace_instant_locked("gpu_reset_done", "mock_hw");
    control_->irq().raise_locked(GPU_IRQ_RESET_COMPLETED);
}

void Gpu::inject_locked(const FaultSpec& spec) {
    lockdep_assert_held(&lock());
    trace_instant_locked("fault_injected", fault_kind_name(spec.kind));
    switch (spec.kind) {
    case FaultKind::GpuFault: control_->raise_gpu_fault_locked(spec.fault_status, spec.fault_addr); break;
    case FaultKind::McuFatal: mcu_->fatal_locked(spec.halt_status); break;
    case FaultKind::FwHang: mcu_->hang_locked(); break;
    case FaultKind::CsFatal:
    case FaultKind::CsFault:
    case FaultKind::CsUnrecoverable:
        engine_->inject_locked(static_cast<u32>(std::max(spec.csg, 0)), static_cast<u32>(std::max(spec.cs, 0)),
                               spec.kind != FaultKind::CsFault,
                               spec.kind == FaultKind::CsUnrecoverable ? 0x41u : spec.exception);
        break;
    default: break;
    }
}

}  // namespace mock_hw
