// The per-queue job timeout (panthor_sched_queue.cpp: queue_timeout_work, queue_suspend_timeout,
// queue_resume_timeout, queue_reset_timeout_locked). drm_sched's own timer is off
// (MAX_SCHEDULE_TIMEOUT); each queue has a 5 s timer that runs only while its group sits on a CSG
// slot with work in the ring, keeps what is left while the group is off slot, restarts in full at
// every job completion, and keeps running off slot when the queue waits on a sync object and its
// whole group is idle (only an external signal can release it).
//
// Jobs here are chains of 100 ms compute pieces: each piece completes for the FW (so its ~2.6 s
// progress timer never fires) while the job itself, the thing the queue timer watches, can last
// as long as the test needs.
#include <string>
#include <vector>

#include "drm/drm_file.h"
#include "kernel_shim/log.h"
#include "kernel_shim/time.h"
#include "panthor/panthor_sched_priv.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;
using mock_hw::MockShader;

constexpr u32 kSlots = 8;  // McuConfig::group_num
constexpr ktime_t kTimeout = 5000 * kshim::NSEC_PER_MSEC;
// The timer is armed in jiffies (4 ms at HZ=250) and the handler runs from a workqueue.
constexpr ktime_t kSlack = 3 * kshim::TICK_NSEC;

class SchedTimeoutTest : public SchedTest {
protected:
    static constexpr ktime_t kPiece = 100 * kMs;

    void SetUp() override {
        SchedTest::SetUp();
        set_cap_sys_nice(true);  // HIGH groups
        kshim::log_clear();
    }

    // A job of `pieces` compute pieces of kPiece, the first storing 1 at data offset `marker` (if
    // not ~0) once it runs, the last writing `value` at data offset `res`.
    u32 busy_job(u32 group, u32 pieces, u64 res, u64 value, u64 marker = ~u64{0}) {
        std::vector<u64> ins;
        if (marker != ~u64{0}) {
            ins.push_back(cs::move48(2, data_va(marker)));
            ins.push_back(cs::move48(4, 1));
            ins.push_back(cs::store_multiple(4, 2, 0x3));
        }
        const u64 run = put_shader(shader(MockShader::Run, kPiece));
        const u64 last = put_shader(shader(MockShader::Write, kPiece, data_va(res), value));
        for (u32 p = 0; p < pieces; p++) {
            ins.push_back(cs::move48(16, p + 1 == pieces ? last : run));
            ins.push_back(cs::run_compute(1));
            ins.push_back(cs::wait(1));
        }
        return submit_stream(group, 0, put_stream(ins), static_cast<u32>(ins.size() * 8));
    }

    // Stores 1 at `marker`, then waits until the u64 at `gate` is > 0.
    u32 blocked_job(u32 group, u64 gate, u64 marker) {
        const std::vector<u64> ins = {
            cs::move48(2, data_va(marker)), cs::move48(4, 1), cs::store_multiple(4, 2, 0x3),
            cs::move48(6, data_va(gate)),   cs::move48(8, 0), cs::sync_wait64(6, 8, cs::GREATER)};
        return submit_stream(group, 0, put_stream(ins), static_cast<u32>(ins.size() * 8));
    }

    // Eight HIGH groups, each with `jobs` jobs of `pieces` pieces queued back to back: they hold
    // every CSG slot (and keep completing jobs) until they are done.
    std::vector<u32> occupy_slots(u32 jobs, u32 pieces, std::vector<u32>* syncs) {
        std::vector<u32> groups;
        for (u32 i = 0; i < kSlots; i++) {
            groups.push_back(group_create(1, PANTHOR_GROUP_PRIORITY_HIGH));
            for (u32 j = 0; j < jobs; j++)
                syncs->push_back(busy_job(groups.back(), pieces, 0x1000 + 8 * i, j + 1));
        }
        return groups;
    }

    u32 stats_used_slots() { return panthor_sched_get_stats(ptdev).used_csg_slots; }

    // Where group `handle` sits, read from a run_until predicate (an atomic context, where the
    // scheduler lock cannot be taken; in the simulated runtime nothing runs meanwhile).
    struct GroupRef {
        panthor_group* group = nullptr;
        ~GroupRef() { group_put(group); }
        int csg() const { return std::atomic_ref<const int>(group->csg_id).load(std::memory_order_relaxed); }
    };
    void get_group(u32 handle, GroupRef* ref) {
        panthor_group_pool* pool = static_cast<panthor_file*>(file->driver_priv)->groups;
        ref->group = pool->xa.load_locked(handle, [](panthor_group* g) { return group_get(g); });
        ASSERT_NE(ref->group, nullptr);
    }
};

