// Seeded sweeps of the CSF scheduler's submission and tick paths with preemption points on
// (every lock, unlock, queue_work, wake-up and fence signal may switch tasks): submitter threads
// on several groups and VMs with cross-group syncobj dependencies, a group destroyed while a
// thread submits to it, and a file closed while its jobs are in flight. Each seed is one
// interleaving; a failure prints the seed to replay with KSHIM_SEED (KSHIM_PREEMPT changes the
// switch probability, 0.3 by default here).
#include <cstring>
#include <random>

#include "drm/drm_mmap.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/sched.h"
#include "panthor/panthor_sched.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;

constexpr u64 kResults = 0x0;  // data offsets: per-job result words
constexpr u64 kSeen = 0x4000;  // ... what a job read from its dependency's result
constexpr u64 kUs = kshim::NSEC_PER_USEC;
u64 result_off(u32 id) {
    return kResults + 8 * id;
}
u64 seen_off(u32 id) {
    return kSeen + 8 * id;
}
u64 result_value(u32 id) {
    return 0xABC00000ull + id;
}

// A BO mapped at SchedTest::kVa in a VM of some file, and on the CPU: where that file's streams,
// shaders and results live. Not thread-safe: streams are built by one task at a time.
struct ClientMem {
    u8* cpu = nullptr;
    u64 va = 0;
    u64 data = 0;  // offset of the data area
    u64 stream_off = 0;
    u64 shader_off = 1ull << 20;

    u64 data_va(u64 off) const { return va + data + off; }
    u64 read(u64 off) const { return std::atomic_ref<u64>(*reinterpret_cast<u64*>(cpu + data + off)).load(); }
    u64 put_stream(const std::vector<u64>& ins) {
        const u64 off = stream_off;
        std::memcpy(cpu + off, ins.data(), ins.size() * 8);
        stream_off = (off + ins.size() * 8 + 63) & ~u64{63};
        return va + off;
    }
    u64 put_shader(mock_hw::MockShader::Kind kind, ktime_t duration, u64 addr = 0, u64 value = 0) {
        mock_hw::MockShader sh;
        sh.kind = kind;
        sh.duration_ns = static_cast<u64>(duration);
        sh.addr = addr;
        sh.value = value;
        const u64 off = shader_off;
        std::memcpy(cpu + data + off, &sh, sizeof(sh));
        shader_off += 64;
        return data_va(off);
    }
    // Job `id`: if dep >= 0, copies job dep's result word to seen_off(id) first (so the test sees
    // whether dep had finished when this job started); then a compute job of `duration` that
    // writes result_value(id) at result_off(id).
    std::pair<u64, u32> job(u32 id, int dep, ktime_t duration) {
        std::vector<u64> ins;
        if (dep >= 0) {
            ins.push_back(cs::move48(2, data_va(result_off(static_cast<u32>(dep)))));
            ins.push_back(cs::load_multiple(10, 2, 0x3));
            ins.push_back(cs::move48(12, data_va(seen_off(id))));
            ins.push_back(cs::store_multiple(10, 12, 0x3));
        }
        ins.push_back(cs::move48(
            16, put_shader(mock_hw::MockShader::Write, duration, data_va(result_off(id)), result_value(id))));
        ins.push_back(cs::run_compute(1));
        return {put_stream(ins), static_cast<u32>(ins.size() * 8)};
    }
};

