// The lives of groups and their jobs on the mock G610 (simulated runtime): destroy and file close
// with jobs in flight, what GROUP_GET_STATE reports after each way a job can end (done, timed out
// by the FW progress timer or by the queue's own timer, CS fault, CS fatal), runtime PM while
// groups are active or blocked, system suspend and GPU reset with jobs in flight, and SYNC_WAIT
// between queues and on values the CPU writes (the driver's sync_upd_work path).
#include <cstring>
#include <string>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/task_comm.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_sched_priv.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using kshim::dma_fence;
using kshim::ktime_t;
using mock_hw::MockShader;

constexpr u32 kJobTimeoutMs = 5000;
// PROGRESS_TIMEOUT_CYCLES at the mock's 1 GHz GPU clock: ~2.62 s without a completed job.
constexpr ktime_t kProgressTimeout = static_cast<ktime_t>((PROGRESS_TIMEOUT_CYCLES >> 10) << 10);

class SchedLifecycleTest : public SchedTest {
protected:
    void SetUp() override {
        SchedTest::SetUp();
        kshim::log_clear();
    }

    bool has_pm_ref() {
        kshim::MutexGuard g(ptdev->scheduler->lock);
        return ptdev->scheduler->pm.has_ref;
    }
    panthor_sched_stats stats() { return panthor_sched_get_stats(ptdev); }
    // The CSG slot of this file's group `handle` (-1: not resident).
    int csg_of(u32 handle) {
        panthor_group_pool* pool = static_cast<panthor_file*>(file->driver_priv)->groups;
        panthor_group* group = pool->xa.load_locked(handle, [](panthor_group* g) { return group_get(g); });
        if (!group)
            return -2;
        int csg;
        {
            kshim::MutexGuard g(ptdev->scheduler->lock);
            csg = group->csg_id;
        }
        group_put(group);
        return csg;
    }

    // A compute job holding a core for `duration`, then writing `value` at data offset `off`.
    u64 compute_stream(u64 off, u64 value, ktime_t duration) {
        return put_stream(
            {cs::move48(16, put_shader(shader(MockShader::Write, duration, data_va(off), value))), cs::run_compute(1)});
    }
    u64 run_stream(ktime_t duration) {
        return put_stream({cs::move48(16, put_shader(shader(MockShader::Run, duration))), cs::run_compute(1)});
    }
    u64 hang_stream() {
        return put_stream({cs::move48(16, put_shader(shader(MockShader::Hang, 0))), cs::run_compute(1)});
    }
    // A compute job that ends with CS_FAULT `exception`.
    u64 fault_stream(u32 exception) {
        return put_stream(
            {cs::move48(16, put_shader(shader(MockShader::Fault, 1 * kMs, 0, exception))), cs::run_compute(1)});
    }
    // Stores 1 at `before_off`; loads r10 = `reg`; waits until the u64 at `flag_off` is > 0; then
    // stores r10 (32 bits) at `after_off`. What it stores after the wait shows the stream's
    // registers survived whatever happened while it waited.
    u64 blocked_stream(u64 flag_off, u64 before_off, u64 after_off, u32 reg) {
        return put_stream({cs::move48(2, data_va(before_off)), cs::move48(4, 1), cs::store_multiple(4, 2, 0x3),
                           cs::move32(10, reg), cs::move48(6, data_va(flag_off)), cs::move48(8, 0),
                           cs::sync_wait64(6, 8, cs::GREATER), cs::move48(2, data_va(after_off)),
                           cs::store_multiple(10, 2, 0x1)});
    }
    static u32 size_of(size_t instrs) { return static_cast<u32>(instrs * 8); }

    // ---- a second client: its own file, VM and CPU-mapped BO at the same VA ----
    struct Client {
        drm::drm_file* f = nullptr;
        u32 vm = 0, bo = 0;
        drm::VmArea* vma = nullptr;
        u8* cpu = nullptr;
        u64 stream_off = 0;
    };
    void open_client(Client* c) {
        ASSERT_EQ(open_file(&c->f), 0);
        c->vm = vm_create(0, c->f);
        c->bo = bo_create(kBoSize, 0, 0, c->f);
        ASSERT_EQ(vm_bind(c->vm, DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, c->bo, 0, kVa, kBoSize, c->f), 0);
        drm_panthor_bo_mmap_offset a{};
        a.handle = c->bo;
        ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &a, c->f), 0);
        ASSERT_EQ(drm::drm_mmap(c->f, a.offset, kBoSize, PROT_READ | PROT_WRITE, MAP_SHARED, &c->vma), 0);
        c->cpu = static_cast<u8*>(c->vma->addr);
    }
    void close_client(Client* c) {
        if (c->vma)
            drm::drm_munmap(c->vma);
        c->vma = nullptr;
        if (c->f)
            drm::drm_release(c->f);
        c->f = nullptr;
    }
    u64 client_stream(Client* c, const std::vector<u64>& instrs) {
        const u64 off = c->stream_off;
        std::memcpy(c->cpu + off, instrs.data(), instrs.size() * 8);
        c->stream_off = (off + instrs.size() * 8 + 63) & ~u64{63};
        return kVa + off;
    }
    // A compute job of `duration` in the client's VM (its shader at data offset `shader_off`).
    u64 client_run_stream(Client* c, u64 shader_off, ktime_t duration) {
        const MockShader sh = shader(MockShader::Run, duration);
        std::memcpy(c->cpu + kDataOffset + shader_off, &sh, sizeof(sh));
        return client_stream(c, {cs::move48(16, data_va(shader_off)), cs::run_compute(1)});
    }
    u32 client_syncobj(Client* c) {
        drm_syncobj_create a{};
        EXPECT_EQ(ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &a, c->f), 0);
        return a.handle;
    }
};

