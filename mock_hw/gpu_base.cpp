// The family-independent chassis of a mock GPU (see gpu_base.h).
#include "mock_hw/gpu_base.h"

#include <cstdarg>
#include <cstdio>

#include "kernel_shim/cputime.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/time.h"
#include "kernel_shim/trace.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/mmu.h"
#include "mock_hw/power.h"

namespace mock_hw {

GpuBase::GpuBase(GpuConfig cfg, const char* name)
    : cfg_(std::move(cfg)),
      dev_{name},
      lock_(name),
      real_mode_(kshim::Runtime::get() && kshim::Runtime::get()->mode() == kshim::Mode::Real) {}

GpuBase::~GpuBase() {
    // A derived destructor that forgot stop_hardware would let timers fire into freed blocks.
    BUG_ON(!stopped_ && !events_.empty());
}

void GpuBase::stop_hardware() {
    if (faults_)
        faults_->shutdown();
    for (HwEvent* ev : events_)
        ev->shutdown();
    stopped_ = true;
}

std::unique_ptr<HwEvent> GpuBase::make_event(const char* name, std::function<void()> fn) {
    auto ev = std::make_unique<HwEvent>(lock_, name, std::move(fn));
    events_.push_back(ev.get());
    return ev;
}

// In real mode the effects run on the runtime's timer thread, which a loaded host can starve
// past the driver's real-time waits, while real hardware does not slow down when the CPU is
// busy. So an access first brings the hardware up to date: a register reads as a function of
// the time since the command that changed it, whichever thread gets here first. (Simulated mode
// needs none of this: time only moves when every task waits.) An effect that keeps re-arming
// itself at once is left to the timer after a bounded number of rounds.
void GpuBase::catch_up_locked() {
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
u32 GpuBase::read32(u32 off) {
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

void GpuBase::write32(u32 off, u32 value) {
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

std::optional<u32> GpuBase::peek32(u32 off) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(lock_);
    RegisterBank* b = decode(off);
    return b ? b->peek(off) : std::nullopt;
}

bool GpuBase::poke32(u32 off, u32 value) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(lock_);
    RegisterBank* b = decode(off);
    return b && b->poke(off, value);
}

void GpuBase::log_once_locked(u32 key, const char* fmt, ...) {
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

void GpuBase::trace_instant_locked(const char* name, const char* what) {
    lockdep_assert_held(&lock_);
    if (!kshim::trace::enabled())
        return;
    kshim::trace::instant(name, "mock_hw", std::string("{\"what\":\"") + what + "\"}");
}

}  // namespace mock_hw
