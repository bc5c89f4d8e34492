// Job dependencies: deduplication, dma_resv dependencies, and the three ways a dependency is
// waited for (own entity: not at all; same scheduler: until scheduled; else: until signalled).
#include "kernel_shim/dma-buf/dma-resv.h"
#include "tests/drm_sched/sched_test_util.h"

namespace sched_test {
namespace {

class DrmSchedDeps : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        // Freed and fini'd when the test ends, newest first (as upstream's suite init with
        // kunit_add_action_or_reset).
        sched_ = managed_sched(test);
        other_ = managed_sched(test);
        e1_ = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched_);
        e2_ = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, sched_);
        e3_ = managed_entity(test, DRM_SCHED_PRIORITY_NORMAL, other_);
    }
    drm_mock_scheduler *sched_ = nullptr, *other_ = nullptr;
    drm_mock_sched_entity *e1_ = nullptr, *e2_ = nullptr, *e3_ = nullptr;
};

TEST_F(DrmSchedDeps, AddDependencyKeepsTheLaterFencePerContext) {
    drm_sched_job job;
    ASSERT_EQ(drm_sched_job_init(&job, &e1_->base, 1, nullptr), 0);
    const u64 ctx = dma_fence_context_alloc(1);
    dma_fence* f1 = test_fence(ctx, 1);
    dma_fence* f3 = test_fence(ctx, 3);
    dma_fence* f2 = test_fence(ctx, 2);
    dma_fence* other = test_fence();
    EXPECT_EQ(drm_sched_job_add_dependency(&job, dma_fence_get(f1)), 0);
    EXPECT_EQ(drm_sched_job_add_dependency(&job, dma_fence_get(f3)), 0);
    EXPECT_EQ(drm_sched_job_add_dependency(&job, dma_fence_get(f2)), 0);
    EXPECT_EQ(drm_sched_job_add_dependency(&job, dma_fence_get(other)), 0);
    EXPECT_EQ(drm_sched_job_add_dependency(&job, nullptr), 0);
    EXPECT_EQ(job.dependencies.count, 2u);
    EXPECT_TRUE(drm_sched_job_has_dependency(&job, f3));
    EXPECT_FALSE(drm_sched_job_has_dependency(&job, f1));
    EXPECT_FALSE(drm_sched_job_has_dependency(&job, f2));
    EXPECT_TRUE(drm_sched_job_has_dependency(&job, other));
    drm_sched_job_cleanup(&job);
    for (auto* f : {f1, f2, f3, other}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
}

TEST_F(DrmSchedDeps, ResvAndImplicitDependencies) {
    dma_resv resv;
    dma_resv_init(&resv);
    dma_fence* writer = test_fence();
    dma_fence* reader = test_fence();
    dma_fence* kernel = test_fence();
    ASSERT_EQ(dma_resv_lock(&resv, nullptr), 0);
    ASSERT_EQ(dma_resv_reserve_fences(&resv, 3), 0);
    dma_resv_add_fence(&resv, writer, DMA_RESV_USAGE_WRITE);
    dma_resv_add_fence(&resv, reader, DMA_RESV_USAGE_READ);
    dma_resv_add_fence(&resv, kernel, DMA_RESV_USAGE_KERNEL);

    drm_sched_job rd, wr;
    ASSERT_EQ(drm_sched_job_init(&rd, &e1_->base, 1, nullptr), 0);
    ASSERT_EQ(drm_sched_job_init(&wr, &e1_->base, 1, nullptr), 0);
    EXPECT_EQ(drm_sched_job_add_implicit_dependencies(&rd, &resv, false), 0);  // waits for writers
    EXPECT_EQ(drm_sched_job_add_implicit_dependencies(&wr, &resv, true), 0);   // waits for readers too
    dma_resv_unlock(&resv);
    EXPECT_TRUE(drm_sched_job_has_dependency(&rd, writer));
    EXPECT_TRUE(drm_sched_job_has_dependency(&rd, kernel));
    EXPECT_FALSE(drm_sched_job_has_dependency(&rd, reader));
    EXPECT_EQ(wr.dependencies.count, 3u);
    drm_sched_job_cleanup(&rd);
    drm_sched_job_cleanup(&wr);
    for (auto* f : {writer, reader, kernel}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
    dma_resv_fini(&resv);
}

TEST_F(DrmSchedDeps, OwnEntityFenceNeedsNoWait) {
    auto* a = drm_mock_sched_job_new(test, e1_);
    drm_mock_sched_job_submit(a);
    auto* b = drm_mock_sched_job_new(test, e1_);
    submit_after(b, a->finished);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(b));  // on the ring behind a, a still running
    EXPECT_FALSE(drm_mock_sched_job_is_finished(a));
    drm_mock_sched_advance(sched_, 2);
    ASSERT_TRUE(advance_until_idle());
}

TEST_F(DrmSchedDeps, SameSchedulerWaitsOnlyUntilScheduled) {
    auto* a = drm_mock_sched_job_new(test, e1_);
    auto* b = drm_mock_sched_job_new(test, e2_);
    auto* gate_job = drm_mock_sched_job_new(test, e1_);
    dma_fence* gate = test_fence();
    submit_after(gate_job, gate);  // e1 is blocked behind this one
    drm_mock_sched_job_submit(a);
    submit_after(b, a->finished);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(b));  // a is not on the ring yet
    dma_fence_signal(gate);
    dma_fence_put(gate);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(a));
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(b));  // a only had to be ahead on the ring
    EXPECT_FALSE(drm_mock_sched_job_is_finished(a));
    EXPECT_LT(a->hw_fence.seqno, b->hw_fence.seqno);
    drm_mock_sched_advance(sched_, 3);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(b), 1);
}

