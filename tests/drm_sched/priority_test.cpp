// Run-queue priorities, the FIFO and round-robin policies, priority changes and entities
// moving between schedulers while jobs flow.
#include <algorithm>

#include "tests/drm_sched/sched_test_util.h"

namespace sched_test {
namespace {

class DrmSchedPolicy : public kshim::testing::KernelTest, public ::testing::WithParamInterface<int> {};

// Jobs of every priority queued at once on a ring that takes one job at a time: all KERNEL
// jobs run first, then HIGH, NORMAL, LOW.
TEST_P(DrmSchedPolicy, HigherPriorityEntitiesAreServedFirst) {
    drm_mock_sched_args a;
    a.credit_limit = 1;
    a.policy = GetParam();
    auto* sched = managed_sched(test, a);
    std::vector<std::pair<drm_mock_sched_job*, int>> jobs;
    // Lowest first, so submission order alone would give the opposite result.
    for (int p = DRM_SCHED_PRIORITY_LOW; p >= DRM_SCHED_PRIORITY_KERNEL; p--) {
        auto* e = managed_entity(test, static_cast<drm_sched_priority>(p), sched);
        for (int i = 0; i < 3; i++) {
            auto* j = timed_job(e, 1000);
            drm_mock_sched_job_submit(j);
            jobs.emplace_back(j, p);
        }
    }
    ASSERT_TRUE(advance_until_idle());
    std::sort(jobs.begin(), jobs.end(), [](auto& x, auto& y) { return x.first->run_at < y.first->run_at; });
    for (size_t i = 1; i < jobs.size(); i++) {
        EXPECT_LT(jobs[i - 1].first->run_at, jobs[i].first->run_at);
        EXPECT_LE(jobs[i - 1].second, jobs[i].second) << "job " << i;
    }
}

// Two entities of one priority with jobs queued at the same time share the ring in turns.
TEST_P(DrmSchedPolicy, EntitiesOfOnePriorityTakeTurns) {
    drm_mock_sched_args a;
    a.credit_limit = 1;
    a.policy = GetParam();
    auto* sched = managed_sched(test, a);
    auto* e1 = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* e2 = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    std::vector<drm_mock_sched_job*> j1, j2;
    for (int i = 0; i < 4; i++) {
        j1.push_back(timed_job(e1, 1000));
        drm_mock_sched_job_submit(j1.back());
    }
    advance(NSEC_PER_USEC);  // e2's jobs are younger than all of e1's
    for (int i = 0; i < 4; i++) {
        j2.push_back(timed_job(e2, 1000));
        drm_mock_sched_job_submit(j2.back());
    }
    ASSERT_TRUE(advance_until_idle());
    if (GetParam() == DRM_SCHED_POLICY_RR) {
        // Round-robin alternates.
        for (int i = 0; i < 4; i++)
            EXPECT_LT(j1[i]->run_at, j2[i]->run_at);
        for (int i = 0; i < 3; i++)
            EXPECT_LT(j2[i]->run_at, j1[i + 1]->run_at);
    } else {
        // FIFO follows the oldest waiting job: e1's were all pushed first.
        EXPECT_LT(j1[3]->run_at, j2[0]->run_at);
    }
}

INSTANTIATE_TEST_SUITE_P(Policies, DrmSchedPolicy, ::testing::Values(DRM_SCHED_POLICY_FIFO, DRM_SCHED_POLICY_RR),
                         [](const auto& info) { return info.param == DRM_SCHED_POLICY_FIFO ? "Fifo" : "RoundRobin"; });

class DrmSchedMove : public kshim::testing::SweepableKernelTest {};

// A kthread keeps submitting while the test body changes the entity's priority back and forth:
// every job completes, in order, and once the entity drains the new priority applies.
TEST_F(DrmSchedMove, ChangingPriorityWhileJobsFlowIsSafe) {
    auto* sched = managed_sched(test);
    auto* e = managed_entity(test, DRM_SCHED_PRIORITY_LOW, sched);
    std::vector<drm_mock_sched_job*> jobs(200);
    Task* submitter = kthread_run(
        [&] {
            for (auto& j : jobs) {
                j = timed_job(e, 50);
                drm_mock_sched_job_submit(j);
                if (&j - &jobs[0] == 100)
                    msleep(5);
            }
            return 0;
        },
        "submitter");
    for (int i = 0; i < 20; i++) {
        drm_sched_entity_set_priority(&e->base, static_cast<drm_sched_priority>(i % DRM_SCHED_PRIORITY_COUNT));
        usleep_range(200, 300);
    }
    kthread_stop(submitter);
    drm_sched_entity_set_priority(&e->base, DRM_SCHED_PRIORITY_KERNEL);
    ASSERT_TRUE(advance_until_idle());
    ASSERT_TRUE(all_finished(jobs));
    for (size_t i = 1; i < jobs.size(); i++)
        EXPECT_LE(jobs[i - 1]->run_at, jobs[i]->run_at);
    // Idle now: the next job's arm puts the entity on the KERNEL run queue.
    auto* last = timed_job(e, 10);
    drm_mock_sched_job_submit(last);
    EXPECT_EQ(e->base.rq, sched->base.sched_rq[DRM_SCHED_PRIORITY_KERNEL]);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(last), 1);
}

TEST_F(DrmSchedMove, PickBestChoosesTheLeastBusyScheduler) {
    drm_mock_scheduler* s[2] = {managed_sched(test), managed_sched(test)};
    auto* busy = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, s[0]);
    std::vector<drm_mock_sched_job*> busy_jobs;
    for (int i = 0; i < 5; i++) {
        busy_jobs.push_back(drm_mock_sched_job_new(test, busy));
        drm_mock_sched_job_submit(busy_jobs.back());
    }
    ASSERT_TRUE(advance_until_idle());
    auto* e = managed_entity_list(test, DRM_SCHED_PRIORITY_NORMAL, s, 2);
    auto* j = timed_job(e, 100);
    drm_mock_sched_job_submit(j);
    EXPECT_EQ(j->base.sched, &s[1]->base);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j), 1);

    // Restricted to the busy one, the entity moves there once idle.
    drm_sched_entity_modify_sched(&e->base, &e->sched_list[0], 1);
    auto* j2 = timed_job(e, 100);
    drm_mock_sched_job_submit(j2);
    EXPECT_EQ(j2->base.sched, &s[0]->base);
    drm_mock_sched_advance(s[0], 5);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j2), 1);
    EXPECT_TRUE(all_finished(busy_jobs));
}

