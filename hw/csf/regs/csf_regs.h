// CSF user page and doorbell pages: mirrors the CSF_* definitions of panthor_regs.h.
#pragma once
#include <cstdint>

namespace panthor {

// The USER page: one read-only register, mmap-able by userspace.
inline constexpr uint32_t CSF_GPU_LATEST_FLUSH_ID = 0x10000;
inline constexpr uint32_t CSF_GPU_LATEST_FLUSH_ID_MASK = 0xFFFFFF;  // (non-panthor) [23:0]
inline constexpr uint32_t CSF_USER_PAGE_BASE = 0x10000;
inline constexpr uint32_t CSF_USER_PAGE_SIZE = 0x1000;

inline constexpr uint32_t CSF_IPA_CONTROL_BASE = 0x40000;  // (KB; not used by panthor)

// Doorbell page i: write 1 to ring. Doorbell 0 is the kernel/global one.
inline constexpr uint32_t CSF_DOORBELL_BASE = 0x80000;
inline constexpr uint32_t CSF_DOORBELL_STRIDE = 0x10000;
constexpr uint32_t CSF_DOORBELL(uint32_t i) {
    return CSF_DOORBELL_BASE + i * CSF_DOORBELL_STRIDE;
}
inline constexpr uint32_t CSF_GLB_DOORBELL_ID = 0;

// RK3588 maps 2 MiB of MMIO: doorbells up to page 0x180000 (16 user doorbells) fit.
inline constexpr uint32_t GPU_MMIO_SIZE = 0x200000;

}  // namespace panthor
