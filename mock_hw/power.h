// The GPU's power domains (L2, tiler, shader cores): *_READY, *_PWRON, *_PWROFF, *_PWRTRANS,
// *_PWRACTIVE of GPU_CONTROL. A PWRON/PWROFF write sets PWRTRANS for the configured transition
// time, then updates READY and raises POWER_CHANGED (and POWER_CHANGED_ALL once nothing is in
// transition). The host powers L2; the MCU powers shader cores and the tiler.
#pragma once
#include <array>

#include "kernel_shim/spinlock.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/register_bank.h"

namespace mock_hw {

class GpuBase;

class Power {
public:
    enum Domain { kShader = 0, kTiler = 1, kL2 = 2 };
    static const char* domain_name(Domain d);

    Power(GpuBase& gpu, RegisterBank& bank);

    void power_on_locked(Domain d, u64 mask);
    void power_off_locked(Domain d, u64 mask);
    u64 ready_locked(Domain d) const {
        lockdep_assert_held(&lock_);
        return dom_[d].ready;
    }
    u64 trans_locked(Domain d) const {
        lockdep_assert_held(&lock_);
        return dom_[d].on | dom_[d].off;
    }
    bool any_transition_locked() const;
    // Back to power-on state (all off, nothing in transition).
    void reset_locked();

private:
    struct Dom {
        Domain id;
        u64 present = 0;
        u64 ready = 0;
        u64 on = 0;   // bits going on
        u64 off = 0;  // bits going off
        std::unique_ptr<HwEvent> done;
    };
    void start_locked(Domain d, u64 on, u64 off) REQUIRES(lock_);
    void complete_locked(Domain d);

    GpuBase& gpu_;
    kshim::SpinLock& lock_;  // gpu_.lock(): every _locked method asserts it
    std::array<Dom, 3> dom_ GUARDED_BY(lock_);
};

}  // namespace mock_hw
