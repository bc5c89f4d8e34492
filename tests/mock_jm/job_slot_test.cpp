// JOB_CONTROL of the mock Mali-G52 at register level, as panfrost relies on it: every JS_COMMAND in
// every slot state on each slot, NEXT arming/promotion/NOP, the hold of NEXT behind an
// unacknowledged FAIL, soft and hard stops (with the _0/_1 forms), JS_STATUS, the JOB_INT bits and
// JOB_INT_JS_STATE, an endless chain (throttled, ended by a stop or a reset), what is visible when
// the interrupt is seen, and the FaultPlan kinds SoftStopIgnored, JobIrqLost and JobHang.
#include <atomic>

#include "mock_hw/fault_plan.h"
#include "tests/mock_jm/jm_test.h"

namespace mock_jm::testing {
namespace {

using mock_hw::FaultKind;
using mock_hw::FaultSpec;

constexpr u64 kUnmappedVa = 0x70000000;

class JobSlot : public JmTest {
protected:
    // A FRAGMENT job of `tiles` tiles: with the default latencies it holds the slot for
    // shader_job_base + tiles * tile (4 us for 4 tiles) and touches no memory but its header.
    u64 frag_job(u32 index, u64 prev = 0, u32 tiles = 4) {
        FragmentPayload p{};
        p.bound_min = fragment_bound(0, 0);
        p.bound_max = fragment_bound(tiles - 1, 0);
        return arena().job(kJobFragment, index, &p, sizeof(p), prev);
    }
    ktime_t frag_time(u32 tiles = 4) {
        const JmLatencies& l = gpu().jm_config().jm_lat;
        return l.shader_job_base + tiles * l.tile;
    }
    std::vector<u64> frag_chain(u32 n) {
        std::vector<u64> jobs;
        for (u32 i = 0; i < n; i++)
            jobs.push_back(frag_job(i + 1, i ? jobs.back() : 0));
        return jobs;
    }
    // IGT's endless chain: two WRITE_VALUE jobs linked in a ring, each zeroing the other's
    // exception status so it may run again.
    u64 loop_chain(u64* second = nullptr) {
        const u64 a = arena().write_value(0, kWriteValueImmediate32, 0, 1);
        const u64 b = arena().write_value(a, kWriteValueImmediate32, 0, 1, a);
        arena().at<WriteValuePayload>(a + kJobPayloadOffset)->address = b;
        arena().header(b)->next = a;
        if (second)
            *second = b;
        return a;
    }
    SlotStats stats(u32 js) {
        kshim::SpinGuard g(gpu().lock());
        return gpu().jobs().stats_locked(js);
    }
    static ktime_t now() { return kshim::ktime_get(); }
};

// ---- Every JS_COMMAND in every slot state, on each slot ----

enum class State { Idle, Running, Stalled, AfterFail };
const char* state_name(State s) {
    switch (s) {
    case State::Idle: return "Idle";
    case State::Running: return "Running";
    case State::Stalled: return "Stalled";
    case State::AfterFail: return "AfterFail";
    }
    return "?";
}

TEST_F(JobSlot, EveryCommandInEveryStateOnEverySlot) {
    for (u32 js = 0; js < 3; js++) {
        for (bool flag : {false, true}) {
            for (State st : {State::Idle, State::Running, State::Stalled, State::AfterFail}) {
                for (u32 cmd = 0; cmd <= 8; cmd++) {
                    SCOPED_TRACE(::testing::Message()
                                 << "JS" << js << " flag " << flag << " " << state_name(st) << " cmd " << cmd);
                    make_gpu();
                    bring_up();
                    u64 head = 0;
                    switch (st) {
                    case State::Idle: break;
                    case State::Running:
                        head = loop_chain();
                        submit(js, head, flag);
                        break;
                    case State::Stalled:
                        head = arena().write_value(kUnmappedVa, kWriteValueImmediate32, 1, 1);
                        submit(js, head, flag);
                        break;
                    case State::AfterFail:
                        head = loop_chain();
                        submit(js, head, flag);
                        advance(10 * NSEC_PER_USEC);
                        d().w(JS_COMMAND(js), JS_COMMAND_HARD_STOP);
                        ASSERT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_TERMINATED);
                        break;
                    }
                    advance(10 * NSEC_PER_USEC);
                    if (st == State::Stalled) {
                        ASSERT_TRUE(d().r(MMU_INT_RAWSTAT) & (1u << kAs));
                    }
                    const u32 status0 = d().r(JS_STATUS(js));
                    const u32 raw0 = d().r(JOB_INT_RAWSTAT);
                    const u32 state0 = d().r(JOB_INT_JS_STATE);
                    const u64 tail0 = d().r64(JS_TAIL_LO(js));

                    d().w(JS_COMMAND(js), cmd);
                    advance(100 * NSEC_PER_USEC);

                    const bool stop = JS_COMMAND_IS_STOP(cmd);
                    const bool matches = !JS_COMMAND_IS_CONDITIONAL(cmd) || JS_COMMAND_REQUIRED_FLAG(cmd) == flag;
                    const bool hard = JS_COMMAND_IS_HARD_STOP(cmd);
                    // A soft stop waits for the stalled job to end; a hard stop does not.
                    const bool acts = stop && matches && (st == State::Running || (st == State::Stalled && hard));
                    if (acts) {
                        EXPECT_EQ(d().r(JS_STATUS(js)),
                                  hard ? DRM_PANFROST_EXCEPTION_TERMINATED : DRM_PANFROST_EXCEPTION_STOPPED);
                        EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_ERR(js));
                        EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
                        if (st == State::Stalled) {
                            EXPECT_EQ(d().r64(JS_TAIL_LO(js)), head);
                        }
                    } else {
                        EXPECT_EQ(d().r(JS_STATUS(js)), status0);
                        EXPECT_EQ(d().r(JOB_INT_RAWSTAT), raw0);
                        EXPECT_EQ(d().r(JOB_INT_JS_STATE), state0);
                        EXPECT_EQ(d().r64(JS_TAIL_LO(js)), tail0);
                        if (st == State::Running || st == State::Stalled) {
                            EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_ACTIVE);
                            EXPECT_EQ(d().r(JOB_INT_JS_STATE), 1u << js);
                        }
                    }
                    if (::testing::Test::HasFailure())
                        return;
                }
            }
        }
    }
}

