// The CSF scheduler's tick with more work than CSG slots (panthor_sched_tick.cpp): rotation of
// groups through the 8 slots within a bounded number of ticks, the periodic tick that runs only
// while rotation is needed, priorities (REALTIME preempting in a partial tick, the others waiting
// for a full one), idle and SYNC_WAIT-blocked groups giving up their slots, CSG priorities
// reprogrammed by EP_CFG, and the GPU address-space limit.
//
// Residency is observed from the GPU side: every job's stream first stores a marker, which only
// happens once its group is on a slot, and the test records the virtual time each marker appears
// (run_until's predicate runs after every task switch and event).
#include <algorithm>
#include <set>

#include "kernel_shim/time.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_sched.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;

constexpr u32 kSlots = 8;  // McuConfig::group_num
// Upstream's 10 ms tick period is msecs_to_jiffies(10): 3 jiffies at HZ=250, i.e. 12 ms.
constexpr ktime_t kTickPeriod = static_cast<ktime_t>(kshim::msecs_to_jiffies(10)) * kshim::TICK_NSEC;
static_assert(kTickPeriod == 12 * kshim::NSEC_PER_MSEC);

// Data-area layout: markers, results, one gate word.
constexpr u64 kMarkers = 0x0;
constexpr u64 kResults = 0x2000;
constexpr u64 kGate = 0x4000;
u64 marker_off(u32 i) {
    return kMarkers + 8 * i;
}
u64 result_off(u32 i) {
    return kResults + 8 * i;
}

class SchedRotation : public SchedTest {
protected:
    void SetUp() override {
        SchedTest::SetUp();
        // HIGH and REALTIME groups need CAP_SYS_NICE (or DRM master).
        set_cap_sys_nice(true);
    }

    u64 shader(mock_hw::MockShader::Kind kind, ktime_t duration, u64 addr = 0, u64 value = 0) {
        mock_hw::MockShader sh;
        sh.kind = kind;
        sh.duration_ns = static_cast<u64>(duration);
        sh.addr = addr;
        sh.value = value;
        return put_shader(sh);
    }

    // Stores the 64-bit `value` at GPU address `va` (registers r2-r5).
    static void append_store(std::vector<u64>& ins, u64 va, u64 value) {
        ins.push_back(cs::move48(2, va));
        ins.push_back(cs::move48(4, value & 0xFFFFFFFFFFFFull));
        ins.push_back(cs::move32(5, static_cast<u32>(value >> 32)));
        ins.push_back(cs::store_multiple(4, 2, 0x3));
    }
    // `pieces` compute jobs of `piece` each, one after the other; the last writes `value` at data
    // offset `res`.
    void append_compute(std::vector<u64>& ins, u32 pieces, ktime_t piece, u64 res, u64 value) {
        const u64 run = pieces > 1 ? shader(mock_hw::MockShader::Run, piece) : 0;
        const u64 last = shader(mock_hw::MockShader::Write, piece, data_va(res), value);
        for (u32 p = 0; p < pieces; p++) {
            ins.push_back(cs::move48(16, p + 1 == pieces ? last : run));
            ins.push_back(cs::run_compute(1));
            ins.push_back(cs::wait(1));
        }
    }

    struct Job {
        u64 stream = 0;
        u32 size = 0;
    };
    Job make_job(const std::vector<u64>& ins) { return {put_stream(ins), static_cast<u32>(ins.size() * 8)}; }
    // Marker `marker` at marker_off(i), then the compute pieces, result `value` at result_off(i).
    Job marked_job(u32 i, u32 pieces, ktime_t piece, u64 value) {
        std::vector<u64> ins;
        append_store(ins, data_va(marker_off(i)), 1000 + i);
        append_compute(ins, pieces, piece, result_off(i), value);
        return make_job(ins);
    }
    u32 submit_job(u32 group, const Job& j, drm::drm_file* f = nullptr) {
        const u32 s = syncobj_create();
        EXPECT_EQ(submit(group, {{.queue = 0, .stream = j.stream, .size = j.size, .syncs = {signal_op(s)}}}, f), 0);
        return s;
    }

    panthor_sched_stats stats() { return panthor_sched_get_stats(ptdev); }