// Each queue's drm_sched (and so its tracepoints) is named panthor-queue-<client id>-<group
// handle>-<queue index>.
TEST_F(SchedTimeoutTest, QueueSchedulersAreNamedAfterClientGroupAndQueue) {
    u32 g = 0;
    ASSERT_EQ(group_create_ret(&g, {{}, {}}), 0);
    GroupRef ref;
    get_group(g, &ref);
    const std::string prefix = "panthor-queue-" + std::to_string(file->client_id) + "-" + std::to_string(g) + "-";
    for (u32 q = 0; q < 2; q++) {
        EXPECT_EQ(std::string(ref.group->queues[q]->name), prefix + std::to_string(q));
        EXPECT_EQ(std::string(ref.group->queues[q]->scheduler.name), prefix + std::to_string(q));
    }
    EXPECT_EQ(group_destroy(g), 0);
}

// The queue of a resident group completes no job for 5 s (its pieces keep the FW's progress timer
// quiet): the queue timer fails the job with -ETIMEDOUT and the group is TIMEDOUT.
TEST_F(SchedTimeoutTest, ResidentQueueWithoutCompletionTimesOutAfterFiveSeconds) {
    const u32 g = group_create();
    const ktime_t t0 = kshim::ktime_get();
    const u32 s = busy_job(g, 70, 0, 1);  // 7 s
    const Done d = wait_done(s, 20000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, -ETIMEDOUT);
    EXPECT_GE(d.at - t0, kTimeout - kSlack);
    EXPECT_LE(d.at - t0, kTimeout + kSlack);
    EXPECT_TRUE(kshim::log_contains("job timeout: pid=")) << "queue_timedout_job's message";
    EXPECT_TRUE(kshim::log_contains(", seqno=1"));
    EXPECT_FALSE(kshim::log_contains("CSG_PROGRESS_TIMER_EVENT"));
    EXPECT_EQ(group_state(g).state, static_cast<u32>(DRM_PANTHOR_GROUP_STATE_TIMEDOUT));
    EXPECT_EQ(read_data(0), 0u);
    EXPECT_EQ(group_destroy(g), 0);
}

// Three 3 s jobs back to back on one queue: 9 s without the queue ever being empty, but a job
// completes every 3 s and each completion gives the queue a fresh 5 s. (With the timer armed once
// for the queue, the second job would fail at 5 s.)
TEST_F(SchedTimeoutTest, EachCompletionRearmsTheFullTimeout) {
    const u32 g = group_create();
    std::vector<u32> syncs;
    for (u32 j = 0; j < 3; j++)
        syncs.push_back(busy_job(g, 30, 8 * j, j + 1));
    ASSERT_EQ(syncobj_wait(syncs, 15000 * kMs), 0);
    for (u32 j = 0; j < 3; j++) {
        EXPECT_EQ(fence_status(syncs[j]), 1) << j;
        EXPECT_EQ(read_data(8 * j), j + 1u);
    }
    EXPECT_FALSE(kshim::log_contains("job timeout"));
    EXPECT_EQ(group_state(g).state, 0u);
    EXPECT_EQ(group_destroy(g), 0);
}

// More busy groups than slots: a LOW group's short job waits off slot for ~8 s behind eight HIGH
// groups. Time off slot is not the job's: it runs once a slot frees up and completes. (At driver
// 1.5 drm_sched's per-job timer started at run_job, so this job failed at 5 s.)
TEST_F(SchedTimeoutTest, TimeOffSlotDoesNotCount) {
    std::vector<u32> syncs;
    std::vector<u32> groups = occupy_slots(8, 5, &syncs);  // 8 x 500 ms of GPU time, 2 groups a core
    advance(10 * kMs);
    ASSERT_EQ(stats_used_slots(), kSlots);

    const u32 low = group_create(1, PANTHOR_GROUP_PRIORITY_LOW);
    GroupRef low_ref;
    get_group(low, &low_ref);
    const ktime_t t0 = kshim::ktime_get();
    const u32 s = busy_job(low, 1, 0x100, 7, 0x200);
    advance(kTimeout + 1000 * kMs);
    EXPECT_LT(low_ref.csg(), 0) << "the LOW group got a slot: the test proves nothing";
    EXPECT_EQ(read_data(0x200), 0u);
    EXPECT_EQ(fence_status(s), 0) << "the job ended while its group had never been on a slot";

    const Done d = wait_done(s, 20000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, 1);
    EXPECT_GT(d.at - t0, kTimeout + 1000 * kMs);
    EXPECT_EQ(read_data(0x100), 7u);
    EXPECT_FALSE(kshim::log_contains("job timeout"));
    EXPECT_EQ(group_state(low).state, 0u);

    ASSERT_EQ(syncobj_wait(syncs, 20000 * kMs), 0);
    for (u32 h : syncs)
        EXPECT_EQ(fence_status(h), 1);
    groups.push_back(low);
    for (u32 h : groups)
        EXPECT_EQ(group_destroy(h), 0);
}

