// Mirrors the run-queue part of drivers/gpu/drm/scheduler/sched_main.c (sched_rq.c upstream
// since the fair-policy rework): entities on run queues and the FIFO / round-robin selection.
//
// FIFO orders an rq's entities by the submit time of their oldest waiting job (a multiset, so
// equal times keep insertion order and the choice never depends on addresses); round-robin walks
// rq->entities from the entity served last. Run queues are scanned from KERNEL down to LOW and
// the first ready entity wins; if it is ready but its job does not fit in the credits, the scan
// stops there rather than letting a lower priority overtake it.
#include "drm/sched/sched_internal.h"
#include "kernel_shim/slab.h"

namespace drm {

void drm_sched_rq_init(drm_gpu_scheduler* sched, drm_sched_rq* rq) {
    rq->sched = sched;
    rq->current_entity = nullptr;
}

// The FAIR policy places a re-joining entity relative to the priority at the front. The
// entity's own lock is not held for that read (lock order is entity, then rq): a priority that
// just changed is seen a moment later, which the heuristic tolerates, as upstream's does.
static void drm_sched_rq_update_prio(drm_sched_rq* rq) {
    rq->head_prio = rq->rb_tree_root.empty() ? -1 : rq->rb_tree_root.begin()->priority.load(std::memory_order_relaxed);
}

static void drm_sched_rq_remove_fifo_locked(drm_sched_entity* entity, drm_sched_rq* rq) {
    lockdep_assert_held(&rq->lock);
    if (!entity->rb_tree_node.is_linked())
        return;
    rq->rb_tree_root.erase(rq->rb_tree_root.iterator_to(*entity));
    drm_sched_rq_update_prio(rq);
}

void drm_sched_rq_update_fifo_locked(drm_sched_entity* entity, drm_sched_rq* rq, ktime_t ts) {
    lockdep_assert_held(&entity->lock);
    lockdep_assert_held(&rq->lock);
    drm_sched_rq_remove_fifo_locked(entity, rq);
    entity->oldest_job_waiting = ts;
    rq->rb_tree_root.insert(*entity);
    drm_sched_rq_update_prio(rq);
}

// ---- FAIR: virtual GPU time ----
//
// Each entity accumulates the GPU time of its finished jobs; converted to virtual time it grows
// faster the lower the priority, and the run queue serves the entity with the least virtual
// time first. Shifts as upstream: KERNEL gets about twice the GPU time of HIGH, HIGH four times
// NORMAL, NORMAL eight times LOW. An entity leaving the queue keeps its lead or lag relative to
// the front (vruntime - min) and gets it back when it re-joins.
namespace {
constexpr unsigned kVruntimeShift[DRM_SCHED_PRIORITY_COUNT] = {1, 2, 4, 7};

ktime_t drm_sched_rq_get_min_vruntime(drm_sched_rq* rq) {
    lockdep_assert_held(&rq->lock);
    if (rq->rb_tree_root.empty())
        return 0;
    drm_sched_entity_stats* stats = rq->rb_tree_root.begin()->stats;
    if (!stats)
        return 0;
    kshim::SpinGuard g(stats->lock);
    return stats->vruntime;
}

void drm_sched_entity_save_vruntime(drm_sched_entity* entity, ktime_t min_vruntime) {
    drm_sched_entity_stats* stats = entity->stats;
    kshim::SpinGuard g(stats->lock);
    stats->vruntime = min_vruntime && stats->vruntime > min_vruntime ? stats->vruntime - min_vruntime : 0;
}

ktime_t drm_sched_entity_restore_vruntime(drm_sched_entity* entity, ktime_t min_vruntime, int rq_prio) {
    drm_sched_entity_stats* stats = entity->stats;
    drm_gpu_scheduler* sched = entity->rq->sched;
    const int prio = entity->priority.load(std::memory_order_relaxed);
    kshim::SpinGuard g(stats->lock);
    ktime_t vruntime = stats->vruntime;
    // An entity with no saved lead or lag re-joins next to the front: behind it if its priority
    // is lower (by an amount that grows with the typical job length, so it does not overtake),
    // just ahead if higher, and at equal priority ahead only if its jobs are the shorter ones.
    if (!vruntime && rq_prio >= 0) {
        const unsigned long avg_us = stats->avg_job_us.read();
        const unsigned long sched_avg_us = sched->avg_job_us.read();
        if (prio > rq_prio)
            vruntime = static_cast<ktime_t>((1 + avg_us + sched_avg_us) << kVruntimeShift[prio]) * 1000;
        else if (prio < rq_prio)
            vruntime = -static_cast<ktime_t>(rq_prio - prio);
        else
            vruntime = avg_us <= sched_avg_us ? -1 : 1;
    }
    vruntime += min_vruntime;
    stats->vruntime = vruntime;
    return vruntime;
}

// Folds the GPU time finished since the last update into the virtual runtime.
ktime_t drm_sched_entity_update_vruntime(drm_sched_entity* entity) {
    drm_sched_entity_stats* stats = entity->stats;
    kshim::SpinGuard g(stats->lock);
    const ktime_t delta = stats->runtime - stats->prev_runtime;
    stats->prev_runtime = stats->runtime;
    stats->vruntime += delta << kVruntimeShift[entity->priority.load(std::memory_order_relaxed)];
    return stats->vruntime;
}
}  // namespace

void drm_sched_rq_fair_add_locked(drm_sched_entity* entity, drm_sched_rq* rq) {
    lockdep_assert_held(&entity->lock);
    lockdep_assert_held(&rq->lock);
    ktime_t ts = 0;
    if (entity->stats)
        ts = drm_sched_entity_restore_vruntime(entity, drm_sched_rq_get_min_vruntime(rq), rq->head_prio);
    drm_sched_rq_update_fifo_locked(entity, rq, ts);
}

void drm_sched_rq_pop_entity(drm_sched_entity* entity) {
    const int policy = entity->rq->sched->policy;
    // FIFO moves an entity only while it still has jobs (an empty one is never ready anyway).
    if (policy == DRM_SCHED_POLICY_RR || (policy == DRM_SCHED_POLICY_FIFO && !drm_sched_entity_queue_peek(entity)))
        return;
    kshim::SpinGuard ge(entity->lock);
    drm_sched_rq* rq = entity->rq;
    kshim::SpinGuard gr(rq->lock);
    // The entity may have been taken off the queue by kill; do not put it back.
    if (!entity->list.is_linked())
        return;
    // Peeked again under the locks: a push that refills the queue right now puts the entity
    // back on the tree under them too, and must not be undone by a stale "empty".
    drm_sched_job* next = drm_sched_entity_queue_peek(entity);
    if (policy == DRM_SCHED_POLICY_FIFO) {
        if (next)
            drm_sched_rq_update_fifo_locked(entity, rq, next->submit_ts);
    } else if (next) {
        drm_sched_rq_update_fifo_locked(entity, rq, entity->stats ? drm_sched_entity_update_vruntime(entity) : 0);
    } else {
        // FAIR: off the tree while it has nothing to run; it keeps its place relative to the front.
        drm_sched_rq_remove_fifo_locked(entity, rq);
        if (entity->stats)
            drm_sched_entity_save_vruntime(entity, drm_sched_rq_get_min_vruntime(rq));
    }
}

drm_sched_entity_stats* drm_sched_entity_stats_new() {
    auto* stats = kshim::knew<drm_sched_entity_stats>(kshim::GFP_KERNEL);
    if (stats)
        kshim::kref_init(&stats->refcount);
    return stats;
}

drm_sched_entity_stats* drm_sched_entity_stats_get(drm_sched_entity_stats* stats) {
    kshim::kref_get(&stats->refcount);
    return stats;
}

void drm_sched_entity_stats_put(drm_sched_entity_stats* stats) {
    kshim::kref_put(&stats->refcount,
                    [](kshim::kref* k) { kshim::kdelete(container_of(k, drm_sched_entity_stats, refcount)); });
}

ktime_t drm_sched_entity_stats_job_add_gpu_time(drm_sched_job* job) {
    drm_sched_entity_stats* stats = job->entity_stats;
    const ktime_t start = kshim::dma_fence_timestamp(&job->s_fence->scheduled);
    const ktime_t end = kshim::dma_fence_timestamp(&job->s_fence->finished);
    const ktime_t duration = end > start ? end - start : 0;
    kshim::SpinGuard g(stats->lock);
    stats->runtime += duration;
    stats->avg_job_us.add(static_cast<unsigned long>(duration / 1000));
    return duration;
}

// Caller holds entity->lock and rq->lock.
void drm_sched_rq_add_entity(drm_sched_rq* rq, drm_sched_entity* entity) {
    lockdep_assert_held(&entity->lock);
    lockdep_assert_held(&rq->lock);
    if (entity->list.is_linked())
        return;
    drm_sched_score_inc(rq->sched);
    rq->entities.push_back(*entity);
    rq->nr_entities.store(rq->nr_entities.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// Caller holds entity->lock.
void drm_sched_rq_remove_entity(drm_sched_rq* rq, drm_sched_entity* entity) {
    lockdep_assert_held(&entity->lock);
    if (!rq || !entity->list.is_linked())
        return;
    kshim::SpinGuard g(rq->lock);
    // Checked again under the rq lock: drm_sched_fini may have detached it meanwhile.
    if (!entity->list.is_linked())
        return;
    drm_sched_score_dec(rq->sched);
    rq->entities.erase(rq->entities.iterator_to(*entity));
    rq->nr_entities.store(rq->nr_entities.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    if (rq->current_entity == entity)
        rq->current_entity = nullptr;
    drm_sched_rq_remove_fifo_locked(entity, rq);
}

u32 drm_sched_available_credits(drm_gpu_scheduler* sched) {
    u32 used = sched->credit_count.load(std::memory_order_relaxed);
    return used >= sched->credit_limit ? 0 : sched->credit_limit - used;
}

bool drm_sched_can_queue(drm_gpu_scheduler* sched, drm_sched_entity* entity) {
    drm_sched_job* s_job = drm_sched_entity_queue_peek(entity);
    if (!s_job)
        return false;
    // A job larger than the whole ring could never run: clamp it so the queue makes progress.
    if (s_job->credits > sched->credit_limit) {
        WARN(true, "%s: Jobs may not exceed the credit limit, truncate.", sched->name);
        s_job->credits = sched->credit_limit;
    }
    return drm_sched_available_credits(sched) >= s_job->credits;
}

namespace {
// nullptr: nothing ready here; kNoCredits: ready but blocked on credits (stop scanning).
drm_sched_entity* const kNoCredits = ERR_PTR<drm_sched_entity>(-ENOSPC);

drm_sched_entity* drm_sched_pick_locked(drm_gpu_scheduler* sched, drm_sched_rq* rq, drm_sched_entity* entity) {
    if (!drm_sched_can_queue(sched, entity))
        return kNoCredits;
    rq->current_entity = entity;
    kshim::reinit_completion(&entity->entity_idle);
    return entity;
}

drm_sched_entity* drm_sched_rq_select_entity_rr(drm_gpu_scheduler* sched, drm_sched_rq* rq) {
    kshim::SpinGuard g(rq->lock);
    drm_sched_entity* cur = rq->current_entity;
    if (cur) {
        // Those after the last one served first, then from the start up to it.
        for (auto it = std::next(rq->entities.iterator_to(*cur)); it != rq->entities.end(); ++it)
            if (drm_sched_entity_is_ready(&*it))
                return drm_sched_pick_locked(sched, rq, &*it);
    }
    for (auto& entity : rq->entities) {
        if (drm_sched_entity_is_ready(&entity))
            return drm_sched_pick_locked(sched, rq, &entity);
        if (&entity == cur)
            break;
    }
    return nullptr;
}

drm_sched_entity* drm_sched_rq_select_entity_fifo(drm_gpu_scheduler* sched, drm_sched_rq* rq) {
    kshim::SpinGuard g(rq->lock);
    for (auto& entity : rq->rb_tree_root)
        if (drm_sched_entity_is_ready(&entity))
            return drm_sched_pick_locked(sched, rq, &entity);
    return nullptr;
}
}  // namespace

drm_sched_entity* drm_sched_select_entity(drm_gpu_scheduler* sched) {
    drm_sched_entity* entity = nullptr;
    for (u32 i = DRM_SCHED_PRIORITY_KERNEL; i < sched->num_rqs; i++) {
        // Most run queues are empty; their lock is the bulk of the cost of a selection.
        if (!sched->sched_rq[i]->nr_entities.load(std::memory_order_acquire))
            continue;
        // FAIR keys the same tree by virtual runtime instead of submit time.
        entity = sched->policy == DRM_SCHED_POLICY_RR ? drm_sched_rq_select_entity_rr(sched, sched->sched_rq[i])
                                                      : drm_sched_rq_select_entity_fifo(sched, sched->sched_rq[i]);
        if (entity)
            break;
    }
    return IS_ERR(entity) ? nullptr : entity;
}

}  // namespace drm
