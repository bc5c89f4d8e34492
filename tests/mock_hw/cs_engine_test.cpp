// The CSG/CS engine driven at register level: panthor's per-job sequence, sync objects, scoreboards,
// call depth, tiler OOM, progress timer, suspend/resume, terminate, faults, priorities, FaultPlan.
#include <atomic>

#include "kernel_shim/kthread.h"
#include "kernel_shim/sched.h"
#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

class CsEngineTest : public MockHwTest {
protected:
    // The 11 "always" instructions of prepare_job_instrs (no profiling) + 5 NOPs.
    void push_job(CsfRig& r, CsfRig::Queue& q, u64 stream_va, u32 stream_size, u64 syncobj_va) {
        const u32 flush = r.d.r(CSF_GPU_LATEST_FLUSH_ID);
        r.push(q, {cs::move32(V, flush),
                   cs::flush_cache2(cs::FLUSH_CLEAN_INVALIDATE, cs::FLUSH_CLEAN_INVALIDATE, cs::OTHER_FLUSH_INVALIDATE,
                                    V, 0, 0),
                   cs::move48(A, stream_va), cs::move32(V, stream_size), cs::wait(1), cs::call(A, V),
                   cs::move48(A, syncobj_va), cs::move48(V, 1), cs::wait(0xFF),
                   cs::sync_add64(A, V, cs::SCOPE_SYSTEM, true), cs::error_barrier(), 0, 0, 0, 0, 0});
    }
    // Boots, starts group 0 with one queue and rings it with a stream that blocks in a SYNC_WAIT
    // until the u32 at the returned object is greater than 4, then stores 9 at object + 32.
    // *m maps the object; the stream is blocked when this returns.
    u64 block_on_host_object(CsfRig& r, u8** m) {
        EXPECT_TRUE(r.boot());
        const u64 obj = r.gpu_alloc(64, m);
        CsfRig::Queue q = r.make_queue();
        r.program_cs(0, 0, q);
        r.start_group(0);
        EXPECT_TRUE(wait([&] { return r.state_acked(0); }));
        r.push(q, {cs::move48(0, obj), cs::move32(2, 4), cs::sync_wait32(0, 2, cs::GREATER), cs::move48(4, obj + 32),
                   cs::move32(6, 9), cs::store_multiple(6, 4, 1)});
        r.d.w(CSF_DOORBELL(1), 1);
        advance(100 * NSEC_PER_USEC);
        return obj;
    }
    // A user stream running one mock shader.
    u64 user_stream(CsfRig& r, u64 shader_va, u32* size) {
        *size = 16;
        return r.buffer({cs::move48(16, shader_va), cs::run_compute()});
    }
};

TEST_F(CsEngineTest, PanthorJobSequenceAdvancesSyncobjAndRaisesSyncUpdate) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* objs;
    const u64 sync_va = r.gpu_alloc(48, &objs);
    u8* out;
    const u64 out_va = r.gpu_alloc(64, &out);
    CsfRig::Queue q[3] = {r.make_queue(), r.make_queue(), r.make_queue()};
    for (u32 i = 0; i < 3; i++)
        r.program_cs(0, i, q[i]);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    EXPECT_EQ(r.csg_out(0)->ack & CSG_STATE_MASK, CSG_STATE_START);
    for (u32 i = 0; i < 3; i++)
        EXPECT_EQ(q[i].out->active, 1u);
    // Empty queues: the group went idle at once. Ack that event like panthor does.
    ASSERT_TRUE(wait([&] { return r.csg_events(0) & CSG_IDLE; }));
    r.ack_csg(0, CSG_EVT_MASK);
    r.d.w(JOB_INT_CLEAR, ~0u);
    for (u32 i = 0; i < 3; i++) {
        u32 size;
        const u64 us =
            user_stream(r, r.shader(MockShader::Write, 50 * NSEC_PER_USEC, out_va + 8 * i, 0x100 + i), &size);
        push_job(r, q[i], us, size, sync_va + 16 * i);
        push_job(r, q[i], us, size, sync_va + 16 * i);
    }
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] {
        for (u32 i = 0; i < 3; i++)
            if (reinterpret_cast<u64*>(objs + 16 * i)[0] != 2)
                return false;
        return true;
    }));
    for (u32 i = 0; i < 3; i++) {
        EXPECT_EQ(reinterpret_cast<u64*>(out)[i], 0x100u + i);
        EXPECT_EQ(reinterpret_cast<u32*>(objs + 16 * i)[2], 0u);  // status: no error
        EXPECT_EQ(q[i].out->extract, q[i].in->insert);
    }
    EXPECT_TRUE(r.csg_events(0) & CSG_SYNC_UPDATE);
    EXPECT_TRUE(r.d.r(JOB_INT_RAWSTAT) & JOB_INT_CSG_IF(0));
    // All queues empty: the group reports IDLE and STATUS_UPDATE says so.
    ASSERT_TRUE(wait([&] { return r.csg_events(0) & CSG_IDLE; }));
    r.toggle_csg(0, CSG_STATUS_UPDATE);
    ASSERT_TRUE(wait([&] { return !((r.csg_in(0)->req ^ r.csg_out(0)->ack) & CSG_STATUS_UPDATE); }));
    EXPECT_EQ(r.csg_out(0)->status_state & CSG_STATUS_STATE_IS_IDLE, CSG_STATUS_STATE_IS_IDLE);
    EXPECT_EQ(r.cs_out(0, 0)->status_blocked_reason, 0u);
    EXPECT_EQ(r.cs_out(0, 0)->status_scoreboards, 0u);
    EXPECT_EQ(r.cs_out(0, 0)->status_cmd_ptr, q[0].ring_va + q[0].in->insert % q[0].size);
}

