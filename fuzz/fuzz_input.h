// (no upstream counterpart) The byte reader every fuzz target decodes its input with: values
// are taken from the front, and an exhausted input reads as zeros, so every byte string is a
// valid program and a shorter input is a prefix of the same program (libFuzzer's mutations
// then change one decision at a time). Helpers bias numbers toward the edges where bounds
// checks live (0, 1, page and power-of-two boundaries, the type's maximum).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>

namespace upanthor_fuzz {

class FuzzInput {
public:
    FuzzInput(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}

    bool empty() const { return p_ >= end_; }
    size_t remaining() const { return static_cast<size_t>(end_ - p_); }

    uint8_t u8() { return empty() ? 0 : *p_++; }
    uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
    uint32_t u32() { return static_cast<uint32_t>(u16()) | (static_cast<uint32_t>(u16()) << 16); }
    uint64_t u64() { return static_cast<uint64_t>(u32()) | (static_cast<uint64_t>(u32()) << 32); }
    bool flag() { return u8() & 1; }
    // [0, n) for n > 0, from one byte when n <= 256 (so one mutation moves one choice).
    uint32_t below(uint32_t n) {
        if (n <= 1)
            return 0;
        if (n <= 256)
            return u8() % n;
        return u32() % n;
    }
    template <class T>
    T pick(std::initializer_list<T> values) {
        return values.begin()[below(static_cast<uint32_t>(values.size()))];
    }
    // Copies up to n bytes into dst (zero-filling what the input lacks).
    void bytes(void* dst, size_t n) {
        const size_t k = n < remaining() ? n : remaining();
        if (k)
            std::memcpy(dst, p_, k);
        if (k < n)
            std::memset(static_cast<uint8_t*>(dst) + k, 0, n - k);
        p_ += k;
    }

    // A 64-bit value near an edge most of the time: small numbers, page and power-of-two
    // boundaries (+-1), the maximum, or (1 in 8) any value.
    uint64_t edge_u64() {
        const uint8_t sel = u8();
        switch (sel & 7) {
        case 0: return sel >> 3;                                           // 0..31
        case 1: return uint64_t{1} << (u8() & 63);                         // 2^k
        case 2: return (uint64_t{1} << (u8() & 63)) - 1;                   // 2^k - 1
        case 3: return (uint64_t{1} << (u8() & 63)) + 1;                   // 2^k + 1
        case 4: return uint64_t{0x1000} * (1 + (sel >> 3));                // a few pages
        case 5: return std::numeric_limits<uint64_t>::max() - (sel >> 3);  // the top
        case 6: return uint64_t{0x1000} * u16();                           // page multiple
        default: return u64();
        }
    }
    uint32_t edge_u32() { return static_cast<uint32_t>(edge_u64()); }

private:
    const uint8_t* p_;
    const uint8_t* end_;
};

}  // namespace upanthor_fuzz