// =============================================================================================
// Destroy and close with jobs in flight

TEST_F(SchedLifecycleTest, DestroyWithJobsInFlightCancelsThemAndSparesOtherGroups) {
    const u32 victim = group_create(2);
    const u32 other = group_create();
    // Three jobs on queue 0 (one running, two behind it in the ring), one on queue 1.
    std::vector<u32> victim_syncs;
    for (u32 i = 0; i < 3; i++)
        victim_syncs.push_back(submit_stream(victim, 0, compute_stream(8 * i, 10 + i, 50 * kMs), size_of(2)));
    victim_syncs.push_back(submit_stream(victim, 1, compute_stream(24, 13, 50 * kMs), size_of(2)));
    const u32 other_sync = submit_stream(other, 0, compute_stream(64, 77, 30 * kMs), size_of(2));
    advance(5 * kMs);
    EXPECT_TRUE(has_pm_ref());

    EXPECT_EQ(group_destroy(victim), 0);
    for (u32 s : victim_syncs) {
        const Done d = wait_done(s, 100 * kMs);
        EXPECT_TRUE(d.signalled);
        EXPECT_EQ(d.status, -ECANCELED);
    }
    const Done o = wait_done(other_sync, 1000 * kMs);
    EXPECT_EQ(o.status, 1);
    EXPECT_EQ(read_data(64), 77u);
    EXPECT_EQ(group_state(other).state, 0u);

    // The victim's jobs never complete later either.
    advance(200 * kMs);
    for (u32 i = 0; i < 4; i++)
        EXPECT_EQ(read_data(8 * i), 0u) << "job " << i << " of the destroyed group wrote";
    drm_panthor_group_get_state st{};
    st.group_handle = victim;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &st), -EINVAL);
    // Nothing keeps the device awake.
    EXPECT_TRUE(wait_autosuspend());
    EXPECT_FALSE(has_pm_ref());
}

TEST_F(SchedLifecycleTest, FileCloseWithJobsInFlightCancelsThemAndSparesOtherFiles) {
    Client c;
    ASSERT_NO_FATAL_FAILURE(open_client(&c));
    u32 cg = 0;
    ASSERT_EQ(group_create_ret(&cg, {{}, {}}, PANTHOR_GROUP_PRIORITY_MEDIUM, c.f, c.vm), 0);
    std::vector<dma_fence*> fences;
    for (u32 q = 0; q < 2; q++) {
        for (u32 i = 0; i < 2; i++) {
            const u32 s = client_syncobj(&c);
            ASSERT_EQ(submit(cg,
                             {{.queue = q,
                               .stream = client_run_stream(&c, 64 * (2 * q + i), 100 * kMs),
                               .size = size_of(2),
                               .syncs = {signal_op(s)}}},
                             c.f),
                      0);
            fences.push_back(fence_of(s, c.f));
        }
    }
    const u32 mine = group_create();
    const u32 mine_sync = submit_stream(mine, 0, compute_stream(0, 5, 30 * kMs), size_of(2));
    advance(5 * kMs);

    close_client(&c);
    for (dma_fence* f : fences) {
        ASSERT_NE(f, nullptr);
        EXPECT_TRUE(run_until([&] { return kshim::dma_fence_is_signaled(f); }, 100 * kMs));
        EXPECT_EQ(kshim::dma_fence_get_status(f), -ECANCELED);
        kshim::dma_fence_put(f);
    }
    EXPECT_EQ(wait_done(mine_sync, 1000 * kMs).status, 1);
    EXPECT_EQ(read_data(0), 5u);
    EXPECT_EQ(group_state(mine).state, 0u);
    // This file's group still runs jobs.
    EXPECT_EQ(wait_done(submit_stream(mine, 0, store_stream(8, 6), size_of(4)), 1000 * kMs).status, 1);
    EXPECT_TRUE(wait_autosuspend());
}

// =============================================================================================
// GROUP_GET_STATE after each outcome

TEST_F(SchedLifecycleTest, CompletedJobsLeaveStateZero) {
    const u32 g = group_create(2);
    const u32 a = submit_stream(g, 0, compute_stream(0, 1, 5 * kMs), size_of(2));
    const u32 b = submit_stream(g, 1, store_stream(8, 2), size_of(4));
    EXPECT_EQ(wait_done(a, 1000 * kMs).status, 1);
    EXPECT_EQ(wait_done(b, 1000 * kMs).status, 1);
    const drm_panthor_group_get_state st = group_state(g);
    EXPECT_EQ(st.state, 0u);
    EXPECT_EQ(st.fatal_queues, 0u);
}