    // Runs until every data offset in `offs` holds a non-zero value; first[i] gets the virtual
    // time it was first seen non-zero (-1: never). False on timeout.
    bool watch(const std::vector<u64>& offs, std::vector<ktime_t>& first, ktime_t timeout,
               const std::function<void()>& also = nullptr) {
        first.assign(offs.size(), -1);
        return run_until(
            [&] {
                if (also)
                    also();
                bool all = true;
                for (size_t i = 0; i < offs.size(); i++) {
                    if (first[i] < 0 && read_data(offs[i]) != 0)
                        first[i] = kshim::ktime_get();
                    all &= first[i] >= 0;
                }
                return all;
            },
            timeout);
    }
    bool seen(u64 off) { return read_data(off) != 0; }
    // The status of binary syncobj `handle` once it signals within `timeout` (0: it did not).
    int fence_of_status_after(u32 handle, ktime_t timeout) {
        return syncobj_wait({handle}, timeout) == 0 ? fence_status(handle) : 0;
    }

    // Lets time pass (100 us steps) until a full tick has run; false if none within `timeout`.
    bool wait_full_tick(ktime_t timeout = 3 * kTickPeriod) {
        const u64 f0 = stats().full_ticks;
        for (ktime_t t = 0; t < timeout; t += 100 * kshim::NSEC_PER_USEC) {
            advance(100 * kshim::NSEC_PER_USEC);
            if (stats().full_ticks != f0)
                return true;
        }
        return false;
    }
    // Lets time pass (1 ms steps) until the periodic tick is off; false if it stays on.
    bool wait_tick_stopped(ktime_t timeout) {
        for (ktime_t t = 0; t < timeout; t += kMs) {
            if (!stats().ticking)
                return true;
            advance(kMs);
        }
        return !stats().ticking;
    }

    // CSG slots the FW runs (state START or RESUME acked), with the CSG priority the FW latched
    // (status_ep_req[31:28], what the last EP_CFG or START carried) and the AS (config[3:0]).
    struct SlotView {
        u32 slot, prio, as;
    };
    std::vector<SlotView> running_slots() {
        std::vector<SlotView> v;
        for (u32 i = 0; i < kSlots; i++) {
            panthor_fw_csg_iface* csg = panthor_fw_get_csg_iface(ptdev, i);
            const u32 state = csg->output->ack & CSG_STATE_MASK;
            if (state == CSG_STATE_START || state == CSG_STATE_RESUME)
                v.push_back({i, csg->output->status_ep_req >> 28, csg->input->config & 0xF});
        }
        return v;
    }

    void expect_all_done(const std::vector<u32>& syncs, ktime_t timeout) {
        ASSERT_EQ(syncobj_wait(syncs, timeout), 0);
        for (u32 s : syncs)
            EXPECT_EQ(fence_status(s), 1);
    }
};