TEST_F(CsEngineTest, CrossQueueSyncWaitReleasedBySyncSetFromAnotherQueue) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 obj = r.gpu_alloc(64, &m);
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    r.program_cs(0, 0, q0);
    r.program_cs(0, 1, q1);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    // q0: wait until obj > 0, then store 7 at obj+16.
    r.push(q0, {cs::move48(0, obj), cs::move32(2, 0), cs::sync_wait32(0, 2, cs::GREATER), cs::move48(4, obj + 16),
                cs::move32(6, 7), cs::store_multiple(6, 4, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(500 * NSEC_PER_USEC);
    EXPECT_EQ(reinterpret_cast<u32*>(m)[4], 0u);
    r.toggle_csg(0, CSG_STATUS_UPDATE);
    ASSERT_TRUE(wait([&] { return !((r.csg_in(0)->req ^ r.csg_out(0)->ack) & CSG_STATUS_UPDATE); }));
    const auto* st = r.cs_out(0, 0);
    EXPECT_EQ(st->status_blocked_reason, u32{CS_STATUS_BLOCKED_REASON_SYNC_WAIT});
    EXPECT_TRUE(st->status_wait & CS_STATUS_WAIT_SYNC);
    EXPECT_FALSE(st->status_wait & CS_STATUS_WAIT_SYNC_64B);
    EXPECT_EQ(st->status_wait & CS_STATUS_WAIT_SYNC_COND_MASK, CS_STATUS_WAIT_SYNC_COND_GT);
    EXPECT_EQ(st->status_wait_sync_ptr, obj);
    EXPECT_EQ(st->status_wait_sync_value, 0u);
    // Blocked in SYNC_WAIT with IDLE_SYNC_WAIT: the group is idle.
    EXPECT_TRUE(r.csg_out(0)->status_state & CSG_STATUS_STATE_IS_IDLE);
    // q1: SYNC_SET32 at CSG scope releases q0 without a SYNC_UPDATE event.
    r.ack_csg(0, CSG_EVT_MASK);
    r.push(q1, {cs::move48(0, obj), cs::move32(2, 1), cs::sync_set32(0, 2, cs::SCOPE_CSG, false)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u32*>(m)[4] == 7; }));
    EXPECT_FALSE(r.csg_events(0) & CSG_SYNC_UPDATE);
}

TEST_F(CsEngineTest, SyncWait64ReleasedByHostThroughThePoll) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 obj = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    r.push(q, {cs::move48(0, obj), cs::move48(2, 0x100000000ull), cs::sync_wait64(0, 2, cs::GREATER),
               cs::move48(4, obj + 32), cs::move32(6, 9), cs::store_multiple(6, 4, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(200 * NSEC_PER_USEC);
    EXPECT_EQ(reinterpret_cast<u32*>(m)[8], 0u);
    reinterpret_cast<u64*>(m)[0] = 0x100000001ull;  // the host signals
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u32*>(m)[8] == 9; }, NSEC_PER_MSEC));
}

// The poll does not run a SYNC_WAIT that still reads an unsatisfied object again (a queue blocked
// until drm_sched's timeout would be re-interpreted every 20 us), yet still sees the host's
// write within one poll period.
TEST_F(CsEngineTest, PollLeavesAnUnsatisfiedSyncWaitBlockedAndSeesTheHostWrite) {
    CsfRig r(rt());
    u8* m;
    block_on_host_object(r, &m);
    const auto executed = [&] { return r.locked([&] { return r.gpu.engine().instructions_executed(); }); };
    const u64 blocked_at = executed();
    reinterpret_cast<u32*>(m)[0] = 3;  // written, still not GREATER than 4
    advance(10 * NSEC_PER_MSEC);       // 500 polls
    EXPECT_EQ(executed(), blocked_at);
    EXPECT_EQ(reinterpret_cast<u32*>(m)[8], 0u);
    reinterpret_cast<u32*>(m)[0] = 5;  // the host signals
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u32*>(m)[8] == 9; }, 2 * r.gpu.config().lat.sync_poll));
}

// A wait on a sync object only the host writes, with the host silent for 10 ms: the polls that
// could not see a change (no task ran and no other event fired since the last one) are skipped,
// and a write made meanwhile is still seen by the first poll after it, as when every poll ran.
// The writer waits in each of the ways the runtime knows of: a task's sleep, a task's udelay, a
// task spinning on the clock (runnable all along), a timer.
class CsEngineSyncPollTest : public CsEngineTest {
protected:
    static constexpr ktime_t kWriteAt = 3370 * NSEC_PER_USEC;
    enum class Writer { Sleeps, Spins, SpinsOnTheClock, Timer };

