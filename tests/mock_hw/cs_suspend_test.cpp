// SUSPEND preempts a group's jobs at a task boundary and RESUME runs them for what they had left;
// the suspend buffer's checks; TERMINATE discards saved jobs; a hung job still blocks a SUSPEND.
#include <optional>

#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

// How a test damages the suspend buffer between SUSPEND and RESUME.
enum class Damage {
    None,
    FaultPlan,
    Zeroed,
    JobCountPastLimit,
    ScoreboardCountMismatch,
    JobShaderBroken,
    CallDepthPastLimit
};

struct TwoJobRun {
    std::vector<u64> mem;                 // buf[0..3] at the end
    kshim::ktime_t t0 = 0;                // the doorbell
    kshim::ktime_t a_at = -1, b_at = -1;  // when each job's write landed
    kshim::ktime_t requested_at = -1;     // SUSPEND written
    kshim::ktime_t preempted_at = -1;     // SUSPEND processed (its ack minus csg_suspend)
    kshim::ktime_t resumed_at = -1;       // RESUME acked
    SavedStream saved{};                  // stream 0's record as the SUSPEND wrote it
    u32 cores_while_suspended = ~0u;
    u64 jobs_done = 0;  // jobs the engine completed after the doorbell
    u32 fatal = 0;
    u64 fatal_info = 0;
    u32 suspend_buf = 0;
};

class CsSuspend : public CsTest {
protected:
    // Job A (500 us, SB 0) and job B (300 us, SB 1) write buf[0] and buf[1]; a WAIT on both, then
    // a store of 7 at buf[2]. With suspend_at, the group is suspended that long after the doorbell,
    // kept suspended for 1 ms, then resumed (after `damage`).
    TwoJobRun run(std::optional<kshim::ktime_t> suspend_at, Damage damage = Damage::None) {
        TwoJobRun out;
        CsfRig r(rt());
        EXPECT_TRUE(r.boot());
        if (damage == Damage::FaultPlan)
            r.gpu.faults().add(FaultSpec{.kind = FaultKind::CorruptSuspendBuffer, .trigger = FaultTrigger::always()});
        u8* m;
        const u64 buf = r.gpu_alloc(64, &m);
        u64* mem = reinterpret_cast<u64*>(m);
        u8* sbh;
        out.suspend_buf = r.mcu_alloc(r.locked([&] { return r.csg_ctrl(0)->suspend_size; }), &sbh);
        CsfRig::Queue q = r.make_queue();
        start(r, 0, {&q}, 15, out.suspend_buf);
        r.push(q, {cs::set_sb_entry(0, 0), cs::move48(16, r.shader(MockShader::Write, 500 * kUs, buf, 0x11)),
                   cs::run_compute(), cs::set_sb_entry(1, 0),
                   cs::move48(16, r.shader(MockShader::Write, 300 * kUs, buf + 8, 0x22)), cs::run_compute(),
                   cs::wait(0b11), cs::move48(4, buf + 16), cs::move32(6, 7), cs::store_multiple(6, 4, 1)});
        const u64 done_before = r.gpu.engine().jobs_completed();
        out.t0 = kshim::ktime_get();
        r.d.w(CSF_DOORBELL(1), 1);
        auto a_done = [&] { return r.locked([&] { return mem[0] == 0x11; }); };
        auto b_done = [&] { return r.locked([&] { return mem[1] == 0x22; }); };
        if (suspend_at) {
            advance(*suspend_at);
            EXPECT_EQ(cores_busy(r), 2u);
            out.requested_at = kshim::ktime_get();
            r.set_state(0, CSG_STATE_SUSPEND);
            const kshim::ktime_t acked = time_when([&] { return r.state_acked(0); });
            EXPECT_EQ(r.locked([&] { return r.csg_out(0)->ack & CSG_STATE_MASK; }), CSG_STATE_SUSPEND);
            out.preempted_at = acked - r.gpu.config().lat.csg_suspend;
            out.cores_while_suspended = cores_busy(r);
            advance(NSEC_PER_MSEC);
            EXPECT_FALSE(a_done());  // nothing runs while suspended
            EXPECT_FALSE(b_done());
            r.locked([&] {
                memcpy(&out.saved, sbh, sizeof(out.saved));
                damage_record(sbh, damage);
            });
            resume(r, 0, {&q}, out.suspend_buf);
            out.resumed_at = time_when([&] { return r.state_acked(0); });
            EXPECT_EQ(r.locked([&] { return r.csg_out(0)->ack & CSG_STATE_MASK; }), CSG_STATE_RESUME);
        }
        if (damage != Damage::None) {
            EXPECT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
            out.fatal = r.locked([&] { return r.cs_out(0, 0)->fatal; });
            out.fatal_info = r.locked([&] { return r.cs_out(0, 0)->fatal_info; });
            advance(2 * NSEC_PER_MSEC);  // the saved jobs are gone: their writes never land
            EXPECT_FALSE(a_done());
            EXPECT_FALSE(b_done());
            EXPECT_EQ(cores_busy(r), 0u);
        } else {
            out.b_at = time_when(b_done);
            out.a_at = time_when(a_done);
            EXPECT_TRUE(wait([&] { return r.locked([&] { return mem[2] == 7; }); }));
            out.mem.assign(mem, mem + 4);
            // Each write lands exactly once: clear them, run on, they stay clear.
            r.locked([&] { mem[0] = mem[1] = 0; });
            advance(2 * NSEC_PER_MSEC);
            EXPECT_EQ(r.locked([&] { return mem[0] + mem[1]; }), 0u);
        }
        out.jobs_done = r.gpu.engine().jobs_completed() - done_before;
        return out;
    }