// 40 groups on 8 slots, each with a 100 ms job: rotation brings every group onto a slot long
// before any slot would free up by itself, every job completes with its result, and the periodic
// tick stops once the work is done.
//
// The bound: with every resident group busy, a full tick keeps the resident groups but the one
// with the highest CSG priority, then fills the freed slot from the head of the runnable list
// (FIFO; the evicted group goes to its tail), so exactly one waiting group gets on per full tick.
// The k-th of the N - 8 waiting groups is on after k full ticks: every group within N - 8 full
// ticks, i.e. (N - 8) tick periods after the submissions, plus one period for the phase of the
// first full tick. Without rotation the last group would wait for 4 rounds of 8 jobs on 4 cores
// (800 ms) instead of 33 * 12 = 396 ms.
TEST_F(SchedRotation, FortyGroupsAllGetASlotWithinTheRotationBound) {
    constexpr u32 N = 40;
    std::vector<u32> groups, syncs;
    std::vector<u64> markers;
    for (u32 i = 0; i < N; i++)
        groups.push_back(group_create());
    const panthor_sched_stats before = stats();
    const ktime_t t0 = kshim::ktime_get();
    for (u32 i = 0; i < N; i++) {
        syncs.push_back(submit_job(groups[i], marked_job(i, 1, 100 * kMs, 0x5000 + i)));
        markers.push_back(marker_off(i));
    }

    std::vector<ktime_t> first;
    ASSERT_TRUE(watch(markers, first, 2000 * kMs));
    const panthor_sched_stats all_on = stats();
    EXPECT_TRUE(all_on.ticking) << "40 busy groups on 8 slots need the periodic tick";

    const ktime_t bound = static_cast<ktime_t>(N - kSlots + 1) * kTickPeriod;
    ktime_t last = 0;
    for (u32 i = 0; i < N; i++) {
        EXPECT_LE(first[i] - t0, bound) << "group " << i << " waited too long for a slot";
        last = std::max(last, first[i] - t0);
    }
    // One group per full tick, not a burst of full ticks (nor of rotations) at each period.
    EXPECT_LE(all_on.full_ticks - before.full_ticks, N - kSlots + 1);
    EXPECT_GT(last, 100 * kMs / 2) << "all on within half a job's duration: rotation is not paced by the tick";
    EXPECT_GE(all_on.csg_suspends - before.csg_suspends, N - kSlots);

    expect_all_done(syncs, 10000 * kMs);
    for (u32 i = 0; i < N; i++)
        EXPECT_EQ(read_data(result_off(i)), 0x5000u + i) << i;

    // Drained: the tick stops (once the last groups reported idle), and stays off.
    advance(2 * kTickPeriod);
    const panthor_sched_stats drained = stats();
    EXPECT_FALSE(drained.ticking);
    advance(10 * kTickPeriod);
    EXPECT_EQ(stats().ticks, drained.ticks) << "ticks without work to rotate";
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// One busy group of each priority: all fit, none shares a priority with another, so there is
// nothing to rotate and no periodic tick.
TEST_F(SchedRotation, NoPeriodicTickWithOneBusyGroupPerPriority) {
    EXPECT_FALSE(stats().ticking);
    std::vector<u32> groups, syncs;
    std::vector<u64> markers;
    for (u32 prio = 0; prio < 4; prio++) {
        groups.push_back(group_create(1, static_cast<u8>(prio)));
        syncs.push_back(submit_job(groups.back(), marked_job(prio, 1, 200 * kMs, 1)));
        markers.push_back(marker_off(prio));
    }
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch(markers, first, 5 * kMs));
    advance(kMs);
    const panthor_sched_stats s = stats();
    EXPECT_FALSE(s.ticking);
    EXPECT_EQ(s.used_csg_slots, 4u);
    advance(8 * kTickPeriod);
    EXPECT_EQ(stats().ticks, s.ticks) << "a tick ran with nothing to rotate";
    expect_all_done(syncs, 1000 * kMs);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// Two busy groups of one priority on slots: the tick keeps running so that they take turns at the
// higher CSG priority, which EP_CFG reprograms on the resident slots (no suspend, no restart).
TEST_F(SchedRotation, BusyGroupsOfOnePriorityTakeTurnsAtTheTopCsgPriority) {
    const u32 a = group_create(), b = group_create();
    const u32 sa = submit_job(a, marked_job(0, 1, 500 * kMs, 1));
    const u32 sb = submit_job(b, marked_job(1, 1, 500 * kMs, 2));
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch({marker_off(0), marker_off(1)}, first, 5 * kMs));
    ASSERT_TRUE(wait_full_tick());
    EXPECT_TRUE(stats().ticking);

    std::vector<SlotView> prev = running_slots();
    ASSERT_EQ(prev.size(), 2u);
    EXPECT_EQ(std::set<u32>({prev[0].prio, prev[1].prio}), std::set<u32>({15u, 14u}));
    const panthor_sched_stats s0 = stats();
    for (int round = 0; round < 4; round++) {
        ASSERT_TRUE(wait_full_tick());
        std::vector<SlotView> cur = running_slots();
        ASSERT_EQ(cur.size(), 2u);
        for (u32 i = 0; i < 2; i++) {
            EXPECT_EQ(cur[i].slot, prev[i].slot) << "a group moved";
            EXPECT_NE(cur[i].prio, prev[i].prio) << "round " << round << ": CSG priorities did not rotate";
            // The driver's request and what the FW latched agree.
            EXPECT_EQ(panthor_fw_get_csg_iface(ptdev, cur[i].slot)->input->endpoint_req >> 28, cur[i].prio);
        }
        prev = cur;
    }
    const panthor_sched_stats s1 = stats();
    EXPECT_EQ(s1.csg_starts, s0.csg_starts);
    EXPECT_EQ(s1.csg_suspends, s0.csg_suspends);
    expect_all_done({sa, sb}, 2000 * kMs);
    EXPECT_EQ(read_data(result_off(0)), 1u);
    EXPECT_EQ(read_data(result_off(1)), 2u);
    EXPECT_EQ(group_destroy(a), 0);
    EXPECT_EQ(group_destroy(b), 0);
}

