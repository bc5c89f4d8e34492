// 16 submitting tasks at once, across two schedulers, with cross-task dependencies; the same
// body swept over seeds with preemption points on.
#include <random>

#include "tests/drm_sched/sched_test_util.h"

namespace sched_test {
namespace {

constexpr int kTasks = 16;
constexpr int kJobsPerTask = 40;

// Returns normally when every job finished cleanly and in order per entity.
void sixteen_submitters(u64 seed, bool with_kill) {
    kunit* test = kunit_get_current_test();  // a fixture's test or run_simulated's
    drm_mock_scheduler* s[2] = {managed_sched(test), managed_sched(test)};
    std::vector<drm_mock_sched_entity*> entities;
    for (int t = 0; t < kTasks; t++) {
        auto prio = static_cast<drm_sched_priority>(t % DRM_SCHED_PRIORITY_COUNT);
        entities.push_back(t % 3 == 0 ? managed_entity_list(test, prio, s, 2) : managed_entity(test, prio, s[t % 2]));
    }
    std::vector<std::vector<drm_mock_sched_job*>> jobs(kTasks, std::vector<drm_mock_sched_job*>(kJobsPerTask, nullptr));
    // The latest job of each task, for others to depend on (the mock keeps `finished` alive).
    std::vector<std::atomic<drm_mock_sched_job*>> latest(kTasks);
    std::vector<Task*> tasks;
    for (int t = 0; t < kTasks; t++)
        tasks.push_back(kthread_run(
            [&, t] {
                std::mt19937_64 rng(seed * 131 + t);
                for (int k = 0; k < kJobsPerTask; k++) {
                    auto* j = timed_job(entities[t], 5 + rng() % 20);
                    drm_mock_sched_job* other = latest[(t + 1 + rng() % (kTasks - 1)) % kTasks].load();
                    submit_after(j, rng() % 3 == 0 && other ? other->finished : nullptr);
                    jobs[t][k] = j;
                    latest[t].store(j);
                    if (rng() % 8 == 0)
                        usleep_range(10, 50);
                }
                return 0;
            },
            "submitter"));
    for (Task* t : tasks)
        kthread_stop(t);
    if (with_kill)
        drm_sched_entity_kill(&entities[5]->base);
    ASSERT_TRUE(Runtime::get()->advance_until_idle());
    for (int t = 0; t < kTasks; t++) {
        for (int k = 0; k < kJobsPerTask; k++) {
            auto* j = jobs[t][k];
            ASSERT_TRUE(dma_fence_is_signaled(j->finished)) << t << "/" << k;
            int st = drm_mock_sched_job_status(j);
            if (with_kill && t == 5)
                EXPECT_TRUE(st == 1 || st == -ESRCH) << st;
            else
                EXPECT_EQ(st, 1) << t << "/" << k;
            if (k && st == 1) {
                EXPECT_LE(jobs[t][k - 1]->done_at.load(), j->done_at.load());
            }
        }
    }
    for (auto* e : entities)
        kunit_release_action(test, drm_mock_sched_entity_free_wrap, e);
    for (auto* x : s)
        EXPECT_EQ(drm_sched_score(&x->base), 0);
}

// Sets the module parameter (the policy of schedulers created without one) for a scope.
class PolicyGuard {
public:
    explicit PolicyGuard(int policy) : saved_(drm_sched_policy) { drm_sched_policy = policy; }
    ~PolicyGuard() { drm_sched_policy = saved_; }

private:
    int saved_;
};

class DrmSchedParallel : public kshim::testing::SweepableKernelTest {};

TEST_F(DrmSchedParallel, SixteenSubmittingTasks) {
    sixteen_submitters(1, false);
}
TEST_F(DrmSchedParallel, SixteenSubmittingTasksWithAKill) {
    sixteen_submitters(2, true);
}
TEST_F(DrmSchedParallel, SixteenSubmittingTasksFairPolicy) {
    PolicyGuard policy(DRM_SCHED_POLICY_FAIR);
    sixteen_submitters(3, true);
}

class DrmSchedSweep : public ::testing::TestWithParam<u64> {};

// Seeds 1-4 under FIFO, 5-8 under FAIR.
TEST_P(DrmSchedSweep, SixteenSubmittersWithPreemption) {
    PolicyGuard policy(GetParam() <= 4 ? DRM_SCHED_POLICY_FIFO : DRM_SCHED_POLICY_FAIR);
    kshim::testing::run_simulated(
        GetParam(), [&] { sixteen_submitters(GetParam(), GetParam() % 2); }, 0.3);
}

INSTANTIATE_TEST_SUITE_P(Seeds, DrmSchedSweep, ::testing::Range<u64>(1, 9));

}  // namespace
}  // namespace sched_test
