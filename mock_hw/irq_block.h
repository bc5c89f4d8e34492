// The RAWSTAT/CLEAR/MASK/STAT quadruple every Mali interrupt source has (GPU_INT_*, JOB_INT_*,
// MMU_INT_*), implemented once. The kshim IrqLine is level-triggered: it follows STAT != 0 and
// is driven only when that changes between zero and non-zero.
#pragma once
#include <functional>
#include <string>

#include "kernel_shim/irq.h"
#include "kernel_shim/spinlock.h"
#include "mock_hw/register_bank.h"

namespace mock_hw {

class IrqBlock {
public:
    // Declares RAWSTAT (+0), CLEAR (+4), MASK (+8) and STAT (+0xC) at `base` in `bank`.
    // `lock` is the Gpu lock the _locked methods expect held. `mask_survives_reset`: the G610 keeps
    // MASK across a GPU reset (docs/mock_hw.md, "Reset"); a JM GPU clears it with the rest.
    IrqBlock(RegisterBank& bank, u32 base, kshim::IrqLine& line, kshim::SpinLock& lock, const char* prefix,
             bool mask_survives_reset = true);

    // Hardware side (Gpu lock held). Calling IrqLine::set_level under the Gpu lock is safe: it
    // only records the level and unparks the line's IRQ task; the handler runs later on that task
    // and takes the Gpu lock itself, so nothing re-enters.
    void raise_locked(u32 bits);
    void clear_locked(u32 bits);
    u32 rawstat_locked() const {
        lockdep_assert_held(&lock_);
        return bank_.get(base_);
    }
    u32 mask_locked() const {
        lockdep_assert_held(&lock_);
        return bank_.get(base_ + 8);
    }
    u32 stat_locked() const {
        lockdep_assert_held(&lock_);
        return rawstat_locked() & mask_locked();
    }
    // After a reset (RAWSTAT cleared by the bank reset) or a poke: drive the line to match.
    void resync_locked() {
        lockdep_assert_held(&lock_);
        update_line_locked();
    }
    // Called (lock held) after software wrote CLEAR, with the bits written: the JM job slots
    // release a NEXT set held by a FAIL bit then.
    void set_clear_hook(std::function<void(u32 bits)> fn) { clear_hook_ = std::move(fn); }
    // How many times the line changed level (asserted + deasserted).
    u64 line_toggles() const { return toggles_; }

private:
    void update_line_locked();

    RegisterBank& bank_;
    u32 base_;
    std::string names_[4];  // the bank keeps pointers to these
    kshim::IrqLine& line_;
    kshim::SpinLock& lock_;
    bool level_ GUARDED_BY(lock_) = false;
    std::function<void(u32)> clear_hook_;
    u64 toggles_ = 0;
};

}  // namespace mock_hw