// All slots taken by busy LOW groups: a REALTIME submission preempts one of them at once (a
// partial tick), a MEDIUM one waits for the next full tick.
TEST_F(SchedRotation, RealtimePreemptsAtOnceMediumWaitsForTheFullTick) {
    std::vector<u32> groups, syncs;
    std::vector<u64> markers;
    for (u32 i = 0; i < kSlots; i++) {
        groups.push_back(group_create(1, PANTHOR_GROUP_PRIORITY_LOW));
        syncs.push_back(submit_job(groups.back(), marked_job(i, 1, 1000 * kMs, 1)));
        markers.push_back(marker_off(i));
    }
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch(markers, first, 5 * kMs));
    ASSERT_EQ(stats().used_csg_slots, kSlots);

    // Right after a full tick: the next one is a whole period away.
    ASSERT_TRUE(wait_full_tick());
    const ktime_t t_tick = kshim::ktime_get();
    const panthor_sched_stats s0 = stats();

    const u32 rt = group_create(1, PANTHOR_GROUP_PRIORITY_REALTIME);
    syncs.push_back(submit_job(rt, marked_job(20, 1, 5 * kMs, 1)));
    ASSERT_TRUE(watch({marker_off(20)}, first, kMs)) << "REALTIME did not preempt at once";
    const panthor_sched_stats s1 = stats();
    EXPECT_EQ(s1.full_ticks, s0.full_ticks) << "not a partial tick";
    EXPECT_EQ(s1.csg_suspends, s0.csg_suspends + 1) << "one LOW group makes room";

    const u32 med = group_create(1, PANTHOR_GROUP_PRIORITY_MEDIUM);
    syncs.push_back(submit_job(med, marked_job(21, 1, 5 * kMs, 1)));
    advance(t_tick + kTickPeriod - kMs - kshim::ktime_get());
    EXPECT_FALSE(seen(marker_off(21))) << "MEDIUM got a slot before the full tick";
    EXPECT_EQ(stats().full_ticks, s0.full_ticks);
    ASSERT_TRUE(watch({marker_off(21)}, first, 3 * kMs));
    EXPECT_EQ(stats().full_ticks, s0.full_ticks + 1);

    expect_all_done(syncs, 10000 * kMs);
    groups.push_back(rt);
    groups.push_back(med);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// Four groups per priority (16 on 8 slots, 4 cores), submitted LOW first: each runs 10 jobs of
// 5 ms one after the other. The higher priorities hold the slots and, through their higher CSG
// priorities, the cores, so every REALTIME group finishes before any HIGH one, and so on down.
// (Jobs are short so that cores change hands often; the mock does not preempt a running job for
// a higher CSG priority. Whatever interleaving the first tick sees, a lower group gets at most
// one tick period of work done before the higher ones take over, far less than its 50 ms.)
TEST_F(SchedRotation, CompletionOrderFollowsPriority) {
    constexpr u32 kPerPrio = 4;
    std::vector<u32> groups, syncs;
    std::vector<u64> results;
    for (u32 prio = 0; prio < 4; prio++) {
        for (u32 k = 0; k < kPerPrio; k++) {
            const u32 i = prio * kPerPrio + k;
            groups.push_back(group_create(1, static_cast<u8>(prio)));
            syncs.push_back(submit_job(groups.back(), marked_job(i, 10, 5 * kMs, 100 + i)));
            results.push_back(result_off(i));
        }
    }
    std::vector<ktime_t> done;
    ASSERT_TRUE(watch(results, done, 2000 * kMs));
    for (u32 prio = 3; prio > 0; prio--) {
        ktime_t last_higher = 0, first_lower = kshim::KTIME_MAX;
        for (u32 k = 0; k < kPerPrio; k++) {
            last_higher = std::max(last_higher, done[prio * kPerPrio + k]);
            first_lower = std::min(first_lower, done[(prio - 1) * kPerPrio + k]);
        }
        EXPECT_LT(last_higher, first_lower) << "priority " << prio << " vs " << prio - 1;
    }
    expect_all_done(syncs, 1000 * kMs);
    for (u32 i = 0; i < 4 * kPerPrio; i++)
        EXPECT_EQ(read_data(result_off(i)), 100u + i);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// Eight groups ran a short job and sit idle on the slots (the tick is off): a ninth group with
// work gets a slot at once, an idle group making room.
TEST_F(SchedRotation, IdleGroupsGiveUpTheirSlots) {
    std::vector<u32> groups, syncs;
    for (u32 i = 0; i < kSlots; i++) {
        groups.push_back(group_create());
        syncs.push_back(submit_job(groups.back(), marked_job(i, 1, kMs, 1)));
    }
    expect_all_done(syncs, 1000 * kMs);
    advance(2 * kTickPeriod);
    const panthor_sched_stats s0 = stats();
    EXPECT_EQ(s0.used_csg_slots, kSlots);
    EXPECT_FALSE(s0.ticking);

    const u32 g = group_create();
    const u32 s = submit_job(g, marked_job(10, 1, kMs, 1));
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch({marker_off(10)}, first, kMs)) << "the new group waited behind idle groups";
    EXPECT_EQ(stats().csg_suspends, s0.csg_suspends + 1);
    expect_all_done({s}, 1000 * kMs);
    groups.push_back(g);
    for (u32 h : groups)
        EXPECT_EQ(group_destroy(h), 0);
}

