// Streams and slots at register level, the cases that cs_engine_test.cpp
// does not cover: a cross-queue SYNC_WAIT64 released by SYNC_ADD64, independent scoreboard
// entries, CS_FATAL stopping one stream until STOP, CS_CONFIG_FAULT, and TERMINATE of a busy group.
#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

class CsStream : public CsTest {
protected:
    auto landed(CsfRig& r, u8* m, u32 i, u64 v) {
        return [&r, m, i, v] { return r.locked([&] { return reinterpret_cast<u64*>(m)[i] == v; }); };
    }
};

TEST_F(CsStream, SyncAdd64OnOneQueueReleasesSyncWait64OnAnother) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8 *m, *objs;
    const u64 buf = r.gpu_alloc(64, &m);
    const u64 syncobj = r.gpu_alloc(64, &objs);
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    start(r, 0, {&q0, &q1});
    // q0: a 100 us job writes buf[0], then SYNC_ADD64 (CSG scope) signals the syncobj.
    r.push(q0, {cs::move48(16, r.shader(MockShader::Write, 100 * kUs, buf, 0x5A)), cs::run_compute(), cs::wait(1),
                cs::move48(0, syncobj), cs::move48(2, 1), cs::sync_add64(0, 2, cs::SCOPE_CSG)});
    // q1: waits for syncobj > 0, then copies buf[0] to buf[1].
    r.push(q1, {cs::move48(0, syncobj), cs::move48(2, 0), cs::sync_wait64(0, 2, cs::GREATER), cs::move48(4, buf),
                cs::load_multiple(6, 4, 1), cs::store_multiple(6, 4, 1, 8)});
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.d.w(CSF_DOORBELL(1), 1);
    advance(50 * kUs);
    status_update(r, 0);
    const panthor_fw_cs_output_iface st = r.locked([&] { return *r.cs_out(0, 1); });
    EXPECT_EQ(st.status_blocked_reason, u32{CS_STATUS_BLOCKED_REASON_SYNC_WAIT});
    EXPECT_EQ(st.status_wait & (CS_STATUS_WAIT_SYNC | CS_STATUS_WAIT_SYNC_64B),
              CS_STATUS_WAIT_SYNC | CS_STATUS_WAIT_SYNC_64B);
    EXPECT_EQ(st.status_wait_sync_ptr, syncobj);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(m)[1]; }), 0u);
    // Released the instant q0's SYNC_ADD64 ran, and it saw the job's result.
    EXPECT_EQ(time_when(landed(r, m, 1, 0x5A)), t0 + 100 * kUs);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(objs)[0]; }), 1u);
    EXPECT_EQ(r.csg_events(0) & CSG_SYNC_UPDATE, 0u);  // CSG scope: nothing for the host
}

TEST_F(CsStream, WaitOnOneScoreboardEntryDoesNotWaitForAnother) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q,
           {cs::set_sb_entry(1, 0), cs::move48(16, r.shader(MockShader::Write, 200 * kUs, buf, 1)), cs::run_compute(),
            cs::set_sb_entry(2, 0), cs::move48(16, r.shader(MockShader::Write, 20 * kUs, buf + 8, 2)),
            cs::run_compute(), cs::move48(4, buf), cs::move32(6, 7), cs::wait(1u << 2), cs::store_multiple(6, 4, 1, 16),
            cs::wait(1u << 1), cs::store_multiple(6, 4, 1, 24)});
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.d.w(CSF_DOORBELL(1), 1);
    advance(10 * kUs);
    status_update(r, 0);
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->status_scoreboards; }), 0b110u);
    EXPECT_EQ(time_when(landed(r, m, 2, 7)), t0 + 20 * kUs);  // after the short job only
    status_update(r, 0);
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->status_scoreboards; }), 0b010u);
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->status_wait; }), (1u << 1) | (CS_STATUS_WAIT_SB_SRC_WAIT << 16));
    EXPECT_EQ(time_when(landed(r, m, 3, 7)), t0 + 200 * kUs);
}

TEST_F(CsStream, CsFatalStopsOnlyItsStreamUntilStopAndStart) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    start(r, 0, {&q0, &q1});
    r.push(q0, {0x0A00000000000000ull, cs::move48(4, buf), cs::move32(6, 1), cs::store_multiple(6, 4, 1)});
    r.push(q1, {cs::move48(16, r.shader(MockShader::Run, 50 * kUs)), cs::run_compute(), cs::wait(1),
                cs::move48(4, buf + 8), cs::move32(6, 2), cs::store_multiple(6, 4, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal; }), u32{DRM_PANTHOR_EXCEPTION_CS_INSTR_INVALID});
    // panthor acks FATAL and rings; the stream stays stopped, its sibling carries on.
    r.ack_cs(0, 0, CS_FATAL);
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait(landed(r, m, 1, 2)));
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(m)[0]; }), 0u);
    EXPECT_EQ(r.locked([&] { return q0.out->extract; }), 0u);
    // STOP clears it (CS_ACTIVE drops); a START on a new ring runs again.
    r.locked([&] { r.cs_in(0, 0)->req = (r.cs_in(0, 0)->req & ~CS_STATE_MASK) | CS_STATE_STOP; });
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return (r.cs_out(0, 0)->ack & CS_STATE_MASK) == CS_STATE_STOP; }); }));
    EXPECT_EQ(r.locked([&] { return q0.out->active; }), 0u);
    CsfRig::Queue q2 = r.make_queue();
    r.push(q2, {cs::move48(4, buf + 16), cs::move32(6, 3), cs::store_multiple(6, 4, 1)});
    r.program_cs(0, 0, q2);
    r.ring_csg(0);
    ASSERT_TRUE(wait(landed(r, m, 2, 3)));
    EXPECT_EQ(r.locked([&] { return q2.out->active; }), 1u);
}

TEST_F(CsStream, RingSizeNotAPowerOfTwoIsCsConfigFault) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    CsfRig::Queue q = r.make_queue(0x3000);
    start(r, 0, {&q});
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal; }), u32{DRM_PANTHOR_EXCEPTION_CS_CONFIG_FAULT});
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->fatal_info; }), 0x3000u);
}

TEST_F(CsStream, TerminateDropsInFlightJobsAndTheSlotStartsClean) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q, {cs::move48(16, r.shader(MockShader::Write, 500 * kUs, buf, 1)), cs::run_compute(), cs::wait(1),
               cs::move48(4, buf + 8), cs::move32(6, 2), cs::store_multiple(6, 4, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(100 * kUs);
    EXPECT_EQ(cores_busy(r), 1u);
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    EXPECT_EQ(r.locked([&] { return r.csg_out(0)->ack & CSG_STATE_MASK; }), CSG_STATE_TERMINATE);
    EXPECT_EQ(r.locked([&] { return q.out->active; }), 0u);
    EXPECT_EQ(cores_busy(r), 0u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(m)[0] + reinterpret_cast<u64*>(m)[1]; }), 0u);
    // The slot takes a new group; nothing of the old one comes back.
    CsfRig::Queue q2 = r.make_queue();
    r.locked([&] { memset(r.cs_out(0, 0), 0, sizeof(panthor_fw_cs_output_iface)); });
    start(r, 0, {&q2});
    r.push(q2, {cs::move48(16, r.shader(MockShader::Write, 10 * kUs, buf + 16, 3)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait(landed(r, m, 2, 3)));
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(m)[0] + reinterpret_cast<u64*>(m)[1]; }), 0u);
}

}  // namespace
}  // namespace mock_hw::testing
