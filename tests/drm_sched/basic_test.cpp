// The job lifecycle, queues in virtual time, credits, teardown, kill, fini, stop/start
// (the cases of drivers/gpu/drm/scheduler/tests/tests_basic.c and more).
#include "kernel_shim/trace.h"
#include "tests/drm_sched/sched_test_util.h"

namespace sched_test {
namespace {

class DrmSchedBasic : public kshim::testing::KernelTest {};

TEST_F(DrmSchedBasic, ScheduledSignalsAtRunJobFinishedOnlyAfterHwFence) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* job = drm_mock_sched_job_new(test, entity);  // manual: completes on advance
    drm_mock_sched_job_submit(job);
    dma_fence* scheduled = dma_fence_get(&job->base.s_fence->scheduled);
    EXPECT_FALSE(dma_fence_is_signaled(scheduled));

    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(job));
    EXPECT_TRUE(dma_fence_is_signaled(scheduled));
    EXPECT_FALSE(dma_fence_is_signaled(job->finished));

    advance(10 * NSEC_PER_SEC);  // time alone does not finish a manual job
    EXPECT_FALSE(dma_fence_is_signaled(job->finished));

    EXPECT_EQ(drm_mock_sched_advance(sched, 1), 1u);
    EXPECT_TRUE(dma_fence_is_signaled(job->finished));
    EXPECT_EQ(drm_mock_sched_job_status(job), 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(job->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
    // The scheduled fence's timestamp is when run_job ran, before the hardware finished.
    EXPECT_LE(dma_fence_timestamp(scheduled), dma_fence_timestamp(job->finished));
    dma_fence_put(scheduled);
}

TEST_F(DrmSchedBasic, RunJobErrorPointerFinishesWithThatError) {
    static const drm_sched_backend_ops ops = {
        .run_job = [](drm_sched_job*) -> dma_fence* { return ERR_PTR<dma_fence>(-EIO); },
        .timedout_job = [](drm_sched_job*) { return DRM_GPU_SCHED_STAT_RESET; },
        .free_job = [](drm_sched_job* j) { drm_sched_job_cleanup(j); },
    };
    drm_gpu_scheduler sched;
    drm_sched_init_args args;
    args.ops = &ops;
    args.credit_limit = 8;
    args.name = "err";
    ASSERT_EQ(drm_sched_init(&sched, &args), 0);
    drm_gpu_scheduler* list[] = {&sched};
    drm_sched_entity entity;
    ASSERT_EQ(drm_sched_entity_init(&entity, DRM_SCHED_PRIORITY_NORMAL, list, 1, nullptr), 0);
    drm_sched_job job;
    ASSERT_EQ(drm_sched_job_init(&job, &entity, 1, nullptr), 0);
    drm_sched_job_arm(&job);
    dma_fence* finished = dma_fence_get(&job.s_fence->finished);
    drm_sched_entity_push_job(&job);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(dma_fence_get_status(finished), -EIO);
    EXPECT_EQ(drm_sched_entity_error(&entity), -EIO);
    dma_fence_put(finished);
    drm_sched_entity_destroy(&entity);
    drm_sched_fini(&sched);
}

struct QueueCase {
    const char* name;
    int entities;
    int schedulers;
    bool chain;
    ktime_t expected_ms;
};

class DrmSchedQueue : public kshim::testing::KernelTest, public ::testing::WithParamInterface<QueueCase> {};

// 100 jobs of 1 ms: one ring runs them back to back in 100 ms whatever the entities or the
// same-scheduler chain; two rings take 50 ms, unless a chain across them serialises them.
TEST_P(DrmSchedQueue, HundredJobsCompleteInExpectedVirtualTime) {
    const QueueCase& c = GetParam();
    constexpr int kJobs = 100;
    std::vector<drm_mock_scheduler*> scheds;
    for (int s = 0; s < c.schedulers; s++)
        scheds.push_back(managed_sched(test));
    std::vector<drm_mock_sched_entity*> entities;
    for (int e = 0; e < c.entities; e++)
        entities.push_back(managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, scheds[e % c.schedulers]));

    const ktime_t t0 = ktime_get();
    std::vector<drm_mock_sched_job*> jobs;
    for (int i = 0; i < kJobs; i++) {
        auto* j = timed_job(entities[i % c.entities], 1000);
        submit_after(j, c.chain && i ? jobs.back()->finished : nullptr);
        jobs.push_back(j);
    }
    ASSERT_TRUE(advance_until_idle());
    ASSERT_TRUE(all_finished(jobs));
    ktime_t last = 0;
    for (auto* j : jobs) {
        EXPECT_EQ(drm_mock_sched_job_status(j), 1);
        last = std::max(last, j->done_at.load());
    }
    EXPECT_EQ(last - t0, c.expected_ms * NSEC_PER_MSEC);
    if (c.chain) {  // every job ends before the next one starts or together with it
        for (int i = 1; i < kJobs; i++)
            EXPECT_LE(jobs[i - 1]->done_at.load(), jobs[i]->done_at.load() - 1000 * NSEC_PER_USEC);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DrmSchedQueue,
    ::testing::Values(QueueCase{"OneEntity", 1, 1, false, 100}, QueueCase{"FourEntities", 4, 1, false, 100},
                      QueueCase{"OneEntityChain", 1, 1, true, 100}, QueueCase{"FourEntitiesChain", 4, 1, true, 100},
                      QueueCase{"TwoRings", 2, 2, false, 50}, QueueCase{"TwoRingsChain", 2, 2, true, 100}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(DrmSchedBasic, CreditLimitOneRunsSecondJobOnlyAfterFirstCompletes) {
    drm_mock_sched_args a;
    a.credit_limit = 1;
    auto* sched = managed_sched(test, a);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* j1 = drm_mock_sched_job_new(test, entity);
    auto* j2 = drm_mock_sched_job_new(test, entity);
    drm_mock_sched_job_submit(j1);
    drm_mock_sched_job_submit(j2);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(j1));
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(j2));
    EXPECT_EQ(drm_sched_available_credits(&sched->base), 0u);
    advance(NSEC_PER_SEC);
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(j2));

    drm_mock_sched_advance(sched, 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_finished(j1));
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(j2));
    EXPECT_EQ(sched->max_running.load(), 1u);
    drm_mock_sched_advance(sched, 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_finished(j2));
    EXPECT_EQ(drm_sched_available_credits(&sched->base), 1u);
}

