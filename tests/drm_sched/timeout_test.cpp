// Timeouts (TDR): the timer follows the head of the pending list; RESET, NO_HANG, fault,
// suspend/resume (tests_basic.c's timeout cases and more).
#include "tests/drm_sched/sched_test_util.h"

namespace sched_test {
namespace {

class DrmSchedTimeout : public kshim::testing::KernelTest {
protected:
    static constexpr unsigned kTimeoutMs = 100;
    static constexpr ktime_t kTimeout = kTimeoutMs * NSEC_PER_MSEC;
    // Delayed work counts whole jiffies from the current one.
    static constexpr ktime_t kSlack = TICK_NSEC;

    void SetUp() override {
        KernelTest::SetUp();
        sched_ = managed_sched(test, static_cast<long>(msecs_to_jiffies(kTimeoutMs)));
        entity_ = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched_);
    }

    drm_mock_scheduler* sched_ = nullptr;
    drm_mock_sched_entity* entity_ = nullptr;
};

TEST_F(DrmSchedTimeout, FiresAtConfiguredTimeAfterJobStartsAndResets) {
    auto* j = drm_mock_sched_job_new(test, entity_);
    drm_mock_sched_job_submit(j);
    ASSERT_TRUE(advance_until_idle());  // the timer fires on the way to idle
    EXPECT_EQ(sched_->timeouts.load(), 1u);
    EXPECT_TRUE(j->flags.load() & DRM_MOCK_SCHED_JOB_TIMEDOUT);
    EXPECT_EQ(drm_mock_sched_job_status(j), -ETIMEDOUT);
    EXPECT_EQ(j->hw_fence.error.load(), -ETIMEDOUT);
    // As upstream: the hardware never completed it, so "finished" stays false.
    EXPECT_FALSE(drm_mock_sched_job_is_finished(j));
    EXPECT_FALSE(drm_mock_sched_job_wait_finished(j, msecs_to_jiffies(10)));
    const ktime_t after = j->done_at.load() - j->run_at;
    EXPECT_GT(after, kTimeout - kSlack);
    EXPECT_LE(after, kTimeout);
    EXPECT_TRUE(sched_->base.pending_list.empty());
}

TEST_F(DrmSchedTimeout, DoesNotFireForAJobThatCompletesInTime) {
    auto* j = timed_job(entity_, 90 * 1000);
    drm_mock_sched_job_submit(j);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j), 1);
    advance(10 * kTimeout);
    EXPECT_EQ(sched_->timeouts.load(), 0u);
}

TEST_F(DrmSchedTimeout, NoHangKeepsJobAliveAndRearmsTheTimer) {
    auto* j = drm_mock_sched_job_new(test, entity_);
    j->flags.fetch_or(DRM_MOCK_SCHED_JOB_DONT_RESET);
    drm_mock_sched_job_submit(j);
    ASSERT_TRUE(run_until([&] { return j->flags.load() & DRM_MOCK_SCHED_JOB_RESET_SKIPPED; }, 10 * kTimeout));
    const ktime_t first = ktime_get() - j->run_at;
    EXPECT_GT(first, kTimeout - kSlack);
    EXPECT_LE(first, kTimeout);
    EXPECT_FALSE(drm_mock_sched_job_is_finished(j));
    EXPECT_FALSE(sched_->base.pending_list.empty());  // back on the list

    // Still watched: a second period later the handler runs again.
    advance(kTimeout + kSlack);
    EXPECT_EQ(sched_->timeouts.load(), 2u);

    // And it can still complete normally.
    EXPECT_EQ(drm_mock_sched_advance(sched_, 1), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j), 1);
    EXPECT_TRUE(j->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
    const unsigned n = sched_->timeouts.load();
    advance(10 * kTimeout);
    EXPECT_EQ(sched_->timeouts.load(), n);
}

TEST_F(DrmSchedTimeout, TimerFollowsTheHeadOfThePendingList) {
    auto* j1 = drm_mock_sched_job_new(test, entity_);
    auto* j2 = drm_mock_sched_job_new(test, entity_);
    j1->flags.fetch_or(DRM_MOCK_SCHED_JOB_DONT_RESET);
    j2->flags.fetch_or(DRM_MOCK_SCHED_JOB_DONT_RESET);
    drm_mock_sched_job_submit(j1);
    drm_mock_sched_job_submit(j2);
    ASSERT_TRUE(run_until([&] { return drm_mock_sched_job_is_scheduled(j2); }, NSEC_PER_SEC));
    const ktime_t start = ktime_get();
    advance(kTimeout / 2);
    drm_mock_sched_advance(sched_, 1);  // j1 completes; j2 becomes the head
    const ktime_t handoff = ktime_get();
    ASSERT_TRUE(run_until([&] { return j2->flags.load() & DRM_MOCK_SCHED_JOB_RESET_SKIPPED; }, 10 * kTimeout));
    const ktime_t fired = ktime_get();
    EXPECT_EQ(j1->flags.load() & DRM_MOCK_SCHED_JOB_RESET_SKIPPED, 0u);
    EXPECT_GT(fired - handoff, kTimeout - kSlack);
    EXPECT_LE(fired - handoff, kTimeout);
    EXPECT_GT(fired - start, kTimeout);
    drm_mock_sched_advance(sched_, 1);
    ASSERT_TRUE(advance_until_idle());
}

