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
inline const char* test_fence_name(dma_fence*) {
    return "sched_test";
}
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

// drm_mock_sched_fini and drm_mock_sched_entity_free as test actions (the wrappers of upstream's
// tests_basic.c): they run when the test ends, also after a failed ASSERT_, newest first, so
// entities are freed before their scheduler is fini'd. kunit_release_action runs one early.
// Not KUNIT_DEFINE_ACTION_WRAPPER, whose wrappers are static: an action is matched by its
// address, which must be the same in every file that includes this header.
inline void drm_mock_sched_fini_wrap(void* sched) {
    drm_mock_sched_fini(static_cast<drm_mock_scheduler*>(sched));
}
inline void drm_mock_sched_entity_free_wrap(void* entity) {
    drm_mock_sched_entity_free(static_cast<drm_mock_sched_entity*>(entity));
}

// A mock scheduler fini'd when the test ends.
inline drm_mock_scheduler* managed_sched(kunit* test, const drm_mock_sched_args& args = {}) {
    drm_mock_scheduler* sched = drm_mock_sched_new(test, args);
    if (sched) {
        EXPECT_EQ(kunit_add_action_or_reset(test, drm_mock_sched_fini_wrap, sched), 0);
    }
    return sched;
}
inline drm_mock_scheduler* managed_sched(kunit* test, long timeout) {
    drm_mock_sched_args args;
    args.timeout = timeout;
    return managed_sched(test, args);
}
// A mock entity freed when the test ends (before the schedulers made earlier are fini'd).
inline drm_mock_sched_entity* managed_entity_list(kunit* test, drm_sched_priority priority, drm_mock_scheduler** scheds,
                                                  unsigned n) {
    drm_mock_sched_entity* entity = drm_mock_sched_entity_new_list(test, priority, scheds, n);
    if (entity) {
        EXPECT_EQ(kunit_add_action_or_reset(test, drm_mock_sched_entity_free_wrap, entity), 0);
    }
    return entity;
}
inline drm_mock_sched_entity* managed_entity(kunit* test, drm_sched_priority priority, drm_mock_scheduler* sched) {
    return managed_entity_list(test, priority, &sched, 1);
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
        if (!drm_mock_sched_job_is_finished(j))
            return false;
    return true;
}

}  // namespace sched_test
