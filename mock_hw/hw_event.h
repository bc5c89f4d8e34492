// A hardware effect with a latency: one kshim TimerEvent (band kBandHardware, CPU account
// Hardware) whose callback runs the effect under the Gpu lock. Every delayed state change of the mock goes through one of
// these, so intermediate states are observable and the timing is the runtime's in both modes.
#pragma once
#include <functional>

#include "kernel_shim/spinlock.h"
#include "kernel_shim/timer_event.h"

namespace mock_hw {

using kshim::ktime_t;

class HwEvent {
public:
    // `fn` runs with `lock` held, in the runtime's timer (atomic) context.
    HwEvent(kshim::SpinLock& lock, const char* name, std::function<void()> fn);
    ~HwEvent();
    HwEvent(const HwEvent&) = delete;
    HwEvent& operator=(const HwEvent&) = delete;

    // (Re)arms the effect `delay` from now; a pending arming is replaced.
    void arm_locked(ktime_t delay);
    void arm_at_locked(ktime_t when);
    void cancel_locked();
    // Runs the armed effect now, in the caller's context (the Gpu's catch-up before an MMIO
    // access in real mode); the timer's own firing then finds it disarmed.
    void fire_now_locked();
    bool pending_locked() const {
        lockdep_assert_held(&lock_);
        return armed_;
    }
    ktime_t due_locked() const {
        lockdep_assert_held(&lock_);
        return due_;
    }
    // Without the lock held: cancels and waits until a concurrently running callback is done
    // (real mode). Called from the Gpu's destructor.
    void shutdown();

private:
    static void fire(kshim::TimerEvent* ev, kshim::u64 gen);

    kshim::SpinLock& lock_;
    std::function<void()> fn_;
    kshim::TimerEvent ev_;
    // Under lock_. The callback checks both, so a stale firing (real mode: the timer thread had
    // already picked the event when it was cancelled or moved) does nothing.
    bool armed_ GUARDED_BY(lock_) = false;
    ktime_t due_ GUARDED_BY(lock_) = 0;
    bool dead_ GUARDED_BY(lock_) = false;
};

}  // namespace mock_hw
