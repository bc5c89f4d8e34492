// Mirrors drivers/gpu/drm/scheduler/sched_internal.h: what the scheduler's files share.
#pragma once
#include <string>

#include "drm/sched/gpu_scheduler.h"
#include "kernel_shim/trace.h"

namespace drm {

// ---- the score (see drm_gpu_scheduler::score_in) ----
inline void drm_sched_score_inc(drm_gpu_scheduler* sched) {
    if (sched->score)
        sched->score->fetch_add(1, std::memory_order_relaxed);
    else
        sched->score_in.fetch_add(1, std::memory_order_relaxed);
}
// Release: a reader that sees this decrement also sees the increment it undoes (so the own
// score never reads negative).
inline void drm_sched_score_dec(drm_gpu_scheduler* sched) {
    if (sched->score)
        sched->score->fetch_sub(1, std::memory_order_relaxed);
    else
        sched->score_out.fetch_add(1, std::memory_order_release);
}

// ---- run queues (sched_rq.cpp) ----
void drm_sched_rq_init(drm_gpu_scheduler* sched, drm_sched_rq* rq);
void drm_sched_rq_add_entity(drm_sched_rq* rq, drm_sched_entity* entity);
void drm_sched_rq_remove_entity(drm_sched_rq* rq, drm_sched_entity* entity);
void drm_sched_rq_update_fifo_locked(drm_sched_entity* entity, drm_sched_rq* rq, ktime_t ts);
// The run queue an entity of `priority` belongs on: one per priority, or the only one (FAIR).
inline drm_sched_rq* drm_sched_rq_for(drm_gpu_scheduler* sched, int priority) {
    return sched->sched_rq[sched->policy == DRM_SCHED_POLICY_FAIR ? 0 : priority];
}
// FAIR (caller holds entity->lock and rq->lock): the entity's first job was pushed.
void drm_sched_rq_fair_add_locked(drm_sched_entity* entity, drm_sched_rq* rq);
// After a job left the entity: moves it on its run queue's tree as the policy says.
void drm_sched_rq_pop_entity(drm_sched_entity* entity);
drm_sched_entity_stats* drm_sched_entity_stats_new();
drm_sched_entity_stats* drm_sched_entity_stats_get(drm_sched_entity_stats* stats);
void drm_sched_entity_stats_put(drm_sched_entity_stats* stats);
// Adds the job's GPU time (scheduled to finished) to its entity's stats; returns it.
ktime_t drm_sched_entity_stats_job_add_gpu_time(drm_sched_job* job);
// A ready entity whose head job fits in the credits (entity_idle re-armed), or nullptr.
drm_sched_entity* drm_sched_select_entity(drm_gpu_scheduler* sched);
bool drm_sched_can_queue(drm_gpu_scheduler* sched, drm_sched_entity* entity);

// ---- entities (sched_entity.cpp) ----
drm_sched_job* drm_sched_entity_pop_job(drm_sched_entity* entity);

inline drm_sched_job* drm_sched_entity_queue_peek(drm_sched_entity* entity) {
    return entity->job_queue.head.load(std::memory_order_acquire);
}
drm_sched_job* drm_sched_entity_queue_pop(drm_sched_entity* entity);

// ---- scheduler (sched_main.cpp) ----
void drm_sched_run_job_queue(drm_gpu_scheduler* sched);

// ---- trace helpers ----
// Async-slice id of a job: its finished fence's timeline and seqno.
inline u64 drm_sched_trace_id(const drm_sched_fence* s_fence) {
    return (s_fence->finished.context << 32) ^ s_fence->finished.seqno;
}
inline std::string drm_sched_trace_args(const drm_sched_job* job, const drm_sched_fence* s_fence) {
    return "{\"sched\":\"" + std::string(s_fence->sched ? s_fence->sched->name : "?") +
           "\",\"id\":" + std::to_string(job->id) + ",\"fence_context\":" + std::to_string(s_fence->finished.context) +
           ",\"fence_seqno\":" + std::to_string(s_fence->finished.seqno) +
           ",\"credits\":" + std::to_string(job->credits) + "}";
}

}  // namespace drm