// ---- NEXT: arming, promotion, NOP ----

TEST_F(JobSlot, NextIsPromotedAtOnceOnAnIdleSlot) {
    bring_up();
    for (u32 js = 0; js < 3; js++) {
        SCOPED_TRACE(js);
        const u64 target = arena().alloc(8);
        const u64 j = arena().write_value(target, kWriteValueImmediate32, 0xA0 + js, 1);
        const u32 cfg = jm_js_config(kAs, js == 1);
        jm_submit(d(), js, j, cfg, 0x1, 0);
        // Promoted in the START write itself: the current set holds the NEXT values.
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), 0u);
        EXPECT_EQ(d().r64(JS_HEAD_LO(js)), j);
        EXPECT_EQ(d().r(JS_CONFIG(js)), cfg);
        EXPECT_EQ(d().r64(JS_AFFINITY_LO(js)), 1u);
        EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_ACTIVE);
        EXPECT_EQ(d().r(JOB_INT_JS_STATE), 1u << js);
        EXPECT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_DONE);
        EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_DONE(js));
        EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
        EXPECT_EQ(*arena().at<u32>(target), 0xA0 + js);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
    }
}

TEST_F(JobSlot, NextReadsOneWhileArmedAndNopDisarmsKeepingTheNextSet) {
    bring_up();
    for (u32 js = 0; js < 3; js++) {
        SCOPED_TRACE(js);
        submit(js, loop_chain());
        advance(5 * NSEC_PER_USEC);
        const u64 target = arena().alloc(8);
        const u64 j = arena().write_value(target, kWriteValueImmediate32, 0x55, 1);
        const u32 cfg = jm_js_config(kAs, true);
        jm_submit(d(), js, j, cfg, 0x1, 0x77);
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), JS_COMMAND_START);
        EXPECT_EQ(d().r(JOB_INT_JS_STATE), (0x10001u << js));
        // NOP disarms; the NEXT registers keep their values.
        d().w(JS_COMMAND_NEXT(js), JS_COMMAND_NOP);
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), 0u);
        EXPECT_EQ(d().r(JOB_INT_JS_STATE), 1u << js);
        EXPECT_EQ(d().r64(JS_HEAD_NEXT_LO(js)), j);
        EXPECT_EQ(d().r64(JS_AFFINITY_NEXT_LO(js)), 1u);
        EXPECT_EQ(d().r(JS_CONFIG_NEXT(js)), cfg);
        EXPECT_EQ(d().r(JS_FLUSH_ID_NEXT(js)), 0x77u);
        // Stop the loop (panfrost's order: NOP, then clear the FAIL), then START alone re-arms.
        d().w(JS_COMMAND(js), JS_COMMAND_SOFT_STOP);
        EXPECT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_STOPPED);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
        advance(NSEC_PER_MSEC);
        EXPECT_EQ(*arena().at<u32>(target), 0u);  // disarmed: never ran
        d().w(JS_COMMAND_NEXT(js), JS_COMMAND_START);
        EXPECT_EQ(d().r64(JS_HEAD_LO(js)), j);
        EXPECT_EQ(d().r(JS_CONFIG(js)), cfg);
        EXPECT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_DONE);
        EXPECT_EQ(*arena().at<u32>(target), 0x55u);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
    }
}

