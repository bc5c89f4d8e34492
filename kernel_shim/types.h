// Mirrors include/linux/types.h and the errno headers: fixed-width names and kernel errnos.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace kshim {
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s8 = std::int8_t;
using s16 = std::int16_t;
using s32 = std::int32_t;
using s64 = std::int64_t;
using phys_addr_t = u64;
using dma_addr_t = u64;
using ktime_t = s64;  // nanoseconds, as the kernel's ktime_t

// L1 cache line size (the kernel's SMP_CACHE_BYTES). alignas(SMP_CACHE_BYTES) on a member stands
// in for ____cacheline_aligned_in_smp: fields written for every job by different threads go on
// different lines, or the line moves between cores on every write.
inline constexpr unsigned SMP_CACHE_BYTES = 64;
}  // namespace kshim

// Kernel-internal errnos that libc does not define (include/linux/errno.h).
#ifndef ERESTARTSYS
#define ERESTARTSYS 512
#endif
#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif
#ifndef EPROBE_DEFER
#define EPROBE_DEFER 517
#endif

// The kernel's container_of: the enclosing object of a member (offsetof on our own structs is
// supported by g++; -Wno-invalid-offsetof is set for them).
#define container_of(ptr, type, member) reinterpret_cast<type*>(reinterpret_cast<char*>(ptr) - offsetof(type, member))

#define KSHIM_CONCAT_(a, b) a##b
#define KSHIM_CONCAT(a, b) KSHIM_CONCAT_(a, b)
