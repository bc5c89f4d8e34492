// FaultPlan, second part: CS_FAULT / CS_FATAL / CS_UNRECOVERABLE injected at a chosen instruction
// of a chosen stream (cs_event = Instruction), and the delayed or dropped CSG acks.
#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

class CsFaultInject : public CsTest {
protected:
    static FaultSpec at_instruction(FaultKind kind, u64 n, int csg, int cs,
                                    u32 exception = DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT) {
        return FaultSpec{.kind = kind,
                         .trigger = FaultTrigger::nth_occurrence(n),
                         .csg = csg,
                         .cs = cs,
                         .exception = exception,
                         .cs_event = CsFaultEvent::Instruction};
    }
    // Stores 1, 2, 3, 4 at out[0..3] (u32), one MOVE32 + STORE_MULTIPLE pair each, after a MOVE48:
    // instruction k (1-based) of the stream is the store of value k/2 for even k.
    static void push_stores(CsfRig& r, CsfRig::Queue& q, u64 out) {
        r.push(q, {cs::move48(0, out), cs::move32(2, 1), cs::store_multiple(2, 0, 1, 0), cs::move32(2, 2),
                   cs::store_multiple(2, 0, 1, 4), cs::move32(2, 3), cs::store_multiple(2, 0, 1, 8), cs::move32(2, 4),
                   cs::store_multiple(2, 0, 1, 12)});
    }
    std::vector<u32> words(CsfRig& r, u8* m, u32 n = 4) {
        return r.locked([&] { return std::vector<u32>(reinterpret_cast<u32*>(m), reinterpret_cast<u32*>(m) + n); });
    }
};

TEST_F(CsFaultInject, CsFaultReplacesTheNthInstructionOfTheChosenStreamOnly) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    const int id = r.gpu.faults().add(at_instruction(FaultKind::CsFault, 5, 0, 1));
    u8 *m0, *m1;
    const u64 out0 = r.gpu_alloc(64, &m0), out1 = r.gpu_alloc(64, &m1);
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    start(r, 0, {&q0, &q1});
    push_stores(r, q0, out0);
    push_stores(r, q1, out1);
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 1) & CS_FAULT; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 1)->fault; }), u32{DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT});
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 1)->fault_info; }), q1.ring_va + 4 * 8);  // the 5th instruction
    ASSERT_TRUE(wait([&] { return words(r, m0) == std::vector<u32>{1, 2, 3, 4}; }));      // stream 0 is not affected
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(words(r, m1), (std::vector<u32>{1, 0, 0, 0}));  // halted until the host acks
    r.ack_cs(0, 1, CS_FAULT);
    r.ring_cs(0, 1);
    // The faulted store retired without running; the stream goes on after it.
    ASSERT_TRUE(wait([&] { return words(r, m1) == std::vector<u32>{1, 0, 3, 4}; }));
    EXPECT_EQ(r.gpu.faults().fired(id), 1u);
    EXPECT_EQ(r.cs_events(0, 0), 0u);
}

TEST_F(CsFaultInject, CsFatalCountsInstructionsOfCalledBuffers) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 out = r.gpu_alloc(64, &m);
    // 1 MOVE48, 2 MOVE32, 3 CALL, then in the called buffer 4 MOVE32, 5 MOVE48, 6 STORE, 7 MOVE32, 8 STORE.
    const u64 body = r.buffer({cs::move32(4, 5), cs::move48(6, out), cs::store_multiple(4, 6, 1), cs::move32(4, 6),
                               cs::store_multiple(4, 6, 1, 4)});
    r.gpu.faults().add(at_instruction(FaultKind::CsFatal, 6, 0, 0, DRM_PANTHOR_EXCEPTION_CS_ENDPOINT_FAULT));
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q, {cs::move48(0, body), cs::move32(2, 40), cs::call(0, 2), cs::move48(8, out + 8),
               cs::store_multiple(4, 8, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal; }), u32{DRM_PANTHOR_EXCEPTION_CS_ENDPOINT_FAULT});
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal_info; }), body + 2 * 8);
    // A fatal error stops the stream: acking it and ringing changes nothing.
    r.ack_cs(0, 0, CS_FATAL);
    r.ring_cs(0, 0);
    r.d.w(CSF_DOORBELL(1), 1);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(words(r, m, 3), (std::vector<u32>{0, 0, 0}));
}

