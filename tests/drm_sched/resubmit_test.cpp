// The classic recovery path of drivers such as panfrost (drm_sched_increase_karma,
// drm_sched_resubmit_jobs, both deprecated upstream and without KUnit tests there) and
// drm_sched_job_add_syncobj_dependency.
//
// The mock scheduler cannot re-run a job (its hardware fence is embedded in the job), so these
// tests drive a small in-order "ring" of their own: each run of a job gets a fresh hardware fence
// (allocated with the job, as run_job is a signalling section), a job may hang for its first
// runs, and the test moves the ring on by hand. Its timed-out handler is panfrost's:
// drm_sched_stop(bad) -> drm_sched_increase_karma(bad) -> reset -> drm_sched_resubmit_jobs ->
// drm_sched_start. Like panfrost's run_job, the ring's declines a job whose finished fence
// already carries an error.
#include <vector>

#include "drm/drm_syncobj_sched.h"
#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "tests/drm_sched/sched_test_util.h"
#include "tests/syncobj/syncobj_helpers.h"

namespace sched_test {
namespace {

constexpr unsigned kMaxRuns = 4;
constexpr unsigned kTimeoutMs = 100;
constexpr ktime_t kTimeout = kTimeoutMs * NSEC_PER_MSEC;

struct RingJob {
    drm_sched_job base;
    unsigned hangs = 0;             // this many first runs never finish on the hardware
    int fail_run_error = 0;         // the next run_job returns ERR_PTR(fail_run_error)
    unsigned run_calls = 0;         // run_job calls
    unsigned runs = 0;              // runs that reached the hardware
    bool hanging = false;           // the current run hangs
    bool freed = false;             // free_job ran
    dma_fence* hw[kMaxRuns] = {};   // the fence of each run (the job's references)
    dma_fence* finished = nullptr;  // the test's reference
    SafeListHook link;              // on the ring while running
};
using RingList = boost::intrusive::list<RingJob, boost::intrusive::member_hook<RingJob, SafeListHook, &RingJob::link>,
                                        boost::intrusive::constant_time_size<false>>;

struct Ring {
    drm_gpu_scheduler base;
    SpinLock lock{"resubmit_test.ring"};  // protects running
    RingList running;                     // on the hardware, in order
    std::vector<RingJob*> jobs;
    std::vector<drm_sched_entity*> entities;
    std::atomic<int> guilty[4] = {};
    drm_gpu_scheduler* sched_list[1] = {&base};  // the entities keep the array until their first arm
    std::atomic<unsigned> resets{0};
    // What drm_sched_resubmit_jobs left on each pending job (the handler records it).
    struct Seen {
        RingJob* job;
        int error;
        dma_fence* parent;
    };
    std::vector<Seen> after_resubmit;
};

RingJob* to_ring_job(drm_sched_job* j) {
    return container_of(j, RingJob, base);
}
Ring* to_ring(drm_gpu_scheduler* s) {
    return container_of(s, Ring, base);
}

void signal_with(dma_fence* f, int error) {
    const bool cookie = dma_fence_begin_signalling();
    if (error)
        dma_fence_set_error(f, error);
    dma_fence_signal(f);
    dma_fence_end_signalling(cookie);
}

dma_fence* ring_run_job(drm_sched_job* sched_job) {
    RingJob* job = to_ring_job(sched_job);
    Ring* ring = to_ring(sched_job->sched);
    job->run_calls++;
    if (const int err = job->fail_run_error) {
        job->fail_run_error = 0;
        return ERR_PTR<dma_fence>(err);
    }
    if (sched_job->s_fence->finished.error.load())
        return nullptr;
    if (WARN_ON(job->runs == kMaxRuns))
        return ERR_PTR<dma_fence>(-ENOSPC);
    dma_fence* f = job->hw[job->runs];
    job->hanging = job->runs < job->hangs;
    job->runs++;
    {
        SpinGuard g(ring->lock);
        ring->running.push_back(*job);
    }
    return dma_fence_get(f);
}

// The hardware stops: every running job's fence signals with `error`.
void ring_reset(Ring* ring, int error) {
    RingList stopped;
    {
        SpinGuard g(ring->lock);
        stopped.splice(stopped.end(), ring->running);
    }
    while (!stopped.empty()) {
        RingJob& job = stopped.front();
        stopped.pop_front();
        signal_with(job.hw[job.runs - 1], error);
    }
}

// Completes the running jobs in order up to the first hanging one; returns how many.
unsigned ring_advance(Ring* ring) {
    unsigned n = 0;
    for (;;) {
        RingJob* job;
        {
            SpinGuard g(ring->lock);
            if (ring->running.empty() || ring->running.front().hanging)
                break;
            job = &ring->running.front();
            ring->running.pop_front();
        }
        signal_with(job->hw[job->runs - 1], 0);
        n++;
    }
    return n;
}

drm_gpu_sched_stat ring_timedout_job(drm_sched_job* bad) {
    Ring* ring = to_ring(bad->sched);
    drm_sched_stop(&ring->base, bad);
    drm_sched_increase_karma(bad);
    ring_reset(ring, -EIO);
    drm_sched_resubmit_jobs(&ring->base);
    for (drm_sched_job& j : ring->base.pending_list)
        ring->after_resubmit.push_back({to_ring_job(&j), j.s_fence->finished.error.load(), j.s_fence->parent.load()});
    drm_sched_start(&ring->base, 0);
    ring->resets.fetch_add(1);
    return DRM_GPU_SCHED_STAT_RESET;
}

void ring_free_job(drm_sched_job* sched_job) {
    drm_sched_job_cleanup(sched_job);
    to_ring_job(sched_job)->freed = true;
}

void ring_cancel_job(drm_sched_job* sched_job) {
    RingJob* job = to_ring_job(sched_job);
    Ring* ring = to_ring(sched_job->sched);
    {
        SpinGuard g(ring->lock);
        if (!job->link.is_linked())
            return;
        ring->running.erase(ring->running.iterator_to(*job));
    }
    signal_with(job->hw[job->runs - 1], -ECANCELED);
}

const drm_sched_backend_ops ring_ops = {
    .run_job = ring_run_job,
    .timedout_job = ring_timedout_job,
    .free_job = ring_free_job,
    .cancel_job = ring_cancel_job,
};

void ring_destroy(void* p) {
    Ring* ring = static_cast<Ring*>(p);
    for (drm_sched_entity* e : ring->entities)
        drm_sched_entity_destroy(e);
    drm_sched_fini(&ring->base);
    for (RingJob* job : ring->jobs) {
        dma_fence_put(job->finished);
        for (dma_fence* f : job->hw)
            dma_fence_put(f);
        kdelete(job);
    }
    for (drm_sched_entity* e : ring->entities)
        kdelete(e);
    kdelete(ring);
}

Ring* ring_new(kunit* test, unsigned hang_limit) {
    Ring* ring = knew<Ring>(GFP_KERNEL);
    drm_sched_init_args args;
    args.ops = &ring_ops;
    args.credit_limit = 16;
    args.hang_limit = hang_limit;
    args.timeout = static_cast<long>(msecs_to_jiffies(kTimeoutMs));
    args.name = "resubmit-ring";
    EXPECT_EQ(drm_sched_init(&ring->base, &args), 0);
    EXPECT_EQ(kunit_add_action_or_reset(test, ring_destroy, ring), 0);
    return ring;
}

drm_sched_entity* ring_entity(Ring* ring) {
    auto* e = knew<drm_sched_entity>(GFP_KERNEL);
    EXPECT_EQ(
        drm_sched_entity_init(e, DRM_SCHED_PRIORITY_NORMAL, ring->sched_list, 1, &ring->guilty[ring->entities.size()]),
        0);
    ring->entities.push_back(e);
    return e;
}

int guilty_of(Ring* ring, drm_sched_entity* e) {
    return e->guilty->load();
}

RingJob* ring_job(Ring* ring, drm_sched_entity* e, unsigned hangs = 0) {
    auto* job = knew<RingJob>(GFP_KERNEL);
    job->hangs = hangs;
    for (dma_fence*& f : job->hw)
        f = test_fence();
    ring->jobs.push_back(job);
    EXPECT_EQ(drm_sched_job_init(&job->base, e, 1, nullptr), 0);
    return job;
}

void ring_submit(RingJob* job) {
    drm_sched_job_arm(&job->base);
    job->finished = dma_fence_get(&job->base.s_fence->finished);
    drm_sched_entity_push_job(&job->base);
}

int status(RingJob* job) {
    return dma_fence_get_status(job->finished);
}

const Ring::Seen* seen(Ring* ring, RingJob* job) {
    for (const Ring::Seen& s : ring->after_resubmit)
        if (s.job == job)
            return &s;
    return nullptr;
}

class DrmSchedResubmit : public kshim::testing::KernelTest {};

TEST_F(DrmSchedResubmit, InnocentJobsRunAgainAndTheGuiltyContextIsCancelled) {
    Ring* ring = ring_new(test, 0);
    drm_sched_entity* good = ring_entity(ring);
    drm_sched_entity* bad = ring_entity(ring);
    RingJob* b1 = ring_job(ring, bad, 1);
    RingJob* a1 = ring_job(ring, good);
    RingJob* b2 = ring_job(ring, bad);
    RingJob* a2 = ring_job(ring, good);
    for (RingJob* j : {b1, a1, b2, a2})
        ring_submit(j);
    ASSERT_TRUE(run_until([&] { return a2->runs == 1; }, kTimeout / 2));
    EXPECT_EQ(ring_advance(ring), 0u);  // b1 hangs at the head of the ring

    ASSERT_TRUE(run_until([&] { return ring->resets.load() == 1; }, 2 * kTimeout));
    EXPECT_EQ(b1->base.karma.load(), 1);
    EXPECT_EQ(guilty_of(ring, bad), 1);
    EXPECT_EQ(guilty_of(ring, good), 0);
    // Every pending job went through run_job again, in order; the innocent ones are on the
    // hardware with a new parent fence, the guilty context's carry -ECANCELED and stayed off it.
    ASSERT_EQ(ring->after_resubmit.size(), 4u);
    EXPECT_EQ(ring->after_resubmit[0].job, b1);
    EXPECT_EQ(ring->after_resubmit[3].job, a2);
    for (RingJob* a : {a1, a2}) {
        EXPECT_EQ(seen(ring, a)->error, 0);
        EXPECT_EQ(seen(ring, a)->parent, a->hw[1]);
        EXPECT_EQ(a->runs, 2u);
    }
    for (RingJob* b : {b1, b2}) {
        EXPECT_EQ(seen(ring, b)->error, -ECANCELED);
        EXPECT_EQ(seen(ring, b)->parent, nullptr);
        EXPECT_EQ(b->run_calls, 2u);
        EXPECT_EQ(b->runs, 1u);
    }

    EXPECT_EQ(ring_advance(ring), 2u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(a1), 1);
    EXPECT_EQ(status(a2), 1);
    EXPECT_EQ(status(b1), -ECANCELED);
    EXPECT_EQ(status(b2), -ECANCELED);
    for (RingJob* j : {b1, a1, b2, a2})
        EXPECT_TRUE(j->freed);
    EXPECT_EQ(ring->resets.load(), 1u);

    // Later jobs of the guilty entity never reach the hardware; the innocent one runs normally.
    RingJob* b3 = ring_job(ring, bad);
    RingJob* a3 = ring_job(ring, good);
    ring_submit(b3);
    ring_submit(a3);
    ASSERT_TRUE(run_until([&] { return a3->runs == 1; }, kTimeout / 2));
    EXPECT_EQ(ring_advance(ring), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(b3), -ECANCELED);
    EXPECT_EQ(b3->runs, 0u);
    EXPECT_EQ(status(a3), 1);
}

TEST_F(DrmSchedResubmit, HangLimitToleratesThatManyHangs) {
    Ring* ring = ring_new(test, 1);
    drm_sched_entity* good = ring_entity(ring);
    drm_sched_entity* bad = ring_entity(ring);
    RingJob* b1 = ring_job(ring, bad, 1);
    RingJob* a1 = ring_job(ring, good);
    ring_submit(b1);
    ring_submit(a1);
    ASSERT_TRUE(run_until([&] { return ring->resets.load() == 1; }, 2 * kTimeout));
    EXPECT_EQ(b1->base.karma.load(), 1);
    // Upstream marks the entity at every hang; only resubmission looks at the limit.
    EXPECT_EQ(guilty_of(ring, bad), 1);
    ASSERT_NE(seen(ring, b1), nullptr);
    EXPECT_EQ(seen(ring, b1)->error, 0);
    EXPECT_EQ(seen(ring, b1)->parent, b1->hw[1]);
    EXPECT_EQ(b1->runs, 2u);
    EXPECT_EQ(ring_advance(ring), 2u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(b1), 1);
    EXPECT_EQ(status(a1), 1);
    EXPECT_EQ(ring->resets.load(), 1u);
}

TEST_F(DrmSchedResubmit, AJobPastTheHangLimitIsCancelled) {
    Ring* ring = ring_new(test, 1);
    drm_sched_entity* good = ring_entity(ring);
    drm_sched_entity* bad = ring_entity(ring);
    RingJob* b1 = ring_job(ring, bad, 2);
    RingJob* a1 = ring_job(ring, good);
    ring_submit(b1);
    ring_submit(a1);
    ASSERT_TRUE(run_until([&] { return ring->resets.load() == 1; }, 2 * kTimeout));
    EXPECT_EQ(b1->runs, 2u);  // tolerated once
    ASSERT_TRUE(run_until([&] { return ring->resets.load() == 2; }, 2 * kTimeout));
    EXPECT_EQ(b1->base.karma.load(), 2);
    EXPECT_EQ(b1->runs, 2u);
    EXPECT_EQ(a1->runs, 3u);
    EXPECT_EQ(ring_advance(ring), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(b1), -ECANCELED);
    EXPECT_EQ(status(a1), 1);
}

TEST_F(DrmSchedResubmit, RunJobErrorOnResubmitFinishesTheJob) {
    Ring* ring = ring_new(test, 0);
    drm_sched_entity* good = ring_entity(ring);
    drm_sched_entity* bad = ring_entity(ring);
    RingJob* b1 = ring_job(ring, bad, 1);
    RingJob* a1 = ring_job(ring, good);
    RingJob* a2 = ring_job(ring, good);
    for (RingJob* j : {b1, a1, a2})
        ring_submit(j);
    ASSERT_TRUE(run_until([&] { return a2->runs == 1; }, kTimeout / 2));
    a1->fail_run_error = -ENOMEM;
    ASSERT_TRUE(run_until([&] { return ring->resets.load() == 1; }, 2 * kTimeout));
    // The error lands on the finished fence and the job has no parent; drm_sched_start then
    // finishes it with -ECANCELED, as upstream's, which overrides it.
    ASSERT_NE(seen(ring, a1), nullptr);
    EXPECT_EQ(seen(ring, a1)->error, -ENOMEM);
    EXPECT_EQ(seen(ring, a1)->parent, nullptr);
    EXPECT_EQ(a1->runs, 1u);
    EXPECT_EQ(seen(ring, a2)->parent, a2->hw[1]);
    EXPECT_EQ(ring_advance(ring), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(a1), -ECANCELED);
    EXPECT_EQ(a1->run_calls, 2u);  // never run again
    EXPECT_EQ(status(a2), 1);
    EXPECT_EQ(status(b1), -ECANCELED);
}

TEST_F(DrmSchedResubmit, KernelJobsGetNoKarma) {
    Ring* ring = ring_new(test, 0);
    auto* e = knew<drm_sched_entity>(GFP_KERNEL);
    ASSERT_EQ(drm_sched_entity_init(e, DRM_SCHED_PRIORITY_KERNEL, ring->sched_list, 1, &ring->guilty[0]), 0);
    ring->entities.push_back(e);
    RingJob* k1 = ring_job(ring, e, 1);
    ring_submit(k1);
    ASSERT_TRUE(run_until([&] { return ring->resets.load() == 1; }, 2 * kTimeout));
    EXPECT_EQ(k1->base.karma.load(), 0);
    EXPECT_EQ(ring->guilty[0].load(), 0);
    EXPECT_EQ(k1->runs, 2u);
    EXPECT_EQ(ring_advance(ring), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(k1), 1);
}

// ---- drm_sched_job_add_syncobj_dependency ----

class DrmSchedSyncobjDep : public kshim::testing::KernelTest {};

TEST_F(DrmSchedSyncobjDep, JobWaitsForTheSyncobjFence) {
    drm::drm_device dev(syncobj_test::full_driver());
    syncobj_test::Opened o(&dev);
    const u32 h = o.create();
    dma_fence* f = test_fence();
    o.replace(h, f);
    Ring* ring = ring_new(test, 0);
    RingJob* j = ring_job(ring, ring_entity(ring));
    ASSERT_EQ(drm_sched_job_add_syncobj_dependency(&j->base, o.file, h, 0), 0);
    EXPECT_TRUE(drm_sched_job_has_dependency(&j->base, f));
    ring_submit(j);
    advance(10 * kTimeout);
    EXPECT_EQ(j->run_calls, 0u);
    signal_with(f, 0);
    ASSERT_TRUE(run_until([&] { return j->runs == 1; }, kTimeout / 2));
    EXPECT_EQ(ring_advance(ring), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(j), 1);
    dma_fence_put(f);
}

TEST_F(DrmSchedSyncobjDep, LookupErrorsLeaveTheJobAlone) {
    drm::drm_device dev(syncobj_test::full_driver());
    syncobj_test::Opened o(&dev);
    const u32 empty = o.create();
    const u32 bin = o.create();
    dma_fence* f = test_fence();
    o.replace(bin, f);
    Ring* ring = ring_new(test, 0);
    RingJob* j = ring_job(ring, ring_entity(ring));
    EXPECT_EQ(drm_sched_job_add_syncobj_dependency(&j->base, o.file, 99, 0), -ENOENT);
    EXPECT_EQ(drm_sched_job_add_syncobj_dependency(&j->base, o.file, empty, 0), -EINVAL);  // no fence
    EXPECT_EQ(drm_sched_job_add_syncobj_dependency(&j->base, o.file, bin, 1), -EINVAL);    // binary: no points
    EXPECT_EQ(j->base.dependencies.count, 0u);
    ring_submit(j);
    ASSERT_TRUE(run_until([&] { return j->runs == 1; }, kTimeout / 2));
    EXPECT_EQ(ring_advance(ring), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(j), 1);
    signal_with(f, 0);
    dma_fence_put(f);
}

TEST_F(DrmSchedSyncobjDep, TimelinePointSelectsTheFence) {
    drm::drm_device dev(syncobj_test::full_driver());
    syncobj_test::Opened o(&dev);
    const u32 tl = o.create();
    dma_fence* f1 = test_fence();
    dma_fence* f2 = test_fence();
    o.add_point(tl, f1, 1);
    o.add_point(tl, f2, 2);
    signal_with(f1, 0);
    Ring* ring = ring_new(test, 0);
    drm_sched_entity* e1 = ring_entity(ring);
    drm_sched_entity* e2 = ring_entity(ring);
    RingJob* at1 = ring_job(ring, e1);
    RingJob* at2 = ring_job(ring, e2);
    ASSERT_EQ(drm_sched_job_add_syncobj_dependency(&at1->base, o.file, tl, 1), 0);
    ASSERT_EQ(drm_sched_job_add_syncobj_dependency(&at2->base, o.file, tl, 2), 0);
    EXPECT_EQ(drm_sched_job_add_syncobj_dependency(&at2->base, o.file, tl, 3), -EINVAL);  // not there yet
    ring_submit(at1);
    ring_submit(at2);
    // Point 1 has signalled: its job runs; point 2 waits for f2.
    ASSERT_TRUE(run_until([&] { return at1->runs == 1; }, kTimeout / 2));
    EXPECT_EQ(ring_advance(ring), 1u);
    advance(10 * kTimeout);
    EXPECT_EQ(status(at1), 1);
    EXPECT_EQ(at2->run_calls, 0u);
    signal_with(f2, 0);
    ASSERT_TRUE(run_until([&] { return at2->runs == 1; }, kTimeout / 2));
    EXPECT_EQ(ring_advance(ring), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(status(at2), 1);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

}  // namespace
}  // namespace sched_test