TEST_F(JobSlot, NextArmedBehindARunningChainIsPromotedRightAfterIt) {
    bring_up();
    for (u32 js = 0; js < 3; js++) {
        SCOPED_TRACE(js);
        const std::vector<u64> first = frag_chain(3);
        const u64 target = arena().alloc(8);
        const u64 second = arena().write_value(target, kWriteValueImmediate32, 0xBEEF, 1);
        const ktime_t t0 = now();
        submit(js, first[0]);
        submit(js, second);
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), JS_COMMAND_START);
        EXPECT_EQ(d().r64(JS_HEAD_LO(js)), first[0]);
        // At the instant the first chain's DONE is raised the second is already current.
        ASSERT_TRUE(wait([&] { return d().r(JOB_INT_RAWSTAT) & JOB_INT_MASK_DONE(js); }));
        EXPECT_EQ(now() - t0, 3 * frag_time());
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), 0u);
        EXPECT_EQ(d().r64(JS_HEAD_LO(js)), second);
        EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_ACTIVE);
        EXPECT_EQ(d().r(JOB_INT_JS_STATE), 1u << js);
        // The second runs to its end without software touching the slot; DONE stays one level.
        ASSERT_TRUE(wait([&] { return d().r(JOB_INT_JS_STATE) == 0; }));
        EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_DONE);
        EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_DONE(js));
        EXPECT_EQ(d().r64(JS_TAIL_LO(js)), second);
        EXPECT_EQ(*arena().at<u32>(target), 0xBEEFu);
        for (u64 j : first)
            EXPECT_EQ(arena().header(j)->exception_status, kJobStatusDone);
        EXPECT_EQ(stats(js).chains_done, 2u);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
    }
}

TEST_F(JobSlot, NoPromotionWhileAFailIsUnacknowledged) {
    bring_up();
    for (u32 js = 0; js < 3; js++) {
        SCOPED_TRACE(js);
        submit(js, loop_chain());
        const u64 target = arena().alloc(8);
        const u64 next = arena().write_value(target, kWriteValueImmediate32, 0x42, 1);
        submit(js, next);
        advance(5 * NSEC_PER_USEC);
        d().w(JS_COMMAND(js), JS_COMMAND_SOFT_STOP);
        EXPECT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_STOPPED);
        advance(10 * NSEC_PER_MSEC);
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), JS_COMMAND_START);
        EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0x10000u << js);
        EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_STOPPED);
        EXPECT_EQ(*arena().at<u32>(target), 0u);
        // Clearing the DONE bit (not set) or another slot's FAIL releases nothing.
        d().w(JOB_INT_CLEAR, JOB_INT_MASK_DONE(js) | JOB_INT_MASK_ERR((js + 1) % 3));
        advance(NSEC_PER_MSEC);
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), JS_COMMAND_START);
        EXPECT_EQ(*arena().at<u32>(target), 0u);
        // Clearing the FAIL bit promotes in the same write.
        d().w(JOB_INT_CLEAR, JOB_INT_MASK_ERR(js));
        EXPECT_EQ(d().r(JS_COMMAND_NEXT(js)), 0u);
        EXPECT_EQ(d().r64(JS_HEAD_LO(js)), next);
        EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_ACTIVE);
        EXPECT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_DONE);
        EXPECT_EQ(*arena().at<u32>(target), 0x42u);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
    }
}

// ---- Stops ----