TEST_F(CsFaultInject, BlockedInstructionCountsOnceAcrossPollsAndSuspend) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 obj = r.gpu_alloc(64, &m);
    // 1 MOVE48, 2 MOVE32, 3 SYNC_WAIT (re-evaluated every 20 us for a while), 4 MOVE32, 5 MOVE48, 6 STORE.
    const int id = r.gpu.faults().add(at_instruction(FaultKind::CsUnrecoverable, 5, 0, 0));
    CsfRig::Queue q = r.make_queue();
    const u32 sb = r.mcu_alloc(r.locked([&] { return r.csg_ctrl(0)->suspend_size; }));
    start(r, 0, {&q}, 15, sb);
    r.push(q, {cs::move48(0, obj), cs::move32(2, 0), cs::sync_wait32(0, 2, cs::GREATER), cs::move32(4, 9),
               cs::move48(6, obj + 8), cs::store_multiple(4, 6, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(200 * NSEC_PER_USEC);
    r.set_state(0, CSG_STATE_SUSPEND);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    resume(r, 0, {&q}, sb);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    advance(200 * NSEC_PER_USEC);
    EXPECT_EQ(r.cs_events(0, 0), 0u);
    r.locked([&] { reinterpret_cast<u32*>(m)[0] = 1; });  // release the wait
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal; }), u32{DRM_PANTHOR_EXCEPTION_CS_UNRECOVERABLE});
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal_info; }), q.ring_va + 4 * 8);
    EXPECT_EQ(r.gpu.faults().fired(id), 1u);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u32*>(m)[2]; }), 0u);
}

TEST_F(CsFaultInject, RunIssueSpecsAreNotCountedPerInstruction) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    // An instruction spec on another stream does not consume the RUN_* occurrences.
    r.gpu.faults().add(at_instruction(FaultKind::CsFatal, 1, 0, 1));
    const int run = r.gpu.faults().add(FaultSpec{.kind = FaultKind::CsFatal,
                                                 .trigger = FaultTrigger::nth_occurrence(1),
                                                 .csg = 0,
                                                 .cs = 0,
                                                 .exception = DRM_PANTHOR_EXCEPTION_CS_ENDPOINT_FAULT});
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    const u64 sh = r.shader(MockShader::Run, 1000);
    r.push(q, {cs::move48(16, sh), cs::nop(), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal_info; }), sh);  // the RUN variant reports the descriptor
    EXPECT_EQ(r.gpu.faults().fired(run), 1u);
}

TEST_F(CsFaultInject, CsgAcksDelayedAndDropped) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    constexpr kshim::ktime_t kDelay = 500 * NSEC_PER_USEC;
    FaultPlan& fp = r.gpu.faults();
    fp.add(FaultSpec{.kind = FaultKind::CsgAckDelay,
                     .trigger = FaultTrigger::nth_occurrence(1),
                     .delay = kDelay,
                     .csg_req_mask = CSG_STATE_MASK,
                     .csg = 0});
    fp.add(FaultSpec{.kind = FaultKind::CsgAckDelay,
                     .trigger = FaultTrigger::nth_occurrence(1),
                     .delay = kDelay,
                     .csg_req_mask = CSG_STATUS_UPDATE,
                     .csg = 0});
    const int drop = fp.add(FaultSpec{.kind = FaultKind::CsgAckDrop,
                                      .trigger = FaultTrigger::nth_occurrence(1),
                                      .csg_req_mask = CSG_STATUS_UPDATE,
                                      .csg = 1});
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    const GpuLatencies& lat = r.gpu.config().lat;
    // START of group 0 acked kDelay late; its EP_CFG (not selected) on time.
    r.program_cs(0, 0, q0);
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.start_group(0);
    auto ep_acked = [&](u32 s) {
        return r.locked([&] { return !((r.csg_in(s)->req ^ r.csg_out(s)->ack) & CSG_ENDPOINT_CONFIG); });
    };
    auto su_acked = [&](u32 s) {
        return r.locked([&] { return !((r.csg_in(s)->req ^ r.csg_out(s)->ack) & CSG_STATUS_UPDATE); });
    };
    EXPECT_EQ(time_when([&] { return ep_acked(0); }), t0 + lat.glb_request + lat.csg_request);
    EXPECT_EQ(time_when([&] { return r.state_acked(0); }),
              t0 + lat.glb_request + lat.csg_request + lat.csg_state + kDelay);
    // STATUS_UPDATE of group 0 delayed; the second one is not.
    const kshim::ktime_t t1 = kshim::ktime_get();
    r.toggle_csg(0, CSG_STATUS_UPDATE);
    EXPECT_EQ(time_when([&] { return su_acked(0); }), t1 + lat.glb_request + lat.csg_request + kDelay);
    const kshim::ktime_t t2 = kshim::ktime_get();
    r.toggle_csg(0, CSG_STATUS_UPDATE);
    EXPECT_EQ(time_when([&] { return su_acked(0); }), t2 + lat.glb_request + lat.csg_request);
    // Group 1's STATUS_UPDATE is dropped; its START and a later EP_CFG are still served.
    start(r, 1, {&q1});
    r.toggle_csg(1, CSG_STATUS_UPDATE);
    advance(10 * NSEC_PER_MSEC);
    EXPECT_FALSE(su_acked(1));
    EXPECT_EQ(fp.fired(drop), 1u);
    r.toggle_csg(1, CSG_ENDPOINT_CONFIG);
    EXPECT_TRUE(wait([&] { return ep_acked(1); }));
    EXPECT_FALSE(su_acked(1));
}

}  // namespace
}  // namespace mock_hw::testing
