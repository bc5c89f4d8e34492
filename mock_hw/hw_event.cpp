// A hardware effect with a latency (see hw_event.h).
#include "mock_hw/hw_event.h"

#include "kernel_shim/backend.h"
#include "kernel_shim/runtime.h"

namespace mock_hw {

HwEvent::HwEvent(kshim::SpinLock& lock, const char* name, std::function<void()> fn)
    : lock_(lock), fn_(std::move(fn)), ev_(&HwEvent::fire, this, kshim::kBandHardware, name) {
    ev_.account = kshim::CpuAccount::Hardware;
}

HwEvent::~HwEvent() {
    shutdown();
}

void HwEvent::arm_locked(ktime_t delay) {
    lockdep_assert_held(&lock_);
    arm_at_locked(kshim::ktime_get() + (delay < 0 ? 0 : delay));
}

void HwEvent::arm_at_locked(ktime_t when) {
    lockdep_assert_held(&lock_);
    if (dead_)
        return;
    armed_ = true;
    due_ = when;
    kshim::backend().timer_arm(&ev_, when);
}

void HwEvent::cancel_locked() {
    lockdep_assert_held(&lock_);
    if (!armed_)
        return;
    armed_ = false;
    kshim::backend().timer_cancel(&ev_);
}

void HwEvent::fire_now_locked() {
    lockdep_assert_held(&lock_);
    if (!armed_ || dead_)
        return;
    armed_ = false;
    kshim::backend().timer_cancel(&ev_);
    fn_();
}

void HwEvent::shutdown() {
    {
        kshim::SpinGuard g(lock_);
        dead_ = true;
        cancel_locked();
    }
    kshim::backend().timer_cancel(&ev_);
    kshim::backend().timer_wait_idle(&ev_);
}

void HwEvent::fire(kshim::TimerEvent* ev, kshim::u64) {
    auto* self = static_cast<HwEvent*>(ev->owner);
    kshim::SpinGuard g(self->lock_);
    if (!self->armed_ || self->dead_ || kshim::ktime_get() < self->due_)
        return;
    self->armed_ = false;
    self->fn_();
}

}  // namespace mock_hw
