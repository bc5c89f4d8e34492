// The FAIR policy (current upstream's sched_rq.c): one run queue ordered by virtual GPU time,
// which grows 2^shift times faster per nanosecond of GPU time for lower priorities.
#include <algorithm>

#include "tests/drm_sched/sched_test_util.h"

namespace sched_test {
namespace {

class DrmSchedFair : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        drm_mock_sched_args a;
        a.credit_limit = 1;  // one job on the ring at a time: the order is the policy's
        a.policy = DRM_SCHED_POLICY_FAIR;
        sched_ = managed_sched(test, a);  // fini'd at the end, after the entities
    }
    drm_mock_sched_entity* entity(drm_sched_priority prio) { return managed_entity(test, prio, sched_); }
    std::vector<drm_mock_sched_job*> queue(drm_mock_sched_entity* e, int n, u64 duration_us) {
        std::vector<drm_mock_sched_job*> jobs;
        for (int i = 0; i < n; i++) {
            jobs.push_back(timed_job(e, duration_us));
            drm_mock_sched_job_submit(jobs.back());
        }
        return jobs;
    }
    // How many of `jobs` ran among the first `n` jobs that ran of `jobs` and `others` together.
    static int ran_among_first(const std::vector<drm_mock_sched_job*>& jobs,
                               const std::vector<drm_mock_sched_job*>& others, size_t n) {
        std::vector<drm_mock_sched_job*> all(jobs);
        all.insert(all.end(), others.begin(), others.end());
        std::sort(all.begin(), all.end(), [](auto* x, auto* y) { return x->run_at < y->run_at; });
        all.resize(n);
        return static_cast<int>(std::count_if(
            jobs.begin(), jobs.end(), [&](auto* j) { return std::find(all.begin(), all.end(), j) != all.end(); }));
    }

    drm_mock_scheduler* sched_ = nullptr;
};

// FIFO would run all of the first entity's jobs before the second's; FAIR alternates.
TEST_F(DrmSchedFair, EntitiesOfOnePriorityShareTheRing) {
    auto a = queue(entity(DRM_SCHED_PRIORITY_NORMAL), 20, 1000);
    advance(NSEC_PER_USEC);
    auto b = queue(entity(DRM_SCHED_PRIORITY_NORMAL), 20, 1000);
    ASSERT_TRUE(advance_until_idle());
    const int a_first = ran_among_first(a, b, 20);
    EXPECT_GE(a_first, 8);
    EXPECT_LE(a_first, 12);
    for (auto* j : a)
        EXPECT_EQ(drm_mock_sched_job_status(j), 1);
    for (auto* j : b)
        EXPECT_EQ(drm_mock_sched_job_status(j), 1);
}

// NORMAL's virtual time grows 2^4 per ns of GPU time, LOW's 2^7: NORMAL gets about 8x the ring.
TEST_F(DrmSchedFair, PriorityWeightsTheShareOfGpuTime) {
    auto normal = queue(entity(DRM_SCHED_PRIORITY_NORMAL), 100, 1000);
    auto low = queue(entity(DRM_SCHED_PRIORITY_LOW), 100, 1000);
    ASSERT_TRUE(advance_until_idle());
    const int low_first = ran_among_first(low, normal, 90);
    EXPECT_GE(low_first, 6) << "LOW must not starve";
    EXPECT_LE(low_first, 14) << "LOW must get about a ninth";
}

// The share follows GPU time, not job count: LOW jobs 8x shorter than NORMAL's get as many
// turns as NORMAL's.
TEST_F(DrmSchedFair, ShareIsGpuTimeNotJobCount) {
    auto normal = queue(entity(DRM_SCHED_PRIORITY_NORMAL), 40, 800);
    auto low = queue(entity(DRM_SCHED_PRIORITY_LOW), 40, 100);
    ASSERT_TRUE(advance_until_idle());
    const int low_first = ran_among_first(low, normal, 40);
    EXPECT_GE(low_first, 15);
    EXPECT_LE(low_first, 25);
}

// An entity of higher priority than the front re-joins just ahead of it: its job runs next.
TEST_F(DrmSchedFair, HigherPriorityJoiningRunsNext) {
    auto low = queue(entity(DRM_SCHED_PRIORITY_LOW), 10, 1000);
    advance(2500 * NSEC_PER_USEC);  // LOW is on its third job
    auto kernel = queue(entity(DRM_SCHED_PRIORITY_KERNEL), 1, 1000);
    ASSERT_TRUE(advance_until_idle());
    int low_before = 0;
    for (auto* j : low)
        low_before += j->run_at < kernel[0]->run_at;
    EXPECT_EQ(low_before, 3) << "only the jobs LOW had already run, and the one on the ring, come first";
}

// A lower-priority entity joining behind a busy front does not overtake it.
TEST_F(DrmSchedFair, LowerPriorityJoiningWaitsBehindTheFront) {
    auto normal = queue(entity(DRM_SCHED_PRIORITY_NORMAL), 6, 1000);
    advance(1500 * NSEC_PER_USEC);
    auto low = queue(entity(DRM_SCHED_PRIORITY_LOW), 1, 1000);
    ASSERT_TRUE(advance_until_idle());
    int normal_before = 0;
    for (auto* j : normal)
        normal_before += j->run_at < low[0]->run_at;
    EXPECT_GE(normal_before, 3);
}

// Jobs keep their entity's stats alive: freeing the entity while its jobs are still queued on
// the ring neither crashes nor leaks (leak accounting checks at teardown).
TEST_F(DrmSchedFair, JobsOutliveTheirEntity) {
    auto* e = entity(DRM_SCHED_PRIORITY_NORMAL);
    auto jobs = queue(e, 3, 1000);
    advance(500 * NSEC_PER_USEC);
    ASSERT_TRUE(drm_mock_sched_job_is_scheduled(jobs[0]));
    kunit_release_action(test, drm_mock_sched_entity_free_wrap, e);  // kills what is still queued
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(jobs[0]), 1);
}

TEST_F(DrmSchedFair, InitRejectsAnUnknownPolicy) {
    drm_gpu_scheduler sched;
    drm_sched_init_args args;
    args.ops = sched_->base.ops;
    args.policy = DRM_SCHED_POLICY_COUNT;
    EXPECT_EQ(drm_sched_init(&sched, &args), -EINVAL);
}

}  // namespace
}  // namespace sched_test
