// Mirrors the run-queue part of drivers/gpu/drm/scheduler/sched_main.c (sched_rq.c upstream
// since the fair-policy rework): entities on run queues and the FIFO / round-robin selection.
//
// FIFO orders an rq's entities by the submit time of their oldest waiting job (a multiset, so
// equal times keep insertion order and the choice never depends on addresses); round-robin walks
// rq->entities from the entity served last. Run queues are scanned from KERNEL down to LOW and
// the first ready entity wins; if it is ready but its job does not fit in the credits, the scan
// stops there rather than letting a lower priority overtake it.
#include "drm/sched/sched_internal.h"

namespace drm {

void drm_sched_rq_init(drm_gpu_scheduler* sched, drm_sched_rq* rq) {
    rq->sched = sched;
    rq->current_entity = nullptr;
}

static void drm_sched_rq_remove_fifo_locked(drm_sched_entity* entity, drm_sched_rq* rq) {
    lockdep_assert_held(&rq->lock);
    if (entity->rb_tree_node.is_linked()) rq->rb_tree_root.erase(rq->rb_tree_root.iterator_to(*entity));
}

void drm_sched_rq_update_fifo_locked(drm_sched_entity* entity, drm_sched_rq* rq, ktime_t ts) {
    lockdep_assert_held(&entity->lock);
    lockdep_assert_held(&rq->lock);
    drm_sched_rq_remove_fifo_locked(entity, rq);
    entity->oldest_job_waiting = ts;
    rq->rb_tree_root.insert(*entity);
}

// Caller holds entity->lock and rq->lock.
void drm_sched_rq_add_entity(drm_sched_rq* rq, drm_sched_entity* entity) {
    lockdep_assert_held(&entity->lock);
    lockdep_assert_held(&rq->lock);
    if (entity->list.is_linked()) return;
    rq->sched->score->fetch_add(1, std::memory_order_relaxed);
    rq->entities.push_back(*entity);
    rq->nr_entities.store(rq->nr_entities.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// Caller holds entity->lock.
void drm_sched_rq_remove_entity(drm_sched_rq* rq, drm_sched_entity* entity) {
    lockdep_assert_held(&entity->lock);
    if (!rq || !entity->list.is_linked()) return;
    kshim::SpinGuard g(rq->lock);
    // Checked again under the rq lock: drm_sched_fini may have detached it meanwhile.
    if (!entity->list.is_linked()) return;
    rq->sched->score->fetch_sub(1, std::memory_order_relaxed);
    rq->entities.erase(rq->entities.iterator_to(*entity));
    rq->nr_entities.store(rq->nr_entities.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
    if (rq->current_entity == entity) rq->current_entity = nullptr;
    drm_sched_rq_remove_fifo_locked(entity, rq);
}

u32 drm_sched_available_credits(drm_gpu_scheduler* sched) {
    u32 used = sched->credit_count.load(std::memory_order_relaxed);
    return used >= sched->credit_limit ? 0 : sched->credit_limit - used;
}

bool drm_sched_can_queue(drm_gpu_scheduler* sched, drm_sched_entity* entity) {
    drm_sched_job* s_job = drm_sched_entity_queue_peek(entity);
    if (!s_job) return false;
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
    if (!drm_sched_can_queue(sched, entity)) return kNoCredits;
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
            if (drm_sched_entity_is_ready(&*it)) return drm_sched_pick_locked(sched, rq, &*it);
    }
    for (auto& entity : rq->entities) {
        if (drm_sched_entity_is_ready(&entity)) return drm_sched_pick_locked(sched, rq, &entity);
        if (&entity == cur) break;
    }
    return nullptr;
}

drm_sched_entity* drm_sched_rq_select_entity_fifo(drm_gpu_scheduler* sched, drm_sched_rq* rq) {
    kshim::SpinGuard g(rq->lock);
    for (auto& entity : rq->rb_tree_root)
        if (drm_sched_entity_is_ready(&entity)) return drm_sched_pick_locked(sched, rq, &entity);
    return nullptr;
}
}  // namespace

drm_sched_entity* drm_sched_select_entity(drm_gpu_scheduler* sched) {
    drm_sched_entity* entity = nullptr;
    for (u32 i = DRM_SCHED_PRIORITY_KERNEL; i < sched->num_rqs; i++) {
        // Most run queues are empty; their lock is the bulk of the cost of a selection.
        if (!sched->sched_rq[i]->nr_entities.load(std::memory_order_acquire)) continue;
        entity = sched->policy == DRM_SCHED_POLICY_FIFO ? drm_sched_rq_select_entity_fifo(sched, sched->sched_rq[i])
                                                         : drm_sched_rq_select_entity_rr(sched, sched->sched_rq[i]);
        if (entity) break;
    }
    return IS_ERR(entity) ? nullptr : entity;
}

}  // namespace drm
