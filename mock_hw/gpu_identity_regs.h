// The GPU_CONTROL registers both Mali families have at the same offsets with the same meaning:
// identity and feature registers, the *_PRESENT masks, coherency features and the cycle counter /
// timestamp pairs. Each family's GPU_CONTROL block (mock_hw/gpu_control.cpp, mock_jm/jm_control.cpp)
// declares them through this and adds its own (GPU_CMD encodings, CSF_ID or JS_PRESENT, ...).
#pragma once
#include <functional>

#include "mock_hw/config.h"
#include "mock_hw/register_bank.h"

namespace mock_hw {

// `cycle_count` and `timestamp` compute the counters when read (lock held, no side effects).
void declare_identity_registers(RegisterBank& bank, const GpuIdentity& id, const std::function<u64()>& cycle_count,
                                const std::function<u64()>& timestamp);

}  // namespace mock_hw
