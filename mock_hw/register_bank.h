// A hardware block's register file, in the style of gem5's RegisterBank / Arm NoMali: each
// register is declared once with its reset value, writable mask and optional handlers.
// The bus path (read/write) runs handlers; the debug path (peek/poke) never does, so dumps and
// tests can look at and set state without side effects. Callers hold the Gpu lock.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kernel_shim/types.h"

namespace mock_hw {

using kshim::u32;
using kshim::u64;

struct RegDecl {
    const char* name = "";
    u32 reset = 0;
    // Bits a bus write stores. A register with writable == 0 and no on_write is read-only: bus
    // writes are ignored and counted.
    u32 writable = 0;
    // Reads return 0 (command/strobe registers such as GPU_CMD, *_PWRON, *_INT_CLEAR).
    bool write_only = false;
    // Computed value (e.g. *_INT_STAT, counters). Must not have side effects: peek uses it too.
    std::function<u32()> on_read;
    // Called after the writable bits were stored, with the raw value written.
    std::function<void(u32 value)> on_write;
    // Register keeps its value across a GPU reset (e.g. IRQ masks, see docs/mock_hw.md).
    bool survives_reset = false;
};

class RegisterBank {
public:
    explicit RegisterBank(std::string name) : name_(std::move(name)) {}

    const std::string& name() const { return name_; }
    void add(u32 off, RegDecl d);
    // A 64-bit register as a LO/HI pair of 32-bit registers; handlers see the 32-bit half.
    void add64(u32 off, const char* name, u64 reset = 0, u64 writable = 0, bool write_only = false);

    bool decodes(u32 off) const { return find(off) != nullptr; }

    enum class WriteResult { Ok, ReadOnly, Unknown };
    std::optional<u32> read(u32 off) const;
    WriteResult write(u32 off, u32 value);

    // Side-effect-free: the value a read would return without running on_write/logging, and a
    // store that bypasses the writable mask and handlers.
    std::optional<u32> peek(u32 off) const { return read(off); }
    bool poke(u32 off, u32 value);

    // Storage access for the owning block's logic.
    u32 get(u32 off) const;
    void set(u32 off, u32 value);
    u64 get64(u32 off) const { return get(off) | (u64{get(off + 4)} << 32); }
    void set64(u32 off, u64 value) {
        set(off, static_cast<u32>(value));
        set(off + 4, static_cast<u32>(value >> 32));
    }

    // Back to reset values (registers marked survives_reset keep theirs).
    void reset();
    const char* reg_name(u32 off) const;
    // Offsets in ascending order, for dumps.
    void for_each(const std::function<void(u32 off, const char* name, u32 value)>& fn) const;

private:
    struct Reg {
        RegDecl decl;
        u32 value = 0;
    };
    // The declared register at `off` (every MMIO access does this): through the flat index when
    // the bank is dense, else the map (the doorbell bank spans 1.5 MiB for 17 registers).
    const Reg* find(u32 off) const {
        if (index_.empty()) {
            auto it = regs_.find(off);
            return it == regs_.end() ? nullptr : &it->second;
        }
        const u32 slot = (off - index_base_) >> 2;
        return (off & 3) == 0 && off >= index_base_ && slot < index_.size() ? index_[slot] : nullptr;
    }
    Reg* find(u32 off) { return const_cast<Reg*>(static_cast<const RegisterBank*>(this)->find(off)); }

    std::string name_;
    std::map<u32, Reg> regs_;  // declaration order for dumps; nodes stay put, index_ points at them
    std::vector<Reg*> index_;  // one slot per 32-bit offset from index_base_ (empty: sparse bank)
    u32 index_base_ = 0;
};

}  // namespace mock_hw
