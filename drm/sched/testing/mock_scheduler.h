// Mirrors drivers/gpu/drm/scheduler/tests/mock_scheduler.c and sched_tests.h: the mock "GPU"
// the drm_sched tests (and other users) drive the scheduler with.
//
// A mock scheduler is a drm_gpu_scheduler whose ring is a hardware timeline: run_job gives the
// job the next seqno on it, and hardware fences signal strictly in seqno order. A job either has
// a duration (it completes by itself, back to back after the job before it, on an hrtimer in
// runtime time) or none (it completes when the test calls drm_mock_sched_advance). The
// timed-out handler signals the hardware fence with -ETIMEDOUT, unless the job is flagged
// DRM_MOCK_SCHED_JOB_DONT_RESET, in which case it answers "no hang" and the job keeps running.
// cancel_job (drm_sched_fini) signals it with -ECANCELED.
//
// Memory: as upstream, the scheduler, its entities and its jobs are test-managed (a `kunit`,
// kernel_shim/kunit/resource.h): they stay readable until the test ends, after
// drm_mock_sched_entity_free and drm_mock_sched_fini too, so a test may read a cancelled job's
// hardware fence after fini. One difference in order, never earlier than upstream: a job's
// memory goes with the resource of the scheduler that ran it (registered at drm_mock_sched_new),
// not with one of its own, so a drm_mock_sched_fini the test registers as an action after
// creating the scheduler still finds the jobs alive. And the schedulers of one test are released
// together, by the last of their resources to run: a test's actions run newest first, so one
// scheduler's resource can run before an older scheduler's fini, whose pending jobs still hold
// this one's fences as dependencies until that fini frees them. The test still calls (or registers)
// drm_mock_sched_entity_free and drm_mock_sched_fini as upstream; if it did not (an ASSERT_
// returned early), the release WARNs and does it, so the test fails instead of crashing.
#pragma once
#include <atomic>
#include <climits>
#include <vector>

#include "drm/sched/gpu_scheduler.h"
#include "kernel_shim/kunit/resource.h"
#include "kernel_shim/report.h"
#include "kernel_shim/time.h"

