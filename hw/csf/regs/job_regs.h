// JOB_CONTROL block registers (the CSF -> host interrupt): mirrors panthor_regs.h / panthor_fw_regs.h.
#pragma once
#include <cstdint>

#include "hw/bits.h"

namespace panthor {

inline constexpr uint32_t JOB_CONTROL_BASE = 0x1000;
inline constexpr uint32_t JOB_INT_BASE = 0x1000;
inline constexpr uint32_t JOB_INT_RAWSTAT = 0x1000;
inline constexpr uint32_t JOB_INT_CLEAR = 0x1004;
inline constexpr uint32_t JOB_INT_MASK = 0x1008;
inline constexpr uint32_t JOB_INT_STAT = 0x100C;
inline constexpr uint32_t JOB_INT_GLOBAL_IF = BIT(31);
constexpr uint32_t JOB_INT_CSG_IF(uint32_t x) {
    return BIT(x);
}

// Bit 31 is the global interface, so at most 31 CSG slots exist.
inline constexpr uint32_t MAX_CSGS = 31;

}  // namespace panthor