// A shader that never finishes holds a core without progress: the FW's progress timer fires
// (~2.6 s) before the queue's 5 s timeout, the group is TIMEDOUT (not innocent: it is the one that
// hung) and every job still in flight in it fails with -ETIMEDOUT, on all its queues.
TEST_F(SchedLifecycleTest, HungShaderTimesOutThroughTheProgressTimer) {
    const u32 g = group_create(2);
    const u32 other = group_create();
    const ktime_t t0 = kshim::ktime_get();
    const u32 hung = submit_stream(g, 0, hang_stream(), size_of(2));
    const u32 behind = submit_stream(g, 0, store_stream(0, 1), size_of(4));
    const u32 sibling = submit_stream(g, 1, compute_stream(8, 2, 10 * kMs), size_of(2));
    const u32 sibling_long = submit_stream(g, 1, compute_stream(16, 3, 10000 * kMs), size_of(2));

    const Done d = wait_done(hung, 20000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, -ETIMEDOUT);
    EXPECT_GE(d.at - t0, kProgressTimeout);
    EXPECT_LT(d.at - t0, static_cast<ktime_t>(kJobTimeoutMs) * kMs) << "the queue timer fired first";
    EXPECT_TRUE(kshim::log_contains("CSG_PROGRESS_TIMER_EVENT"));
    // The message names the process that created the group (here the runtime's own task).
    char comm[kshim::TASK_COMM_LEN];
    kshim::get_task_comm(comm, kshim::current());
    EXPECT_TRUE(kshim::log_contains(std::string("CSG_PROGRESS_TIMER_EVENT: pid=0, comm=") + comm)) << comm;
    EXPECT_FALSE(kshim::log_contains("job timeout"));

    EXPECT_EQ(wait_done(behind, 100 * kMs).status, -ETIMEDOUT);
    EXPECT_EQ(wait_done(sibling, 100 * kMs).status, 1) << "a job done before the timeout stays done";
    EXPECT_EQ(wait_done(sibling_long, 100 * kMs).status, -ETIMEDOUT);
    EXPECT_EQ(read_data(0), 0u);
    EXPECT_EQ(read_data(8), 2u);

    const drm_panthor_group_get_state st = group_state(g);
    EXPECT_EQ(st.state, static_cast<u32>(DRM_PANTHOR_GROUP_STATE_TIMEDOUT));
    EXPECT_EQ(st.fatal_queues, 0u);
    EXPECT_EQ(submit(g, {{.queue = 1, .stream = store_stream(24, 4), .size = size_of(4)}}), -EINVAL);

    // The other group was never affected.
    EXPECT_EQ(wait_done(submit_stream(other, 0, store_stream(32, 9), size_of(4)), 1000 * kMs).status, 1);
    EXPECT_EQ(group_state(other).state, 0u);
    EXPECT_EQ(group_destroy(g), 0);
}

// A queue blocked in SYNC_WAIT holds no core, so the FW's progress timer never fires; its group is
// idle, the device may even autosuspend; the queue's own timer (drm_sched's timeout path) keeps
// running for that wait and fails the job at 5 s.
TEST_F(SchedLifecycleTest, BlockedQueueTimesOutThroughTheQueueTimer) {
    const u32 g = group_create();
    const ktime_t t0 = kshim::ktime_get();
    const u32 s = submit_stream(g, 0, blocked_stream(0, 8, 16, 0x1234), size_of(9));
    ASSERT_TRUE(run_until([&] { return read_data(8) == 1; }, 100 * kMs));
    EXPECT_TRUE(wait_autosuspend()) << "a blocked group is idle";

    const Done d = wait_done(s, 20000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, -ETIMEDOUT);
    // Armed at run_job for 5 s in jiffies (4 ms at HZ=250): due at most one jiffy before.
    EXPECT_GE(d.at - t0, static_cast<ktime_t>(kJobTimeoutMs - 4) * kMs);
    EXPECT_LT(d.at - t0, static_cast<ktime_t>(kJobTimeoutMs + 100) * kMs);
    EXPECT_TRUE(kshim::log_contains("job timeout"));
    EXPECT_FALSE(kshim::log_contains("CSG_PROGRESS_TIMER_EVENT"));
    EXPECT_EQ(group_state(g).state, static_cast<u32>(DRM_PANTHOR_GROUP_STATE_TIMEDOUT));
    EXPECT_EQ(submit(g, {{.queue = 0, .stream = store_stream(24, 4), .size = size_of(4)}}), -EINVAL);
    // Releasing the wait now changes nothing: the group is gone.
    write_data<u64>(0, 1);
    advance(100 * kMs);
    EXPECT_EQ(read_data<u32>(16), 0u);
}

// CS_FAULT is recoverable: the faulting job fails with -EINVAL, the stream resumes after the
// job's ERROR_BARRIER, the next job on the queue and the group are fine.
TEST_F(SchedLifecycleTest, CsFaultFailsOnlyTheFaultingJob) {
    const u32 g = group_create(2);
    const u32 before = submit_stream(g, 0, store_stream(0, 1), size_of(4));
    const u32 faulty = submit_stream(g, 0, fault_stream(0x58), size_of(2));
    const u32 after = submit_stream(g, 0, store_stream(8, 2), size_of(4));
    const u32 other_queue = submit_stream(g, 1, compute_stream(16, 3, 20 * kMs), size_of(2));
    EXPECT_EQ(wait_done(before, 1000 * kMs).status, 1);
    EXPECT_EQ(wait_done(faulty, 1000 * kMs).status, -EINVAL);
    EXPECT_EQ(wait_done(after, 1000 * kMs).status, 1);
    EXPECT_EQ(wait_done(other_queue, 1000 * kMs).status, 1);
    EXPECT_EQ(read_data(8), 2u);
    EXPECT_EQ(read_data(16), 3u);
    EXPECT_TRUE(kshim::log_contains("CS_FAULT.EXCEPTION_TYPE: 0x58"));
    EXPECT_EQ(group_state(g).state, 0u);
    EXPECT_EQ(wait_done(submit_stream(g, 1, store_stream(24, 4), size_of(4)), 1000 * kMs).status, 1);
}