namespace drm::testing {

enum : unsigned {
    DRM_MOCK_SCHED_JOB_DONE = 1u << 0,           // hardware fence signalled by the mock
    DRM_MOCK_SCHED_JOB_TIMEDOUT = 1u << 1,       // reset by the timed-out handler
    DRM_MOCK_SCHED_JOB_DONT_RESET = 1u << 2,     // set by the test: answer "no hang"
    DRM_MOCK_SCHED_JOB_RESET_SKIPPED = 1u << 3,  // the handler ran and skipped the reset
    DRM_MOCK_SCHED_JOB_CANCELED = 1u << 4,       // cancelled by drm_sched_fini
    DRM_MOCK_SCHED_JOB_RAN = 1u << 5,            // run_job was called
    DRM_MOCK_SCHED_JOB_FREED = 1u << 6,          // free_job (or the reset) cleaned it up
};

struct drm_mock_scheduler;

struct drm_mock_sched_entity {
    drm_sched_entity base;
    kshim::kunit* test = nullptr;
    drm_gpu_scheduler* sched_list[8] = {};  // stays valid as long as the entity
    bool destroyed = false;                 // drm_mock_sched_entity_free ran
};

struct drm_mock_sched_job {
    drm_sched_job base;
    drm_mock_scheduler* sched = nullptr;
    std::atomic<unsigned> flags{0};
    kshim::completion done;  // completed when the mock hardware completes the job (DONE)
    SafeListHook link;       // on the hardware timeline, while running
    SafeListHook all_link;   // in the scheduler's ownership list
    kshim::hrtimer timer;
    u64 duration_us = 0;               // 0: completes on drm_mock_sched_advance only
    ktime_t finish_at = 0;             // under sched->lock
    ktime_t run_at = -1;               // when run_job was called
    std::atomic<ktime_t> done_at{-1};  // when the hardware fence signalled
    dma_fence hw_fence;
    std::atomic<bool> hw_fence_released{false};  // its last reference went
    // The mock's reference to the finished fence, taken at submit, dropped when the test ends.
    dma_fence* finished = nullptr;
    kshim::kunit* test = nullptr;
};

using MockJobList =
    boost::intrusive::list<drm_mock_sched_job,
                           boost::intrusive::member_hook<drm_mock_sched_job, SafeListHook, &drm_mock_sched_job::link>,
                           boost::intrusive::constant_time_size<false>>;
using MockJobOwnerList = boost::intrusive::list<
    drm_mock_sched_job, boost::intrusive::member_hook<drm_mock_sched_job, SafeListHook, &drm_mock_sched_job::all_link>,
    boost::intrusive::constant_time_size<false>>;

struct drm_mock_scheduler {
    drm_gpu_scheduler base;
    // Protects the hardware timeline (cur_seqno, job_list, finish_at) and is the hw fences' lock.
    kshim::SpinLock lock{"drm_mock_scheduler.lock"};
    struct {
        u64 context = 0;
        std::atomic<u64> next_seqno{0};
        u64 cur_seqno = 0;
    } hw_timeline;
    MockJobList job_list;  // running on the "hardware", in seqno order
    kshim::kunit* test = nullptr;
    kshim::SpinLock owner_lock{"drm_mock_scheduler.owner_lock"};  // protects all_jobs
    MockJobOwnerList all_jobs;  // whose memory goes with this scheduler's at the end of the test
    bool fini_done = false;     // drm_mock_sched_fini ran
    // Schedulers of the test whose resource ran before this one's, released with it (see Memory).
    std::vector<drm_mock_scheduler*> released_with;
    std::atomic<unsigned> jobs_run{0};
    std::atomic<unsigned> timeouts{0};
    std::atomic<unsigned> running{0};      // jobs on the hardware now
    std::atomic<unsigned> max_running{0};  // most jobs on the hardware at once
};

struct drm_mock_sched_args {
    long timeout = kshim::MAX_SCHEDULE_TIMEOUT;  // jiffies
    u32 credit_limit = UINT_MAX;
    u32 num_rqs = DRM_SCHED_PRIORITY_COUNT;
    int policy = DRM_SCHED_POLICY_UNSET;
    kshim::workqueue_struct* submit_wq = nullptr;
    std::atomic<int>* score = nullptr;
    const char* name = "drm-mock-scheduler";
};

// A scheduler owned by `test` (upstream: drm_mock_sched_new(test, timeout)).
drm_mock_scheduler* drm_mock_sched_new(kshim::kunit* test, const drm_mock_sched_args& args = {});
inline drm_mock_scheduler* drm_mock_sched_new(kshim::kunit* test, long timeout) {
    drm_mock_sched_args a;
    a.timeout = timeout;
    return drm_mock_sched_new(test, a);
}
// drm_sched_fini: pending jobs are cancelled (-ECANCELED, cancel_job) and freed by the
// scheduler (free_job); their memory, and the scheduler's, stays until the test ends. Free
// the entities first, as upstream's tests do.
void drm_mock_sched_fini(drm_mock_scheduler* sched);
// Completes up to `num` more jobs of the timeline; returns how many hardware fences signalled.
// WARNs and does nothing when the timeline's seqno would wrap.
unsigned drm_mock_sched_advance(drm_mock_scheduler* sched, unsigned num);
// A hardware reset (not upstream's): every job on the timeline stops and its fence signals with
// `error`. Like a timed-out job, a reset job is not DONE and its `done` is not completed.
unsigned drm_mock_sched_hw_reset(drm_mock_scheduler* sched, int error);

drm_mock_sched_entity* drm_mock_sched_entity_new(kshim::kunit* test, drm_sched_priority priority,
                                                 drm_mock_scheduler* sched);
drm_mock_sched_entity* drm_mock_sched_entity_new_list(kshim::kunit* test, drm_sched_priority priority,
                                                      drm_mock_scheduler** scheds, unsigned n);
// drm_sched_entity_destroy; the memory stays until the test ends.
void drm_mock_sched_entity_free(drm_mock_sched_entity* entity);

drm_mock_sched_job* drm_mock_sched_job_new(kshim::kunit* test, drm_mock_sched_entity* entity, u32 credits = 1);
// Arms and pushes the job (takes the test's reference to `finished` first).
void drm_mock_sched_job_submit(drm_mock_sched_job* job);

inline drm_mock_scheduler* drm_sched_to_mock_sched(drm_gpu_scheduler* sched) {
    return container_of(sched, drm_mock_scheduler, base);
}
inline drm_mock_sched_entity* drm_sched_entity_to_mock_entity(drm_sched_entity* entity) {
    return container_of(entity, drm_mock_sched_entity, base);
}
inline drm_mock_sched_job* drm_sched_job_to_mock_job(drm_sched_job* job) {
    return container_of(job, drm_mock_sched_job, base);
}

// Jobs with a duration complete by themselves as the timeline progresses, unless a job without
// one is ahead of them (then drm_mock_sched_advance moves the timeline). Set before submit.
inline void drm_mock_sched_job_set_duration_us(drm_mock_sched_job* job, unsigned duration_us) {
    job->duration_us = duration_us;
}

// As upstream: completed by the mock hardware. A timed-out, cancelled or reset job is not.
inline bool drm_mock_sched_job_is_finished(drm_mock_sched_job* job) {
    return job->flags.load() & DRM_MOCK_SCHED_JOB_DONE;
}
// The scheduler fence's `scheduled` signalled (false before submit). Read through
// job->finished, which the mock keeps from submit to the end of the test (drm_sched_job_cleanup
// clears s_fence).
inline bool drm_mock_sched_job_is_scheduled(drm_mock_sched_job* job) {
    return job->finished && kshim::dma_fence_is_signaled(&to_drm_sched_fence(job->finished)->scheduled);
}
// True once the mock hardware completed the job, within `timeout` jiffies; a job that timed out
// or was cancelled never completes, so this returns false for it.
inline bool drm_mock_sched_job_wait_finished(drm_mock_sched_job* job, long timeout) {
    if (drm_mock_sched_job_is_finished(job))
        return true;
    return wait_for_completion_timeout(&job->done, timeout) != 0;
}
// True once the scheduler fence's `scheduled` signalled, within `timeout` jiffies. Only for a
// submitted job that is not done yet (as upstream, which asserts it).
inline bool drm_mock_sched_job_wait_scheduled(drm_mock_sched_job* job, long timeout) {
    WARN_ON(job->flags.load() & DRM_MOCK_SCHED_JOB_DONE);
    if (WARN_ON(!job->finished))
        return false;
    return kshim::dma_fence_wait_timeout(&to_drm_sched_fence(job->finished)->scheduled, false, timeout) != 0;
}
// The finished fence's status: 0 pending, 1 done, or the error.
inline int drm_mock_sched_job_status(drm_mock_sched_job* job) {
    return kshim::dma_fence_get_status(job->finished);
}

}  // namespace drm::testing
