// Mirrors drivers/gpu/drm/scheduler/sched_main.c: scheduler init/fini, the run and free work
// items, job init/arm/dependencies/cleanup, timeouts (TDR), stop/start for resets.
//
// DOC: job lifecycle. drm_sched_job_init allocates the fence pair; drm_sched_job_arm picks the
// scheduler (by score, for multi-scheduler entities) and initialises the fences; push puts the
// job on its entity. run_job_work selects a ready entity, pops its head job, charges its credits,
// appends it to the pending list (arming the timeout when it is the head), calls run_job and
// signals `scheduled`; a callback on the hardware fence (drm_sched_job_done_cb) returns the
// credits, signals `finished` with the hardware fence's error and queues free_job_work, which
// takes signalled jobs off the head of the pending list, re-arms the timeout for the new head and
// calls free_job. Everything from run_job to free_job is a fence-signalling section.
//
// Unlike upstream, each work invocation handles a batch (up to kRunBatch jobs, kFreeBatch frees)
// instead of one job and a requeue: same order, fewer work-item round trips per job.
#include <cstdio>

#include "drm/sched/sched_internal.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"

namespace drm {

using kshim::dma_fence_get;
using kshim::dma_fence_put;

int drm_sched_policy = DRM_SCHED_POLICY_FIFO;

namespace {
constexpr unsigned kRunBatch = 32;
constexpr unsigned kFreeBatch = 64;
}  // namespace

// ---- wake-ups ----
void drm_sched_run_job_queue(drm_gpu_scheduler* sched) {
    if (!sched->pause_submit.load(std::memory_order_acquire))
        kshim::queue_work(sched->submit_wq, &sched->work_run_job);
}

static void __drm_sched_run_free_queue(drm_gpu_scheduler* sched) {
    if (!sched->pause_submit.load(std::memory_order_acquire))
        kshim::queue_work(sched->submit_wq, &sched->work_free_job);
}

void drm_sched_wakeup(drm_gpu_scheduler* sched) {
    drm_sched_run_job_queue(sched);
}

// ---- completion ----
// `queue_free` is false when run_job_work completes the job itself: it frees it inline too.
static void drm_sched_job_done(drm_sched_job* s_job, int result, bool queue_free = true) {
    drm_sched_fence* s_fence = s_job->s_fence;
    drm_gpu_scheduler* sched = s_fence->sched;

    sched->credit_count.fetch_sub(s_job->credits, std::memory_order_relaxed);
    drm_sched_score_dec(sched);

    if (kshim::trace::enabled()) {
        kshim::trace::instant("drm_sched_process_job", "drm_sched",
                              "{\"fence_context\":" + std::to_string(s_fence->finished.context) +
                                  ",\"fence_seqno\":" + std::to_string(s_fence->finished.seqno) +
                                  ",\"result\":" + std::to_string(result) + "}");
        kshim::trace::async_end("drm_sched_job", drm_sched_trace_id(s_fence), "drm_sched");
    }
    // The free worker may release the job as soon as `finished` signals: keep the fence.
    dma_fence_get(&s_fence->finished);
    drm_sched_fence_finished(s_fence, result);
    dma_fence_put(&s_fence->finished);
    if (queue_free)
        __drm_sched_run_free_queue(sched);
}

static void drm_sched_job_done_cb(dma_fence* f, dma_fence_cb* cb) {
    drm_sched_job* s_job = container_of(cb, drm_sched_job, cb);
    drm_sched_job_done(s_job, f->error.load(std::memory_order_relaxed));
}

// ---- timeout ----
static void drm_sched_start_timeout_locked(drm_gpu_scheduler* sched) {
    lockdep_assert_held(&sched->job_list_lock);
    if (sched->timeout != kshim::MAX_SCHEDULE_TIMEOUT && !sched->pending_list.empty() && !sched->tdr_suspended) {
        sched->tdr_expires = jiffies + static_cast<unsigned long>(sched->timeout);
        kshim::mod_delayed_work(sched->timeout_wq, &sched->work_tdr, static_cast<unsigned long>(sched->timeout));
    }
}

static void drm_sched_start_timeout_unlocked(drm_gpu_scheduler* sched) {
    kshim::SpinGuard g(sched->job_list_lock);
    drm_sched_start_timeout_locked(sched);
}

void drm_sched_tdr_queue_imm(drm_gpu_scheduler* sched) {
    kshim::SpinGuard g(sched->job_list_lock);
    sched->timeout = 0;
    drm_sched_start_timeout_locked(sched);
}

void drm_sched_fault(drm_gpu_scheduler* sched) {
    if (sched->timeout_wq)
        kshim::mod_delayed_work(sched->timeout_wq, &sched->work_tdr, 0);
}

// Upstream pushes the timer to MAX_SCHEDULE_TIMEOUT jiffies; the shim's delayed work cannot take
// that delay, so the timer is cancelled and a flag keeps job starts from re-arming it.
unsigned long drm_sched_suspend_timeout(drm_gpu_scheduler* sched) {
    kshim::SpinGuard g(sched->job_list_lock);
    const unsigned long now = jiffies;
    const bool was_armed = kshim::cancel_delayed_work(&sched->work_tdr);
    sched->tdr_suspended = true;
    if (was_armed && kshim::time_after(sched->tdr_expires, now))
        return sched->tdr_expires - now;
    return static_cast<unsigned long>(sched->timeout);
}

void drm_sched_resume_timeout(drm_gpu_scheduler* sched, unsigned long remaining) {
    kshim::SpinGuard g(sched->job_list_lock);
    sched->tdr_suspended = false;
    if (sched->pending_list.empty()) {
        kshim::cancel_delayed_work(&sched->work_tdr);
    } else {
        sched->tdr_expires = jiffies + remaining;
        kshim::mod_delayed_work(sched->timeout_wq, &sched->work_tdr, remaining);
    }
}

// The timer follows the head of the pending list: armed when a job becomes the head.
// Returns true when the job became the head of the pending list: its timeout is armed by
// drm_sched_arm_head_timeout once the run batch is done.
static bool drm_sched_job_begin(drm_sched_job* s_job) {
    drm_gpu_scheduler* sched = s_job->sched;
    kshim::SpinGuard g(sched->job_list_lock);
    const bool head = sched->pending_list.empty();
    sched->pending_list.push_back(*s_job);
    return head;
}

// Arms the timeout for the head of the pending list unless something (the free path) already
// did. Deferred from drm_sched_job_begin to the end of the run batch so that a job the hardware
// finished inside run_job (a null or synchronous backend, panthor's VM_BIND queue) costs no
// timer arm and cancel.
static void drm_sched_arm_head_timeout(drm_gpu_scheduler* sched) {
    kshim::SpinGuard g(sched->job_list_lock);
    if (!kshim::delayed_work_pending(&sched->work_tdr))
        drm_sched_start_timeout_locked(sched);
}

// "No hang": the job goes back to the head, and whatever finished meanwhile gets freed.
static void drm_sched_job_reinsert_on_false_timeout(drm_gpu_scheduler* sched, drm_sched_job* job) {
    kshim::SpinGuard g(sched->job_list_lock);
    sched->pending_list.push_front(*job);
    __drm_sched_run_free_queue(sched);
}

static void drm_sched_job_timedout(kshim::work_struct* work) {
    drm_gpu_scheduler* sched = container_of(kshim::to_delayed_work(work), drm_gpu_scheduler, work_tdr);
    drm_gpu_sched_stat status = DRM_GPU_SCHED_STAT_RESET;

    sched->job_list_lock.lock();
    drm_sched_job* job = sched->pending_list.empty() ? nullptr : &sched->pending_list.front();
    if (job) {
        // Off the list, so a concurrent free_job_work cannot free it under the handler.
        sched->pending_list.pop_front();
        sched->job_list_lock.unlock();

        if (kshim::trace::enabled())
            kshim::trace::instant("drm_sched_job_timedout", "drm_sched", "{\"id\":" + std::to_string(job->id) + "}");
        status = sched->ops->timedout_job(job);

        // drm_sched_stop found the bad job already done and left it to us.
        if (sched->free_guilty) {
            sched->ops->free_job(job);
            sched->free_guilty = false;
        }
        if (status == DRM_GPU_SCHED_STAT_NO_HANG)
            drm_sched_job_reinsert_on_false_timeout(sched, job);
    } else {
        sched->job_list_lock.unlock();
    }
    if (status != DRM_GPU_SCHED_STAT_ENODEV)
        drm_sched_start_timeout_unlocked(sched);
}

// ---- stop / start (reset handling) ----
bool drm_sched_wqueue_ready(drm_gpu_scheduler* sched) {
    return sched->ready;
}

void drm_sched_wqueue_stop(drm_gpu_scheduler* sched) {
    sched->pause_submit.store(true, std::memory_order_release);
    kshim::cancel_work_sync(&sched->work_run_job);
    kshim::cancel_work_sync(&sched->work_free_job);
}

void drm_sched_wqueue_start(drm_gpu_scheduler* sched) {
    sched->pause_submit.store(false, std::memory_order_release);
    kshim::queue_work(sched->submit_wq, &sched->work_run_job);
    kshim::queue_work(sched->submit_wq, &sched->work_free_job);
}

void drm_sched_stop(drm_gpu_scheduler* sched, drm_sched_job* bad) {
    drm_sched_wqueue_stop(sched);

    // The timeout handler took the bad job off the list; with the workers stopped nothing can
    // free it now, so it goes back where it was.
    if (bad && bad->sched == sched) {
        kshim::SpinGuard g(sched->job_list_lock);
        sched->pending_list.push_front(*bad);
    }

    // Latest first: detach from the hardware fences, or drop jobs whose fence already fired.
    for (auto it = sched->pending_list.end(); it != sched->pending_list.begin();) {
        --it;
        drm_sched_job* s_job = &*it;
        dma_fence* parent = s_job->s_fence->parent.load(std::memory_order_acquire);
        if (parent && kshim::dma_fence_remove_callback(parent, &s_job->cb)) {
            s_job->s_fence->parent.store(nullptr, std::memory_order_release);
            dma_fence_put(parent);
            sched->credit_count.fetch_sub(s_job->credits, std::memory_order_relaxed);
        } else {
            {
                kshim::SpinGuard g(sched->job_list_lock);
                it = sched->pending_list.erase(it);  // the next (already visited) one
            }
            // Its done callback may still be running elsewhere: let it finish with the job.
            kshim::dma_fence_wait(&s_job->s_fence->finished, false);
            if (bad != s_job)
                sched->ops->free_job(s_job);
            else
                sched->free_guilty = true;
        }
    }
    // drm_sched_start re-arms it; a timeout firing now would see half-reset state.
    kshim::cancel_delayed_work(&sched->work_tdr);
}

void drm_sched_start(drm_gpu_scheduler* sched, int errnum) {
    // The workers are stopped: nobody else walks the list.
    for (auto it = sched->pending_list.begin(); it != sched->pending_list.end();) {
        drm_sched_job* s_job = &*it;
        ++it;
        dma_fence* fence = s_job->s_fence->parent.load(std::memory_order_acquire);
        sched->credit_count.fetch_add(s_job->credits, std::memory_order_relaxed);
        if (!fence) {
            drm_sched_job_done(s_job, errnum ? errnum : -ECANCELED);
            continue;
        }
        if (kshim::dma_fence_add_callback(fence, &s_job->cb, drm_sched_job_done_cb)) {
            int err = fence->error.load(std::memory_order_relaxed);
            drm_sched_job_done(s_job, err ? err : errnum);
        }
    }
    drm_sched_start_timeout_unlocked(sched);
    drm_sched_wqueue_start(sched);
}

// ---- karma and resubmission (deprecated upstream; panfrost still recovers this way) ----
void drm_sched_increase_karma(drm_sched_job* bad) {
    drm_gpu_scheduler* sched = bad->sched;
    // Kernel jobs (page-table updates and the like) are collateral damage of a hang, never its
    // cause.
    if (bad->s_priority == DRM_SCHED_PRIORITY_KERNEL)
        return;
    bad->karma.fetch_add(1, std::memory_order_relaxed);

    // The job no longer knows its entity (pop cleared it): find it by its fence context among
    // the entities on this scheduler's run queues. All of them: a FAIR scheduler keeps every
    // priority on the first one.
    const u64 context = bad->s_fence->scheduled.context;
    for (u32 i = DRM_SCHED_PRIORITY_KERNEL; i < sched->num_rqs; i++) {
        drm_sched_rq* rq = sched->sched_rq[i];
        kshim::SpinGuard g(rq->lock);
        for (drm_sched_entity& entity : rq->entities) {
            if (entity.fence_context != context)
                continue;
            if (entity.guilty)
                entity.guilty->store(1, std::memory_order_relaxed);
            return;
        }
    }
}

void drm_sched_resubmit_jobs(drm_gpu_scheduler* sched) {
    // Called between drm_sched_stop and drm_sched_start: the workers are stopped, so nobody
    // else walks or changes the pending list.
    bool found_guilty = false;
    u64 guilty_context = 0;
    for (drm_sched_job& s_job : sched->pending_list) {
        drm_sched_fence* s_fence = s_job.s_fence;
        // The first job past the hang limit condemns its whole context: its later jobs
        // depended on what it should have produced.
        if (!found_guilty && static_cast<unsigned>(s_job.karma.load(std::memory_order_relaxed)) > sched->hang_limit) {
            found_guilty = true;
            guilty_context = s_fence->scheduled.context;
        }
        if (found_guilty && s_fence->scheduled.context == guilty_context)
            kshim::dma_fence_set_error(&s_fence->finished, -ECANCELED);

        // The same contract as in run_job_work: run_job must not wait or allocate as if it
        // could reclaim.
        const bool cookie = kshim::dma_fence_begin_signalling();
        dma_fence* fence = sched->ops->run_job(&s_job);
        kshim::dma_fence_end_signalling(cookie);

        // drm_sched_stop dropped the old hardware fence; drm_sched_start waits on the new one,
        // or, with none, finishes the job with its errno (or -ECANCELED).
        dma_fence* parent = nullptr;
        if (IS_ERR(fence))
            kshim::dma_fence_set_error(&s_fence->finished, static_cast<int>(PTR_ERR(fence)));
        else if (fence)
            parent = fence;  // run_job's reference becomes the parent's
        dma_fence_put(s_fence->parent.exchange(parent, std::memory_order_acq_rel));
    }
}

// ---- the work items ----
static unsigned drm_sched_free_finished_jobs(drm_gpu_scheduler* sched, bool* have_more_out);

static void drm_sched_run_job_work(kshim::work_struct* w) {
    drm_gpu_scheduler* sched = container_of(w, drm_gpu_scheduler, work_run_job);
    sched->stats.run_work_calls.fetch_add(1, std::memory_order_relaxed);
    bool popped_any = false, completed_inline = false, new_head = false;
    unsigned n = 0, jobs_run = 0;
    for (; n < kRunBatch; n++) {
        if (sched->pause_submit.load(std::memory_order_acquire))
            break;
        drm_sched_entity* entity = drm_sched_select_entity(sched);
        if (!entity)
            break;
        drm_sched_job* sched_job = drm_sched_entity_pop_job(entity);
        if (!sched_job) {
            // Waiting on a dependency now; its callback wakes us.
            kshim::complete_all(&entity->entity_idle);
            continue;
        }
        popped_any = true;
        drm_sched_fence* s_fence = sched_job->s_fence;

        sched->credit_count.fetch_add(sched_job->credits, std::memory_order_relaxed);
        new_head |= drm_sched_job_begin(sched_job);
        if (kshim::trace::enabled())
            kshim::trace::instant("drm_run_job", "drm_sched", drm_sched_trace_args(sched_job, s_fence));

        const bool cookie = kshim::dma_fence_begin_signalling();
        // The job may be freed by free_job_work once its hardware fence signals.
        dma_fence* fence = sched->ops->run_job(sched_job);
        kshim::complete_all(&entity->entity_idle);
        drm_sched_fence_scheduled(s_fence, fence);
        // A job the hardware completed at once is freed at the end of this work item rather
        // than by a separate free_job_work hop.
        if (!IS_ERR_OR_NULL(fence)) {
            int r = kshim::dma_fence_add_callback(fence, &sched_job->cb, drm_sched_job_done_cb);
            if (r == -ENOENT) {
                drm_sched_job_done(sched_job, fence->error.load(std::memory_order_relaxed), false);
                completed_inline = true;
            } else if (r) {
                dev_err(sched->dev, "fence add callback failed (%d)", r);
            }
            dma_fence_put(fence);
        } else {
            drm_sched_job_done(sched_job, IS_ERR(fence) ? static_cast<int>(PTR_ERR(fence)) : 0, false);
            completed_inline = true;
        }
        kshim::dma_fence_end_signalling(cookie);
        jobs_run++;
    }
    sched->stats.jobs_run.fetch_add(jobs_run, std::memory_order_relaxed);
    if (popped_any)
        kshim::wake_up(&sched->job_scheduled);
    if (completed_inline && !sched->pause_submit.load(std::memory_order_acquire)) {
        bool have_more = false;
        drm_sched_free_finished_jobs(sched, &have_more);
        if (have_more)
            __drm_sched_run_free_queue(sched);
    }
    if (new_head)
        drm_sched_arm_head_timeout(sched);
    // A full batch may have left more behind.
    if (n == kRunBatch)
        drm_sched_run_job_queue(sched);
}

static void drm_sched_free_job_work(kshim::work_struct* w) {
    drm_gpu_scheduler* sched = container_of(w, drm_gpu_scheduler, work_free_job);
    if (sched->pause_submit.load(std::memory_order_acquire))
        return;
    sched->stats.free_work_calls.fetch_add(1, std::memory_order_relaxed);
    bool have_more = false;
    drm_sched_free_finished_jobs(sched, &have_more);
    if (have_more)
        __drm_sched_run_free_queue(sched);
    // Credits came back when the jobs completed: maybe something fits now.
    drm_sched_run_job_queue(sched);
}

// Upstream's drm_sched_get_finished_job + free_job, for a batch: takes the signalled jobs off
// the head of the pending list, moves the timeout to the new head and frees them.
static unsigned drm_sched_free_finished_jobs(drm_gpu_scheduler* sched, bool* have_more_out) {
    drm_sched_job* batch[kFreeBatch];
    unsigned n = 0;
    bool have_more = false;
    {
        kshim::SpinGuard g(sched->job_list_lock);
        while (n < kFreeBatch && !sched->pending_list.empty()) {
            drm_sched_job* job = &sched->pending_list.front();
            if (!kshim::dma_fence_is_signaled(&job->s_fence->finished))
                break;
            sched->pending_list.pop_front();
            // FAIR: the job's GPU time moves its entity along the run queue.
            if (job->entity_stats)
                sched->avg_job_us.add(static_cast<unsigned long>(drm_sched_entity_stats_job_add_gpu_time(job) / 1000));
            batch[n++] = job;
        }
        if (n) {
            // The timer was the old head's; the new head gets a full period from now (the
            // re-arm replaces it), and with no head left it goes.
            const bool head_left = !sched->pending_list.empty();
            if (head_left)
                have_more = kshim::dma_fence_is_signaled(&sched->pending_list.front().s_fence->finished);
            if (head_left && !sched->tdr_suspended)
                drm_sched_start_timeout_locked(sched);
            else if (kshim::delayed_work_pending(&sched->work_tdr))
                kshim::cancel_delayed_work(&sched->work_tdr);
        }
    }
    if (n) {
        const bool cookie = kshim::dma_fence_begin_signalling();
        for (unsigned i = 0; i < n; i++)
            sched->ops->free_job(batch[i]);
        kshim::dma_fence_end_signalling(cookie);
    }
    *have_more_out = have_more;
    return n;
}

// ---- init / fini ----
int drm_sched_init(drm_gpu_scheduler* sched, const drm_sched_init_args* args) {
    sched->ops = args->ops;
    sched->credit_limit = args->credit_limit;
    sched->name = args->name;
    sched->timeout = args->timeout;
    sched->hang_limit = args->hang_limit;
    sched->timeout_wq = args->timeout_wq ? args->timeout_wq : kshim::system_wq();
    sched->score = args->score;
    sched->dev = args->dev;
    sched->policy = args->policy == DRM_SCHED_POLICY_UNSET ? drm_sched_policy : args->policy;

    if (sched->policy < 0 || sched->policy >= DRM_SCHED_POLICY_COUNT) {
        dev_err(sched->dev, "drm_sched_init: unknown policy %d", sched->policy);
        return -EINVAL;
    }
    if (args->num_rqs > DRM_SCHED_PRIORITY_COUNT) {
        dev_err(sched->dev, "drm_sched_init: num_rqs cannot be greater than DRM_SCHED_PRIORITY_COUNT");
        return -EINVAL;
    }
    if (sched->ready) {
        dev_warn(sched->dev, "drm_sched_init: scheduler already initialized!");
        return 0;
    }
    if (args->submit_wq) {
        sched->submit_wq = args->submit_wq;
        sched->own_submit_wq = false;
    } else {
        sched->submit_wq = kshim::alloc_ordered_workqueue("%s", kshim::WQ_MEM_RECLAIM, args->name);
        if (!sched->submit_wq)
            return -ENOMEM;
        sched->own_submit_wq = true;
    }
    sched->num_rqs = args->num_rqs;
    for (u32 i = 0; i < DRM_SCHED_PRIORITY_COUNT; i++) {
        sched->sched_rq[i] = i < sched->num_rqs ? &sched->rq_storage[i] : nullptr;
        drm_sched_rq_init(sched, &sched->rq_storage[i]);
    }
    sched->credit_count.store(0, std::memory_order_relaxed);
    INIT_DELAYED_WORK(&sched->work_tdr, drm_sched_job_timedout);
    INIT_WORK(&sched->work_run_job, drm_sched_run_job_work);
    INIT_WORK(&sched->work_free_job, drm_sched_free_job_work);
    sched->score_in.store(0, std::memory_order_relaxed);
    sched->score_out.store(0, std::memory_order_relaxed);
    sched->job_id_count.store(0, std::memory_order_relaxed);
    sched->pause_submit.store(false, std::memory_order_relaxed);
    sched->tdr_suspended = false;
    sched->free_guilty = false;
    sched->ready = true;
    return 0;
}

// drm_sched_fini: the workers and the timeout handler are stopped; the lock is only for form.
static void drm_sched_cancel_remaining_jobs(drm_gpu_scheduler* sched) {
    for (;;) {
        drm_sched_job* job;
        {
            kshim::SpinGuard g(sched->job_list_lock);
            if (sched->pending_list.empty())
                break;
            job = &sched->pending_list.back();
        }
        // The hardware fence signals with -ECANCELED; the done callback passes that on.
        sched->ops->cancel_job(job);
        {
            kshim::SpinGuard g(sched->job_list_lock);
            sched->pending_list.erase(sched->pending_list.iterator_to(*job));
        }
        sched->ops->free_job(job);
    }
}

void drm_sched_fini(drm_gpu_scheduler* sched) {
    drm_sched_wqueue_stop(sched);
    // A timeout handler still running would race with the cancellation below (upstream cancels
    // the TDR later; the order matters once jobs are cancelled here).
    kshim::cancel_delayed_work_sync(&sched->work_tdr);
    if (sched->ops->cancel_job)
        drm_sched_cancel_remaining_jobs(sched);

    for (u32 i = DRM_SCHED_PRIORITY_KERNEL; i < sched->num_rqs; i++) {
        drm_sched_rq* rq = sched->sched_rq[i];
        kshim::SpinGuard g(rq->lock);
        // Entities still attached can no longer be submitted to; drm_sched_entity_fini (or
        // kill) deals with what they still hold. Unlike upstream they are also detached here,
        // so nothing walks a dead run queue later.
        while (!rq->entities.empty()) {
            drm_sched_entity& e = rq->entities.front();
            e.stopped.store(true, std::memory_order_release);
            rq->entities.pop_front();
            rq->nr_entities.store(rq->nr_entities.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
            if (e.rb_tree_node.is_linked())
                rq->rb_tree_root.erase(rq->rb_tree_root.iterator_to(e));
            drm_sched_score_dec(sched);
        }
        rq->current_entity = nullptr;
    }
    // Wakes everyone stuck in drm_sched_entity_flush on this scheduler.
    kshim::wake_up_all(&sched->job_scheduled);
    kshim::cancel_delayed_work_sync(&sched->work_tdr);  // nothing re-arms it now; kept as upstream
    if (sched->own_submit_wq)
        kshim::destroy_workqueue(sched->submit_wq);
    sched->submit_wq = nullptr;
    sched->ready = false;
    if (!sched->pending_list.empty())
        dev_warn(sched->dev, "Tearing down scheduler while jobs are pending!");
}

int drm_sched_score(const drm_gpu_scheduler* sched) {
    if (sched->score)
        return sched->score->load(std::memory_order_relaxed);
    // Out first: every decrement seen there has its increment visible in `in` afterwards.
    const int out = sched->score_out.load(std::memory_order_acquire);
    return sched->score_in.load(std::memory_order_relaxed) - out;
}

drm_gpu_scheduler* drm_sched_pick_best(drm_gpu_scheduler** sched_list, unsigned num_sched_list) {
    drm_gpu_scheduler* picked = nullptr;
    unsigned min_score = ~0u;
    for (unsigned i = 0; i < num_sched_list; i++) {
        drm_gpu_scheduler* sched = sched_list[i];
        if (!sched->ready) {
            pr_warn("scheduler %s is not ready, skipping", sched->name);
            continue;
        }
        unsigned score = static_cast<unsigned>(drm_sched_score(sched));
        if (score < min_score) {
            min_score = score;
            picked = sched;
        }
    }
    return picked;
}

// ---- jobs ----
int drm_sched_job_init(drm_sched_job* job, drm_sched_entity* entity, u32 credits, void* owner, u64 drm_client_id) {
    if (!entity->rq) {
        pr_err("drm_sched_job_init: entity has no rq!");
        return -ENOENT;
    }
    if (!credits) [[unlikely]] {
        pr_err("*ERROR* drm_sched_job_init: credits cannot be 0!");
        return -EINVAL;
    }
    // Upstream zeroes the job; the embedded hooks must already be unlinked.
    WARN_ON(job->list.is_linked() || job->cb.node.is_linked() || job->finish_cb.node.is_linked());
    job->queue_next.store(nullptr, std::memory_order_relaxed);
    job->submit_ts = 0;
    job->sched = nullptr;
    job->entity_stats = nullptr;
    job->entity = entity;
    job->credits = credits;
    job->last_dependency = 0;
    job->id = 0;
    job->karma.store(0, std::memory_order_relaxed);
    job->dependencies = drm_sched_job_deps{};
    job->dependencies.slots = job->dependencies.inline_slots;
    job->s_fence = drm_sched_fence_alloc(entity, owner, drm_client_id);
    if (!job->s_fence)
        return -ENOMEM;
    return 0;
}

void drm_sched_job_arm(drm_sched_job* job) {
    drm_sched_entity* entity = job->entity;
    BUG_ON(!entity);
    drm_sched_entity_select_rq(entity);
    drm_gpu_scheduler* sched = entity->rq->sched;
    job->sched = sched;
    job->s_priority = entity->priority.load(std::memory_order_relaxed);
    if (sched->policy == DRM_SCHED_POLICY_FAIR && entity->stats)
        job->entity_stats = drm_sched_entity_stats_get(entity->stats);
    job->id = sched->job_id_count.fetch_add(1, std::memory_order_relaxed) + 1;
    drm_sched_fence_init(job->s_fence, entity);
}

static int drm_sched_deps_grow(drm_sched_job_deps& deps) {
    const u32 cap = deps.capacity * 2;
    auto* slots = static_cast<dma_fence**>(kshim::kmalloc(sizeof(dma_fence*) * cap, kshim::GFP_KERNEL));
    if (!slots)
        return -ENOMEM;
    for (u32 i = 0; i < deps.count; i++)
        slots[i] = deps.slots[i];
    if (deps.slots != deps.inline_slots)
        kshim::kfree(deps.slots);
    deps.slots = slots;
    deps.capacity = cap;
    return 0;
}

int drm_sched_job_add_dependency(drm_sched_job* job, dma_fence* fence) {
    if (!fence)
        return 0;
    drm_sched_job_deps& deps = job->dependencies;
    // One entry per fence context: the array scales with engines involved, not with buffers.
    for (u32 i = 0; i < deps.count; i++) {
        dma_fence* entry = deps.slots[i];
        if (!entry || entry->context != fence->context)
            continue;
        if (kshim::dma_fence_is_later(fence, entry)) {
            dma_fence_put(entry);
            deps.slots[i] = fence;
        } else {
            dma_fence_put(fence);
        }
        return 0;
    }
    if (deps.count == deps.capacity) {
        int ret = drm_sched_deps_grow(deps);
        if (ret) {
            dma_fence_put(fence);
            return ret;
        }
    }
    deps.slots[deps.count++] = fence;
    return 0;
}

bool drm_sched_job_has_dependency(drm_sched_job* job, dma_fence* fence) {
    const drm_sched_job_deps& deps = job->dependencies;
    for (u32 i = 0; i < deps.count; i++)
        if (deps.slots[i] == fence)
            return true;
    return false;
}

int drm_sched_job_add_resv_dependencies(drm_sched_job* job, dma_resv* resv, dma_resv_usage usage) {
    dma_resv_assert_held(resv);
    kshim::dma_resv_iter cursor;
    dma_fence* fence;
    dma_resv_for_each_fence(&cursor, resv, usage, fence) {
        // The locked walk lends the fences; the job keeps its own reference.
        int ret = drm_sched_job_add_dependency(job, dma_fence_get(fence));
        if (ret)
            return ret;
    }
    return 0;
}

int drm_sched_job_add_implicit_dependencies(drm_sched_job* job, dma_resv* resv, bool write) {
    return drm_sched_job_add_resv_dependencies(job, resv, kshim::dma_resv_usage_rw(write));
}

void drm_sched_job_cleanup(drm_sched_job* job) {
    if (drm_sched_fence* s_fence = job->s_fence) {
        if (kshim::kref_read(&s_fence->finished.refcount))
            dma_fence_put(&s_fence->finished);  // armed: the fences live on for their waiters
        else
            drm_sched_fence_free(s_fence);  // aborted before drm_sched_job_arm
    }
    job->s_fence = nullptr;
    if (job->entity_stats)
        drm_sched_entity_stats_put(job->entity_stats);
    job->entity_stats = nullptr;
    drm_sched_job_deps& deps = job->dependencies;
    for (u32 i = 0; i < deps.count; i++)
        dma_fence_put(deps.slots[i]);
    if (deps.slots != deps.inline_slots)
        kshim::kfree(deps.slots);
    deps.slots = deps.inline_slots;
    deps.count = 0;
    deps.capacity = drm_sched_job_deps::kInline;
}

}  // namespace drm
