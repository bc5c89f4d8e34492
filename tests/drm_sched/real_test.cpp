// Real threads (runs under TSan): submitters, the submit workqueue, the hrtimer-driven mock
// hardware and teardown all race for real.
#include "tests/drm_sched/sched_test_util.h"

namespace sched_test {
namespace {

class DrmSchedReal : public kshim::testing::RealKernelTest {};

TEST_F(DrmSchedReal, ParallelSubmittersAllJobsFinishInOrder) {
    drm_mock_scheduler* s[2] = {managed_sched(test), managed_sched(test)};
    constexpr int kTasks = 4, kJobs = 300;
    std::vector<drm_mock_sched_entity*> entities;
    for (int t = 0; t < kTasks; t++)
        entities.push_back(t == 0 ? managed_entity_list(test, DRM_SCHED_PRIORITY_NORMAL, s, 2)
                                  : managed_entity(test, static_cast<drm_sched_priority>(t % 4), s[t % 2]));
    std::vector<std::vector<drm_mock_sched_job*>> jobs(kTasks, std::vector<drm_mock_sched_job*>(kJobs));
    std::vector<std::atomic<drm_mock_sched_job*>> latest(kTasks);
    std::vector<Task*> tasks;
    for (int t = 0; t < kTasks; t++)
        tasks.push_back(kthread_run(
            [&, t] {
                for (int k = 0; k < kJobs; k++) {
                    auto* j = timed_job(entities[t], k % 4 ? 0 : 20);
                    if (!j->duration_us)
                        j->duration_us = 1;
                    drm_mock_sched_job* other = latest[(t + 1) % kTasks].load();
                    submit_after(j, k % 5 == 0 && other ? other->finished : nullptr);
                    jobs[t][k] = j;
                    latest[t].store(j);
                }
                return 0;
            },
            "submitter"));
    for (Task* t : tasks)
        kthread_stop(t);
    for (auto& v : jobs)
        for (auto* j : v) {
            ASSERT_GT(dma_fence_wait_timeout(j->finished, false, msecs_to_jiffies(10000)), 0);
            EXPECT_EQ(drm_mock_sched_job_status(j), 1);
        }
    for (auto& v : jobs)
        for (size_t k = 1; k < v.size(); k++)
            EXPECT_LE(v[k - 1]->done_at.load(), v[k]->done_at.load());
}

// The entity's job queue has no lock: a pop that takes the last job races with a push that is
// linking the next one. Short bursts keep the queue emptying and refilling thousands of times
// while the worker pops as fast as it can, so a lost or reordered job shows up as one that never
// finishes or finishes out of order.
TEST_F(DrmSchedReal, EntityQueueHandsOverEveryJobWhileItKeepsEmptying) {
    auto* sched = managed_sched(test);
    auto* e = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    constexpr int kJobs = 3000;
    std::vector<drm_mock_sched_job*> jobs;
    for (int i = 0; i < kJobs; i++) {
        auto* j = timed_job(e, 1);
        drm_mock_sched_job_submit(j);
        jobs.push_back(j);
        if (i % 7 == 6)
            udelay(i % 3);  // let the worker catch up and find the queue empty
    }
    for (auto* j : jobs) {
        ASSERT_GT(dma_fence_wait_timeout(j->finished, false, msecs_to_jiffies(10000)), 0);
        EXPECT_EQ(drm_mock_sched_job_status(j), 1);
    }
    for (size_t k = 1; k < jobs.size(); k++) {
        EXPECT_LE(jobs[k - 1]->run_at, jobs[k]->run_at);
        EXPECT_LT(jobs[k - 1]->finished->seqno, jobs[k]->finished->seqno);
    }
    EXPECT_EQ(e->base.job_queue.count(), 0u);
    EXPECT_EQ(e->base.job_queue.head.load(), nullptr);
}

TEST_F(DrmSchedReal, TimeoutKillAndFiniRacingRunningJobs) {
    auto* sched = managed_sched(test, static_cast<long>(msecs_to_jiffies(20)));
    auto* e1 = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* e2 = managed_entity(test, DRM_SCHED_PRIORITY_HIGH, sched);
    std::vector<drm_mock_sched_job*> jobs;
    for (int i = 0; i < 200; i++) {
        auto* j = drm_mock_sched_job_new(test, i % 2 ? e1 : e2);
        j->duration_us = i % 50 == 49 ? 0 : 30;  // a few never complete: the timeout resets them
        drm_mock_sched_job_submit(j);
        jobs.push_back(j);
    }
    Task* killer = kthread_run(
        [&] {
            msleep(2);
            drm_sched_entity_kill(&e1->base);
            return 0;
        },
        "killer");
    kthread_stop(killer);
    msleep(50);
    std::vector<dma_fence*> finished;
    for (auto* j : jobs)
        finished.push_back(dma_fence_get(j->finished));
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, e1);
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, e2);
    kunit_release_action(test, drm_mock_sched_fini_wrap, sched);  // cancels whatever is still on the ring
    for (dma_fence* f : finished) {
        ASSERT_GT(dma_fence_wait_timeout(f, false, msecs_to_jiffies(10000)), 0);
        int st = dma_fence_get_status(f);
        EXPECT_TRUE(st == 1 || st == -ESRCH || st == -ETIMEDOUT || st == -ECANCELED) << st;
        dma_fence_put(f);
    }
    ASSERT_TRUE(advance_until_idle());
}

}  // namespace
}  // namespace sched_test