// CS_FATAL kills the group: FATAL_FAULT with the faulting queue in fatal_queues; that queue's
// jobs fail with -EINVAL, the other queues' with -ECANCELED; later submits are refused; other
// groups go on.
TEST_F(SchedLifecycleTest, CsFatalMarksTheQueueAndKillsTheGroup) {
    const u32 g = group_create(3);
    const u32 other = group_create();
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::CsFatal;
    spec.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    spec.cs = 1;
    spec.exception = 0x44;  // CS_ENDPOINT_FAULT
    const int id = gpu().faults().add(spec);

    const u32 q0 = submit_stream(g, 0, compute_stream(0, 1, 200 * kMs), size_of(2));
    const u32 q0_behind = submit_stream(g, 0, store_stream(8, 2), size_of(4));
    advance(2 * kMs);
    const u32 q1 = submit_stream(g, 1, compute_stream(16, 3, 10 * kMs), size_of(2));
    const u32 q1_behind = submit_stream(g, 1, store_stream(24, 4), size_of(4));
    const u32 o = submit_stream(other, 0, compute_stream(32, 5, 50 * kMs), size_of(2));

    EXPECT_EQ(wait_done(q1, 1000 * kMs).status, -EINVAL);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(wait_done(q1_behind, 1000 * kMs).status, -EINVAL);
    EXPECT_EQ(wait_done(q0, 1000 * kMs).status, -ECANCELED);
    EXPECT_EQ(wait_done(q0_behind, 1000 * kMs).status, -ECANCELED);
    const drm_panthor_group_get_state st = group_state(g);
    EXPECT_EQ(st.state, static_cast<u32>(DRM_PANTHOR_GROUP_STATE_FATAL_FAULT));
    EXPECT_EQ(st.fatal_queues, 1u << 1);
    EXPECT_TRUE(kshim::log_contains("CS_FATAL.EXCEPTION_TYPE: 0x44"));
    // Queue 2 never got work; it is refused like the others now.
    EXPECT_EQ(submit(g, {{.queue = 2, .stream = store_stream(40, 6), .size = size_of(4)}}), -EINVAL);
    EXPECT_EQ(submit(g, {{.queue = 0}}), -EINVAL);

    EXPECT_EQ(wait_done(o, 1000 * kMs).status, 1);
    EXPECT_EQ(read_data(32), 5u);
    EXPECT_EQ(group_state(other).state, 0u);
    advance(300 * kMs);
    for (u64 off : {0, 8, 16, 24, 40})
        EXPECT_EQ(read_data(off), 0u) << "offset " << off;
}

// CS_FATAL CS_UNRECOVERABLE: besides killing the group (FATAL_FAULT), the FW needs a reset; the
// other group on a slot is suspended across it and finishes its job.
TEST_F(SchedLifecycleTest, CsUnrecoverableKillsTheGroupAndResetsTheGpu) {
    count_soft_resets();
    const u32 g = group_create();
    const u32 other = group_create();
    const u32 o = submit_stream(other, 0, compute_stream(0, 1, 100 * kMs), size_of(2));
    advance(5 * kMs);
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::CsUnrecoverable;
    spec.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    const int id = gpu().faults().add(spec);
    const u32 s = submit_stream(g, 0, compute_stream(8, 2, 10 * kMs), size_of(2));

    EXPECT_EQ(wait_done(s, 1000 * kMs).status, -EINVAL);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(wait_done(o, 2000 * kMs).status, 1);
    EXPECT_EQ(read_data(0), 1u);
    EXPECT_EQ(read_data(8), 0u);
    EXPECT_EQ(soft_resets_, 1);
    const drm_panthor_group_get_state st = group_state(g);
    EXPECT_EQ(st.state, static_cast<u32>(DRM_PANTHOR_GROUP_STATE_FATAL_FAULT));
    EXPECT_EQ(st.fatal_queues, 1u);
    EXPECT_EQ(group_state(other).state, 0u);
    EXPECT_EQ(wait_done(submit_stream(other, 0, store_stream(16, 3), size_of(4)), 1000 * kMs).status, 1);
}

// =============================================================================================
// Runtime PM

TEST_F(SchedLifecycleTest, RunningJobsKeepTheDeviceAwakeThenItAutosuspends) {
    const u32 g = group_create();
    const u32 s = submit_stream(g, 0, compute_stream(0, 1, 300 * kMs), size_of(2));
    advance(10 * kMs);
    EXPECT_TRUE(has_pm_ref());
    // Well past the 50 ms autosuspend delay: the job keeps the device up.
    EXPECT_FALSE(run_until([&] { return !kshim::pm_runtime_active(dev()); }, 250 * kMs));
    EXPECT_TRUE(has_pm_ref());

    const Done d = wait_done(s, 1000 * kMs);
    EXPECT_EQ(d.status, 1);
    ASSERT_TRUE(wait_autosuspend());
    const ktime_t suspended_at = kshim::ktime_get();
    EXPECT_GE(suspended_at - d.at, 50 * kMs) << "suspended before the autosuspend delay";
    EXPECT_FALSE(has_pm_ref());
    EXPECT_EQ(stats().used_csg_slots, 0u);
}