TEST_F(JobSlot, SoftStopEndsAtTheJobBoundaryAndTheChainResumesFromTail) {
    bring_up();
    for (u32 js = 0; js < 3; js++) {
        SCOPED_TRACE(js);
        const std::vector<u64> jobs = frag_chain(5);
        const ktime_t t0 = now();
        submit(js, jobs[0]);
        advance(frag_time() + frag_time() / 2);  // inside job 2
        EXPECT_EQ(d().r64(JS_HEAD_LO(js)), jobs[1]);
        d().w(JS_COMMAND(js), JS_COMMAND_SOFT_STOP);
        EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_ACTIVE);  // job 2 finishes first
        EXPECT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_STOPPED);
        EXPECT_EQ(now() - t0, 2 * frag_time());
        EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_ERR(js));
        EXPECT_EQ(d().r64(JS_TAIL_LO(js)), jobs[2]);
        EXPECT_EQ(arena().header(jobs[0])->exception_status, kJobStatusDone);
        EXPECT_EQ(arena().header(jobs[1])->exception_status, kJobStatusDone);
        for (size_t i = 2; i < jobs.size(); i++)
            EXPECT_EQ(arena().header(jobs[i])->exception_status, 0u) << i;
        EXPECT_EQ(stats(js).jobs_completed, 2u);
        // Resubmitted from JS_TAIL, the rest runs (and only the rest).
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
        EXPECT_EQ(run_chain(js, d().r64(JS_TAIL_LO(js))), DRM_PANFROST_EXCEPTION_DONE);
        for (u64 j : jobs)
            EXPECT_EQ(arena().header(j)->exception_status, kJobStatusDone);
        EXPECT_EQ(d().r64(JS_TAIL_LO(js)), jobs.back());
        EXPECT_EQ(stats(js).jobs_completed, 5u);
    }
}

TEST_F(JobSlot, HardStopEndsInsideTheJob) {
    bring_up();
    const ktime_t lat = gpu().jm_config().jm_lat.hard_stop;
    for (u32 js = 0; js < 3; js++) {
        SCOPED_TRACE(js);
        const std::vector<u64> jobs = frag_chain(3);
        submit(js, jobs[0]);
        advance(frag_time() + frag_time() / 4);
        const ktime_t t = now();
        d().w(JS_COMMAND(js), JS_COMMAND_HARD_STOP);
        EXPECT_EQ(wait_slot(js), DRM_PANFROST_EXCEPTION_TERMINATED);
        EXPECT_EQ(now() - t, lat);
        EXPECT_LT(lat, frag_time() / 2);  // job 2 could not have ended
        EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_ERR(js));
        EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
        EXPECT_EQ(d().r64(JS_TAIL_LO(js)), jobs[1]);
        EXPECT_EQ(arena().header(jobs[0])->exception_status, kJobStatusDone);
        EXPECT_EQ(arena().header(jobs[1])->exception_status, 0u);
        EXPECT_EQ(stats(js).jobs_completed, 1u);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
    }
}

TEST_F(JobSlot, ConditionalStopsHonourTheChainFlag) {
    bring_up();
    const struct {
        u32 cmd;
        bool flag;
        bool acts;
        u32 status;
    } cases[] = {
        {JS_COMMAND_SOFT_STOP_0, false, true, DRM_PANFROST_EXCEPTION_STOPPED},
        {JS_COMMAND_SOFT_STOP_0, true, false, 0},
        {JS_COMMAND_SOFT_STOP_1, true, true, DRM_PANFROST_EXCEPTION_STOPPED},
        {JS_COMMAND_SOFT_STOP_1, false, false, 0},
        {JS_COMMAND_HARD_STOP_0, false, true, DRM_PANFROST_EXCEPTION_TERMINATED},
        {JS_COMMAND_HARD_STOP_0, true, false, 0},
        {JS_COMMAND_HARD_STOP_1, true, true, DRM_PANFROST_EXCEPTION_TERMINATED},
        {JS_COMMAND_HARD_STOP_1, false, false, 0},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(::testing::Message() << "cmd " << c.cmd << " flag " << c.flag);
        submit(0, loop_chain(), c.flag);
        advance(5 * NSEC_PER_USEC);
        EXPECT_EQ(!!(d().r(JS_CONFIG(0)) & JS_CONFIG_JOB_CHAIN_FLAG), c.flag);
        d().w(JS_COMMAND(0), c.cmd);
        advance(NSEC_PER_MSEC);
        if (c.acts) {
            EXPECT_EQ(d().r(JS_STATUS(0)), c.status);
            EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_ERR(0));
        } else {
            EXPECT_EQ(d().r(JS_STATUS(0)), DRM_PANFROST_EXCEPTION_ACTIVE);
            EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
            d().w(JS_COMMAND(0), JS_COMMAND_HARD_STOP);
            EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_TERMINATED);
        }
        d().w(JOB_INT_CLEAR, ~0u);
    }
}