    struct Outcome {
        ktime_t written = 0, seen = 0;  // since the writer started
        u64 polls = 0;
    };
    // Blocks a stream on "object > 4", has `kind` write 5 at kWriteAt, and reports when the
    // stream's following store landed and how many polls ran.
    Outcome host_write_after(Writer kind) {
        Outcome o;
        CsfRig r(rt());
        u8* m;
        block_on_host_object(r, &m);
        const u64 polls0 = r.locked([&] { return r.gpu.engine().sync_polls(); });
        const ktime_t start = kshim::ktime_get();
        const auto write = [&] {
            o.written = kshim::ktime_get() - start;
            std::atomic_ref<u32>(reinterpret_cast<u32*>(m)[0]).store(5);
        };
        constexpr unsigned long kUsecs = kWriteAt / NSEC_PER_USEC;
        kshim::Task* task = nullptr;
        kshim::hrtimer timer;
        if (kind == Writer::Timer) {
            kshim::hrtimer_setup(&timer, [&](kshim::hrtimer*) {
                write();
                return kshim::HRTIMER_NORESTART;
            });
            kshim::hrtimer_start(&timer, kWriteAt, kshim::HRTIMER_MODE_REL);
        } else {
            task = kshim::kthread_run(
                [&] {
                    if (kind == Writer::Spins)
                        kshim::udelay(kUsecs);
                    else if (kind == Writer::Sleeps)
                        kshim::usleep_range(kUsecs, kUsecs);
                    else
                        while (kshim::ktime_get() - start < kWriteAt)
                            kshim::cpu_relax();
                    write();
                    return 0;
                },
                "host writer");
        }
        EXPECT_TRUE(
            wait([&] { return std::atomic_ref<u32>(reinterpret_cast<u32*>(m)[8]).load() == 9; }, 10 * NSEC_PER_MSEC));
        o.seen = kshim::ktime_get() - start;
        if (task)
            EXPECT_EQ(kshim::kthread_stop(task), 0);
        else
            kshim::hrtimer_cancel(&timer);
        advance(10 * NSEC_PER_MSEC);  // nothing waits any more: no poll either
        o.polls = r.locked([&] { return r.gpu.engine().sync_polls(); }) - polls0;
        return o;
    }

    // `waits`: the writer waited (not runnable): the polls before its write were skipped.
    static void expect_seen_by_the_poll_after_the_write(const Outcome& o, bool waits = true) {
        const ktime_t period = mock_hw::GpuConfig{}.lat.sync_poll;
        EXPECT_GE(o.written, kWriteAt);  // a spinner sees the clock move from event to event
        EXPECT_LT(o.written, kWriteAt + period);
        EXPECT_GE(o.seen, o.written);
        EXPECT_LT(o.seen, o.written + 2 * period);
        if (waits)
            EXPECT_LE(o.polls, 3u) << "170 poll periods passed, but only the writer could change anything";
        else
            EXPECT_GE(o.polls, 160u) << "a runnable task may write at any time: every poll runs";
    }
};

TEST_F(CsEngineSyncPollTest, APollSkipsTheRoundsThatCannotSeeAChange) {
    CsfRig r(rt());
    u8* m;
    block_on_host_object(r, &m);
    const auto polls = [&] { return r.locked([&] { return r.gpu.engine().sync_polls(); }); };
    const u64 before = polls();
    advance(10 * NSEC_PER_MSEC);  // 500 poll periods, nothing else happening
    EXPECT_LE(polls() - before, 2u);
}

TEST_F(CsEngineSyncPollTest, AWriteByASleepingTaskIsSeenByThePollAfterIt) {
    expect_seen_by_the_poll_after_the_write(host_write_after(Writer::Sleeps));
}

TEST_F(CsEngineSyncPollTest, AWriteByASpinningTaskIsSeenByThePollAfterIt) {
    expect_seen_by_the_poll_after_the_write(host_write_after(Writer::Spins));
}

TEST_F(CsEngineSyncPollTest, AWriteByATaskSpinningOnTheClockIsSeenByThePollAfterIt) {
    expect_seen_by_the_poll_after_the_write(host_write_after(Writer::SpinsOnTheClock), false);
}

TEST_F(CsEngineSyncPollTest, AWriteByATimerIsSeenByThePollAfterIt) {
    expect_seen_by_the_poll_after_the_write(host_write_after(Writer::Timer));
}

TEST_F(CsEngineTest, WaitOrdersAfterScoreboardedJob) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    const u64 sh = r.shader(MockShader::Write, 100 * NSEC_PER_USEC, buf, 5);
    // The job signals SB entry 1; WAIT(1<<1) holds the store until it completes.
    r.push(q, {cs::set_sb_entry(1, 0), cs::move48(16, sh), cs::run_compute(), cs::wait(1u << 1), cs::move48(4, buf + 8),
               cs::move32(6, 1), cs::store_multiple(6, 4, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(50 * NSEC_PER_USEC);
    EXPECT_EQ(reinterpret_cast<u32*>(m)[2], 0u);
    r.toggle_csg(0, CSG_STATUS_UPDATE);
    advance(5 * NSEC_PER_USEC);
    EXPECT_EQ(r.cs_out(0, 0)->status_blocked_reason, u32{CS_STATUS_BLOCKED_REASON_SB_WAIT});
    EXPECT_EQ(r.cs_out(0, 0)->status_wait, (1u << 1) | (CS_STATUS_WAIT_SB_SRC_WAIT << 16));
    EXPECT_EQ(r.cs_out(0, 0)->status_scoreboards, 1u << 1);
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u32*>(m)[2] == 1; }));
    EXPECT_EQ(reinterpret_cast<u64*>(m)[0], 5u);
}

TEST_F(CsEngineTest, ArithmeticBranchLoadStore) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    reinterpret_cast<u32*>(m)[0] = 40;
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    // r1 = mem[buf]; loop r2 = 10..1: r1 += 3; r3 = umin(r1, 55); store r1, r3 at buf+4.
    r.push(q, {cs::move48(10, buf), cs::load_multiple(1, 10, 1), cs::move32(2, 10), cs::add_imm32(1, 1, 3),
               cs::add_imm32(2, 2, -1), cs::branch(cs::GREATER, 2, -3), cs::move32(4, 55), cs::umin32(3, 1, 4),
               cs::add_imm64(12, 10, 4), cs::store_multiple(1, 12, 0b101)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return q.out->extract == q.in->insert && reinterpret_cast<u32*>(m)[1] != 0; }));
    EXPECT_EQ(reinterpret_cast<u32*>(m)[1], 70u);
    EXPECT_EQ(reinterpret_cast<u32*>(m)[3], 55u);
}

