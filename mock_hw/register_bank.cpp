// A hardware block's register file (see register_bank.h).
#include "mock_hw/register_bank.h"

#include "kernel_shim/report.h"

namespace mock_hw {

void RegisterBank::add(u32 off, RegDecl d) {
    WARN(regs_.count(off) != 0, "mock_hw: register 0x%x declared twice in %s", off, name_.c_str());
    Reg r;
    r.value = d.reset;
    r.decl = std::move(d);
    Reg& reg = regs_[off] = std::move(r);
    // Keep the flat index (declarations only happen while a block is built) if the bank is dense
    // enough for one. Blocks declare mostly in ascending order: a register past the end grows the
    // index (geometrically, as a vector does) and fills its slot; one below the base rebuilds it.
    // A rebuild per declaration made building a GPU quadratic in its register count.
    const u32 base = regs_.begin()->first & ~3u;
    const size_t slots = ((regs_.rbegin()->first - base) >> 2) + 1;
    if (slots > 8 * regs_.size() + 64) {
        index_.clear();
        return;
    }
    if (!index_.empty() && base == index_base_) {
        if (slots > index_.size())
            index_.resize(slots, nullptr);
        if ((off & 3) == 0)
            index_[(off - base) >> 2] = &reg;
        return;
    }
    index_base_ = base;
    index_.assign(slots, nullptr);
    for (auto& [o, rg] : regs_)
        if ((o & 3) == 0)
            index_[(o - index_base_) >> 2] = &rg;
}

void RegisterBank::add64(u32 off, const char* name, u64 reset, u64 writable, bool write_only) {
    add(off, RegDecl{.name = name,
                     .reset = static_cast<u32>(reset),
                     .writable = static_cast<u32>(writable),
                     .write_only = write_only});
    add(off + 4, RegDecl{.name = name,
                         .reset = static_cast<u32>(reset >> 32),
                         .writable = static_cast<u32>(writable >> 32),
                         .write_only = write_only});
}

std::optional<u32> RegisterBank::read(u32 off) const {
    const Reg* rp = find(off);
    if (!rp)
        return std::nullopt;
    const Reg& r = *rp;
    if (r.decl.on_read)
        return r.decl.on_read();
    if (r.decl.write_only)
        return 0u;
    return r.value;
}

RegisterBank::WriteResult RegisterBank::write(u32 off, u32 value) {
    Reg* rp = find(off);
    if (!rp)
        return WriteResult::Unknown;
    Reg& r = *rp;
    if (r.decl.writable == 0 && !r.decl.on_write)
        return WriteResult::ReadOnly;
    r.value = (r.value & ~r.decl.writable) | (value & r.decl.writable);
    if (r.decl.on_write)
        r.decl.on_write(value);
    return WriteResult::Ok;
}

bool RegisterBank::poke(u32 off, u32 value) {
    Reg* r = find(off);
    if (!r)
        return false;
    r->value = value;
    return true;
}

u32 RegisterBank::get(u32 off) const {
    const Reg* r = find(off);
    return r ? r->value : 0;
}

void RegisterBank::set(u32 off, u32 value) {
    Reg* r = find(off);
    if (WARN(!r, "mock_hw: set of undeclared register 0x%x in %s", off, name_.c_str()))
        return;
    r->value = value;
}

void RegisterBank::reset() {
    for (auto& [off, r] : regs_)
        if (!r.decl.survives_reset)
            r.value = r.decl.reset;
}

const char* RegisterBank::reg_name(u32 off) const {
    const Reg* r = find(off);
    return r ? r->decl.name : "?";
}

void RegisterBank::for_each(const std::function<void(u32, const char*, u32)>& fn) const {
    for (const auto& [off, r] : regs_)
        fn(off, r.decl.name, r.decl.on_read ? r.decl.on_read() : (r.decl.write_only ? 0 : r.value));
}

}  // namespace mock_hw