TEST_F(DrmSchedBasic, JobLargerThanCreditLimitIsClampedAndRuns) {
    drm_mock_sched_args a;
    a.credit_limit = 4;
    auto* sched = managed_sched(test, a);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* big = timed_job(entity, 100, 10);
    drm_mock_sched_job_submit(big);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(expect_report(ReportKind::Warn));  // "Jobs may not exceed the credit limit"
    EXPECT_TRUE(drm_mock_sched_job_is_finished(big));
    EXPECT_EQ(drm_sched_available_credits(&sched->base), 4u);
}

TEST_F(DrmSchedBasic, CreditsBoundJobsOnTheRing) {
    drm_mock_sched_args a;
    a.credit_limit = 5;
    auto* sched = managed_sched(test, a);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    std::vector<drm_mock_sched_job*> jobs;
    for (int i = 0; i < 20; i++) {
        jobs.push_back(timed_job(entity, 1000, 2));
        drm_mock_sched_job_submit(jobs.back());
    }
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(all_finished(jobs));
    EXPECT_EQ(sched->max_running.load(), 2u);  // 2 jobs of 2 credits fit in 5
}

TEST_F(DrmSchedBasic, ZeroCreditsAndNoRqAreRejected) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    drm_sched_job job;
    EXPECT_EQ(drm_sched_job_init(&job, &entity->base, 0, nullptr), -EINVAL);
    drm_sched_entity empty;
    drm_gpu_scheduler* none[1] = {nullptr};
    ASSERT_EQ(drm_sched_entity_init(&empty, DRM_SCHED_PRIORITY_NORMAL, none, 0, nullptr), 0);
    EXPECT_EQ(drm_sched_job_init(&job, &empty, 1, nullptr), -ENOENT);
    drm_sched_entity_destroy(&empty);
}

TEST_F(DrmSchedBasic, CleanupBeforeArmFreesTheFences) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    drm_sched_job job;
    ASSERT_EQ(drm_sched_job_init(&job, &entity->base, 1, nullptr), 0);
    for (int i = 0; i < 10; i++) {  // past the inline slots
        dma_fence* f = test_fence();
        ASSERT_EQ(drm_sched_job_add_dependency(&job, f), 0);
        dma_fence_signal(f);
    }
    drm_sched_job_cleanup(&job);  // teardown checks the slab and kmalloc counters
}