TEST_F(CsEngineTest, CallDepthOverflowIsCsFatal) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 flag = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    // A buffer that calls itself (d0 = its own VA, r2 = its size): depth grows until overflow.
    u8* h;
    const u64 self = r.gpu_alloc(64, &h);
    const u64 body[] = {cs::call(0, 2)};
    memcpy(h, body, sizeof(body));
    r.push(q, {cs::move48(0, self), cs::move32(2, 8), cs::move48(4, flag), cs::call(0, 2)});
    r.d.w(JOB_INT_CLEAR, ~0u);
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(CS_EXCEPTION_TYPE(r.cs_out(0, 0)->fatal), u32{DRM_PANTHOR_EXCEPTION_CS_CALL_STACK_OVERFLOW});
    EXPECT_EQ(r.csg_out(0)->cs_irq_req ^ r.csg_in(0)->cs_irq_ack, 1u);
    EXPECT_TRUE(r.d.r(JOB_INT_RAWSTAT) & JOB_INT_CSG_IF(0));
    EXPECT_EQ(r.cs_out(0, 0)->status_cmd_ptr, self);
}

TEST_F(CsEngineTest, InvalidOpcodeAndBadCallLengthAreInstrInvalid) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    r.program_cs(0, 0, q0);
    r.program_cs(0, 1, q1);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    r.push(q0, {cs::nop(), 0x0A00000000000000ull});
    r.push(q1, {cs::move48(0, 0x1000000), cs::move32(2, 12), cs::call(0, 2)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return (r.cs_events(0, 0) & CS_FATAL) && (r.cs_events(0, 1) & CS_FATAL); }));
    EXPECT_EQ(r.cs_out(0, 0)->fatal, u32{DRM_PANTHOR_EXCEPTION_CS_INSTR_INVALID});
    EXPECT_EQ(r.cs_out(0, 0)->fatal_info, q0.ring_va + 8);
    EXPECT_EQ(r.cs_out(0, 1)->fatal, u32{DRM_PANTHOR_EXCEPTION_CS_INSTR_INVALID});
}

TEST_F(CsEngineTest, TilerOomHandshake) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* ctx;
    const u64 heap = r.gpu_alloc(64, &ctx);
    const u64 chunk1 = r.gpu_alloc(0x20000), chunk2 = r.gpu_alloc(0x20000);
    reinterpret_cast<MockHeapContext*>(ctx)->free_chunk = chunk1 | (0x20000 >> 12);  // one chunk, next = 0
    u8* m;
    const u64 done = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    const u64 sh = r.shader(MockShader::Write, 10 * NSEC_PER_USEC, done, 1, /*heap_chunks=*/2);
    r.push(q, {cs::move48(0, heap), cs::heap_set(0), cs::heap_operation(cs::HEAP_VT_START), cs::move48(16, sh),
               cs::run_idvs(), cs::wait(1), cs::heap_operation(cs::HEAP_VT_END)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_TILER_OOM; }));
    auto* o = r.cs_out(0, 0);
    EXPECT_EQ(o->heap_address, heap);
    EXPECT_EQ(o->heap_vt_start, 1u);
    EXPECT_EQ(o->heap_vt_end, 0u);
    EXPECT_EQ(o->heap_frag_end, 0u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(reinterpret_cast<u64*>(m)[0], 0u);  // blocked until the reply
    // panthor's reply: heap_start = heap_end = new chunk, ack TILER_OOM, CS doorbell.
    r.cs_in(0, 0)->heap_start = r.cs_in(0, 0)->heap_end = chunk2 | (0x20000 >> 12);
    r.ack_cs(0, 0, CS_TILER_OOM);
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u64*>(m)[0] == 1; }));
    ASSERT_TRUE(wait([&] { return q.out->extract == q.in->insert; }));
    EXPECT_EQ(reinterpret_cast<MockHeapContext*>(ctx)->chunks_used, 2u);
    r.toggle_csg(0, CSG_STATUS_UPDATE);
    advance(10 * NSEC_PER_USEC);
    EXPECT_EQ(o->heap_vt_end, 1u);
}

TEST_F(CsEngineTest, TilerOomAnsweredWithZeroFaults) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    const u64 heap = r.gpu_alloc(64);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    r.push(q, {cs::move48(0, heap), cs::heap_set(0), cs::move48(16, r.shader(MockShader::Run, 1000, 0, 0, 1)),
               cs::run_tiling()});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_TILER_OOM; }));
    r.cs_in(0, 0)->heap_start = r.cs_in(0, 0)->heap_end = 0;
    r.ack_cs(0, 0, CS_TILER_OOM);
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FAULT; }));
    EXPECT_EQ(r.cs_out(0, 0)->fault, u32{DRM_PANTHOR_EXCEPTION_OOM});
}

