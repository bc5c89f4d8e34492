// Mirrors include/linux/sizes.h: the power-of-two size constants drivers write sizes and
// alignments with. Typed (unsigned long, 64 bits here) rather than the kernel's macros, so that a
// file may still declare a local constant of the same name without the preprocessor rewriting it.
#pragma once

namespace kshim {

inline constexpr unsigned long SZ_4K = 1ul << 12;
inline constexpr unsigned long SZ_8K = 1ul << 13;
inline constexpr unsigned long SZ_16K = 1ul << 14;
inline constexpr unsigned long SZ_64K = 1ul << 16;
inline constexpr unsigned long SZ_128K = 1ul << 17;
inline constexpr unsigned long SZ_2M = 1ul << 21;
inline constexpr unsigned long SZ_8M = 1ul << 23;
inline constexpr unsigned long SZ_32M = 1ul << 25;
inline constexpr unsigned long SZ_512M = 1ul << 29;
inline constexpr unsigned long SZ_1G = 1ul << 30;
inline constexpr unsigned long SZ_4G = 1ul << 32;

}  // namespace kshim
