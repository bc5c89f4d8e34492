// The CSG progress timer for streams that never stop executing: a BRANCH-to-self or
// MOVE+BRANCH loop holds no shader core, yet its group gets PROGRESS_TIMER_EVENT once it has run
// for the GLB progress timeout without forward progress; not before, and not when jobs complete
// inside the loop. A long timeout is reached with the spinning stream throttled, so the host
// executes a bounded number of instructions. Also: the timer survives SUSPEND/RESUME, and
// CS_STATUS_CMD_PTR names the instruction a CS_FATAL was raised by.
#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

// GLB progress_timer (units of 1024 GPU cycles) -> ns at the default 1 GHz clock.
constexpr kshim::ktime_t timeout_ns(u32 progress_timer) {
    return static_cast<kshim::ktime_t>(progress_timer) * 1024;
}

class CsProgressTest : public CsTest {
protected:
    // Boots with `progress_timer`, starts group 0 with one queue, pushes `instrs` and rings its
    // doorbell; returns the virtual time of the doorbell.
    kshim::ktime_t run_stream(CsfRig& r, CsfRig::Queue& q, u32 progress_timer, std::initializer_list<u64> instrs) {
        EXPECT_TRUE(r.boot(progress_timer));
        start(r, 0, {&q});
        // The empty queue went idle at START: ack that like panthor.
        wait([&] { return r.csg_events(0) & CSG_IDLE; });
        r.ack_csg(0, CSG_EVT_MASK);
        r.d.w(JOB_INT_CLEAR, ~0u);
        r.push(q, instrs);
        const kshim::ktime_t t0 = kshim::ktime_get();
        r.d.w(CSF_DOORBELL(1), 1);
        return t0;
    }
    bool progress_event(CsfRig& r) { return r.csg_events(0) & CSG_PROGRESS_TIMER_EVENT; }
    u64 instructions(CsfRig& r) {
        return r.locked([&] { return r.gpu.engine().instructions_executed(); });
    }
};

TEST_F(CsProgressTest, BranchToSelfRaisesTheProgressTimerAfterTheTimeoutNotBefore) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    const kshim::ktime_t timeout = timeout_ns(100);  // 102.4 us
    const kshim::ktime_t t0 = run_stream(r, q, 100, {cs::branch(cs::ALWAYS, 0, -1)});

    advance(timeout - 5 * NSEC_PER_USEC);
    EXPECT_FALSE(progress_event(r));
    EXPECT_EQ(cores_busy(r), 0u) << "the loop holds no shader core";
    const u64 spun = instructions(r);
    EXPECT_GT(spun, 90u * 4096) << "it executed all along";
    EXPECT_FALSE(r.csg_events(0) & CSG_IDLE) << "a spinning group is not idle";

    const kshim::ktime_t at = time_when([&] { return progress_event(r); }, 10 * NSEC_PER_USEC);
    ASSERT_GE(at, 0) << "no PROGRESS_TIMER_EVENT";
    EXPECT_GE(at - t0, timeout);
    EXPECT_LE(at - t0, timeout + 2 * NSEC_PER_USEC);
    EXPECT_TRUE(r.d.r(JOB_INT_RAWSTAT) & JOB_INT_CSG_IF(0));
    // The stream still spins, pointing at its BRANCH, until the host terminates the group.
    status_update(r, 0);
    EXPECT_EQ(r.cs_out(0, 0)->status_cmd_ptr, q.ring_va);
    EXPECT_EQ(r.cs_out(0, 0)->status_blocked_reason, 0u);
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    EXPECT_EQ(q.out->active, 0u);
    const u64 after = instructions(r);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(instructions(r), after) << "a terminated group executes nothing";
}