// panfrost resubmits a STOPPED chain from JS_TAIL; in a Mesa chain the jobs after the stop point
// depend on jobs before it (Dependency 1 = the previous index), which must count as done.
TEST_F(JobSlot, ResumedChainKeepsTheDependenciesMetBeforeTheStop) {
    bring_up();
    std::vector<u64> jobs;
    for (u32 i = 0; i < 4; i++) {
        FragmentPayload p{};
        p.bound_max = fragment_bound(3, 0);
        jobs.push_back(arena().job(kJobFragment, i + 1, &p, sizeof(p), i ? jobs.back() : 0, false, i));
    }
    submit(0, jobs[0]);
    advance(frag_time() + frag_time() / 2);
    d().w(JS_COMMAND(0), JS_COMMAND_SOFT_STOP);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_STOPPED);
    ASSERT_EQ(d().r64(JS_TAIL_LO(0)), jobs[2]);
    d().w(JOB_INT_CLEAR, ~0u);
    EXPECT_EQ(run_chain(0, jobs[2]), DRM_PANFROST_EXCEPTION_DONE);
    for (u64 j : jobs)
        EXPECT_EQ(arena().header(j)->exception_status, kJobStatusDone);
    // A new chain (not the resumption) starts with an empty scoreboard: the dependency on index 1
    // of the earlier chain is never met.
    const u64 lone = arena().job(kJobNull, 2, nullptr, 0, 0, false, 1);
    submit(0, lone);
    advance(10 * NSEC_PER_MSEC);
    EXPECT_EQ(d().r(JS_STATUS(0)), DRM_PANFROST_EXCEPTION_ACTIVE);
    d().w(JS_COMMAND(0), JS_COMMAND_HARD_STOP);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_TERMINATED);
}

// ---- The interrupt bits and JS_STATE ----

TEST_F(JobSlot, JobIntBitsAreLevelsPerSlot) {
    bring_up();
    d().w(JOB_INT_MASK, 0x00070007);
    kshim::IrqLine& line = gpu().irq_job();
    // Slot 0: two chains back to back (one DONE level); slot 1: STOPPED; slot 2: DONE.
    submit(0, arena().null_job(1));
    submit(0, arena().null_job(1));
    submit(1, loop_chain());
    submit(2, arena().null_job(1));
    advance(10 * NSEC_PER_USEC);
    d().w(JS_COMMAND(1), JS_COMMAND_SOFT_STOP);
    ASSERT_TRUE(wait([&] { return d().r(JOB_INT_RAWSTAT) == 0x00020005u; }));
    EXPECT_EQ(stats(0).chains_done, 2u);
    EXPECT_EQ(d().r(JOB_INT_STAT), 0x00020005u);
    EXPECT_TRUE(line.level());
    EXPECT_EQ(d().r(JS_STATUS(0)), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r(JS_STATUS(1)), DRM_PANFROST_EXCEPTION_STOPPED);
    EXPECT_EQ(d().r(JS_STATUS(2)), DRM_PANFROST_EXCEPTION_DONE);
    // MASK filters STAT and the line; CLEAR is per bit.
    d().w(JOB_INT_MASK, JOB_INT_MASK_ERR(1));
    EXPECT_EQ(d().r(JOB_INT_STAT), JOB_INT_MASK_ERR(1));
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0x00020004u);
    EXPECT_TRUE(line.level());
    d().w(JOB_INT_CLEAR, JOB_INT_MASK_ERR(1));
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_DONE(2));
    EXPECT_EQ(d().r(JOB_INT_STAT), 0u);
    EXPECT_FALSE(line.level());
    d().w(JOB_INT_MASK, 0x00070007);
    EXPECT_TRUE(line.level());
    d().w(JOB_INT_CLEAR, ~0u);
    EXPECT_FALSE(line.level());
    EXPECT_EQ(d().r(JOB_INT_MASK), 0x00070007u);
}

TEST_F(JobSlot, JsStateShowsActiveAndArmedPerSlot) {
    bring_up();
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
    submit(0, loop_chain());
    submit(2, loop_chain());
    submit(2, arena().null_job(1));
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), (1u << 0) | (1u << 2) | (1u << 18));
    d().w(JS_COMMAND(2), JS_COMMAND_HARD_STOP);
    EXPECT_EQ(wait_slot(2), DRM_PANFROST_EXCEPTION_TERMINATED);
    // The FAIL holds slot 2's NEXT: armed but not active.
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), (1u << 0) | (1u << 18));
    d().w(JOB_INT_CLEAR, MK_JS_MASK(2));
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), (1u << 0) | (1u << 2));
    EXPECT_EQ(wait_slot(2), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 1u << 0);
    d().w(JS_COMMAND(0), JS_COMMAND_HARD_STOP);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_TERMINATED);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
    d().w(JOB_INT_CLEAR, ~0u);
}