    void damage_record(u8* sbh, Damage damage) {
        auto* sv = reinterpret_cast<SavedStream*>(sbh);
        switch (damage) {
        case Damage::None:
        case Damage::FaultPlan: return;
        case Damage::Zeroed: memset(sbh, 0, kSaveStride); return;
        // The forged records carry a valid checksum, so only the consistency checks catch them.
        case Damage::JobCountPastLimit: sv->njobs = kMaxJobsPerStream + 1; break;
        case Damage::ScoreboardCountMismatch: sv->sb[1] = 2; break;
        case Damage::JobShaderBroken: sv->jobs[0].shader.kind = 77; break;
        case Damage::CallDepthPastLimit: sv->depth = cs::kCallStackDepth; break;
        }
        sv->checksum = saved_stream_checksum(*sv);
    }
};

TEST_F(CsSuspend, PreemptedJobsFinishLaterByExactlyTheTimeSpentSuspended) {
    const TwoJobRun plain = run(std::nullopt);
    EXPECT_EQ(plain.b_at, plain.t0 + 300 * kUs);
    EXPECT_EQ(plain.a_at, plain.t0 + 500 * kUs);

    const TwoJobRun s = run(200 * kUs);
    // The SUSPEND took both jobs off their cores as soon as the slot saw it (doorbell 0 -> GLB ->
    // CSG scan), and acked csg_suspend later...
    const GpuLatencies lat;
    EXPECT_EQ(s.preempted_at, s.requested_at + lat.glb_request + lat.csg_request);
    EXPECT_EQ(s.cores_while_suspended, 0u);
    const kshim::ktime_t suspended_for = s.resumed_at - s.preempted_at;
    EXPECT_GT(suspended_for, NSEC_PER_MSEC);
    // ...and each ran, after the RESUME, for exactly what it had left.
    EXPECT_EQ(s.b_at, s.t0 + 300 * kUs + suspended_for);
    EXPECT_EQ(s.a_at, s.t0 + 500 * kUs + suspended_for);
    EXPECT_EQ(s.mem, plain.mem);
    EXPECT_EQ(s.mem[2], 7u);  // the WAIT released only once both scoreboard entries drained
    EXPECT_EQ(s.jobs_done, 2u);
    EXPECT_EQ(plain.jobs_done, 2u);
}

TEST_F(CsSuspend, SuspendBufferHoldsTheJobsRemainingTimeAndScoreboards) {
    const TwoJobRun s = run(200 * kUs);
    const SavedStream& sv = s.saved;
    EXPECT_EQ(sv.magic, kSaveMagic);
    EXPECT_EQ(sv.checksum, saved_stream_checksum(sv));
    ASSERT_EQ(sv.njobs, 2u);
    EXPECT_EQ(sv.sb[0], 1u);
    EXPECT_EQ(sv.sb[1], 1u);
    // Issue order; each with what it had left at the preemption and its write still to do.
    const kshim::ktime_t ran = s.preempted_at - s.t0;
    EXPECT_EQ(sv.jobs[0].sb_slot, 0u);
    EXPECT_EQ(sv.jobs[0].shader.duration_ns, static_cast<u64>(500 * kUs - ran));
    EXPECT_EQ(sv.jobs[0].shader.value, 0x11u);
    EXPECT_EQ(sv.jobs[1].sb_slot, 1u);
    EXPECT_EQ(sv.jobs[1].shader.duration_ns, static_cast<u64>(300 * kUs - ran));
    EXPECT_EQ(sv.jobs[1].shader.kind, u32{MockShader::Write});
}

