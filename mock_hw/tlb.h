// A small fully-associative TLB per address space (round-robin replacement). Entries stay until
// the AS is locked/unlocked/flushed over their range or UPDATEd, so a driver that changes page
// tables without the flush sequence keeps seeing the old translation, as on real hardware.
#pragma once
#include <array>

#include "mock_hw/lpae_walker.h"

namespace mock_hw {

class Tlb {
public:
    static constexpr size_t kEntries = 16;

    struct Entry {
        bool valid = false;
        Translation t;
        // Host address of t.pa_base when the whole output range is inside the physical arena
        // (every access through the entry is then a plain offset), else nullptr.
        u8* host = nullptr;
    };

    // The first valid entry (in slot order) that covers va. A hint per 4 KiB page hash remembers
    // the slot the last lookup there found; only an insert can put an earlier covering entry in
    // front of it, so an insert drops the hints of the pages it covers and every answer is still
    // the slot-order scan's.
    const Entry* find(u64 va) {
        u8& hint = hints_[hint_of(va)];
        if (hint) {
            const Entry& e = entries_[hint - 1];
            if (e.valid && va - e.t.va_base < e.t.size) {
                hits_++;
                return &e;
            }
        }
        for (size_t i = 0; i < kEntries; i++) {
            const Entry& e = entries_[i];
            if (e.valid && va - e.t.va_base < e.t.size) {
                hint = static_cast<u8>(i + 1);
                hits_++;
                return &e;
            }
        }
        misses_++;
        return nullptr;
    }
    // What find() answers, without touching the hints or the hit/miss counts (the slot-order
    // scan the hints stand in for): for looking at memory without being an access.
    const Entry* peek(u64 va) const {
        for (const Entry& e : entries_)
            if (e.valid && va - e.t.va_base < e.t.size)
                return &e;
        return nullptr;
    }
    const Translation* lookup(u64 va) {
        const Entry* e = find(va);
        return e ? &e->t : nullptr;
    }
    // Valid until the next insert.
    const Entry* insert(const Translation& t, u8* host = nullptr) {
        Entry& e = entries_[next_];
        e = {true, t, host};
        next_ = (next_ + 1) % kEntries;
        if (t.size <= 0x1000)
            hints_[hint_of(t.va_base)] = 0;
        else
            hints_.fill(0);
        return &e;
    }
    // Drops every entry overlapping [start, start + size).
    void invalidate_range(u64 start, u64 size) {
        for (auto& e : entries_)
            if (e.valid && e.t.va_base < start + size && start < e.t.va_base + e.t.size)
                e.valid = false;
    }
    void invalidate_all() {
        for (auto& e : entries_)
            e.valid = false;
    }
    u64 hits() const { return hits_; }
    u64 misses() const { return misses_; }

private:
    static constexpr size_t kHints = 64;
    // Fibonacci hashing of the page number: buffers are often 64 KiB-aligned, so the low bits
    // alone would put them all in one bucket.
    static size_t hint_of(u64 va) { return static_cast<size_t>(((va >> 12) * 0x9E3779B97F4A7C15ull) >> 58); }
    std::array<Entry, kEntries> entries_{};
    std::array<u8, kHints> hints_{};  // slot + 1 of the last hit per page hash; 0: none
    size_t next_ = 0;
    u64 hits_ = 0, misses_ = 0;
};

}  // namespace mock_hw
