// The RAWSTAT/CLEAR/MASK/STAT interrupt quadruple (see irq_block.h).
#include "mock_hw/irq_block.h"

namespace mock_hw {

IrqBlock::IrqBlock(RegisterBank& bank, u32 base, kshim::IrqLine& line, kshim::SpinLock& lock, const char* prefix,
                   bool mask_survives_reset)
    : bank_(bank), base_(base), line_(line), lock_(lock) {
    const char* suffix[4] = {"_RAWSTAT", "_CLEAR", "_MASK", "_STAT"};
    for (int i = 0; i < 4; i++)
        names_[i] = std::string(prefix) + suffix[i];
    bank_.add(base_ + 0x0, RegDecl{.name = names_[0].c_str()});
    bank_.add(base_ + 0x4, RegDecl{.name = names_[1].c_str(), .write_only = true, .on_write = [this](u32 v) {
                                       clear_locked(v);
                                       if (clear_hook_)
                                           clear_hook_(v);
                                   }});
    // MASK survives a G610 reset: see docs/mock_hw.md ("Reset").
    bank_.add(base_ + 0x8, RegDecl{.name = names_[2].c_str(),
                                   .writable = ~0u,
                                   .on_write = [this](u32) { update_line_locked(); },
                                   .survives_reset = mask_survives_reset});
    bank_.add(base_ + 0xC, RegDecl{.name = names_[3].c_str(), .on_read = [this] { return stat_locked(); }});
}

void IrqBlock::raise_locked(u32 bits) {
    lockdep_assert_held(&lock_);
    bank_.set(base_, rawstat_locked() | bits);
    update_line_locked();
}

void IrqBlock::clear_locked(u32 bits) {
    lockdep_assert_held(&lock_);
    bank_.set(base_, rawstat_locked() & ~bits);
    update_line_locked();
}

void IrqBlock::update_line_locked() {
    lockdep_assert_held(&lock_);
    bool level = stat_locked() != 0;
    if (level == level_)
        return;
    level_ = level;
    toggles_++;
    line_.set_level(level);
}

}  // namespace mock_hw