// Eight groups whose queue blocks in SYNC_WAIT on a gate: the FW reports them idle, so the tick
// stops and a ninth group with work takes a slot at once. That group opens the gate (a GPU
// SYNC_SET64), and every blocked group, the evicted one included, then completes.
TEST_F(SchedRotation, SyncWaitBlockedGroupsCountAsIdle) {
    std::vector<u32> groups, syncs;
    std::vector<u64> markers;
    for (u32 i = 0; i < kSlots; i++) {
        std::vector<u64> ins;
        append_store(ins, data_va(marker_off(i)), 1);
        ins.push_back(cs::move48(6, data_va(kGate)));
        ins.push_back(cs::move48(8, 0));
        ins.push_back(cs::sync_wait64(6, 8, cs::GREATER));
        append_compute(ins, 1, kMs, result_off(i), 10 + i);
        groups.push_back(group_create());
        syncs.push_back(submit_job(groups.back(), make_job(ins)));
        markers.push_back(marker_off(i));
    }
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch(markers, first, 5 * kMs));
    ASSERT_TRUE(wait_tick_stopped(4 * kTickPeriod)) << "blocked groups kept the tick running";
    const panthor_sched_stats s0 = stats();
    EXPECT_EQ(s0.used_csg_slots, kSlots);
    for (u32 s : syncs)
        EXPECT_EQ(fence_status(s), 0);

    std::vector<u64> ins;
    append_store(ins, data_va(marker_off(10)), 1);
    append_compute(ins, 1, 2 * kMs, result_off(10), 99);
    ins.push_back(cs::move48(6, data_va(kGate)));
    ins.push_back(cs::move48(8, 1));
    ins.push_back(cs::sync_set64(6, 8));
    const u32 opener = group_create();
    const u32 so = submit_job(opener, make_job(ins));
    ASSERT_TRUE(watch({marker_off(10)}, first, kMs)) << "the new group waited behind blocked groups";
    EXPECT_EQ(stats().csg_suspends, s0.csg_suspends + 1);

    syncs.push_back(so);
    expect_all_done(syncs, 1000 * kMs);
    for (u32 i = 0; i < kSlots; i++)
        EXPECT_EQ(read_data(result_off(i)), 10u + i);
    EXPECT_EQ(read_data(result_off(10)), 99u);
    groups.push_back(opener);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// Nine groups block in SYNC_WAIT on one gate (idle: the tick is off, and one of them is evicted