// The `scheduled` fence a same-scheduler waiter depends on can also be signalled by an entity
// kill, outside the scheduler's own loop: the waiter must still be run (found by a seeded
// sweep of the parallel test, where it stalled the scheduler for good).
TEST_F(DrmSchedDeps, SameSchedulerWaiterRunsWhenItsDependencyIsKilled) {
    auto* a = drm_mock_sched_job_new(test, e1_);
    auto* b = drm_mock_sched_job_new(test, e2_);
    dma_fence* gate = test_fence();
    submit_after(a, gate);  // a never reaches the ring before the kill
    submit_after(b, a->finished);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(b));
    drm_sched_entity_kill(&e1_->base);
    dma_fence_signal(gate);  // the kill waits for a's dependencies before signalling it
    dma_fence_put(gate);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(a), -ESRCH);
    ASSERT_TRUE(drm_mock_sched_job_is_scheduled(b));
    drm_mock_sched_advance(sched_, 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(b), 1);
}
TEST_F(DrmSchedDeps, OtherSchedulerWaitsUntilSignalled) {
    auto* a = drm_mock_sched_job_new(test, e3_);  // on the other scheduler
    drm_mock_sched_job_submit(a);
    auto* b = drm_mock_sched_job_new(test, e1_);
    submit_after(b, a->finished);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(a));
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(b));
    drm_mock_sched_advance(other_, 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(b));
    drm_mock_sched_advance(sched_, 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(b), 1);
}

// The test's actions run newest first: `other_`'s resource runs before `sched_`'s fini, while a
// job of `sched_` that free_job has not reached yet still holds its dependency, a job of
// `other_`. The mock schedulers are released together after both finis, so the end of the test
// finds every hardware fence released (the fixture fails the test on the mock's WARN or a leak).
TEST_F(DrmSchedDeps, ADependencyAcrossSchedulersOutlivesTheOtherSchedulersResource) {
    auto* a = drm_mock_sched_job_new(test, e3_);  // on the other scheduler
    drm_mock_sched_job_submit(a);
    auto* b = drm_mock_sched_job_new(test, e1_);
    submit_after(b, a->finished);
    ASSERT_TRUE(advance_until_idle());
    drm_mock_sched_advance(other_, 1);
    ASSERT_TRUE(advance_until_idle());
    ASSERT_TRUE(drm_mock_sched_job_is_scheduled(b));
    // b runs; its free_job has not run when the test ends (a loaded host's worker lags behind).
    drm_sched_wqueue_stop(&sched_->base);
    drm_mock_sched_advance(sched_, 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(b), 1);
    EXPECT_FALSE(b->flags.load() & DRM_MOCK_SCHED_JOB_FREED);
}

TEST_F(DrmSchedDeps, DontPipelineFlagForcesAFullWait) {
    auto* a = drm_mock_sched_job_new(test, e1_);
    drm_mock_sched_job_submit(a);
    {
        SpinGuard g(*a->finished->lock);
        dma_fence_set_flag(a->finished, DRM_SCHED_FENCE_DONT_PIPELINE);
    }
    auto* b = drm_mock_sched_job_new(test, e2_);
    submit_after(b, a->finished);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(b));
    drm_mock_sched_advance(sched_, 1);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_TRUE(drm_mock_sched_job_is_scheduled(b));
    drm_mock_sched_advance(sched_, 1);
    ASSERT_TRUE(advance_until_idle());
}

TEST_F(DrmSchedDeps, PrepareJobSuppliesExtraDependencies) {
    static dma_fence* extra;
    extra = test_fence();
    static drm_sched_backend_ops ops;
    ops = *sched_->base.ops;
    const drm_sched_backend_ops* saved = sched_->base.ops;
    ops.prepare_job = [](drm_sched_job*, drm_sched_entity*) -> dma_fence* {
        return dma_fence_is_signaled(extra) ? nullptr : dma_fence_get(extra);
    };
    sched_->base.ops = &ops;
    auto* a = timed_job(e1_, 10);
    drm_mock_sched_job_submit(a);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_FALSE(drm_mock_sched_job_is_scheduled(a));
    dma_fence_signal(extra);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(a), 1);
    dma_fence_put(extra);
    sched_->base.ops = saved;
}

TEST_F(DrmSchedDeps, ErrorOfADependencyIsNotPropagatedButVisible) {
    dma_fence* dep = test_fence();
    auto* a = timed_job(e1_, 10);
    submit_after(a, dep);
    dma_fence_set_error(dep, -EINVAL);
    dma_fence_signal(dep);
    dma_fence_put(dep);
    ASSERT_TRUE(advance_until_idle());
    EXPECT_EQ(drm_mock_sched_job_status(a), 1);  // as upstream: the driver decides what a dep error means
}

}  // namespace
}  // namespace sched_test