TEST_F(DrmSchedBasic, FiniCancelsPendingJobsWithECANCELED) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    std::vector<drm_mock_sched_job*> jobs;
    for (int i = 0; i < 4; i++) {
        jobs.push_back(i % 2 ? timed_job(entity, 1000 * 1000) : drm_mock_sched_job_new(test, entity));
        drm_mock_sched_job_submit(jobs.back());
    }
    ASSERT_TRUE(run_until([&] { return sched->jobs_run.load() == 4; }, NSEC_PER_SEC));
    // The jobs' memory is the test's: fences held past fini stay readable until the test ends.
    std::vector<dma_fence*> hw;
    for (auto* j : jobs)
        hw.push_back(dma_fence_get(&j->hw_fence));
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, entity);  // now, not at the end
    kunit_release_action(test, drm_mock_sched_fini_wrap, sched);
    for (size_t i = 0; i < jobs.size(); i++) {
        EXPECT_EQ(hw[i]->error.load(), -ECANCELED);
        EXPECT_TRUE(jobs[i]->flags.load() & DRM_MOCK_SCHED_JOB_CANCELED);
        EXPECT_TRUE(jobs[i]->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
        EXPECT_FALSE(jobs[i]->flags.load() & DRM_MOCK_SCHED_JOB_DONE);
        dma_fence_put(hw[i]);
    }
    ASSERT_TRUE(advance_until_idle());
}

TEST_F(DrmSchedBasic, KillWithQueuedJobsSignalsFinishedWithError) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    dma_fence* gate = test_fence();
    std::vector<drm_mock_sched_job*> jobs;
    for (int i = 0; i < 5; i++) {
        jobs.push_back(timed_job(entity, 1000));
        submit_after(jobs.back(), i == 0 ? gate : nullptr);
    }
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(sched->jobs_run.load(), 0u);  // all behind the gate

    drm_sched_entity_kill(&entity->base);
    ASSERT_TRUE(advance_until_idle());
    // Killed jobs still wait for their dependencies before they complete.
    EXPECT_FALSE(drm_mock_sched_job_is_finished(jobs[0]));
    dma_fence_signal(gate);
    ASSERT_TRUE(advance_until_idle());
    for (auto* j : jobs) {
        EXPECT_EQ(drm_mock_sched_job_status(j), -ESRCH);
        EXPECT_TRUE(j->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
        EXPECT_FALSE(j->flags.load() & DRM_MOCK_SCHED_JOB_RAN);
        EXPECT_FALSE(drm_mock_sched_job_is_finished(j));  // killed, never completed
    }
    EXPECT_EQ(drm_sched_score(&sched->base), 0);
    dma_fence_put(gate);
}

TEST_F(DrmSchedBasic, PushToKilledEntityIsRefusedAndCleanedUpByFini) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    drm_sched_entity_kill(&entity->base);
    auto* j = timed_job(entity, 10);
    drm_mock_sched_job_submit(j);
    EXPECT_TRUE(log_contains("Trying to push to a killed entity"));
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(sched->jobs_run.load(), 0u);
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, entity);  // fini kills what was queued
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j), -ESRCH);
}

// Entities torn down while their jobs wait on other entities' jobs and on a fence signalled
// later: nothing hangs, nothing leaks (the fixture checks both), every fence signals.
TEST_F(DrmSchedBasic, TearingDownEntitiesWithPendingDependentJobs) {
    auto* sched = managed_sched(test);
    auto* a = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* b = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* c = managed_entity(test, DRM_SCHED_PRIORITY_HIGH, sched);
    dma_fence* late = test_fence();
    std::vector<drm_mock_sched_job*> all;
    for (int i = 0; i < 10; i++) {
        auto* ja = timed_job(a, 1000);
        submit_after(ja, nullptr);
        auto* jb = timed_job(b, 1000);
        submit_after(jb, ja->finished);
        auto* jc = timed_job(c, 1000);
        EXPECT_EQ(drm_sched_job_add_dependency(&jc->base, dma_fence_get(late)), 0);
        submit_after(jc, jb->finished);
        all.insert(all.end(), {ja, jb, jc});
    }
    // c cannot drain (its head waits for `late`): destroy waits its bounded flush, then kills.
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, c);
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, b);
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, a);
    ASSERT_TRUE(advance_until_idle());
    dma_fence_signal(late);
    dma_fence_put(late);
    ASSERT_TRUE(advance_until_idle());
    for (auto* j : all) {
        EXPECT_TRUE(dma_fence_is_signaled(j->finished));
        EXPECT_TRUE(j->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
    }
}

TEST_F(DrmSchedBasic, GuiltyEntityJobsFinishWithECANCELED) {
    auto* sched = managed_sched(test);
    std::atomic<int> guilty{0};
    drm_mock_sched_entity* e = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    e->base.guilty = &guilty;
    auto* j1 = timed_job(e, 10);
    drm_mock_sched_job_submit(j1);
    ASSERT_TRUE(advance_until_idle());
    guilty.store(1);
    auto* j2 = timed_job(e, 10);
    drm_mock_sched_job_submit(j2);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j1), 1);
    EXPECT_EQ(drm_mock_sched_job_status(j2), -ECANCELED);
}