TEST_F(SchedLifecycleTest, IdleGroupsAreSuspendedWithTheDeviceAndRunAgainAfter) {
    std::vector<u32> groups;
    std::vector<u32> syncs;
    for (u32 i = 0; i < 3; i++) {
        groups.push_back(group_create());
        syncs.push_back(submit_stream(groups.back(), 0, compute_stream(8 * i, 1 + i, 10 * kMs), size_of(2)));
    }
    ASSERT_EQ(syncobj_wait(syncs, 1000 * kMs), 0);
    EXPECT_EQ(stats().used_csg_slots, 3u) << "idle groups stay on their slots while there is room";
    const u64 suspends = stats().csg_suspends;
    ASSERT_TRUE(wait_autosuspend());
    EXPECT_EQ(stats().csg_suspends, suspends + 3);
    EXPECT_EQ(stats().used_csg_slots, 0u);

    const u64 starts = stats().csg_starts;
    syncs.clear();
    for (u32 i = 0; i < 3; i++)
        syncs.push_back(submit_stream(groups[i], 0, compute_stream(32 + 8 * i, 10 + i, 10 * kMs), size_of(2)));
    ASSERT_EQ(syncobj_wait(syncs, 1000 * kMs), 0);
    for (u32 i = 0; i < 3; i++) {
        EXPECT_EQ(fence_status(syncs[i]), 1);
        EXPECT_EQ(read_data(32 + 8 * i), 10u + i);
        EXPECT_EQ(group_state(groups[i]).state, 0u);
    }
    EXPECT_GE(stats().csg_starts, starts + 3);
    EXPECT_TRUE(wait_autosuspend());
}

// A group suspended with the device while one of its streams is blocked in SYNC_WAIT: the wait,
// the stream's position and its registers are saved and restored; once the CPU has released the
// wait (seen by the driver's poll of the off-slot waits, which wakes the device), the stream goes
// on where it was.
TEST_F(SchedLifecycleTest, BlockedGroupIsSavedAndRestoredAcrossRuntimeSuspend) {
    const u32 g = group_create();
    const u32 s = submit_stream(g, 0, blocked_stream(0, 8, 16, 0xABCD1234u), size_of(9));
    ASSERT_TRUE(run_until([&] { return read_data(8) == 1; }, 100 * kMs));
    const u64 suspends = stats().csg_suspends;
    ASSERT_TRUE(wait_autosuspend());
    EXPECT_GT(stats().csg_suspends, suspends);
    EXPECT_EQ(fence_status(s), 0);

    // The GPU sleeps on: an unset sync object does not wake it.
    advance(200 * kMs);
    EXPECT_EQ(ptdev->pm.state.load(), PANTHOR_DEVICE_PM_STATE_SUSPENDED);
    EXPECT_EQ(fence_status(s), 0);

    write_data<u64>(0, 1);
    const Done d = wait_done(s, 1000 * kMs);
    EXPECT_EQ(d.status, 1);
    EXPECT_EQ(read_data<u32>(16), 0xABCD1234u) << "the stream's registers were not restored";
    EXPECT_EQ(read_data(8), 1u);
    EXPECT_EQ(group_state(g).state, 0u);
    EXPECT_EQ(wait_done(submit_stream(g, 0, store_stream(32, 8), size_of(4)), 1000 * kMs).status, 1);
}

// Issue #31 (panvk's host vkSetEvent): a queue blocks in SYNC_WAIT, every group is idle, the
// device autosuspends with the group off its slot; then the CPU alone releases the wait (a store,
// no ioctl, no GPU sync operation, so no SYNC_UPDATE). The driver's poll of the off-slot waits
// sees it within a tick period, unblocks the group, whose tick resumes the device, and the job
// completes, long before its 5 s timeout.
TEST_F(SchedLifecycleTest, CpuReleasedWaitWakesTheSuspendedDevice) {
    const u32 g = group_create();
    const u32 s = submit_stream(g, 0, blocked_stream(0, 8, 16, 0x5E7u), size_of(9));
    ASSERT_TRUE(run_until([&] { return read_data(8) == 1; }, 100 * kMs));
    ASSERT_TRUE(wait_autosuspend());
    EXPECT_LT(csg_of(g), 0);
    advance(300 * kMs);
    ASSERT_EQ(fence_status(s), 0);

    const ktime_t released = kshim::ktime_get();
    write_data<u64>(0, 1);
    const Done d = wait_done(s, 1000 * kMs);
    ASSERT_TRUE(d.signalled) << "a CPU store releasing an off-slot wait was never seen";
    EXPECT_EQ(d.status, 1);
    // One poll period (the 10 ms tick period) plus the resume and a tick.
    EXPECT_LT(d.at - released, 20 * kMs);
    EXPECT_EQ(read_data<u32>(16), 0x5E7u);
    EXPECT_FALSE(kshim::log_contains("job timeout"));
    EXPECT_EQ(group_state(g).state, 0u);
    EXPECT_TRUE(wait_autosuspend());
}