// for want of a slot); a tenth gets a slot, which takes a second one off, and opens the gate from
// the GPU. All ten are then busy for 300 ms on 8 slots: the two unblocked off-slot groups must
// get slots through rotation, within (2 waiting groups + 1) tick periods, not once the resident
// groups go idle.
TEST_F(SchedRotation, GroupsUnblockedOffSlotGetSlotsByRotation) {
    constexpr u32 kBlocked = 9;
    std::vector<u32> groups, syncs;
    std::vector<u64> markers, after_gate;
    for (u32 i = 0; i < kBlocked; i++) {
        std::vector<u64> ins;
        append_store(ins, data_va(marker_off(i)), 1);
        ins.push_back(cs::move48(6, data_va(kGate)));
        ins.push_back(cs::move48(8, 0));
        ins.push_back(cs::sync_wait64(6, 8, cs::GREATER));
        append_store(ins, data_va(marker_off(20 + i)), 1);
        append_compute(ins, 1, 300 * kMs, result_off(i), 1);
        groups.push_back(group_create());
        syncs.push_back(submit_job(groups.back(), make_job(ins)));
        markers.push_back(marker_off(i));
        after_gate.push_back(marker_off(20 + i));
    }
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch(markers, first, 5 * kMs));
    ASSERT_TRUE(wait_tick_stopped(4 * kTickPeriod));

    std::vector<u64> ins;
    append_store(ins, data_va(marker_off(10)), 1);
    append_compute(ins, 1, 5 * kMs, result_off(30), 1);
    ins.push_back(cs::move48(6, data_va(kGate)));
    ins.push_back(cs::move48(8, 1));
    ins.push_back(cs::sync_set64(6, 8));
    append_compute(ins, 1, 300 * kMs, result_off(10), 1);
    groups.push_back(group_create());
    syncs.push_back(submit_job(groups.back(), make_job(ins)));
    ASSERT_TRUE(watch({marker_off(10)}, first, kMs));
    ASSERT_TRUE(watch({kGate}, first, 20 * kMs));
    const ktime_t t_gate = kshim::ktime_get();

    ASSERT_TRUE(watch(after_gate, first, 2000 * kMs));
    for (u32 i = 0; i < kBlocked; i++) {
        EXPECT_LE(first[i] - t_gate, 3 * kTickPeriod)
            << "group " << i << " unblocked off-slot waited " << (first[i] - t_gate) / kMs << " ms for a slot";
    }
    expect_all_done(syncs, 3000 * kMs);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// Groups on 9 VMs, 2 per VM: the GPU has 7 address spaces for them (AS_PRESENT 0xFF, AS 0 is the
// MCU's), so at most 7 VMs are on slots at once, and yet every job completes.
TEST_F(SchedRotation, MoreVmsThanAddressSpaces) {
    constexpr u32 kVms = 9;
    std::vector<u32> vms = {vm_};
    for (u32 v = 1; v < kVms; v++) {
        vms.push_back(vm_create());
        ASSERT_EQ(vm_map(vms.back(), bo_, kVa, kBoSize), 0);
    }
    std::vector<u32> groups, syncs;
    std::vector<u64> results;
    for (u32 i = 0; i < 2 * kVms; i++) {
        u32 h = 0;
        ASSERT_EQ(group_create_ret(&h, {{}}, PANTHOR_GROUP_PRIORITY_MEDIUM, nullptr, vms[i % kVms]), 0);
        groups.push_back(h);
        syncs.push_back(submit_job(h, marked_job(i, 4, 10 * kMs, 7 + i)));
        results.push_back(result_off(i));
    }
    size_t max_as = 0;
    bool as0_used = false;
    std::vector<ktime_t> done;
    ASSERT_TRUE(watch(results, done, 5000 * kMs, [&] {
        std::set<u32> ases;
        for (const SlotView& v : running_slots()) {
            ases.insert(v.as);
            as0_used |= v.as == 0;
        }
        max_as = std::max(max_as, ases.size());
    }));
    EXPECT_EQ(max_as, 7u) << "address spaces in use by groups at once";
    EXPECT_FALSE(as0_used);
    expect_all_done(syncs, 1000 * kMs);
    for (u32 i = 0; i < 2 * kVms; i++)
        EXPECT_EQ(read_data(result_off(i)), 7u + i);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// ---- the tick rules of the reworked tick (upstream's Nov 2025 series) ----

// CS slots are programmed with IDLE_SYNC_WAIT | IDLE_EMPTY | STATE=START only: the driver no
// longer asks the FW for EXTRACT events (it never handled them).
TEST_F(SchedRotation, CsSlotProgrammingRequestsNoExtractEvents) {
    u32 g = 0;
    ASSERT_EQ(group_create_ret(&g, {{}, {}}), 0);
    const u32 s = submit_job(g, marked_job(0, 1, 10 * kMs, 1));
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch({marker_off(0)}, first, 5 * kMs));
    const std::vector<SlotView> slots = running_slots();
    ASSERT_EQ(slots.size(), 1u);
    for (u32 cs_id = 0; cs_id < 2; cs_id++) {
        panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, slots[0].slot, cs_id);
        const u32 req = cs_iface->input->req;
        EXPECT_EQ(req & CS_STATE_MASK, CS_STATE_START) << cs_id;
        EXPECT_NE(req & CS_IDLE_SYNC_WAIT, 0u) << cs_id;
        EXPECT_NE(req & CS_IDLE_EMPTY, 0u) << cs_id;
        EXPECT_EQ(req & CS_EXTRACT_EVENT, 0u) << cs_id;
    }
    expect_all_done({s}, 1000 * kMs);
    EXPECT_EQ(group_destroy(g), 0);
}