TEST_F(CsProgressTest, MoveBranchLoopRaisesTheProgressTimerOncePerStall) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    const kshim::ktime_t timeout = timeout_ns(200);  // 204.8 us
    const kshim::ktime_t t0 =
        run_stream(r, q, 200, {cs::move48(2, 0x1234), cs::move32(4, 7), cs::branch(cs::ALWAYS, 0, -3)});

    advance(timeout - 3 * NSEC_PER_USEC);
    EXPECT_FALSE(progress_event(r));
    const kshim::ktime_t at = time_when([&] { return progress_event(r); }, 10 * NSEC_PER_USEC);
    ASSERT_GE(at, 0);
    EXPECT_GE(at - t0, timeout);
    EXPECT_LE(at - t0, timeout + 2 * NSEC_PER_USEC);
    // Acknowledged, the event is not raised again while the same stall goes on.
    r.ack_csg(0, CSG_EVT_MASK);
    advance(3 * timeout);
    EXPECT_FALSE(progress_event(r));
}

// A loop whose registers repeat at its branch, made of moves only, is at a fixed point: its
// slices are counted, not interpreted, and it stands exactly where interpreting would leave it.
TEST_F(CsProgressTest, AFixedPointLoopIsCountedNotInterpretedAndStopsWhereInterpretingWould) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    run_stream(r, q, 0, {cs::move48(2, 0x1234), cs::move32(4, 7), cs::branch(cs::ALWAYS, 0, -3)});
    advance(20 * NSEC_PER_USEC);
    const u64 ran = instructions(r);
    EXPECT_GE(ran, 19u * 4096) << "every slice counts its whole budget";
    EXPECT_EQ(ran % 4096, 0u);
    const u64 interpreted = r.locked([&] { return r.gpu.engine().instructions_interpreted(); });
    EXPECT_LT(interpreted, ran / 100) << "the fixed point was interpreted";
    status_update(r, 0);
    EXPECT_EQ(r.cs_out(0, 0)->status_cmd_ptr, q.ring_va + 8 * (ran % 3)) << "the loop stopped elsewhere";
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
}

// A loop whose registers change every iteration (a countdown) is interpreted to its end.
TEST_F(CsProgressTest, ACountdownLoopRunsEveryIteration) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    const kshim::ktime_t t0 = run_stream(
        r, q, 0, {cs::move32(2, 10000), cs::add_imm32(2, 2, -1), cs::branch(cs::NEQUAL, 2, -2), cs::move32(6, 1)});
    const kshim::ktime_t at = time_when([&] { return r.csg_events(0) & CSG_IDLE; }, NSEC_PER_MSEC);
    ASSERT_GE(at, 0) << "the loop never ended";
    EXPECT_EQ(instructions(r), 1u + 2u * 10000u + 1u);
    EXPECT_EQ(r.locked([&] { return r.gpu.engine().instructions_interpreted(); }), instructions(r));
    EXPECT_GE(at - t0, 4 * NSEC_PER_USEC) << "20002 instructions take five slices";
}

// The loop spins through whole slices (a 20000-iteration countdown), but each round issues a job
// that completes: forward progress, so no event however long it runs.
TEST_F(CsProgressTest, LoopThatCompletesJobsDoesNotTimeOut) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    const u64 sh = r.shader(MockShader::Run, 10 * NSEC_PER_USEC);
    run_stream(r, q, 100,
               {cs::move48(16, sh),
                cs::run_compute(),                // L0
                cs::move32(2, 20000),             //
                cs::add_imm32(2, 2, -1),          // L1
                cs::branch(cs::NEQUAL, 2, -2),    // -> L1
                cs::branch(cs::ALWAYS, 0, -5)});  // -> L0
    advance(20 * timeout_ns(100));
    EXPECT_FALSE(progress_event(r));
    const u64 jobs = r.locked([&] { return r.gpu.engine().jobs_completed(); });
    EXPECT_GT(jobs, 100u);
    EXPECT_GT(instructions(r), 1000u * 4096) << "the stream ran whole slices";
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
}