// The reset flow of a driver without resubmission (as upstream): stop detaches the jobs from
// their hardware fences and drops them; start finishes every job that lost its fence with the
// error given (or -ECANCELED), returns the credits, and later jobs run normally.
TEST_F(DrmSchedBasic, StopAndStartFinishDetachedJobsWithTheError) {
    auto* sched = managed_sched(test);
    auto* e = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* j1 = drm_mock_sched_job_new(test, e);
    auto* j2 = drm_mock_sched_job_new(test, e);
    auto* j3 = drm_mock_sched_job_new(test, e);
    drm_mock_sched_job_submit(j1);
    drm_mock_sched_job_submit(j2);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_advance(sched, 1), 1u);  // j1 completes before the reset
    drm_sched_stop(&sched->base, nullptr);
    EXPECT_TRUE(j1->flags.load() & DRM_MOCK_SCHED_JOB_FREED);  // done jobs are freed by stop
    drm_mock_sched_job_submit(j3);                             // queued while stopped
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(j3));
    EXPECT_EQ(drm_sched_available_credits(&sched->base), sched->base.credit_limit);

    drm_sched_start(&sched->base, -EIO);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j1), 1);
    EXPECT_EQ(drm_mock_sched_job_status(j2), -EIO);
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(j3));
    drm_mock_sched_advance(sched, 2);  // j2's stale hw fence and j3's
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j3), 1);
    EXPECT_EQ(drm_sched_available_credits(&sched->base), sched->base.credit_limit);
}

TEST_F(DrmSchedBasic, WqueueStopHoldsSubmissionUntilStart) {
    auto* sched = managed_sched(test);
    auto* e = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    drm_sched_wqueue_stop(&sched->base);
    auto* j = timed_job(e, 10);
    drm_mock_sched_job_submit(j);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(j));
    EXPECT_TRUE(drm_sched_wqueue_ready(&sched->base));
    drm_sched_wqueue_start(&sched->base);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j), 1);
}

TEST_F(DrmSchedBasic, TraceEventsUseKernelNames) {
    trace::start(true);
    auto* sched = managed_sched(test);
    auto* e = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    dma_fence* gate = test_fence();
    auto* j = timed_job(e, 10);
    submit_after(j, gate);
    ASSERT_TRUE(advance_until_idle());
    dma_fence_signal(gate);
    dma_fence_put(gate);
    ASSERT_TRUE(advance_until_idle());
    std::string json = trace::to_json();
    trace::stop();
    for (const char* name : {"drm_sched_job", "drm_run_job", "drm_sched_process_job", "drm_sched_job_wait_dep"})
        EXPECT_NE(json.find(std::string("\"") + name + "\""), std::string::npos) << name;
}

// Upstream's drm_sched_basic_submit as it ports: the wait helpers, and a test that ends with
// drm_mock_sched_fini and nothing else (the jobs are test-managed; the leak check would fail).
TEST_F(DrmSchedBasic, UpstreamShapeSubmitWaitHelpersAndFiniOnly) {
    auto* sched = drm_mock_sched_new(test, MAX_SCHEDULE_TIMEOUT);
    auto* entity = drm_mock_sched_entity_new(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* job = drm_mock_sched_job_new(test, entity);
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(job));
    drm_mock_sched_job_submit(job);
    EXPECT_TRUE(drm_mock_sched_job_wait_scheduled(job, HZ));
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(job));
    const ktime_t t0 = ktime_get();
    EXPECT_FALSE(drm_mock_sched_job_wait_finished(job, HZ / 2));
    EXPECT_GE(ktime_get() - t0, static_cast<ktime_t>(jiffies_to_nsecs(HZ / 2)));  // waited in virtual time
    EXPECT_EQ(drm_mock_sched_advance(sched, 1), 1u);
    EXPECT_TRUE(drm_mock_sched_job_wait_finished(job, HZ));
    EXPECT_TRUE(drm_mock_sched_job_is_finished(job));

    // A job never submitted, and one with a duration, are given back at the end too.
    (void)drm_mock_sched_job_new(test, entity);
    auto* timed = drm_mock_sched_job_new(test, entity);
    drm_mock_sched_job_set_duration_us(timed, 1000);
    drm_mock_sched_job_submit(timed);
    EXPECT_TRUE(drm_mock_sched_job_wait_finished(timed, HZ));
    EXPECT_EQ(timed->done_at.load() - timed->run_at, 1000 * NSEC_PER_USEC);
    drm_mock_sched_entity_free(entity);
    drm_mock_sched_fini(sched);
}