class SchedSweep : public SchedTest, public ::testing::WithParamInterface<u64> {
protected:
    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o;
        o.seed = GetParam();
        o.preempt_probability = 0.3;
        return kshim::options_from_env(o);  // KSHIM_SEED / KSHIM_PREEMPT still win
    }
    bool interleaving_agnostic() const override { return true; }

    void SetUp() override {
        SchedTest::SetUp();
        if (!file)
            return;
        set_cap_sys_nice(true);
        mem_.cpu = cpu_;
        mem_.va = kVa;
        mem_.data = kDataOffset;
    }

    u64 seed() const { return kshim::seed_from_env(GetParam()); }

    // One job on (group, queue) signalling the new syncobj *out, waiting on `wait` (0: none).
    int submit_one(u32 group, u32 queue, std::pair<u64, u32> stream, u32 wait, u32* out, drm::drm_file* f = nullptr) {
        drm_syncobj_create c{};
        const int r = ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &c, f);
        if (r)
            return r;
        *out = c.handle;
        Submit s{.queue = queue, .stream = stream.first, .size = stream.second};
        s.syncs.push_back(signal_op(c.handle));
        if (wait)
            s.syncs.push_back(wait_op(wait));
        return submit(group, {s}, f);
    }

    ClientMem mem_;
};

