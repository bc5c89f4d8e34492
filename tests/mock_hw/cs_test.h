// The fixture, constants and helpers the CS-engine test files share (cs_engine_test.cpp,
// cs_suspend_test.cpp, cs_heap_test.cpp, cs_fault_inject_test.cpp, cs_endpoint_test.cpp,
// cs_stream_test.cpp, cs_real_jobs_test.cpp). The driver side is
// CsfRig (csf_rig.h).
#pragma once
#include "testkit/csf_rig.h"
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {

constexpr kshim::ktime_t kUs = NSEC_PER_USEC;
// panthor's kernel registers on G610 (docs/hw/csf/cs-isa.md).
constexpr u8 A = 92, V = 94;

// The engine's behaviour does not depend on how the test body interleaves with the hardware's
// events at one virtual instant, so these tests also run under KSHIM_PREEMPT sweeps.
class CsTest : public MockHwTest {
protected:
    bool interleaving_agnostic() const override { return true; }

    // Starts group `slot` with the given queues on CS 0, 1, ... and waits for the START ack.
    void start(CsfRig& r, u32 slot, std::initializer_list<CsfRig::Queue*> queues, u32 prio = 15, u32 suspend_buf = 0) {
        u32 c = 0;
        for (CsfRig::Queue* q : queues)
            r.program_cs(slot, c++, *q);
        r.start_group(slot, prio, CSG_STATE_START, suspend_buf);
        ASSERT_TRUE(wait([&] { return r.state_acked(slot); }));
    }
    // panthor re-binding a suspended group to the same slot: the slot's CS output blocks are
    // reused (zeroed here), its queues programmed again, then RESUME from the suspend buffer.
    void resume(CsfRig& r, u32 slot, std::initializer_list<CsfRig::Queue*> queues, u32 suspend_buf, u32 prio = 15) {
        u32 c = 0;
        for (CsfRig::Queue* q : queues) {
            r.locked([&] { memset(r.cs_out(slot, c), 0, sizeof(panthor_fw_cs_output_iface)); });
            r.program_cs(slot, c++, *q);
        }
        r.start_group(slot, prio, CSG_STATE_RESUME, suspend_buf);
    }
    // STATUS_UPDATE round trip on `slot`.
    void status_update(CsfRig& r, u32 slot) {
        r.toggle_csg(slot, CSG_STATUS_UPDATE);
        ASSERT_TRUE(wait([&] {
            return r.locked([&] { return !((r.csg_in(slot)->req ^ r.csg_out(slot)->ack) & CSG_STATUS_UPDATE); });
        }));
    }
    u32 cores_busy(CsfRig& r) {
        return r.locked([&] { return r.gpu.engine().cores_busy_locked(); });
    }
    // Virtual time at which pred first holds (-1 if it does not within `timeout`).
    kshim::ktime_t time_when(const std::function<bool()>& pred, kshim::ktime_t timeout = 100 * NSEC_PER_MSEC) {
        return wait(pred, timeout) ? kshim::ktime_get() : -1;
    }
};

}  // namespace mock_hw::testing
