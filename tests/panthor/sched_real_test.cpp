// The CSF scheduler on the real-thread runtime (label real; the tsan preset runs it under
// ThreadSanitizer): two submitting kthreads, the drm_sched and scheduler workqueues, the IRQ
// threads and the mock GPU's timers all on OS threads. Waits are syncobj waits with a real
// timeout; nothing sleeps.
#include <random>

#include "kernel_shim/completion.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/time.h"
#include "panthor/panthor_sched.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;

constexpr u64 kResults = 0x0;
constexpr u64 kSeen = 0x4000;
constexpr u64 kUs = kshim::NSEC_PER_USEC;
constexpr kshim::ktime_t kWait = 20 * kshim::NSEC_PER_SEC;
u64 result_off(u32 id) {
    return kResults + 8 * id;
}
u64 seen_off(u32 id) {
    return kSeen + 8 * id;
}
u64 result_value(u32 id) {
    return 0x5EED0000ull + id;
}

class SchedReal : public SchedTest {
protected:
    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o = kshim::options_from_env({});
        o.mode = kshim::Mode::Real;
        return o;
    }

    // Job `id`: copies job dep's result word to seen_off(id) if dep >= 0, then a compute job of
    // `duration` writing result_value(id). Built before any thread starts (the stream area is
    // not shared between threads).
    std::pair<u64, u32> job(u32 id, int dep, ktime_t duration) {
        std::vector<u64> ins;
        if (dep >= 0) {
            ins.push_back(cs::move48(2, data_va(result_off(static_cast<u32>(dep)))));
            ins.push_back(cs::load_multiple(10, 2, 0x3));
            ins.push_back(cs::move48(12, data_va(seen_off(id))));
            ins.push_back(cs::store_multiple(10, 12, 0x3));
        }
        mock_hw::MockShader sh;
        sh.kind = mock_hw::MockShader::Write;
        sh.duration_ns = static_cast<u64>(duration);
        sh.addr = data_va(result_off(id));
        sh.value = result_value(id);
        ins.push_back(cs::move48(16, put_shader(sh)));
        ins.push_back(cs::run_compute(1));
        return {put_stream(ins), static_cast<u32>(ins.size() * 8)};
    }

    // Every submit succeeded, and every job's fence signalled OK with its result written.
    void expect_all_completed(const std::vector<int>& rets, const std::vector<u32>& syncs) {
        for (u32 id = 0; id < rets.size(); id++)
            ASSERT_EQ(rets[id], 0) << id;
        ASSERT_EQ(syncobj_wait(syncs, kWait), 0);
        for (u32 id = 0; id < syncs.size(); id++) {
            EXPECT_EQ(fence_status(syncs[id]), 1) << id;
            EXPECT_EQ(read_data(result_off(id)), result_value(id)) << id;
        }
    }

    // One job signalling a new syncobj (its handle in *out), after `wait` if non-zero.
    int submit_one(u32 group, u32 queue, std::pair<u64, u32> stream, u32 wait, u32* out) {
        drm_syncobj_create c{};
        const int r = ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &c);
        if (r)
            return r;
        *out = c.handle;
        Submit s{.queue = queue, .stream = stream.first, .size = stream.second};
        s.syncs.push_back(signal_op(c.handle));
        if (wait)
            s.syncs.push_back(wait_op(wait));
        return submit(group, {s});
    }
};