// Entities on two schedulers, re-pointed between them while a kthread per entity submits:
// nothing is lost, an entity only moves when idle, and each entity's jobs finish in order.
TEST_F(DrmSchedMove, MovingEntitiesBetweenSchedulersWhileJobsFlowIsSafe) {
    drm_mock_scheduler* s[2] = {managed_sched(test), managed_sched(test)};
    constexpr int kEntities = 4, kJobs = 60;
    std::vector<drm_mock_sched_entity*> entities;
    for (int i = 0; i < kEntities; i++)
        entities.push_back(managed_entity_list(test, DRM_SCHED_PRIORITY_NORMAL, s, 2));
    std::vector<std::vector<drm_mock_sched_job*>> jobs(kEntities, std::vector<drm_mock_sched_job*>(kJobs));
    std::vector<Task*> tasks;
    for (int i = 0; i < kEntities; i++)
        tasks.push_back(kthread_run(
            [&, i] {
                for (int k = 0; k < kJobs; k++) {
                    jobs[i][k] = timed_job(entities[i], 20 + 10 * i);
                    drm_mock_sched_job_submit(jobs[i][k]);
                    if (k % 7 == 0)
                        usleep_range(100, 200);
                }
                return 0;
            },
            "submitter"));
    for (int r = 0; r < 30; r++) {
        auto* e = entities[r % kEntities];
        drm_sched_entity_modify_sched(&e->base, &e->sched_list[(r / kEntities) % 2], 1);
        usleep_range(50, 150);
        drm_sched_entity_modify_sched(&e->base, e->sched_list, 2);
    }
    for (Task* t : tasks)
        kthread_stop(t);
    ASSERT_TRUE(advance_until_idle());
    int on[2] = {0, 0};
    for (auto& v : jobs) {
        ASSERT_TRUE(all_finished(v));
        for (size_t k = 0; k < v.size(); k++) {
            EXPECT_EQ(drm_mock_sched_job_status(v[k]), 1);
            if (k) {
                EXPECT_LE(v[k - 1]->done_at.load(), v[k]->done_at.load());
                // A move only happens once the previous job is done.
                if (v[k - 1]->base.sched != v[k]->base.sched) {
                    EXPECT_LE(v[k - 1]->done_at.load(), v[k]->run_at);
                }
            }
            on[v[k]->base.sched == &s[1]->base]++;
        }
    }
    EXPECT_GT(on[0], 0);
    EXPECT_GT(on[1], 0);
}

}  // namespace
}  // namespace sched_test