// ---- Everything that accompanies an interrupt is visible when it is seen ----

TEST_F(JobSlot, StateAccompanyingTheInterruptIsVisibleInTheHandler) {
    bring_up();
    const u64 t1 = arena().alloc(8), t3 = arena().alloc(8);
    const u64 j1 = arena().write_value(t1, kWriteValueImmediate32, 0x11, 1);
    const u64 j2 = arena().null_job(2, j1);
    const u64 j3 = arena().write_value(t3, kWriteValueImmediate64, 0x3333333333ull, 3, j2);
    const std::vector<u64> frags = frag_chain(3);
    struct Seen {
        u32 raw, status, js_state;
        u64 tail;
        u32 hdr[3];
        u32 v1;
        u64 v3;
    };
    std::vector<Seen> seen;
    ASSERT_EQ(kshim::request_irq(
                  &gpu().irq_job(),
                  [&](int, void*) {
                      Seen s{};
                      s.raw = d().r(JOB_INT_RAWSTAT);
                      if (!s.raw)
                          return kshim::IRQ_NONE;
                      s.status = d().r(JS_STATUS(0));
                      s.js_state = d().r(JOB_INT_JS_STATE);
                      s.tail = d().r64(JS_TAIL_LO(0));
                      const u64 jobs[3] = {j1, j2, j3};
                      for (int i = 0; i < 3; i++)
                          s.hdr[i] =
                              arena().header(s.raw & JOB_INT_MASK_DONE(0) ? jobs[i] : frags[i])->exception_status;
                      s.v1 = *arena().at<u32>(t1);
                      s.v3 = *arena().at<u64>(t3);
                      seen.push_back(s);
                      d().w(JOB_INT_CLEAR, s.raw);
                      return kshim::IRQ_HANDLED;
                  },
                  0, "job", this),
              0);
    d().w(JOB_INT_MASK, 0x00070007);
    submit(0, j1);
    ASSERT_TRUE(wait([&] { return seen.size() == 1; }));
    EXPECT_EQ(seen[0].raw, JOB_INT_MASK_DONE(0));
    EXPECT_EQ(seen[0].status, DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(seen[0].js_state, 0u);
    EXPECT_EQ(seen[0].tail, j3);
    for (u32 h : seen[0].hdr)
        EXPECT_EQ(h, kJobStatusDone);
    EXPECT_EQ(seen[0].v1, 0x11u);
    EXPECT_EQ(seen[0].v3, 0x3333333333ull);
    // A soft stop: STOPPED, TAIL, JS_STATE and the stopped-at boundary's write-backs.
    submit(0, frags[0]);
    advance(frag_time() / 2);
    d().w(JS_COMMAND(0), JS_COMMAND_SOFT_STOP);
    ASSERT_TRUE(wait([&] { return seen.size() == 2; }));
    EXPECT_EQ(seen[1].raw, JOB_INT_MASK_ERR(0));
    EXPECT_EQ(seen[1].status, DRM_PANFROST_EXCEPTION_STOPPED);
    EXPECT_EQ(seen[1].js_state, 0u);
    EXPECT_EQ(seen[1].tail, frags[1]);
    EXPECT_EQ(seen[1].hdr[0], kJobStatusDone);
    EXPECT_EQ(seen[1].hdr[1], 0u);
    kshim::free_irq(&gpu().irq_job(), this);
}

TEST_F(JobSlot, StateIsInPlaceAtTheFirstInstantRawstatIsSet) {
    bring_up();
    const u64 target = arena().alloc(8);
    const std::vector<u64> frags = frag_chain(2);
    const u64 last = arena().write_value(target, kWriteValueImmediate32, 0x77, 3, frags.back());
    submit(1, frags[0]);
    ASSERT_TRUE(wait([&] { return d().r(JOB_INT_RAWSTAT) != 0; }));
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_DONE(1));
    EXPECT_EQ(d().r(JS_STATUS(1)), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r64(JS_TAIL_LO(1)), last);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
    EXPECT_EQ(arena().header(last)->exception_status, kJobStatusDone);
    EXPECT_EQ(*arena().at<u32>(target), 0x77u);
}