TEST_F(CsSuspend, ResumedStreamReportsItsScoreboardsUntilTheJobsFinish) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    const u32 sb = r.mcu_alloc(r.locked([&] { return r.csg_ctrl(0)->suspend_size; }));
    start(r, 0, {&q}, 15, sb);
    r.push(q,
           {cs::set_sb_entry(2, 0), cs::move48(16, r.shader(MockShader::Write, 400 * kUs, buf, 1)), cs::run_compute(),
            cs::wait(1u << 2), cs::move48(4, buf + 8), cs::move32(6, 9), cs::store_multiple(6, 4, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(100 * kUs);
    r.set_state(0, CSG_STATE_SUSPEND);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    resume(r, 0, {&q}, sb);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    status_update(r, 0);
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->status_scoreboards; }), 1u << 2);
    EXPECT_EQ(r.locked([&] { return r.cs_out(0, 0)->status_blocked_reason; }), u32{CS_STATUS_BLOCKED_REASON_SB_WAIT});
    EXPECT_EQ(cores_busy(r), 1u);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return reinterpret_cast<u64*>(m)[1] == 9; }); }));
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(m)[0]; }), 1u);
}

TEST_F(CsSuspend, PreemptedGroupsCoreGoesToAnotherGroupAtOnce) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot(0x271000, /*core_mask=*/1));
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    auto* mem = reinterpret_cast<u64*>(m);
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    const u32 sb = r.mcu_alloc(r.locked([&] { return r.csg_ctrl(0)->suspend_size; }));
    start(r, 0, {&q0}, 15, sb);
    start(r, 1, {&q1});
    r.push(q0, {cs::move48(16, r.shader(MockShader::Write, 1000 * kUs, buf, 1)), cs::run_compute()});
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.d.w(CSF_DOORBELL(1), 1);
    advance(10 * kUs);
    r.push(q1, {cs::move48(16, r.shader(MockShader::Write, 50 * kUs, buf + 8, 2)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(2), 1);
    advance(90 * kUs);
    EXPECT_EQ(r.locked([&] { return mem[1]; }), 0u);  // group 1 waits for the only core
    const kshim::ktime_t requested_at = kshim::ktime_get();
    r.set_state(0, CSG_STATE_SUSPEND);
    const kshim::ktime_t preempted_at = time_when([&] { return r.state_acked(0); }) - r.gpu.config().lat.csg_suspend;
    // The ack came csg_suspend after the request reached the slot (doorbell 0 -> GLB -> CSG scan),
    // not after group 0's job would have ended.
    const GpuLatencies& lat = r.gpu.config().lat;
    EXPECT_EQ(preempted_at, requested_at + lat.glb_request + lat.csg_request);
    // Group 1's job took the core when group 0's was preempted, not 1 ms later.
    EXPECT_EQ(time_when([&] { return r.locked([&] { return mem[1] == 2; }); }), preempted_at + 50 * kUs);
    resume(r, 0, {&q0}, sb);
    const kshim::ktime_t resumed_at = time_when([&] { return r.state_acked(0); });
    EXPECT_EQ(time_when([&] { return r.locked([&] { return mem[0] == 1; }); }),
              t0 + 1000 * kUs + (resumed_at - preempted_at));
}

TEST_F(CsSuspend, HungJobKeepsTheSuspendFromCompletingWhileOthersArePreempted) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q, {cs::move48(16, r.shader(MockShader::Hang, 0)), cs::run_compute(),
               cs::move48(16, r.shader(MockShader::Run, NSEC_PER_MSEC)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(50 * kUs);
    EXPECT_EQ(cores_busy(r), 2u);
    r.set_state(0, CSG_STATE_SUSPEND);
    advance(100 * kUs);
    // The duration job was preempted; the hung workgroup has no task boundary to stop at.
    EXPECT_EQ(cores_busy(r), 1u);
    advance(100 * NSEC_PER_MSEC);
    EXPECT_FALSE(r.state_acked(0));
    // panthor's answer to a suspend timeout: TERMINATE, which does complete.
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    EXPECT_EQ(r.locked([&] { return r.csg_out(0)->ack & CSG_STATE_MASK; }), CSG_STATE_TERMINATE);
    EXPECT_EQ(cores_busy(r), 0u);
}

TEST_F(CsSuspend, TerminateOfASuspendedGroupDiscardsItsSavedJobs) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    u8* sbh;
    const u32 sb = r.mcu_alloc(r.locked([&] { return r.csg_ctrl(0)->suspend_size; }), &sbh);
    start(r, 0, {&q}, 15, sb);
    r.push(q, {cs::move48(16, r.shader(MockShader::Write, 300 * kUs, buf, 1)), cs::run_compute()});
    const u64 done_before = r.gpu.engine().jobs_completed();
    r.d.w(CSF_DOORBELL(1), 1);
    advance(100 * kUs);
    r.set_state(0, CSG_STATE_SUSPEND);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    ASSERT_EQ(r.locked([&] { return reinterpret_cast<SavedStream*>(sbh)->njobs; }), 1u);
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    EXPECT_EQ(r.locked([&] { return r.csg_out(0)->ack & CSG_STATE_MASK; }), CSG_STATE_TERMINATE);
    // The slot starts afresh on the same buffer: the saved job does not come back.
    CsfRig::Queue q2 = r.make_queue();
    r.locked([&] { memset(r.cs_out(0, 0), 0, sizeof(panthor_fw_cs_output_iface)); });
    start(r, 0, {&q2}, 15, sb);
    advance(2 * NSEC_PER_MSEC);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(m)[0]; }), 0u);
    EXPECT_EQ(r.gpu.engine().jobs_completed(), done_before);
    EXPECT_EQ(cores_busy(r), 0u);
    EXPECT_TRUE(r.locked([&] { return r.csg_out(0)->status_state & CSG_STATUS_STATE_IS_IDLE; }));
}