// Upstream's drm_sched_basic_cancel, ported line for line: drm_sched_fini cancels the pending
// job through cancel_job, and the test reads the job's hardware fence after drm_mock_sched_fini.
// That holds because the job is test-managed memory, freed only when the test ends (with the
// job freed at fini, ASan reports a heap-use-after-free on the last line). Beyond upstream: a
// cancelled job is not finished and its `done` never completes.
TEST_F(DrmSchedBasic, UpstreamBasicCancelReadsHwFenceAfterFini) {
    drm_mock_sched_entity* entity;
    drm_mock_scheduler* sched;
    drm_mock_sched_job* job;
    bool done;

    sched = drm_mock_sched_new(test, MAX_SCHEDULE_TIMEOUT);
    entity = drm_mock_sched_entity_new(test, DRM_SCHED_PRIORITY_NORMAL, sched);

    job = drm_mock_sched_job_new(test, entity);

    drm_mock_sched_job_submit(job);

    done = drm_mock_sched_job_wait_scheduled(job, HZ);
    ASSERT_TRUE(done);

    drm_mock_sched_entity_free(entity);
    drm_mock_sched_fini(sched);

    EXPECT_FALSE(drm_mock_sched_job_is_finished(job));
    EXPECT_FALSE(try_wait_for_completion(&job->done));
    ASSERT_EQ(job->hw_fence.error, -ECANCELED);
}

// A job of one scheduler that depends on another's: the first scheduler may be fini'd while
// the dependent job still holds its hardware fence (test-managed memory, so it stays).
TEST_F(DrmSchedBasic, FiniInAnyOrderAcrossDependentSchedulers) {
    for (int order = 0; order < 2; order++) {
        auto* a = drm_mock_sched_new(test);
        auto* b = drm_mock_sched_new(test);
        auto* ea = drm_mock_sched_entity_new(test, DRM_SCHED_PRIORITY_NORMAL, a);
        auto* eb = drm_mock_sched_entity_new(test, DRM_SCHED_PRIORITY_NORMAL, b);
        auto* ja = drm_mock_sched_job_new(test, ea);
        auto* jb = drm_mock_sched_job_new(test, eb);
        drm_mock_sched_job_submit(ja);
        ASSERT_TRUE(drm_mock_sched_job_wait_scheduled(ja, HZ));
        submit_after(jb, &ja->hw_fence);
        ASSERT_TRUE(advance_until_idle());
        EXPECT_FALSE(drm_mock_sched_job_is_scheduled(jb));
        drm_mock_sched_entity_free(ea);
        drm_mock_sched_entity_free(eb);  // jb never ran: killed with -ESRCH, dep callback gone
        if (order == 0) {
            drm_mock_sched_fini(a);
            drm_mock_sched_fini(b);
        } else {
            drm_mock_sched_fini(b);
            drm_mock_sched_fini(a);
        }
        ASSERT_TRUE(advance_until_idle());
    }
}

TEST_F(DrmSchedBasic, AdvanceWarnsOnSeqnoOverflow) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* job = drm_mock_sched_job_new(test, entity);
    drm_mock_sched_job_submit(job);
    ASSERT_TRUE(drm_mock_sched_job_wait_scheduled(job, HZ));
    {
        kshim::SpinGuard g(sched->lock);
        sched->hw_timeline.cur_seqno = ~u64{0} - 1;  // as if the timeline had run that far
    }
    EXPECT_EQ(drm_mock_sched_advance(sched, 2), 0u);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    {
        kshim::SpinGuard g(sched->lock);
        sched->hw_timeline.cur_seqno = 0;
    }
    EXPECT_EQ(drm_mock_sched_advance(sched, 1), 1u);
}

// The mock's own hardware reset kills, it does not complete: not finished, `done` pending.
TEST_F(DrmSchedBasic, HwResetJobIsNotFinished) {
    auto* sched = managed_sched(test);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* job = drm_mock_sched_job_new(test, entity);
    drm_mock_sched_job_submit(job);
    ASSERT_TRUE(drm_mock_sched_job_wait_scheduled(job, HZ));
    EXPECT_EQ(drm_mock_sched_hw_reset(sched, -EIO), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(job), -EIO);
    EXPECT_FALSE(drm_mock_sched_job_is_finished(job));
    EXPECT_FALSE(drm_mock_sched_job_wait_finished(job, 1));
    EXPECT_EQ(sched->running.load(), 0u);
}

}  // namespace
}  // namespace sched_test