// Three submitter threads, six groups of two queues on three VMs (all four priorities), ten jobs
// each; about half the jobs wait on the latest job of another thread (another group, maybe
// another VM). Every fence signals without error, every result is written, and a job always saw
// its dependency's result (it ran after it).
TEST_P(SchedSweep, CrossGroupDependencies) {
    constexpr u32 kThreads = 3, kJobs = 10, kGroups = 6;
    std::vector<u32> vms = {vm_};
    for (u32 v = 1; v < 3; v++) {
        vms.push_back(vm_create());
        ASSERT_EQ(vm_map(vms.back(), bo_, kVa, kBoSize), 0);
    }
    std::vector<u32> groups(kGroups);
    for (u32 g = 0; g < kGroups; g++)
        ASSERT_EQ(group_create_ret(&groups[g], {{}, {}}, static_cast<u8>(g % 4), nullptr, vms[g % 3]), 0);

    std::mt19937_64 rng(seed());
    std::vector<ktime_t> durations(kThreads * kJobs);
    for (auto& d : durations)
        d = static_cast<ktime_t>(100 + rng() % 1900) * kUs;
    // A job's dependency (the latest job another thread submitted) is picked when it is
    // submitted, so its stream is built then too.
    std::vector<std::atomic<int>> latest(kThreads);
    for (auto& l : latest)
        l.store(-1);
    std::vector<u32> syncs(kThreads * kJobs, 0);
    std::vector<int> rets(kThreads * kJobs, 1), deps(kThreads * kJobs, -1);

    std::vector<kshim::Task*> tasks;
    for (u32 t = 0; t < kThreads; t++) {
        tasks.push_back(kshim::kthread_run(
            [&, t] {
                std::mt19937_64 r(seed() * 7919 + t);
                for (u32 k = 0; k < kJobs; k++) {
                    const u32 id = t * kJobs + k;
                    int dep = -1;
                    if (r() % 2) {
                        const u32 other = static_cast<u32>((t + 1 + r() % (kThreads - 1)) % kThreads);
                        dep = latest[other].load();
                    }
                    // Built in this task: nothing in it switches tasks (no lock, no preemption point).
                    const auto stream = mem_.job(id, dep, durations[id]);
                    const u32 g = groups[(t * 2 + k) % kGroups];
                    deps[id] = dep;
                    rets[id] = submit_one(g, k % 2, stream, dep >= 0 ? syncs[static_cast<u32>(dep)] : 0, &syncs[id]);
                    latest[t].store(static_cast<int>(id));
                    if (r() % 4 == 0) {
                        const unsigned long us = 10 + r() % 500;
                        kshim::usleep_range(us, us);
                    }
                }
                return 0;
            },
            "submitter"));
    }
    for (kshim::Task* t : tasks)
        kshim::kthread_stop(t);

    ASSERT_EQ(syncobj_wait(syncs, 10000 * kMs), 0);
    for (u32 id = 0; id < kThreads * kJobs; id++) {
        EXPECT_EQ(rets[id], 0) << id;
        EXPECT_EQ(fence_status(syncs[id]), 1) << id;
        EXPECT_EQ(mem_.read(result_off(id)), result_value(id)) << id;
        if (deps[id] >= 0) {
            EXPECT_EQ(mem_.read(seen_off(id)), result_value(static_cast<u32>(deps[id])))
                << "job " << id << " ran before its dependency " << deps[id];
        }
    }
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

// A thread submits 16 jobs to a two-queue group while the test destroys it after a seeded delay.
// Each submission either succeeds (before the handle went) or gets -EINVAL (after), in that
// order; each accepted job's fence signals, per queue a run of completed jobs (their results
// written) then a run of cancelled ones.
TEST_P(SchedSweep, GroupDestroyRacesSubmission) {
    constexpr u32 kJobs = 16;
    std::mt19937_64 rng(seed());
    const u32 g = group_create(2, static_cast<u8>(rng() % 3));
    std::vector<std::pair<u64, u32>> streams;
    for (u32 k = 0; k < kJobs; k++)
        streams.push_back(mem_.job(k, -1, static_cast<ktime_t>(50 + rng() % 400) * kUs));
    const ktime_t destroy_after = static_cast<ktime_t>(rng() % 4000) * kUs;

    std::vector<int> rets(kJobs, 1);
    std::vector<u32> syncs(kJobs, 0);
    kshim::Task* submitter = kshim::kthread_run(
        [&] {
            std::mt19937_64 r(seed() + 1);
            for (u32 k = 0; k < kJobs; k++) {
                rets[k] = submit_one(g, k % 2, streams[k], 0, &syncs[k]);
                if (r() % 5 < 3) {
                    const unsigned long us = 100 + r() % 400;
                    kshim::usleep_range(us, us);
                }
            }
            return 0;
        },
        "submitter");
    advance(destroy_after);
    EXPECT_EQ(group_destroy(g), 0);
    kshim::kthread_stop(submitter);

    std::vector<u32> accepted;
    bool refused = false;
    for (u32 k = 0; k < kJobs; k++) {
        EXPECT_TRUE(rets[k] == 0 || rets[k] == -EINVAL) << k << ": " << rets[k];
        if (rets[k] == 0) {
            EXPECT_FALSE(refused) << "job " << k << " accepted after an earlier one was refused";
            accepted.push_back(syncs[k]);
        } else {
            refused = true;
        }
    }
    if (!accepted.empty()) {
        ASSERT_EQ(syncobj_wait(accepted, 10000 * kMs), 0);
    }
    for (u32 q = 0; q < 2; q++) {
        bool cancelled = false;
        for (u32 k = q; k < kJobs; k += 2) {
            if (rets[k])
                continue;
            const int st = fence_status(syncs[k]);
            EXPECT_TRUE(st == 1 || st == -ECANCELED) << k << ": " << st;
            if (st == 1) {
                EXPECT_FALSE(cancelled) << "job " << k << " completed after an earlier job of its queue was cancelled";
                EXPECT_EQ(mem_.read(result_off(k)), result_value(k)) << k;
            } else {
                cancelled = true;
            }
        }
    }
}

// A second client (its own file, VM, BO and three groups with chained jobs) closes its file after
// a seeded delay while its jobs are queued, waiting, running or done, and while a thread keeps
// submitting on the first client. The second client's fences all signal, completed or
// cancelled (a completed one with its result written); the first client's jobs all complete.
TEST_P(SchedSweep, FileCloseRacesInFlightJobs) {
    std::mt19937_64 rng(seed());
    drm::drm_file* f2 = nullptr;
    ASSERT_EQ(open_file(&f2), 0);
    const u32 vm2 = vm_create(0, f2);
    const u32 bo2 = bo_create(kBoSize, 0, 0, f2);
    ASSERT_EQ(vm_bind(vm2, DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, bo2, 0, kVa, kBoSize, f2), 0);
    drm_panthor_bo_mmap_offset mo{};
    mo.handle = bo2;
    ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo, f2), 0);
    drm::VmArea* vma = nullptr;
    ASSERT_EQ(drm::drm_mmap(f2, mo.offset, kBoSize, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    ClientMem mem2{static_cast<u8*>(vma->addr), kVa, kDataOffset};

    // Client 2: 3 groups x 4 jobs, each job after the previous one of the next group.
    constexpr u32 kG2 = 3, kJ2 = 4;
    std::vector<u32> g2(kG2);
    for (u32 i = 0; i < kG2; i++)
        ASSERT_EQ(group_create_ret(&g2[i], {{}}, static_cast<u8>(rng() % 4), f2, vm2), 0);
    std::vector<kshim::dma_fence*> fences2;
    std::vector<u32> ids2;
    u32 prev = 0;
    int prev_id = -1;
    for (u32 k = 0; k < kJ2; k++) {
        for (u32 i = 0; i < kG2; i++) {
            const u32 id = k * kG2 + i;
            u32 s = 0;
            ASSERT_EQ(submit_one(g2[i], 0, mem2.job(id, prev_id, static_cast<ktime_t>(200 + rng() % 2000) * kUs), prev,
                                 &s, f2),
                      0);
            kshim::dma_fence* f = nullptr;
            ASSERT_EQ(drm::drm_syncobj_find_fence(f2, s, 0, 0, &f), 0);
            fences2.push_back(f);
            ids2.push_back(id);
            prev = s;
            prev_id = static_cast<int>(id);
        }
    }

    // Client 1: a thread submitting to two groups meanwhile.
    constexpr u32 kJ1 = 12;
    const u32 g1[2] = {group_create(1, PANTHOR_GROUP_PRIORITY_LOW), group_create(1, PANTHOR_GROUP_PRIORITY_HIGH)};
    std::vector<std::pair<u64, u32>> streams1;
    for (u32 k = 0; k < kJ1; k++)
        streams1.push_back(mem_.job(k, -1, static_cast<ktime_t>(100 + rng() % 1000) * kUs));
    std::vector<u32> syncs1(kJ1, 0);
    std::vector<int> rets1(kJ1, 1);
    kshim::Task* submitter = kshim::kthread_run(
        [&] {
            std::mt19937_64 r(seed() + 2);
            for (u32 k = 0; k < kJ1; k++) {
                rets1[k] = submit_one(g1[k % 2], 0, streams1[k], 0, &syncs1[k]);
                if (r() % 2) {
                    const unsigned long us = 50 + r() % 800;
                    kshim::usleep_range(us, us);
                }
            }
            return 0;
        },
        "submitter");
    const unsigned long close_after = static_cast<unsigned long>(rng() % 12000);
    kshim::Task* closer = kshim::kthread_run(
        [&] {
            if (close_after)
                kshim::usleep_range(close_after, close_after);
            drm::drm_release(f2);
            return 0;
        },
        "closer");
    kshim::kthread_stop(closer);
    kshim::kthread_stop(submitter);

    for (size_t i = 0; i < fences2.size(); i++) {
        EXPECT_GT(kshim::dma_fence_wait_timeout(fences2[i], false, kshim::msecs_to_jiffies(10000)), 0) << i;
        const int st = kshim::dma_fence_get_status(fences2[i]);
        EXPECT_TRUE(st == 1 || st == -ECANCELED) << "client 2 job " << ids2[i] << ": " << st;
        if (st == 1) {
            EXPECT_EQ(mem2.read(result_off(ids2[i])), result_value(ids2[i])) << ids2[i];
        }
        kshim::dma_fence_put(fences2[i]);
    }
    drm::drm_munmap(vma);

    for (u32 k = 0; k < kJ1; k++)
        ASSERT_EQ(rets1[k], 0) << k;
    ASSERT_EQ(syncobj_wait(syncs1, 10000 * kMs), 0);
    for (u32 k = 0; k < kJ1; k++) {
        EXPECT_EQ(fence_status(syncs1[k]), 1) << k;
        EXPECT_EQ(mem_.read(result_off(k)), result_value(k)) << k;
    }
    EXPECT_EQ(group_destroy(g1[0]), 0);
    EXPECT_EQ(group_destroy(g1[1]), 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SchedSweep, ::testing::Range<u64>(1, 41));

}  // namespace
}  // namespace panthor::testing