TEST_F(CsEngineTest, ProgressTimerEventOnHungShader) {
    CsfRig r(rt());
    // progress_timer 100 -> 102400 GPU cycles at 1 GHz = 102.4 us.
    ASSERT_TRUE(r.boot(100));
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    r.d.w(JOB_INT_CLEAR, ~0u);
    r.push(q, {cs::move48(16, r.shader(MockShader::Hang, 0)), cs::run_compute(), cs::wait(1)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(90 * NSEC_PER_USEC);
    EXPECT_FALSE(r.csg_events(0) & CSG_PROGRESS_TIMER_EVENT);
    advance(30 * NSEC_PER_USEC);
    EXPECT_TRUE(r.csg_events(0) & CSG_PROGRESS_TIMER_EVENT);
    EXPECT_TRUE(r.d.r(JOB_INT_RAWSTAT) & JOB_INT_CSG_IF(0));
    // Terminate the hung group: acked, the stream is no longer active.
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    EXPECT_EQ(r.csg_out(0)->ack & CSG_STATE_MASK, CSG_STATE_TERMINATE);
    EXPECT_EQ(q.out->active, 0u);
    EXPECT_EQ(r.locked([&] { return r.gpu.engine().cores_busy_locked(); }), 0u);
}

// Runs: job(write a=1); SYNC_WAIT obj > 0; job(write b=2); SYNC_ADD64 seq; optionally suspending
// and resuming while the stream is blocked in the wait. Returns the final memory.
std::vector<u64> run_suspend_scenario(kshim::Runtime& rt, bool suspend, bool corrupt, u32* fatal_out = nullptr) {
    CsfRig r(rt);
    EXPECT_TRUE(r.boot());
    if (corrupt)
        r.gpu.faults().add(FaultSpec{.kind = FaultKind::CorruptSuspendBuffer, .trigger = FaultTrigger::always()});
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    u64* mem = reinterpret_cast<u64*>(m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    const u32 sb = r.start_group(0);
    EXPECT_TRUE(r.wait([&] { return r.state_acked(0); }));
    r.push(q, {cs::move48(16, r.shader(MockShader::Write, 10 * NSEC_PER_USEC, buf, 1)), cs::run_compute(),
               cs::move48(0, buf + 8), cs::move48(2, 0), cs::move32(50, 0xABC), cs::sync_wait64(0, 2, cs::GREATER),
               cs::wait(1), cs::move48(16, r.shader(MockShader::Write, 10 * NSEC_PER_USEC, buf + 16, 2)),
               cs::run_compute(), cs::wait(1), cs::move48(4, buf + 24), cs::move48(6, 1), cs::sync_add64(4, 6),
               cs::move48(8, buf + 40), cs::store_multiple(50, 8, 1)});
    r.d.w(CSF_DOORBELL(1), 1);
    EXPECT_TRUE(r.wait([&] { return mem[0] == 1; }));
    r.wait([] { return false; }, 100 * NSEC_PER_USEC);
    if (suspend) {
        r.set_state(0, CSG_STATE_SUSPEND);
        EXPECT_TRUE(r.wait([&] { return r.state_acked(0); }));
        EXPECT_EQ(r.csg_out(0)->ack & CSG_STATE_MASK, CSG_STATE_SUSPEND);
        EXPECT_EQ(q.out->active, 0u);
        // panthor stops the CS slots after the suspend; the slot is then reused (zeroed).
        mem[1] = 5;  // signal while suspended: nothing runs
        r.wait([] { return false; }, NSEC_PER_MSEC);
        EXPECT_EQ(mem[2], 0u);
        memset(r.cs_out(0, 0), 0, sizeof(panthor_fw_cs_output_iface));
        r.program_cs(0, 0, q);
        r.start_group(0, 15, CSG_STATE_RESUME, sb);
        EXPECT_TRUE(r.wait([&] { return r.state_acked(0); }));
        EXPECT_EQ(r.csg_out(0)->ack & CSG_STATE_MASK, CSG_STATE_RESUME);
    } else {
        mem[1] = 5;
    }
    if (corrupt) {
        EXPECT_TRUE(r.wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
        if (fatal_out)
            *fatal_out = r.cs_out(0, 0)->fatal;
    } else {
        EXPECT_TRUE(r.wait([&] { return mem[3] == 1 && mem[5] != 0; }));
    }
    return std::vector<u64>(mem, mem + 8);
}

TEST_F(CsEngineTest, SuspendMidStreamThenResumeGivesIdenticalMemory) {
    const std::vector<u64> plain = run_suspend_scenario(rt(), false, false);
    const std::vector<u64> suspended = run_suspend_scenario(rt(), true, false);
    EXPECT_EQ(plain, suspended);
    EXPECT_EQ(suspended[2], 2u);
    EXPECT_EQ(suspended[5] & 0xFFFFFFFF, 0xABCu);  // a register set before the suspend survived it
}

TEST_F(CsEngineTest, CorruptSuspendBufferGivesFwInternalErrorOnResume) {
    u32 fatal = 0;
    run_suspend_scenario(rt(), true, true, &fatal);
    EXPECT_EQ(fatal, u32{DRM_PANTHOR_EXCEPTION_CSF_FW_INTERNAL_ERROR});
}

TEST_F(CsEngineTest, MmuFaultStallsUntilAsDisabledThenBusFaultAndResTerm) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    r.program_cs(0, 0, q0);
    r.program_cs(0, 1, q1);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    const u64 bad = 0x7000000000ull;
    r.push(q0, {cs::move48(16, r.shader(MockShader::Access, 1000, bad)), cs::run_compute(), cs::wait(1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.d.r(MMU_INT_RAWSTAT) & 2; }));
    EXPECT_EQ(r.d.r64(AS_FAULTADDRESS(1)), bad);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(r.cs_events(0, 0), 0u);  // stalled, not failed
    // panthor_mmu_as_disable: UNMAPPED + UPDATE (after clearing the fault).
    r.d.w(MMU_INT_CLEAR, 2);
    r.d.w64(AS_TRANSCFG(1), AS_TRANSCFG_ADRMODE_UNMAPPED);
    r.d.w(AS_COMMAND(1), AS_COMMAND_UPDATE);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(r.cs_out(0, 0)->fatal, u32{DRM_PANTHOR_EXCEPTION_CS_BUS_FAULT});
    EXPECT_EQ(r.cs_out(0, 0)->fatal_info, bad);
    EXPECT_TRUE(r.cs_events(0, 1) & CS_FAULT);
    EXPECT_EQ(r.cs_out(0, 1)->fault, u32{DRM_PANTHOR_EXCEPTION_CS_RES_TERM});
}

TEST_F(CsEngineTest, CsFaultErrorStateUntilErrorBarrier) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* objs;
    const u64 sync = r.gpu_alloc(64, &objs);
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    r.push(q, {cs::move48(16, r.shader(MockShader::Fault, 1000, 0x1234, DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT)),
               cs::run_compute(), cs::wait(1), cs::move48(16, r.shader(MockShader::Write, 1000, buf, 1)),
               cs::run_compute(), cs::wait(1), cs::move48(A, sync), cs::move48(V, 1), cs::sync_add64(A, V),
               cs::error_barrier(), cs::move48(16, r.shader(MockShader::Write, 1000, buf + 8, 2)), cs::run_compute(),
               cs::wait(1), cs::move48(A, sync + 16), cs::sync_add64(A, V)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FAULT; }));
    EXPECT_EQ(CS_EXCEPTION_TYPE(r.cs_out(0, 0)->fault), u32{DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT});
    EXPECT_EQ(r.cs_out(0, 0)->fault_info, 0x1234u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(reinterpret_cast<u64*>(objs)[0], 0u);  // halted until the host acks
    r.ack_cs(0, 0, CS_FAULT);
    r.ring_cs(0, 0);
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u64*>(objs)[2] == 1; }));
    EXPECT_EQ(reinterpret_cast<u64*>(m)[0], 0u);     // RUN skipped in the error state
    EXPECT_EQ(reinterpret_cast<u64*>(objs)[0], 1u);  // the sync op still ran...
    EXPECT_EQ(reinterpret_cast<u32*>(objs)[2], 1u);  // ...and propagated the error
    EXPECT_EQ(reinterpret_cast<u64*>(m)[1], 2u);     // after ERROR_BARRIER jobs run again
    EXPECT_EQ(reinterpret_cast<u32*>(objs + 16)[2], 0u);
}

