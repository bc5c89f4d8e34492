// The seam between the MCU's global interface (mcu.cpp/glb.cpp) and the CSG/CS command-stream
// engine (cs_engine.h). The MCU owns boot, halt and the GLB req/ack protocol;
// everything about CSG slots is handed to this interface. All calls hold the Gpu lock.
#pragma once
#include "kernel_shim/types.h"

namespace mock_hw {

class CsfEngine {
public:
    virtual ~CsfEngine() = default;
    // GLB doorbell_req bits that differed from doorbell_ack (already acked by the MCU): those
    // CSG slots must re-scan their CSG req/doorbell_req.
    virtual void csg_doorbell_locked(kshim::u32 slot_mask) = 0;
    // A user doorbell page (index >= 1) was rung.
    virtual void user_doorbell_locked(kshim::u32 doorbell) = 0;
    // The MCU has (re)started. `cold`: the interface was rebuilt (after reset/disable); the
    // engine drops all slot state. Otherwise (restart after HALT) slots resume.
    virtual void mcu_started_locked(bool cold) = 0;
    // The MCU halted, was disabled, went FATAL/hung, or the GPU was reset: stop executing.
    virtual void mcu_stopped_locked() = 0;
};

}  // namespace mock_hw