TEST_F(DrmSchedTimeout, FaultRunsTheHandlerAtOnce) {
    auto* j = drm_mock_sched_job_new(test, entity_);
    drm_mock_sched_job_submit(j);
    ASSERT_TRUE(run_until([&] { return drm_mock_sched_job_is_scheduled(j); }, NSEC_PER_SEC));
    const ktime_t t = ktime_get();
    drm_sched_fault(&sched_->base);
    ASSERT_TRUE(run_until([&] { return dma_fence_is_signaled(j->finished); }, NSEC_PER_MSEC));
    EXPECT_EQ(ktime_get(), t);
    EXPECT_FALSE(drm_mock_sched_job_is_finished(j));
    EXPECT_EQ(drm_mock_sched_job_status(j), -ETIMEDOUT);
}

// The panthor setup: drm_sched's own timer off (MAX_SCHEDULE_TIMEOUT), the driver keeping its
// own per-queue timer and calling drm_sched_fault when it expires. No timeout ever fires by
// itself, however long the job runs; a fault runs timedout_job at once; and a NO_HANG answer does
// not arm anything either (the job stays pending until it completes).
TEST_F(DrmSchedTimeout, MaxScheduleTimeoutArmsNothingButFaultStillRunsTheHandler) {
    auto* sched = managed_sched(test, MAX_SCHEDULE_TIMEOUT);
    auto* entity = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched);
    auto* j = drm_mock_sched_job_new(test, entity);
    j->flags.fetch_or(DRM_MOCK_SCHED_JOB_DONT_RESET);
    drm_mock_sched_job_submit(j);
    ASSERT_TRUE(run_until([&] { return drm_mock_sched_job_is_scheduled(j); }, NSEC_PER_SEC));
    EXPECT_FALSE(delayed_work_pending(&sched->base.work_tdr));
    advance(100 * NSEC_PER_SEC);
    EXPECT_EQ(sched->timeouts.load(), 0u);

    const ktime_t t = ktime_get();
    drm_sched_fault(&sched->base);
    ASSERT_TRUE(run_until([&] { return j->flags.load() & DRM_MOCK_SCHED_JOB_RESET_SKIPPED; }, NSEC_PER_MSEC));
    EXPECT_EQ(ktime_get(), t);
    EXPECT_EQ(sched->timeouts.load(), 1u);
    EXPECT_FALSE(delayed_work_pending(&sched->base.work_tdr));
    advance(100 * NSEC_PER_SEC);
    EXPECT_EQ(sched->timeouts.load(), 1u);
    EXPECT_FALSE(drm_mock_sched_job_is_finished(j));

    EXPECT_EQ(drm_mock_sched_advance(sched, 1), 1u);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(j), 1);
}

TEST_F(DrmSchedTimeout, SuspendAndResumeTimeout) {
    auto* j = drm_mock_sched_job_new(test, entity_);
    j->flags.fetch_or(DRM_MOCK_SCHED_JOB_DONT_RESET);
    drm_mock_sched_job_submit(j);
    ASSERT_TRUE(run_until([&] { return drm_mock_sched_job_is_scheduled(j); }, NSEC_PER_SEC));
    advance(40 * NSEC_PER_MSEC);
    unsigned long left = drm_sched_suspend_timeout(&sched_->base);
    EXPECT_GE(left, msecs_to_jiffies(55));
    EXPECT_LE(left, msecs_to_jiffies(60));
    advance(10 * kTimeout);
    EXPECT_EQ(sched_->timeouts.load(), 0u);
    const ktime_t resumed = ktime_get();
    drm_sched_resume_timeout(&sched_->base, left);
    ASSERT_TRUE(run_until([&] { return sched_->timeouts.load() == 1; }, 10 * kTimeout));
    EXPECT_LE(ktime_get() - resumed, static_cast<ktime_t>(jiffies_to_nsecs(left)));
    drm_mock_sched_advance(sched_, 1);
    ASSERT_TRUE(advance_until_idle());
}

// A driver's reset handler in the upstream shape: stop, reset the hardware, start with an
// error. Every job that lost its hardware fence in the reset finishes with that error; the
// scheduler keeps running afterwards.
TEST_F(DrmSchedTimeout, HandlerWithStopAndStartFinishesPendingJobsWithTheError) {
    static drm_mock_scheduler* s_sched;
    s_sched = sched_;
    static const drm_sched_backend_ops* mock_ops;
    mock_ops = sched_->base.ops;
    static drm_sched_backend_ops ops;
    ops = *mock_ops;
    ops.timedout_job = [](drm_sched_job* bad) {
        drm_sched_stop(&s_sched->base, bad);
        drm_mock_sched_hw_reset(s_sched, -ETIMEDOUT);
        drm_sched_start(&s_sched->base, -EIO);
        return DRM_GPU_SCHED_STAT_RESET;
    };
    sched_->base.ops = &ops;
    auto* bad = drm_mock_sched_job_new(test, entity_);
    auto* next = drm_mock_sched_job_new(test, entity_);
    drm_mock_sched_job_submit(bad);
    drm_mock_sched_job_submit(next);
    ASSERT_TRUE(run_until([&] { return dma_fence_is_signaled(bad->finished); }, NSEC_PER_SEC));
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(bad), -EIO);
    EXPECT_EQ(drm_mock_sched_job_status(next), -EIO);
    EXPECT_TRUE(bad->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
    EXPECT_TRUE(next->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
    EXPECT_EQ(drm_sched_available_credits(&sched_->base), sched_->base.credit_limit);

    auto* after = timed_job(entity_, 1000);
    drm_mock_sched_job_submit(after);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(after), 1);
    sched_->base.ops = mock_ops;
}

}  // namespace
}  // namespace sched_test