// ---- An endless chain ----

enum class Ending { SoftStop, HardStop, SoftReset };

class EndlessChain : public JobSlot, public ::testing::WithParamInterface<Ending> {};

TEST_P(EndlessChain, RunsThrottledForLongAndEnds) {
    bring_up();
    const JmLatencies& lat = gpu().jm_config().jm_lat;
    const u32 js = 1;
    u64 b = 0;
    const u64 a = loop_chain(&b);
    d().w(JOB_INT_MASK, 0x00070007);
    submit(js, a);
    const ktime_t run = 2 * kshim::NSEC_PER_SEC;
    advance(run);
    EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_ACTIVE);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 1u << js);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    // Full speed for throttle_after, then one slice per throttle_slice: bounded host work.
    const u64 jobs = stats(js).jobs_completed;
    const u64 per_slice = lat.slice / lat.simple_job + 1;
    const u64 bound = lat.throttle_after / lat.simple_job + (run / lat.throttle_slice + 1) * per_slice;
    EXPECT_LE(jobs, bound);
    EXPECT_GE(jobs, (run / lat.throttle_slice - 1) * (per_slice - 1));  // it keeps running
    advance(100 * NSEC_PER_MSEC);
    EXPECT_GT(stats(js).jobs_completed, jobs);

    switch (GetParam()) {
    case Ending::SoftStop: {
        d().w(JS_COMMAND(js), JS_COMMAND_SOFT_STOP);
        EXPECT_EQ(wait_slot(js, 10 * NSEC_PER_MSEC), DRM_PANFROST_EXCEPTION_STOPPED);
        // TAIL: the next job of the ring, zeroed by the previous one so the chain could resume.
        const u64 tail = d().r64(JS_TAIL_LO(js));
        EXPECT_TRUE(tail == a || tail == b);
        EXPECT_EQ(arena().header(tail)->exception_status, 0u);
        EXPECT_EQ(arena().header(tail == a ? b : a)->exception_status, kJobStatusDone);
        break;
    }
    case Ending::HardStop:
        d().w(JS_COMMAND(js), JS_COMMAND_HARD_STOP);
        EXPECT_EQ(wait_slot(js, 10 * NSEC_PER_MSEC), DRM_PANFROST_EXCEPTION_TERMINATED);
        break;
    case Ending::SoftReset:
        d().w(GPU_CMD, GPU_CMD_SOFT_RESET);
        ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }, 10 * NSEC_PER_MSEC));
        EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
        break;
    }
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
    const u64 final_jobs = stats(js).jobs_completed;
    advance(100 * NSEC_PER_MSEC);
    EXPECT_EQ(stats(js).jobs_completed, final_jobs);
    if (GetParam() == Ending::SoftReset) {
        EXPECT_FALSE(gpu().irq_job().level());
    }
    d().w(JOB_INT_CLEAR, ~0u);
}

INSTANTIATE_TEST_SUITE_P(Endings, EndlessChain,
                         ::testing::Values(Ending::SoftStop, Ending::HardStop, Ending::SoftReset),
                         [](const auto& info) {
                             switch (info.param) {
                             case Ending::SoftStop: return "SoftStop";
                             case Ending::HardStop: return "HardStop";
                             case Ending::SoftReset: return "SoftReset";
                             }
                             return "?";
                         });

// ---- FaultPlan kinds for the slots ----

TEST_F(JobSlot, SoftStopIgnoredLetsTheChainRunUntilTheNextStop) {
    bring_up();
    FaultSpec other;
    other.kind = FaultKind::SoftStopIgnored;
    other.js = 2;
    const int other_id = gpu().faults().add(other);
    FaultSpec f;
    f.kind = FaultKind::SoftStopIgnored;
    f.js = 1;
    const int id = gpu().faults().add(f);
    submit(1, loop_chain());
    advance(10 * NSEC_PER_USEC);
    d().w(JS_COMMAND(1), JS_COMMAND_SOFT_STOP);
    advance(20 * NSEC_PER_MSEC);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(gpu().faults().fired(other_id), 0u);
    EXPECT_EQ(d().r(JS_STATUS(1)), DRM_PANFROST_EXCEPTION_ACTIVE);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    // max_fires 1: the second soft stop works.
    d().w(JS_COMMAND(1), JS_COMMAND_SOFT_STOP);
    EXPECT_EQ(wait_slot(1, 10 * NSEC_PER_MSEC), DRM_PANFROST_EXCEPTION_STOPPED);
    // A hard stop is never ignored.
    FaultSpec always = f;
    always.max_fires = 0;
    gpu().faults().add(always);
    d().w(JOB_INT_CLEAR, ~0u);
    submit(1, loop_chain());
    advance(10 * NSEC_PER_USEC);
    d().w(JS_COMMAND(1), JS_COMMAND_SOFT_STOP);
    d().w(JS_COMMAND(1), JS_COMMAND_HARD_STOP);
    EXPECT_EQ(wait_slot(1, 10 * NSEC_PER_MSEC), DRM_PANFROST_EXCEPTION_TERMINATED);
}

