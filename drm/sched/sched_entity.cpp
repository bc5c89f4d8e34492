// Mirrors drivers/gpu/drm/scheduler/sched_entity.c: entities, their job queue, dependencies.
//
// An entity is a software queue whose jobs run in push order. It enters its run queue when a
// job is pushed into an empty queue (which also wakes the scheduler). The scheduler pops the
// head job once every dependency is met; a dependency that is not met installs one callback
// (entity->cb) and the entity is not ready until it fires: fences of the entity itself are
// ignored, fences of jobs on the same scheduler are only waited for until `scheduled` (the ring
// runs in order), anything else until it signals and wakes the scheduler. Killing an entity
// finishes its queued jobs with -ESRCH, each after the one before it and after its own
// dependencies, so nothing a job depended on is overtaken.
#include "drm/sched/sched_internal.h"
#include "kernel_shim/sched.h"

namespace drm {

using kshim::dma_fence_get;
using kshim::dma_fence_put;

int drm_sched_entity_init(drm_sched_entity* entity, drm_sched_priority priority, drm_gpu_scheduler** sched_list,
                          unsigned num_sched_list, std::atomic<int>* guilty) {
    if (!entity || !sched_list || (num_sched_list && !sched_list[0]))
        return -EINVAL;

    entity->rq = nullptr;
    entity->guilty = guilty;
    entity->num_sched_list = num_sched_list;
    entity->priority.store(priority, std::memory_order_relaxed);
    // Kept even with one scheduler (upstream drops it): set_priority then still moves the entity.
    entity->sched_list = sched_list;
    entity->last_scheduled.store(nullptr, std::memory_order_relaxed);
    entity->dependency.store(nullptr, std::memory_order_relaxed);
    entity->stopped.store(false, std::memory_order_relaxed);
    entity->oldest_job_waiting = 0;

    if (num_sched_list && !sched_list[0]->ready) {
        pr_warn("drm_sched_entity_init: called with uninitialized scheduler");
    } else if (num_sched_list) {
        // Clamp to the lowest priority the scheduler has.
        if (priority >= static_cast<int>(sched_list[0]->num_rqs)) {
            dev_err(sched_list[0]->dev, "entity has out-of-bounds priority: %d. num_rqs: %u", priority,
                    sched_list[0]->num_rqs);
            int p = static_cast<int>(sched_list[0]->num_rqs) - 1;
            entity->priority.store(static_cast<drm_sched_priority>(p < 0 ? 0 : p), std::memory_order_relaxed);
        }
        entity->rq = drm_sched_rq_for(sched_list[0], entity->priority.load(std::memory_order_relaxed));
    }
    // Only the FAIR policy keeps per-entity GPU time.
    entity->stats = nullptr;
    for (unsigned i = 0; i < num_sched_list; i++)
        if (sched_list[i] && sched_list[i]->policy == DRM_SCHED_POLICY_FAIR) {
            entity->stats = drm_sched_entity_stats_new();
            if (!entity->stats)
                return -ENOMEM;
            break;
        }

    kshim::init_completion(&entity->entity_idle);
    kshim::complete_all(&entity->entity_idle);  // idle until the scheduler selects it
    entity->fence_seq.store(0, std::memory_order_relaxed);
    entity->fence_context = kshim::dma_fence_context_alloc(2);
    return 0;
}

void drm_sched_entity_modify_sched(drm_sched_entity* entity, drm_gpu_scheduler** sched_list, unsigned num_sched_list) {
    WARN_ON(!num_sched_list || !sched_list);
    kshim::SpinGuard g(entity->lock);
    entity->sched_list = sched_list;
    entity->num_sched_list = num_sched_list;
}

static bool drm_sched_entity_is_idle(drm_sched_entity* entity) {
    return !entity->list.is_linked() || entity->job_queue.count() == 0 ||
           entity->stopped.load(std::memory_order_acquire);
}

bool drm_sched_entity_is_ready(drm_sched_entity* entity) {
    if (!drm_sched_entity_queue_peek(entity))
        return false;
    if (entity->dependency.load(std::memory_order_acquire))
        return false;
    return true;
}

int drm_sched_entity_error(drm_sched_entity* entity) {
    // last_scheduled only changes under the scheduler's use of the entity; take a reference so
    // a concurrent replacement cannot free it under us.
    dma_fence* fence = entity->last_scheduled.load(std::memory_order_acquire);
    return fence ? fence->error.load(std::memory_order_relaxed) : 0;
}

// ---- kill ----
static void drm_sched_entity_kill_jobs_cb(dma_fence* f, dma_fence_cb* cb);

// Runs once the job's predecessor finished: wait for each remaining dependency in turn, then
// signal the fences with -ESRCH and free the job. A work item, so fence callbacks never nest
// into other fences' locks.
static void drm_sched_entity_kill_jobs_work(kshim::work_struct* wrk) {
    drm_sched_job* job = container_of(wrk, drm_sched_job, work);
    drm_sched_job_deps& deps = job->dependencies;
    for (u32 i = 0; i < deps.count; i++) {
        dma_fence* f = deps.slots[i];
        if (!f)
            continue;
        deps.slots[i] = nullptr;
        drm_sched_fence* s_fence = to_drm_sched_fence(f);
        if (s_fence && f == &s_fence->scheduled) {
            // Wait for the whole job, not only its start; the finished fence may already be
            // gone, in which case it also signalled.
            f = kshim::dma_fence_get_rcu(&s_fence->finished);
            dma_fence_put(&s_fence->scheduled);
        }
        if (f && !kshim::dma_fence_add_callback(f, &job->finish_cb, drm_sched_entity_kill_jobs_cb))
            return;
        dma_fence_put(f);
    }
    drm_gpu_scheduler* sched = job->sched;
    // Pushed jobs counted in the score; upstream forgets to drop killed ones.
    drm_sched_score_dec(sched);
    if (kshim::trace::enabled())
        kshim::trace::async_end("drm_sched_job", drm_sched_trace_id(job->s_fence), "drm_sched");
    bool cookie = kshim::dma_fence_begin_signalling();
    drm_sched_fence_scheduled(job->s_fence, nullptr);
    drm_sched_fence_finished(job->s_fence, -ESRCH);
    WARN_ON(job->s_fence->parent.load());
    // An entity of this scheduler may be waiting for the `scheduled` fence just signalled, and
    // that wait (drm_sched_entity_clear_dep) relies on the scheduler running anyway. Here it
    // was signalled outside the scheduler: wake it, or that entity stalls for good. Before
    // free_job: a killed job may outlive its scheduler's fini while it waits for another
    // scheduler's fence, and its free may then give back the scheduler's memory too.
    drm_sched_wakeup(sched);
    sched->ops->free_job(job);
    kshim::dma_fence_end_signalling(cookie);
}

static void drm_sched_entity_kill_jobs_cb(dma_fence* f, dma_fence_cb* cb) {
    drm_sched_job* job = container_of(cb, drm_sched_job, finish_cb);
    dma_fence_put(f);
    INIT_WORK(&job->work, drm_sched_entity_kill_jobs_work);
    kshim::schedule_work(&job->work);
}

void drm_sched_entity_kill(drm_sched_entity* entity) {
    if (!entity->rq)
        return;
    {
        kshim::SpinGuard g(entity->lock);
        entity->stopped.store(true, std::memory_order_release);
        drm_sched_rq_remove_entity(entity->rq, entity);
    }
    // The scheduler may be inside the entity right now: let it leave.
    wait_for_completion(&entity->entity_idle);

    // Chain the queued jobs behind the last one that reached the hardware.
    dma_fence* prev = dma_fence_get(entity->last_scheduled.load(std::memory_order_acquire));
    while (drm_sched_job* job = drm_sched_entity_queue_pop(entity)) {
        drm_sched_fence* s_fence = job->s_fence;
        dma_fence_get(&s_fence->finished);
        if (!prev || kshim::dma_fence_add_callback(prev, &job->finish_cb, drm_sched_entity_kill_jobs_cb)) {
            dma_fence_put(prev);
            drm_sched_entity_kill_jobs_cb(nullptr, &job->finish_cb);
        }
        prev = &s_fence->finished;
    }
    dma_fence_put(prev);
}

long drm_sched_entity_flush(drm_sched_entity* entity, long timeout) {
    if (!entity->rq)
        return 0;
    drm_gpu_scheduler* sched = entity->rq->sched;
    // No process exit in the shim: wait (bounded) for the queued jobs to reach the hardware.
    long ret = timeout;
    if (timeout)
        ret = wait_event_timeout(sched->job_scheduled, drm_sched_entity_is_idle(entity), timeout);
    return ret;
}

void drm_sched_entity_fini(drm_sched_entity* entity) {
    // Whatever flush did not drain is killed; afterwards the scheduler never looks at it again.
    drm_sched_entity_kill(entity);
    if (dma_fence* dep = entity->dependency.load(std::memory_order_acquire)) {
        if (kshim::dma_fence_remove_callback(dep, &entity->cb)) {
            entity->dependency.store(nullptr, std::memory_order_release);
            dma_fence_put(dep);
        }
    }
    dma_fence_put(entity->last_scheduled.exchange(nullptr, std::memory_order_acq_rel));
    // Jobs still in flight keep their own references.
    if (entity->stats)
        drm_sched_entity_stats_put(entity->stats);
    entity->stats = nullptr;
}

void drm_sched_entity_destroy(drm_sched_entity* entity) {
    drm_sched_entity_flush(entity, MAX_WAIT_SCHED_ENTITY_Q_EMPTY);
    drm_sched_entity_fini(entity);
}

// ---- dependencies ----
static void drm_sched_entity_clear_dep(dma_fence* f, dma_fence_cb* cb) {
    drm_sched_entity* entity = container_of(cb, drm_sched_entity, cb);
    entity->dependency.store(nullptr, std::memory_order_release);
    dma_fence_put(f);
}

// Also wakes the scheduler: nothing on its side will notice otherwise.
static void drm_sched_entity_wakeup(dma_fence* f, dma_fence_cb* cb) {
    drm_sched_entity* entity = container_of(cb, drm_sched_entity, cb);
    drm_gpu_scheduler* sched = entity->rq->sched;
    drm_sched_entity_clear_dep(f, cb);
    drm_sched_wakeup(sched);
}

void drm_sched_entity_set_priority(drm_sched_entity* entity, drm_sched_priority priority) {
    kshim::SpinGuard g(entity->lock);
    entity->priority.store(priority, std::memory_order_relaxed);
}

// True when the entity must wait for entity->dependency (a callback is installed).
static bool drm_sched_entity_add_dependency_cb(drm_sched_entity* entity, drm_sched_job* sched_job) {
    drm_gpu_scheduler* sched = entity->rq->sched;
    dma_fence* fence = entity->dependency.load(std::memory_order_relaxed);

    if (fence->context == entity->fence_context || fence->context == entity->fence_context + 1) {
        // Our own earlier job: the queue runs in order anyway.
        entity->dependency.store(nullptr, std::memory_order_relaxed);
        dma_fence_put(fence);
        return false;
    }

    drm_sched_fence* s_fence = to_drm_sched_fence(fence);
    if (!fence->error.load(std::memory_order_relaxed) && s_fence && s_fence->sched == sched &&
        !kshim::dma_fence_test_flag(fence, DRM_SCHED_FENCE_DONT_PIPELINE)) {
        // Same ring: it only has to be ahead of us in the ring.
        dma_fence* scheduled = dma_fence_get(&s_fence->scheduled);
        dma_fence_put(fence);
        entity->dependency.store(scheduled, std::memory_order_release);
        if (!kshim::dma_fence_add_callback(scheduled, &entity->cb, drm_sched_entity_clear_dep))
            return true;
        entity->dependency.store(nullptr, std::memory_order_relaxed);
        dma_fence_put(scheduled);
        return false;
    }

    if (!kshim::dma_fence_add_callback(fence, &entity->cb, drm_sched_entity_wakeup))
        return true;
    entity->dependency.store(nullptr, std::memory_order_relaxed);
    dma_fence_put(fence);
    return false;
}

// The next dependency of the job to look at (a reference), or nullptr when none is left.
static dma_fence* drm_sched_job_dependency(drm_sched_job* job, drm_sched_entity* entity) {
    // The references stay in the job: kill walks them again.
    drm_sched_job_deps& deps = job->dependencies;
    while (job->last_dependency < deps.count) {
        dma_fence* f = deps.slots[job->last_dependency++];
        if (f)
            return dma_fence_get(f);
    }
    if (job->sched->ops->prepare_job)
        return job->sched->ops->prepare_job(job, entity);
    return nullptr;
}

drm_sched_job* drm_sched_entity_queue_pop(drm_sched_entity* entity) {
    drm_sched_job_queue& q = entity->job_queue;
    drm_sched_job* job = q.head.load(std::memory_order_acquire);
    if (!job)
        return nullptr;
    drm_sched_job* next = job->queue_next.load(std::memory_order_acquire);
    q.head.store(next, std::memory_order_relaxed);
    if (!next) {
        // The last job: point tail back at head, unless a push already swapped it, in which case
        // that push is about to link its job behind this one.
        std::atomic<drm_sched_job*>* expected = &job->queue_next;
        if (!q.tail.compare_exchange_strong(expected, &q.head, std::memory_order_acq_rel)) {
            for (unsigned spins = 0; !(next = job->queue_next.load(std::memory_order_acquire)); spins++)
                kshim::cpu_relax(spins);
            q.head.store(next, std::memory_order_relaxed);
        }
    }
    // One consumer at a time: a plain increment of its own counter.
    q.popped.store(q.popped.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    return job;
}

// Pushes at the tail; true when the queue was empty.
static bool drm_sched_entity_queue_push(drm_sched_entity* entity, drm_sched_job* job) {
    drm_sched_job_queue& q = entity->job_queue;
    job->queue_next.store(nullptr, std::memory_order_relaxed);
    std::atomic<drm_sched_job*>* link = q.tail.exchange(&job->queue_next, std::memory_order_acq_rel);
    // An atomic add although pushes are serialised: the exchange above already paid for the
    // locked instruction, and a driver breaking that rule still gets a right count.
    q.pushed.fetch_add(1, std::memory_order_release);
    // Publishes the job (and everything written to it before the push) to the consumer.
    link->store(job, std::memory_order_release);
    return link == &q.head;
}

// Starts loading an object into this CPU's cache, for writing.
template <class T>
static void prefetch_object_for_write(const T* p) {
    const char* bytes = reinterpret_cast<const char*>(p);
    for (size_t off = 0; off < sizeof(T); off += kshim::SMP_CACHE_BYTES)
        __builtin_prefetch(bytes + off, 1);
}

// Jobs reach the scheduler freshly written by the submitting thread, usually on another CPU:
// fetching the jobs ahead now overlaps those transfers with running this one instead of
// stalling on each first touch. Two ahead, so that reading the next job's fence pointer finds
// the job already here (fetched by the previous pop): the fence pair of the next job, the job
// after it. Queued jobs are no longer written by the submitter; only their link may change,
// and that is atomic.
static void drm_sched_entity_prefetch_next_job(drm_sched_entity* entity) {
    drm_sched_job* next = drm_sched_entity_queue_peek(entity);
    if (!next)
        return;
    prefetch_object_for_write(next->s_fence);
    if (drm_sched_job* after = next->queue_next.load(std::memory_order_acquire))
        prefetch_object_for_write(after);
}

drm_sched_job* drm_sched_entity_pop_job(drm_sched_entity* entity) {
    drm_sched_job* sched_job = drm_sched_entity_queue_peek(entity);
    if (!sched_job)
        return nullptr;

    for (;;) {
        dma_fence* dep = drm_sched_job_dependency(sched_job, entity);
        if (!dep)
            break;
        // Read before the callback is installed: it may fire and drop the fence at once.
        const u64 dep_ctx = dep->context, dep_seqno = dep->seqno;
        entity->dependency.store(dep, std::memory_order_relaxed);
        if (drm_sched_entity_add_dependency_cb(entity, sched_job)) {
            if (kshim::trace::enabled())
                kshim::trace::instant("drm_sched_job_wait_dep", "drm_sched",
                                      "{\"id\":" + std::to_string(sched_job->id) + ",\"ctx\":" +
                                          std::to_string(dep_ctx) + ",\"seqno\":" + std::to_string(dep_seqno) + "}");
            return nullptr;
        }
    }

    // Jobs of a guilty entity still go through the ring, but finish with an error.
    if (entity->guilty && entity->guilty->load(std::memory_order_relaxed))
        kshim::dma_fence_set_error(&sched_job->s_fence->finished, -ECANCELED);

    dma_fence_put(
        entity->last_scheduled.exchange(dma_fence_get(&sched_job->s_fence->finished), std::memory_order_acq_rel));

    drm_sched_entity_queue_pop(entity);
    drm_sched_entity_prefetch_next_job(entity);

    drm_sched_rq_pop_entity(entity);

    // The job may outlive the entity from here on.
    sched_job->entity = nullptr;
    return sched_job;
}

void drm_sched_entity_select_rq(drm_sched_entity* entity) {
    if (!entity->sched_list)
        return;
    // One scheduler and the run queue of the entity's priority already chosen: nothing can
    // change. Returning before the queue count and last_scheduled keeps the submitter off the
    // cache lines the scheduler's worker writes for every job.
    if (entity->num_sched_list == 1 &&
        entity->rq == drm_sched_rq_for(entity->sched_list[0], entity->priority.load(std::memory_order_relaxed)))
        return;
    // Jobs still queued stay on the same scheduler, and so does a job still running.
    if (entity->job_queue.count())
        return;
    dma_fence* fence = entity->last_scheduled.load(std::memory_order_acquire);
    if (fence && !kshim::dma_fence_is_signaled(fence))
        return;

    kshim::SpinGuard g(entity->lock);
    drm_gpu_scheduler* sched = entity->num_sched_list > 1
                                   ? drm_sched_pick_best(entity->sched_list, entity->num_sched_list)
                                   : entity->sched_list[0];
    drm_sched_rq* rq = sched ? drm_sched_rq_for(sched, entity->priority.load(std::memory_order_relaxed)) : nullptr;
    if (rq != entity->rq) {
        drm_sched_rq_remove_entity(entity->rq, entity);
        entity->rq = rq;
    }
}

void drm_sched_entity_push_job(drm_sched_job* sched_job) {
    drm_sched_entity* entity = sched_job->entity;
    drm_gpu_scheduler* job_sched = sched_job->sched;

    if (kshim::trace::enabled()) {
        std::string args = drm_sched_trace_args(sched_job, sched_job->s_fence);
        kshim::trace::instant("drm_sched_job", "drm_sched", args);
        kshim::trace::async_begin("drm_sched_job", drm_sched_trace_id(sched_job->s_fence), "drm_sched", args);
    }
    drm_sched_score_inc(job_sched);
    // After the push the job may run and be freed at any moment: nothing touches it afterwards.
    const ktime_t submit_ts = sched_job->submit_ts = kshim::ktime_get();
    if (!drm_sched_entity_queue_push(entity, sched_job))
        return;

    // The first job puts the entity on its run queue and wakes the scheduler.
    drm_gpu_scheduler* sched;
    {
        kshim::SpinGuard ge(entity->lock);
        if (entity->stopped.load(std::memory_order_relaxed)) {
            pr_err("drm_sched_entity_push_job: Trying to push to a killed entity");
            return;
        }
        drm_sched_rq* rq = entity->rq;
        sched = rq->sched;
        kshim::SpinGuard gr(rq->lock);
        drm_sched_rq_add_entity(rq, entity);
        if (sched->policy == DRM_SCHED_POLICY_FIFO)
            drm_sched_rq_update_fifo_locked(entity, rq, submit_ts);
        else if (sched->policy == DRM_SCHED_POLICY_FAIR)
            drm_sched_rq_fair_add_locked(entity, rq);
    }
    drm_sched_wakeup(sched);
}

}  // namespace drm