// A partial tick (forced mid-period, here by a REALTIME submission) re-picks the resident groups
// and lets REALTIME groups in, nothing else: a MEDIUM group submitted just before stays off slot
// until the next full tick, and only one LOW group makes room.
TEST_F(SchedRotation, PartialTickLetsOnlyRealtimeGroupsPreempt) {
    std::vector<u32> groups, syncs;
    std::vector<u64> markers;
    for (u32 i = 0; i < kSlots; i++) {
        groups.push_back(group_create(1, PANTHOR_GROUP_PRIORITY_LOW));
        syncs.push_back(submit_job(groups.back(), marked_job(i, 1, 1000 * kMs, 1)));
        markers.push_back(marker_off(i));
    }
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch(markers, first, 5 * kMs));
    ASSERT_TRUE(wait_full_tick());
    const ktime_t t_tick = kshim::ktime_get();
    const panthor_sched_stats s0 = stats();

    const u32 med = group_create(1, PANTHOR_GROUP_PRIORITY_MEDIUM);
    syncs.push_back(submit_job(med, marked_job(21, 1, 5 * kMs, 1)));
    // Busy past the next full tick: a REALTIME group going idle would free a slot for anyone.
    const u32 rt = group_create(1, PANTHOR_GROUP_PRIORITY_REALTIME);
    syncs.push_back(submit_job(rt, marked_job(20, 1, 50 * kMs, 1)));
    ASSERT_TRUE(watch({marker_off(20)}, first, kMs)) << "REALTIME did not preempt at once";
    EXPECT_EQ(stats().full_ticks, s0.full_ticks) << "not a partial tick";
    EXPECT_EQ(stats().csg_suspends, s0.csg_suspends + 1) << "the partial tick let more than the REALTIME group in";
    advance(t_tick + kTickPeriod - kMs - kshim::ktime_get());
    EXPECT_FALSE(seen(marker_off(21))) << "MEDIUM got a slot in a partial tick";
    ASSERT_TRUE(watch({marker_off(21)}, first, 3 * kMs));
    EXPECT_EQ(stats().full_ticks, s0.full_ticks + 1);

    expect_all_done(syncs, 10000 * kMs);
    groups.push_back(med);
    groups.push_back(rt);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// Every slot is taken and the tick runs (seven busy LOW groups rotate), but the last tick saw an
// idle group on a slot (might_have_idle_groups): a submission to a group off slot ticks at once
// and takes the idle group's slot, instead of waiting for the next full tick.
TEST_F(SchedRotation, SubmitAfterATickThatSawIdleGroupsTicksAtOnce) {
    std::vector<u32> groups, syncs;
    std::vector<u64> markers;
    for (u32 i = 0; i < kSlots; i++) {
        groups.push_back(group_create(1, PANTHOR_GROUP_PRIORITY_LOW));
        syncs.push_back(submit_job(groups.back(), marked_job(i, 1, i == 0 ? kMs : 1000 * kMs, 1)));
        markers.push_back(marker_off(i));
    }
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch(markers, first, 5 * kMs));
    ASSERT_EQ(fence_of_status_after(syncs[0], 20 * kMs), 1);
    // Right after a full tick: the next one is a whole period away.
    ASSERT_TRUE(wait_full_tick());
    const panthor_sched_stats s0 = stats();
    ASSERT_TRUE(s0.ticking);
    ASSERT_EQ(s0.used_csg_slots, kSlots);

    const u32 med = group_create(1, PANTHOR_GROUP_PRIORITY_MEDIUM);
    syncs.push_back(submit_job(med, marked_job(20, 1, 5 * kMs, 1)));
    ASSERT_TRUE(watch({marker_off(20)}, first, kMs)) << "the submission waited for the next full tick";
    EXPECT_EQ(stats().full_ticks, s0.full_ticks) << "not a partial tick";
    EXPECT_EQ(stats().csg_suspends, s0.csg_suspends + 1) << "the idle group makes room";

    expect_all_done(syncs, 10000 * kMs);
    groups.push_back(med);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// The tick is off and the only group sits idle on its slot: a job pushed to it rings the doorbell