TEST_F(JobSlot, JobIrqLostUpdatesTheSlotButRaisesNothing) {
    bring_up();
    d().w(JOB_INT_MASK, 0x00070007);
    FaultSpec f;
    f.kind = FaultKind::JobIrqLost;
    f.js = 0;
    const int id = gpu().faults().add(f);
    const u64 j = arena().null_job(1);
    submit(0, j);
    ASSERT_TRUE(wait([&] { return d().r(JOB_INT_JS_STATE) == 0; }));
    advance(10 * NSEC_PER_MSEC);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(d().r(JS_STATUS(0)), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j);
    EXPECT_EQ(arena().header(j)->exception_status, kJobStatusDone);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    EXPECT_FALSE(gpu().irq_job().level());
    // The next chain's interrupt is delivered.
    EXPECT_EQ(run_chain(0, arena().null_job(1)), DRM_PANFROST_EXCEPTION_DONE);
    // A lost FAIL does not hold NEXT either (the mock's documented choice): NEXT runs at once.
    gpu().faults().add(f);
    submit(0, loop_chain());
    const u64 target = arena().alloc(8);
    submit(0, arena().write_value(target, kWriteValueImmediate32, 9, 1));
    advance(10 * NSEC_PER_USEC);
    d().w(JS_COMMAND(0), JS_COMMAND_HARD_STOP);
    ASSERT_TRUE(wait([&] { return *arena().at<u32>(target) == 9; }));
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_DONE(0));
    d().w(JOB_INT_CLEAR, ~0u);
}

TEST_F(JobSlot, JobHangEndsOnlyByHardStopOrReset) {
    bring_up();
    FaultSpec f;
    f.kind = FaultKind::JobHang;
    f.js = 2;
    f.max_fires = 2;
    gpu().faults().add(f);
    const u64 target = arena().alloc(8);
    const u64 j = arena().write_value(target, kWriteValueImmediate32, 5, 1);
    submit(2, j);
    advance(200 * NSEC_PER_MSEC);
    EXPECT_EQ(d().r(JS_STATUS(2)), DRM_PANFROST_EXCEPTION_ACTIVE);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 1u << 2);
    EXPECT_EQ(d().r64(JS_HEAD_LO(2)), j);
    // A soft stop waits for the job boundary, which never comes.
    d().w(JS_COMMAND(2), JS_COMMAND_SOFT_STOP);
    advance(50 * NSEC_PER_MSEC);
    EXPECT_EQ(d().r(JS_STATUS(2)), DRM_PANFROST_EXCEPTION_ACTIVE);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    d().w(JS_COMMAND(2), JS_COMMAND_HARD_STOP);
    EXPECT_EQ(wait_slot(2, 10 * NSEC_PER_MSEC), DRM_PANFROST_EXCEPTION_TERMINATED);
    EXPECT_EQ(d().r64(JS_TAIL_LO(2)), j);
    EXPECT_EQ(arena().header(j)->exception_status, 0u);
    EXPECT_EQ(*arena().at<u32>(target), 0u);
    d().w(JOB_INT_CLEAR, ~0u);
    // The second hang is ended by a soft reset, silently.
    submit(2, j);
    advance(50 * NSEC_PER_MSEC);
    EXPECT_EQ(d().r(JS_STATUS(2)), DRM_PANFROST_EXCEPTION_ACTIVE);
    d().w(GPU_CMD, GPU_CMD_SOFT_RESET);
    ASSERT_TRUE(wait([&] { return d().r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }, 10 * NSEC_PER_MSEC));
    advance(50 * NSEC_PER_MSEC);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE), 0u);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), 0u);
    EXPECT_EQ(*arena().at<u32>(target), 0u);
    // Once the spec is spent the job runs.
    d().w(GPU_INT_CLEAR, ~0u);
    bring_up();
    EXPECT_EQ(run_chain(2, j), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 5u);
}

}  // namespace
}  // namespace mock_jm::testing
