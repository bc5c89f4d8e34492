// Bit helpers of include/linux/bits.h (BIT, BIT_ULL, GENMASK, GENMASK_ULL) for the register headers.
#pragma once
#include <cstdint>

namespace panthor {

constexpr uint32_t BIT(unsigned n) {
    return 1u << n;
}
constexpr uint64_t BIT_ULL(unsigned n) {
    return uint64_t{1} << n;
}
constexpr uint32_t GENMASK(unsigned h, unsigned l) {
    return (~0u >> (31 - h)) & (~0u << l);
}
constexpr uint64_t GENMASK_ULL(unsigned h, unsigned l) {
    return (~uint64_t{0} >> (63 - h)) & (~uint64_t{0} << l);
}

}  // namespace panthor