// Two threads, four groups of two queues, 24 jobs each; job k of a thread (k > 0) waits on job
// k - 1 of the other thread, so the threads hand syncobjs to each other while they submit. All
// fences signal without error, every result is there, and every job saw its dependency's result.
TEST_F(SchedReal, TwoThreadsSubmitToSeveralGroups) {
    constexpr u32 kThreads = 2, kJobs = 24, kGroups = 4;
    std::vector<u32> groups;
    for (u32 g = 0; g < kGroups; g++)
        groups.push_back(group_create(2));

    std::mt19937_64 rng(kshim::seed_from_env(1));
    std::vector<std::pair<u64, u32>> streams;
    std::vector<int> deps;
    for (u32 t = 0; t < kThreads; t++) {
        for (u32 k = 0; k < kJobs; k++) {
            const u32 id = t * kJobs + k;
            const int dep = k ? static_cast<int>((t ^ 1) * kJobs + k - 1) : -1;
            deps.push_back(dep);
            streams.push_back(job(id, dep, static_cast<ktime_t>(20 + rng() % 300) * kUs));
        }
    }

    std::vector<u32> syncs(kThreads * kJobs, 0);
    std::vector<int> rets(kThreads * kJobs, 1);
    // submitted[id]: job id's syncobj exists and holds its fence.
    std::vector<kshim::completion> submitted(kThreads * kJobs);
    std::vector<kshim::Task*> tasks;
    for (u32 t = 0; t < kThreads; t++) {
        tasks.push_back(kshim::kthread_run(
            [&, t] {
                for (u32 k = 0; k < kJobs; k++) {
                    const u32 id = t * kJobs + k;
                    u32 wait = 0;
                    if (deps[id] >= 0) {
                        const u32 dep = static_cast<u32>(deps[id]);
                        if (!wait_for_completion_timeout(&submitted[dep], kshim::msecs_to_jiffies(20000))) {
                            rets[id] = -ETIMEDOUT;
                            break;
                        }
                        wait = syncs[dep];
                    }
                    rets[id] = submit_one(groups[(t + k) % kGroups], k % 2, streams[id], wait, &syncs[id]);
                    kshim::complete_all(&submitted[id]);
                }
                return 0;
            },
            "submitter"));
    }
    for (kshim::Task* t : tasks)
        kshim::kthread_stop(t);

    expect_all_completed(rets, syncs);
    if (HasFatalFailure())
        return;
    for (u32 id = 0; id < kThreads * kJobs; id++) {
        if (deps[id] >= 0) {
            EXPECT_EQ(read_data(seen_off(id)), result_value(static_cast<u32>(deps[id])))
                << "job " << id << " ran before its dependency " << deps[id];
        }
    }
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// Twelve groups on the eight slots, two threads submitting to them: the periodic tick rotates
// them on real timers while jobs keep arriving; every job completes with its result.
TEST_F(SchedReal, RotationWhileTwoThreadsSubmit) {
    constexpr u32 kThreads = 2, kJobs = 18, kGroups = 12;
    std::vector<u32> groups;
    for (u32 g = 0; g < kGroups; g++)
        groups.push_back(
            group_create(1, static_cast<u8>(g % 2 ? PANTHOR_GROUP_PRIORITY_MEDIUM : PANTHOR_GROUP_PRIORITY_LOW)));
    std::vector<std::pair<u64, u32>> streams;
    for (u32 id = 0; id < kThreads * kJobs; id++)
        streams.push_back(job(id, -1, 3 * kshim::NSEC_PER_MSEC));

    std::vector<u32> syncs(kThreads * kJobs, 0);
    std::vector<int> rets(kThreads * kJobs, 1);
    std::vector<kshim::Task*> tasks;
    for (u32 t = 0; t < kThreads; t++) {
        tasks.push_back(kshim::kthread_run(
            [&, t] {
                for (u32 k = 0; k < kJobs; k++) {
                    const u32 id = t * kJobs + k;
                    rets[id] = submit_one(groups[(t * kJobs + k) % kGroups], 0, streams[id], 0, &syncs[id]);
                }
                return 0;
            },
            "submitter"));
    }
    for (kshim::Task* t : tasks)
        kshim::kthread_stop(t);

    expect_all_completed(rets, syncs);
    if (HasFatalFailure())
        return;
    const panthor_sched_stats s = panthor_sched_get_stats(ptdev);
    EXPECT_GT(s.csg_suspends, 0u) << "twelve busy groups never rotated";
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

}  // namespace
}  // namespace panthor::testing
