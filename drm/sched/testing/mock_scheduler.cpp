// Mirrors drivers/gpu/drm/scheduler/tests/mock_scheduler.c: the mock scheduler backend.
#include "drm/sched/testing/mock_scheduler.h"

#include <vector>

#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"

namespace drm::testing {

using kshim::dma_fence_put;

namespace {

void note_running(drm_mock_scheduler* sched, int delta) {
    unsigned now = sched->running.fetch_add(delta) + delta;
    unsigned max = sched->max_running.load();
    while (now > max && !sched->max_running.compare_exchange_weak(max, now)) {
    }
}

// The mock schedulers whose resource has not run yet, of every test (one runs at a time).
struct LiveScheds {
    kshim::SpinLock lock{"drm_mock_sched.live_lock"};  // protects scheds; never held across a sleep
    std::vector<drm_mock_scheduler*> scheds;
};

LiveScheds& live_scheds() {
    static LiveScheds* l = new LiveScheds();
    return *l;
}

// Frees the jobs of `scheds` and then the schedulers. Every job's finished fence is dropped before
// any job is looked at: that may release another job's scheduler fence, and with it the parent,
// a hardware fence in that job's memory.
void drm_mock_sched_free_all(const std::vector<drm_mock_scheduler*>& scheds) {
    MockJobOwnerList jobs;
    for (drm_mock_scheduler* sched : scheds) {
        kshim::SpinGuard g(sched->owner_lock);
        jobs.splice(jobs.end(), sched->all_jobs);
    }
    for (drm_mock_sched_job& job : jobs) {
        kshim::hrtimer_cancel(&job.timer);
        // Created but never submitted: its scheduler fence was never armed.
        if (!job.finished && job.base.s_fence)
            drm_sched_job_cleanup(&job.base);
        // May release the scheduler fence, and with it the parent: the hardware fence.
        dma_fence_put(job.finished);
        job.finished = nullptr;
    }
    while (!jobs.empty()) {
        drm_mock_sched_job* job = &jobs.front();
        jobs.pop_front();
        // Someone still holds the hardware fence inside the job's memory: keep the memory (the
        // leak check reports it) rather than leave them a dangling fence.
        if (WARN(job->flags.load() & DRM_MOCK_SCHED_JOB_RAN && !job->hw_fence_released.load(),
                 "%s: a job's hardware fence is still referenced at the end of the test", job->sched->base.name))
            continue;
        kshim::kdelete(job);
    }
    for (drm_mock_scheduler* sched : scheds)
        kshim::kdelete(sched);
}

// The end of the test (the scheduler's resource, registered at drm_mock_sched_new): after the
// test's own actions, so after any drm_mock_sched_fini it registered. While another scheduler of
// the test is still to be released (an older one: its fini may not have run yet), this one is
// handed to it; the last one frees them all (see Memory in mock_scheduler.h). The jobs go first:
// their hardware fences use their scheduler's lock.
void drm_mock_sched_release(void* ctx) {
    auto* sched = static_cast<drm_mock_scheduler*>(ctx);
    if (WARN(!sched->fini_done, "%s: drm_mock_sched_fini was not called before the end of the test", sched->base.name))
        drm_mock_sched_fini(sched);
    std::vector<drm_mock_scheduler*> scheds = std::move(sched->released_with);
    scheds.push_back(sched);
    {
        LiveScheds& live = live_scheds();
        kshim::SpinGuard g(live.lock);
        std::erase(live.scheds, sched);
        for (drm_mock_scheduler* heir : live.scheds) {
            if (heir->test != sched->test)
                continue;
            heir->released_with.insert(heir->released_with.end(), scheds.begin(), scheds.end());
            return;
        }
    }
    drm_mock_sched_free_all(scheds);
}

void drm_mock_sched_entity_release(void* ctx) {
    auto* entity = static_cast<drm_mock_sched_entity*>(ctx);
    if (WARN(!entity->destroyed, "drm_mock_sched_entity_free was not called before the end of the test"))
        drm_mock_sched_entity_free(entity);
    kshim::kdelete(entity);
}

// The hardware finished the job: its fence signals (in timeline order, the callers ensure).
void drm_mock_sched_job_complete(drm_mock_sched_job* job) {
    drm_mock_scheduler* sched = job->sched;
    lockdep_assert_held(&sched->lock);
    job->flags.fetch_or(DRM_MOCK_SCHED_JOB_DONE);
    sched->job_list.erase(sched->job_list.iterator_to(*job));
    note_running(sched, -1);
    job->done_at.store(kshim::ktime_get());
    kshim::dma_fence_signal_locked(&job->hw_fence);
    kshim::complete(&job->done);
}

// Completes every timed job whose time has come, stopping at the first that has not (or at a
// manual one: the timeline is in order).
kshim::hrtimer_restart drm_mock_sched_job_signal_timer(kshim::hrtimer* timer) {
    drm_mock_sched_job* job = container_of(timer, drm_mock_sched_job, timer);
    drm_mock_scheduler* sched = job->sched;
    const ktime_t now = kshim::ktime_get();
    kshim::SpinGuard g(sched->lock);
    while (!sched->job_list.empty()) {
        drm_mock_sched_job* head = &sched->job_list.front();
        if (!head->duration_us || now < head->finish_at)
            break;
        sched->hw_timeline.cur_seqno = head->hw_fence.seqno;
        drm_mock_sched_job_complete(head);
    }
    return kshim::HRTIMER_NORESTART;
}

const char* drm_mock_sched_hw_fence_driver_name(dma_fence*) {
    return "drm_mock_sched";
}
const char* drm_mock_sched_hw_fence_timeline_name(dma_fence* fence) {
    drm_mock_sched_job* job = container_of(fence, drm_mock_sched_job, hw_fence);
    return job->sched->base.name;
}
void drm_mock_sched_hw_fence_release(dma_fence* fence) {
    drm_mock_sched_job* job = container_of(fence, drm_mock_sched_job, hw_fence);
    // Not hrtimer_cancel: the timer callback never drops the last reference, but a release
    // from inside another timer's callback must not wait here. The job's memory is the test's.
    kshim::hrtimer_try_to_cancel(&job->timer);
    job->hw_fence_released.store(true);
}

const kshim::dma_fence_ops drm_mock_sched_hw_fence_ops = {
    .get_driver_name = drm_mock_sched_hw_fence_driver_name,
    .get_timeline_name = drm_mock_sched_hw_fence_timeline_name,
    .release = drm_mock_sched_hw_fence_release,
};

dma_fence* mock_sched_run_job(drm_sched_job* sched_job) {
    drm_mock_scheduler* sched = drm_sched_to_mock_sched(sched_job->sched);
    drm_mock_sched_job* job = drm_sched_job_to_mock_job(sched_job);

    kshim::dma_fence_init(&job->hw_fence, &drm_mock_sched_hw_fence_ops, &sched->lock, sched->hw_timeline.context,
                          sched->hw_timeline.next_seqno.fetch_add(1) + 1);
    kshim::dma_fence_get(&job->hw_fence);  // the job's own reference, dropped by free_job
    job->run_at = kshim::ktime_get();
    job->flags.fetch_or(DRM_MOCK_SCHED_JOB_RAN);
    sched->jobs_run.fetch_add(1);

    kshim::SpinGuard g(sched->lock);
    note_running(sched, 1);
    if (job->duration_us) {
        // Back to back with the job ahead on the ring, or from now when the ring is idle.
        ktime_t start = 0;
        if (!sched->job_list.empty())
            start = sched->job_list.back().finish_at;
        if (!start)
            start = kshim::ktime_get();
        job->finish_at = start + static_cast<ktime_t>(job->duration_us) * kshim::NSEC_PER_USEC;
    }
    sched->job_list.push_back(*job);
    if (job->finish_at)
        kshim::hrtimer_start(&job->timer, job->finish_at, kshim::HRTIMER_MODE_ABS);
    return &job->hw_fence;
}

// As a driver would after a reset: the hung job's fence signals with an error and the job is
// released here (the scheduler does not free jobs its timeout handler took).
drm_gpu_sched_stat mock_sched_timedout_job(drm_sched_job* sched_job) {
    drm_mock_scheduler* sched = drm_sched_to_mock_sched(sched_job->sched);
    drm_mock_sched_job* job = drm_sched_job_to_mock_job(sched_job);
    sched->timeouts.fetch_add(1);

    if (job->flags.load() & DRM_MOCK_SCHED_JOB_DONT_RESET) {
        job->flags.fetch_or(DRM_MOCK_SCHED_JOB_RESET_SKIPPED);
        return DRM_GPU_SCHED_STAT_NO_HANG;
    }

    kshim::hrtimer_cancel(&job->timer);
    {
        kshim::SpinGuard g(sched->lock);
        if (!kshim::dma_fence_is_signaled_locked(&job->hw_fence)) {
            sched->job_list.erase(sched->job_list.iterator_to(*job));
            note_running(sched, -1);
            job->flags.fetch_or(DRM_MOCK_SCHED_JOB_TIMEDOUT);
            kshim::dma_fence_set_error(&job->hw_fence, -ETIMEDOUT);
            job->done_at.store(kshim::ktime_get());
            // Not DONE and `done` stays pending: the hardware never completed the job.
            kshim::dma_fence_signal_locked(&job->hw_fence);
        }
    }
    dma_fence_put(&job->hw_fence);
    drm_sched_job_cleanup(sched_job);
    job->flags.fetch_or(DRM_MOCK_SCHED_JOB_FREED);  // the memory is the test's
    return DRM_GPU_SCHED_STAT_RESET;
}

void mock_sched_free_job(drm_sched_job* sched_job) {
    drm_mock_sched_job* job = drm_sched_job_to_mock_job(sched_job);
    if (job->flags.load() & DRM_MOCK_SCHED_JOB_RAN)
        dma_fence_put(&job->hw_fence);
    drm_sched_job_cleanup(sched_job);
    job->flags.fetch_or(DRM_MOCK_SCHED_JOB_FREED);  // the memory is the test's
}

void mock_sched_cancel_job(drm_sched_job* sched_job) {
    drm_mock_scheduler* sched = drm_sched_to_mock_sched(sched_job->sched);
    drm_mock_sched_job* job = drm_sched_job_to_mock_job(sched_job);
    kshim::hrtimer_cancel(&job->timer);
    kshim::SpinGuard g(sched->lock);
    if (!kshim::dma_fence_is_signaled_locked(&job->hw_fence)) {
        sched->job_list.erase(sched->job_list.iterator_to(*job));
        note_running(sched, -1);
        job->flags.fetch_or(DRM_MOCK_SCHED_JOB_CANCELED);
        kshim::dma_fence_set_error(&job->hw_fence, -ECANCELED);
        job->done_at.store(kshim::ktime_get());
        kshim::dma_fence_signal_locked(&job->hw_fence);  // not DONE, as a timed-out job
    }
}

const drm_sched_backend_ops drm_mock_scheduler_ops = {
    .run_job = mock_sched_run_job,
    .timedout_job = mock_sched_timedout_job,
    .free_job = mock_sched_free_job,
    .cancel_job = mock_sched_cancel_job,
};

}  // namespace

drm_mock_scheduler* drm_mock_sched_new(kshim::kunit* test, const drm_mock_sched_args& a) {
    BUG_ON(!test);
    auto* sched = kshim::knew<drm_mock_scheduler>(kshim::GFP_KERNEL);
    if (!sched)
        return nullptr;
    drm_sched_init_args args;
    args.ops = &drm_mock_scheduler_ops;
    args.submit_wq = a.submit_wq;
    args.num_rqs = a.num_rqs;
    args.credit_limit = a.credit_limit;
    args.hang_limit = 1;
    args.timeout = a.timeout;
    args.score = a.score;
    args.name = a.name;
    args.policy = a.policy;
    if (drm_sched_init(&sched->base, &args)) {
        kshim::kdelete(sched);
        return nullptr;
    }
    sched->test = test;
    sched->hw_timeline.context = kshim::dma_fence_context_alloc(1);
    {
        LiveScheds& live = live_scheds();
        kshim::SpinGuard g(live.lock);
        live.scheds.push_back(sched);
    }
    if (kshim::kunit_add_action_or_reset(test, drm_mock_sched_release, sched))
        return nullptr;
    return sched;
}

void drm_mock_sched_fini(drm_mock_scheduler* sched) {
    if (WARN(sched->fini_done, "drm_mock_sched_fini called twice"))
        return;
    sched->fini_done = true;
    drm_sched_fini(&sched->base);
}

unsigned drm_mock_sched_advance(drm_mock_scheduler* sched, unsigned num) {
    unsigned found = 0;
    const bool cookie = kshim::dma_fence_begin_signalling();
    {
        kshim::SpinGuard g(sched->lock);
        // The timeline's seqnos are 64-bit here (u32 upstream), but wrapping stays a test bug.
        const bool wraps = WARN_ON_ONCE(sched->hw_timeline.cur_seqno + num < sched->hw_timeline.cur_seqno);
        if (!wraps)
            sched->hw_timeline.cur_seqno += num;
        while (!wraps && !sched->job_list.empty()) {
            drm_mock_sched_job* job = &sched->job_list.front();
            if (sched->hw_timeline.cur_seqno < job->hw_fence.seqno)
                break;
            drm_mock_sched_job_complete(job);
            found++;
        }
    }
    kshim::dma_fence_end_signalling(cookie);
    return found;
}

unsigned drm_mock_sched_hw_reset(drm_mock_scheduler* sched, int error) {
    unsigned found = 0;
    MockJobList running;
    {
        kshim::SpinGuard g(sched->lock);
        running.swap(sched->job_list);
    }
    for (auto& job : running)
        kshim::hrtimer_cancel(&job.timer);
    const bool cookie = kshim::dma_fence_begin_signalling();
    {
        kshim::SpinGuard g(sched->lock);
        while (!running.empty()) {
            drm_mock_sched_job* job = &running.front();
            running.pop_front();
            job->flags.fetch_or(DRM_MOCK_SCHED_JOB_TIMEDOUT);
            note_running(sched, -1);
            kshim::dma_fence_set_error(&job->hw_fence, error);
            sched->hw_timeline.cur_seqno = job->hw_fence.seqno;
            job->done_at.store(kshim::ktime_get());
            // Not DONE and `done` stays pending: the job was killed, not completed.
            kshim::dma_fence_signal_locked(&job->hw_fence);
            found++;
        }
    }
    kshim::dma_fence_end_signalling(cookie);
    return found;
}

drm_mock_sched_entity* drm_mock_sched_entity_new_list(kshim::kunit* test, drm_sched_priority priority,
                                                      drm_mock_scheduler** scheds, unsigned n) {
    BUG_ON(!test);
    auto* entity = kshim::knew<drm_mock_sched_entity>(kshim::GFP_KERNEL);
    if (!entity)
        return nullptr;
    BUG_ON(n > 8);
    for (unsigned i = 0; i < n; i++)
        entity->sched_list[i] = &scheds[i]->base;
    if (drm_sched_entity_init(&entity->base, priority, entity->sched_list, n, nullptr)) {
        kshim::kdelete(entity);
        return nullptr;
    }
    entity->test = test;
    if (kshim::kunit_add_action_or_reset(test, drm_mock_sched_entity_release, entity))
        return nullptr;
    return entity;
}

drm_mock_sched_entity* drm_mock_sched_entity_new(kshim::kunit* test, drm_sched_priority priority,
                                                 drm_mock_scheduler* sched) {
    return drm_mock_sched_entity_new_list(test, priority, &sched, 1);
}

void drm_mock_sched_entity_free(drm_mock_sched_entity* entity) {
    if (WARN(entity->destroyed, "drm_mock_sched_entity_free called twice"))
        return;
    entity->destroyed = true;
    drm_sched_entity_destroy(&entity->base);
}

drm_mock_sched_job* drm_mock_sched_job_new(kshim::kunit* test, drm_mock_sched_entity* entity, u32 credits) {
    BUG_ON(!test);
    auto* job = kshim::knew<drm_mock_sched_job>(kshim::GFP_KERNEL);
    if (!job)
        return nullptr;
    if (drm_sched_job_init(&job->base, &entity->base, credits, nullptr, 1)) {
        kshim::kdelete(job);
        return nullptr;
    }
    job->test = test;
    // The memory goes with the entity's current scheduler's (moved at submit if arm picks
    // another): after that scheduler's fini, whenever the test does it.
    job->sched = drm_sched_to_mock_sched(entity->base.rq->sched);
    kshim::init_completion(&job->done);
    kshim::hrtimer_setup(&job->timer, drm_mock_sched_job_signal_timer, kshim::CLOCK_MONOTONIC_,
                         kshim::HRTIMER_MODE_ABS);
    kshim::SpinGuard g(job->sched->owner_lock);
    job->sched->all_jobs.push_back(*job);
    return job;
}

void drm_mock_sched_job_submit(drm_mock_sched_job* job) {
    drm_sched_job_arm(&job->base);
    // Arm may have moved the entity to another mock scheduler: the hardware is that one.
    drm_mock_scheduler* sched = drm_sched_to_mock_sched(job->base.sched);
    if (sched != job->sched) {
        {
            kshim::SpinGuard g(job->sched->owner_lock);
            job->sched->all_jobs.erase(job->sched->all_jobs.iterator_to(*job));
        }
        job->sched = sched;
        kshim::SpinGuard g(sched->owner_lock);
        sched->all_jobs.push_back(*job);
    }
    job->finished = kshim::dma_fence_get(&job->base.s_fence->finished);
    drm_sched_entity_push_job(&job->base);
}

}  // namespace drm::testing