// A LOW group's job runs 2 s on its slot, is then evicted by eight HIGH groups for ~4 s, and gets
// the slot back. The timer kept the 3 s it had left: the job fails 3 s after its group is back on
// a slot, not 5 s after (reset) and not at 5 s of wall time (counted off slot).
TEST_F(SchedTimeoutTest, EvictionKeepsWhatIsLeftOfTheTimeout) {
    const u32 low = group_create(1, PANTHOR_GROUP_PRIORITY_LOW);
    GroupRef low_ref;
    get_group(low, &low_ref);
    const u32 s = busy_job(low, 150, 0x100, 7, 0x200);  // 15 s
    ASSERT_TRUE(run_until([&] { return read_data(0x200) != 0; }, 10 * kMs));
    const ktime_t t_on = kshim::ktime_get();
    advance(2000 * kMs);

    std::vector<u32> syncs;
    std::vector<u32> groups = occupy_slots(4, 5, &syncs);  // ~4 s of work, 2 groups a core
    ASSERT_TRUE(run_until([&] { return low_ref.csg() < 0; }, 200 * kMs)) << "the LOW group was not evicted";
    const ktime_t t_off = kshim::ktime_get();
    ASSERT_TRUE(run_until([&] { return low_ref.csg() >= 0; }, 20000 * kMs)) << "the LOW group never came back";
    const ktime_t t_back = kshim::ktime_get();
    ASSERT_GT(t_back - t_off, 2000 * kMs) << "the eviction was too short to tell";

    const Done d = wait_done(s, 20000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, -ETIMEDOUT);
    const ktime_t left = kTimeout - (t_off - t_on);
    EXPECT_GE(d.at - t_back, left - kSlack) << (d.at - t_back) / kMs << " ms after coming back";
    EXPECT_LE(d.at - t_back, left + kSlack) << (d.at - t_back) / kMs << " ms after coming back";
    EXPECT_TRUE(kshim::log_contains("job timeout"));

    ASSERT_EQ(syncobj_wait(syncs, 20000 * kMs), 0);
    for (u32 h : syncs)
        EXPECT_EQ(fence_status(h), 1);
    groups.push_back(low);
    for (u32 h : groups)
        EXPECT_EQ(group_destroy(h), 0);
}

// A group whose only queue waits on a sync object that nothing on the GPU will signal is idle, so
// the next tick that needs its slot evicts it. Its timer keeps running off slot: the job fails 5 s
// after submission, while the HIGH groups still hold every slot.
TEST_F(SchedTimeoutTest, SyncWaitBlockedIdleGroupTimesOutOffSlot) {
    const u32 blocked = group_create(1, PANTHOR_GROUP_PRIORITY_LOW);
    GroupRef blocked_ref;
    get_group(blocked, &blocked_ref);
    const ktime_t t0 = kshim::ktime_get();
    const u32 s = blocked_job(blocked, 0x300, 0x200);
    ASSERT_TRUE(run_until([&] { return read_data(0x200) != 0; }, 10 * kMs));
    advance(50 * kMs);  // the FW reports it idle

    std::vector<u32> syncs;
    std::vector<u32> groups = occupy_slots(8, 5, &syncs);  // ~8 s
    ASSERT_TRUE(run_until([&] { return blocked_ref.csg() < 0; }, 200 * kMs)) << "the blocked group was not evicted";

    const Done d = wait_done(s, 20000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, -ETIMEDOUT);
    EXPECT_GE(d.at - t0, kTimeout - kSlack);
    EXPECT_LE(d.at - t0, kTimeout + kSlack);
    EXPECT_LT(blocked_ref.csg(), 0) << "it timed out off slot";
    EXPECT_TRUE(kshim::log_contains("job timeout"));
    EXPECT_EQ(group_state(blocked).state, static_cast<u32>(DRM_PANTHOR_GROUP_STATE_TIMEDOUT));

    ASSERT_EQ(syncobj_wait(syncs, 20000 * kMs), 0);
    for (u32 h : syncs)
        EXPECT_EQ(fence_status(h), 1);
    groups.push_back(blocked);
    for (u32 h : groups)
        EXPECT_EQ(group_destroy(h), 0);
}

}  // namespace
}  // namespace panthor::testing