TEST_F(CsEngineTest, SyncWaitWithErrorRejectInheritsFault) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 obj = r.gpu_alloc(64, &m);
    reinterpret_cast<u32*>(m)[0] = 1;
    reinterpret_cast<u32*>(m)[1] = 1;  // errored
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    r.push(q, {cs::move48(0, obj), cs::move32(2, 0), cs::sync_wait32(0, 2, cs::GREATER, true)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FAULT; }));
    EXPECT_EQ(r.cs_out(0, 0)->fault, u32{DRM_PANTHOR_EXCEPTION_CS_INHERIT_FAULT});
}

TEST_F(CsEngineTest, HigherPriorityGroupGetsTheOnlyCoreFirst) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot(0x271000, /*core_mask=*/1));  // one shader core
    EXPECT_EQ(r.locked([&] { return r.gpu.engine().cores_total_locked(); }), 1u);
    u8* m;
    const u64 order = r.gpu_alloc(64, &m);
    CsfRig::Queue lo = r.make_queue(), hi = r.make_queue();
    r.program_cs(0, 0, lo);
    r.program_cs(1, 0, hi);
    r.start_group(0, /*prio=*/1);
    r.start_group(1, /*prio=*/9);
    ASSERT_TRUE(wait([&] { return r.state_acked(0) && r.state_acked(1); }));
    // Low priority first occupies the core with a long job, then queues two more; high priority
    // queues two: when the core frees, both high-priority jobs run before the low ones.
    const u64 counter = order + 32;
    auto job = [&](u32 tag) { return r.shader(MockShader::Write, 10 * NSEC_PER_USEC, order + 8 * (tag % 4), tag); };
    r.push(lo, {cs::move48(16, r.shader(MockShader::Run, 50 * NSEC_PER_USEC)), cs::run_compute(),
                cs::move48(16, job(10)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(20 * NSEC_PER_USEC);
    r.push(hi, {cs::move48(16, job(21)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(2), 1);
    (void)counter;
    // At 50 us the core frees: the high-priority job (tag 21, slot 1) runs first, then tag 10.
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u64*>(m)[1] == 21; }));
    EXPECT_EQ(reinterpret_cast<u64*>(m)[2], 0u);
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u64*>(m)[2] == 10; }));
}