// A timeout far beyond cs_spin_after: the spinning stream is throttled after 1 ms, the event
// still comes at the timeout (within one throttled slice), and the host executed about 4k
// instructions per virtual millisecond after the first, instead of 4k per microsecond.
TEST_F(CsProgressTest, LongTimeoutIsReachedWithTheSpinThrottled) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    const GpuLatencies& lat = r.gpu.config().lat;
    const kshim::ktime_t timeout = timeout_ns(20000);  // 20.48 ms
    const kshim::ktime_t t0 = run_stream(r, q, 20000, {cs::move32(4, 1), cs::branch(cs::ALWAYS, 0, -2)});

    advance(timeout - lat.cs_spin_slice);
    EXPECT_FALSE(progress_event(r));
    const kshim::ktime_t at = time_when([&] { return progress_event(r); }, 3 * lat.cs_spin_slice);
    ASSERT_GE(at, 0);
    EXPECT_GE(at - t0, timeout);
    EXPECT_LE(at - t0, timeout + lat.cs_spin_slice);
    const u64 unthrottled = static_cast<u64>(timeout / lat.cs_slice) * lat.cs_slice_instrs;
    const u64 bound =
        static_cast<u64>(lat.cs_spin_after / lat.cs_slice + (timeout - lat.cs_spin_after) / lat.cs_spin_slice + 4) *
        lat.cs_slice_instrs;
    EXPECT_LE(instructions(r), bound) << "unthrottled it would be " << unthrottled;
    EXPECT_GE(instructions(r), u64{lat.cs_slice_instrs} * static_cast<u64>(lat.cs_spin_after / lat.cs_slice));
}

// A group rotated off its slot keeps its no-progress time in the suspend buffer: a spinning group
// the host suspends and resumes every 50 us (less than the timeout) still times out, after the
// time it actually ran.
TEST_F(CsProgressTest, NoProgressTimeSurvivesSuspendAndResume) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    const kshim::ktime_t timeout = timeout_ns(100);
    run_stream(r, q, 100, {cs::branch(cs::ALWAYS, 0, -1)});
    const u32 sb = static_cast<u32>(r.locked([&] { return r.csg_in(0)->suspend_buf; }));
    kshim::ktime_t running = 0;
    for (int i = 0; i < 6 && !progress_event(r); i++) {
        const kshim::ktime_t from = kshim::ktime_get();
        advance(50 * NSEC_PER_USEC);
        r.set_state(0, CSG_STATE_SUSPEND);
        ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
        running += kshim::ktime_get() - from;
        if (progress_event(r))
            break;
        resume(r, 0, {&q}, sb);
        ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    }
    EXPECT_TRUE(progress_event(r));
    EXPECT_GE(running, timeout);
    EXPECT_LE(running, 3 * timeout);
}

// CS_STATUS_CMD_PTR names the instruction a CS_FATAL was raised by (here a RUN_COMPUTE whose
// descriptor is not a shader: it retires with the fault, the stream would resume after it).
TEST_F(CsProgressTest, StatusCmdPtrNamesTheInstructionThatRaisedTheException) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    u8* junk;
    const u64 not_a_shader = r.gpu_alloc(64, &junk);
    run_stream(r, q, 0, {cs::move48(16, not_a_shader), cs::run_compute(), cs::move32(2, 1)});
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FAULT; }));
    EXPECT_EQ(r.cs_out(0, 0)->fault & 0xFF, u32{DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT});
    EXPECT_EQ(r.cs_out(0, 0)->status_cmd_ptr, q.ring_va + 8) << "the RUN_COMPUTE, not the MOVE32 after it";
    // Acknowledged: the stream goes on after the RUN and the pointer follows it.
    r.ack_cs(0, 0, CS_FAULT);
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait([&] { return q.out->extract == q.in->insert; }));
    status_update(r, 0);
    EXPECT_EQ(r.cs_out(0, 0)->status_cmd_ptr, q.ring_va + 24);
}

}  // namespace
}  // namespace mock_hw::testing