// Destroying a group that sits off slot, blocked in SYNC_WAIT (on the scheduler's waiting list,
// its sync object mapped for the driver's checks): its job is cancelled and nothing is left behind.
TEST_F(SchedLifecycleTest, DestroyBlockedGroupOffSlot) {
    const u32 g = group_create();
    const u32 s = submit_stream(g, 0, blocked_stream(0, 8, 16, 1), size_of(9));
    ASSERT_TRUE(run_until([&] { return read_data(8) == 1; }, 100 * kMs));
    ASSERT_TRUE(wait_autosuspend());
    EXPECT_LT(csg_of(g), 0);
    EXPECT_EQ(group_destroy(g), 0);
    EXPECT_EQ(wait_done(s, 100 * kMs).status, -ECANCELED);
    write_data<u64>(0, 1);
    const u32 other = group_create();
    EXPECT_EQ(wait_done(submit_stream(other, 0, store_stream(24, 7), size_of(4)), 1000 * kMs).status, 1);
    advance(100 * kMs);
    EXPECT_EQ(read_data<u32>(16), 0u);
}

// =============================================================================================
// System suspend and GPU reset

// A job preempted by a system suspend resumes with the device and finishes with the time it had
// left; the time asleep (longer than the job timeout) does not count against it.
TEST_F(SchedLifecycleTest, SystemSuspendWithJobsInFlight) {
    const u32 g = group_create(2);
    const u32 a = submit_stream(g, 0, compute_stream(0, 1, 100 * kMs), size_of(2));
    const u32 b = submit_stream(g, 1, compute_stream(8, 2, 100 * kMs), size_of(2));
    const u32 a2 = submit_stream(g, 0, store_stream(16, 3), size_of(4));
    advance(20 * kMs);

    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    EXPECT_EQ(ptdev->pm.state.load(), PANTHOR_DEVICE_PM_STATE_SUSPENDED);
    advance((kJobTimeoutMs + 1000) * kMs);
    for (u32 s : {a, b, a2})
        EXPECT_EQ(fence_status(s), 0) << "a job ended while the system slept";
    EXPECT_EQ(read_data(0), 0u);

    const ktime_t resumed_at = kshim::ktime_get();
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    const Done da = wait_done(a, 1000 * kMs);
    EXPECT_EQ(da.status, 1);
    EXPECT_EQ(wait_done(b, 1000 * kMs).status, 1);
    EXPECT_EQ(wait_done(a2, 1000 * kMs).status, 1);
    // About 80 ms were left when the job was preempted.
    EXPECT_GE(da.at - resumed_at, 70 * kMs);
    EXPECT_LE(da.at - resumed_at, 100 * kMs);
    EXPECT_EQ(read_data(0), 1u);
    EXPECT_EQ(read_data(8), 2u);
    EXPECT_EQ(read_data(16), 3u);
    EXPECT_EQ(group_state(g).state, 0u);
    EXPECT_FALSE(kshim::log_contains("job timeout"));
}

// A GPU reset suspends the groups on slots (their state saved), stops their drm_scheds, resets,
// then puts them back: the jobs in flight finish normally, idle groups take new work, no fence is
// left unsignalled.
TEST_F(SchedLifecycleTest, ResetWithActiveGroupsResumesThem) {
    count_soft_resets();
    const u32 busy = group_create(2);
    const u32 idle = group_create();
    EXPECT_EQ(wait_done(submit_stream(idle, 0, store_stream(0, 1), size_of(4)), 1000 * kMs).status, 1);
    const u32 a = submit_stream(busy, 0, compute_stream(8, 2, 100 * kMs), size_of(2));
    const u32 a2 = submit_stream(busy, 0, store_stream(16, 3), size_of(4));
    const u32 b = submit_stream(busy, 1, compute_stream(24, 4, 60 * kMs), size_of(2));
    advance(20 * kMs);

    panthor_device_schedule_reset(ptdev);
    // A submit while the reset is pending or in progress is accepted and runs afterwards.
    const u32 late = submit_stream(idle, 0, store_stream(32, 5), size_of(4));
    for (u32 s : {a, a2, b, late}) {
        const Done d = wait_done(s, 2000 * kMs);
        EXPECT_TRUE(d.signalled);
        EXPECT_EQ(d.status, 1);
    }
    EXPECT_EQ(soft_resets_, 1);
    EXPECT_EQ(read_data(8), 2u);
    EXPECT_EQ(read_data(16), 3u);
    EXPECT_EQ(read_data(24), 4u);
    EXPECT_EQ(read_data(32), 5u);
    EXPECT_EQ(group_state(busy).state, 0u);
    EXPECT_EQ(group_state(idle).state, 0u);
    EXPECT_EQ(wait_done(submit_stream(busy, 1, store_stream(40, 6), size_of(4)), 1000 * kMs).status, 1);
    EXPECT_TRUE(wait_autosuspend());
}