// and resumes the tick (sched_resume_tick), which re-evaluates the group while the job runs.
TEST_F(SchedRotation, SubmitToAnIdleResidentGroupResumesTheTick) {
    const u32 g = group_create();
    expect_all_done({submit_job(g, marked_job(0, 1, kMs, 1))}, 100 * kMs);
    // (Before the device autosuspends, which would take the group off its slot.)
    ASSERT_TRUE(wait_tick_stopped(10 * kTickPeriod));
    const panthor_sched_stats s0 = stats();
    ASSERT_EQ(s0.used_csg_slots, 1u);

    const u32 s = submit_job(g, marked_job(1, 1, 50 * kMs, 2));
    advance(kMs);
    EXPECT_GT(stats().ticks, s0.ticks) << "no tick while the resident group runs again";
    EXPECT_EQ(fence_status(s), 0);
    EXPECT_EQ(stats().csg_starts, s0.csg_starts) << "it stayed on its slot";
    expect_all_done({s}, 1000 * kMs);
    EXPECT_EQ(read_data(result_off(1)), 2u);
    EXPECT_EQ(group_destroy(g), 0);
}

// A REALTIME group blocked in SYNC_WAIT is idle and loses its slot to eight busy LOW groups. When
// the CPU opens its gate, the next SYNC_UPDATE unblocks it off slot, and that asks for a tick at
// once: it preempts a LOW group well before the next full tick.
TEST_F(SchedRotation, RealtimeGroupUnblockedOffSlotPreemptsAtOnce) {
    std::vector<u64> ins;
    append_store(ins, data_va(marker_off(0)), 1);
    ins.push_back(cs::move48(6, data_va(kGate)));
    ins.push_back(cs::move48(8, 0));
    ins.push_back(cs::sync_wait64(6, 8, cs::GREATER));
    append_store(ins, data_va(marker_off(1)), 1);
    append_compute(ins, 1, kMs, result_off(0), 5);
    const u32 rt = group_create(1, PANTHOR_GROUP_PRIORITY_REALTIME);
    std::vector<u32> syncs = {submit_job(rt, make_job(ins))};
    std::vector<ktime_t> first;
    ASSERT_TRUE(watch({marker_off(0)}, first, 5 * kMs));
    ASSERT_TRUE(wait_tick_stopped(10 * kTickPeriod));
    const panthor_sched_stats s0 = stats();

    // Eight LOW groups, each with a chain of 2 ms jobs: they complete (SYNC_UPDATE) all the time.
    std::vector<u32> groups;
    for (u32 i = 0; i < kSlots; i++) {
        groups.push_back(group_create(1, PANTHOR_GROUP_PRIORITY_LOW));
        for (u32 j = 0; j < 25; j++)
            syncs.push_back(submit_job(groups.back(), marked_job(10 + i, 1, 2 * kMs, 1)));
    }
    advance(5 * kMs);
    ASSERT_EQ(stats().csg_suspends, s0.csg_suspends + 1) << "the blocked REALTIME group kept its slot";

    // Open the gate right after a full tick: the next one is a whole period away.
    ASSERT_TRUE(wait_full_tick());
    const panthor_sched_stats s1 = stats();
    ASSERT_TRUE(s1.ticking);
    write_data<u64>(kGate, 1);
    ASSERT_TRUE(watch({marker_off(1)}, first, 4 * kMs)) << "the unblocked REALTIME group waited for a full tick";
    EXPECT_EQ(stats().full_ticks, s1.full_ticks) << "not a partial tick";

    expect_all_done(syncs, 10000 * kMs);
    EXPECT_EQ(read_data(result_off(0)), 5u);
    groups.push_back(rt);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

}  // namespace
}  // namespace panthor::testing
