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

Gpu::Gpu(GpuConfig cfg)
    : cfg_(std::move(cfg)), real_mode_(kshim::Runtime::get() && kshim::Runtime::get()->mode() == kshim::Mode::Real) {
    job_irq_ = std::make_unique<IrqBlock>(job_bank_, JOB_INT_BASE, irq_job_, lock_, "JOB_INT");
    control_ = std::make_unique<GpuControl>(*this, irq_gpu_);
    power_ = std::make_unique<Power>(*this, control_->bank());
    mmu_ = std::make_unique<Mmu>(*this, irq_mmu_);
    mcu_ = std::make_unique<Mcu>(*this);
    faults_ = std::make_unique<FaultPlan>(*this);
    engine_ = std::make_unique<CsEngine>(*this);
    mcu_->set_engine(engine_.get());
    mmu_->set_update_listener([this](u32 as) { engine_->as_updated_locked(as); });

    user_bank_.add(CSF_GPU_LATEST_FLUSH_ID, RegDecl{.name = "CSF_GPU_LATEST_FLUSH_ID",
                                                    .on_read = [this] { return control_->latest_flush_id_locked(); }});
    for (u32 i = 0; i < cfg_.doorbell_count; i++) {
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
    faults_->shutdown();
    for (HwEvent* ev : events_)
        ev->shutdown();
}

std::unique_ptr<HwEvent> Gpu::make_event(const char* name, std::function<void()> fn) {
    auto ev = std::make_unique<HwEvent>(lock_, name, std::move(fn));
    events_.push_back(ev.get());
    return ev;
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
    if (off >= CSF_DOORBELL_BASE && off < CSF_DOORBELL(cfg_.doorbell_count))
        return &doorbell_bank_;
    return nullptr;
}

// In real mode the effects run on the runtime's timer thread, which a loaded host can starve
// past the driver's real-time waits, while real hardware does not slow down when the CPU is
// busy. So an access first brings the hardware up to date: a register reads as a function of
// the time since the command that changed it, whichever thread gets here first. (Simulated mode
// needs none of this: time only moves when every task waits.) An effect that keeps re-arming
// itself at once is left to the timer after a bounded number of rounds.
void Gpu::catch_up_locked() {
    lockdep_assert_held(&lock_);
    if (!real_mode_)
        return;
    for (int round = 0; round < 64; round++) {
        const kshim::ktime_t now = kshim::ktime_get();
        HwEvent* next = nullptr;
        for (HwEvent* ev : events_)
            if (ev->pending_locked() && ev->due_locked() <= now && (!next || ev->due_locked() < next->due_locked()))
                next = ev;
        if (!next)
            return;
        next->fire_now_locked();
    }
}

// MMIO runs the register handlers in the caller's task (a driver thread): that CPU time is the
// hardware's, not the driver's (kernel_shim/cputime.h).
u32 Gpu::read32(u32 off) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(lock_);
    catch_up_locked();
    if (RegisterBank* b = decode(off))
        if (auto v = b->read(off))
            return *v;
    unknown_++;
    log_once_locked(off, "read of unknown register %#x (reads 0)", off);
    return 0;
}

void Gpu::write32(u32 off, u32 value) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(lock_);
    catch_up_locked();
    RegisterBank* b = decode(off);
    switch (b ? b->write(off, value) : RegisterBank::WriteResult::Unknown) {
    case RegisterBank::WriteResult::Ok: return;
    case RegisterBank::WriteResult::ReadOnly:
        ro_writes_++;
        log_once_locked(0x80000000u | off, "write %#x to read-only register %s (%#x) ignored", value, b->reg_name(off),
                        off);
        return;
    case RegisterBank::WriteResult::Unknown:
        unknown_++;
        log_once_locked(off, "write %#x to unknown register %#x ignored", value, off);
        return;
    }
}

std::optional<u32> Gpu::peek32(u32 off) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(lock_);
    RegisterBank* b = decode(off);
    return b ? b->peek(off) : std::nullopt;
}

bool Gpu::poke32(u32 off, u32 value) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(lock_);
    RegisterBank* b = decode(off);
    return b && b->poke(off, value);
}

void Gpu::reset_locked() {
    lockdep_assert_held(&lock_);
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
    lockdep_assert_held(&lock_);
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

void Gpu::log_once_locked(u32 key, const char* fmt, ...) {
    lockdep_assert_held(&lock_);
    if (!logged_.insert(key).second)
        return;
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    dev_warn(&dev_, "%s", buf);
}

void Gpu::trace_instant_locked(const char* name, const char* what) {
    lockdep_assert_held(&lock_);
    if (!kshim::trace::enabled())
        return;
    kshim::trace::instant(name, "mock_hw", std::string("{\"what\":\"") + what + "\"}");
}

}  // namespace mock_hw