// A reset while a group's shader hangs: that group cannot be suspended (a running workgroup has no
// task boundary), so upstream's suspend times out and escalates to termination; the group is
// TIMEDOUT and INNOCENT (it was still usable when the reset came), its jobs fail with -ETIMEDOUT.
// The group beside it is suspended and resumed normally.
TEST_F(SchedLifecycleTest, ResetWithAHungGroupTerminatesOnlyThatGroup) {
    count_soft_resets();
    const u32 hung = group_create();
    const u32 busy = group_create();
    const u32 h = submit_stream(hung, 0, hang_stream(), size_of(2));
    const u32 b = submit_stream(busy, 0, compute_stream(0, 1, 100 * kMs), size_of(2));
    advance(20 * kMs);

    panthor_device_schedule_reset(ptdev);
    const Done dh = wait_done(h, 2000 * kMs);
    EXPECT_TRUE(dh.signalled);
    EXPECT_EQ(dh.status, -ETIMEDOUT);
    EXPECT_EQ(wait_done(b, 2000 * kMs).status, 1);
    EXPECT_EQ(read_data(0), 1u);
    EXPECT_EQ(soft_resets_, 1);
    EXPECT_EQ(group_state(hung).state,
              static_cast<u32>(DRM_PANTHOR_GROUP_STATE_TIMEDOUT | DRM_PANTHOR_GROUP_STATE_INNOCENT));
    EXPECT_EQ(group_state(busy).state, 0u);
    EXPECT_TRUE(kshim::log_contains("CSG suspend failed, escalating to termination"));
    EXPECT_EQ(wait_done(submit_stream(busy, 0, store_stream(8, 2), size_of(4)), 1000 * kMs).status, 1);
}

// The driver is removed while a reset is in progress (the firmware hung, the reset's CSG requests
// are timing out): remove waits for the reset work, whose FW restart then fails on the unplugged
// device; it must neither use what unplug frees nor wait for the unplug that waits for it. The
// job's fence signals, nothing leaks.
TEST_F(SchedLifecycleTest, RemoveDuringAResetWaitsForItWithoutDeadlock) {
    const u32 g = group_create();
    const u32 s = submit_stream(g, 0, compute_stream(0, 1, 200 * kMs), size_of(2));
    advance(5 * kMs);
    mock_hw::FaultSpec hang;
    hang.kind = mock_hw::FaultKind::FwHang;
    hang.trigger = mock_hw::FaultTrigger::at_time(kshim::ktime_get());
    gpu().faults().add(hang);
    advance(1 * kMs);
    panthor_device_schedule_reset(ptdev);
    advance(50 * kMs);  // the reset work is waiting for the suspend requests to time out
    EXPECT_TRUE(panthor_device_reset_is_pending(ptdev));
    drm::drm_syncobj* so = drm::drm_syncobj_find(file, s);
    ASSERT_NE(so, nullptr);
    kshim::dma_fence* f = drm::drm_syncobj_fence_get(so);
    drm::drm_syncobj_put(so);
    ASSERT_NE(f, nullptr);
    remove();
    EXPECT_TRUE(kshim::dma_fence_is_signaled(f));
    EXPECT_LT(f->error.load(), 0);
    kshim::dma_fence_put(f);
}

// GROUP_CREATE while a reset is in progress (here waiting on its hung FW): the new group goes
// straight onto the reset's stopped list, with its drm_scheds stopped, so that the reset's end
// starts it like every other group; a job submitted to it meanwhile runs after the reset.
TEST_F(SchedLifecycleTest, GroupCreatedDuringAResetStartsWithTheOthersAfterIt) {
    const u32 g = group_create();
    const u32 s0 = submit_stream(g, 0, compute_stream(0, 1, 200 * kMs), size_of(2));
    advance(5 * kMs);
    mock_hw::FaultSpec hang;
    hang.kind = mock_hw::FaultKind::FwHang;
    hang.trigger = mock_hw::FaultTrigger::at_time(kshim::ktime_get());
    gpu().faults().add(hang);
    advance(1 * kMs);
    panthor_device_schedule_reset(ptdev);
    advance(20 * kMs);  // the reset work is waiting for the suspend requests to time out
    ASSERT_TRUE(panthor_device_reset_is_pending(ptdev));

    panthor_scheduler* sched = ptdev->scheduler;
    const u32 late = group_create();  // waits for pre_reset to let go of the reset lock
    panthor_group_pool* pool = static_cast<panthor_file*>(file->driver_priv)->groups;
    panthor_group* group = pool->xa.load_locked(late, [](panthor_group* gr) { return group_get(gr); });
    ASSERT_NE(group, nullptr);
    {
        kshim::MutexGuard rg(sched->reset.lock);
        ASSERT_TRUE(sched->reset.in_progress.load()) << "the reset ended before the group was created";
        bool stopped = false;
        for (panthor_group& gr : sched->reset.stopped_groups)
            stopped |= &gr == group;
        EXPECT_TRUE(stopped) << "a group created during a reset is not on the stopped list";
    }
    group_put(group);

    const u32 s1 = submit_stream(late, 0, store_stream(8, 2), size_of(4));
    const Done d = wait_done(s1, 5000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, 1);
    EXPECT_EQ(read_data(8), 2u);
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));
    EXPECT_EQ(group_state(late).state, 0u);
    EXPECT_TRUE(wait_done(s0, 5000 * kMs).signalled);
    EXPECT_EQ(group_destroy(late), 0);
    EXPECT_EQ(group_destroy(g), 0);
}

// =============================================================================================
// SYNC_WAIT