TEST_F(CsSuspend, TerminateDuringAStuckSuspendDiscardsThePreemptedJobs) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    r.gpu.faults().add(FaultSpec{.kind = FaultKind::SuspendNeverCompletes, .trigger = FaultTrigger::always()});
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q});
    r.push(q, {cs::move48(16, r.shader(MockShader::Write, 300 * kUs, buf, 1)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(100 * kUs);
    r.set_state(0, CSG_STATE_SUSPEND);
    advance(NSEC_PER_MSEC);
    EXPECT_FALSE(r.state_acked(0));
    EXPECT_EQ(cores_busy(r), 0u);  // preempted all the same
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    CsfRig::Queue q2 = r.make_queue();
    r.locked([&] { memset(r.cs_out(0, 0), 0, sizeof(panthor_fw_cs_output_iface)); });
    start(r, 0, {&q2});
    advance(2 * NSEC_PER_MSEC);
    EXPECT_EQ(r.locked([&] { return reinterpret_cast<u64*>(m)[0]; }), 0u);
}

class CsSuspendDamage : public CsSuspend, public ::testing::WithParamInterface<Damage> {};

TEST_P(CsSuspendDamage, ResumeFromADamagedBufferIsFwInternalErrorAndDropsTheSavedJobs) {
    const TwoJobRun s = run(200 * kUs, GetParam());
    EXPECT_EQ(s.fatal, u32{DRM_PANTHOR_EXCEPTION_CSF_FW_INTERNAL_ERROR});
    EXPECT_EQ(s.fatal_info, s.suspend_buf);
    EXPECT_EQ(s.jobs_done, 0u);
}

std::string damage_name(const ::testing::TestParamInfo<Damage>& i) {
    static const char* names[] = {"None",
                                  "FaultPlanCorruption",
                                  "Zeroed",
                                  "JobCountPastLimit",
                                  "ScoreboardCountMismatch",
                                  "JobShaderBroken",
                                  "CallDepthPastLimit"};
    return names[static_cast<int>(i.param)];
}

INSTANTIATE_TEST_SUITE_P(Buffers, CsSuspendDamage,
                         ::testing::Values(Damage::FaultPlan, Damage::Zeroed, Damage::JobCountPastLimit,
                                           Damage::ScoreboardCountMismatch, Damage::JobShaderBroken,
                                           Damage::CallDepthPastLimit),
                         damage_name);

// The work registers are the stream's context as the firmware keeps it: a value written by one
// ring-buffer job is there for the next, and a SUSPEND/RESUME in between keeps it (Mesa's panvk
// writes its subqueue context pointer into r90-r91 once, at device creation).
TEST_F(CsSuspend, WorkRegistersPersistAcrossJobsAndSuspendResume) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    u8* sbh;
    const u32 suspend_buf = r.mcu_alloc(r.locked([&] { return r.csg_ctrl(0)->suspend_size; }), &sbh);
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q}, 15, suspend_buf);
    // Job 1 sets r90-r91 and r0-r1 and ends.
    r.push(q, {cs::move48(90, 0x123456789abcull), cs::move48(0, 0xfeedull)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return q.out->extract == q.in->insert; }); }));
    r.set_state(0, CSG_STATE_SUSPEND);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    advance(NSEC_PER_MSEC);
    resume(r, 0, {&q}, suspend_buf);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    // Job 2 stores them without writing them first.
    r.push(q, {cs::move48(4, buf), cs::store_multiple(90, 4, 0b11), cs::store_multiple(0, 4, 0b11, 8)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return q.out->extract == q.in->insert; }); }));
    const u64* mem = reinterpret_cast<const u64*>(m);
    EXPECT_EQ(r.locked([&] { return mem[0]; }), 0x123456789abcull);
    EXPECT_EQ(r.locked([&] { return mem[1]; }), 0xfeedull);
}

}  // namespace
}  // namespace mock_hw::testing
