// Helpers shared by the drm_sched tests: the mock scheduler (drm/sched/testing) plus a plain
// fence the tests signal by hand.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "drm/sched/testing/mock_scheduler.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"
#include "tests/support/kernel_test.h"

namespace sched_test {
using namespace kshim;
using namespace drm;
using namespace drm::testing;

struct TestFence {
    dma_fence base;
    SpinLock lock{"sched_test_fence"};
};
inline const char* test_fence_name(dma_fence*) { return "sched_test"; }
inline const dma_fence_ops test_fence_ops = {
    .get_driver_name = test_fence_name,
    .get_timeline_name = test_fence_name,
    .release = [](dma_fence* f) { kdelete(container_of(f, TestFence, base)); },
};
inline dma_fence* test_fence(u64 context = 0, u64 seqno = 1) {
    auto* f = knew<TestFence>(GFP_KERNEL);
    dma_fence_init(&f->base, &test_fence_ops, &f->lock, context ? context : dma_fence_context_alloc(1), seqno);
    return &f->base;
}

inline drm_mock_sched_job* timed_job(drm_mock_sched_entity* e, u64 duration_us, u32 credits = 1) {
    drm_mock_sched_job* j = drm_mock_sched_job_new(e->test, e, credits);
    j->duration_us = duration_us;
    return j;
}

// Submits a job that first waits for `dep` (a reference is taken here).
inline void submit_after(drm_mock_sched_job* j, dma_fence* dep) {
    if (dep) {
        EXPECT_EQ(drm_sched_job_add_dependency(&j->base, dma_fence_get(dep)), 0);
    }
    drm_mock_sched_job_submit(j);
}

inline bool all_finished(const std::vector<drm_mock_sched_job*>& jobs) {
    for (auto* j : jobs)
        if (!drm_mock_sched_job_is_finished(j)) return false;
    return true;
}

}  // namespace sched_test