// Queue 1 waits (SYNC_WAIT64) on a sync object that queue 0 sets after its compute job: queue 1's
// work runs strictly after queue 0's result is in memory.
TEST_F(SchedLifecycleTest, CrossQueueSyncWaitOrdersTheQueues) {
    const u32 g = group_create(2);
    constexpr u64 kFlag = 0, kResult = 16, kCopy = 24;
    const u64 producer = put_stream(
        {cs::move48(16, put_shader(shader(MockShader::Write, 30 * kMs, data_va(kResult), 0x5A5A))), cs::run_compute(1),
         cs::wait(0xFF), cs::move48(2, data_va(kFlag)), cs::move48(4, 1), cs::sync_set64(2, 4)});
    const u64 consumer =
        put_stream({cs::move48(2, data_va(kFlag)), cs::move48(4, 0), cs::sync_wait64(2, 4, cs::GREATER),
                    cs::move48(6, data_va(kResult)), cs::load_multiple(8, 6, 0x3), cs::move48(10, data_va(kCopy)),
                    cs::store_multiple(8, 10, 0x3)});
    // The consumer first, so it is blocked before the producer starts.
    const u32 c = submit_stream(g, 1, consumer, size_of(7));
    advance(5 * kMs);
    EXPECT_EQ(fence_status(c), 0);
    const u32 p = submit_stream(g, 0, producer, size_of(6));
    advance(10 * kMs);
    EXPECT_EQ(fence_status(c), 0) << "the consumer did not wait";

    const Done dp = wait_done(p, 1000 * kMs);
    const Done dc = wait_done(c, 1000 * kMs);
    EXPECT_EQ(dp.status, 1);
    EXPECT_EQ(dc.status, 1);
    EXPECT_GE(dc.at, dp.at - 1 * kMs);
    EXPECT_EQ(read_data(kCopy), 0x5A5Au) << "the consumer read the result before it was written";
    EXPECT_EQ(group_state(g).state, 0u);
}

// A group whose only queue waits on a value the CPU writes later is blocked, hence idle; with the
// slots taken by busy groups it is evicted, and from then on only the driver can notice the value
// changed: sync_upd_work re-evaluates the waits of off-slot groups on every SYNC_UPDATE (another
// group's job writes the value) and, while such a group exists, every tick period (the CPU writes
// it: nothing on the GPU side says so), and makes the group runnable, so it gets a slot at the
// next tick, long before the busy groups finish.
enum class Release { CpuWrite, OtherGroupsJobWrites };
class SyncWaitRelease : public SchedLifecycleTest, public ::testing::WithParamInterface<Release> {};

TEST_P(SyncWaitRelease, OffSlotBlockedGroupIsReleasedBySyncUpdate) {
    const u32 slots = ptdev->scheduler->csg_slot_count;
    ASSERT_EQ(slots, 8u);
    const u32 w = group_create();
    const u32 ws = submit_stream(w, 0, blocked_stream(0, 8, 16, 0x77), size_of(9));
    ASSERT_TRUE(run_until([&] { return read_data(8) == 1; }, 100 * kMs));
    advance(5 * kMs);

    // Busy groups take every slot: the blocked (idle) group is evicted.
    std::vector<u32> busy;
    std::vector<u32> busy_syncs;
    const ktime_t busy_start = kshim::ktime_get();
    for (u32 i = 0; i < slots; i++) {
        busy.push_back(group_create());
        busy_syncs.push_back(submit_stream(busy.back(), 0, run_stream(400 * kMs), size_of(2)));
    }
    advance(50 * kMs);
    EXPECT_EQ(stats().used_csg_slots, slots);
    EXPECT_LT(csg_of(w), 0) << "the blocked group kept its slot";
    for (u32 b : busy)
        EXPECT_GE(csg_of(b), 0);

    const ktime_t released = kshim::ktime_get();
    if (GetParam() == Release::CpuWrite) {
        // No SYNC_UPDATE follows (no GPU sync operation): the driver's poll sees it.
        write_data<u64>(0, 1);
    } else {
        const u32 t = group_create();
        const u32 ts = submit_stream(
            t, 0, put_stream({cs::move48(2, data_va(0)), cs::move48(4, 1), cs::sync_set64(2, 4)}), size_of(3));
        EXPECT_EQ(wait_done(ts, 1000 * kMs).status, 1);
    }
    const Done dw = wait_done(ws, 1000 * kMs);
    EXPECT_EQ(dw.status, 1);
    EXPECT_EQ(read_data<u32>(16), 0x77u);
    EXPECT_LT(dw.at - busy_start, 400 * kMs) << "released only when the busy groups went idle";
    // A poll period, then a full tick (the busy groups rotate) to get a slot.
    EXPECT_LT(dw.at - released, 50 * kMs);
    for (u32 s : busy_syncs)
        EXPECT_EQ(fence_status(s), 0) << "a busy job ended before the blocked group was released";
    ASSERT_EQ(syncobj_wait(busy_syncs, 2000 * kMs), 0);
    EXPECT_EQ(group_state(w).state, 0u);
}

INSTANTIATE_TEST_SUITE_P(Lifecycle, SyncWaitRelease,
                         ::testing::Values(Release::CpuWrite, Release::OtherGroupsJobWrites),
                         [](const ::testing::TestParamInfo<Release>& info) {
                             return std::string(info.param == Release::CpuWrite ? "CpuWrite" : "OtherGroupsJobWrites");
                         });

}  // namespace
}  // namespace panthor::testing