TEST_F(CsEngineTest, FaultPlanDropsCsgStateAckAndInjectsCsFatal) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    const int drop = r.gpu.faults().add(FaultSpec{.kind = FaultKind::CsgAckDrop,
                                                  .trigger = FaultTrigger::nth_occurrence(1),
                                                  .csg_req_mask = CSG_STATE_MASK,
                                                  .csg = 2});
    const int fatal = r.gpu.faults().add(FaultSpec{.kind = FaultKind::CsFatal,
                                                   .trigger = FaultTrigger::nth_occurrence(2),
                                                   .csg = 0,
                                                   .cs = 0,
                                                   .exception = DRM_PANTHOR_EXCEPTION_CS_ENDPOINT_FAULT});
    CsfRig::Queue q = r.make_queue(), q2 = r.make_queue();
    r.program_cs(2, 0, q2);
    r.start_group(2);
    advance(NSEC_PER_MSEC);
    EXPECT_FALSE(r.state_acked(2));
    EXPECT_EQ(r.gpu.faults().fired(drop), 1u);
    EXPECT_FALSE((r.csg_in(2)->req ^ r.csg_out(2)->ack) & CSG_ENDPOINT_CONFIG);  // EP_CFG still acked
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    const u64 sh = r.shader(MockShader::Run, 1000);
    r.push(q, {cs::move48(16, sh), cs::run_compute(), cs::run_compute(), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FATAL; }));
    EXPECT_EQ(r.cs_out(0, 0)->fatal, u32{DRM_PANTHOR_EXCEPTION_CS_ENDPOINT_FAULT});
    EXPECT_EQ(r.gpu.faults().fired(fatal), 1u);
    EXPECT_EQ(q.out->extract, 24u);  // the second RUN raised it and retired; the stream stopped after it
}

TEST_F(CsEngineTest, SuspendNeverCompletesWhenInjected) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    r.gpu.faults().add(FaultSpec{.kind = FaultKind::SuspendNeverCompletes, .trigger = FaultTrigger::always()});
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    r.set_state(0, CSG_STATE_SUSPEND);
    advance(100 * NSEC_PER_MSEC);
    EXPECT_FALSE(r.state_acked(0));
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
}

TEST_F(CsEngineTest, EndpointConfigLimitsTheGroupsCores) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q0 = r.make_queue(), q1 = r.make_queue();
    r.program_cs(0, 0, q0);
    r.program_cs(0, 1, q1);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    EXPECT_EQ(r.csg_out(0)->status_ep_current & 0xFF, 4u);
    r.csg_in(0)->endpoint_req = CSG_EP_REQ_COMPUTE(1) | CSG_EP_REQ_PRIORITY(15);
    r.toggle_csg(0, CSG_ENDPOINT_CONFIG);
    ASSERT_TRUE(wait([&] { return !((r.csg_in(0)->req ^ r.csg_out(0)->ack) & CSG_ENDPOINT_CONFIG); }));
    EXPECT_EQ(r.csg_out(0)->status_ep_current & 0xFF, 1u);
    EXPECT_EQ(r.csg_out(0)->status_ep_req, r.csg_in(0)->endpoint_req);
    r.push(q0, {cs::move48(16, r.shader(MockShader::Write, 50 * NSEC_PER_USEC, buf, 1)), cs::run_compute()});
    r.push(q1, {cs::move48(16, r.shader(MockShader::Write, 50 * NSEC_PER_USEC, buf + 8, 2)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u64*>(m)[0] == 1; }));
    EXPECT_EQ(reinterpret_cast<u64*>(m)[1], 0u);  // one core for this group: the second job queued
    ASSERT_TRUE(wait([&] { return reinterpret_cast<u64*>(m)[1] == 2; }));
}

TEST_F(CsEngineTest, FlushCache2SkipsOnlyWhenAFlushHappenedSinceANonZeroIdWasSampled) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    const u32 id0 = r.d.r(CSF_GPU_LATEST_FLUSH_ID);
    const auto flush =
        cs::flush_cache2(cs::FLUSH_CLEAN_INVALIDATE, cs::FLUSH_CLEAN_INVALIDATE, cs::OTHER_FLUSH_INVALIDATE, 2, 0, 3);
    // Current ID: the flush runs (SB entry 3 held for cache_flush) and advances the ID.
    r.push(q, {cs::move32(2, id0), flush, cs::wait(1u << 3)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return q.out->extract == q.in->insert; }));
    ASSERT_TRUE(wait([&] { return r.d.r(CSF_GPU_LATEST_FLUSH_ID) == id0 + 1; }));
    // A stale ID (id0): skipped, the ID does not move.
    r.push(q, {cs::move32(2, id0), flush, cs::wait(1u << 3)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return q.out->extract == q.in->insert; }); }));
    advance(100 * NSEC_PER_USEC);
    EXPECT_EQ(r.d.r(CSF_GPU_LATEST_FLUSH_ID), id0 + 1);
    // ID 0 (what Mesa passes): flushed whatever the current ID, and the ID moves.
    r.push(q, {cs::move32(2, 0), flush, cs::wait(1u << 3)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return q.out->extract == q.in->insert; }); }));
    ASSERT_TRUE(wait([&] { return r.d.r(CSF_GPU_LATEST_FLUSH_ID) == id0 + 2; }));
}

TEST_F(CsEngineTest, StoreStateAndProgressCounter) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    r.toggle_glb(GLB_COUNTER_EN);
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    advance(NSEC_PER_MSEC);
    r.push(q,
           {cs::move48(0, buf), cs::store_state(0, cs::STATE_TIMESTAMP), cs::store_state(0, cs::STATE_CYCLE_COUNT, 8),
            cs::move48(2, 41), cs::progress_store(2), cs::wait(0, true), cs::progress_load(4), cs::move48(6, buf + 16),
            cs::store_multiple(4, 6, 1), cs::store_state(0, cs::STATE_ERROR_STATUS, 24)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return q.out->extract == q.in->insert; }));
    const u64* v = reinterpret_cast<u64*>(m);
    EXPECT_GE(v[0], 24'000u);  // >= 1 ms at 24 MHz
    EXPECT_GT(v[1], 0u);
    EXPECT_EQ(v[2] & 0xFFFFFFFF, 42u);
    EXPECT_EQ(v[3], 0u);
}

