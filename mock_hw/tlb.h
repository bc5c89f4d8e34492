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

    const Translation* lookup(u64 va) {
        for (auto& e : entries_)
            if (e.valid && va - e.t.va_base < e.t.size) {
                hits_++;
                return &e.t;
            }
        misses_++;
        return nullptr;
    }
    void insert(const Translation& t) {
        entries_[next_] = {true, t};
        next_ = (next_ + 1) % kEntries;
    }
    // Drops every entry overlapping [start, start + size).
    void invalidate_range(u64 start, u64 size) {
        for (auto& e : entries_)
            if (e.valid && e.t.va_base < start + size && start < e.t.va_base + e.t.size) e.valid = false;
    }
    void invalidate_all() {
        for (auto& e : entries_) e.valid = false;
    }
    u64 hits() const { return hits_; }
    u64 misses() const { return misses_; }

private:
    struct Entry {
        bool valid = false;
        Translation t;
    };
    std::array<Entry, kEntries> entries_{};
    size_t next_ = 0;
    u64 hits_ = 0, misses_ = 0;
};

}  // namespace mock_hw