// STORE_STATE TIMESTAMP agrees with GPU_TIMESTAMP (offset included) only while the firmware's
// COUNTER_EN propagates the system timestamp; before, the cores count from the MCU's start.
TEST_F(CsEngineTest, StoreStateTimestampIsCoherentOnlyWithCounterEn) {
    advance(5 * NSEC_PER_MSEC);  // the MCU comes up well after the system counter started
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    constexpr u64 kOffset = 1'000'000;
    r.d.w(GPU_TIMESTAMP_OFFSET_LO, static_cast<u32>(kOffset));
    r.d.w(GPU_TIMESTAMP_OFFSET_HI, 0);
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    auto sample = [&](u32 slot) {
        r.push(q, {cs::move48(0, buf), cs::store_state(0, cs::STATE_TIMESTAMP, static_cast<int>(slot * 8))});
        r.d.w(CSF_DOORBELL(1), 1);
        EXPECT_TRUE(wait([&] { return q.out->extract == q.in->insert; }));
        return reinterpret_cast<u64*>(m)[slot];
    };
    auto gpu_timestamp = [&] { return u64{r.d.r(GPU_TIMESTAMP_LO)} | u64{r.d.r(GPU_TIMESTAMP_HI)} << 32; };

    const u64 local = sample(0);
    const u64 global0 = gpu_timestamp();
    EXPECT_LT(local + kOffset + 5 * 24'000 / 2, global0) << "without COUNTER_EN the cores' count is local";

    r.toggle_glb(GLB_COUNTER_EN);
    ASSERT_TRUE(
        wait([&] { return r.locked([&] { return ((r.glb_in()->req ^ r.glb_out()->ack) & GLB_COUNTER_EN) == 0; }); }));
    const u64 before = gpu_timestamp();
    const u64 coherent = sample(1);
    const u64 after = gpu_timestamp();
    EXPECT_GE(coherent, before);
    EXPECT_LE(coherent, after);
}

TEST_F(CsEngineTest, FaultPlanSecondPartKinds) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot(100));
    FaultPlan& fp = r.gpu.faults();
    fp.add(FaultSpec{
        .kind = FaultKind::CsgWrongState, .trigger = FaultTrigger::nth_occurrence(1), .csg = 1, .wrong_state = 3});
    fp.add(FaultSpec{.kind = FaultKind::MmuFaultAt,
                     .trigger = FaultTrigger::nth_occurrence(1),
                     .fault_addr = 0x6000000000ull,
                     .csg = 0});
    fp.add(FaultSpec{.kind = FaultKind::CsFault,
                     .trigger = FaultTrigger::at_time(kshim::ktime_get() + 5 * NSEC_PER_MSEC),
                     .csg = 2,
                     .cs = 0,
                     .exception = DRM_PANTHOR_EXCEPTION_KABOOM});
    fp.add(FaultSpec{.kind = FaultKind::ShaderHang, .trigger = FaultTrigger::always(), .max_fires = 0, .csg = 3});
    fp.add(FaultSpec{.kind = FaultKind::CsUnrecoverable, .trigger = FaultTrigger::always(), .csg = 4});
    CsfRig::Queue q[5] = {r.make_queue(), r.make_queue(), r.make_queue(), r.make_queue(), r.make_queue()};
    for (u32 g = 0; g < 5; g++) {
        r.program_cs(g, 0, q[g]);
        r.start_group(g);
    }
    ASSERT_TRUE(wait([&] { return r.state_acked(0) && r.state_acked(2) && r.state_acked(3) && r.state_acked(4); }));
    advance(100 * NSEC_PER_USEC);
    EXPECT_EQ(r.locked([&] { return r.csg_out(1)->ack & CSG_STATE_MASK; }), 3u);  // START acked as RESUME
    const u64 sh = r.shader(MockShader::Run, 1000);
    for (u32 g : {0u, 3u, 4u})
        r.push(q[g], {cs::move48(16, sh), cs::run_compute(), cs::wait(1)});
    for (u32 g : {0u, 3u, 4u})
        r.d.w(CSF_DOORBELL(g + 1), 1);
    ASSERT_TRUE(wait([&] { return r.d.r(MMU_INT_RAWSTAT) & 2; }));  // group 0's job read the VA
    EXPECT_EQ(r.d.r64(AS_FAULTADDRESS(1)), 0x6000000000ull);
    ASSERT_TRUE(wait([&] { return r.cs_events(4, 0) & CS_FATAL; }));
    EXPECT_EQ(r.locked([&] { return r.cs_out(4, 0)->fatal; }), u32{DRM_PANTHOR_EXCEPTION_CS_UNRECOVERABLE});
    ASSERT_TRUE(wait([&] { return r.csg_events(3) & CSG_PROGRESS_TIMER_EVENT; }));  // the hung job
    ASSERT_TRUE(wait([&] { return r.cs_events(2, 0) & CS_FAULT; }, 10 * NSEC_PER_MSEC));
    EXPECT_GE(kshim::ktime_get(), 5 * NSEC_PER_MSEC);
    EXPECT_EQ(r.locked([&] { return r.cs_out(2, 0)->fault; }), u32{DRM_PANTHOR_EXCEPTION_KABOOM});
    // Clean up the stalled AS so the test ends quietly: terminate everything.
    for (u32 g = 0; g < 5; g++)
        r.set_state(g, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0) && r.state_acked(3); }));
}

}  // namespace
}  // namespace mock_hw::testing
