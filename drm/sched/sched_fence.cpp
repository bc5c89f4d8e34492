// Mirrors drivers/gpu/drm/scheduler/sched_fence.c: the scheduled/finished fence pair of a job.
//
// Both fences live in one slab object (the kernel's sched_fence_slab) and share its lock. The
// job owns the reference to `finished`; `finished` owns the one to `scheduled`, whose release
// frees the object, so a waiter holding either fence keeps the pair alive.
#include <new>

#include "drm/sched/sched_internal.h"
#include "kernel_shim/slab.h"

namespace drm {
namespace {

kshim::KmemCache* sched_fence_slab() {
    // Created once and never destroyed, like the module's cache.
    static kshim::KmemCache* slab =
        kshim::kmem_cache_create("drm_sched_fence", sizeof(drm_sched_fence), alignof(drm_sched_fence), 0);
    return slab;
}

const char* drm_sched_fence_get_driver_name(dma_fence*) {
    return "drm_sched";
}

const char* drm_sched_fence_get_timeline_name(dma_fence* f) {
    drm_sched_fence* fence = to_drm_sched_fence(f);
    return fence && fence->sched ? fence->sched->name : "unbound";
}

void drm_sched_fence_release_scheduled(dma_fence* f) {
    drm_sched_fence* fence = to_drm_sched_fence(f);
    dma_fence_put(fence->parent.exchange(nullptr, std::memory_order_acq_rel));
    // The kernel defers this through RCU; our readers never look at a fence without a reference.
    drm_sched_fence_free(fence);
}

void drm_sched_fence_release_finished(dma_fence* f) {
    drm_sched_fence* fence = to_drm_sched_fence(f);
    dma_fence_put(&fence->scheduled);
}

void drm_sched_fence_set_deadline_finished(dma_fence* f, ktime_t deadline) {
    drm_sched_fence* fence = to_drm_sched_fence(f);
    dma_fence* parent;
    kshim::spin_lock(&fence->lock);
    // An earlier deadline than the one already recorded wins; later ones change nothing.
    if (kshim::dma_fence_test_flag(f, DRM_SCHED_FENCE_FLAG_HAS_DEADLINE_BIT) && fence->deadline <= deadline) {
        kshim::spin_unlock(&fence->lock);
        return;
    }
    fence->deadline = deadline;
    kshim::dma_fence_set_flag(f, DRM_SCHED_FENCE_FLAG_HAS_DEADLINE_BIT);
    kshim::spin_unlock(&fence->lock);
    // Once scheduled, forward it to the hardware fence.
    parent = kshim::dma_fence_get(fence->parent.load(std::memory_order_acquire));
    if (parent) {
        kshim::dma_fence_set_deadline(parent, deadline);
        dma_fence_put(parent);
    }
}

const kshim::dma_fence_ops drm_sched_fence_ops_scheduled = {
    .get_driver_name = drm_sched_fence_get_driver_name,
    .get_timeline_name = drm_sched_fence_get_timeline_name,
    .release = drm_sched_fence_release_scheduled,
};

const kshim::dma_fence_ops drm_sched_fence_ops_finished = {
    .get_driver_name = drm_sched_fence_get_driver_name,
    .get_timeline_name = drm_sched_fence_get_timeline_name,
    .release = drm_sched_fence_release_finished,
    .set_deadline = drm_sched_fence_set_deadline_finished,
};

}  // namespace

drm_sched_fence* to_drm_sched_fence(dma_fence* f) {
    if (!f)
        return nullptr;
    if (f->ops == &drm_sched_fence_ops_scheduled)
        return container_of(f, drm_sched_fence, scheduled);
    if (f->ops == &drm_sched_fence_ops_finished)
        return container_of(f, drm_sched_fence, finished);
    return nullptr;
}

drm_sched_fence* drm_sched_fence_alloc(drm_sched_entity* entity, void* owner, u64 drm_client_id) {
    auto* fence = kshim::kmem_cache_new<drm_sched_fence>(sched_fence_slab(), kshim::GFP_KERNEL);
    if (!fence)
        return nullptr;
    fence->owner = owner;
    fence->drm_client_id = drm_client_id;
    // A zero count on `finished` tells drm_sched_job_cleanup the job was never armed.
    fence->finished.refcount.refcount.store(0, std::memory_order_relaxed);
    fence->scheduled.refcount.refcount.store(0, std::memory_order_relaxed);
    return fence;
}

void drm_sched_fence_free(drm_sched_fence* fence) {
    kshim::kmem_cache_delete(sched_fence_slab(), fence);
}

void drm_sched_fence_init(drm_sched_fence* fence, drm_sched_entity* entity) {
    // atomic_inc_return on an atomic_t into an unsigned, as upstream: the sequence wraps at 32
    // bits (the int addition overflowed, undefined, after 2^31 jobs of one entity).
    const unsigned seq = static_cast<unsigned>(entity->fence_seq.fetch_add(1, std::memory_order_relaxed)) + 1u;
    fence->sched = entity->rq->sched;
    kshim::dma_fence_init(&fence->scheduled, &drm_sched_fence_ops_scheduled, &fence->lock, entity->fence_context, seq);
    kshim::dma_fence_init(&fence->finished, &drm_sched_fence_ops_finished, &fence->lock, entity->fence_context + 1,
                          seq);
}

void drm_sched_fence_scheduled(drm_sched_fence* fence, dma_fence* parent) {
    // The parent is visible before `scheduled` signals, for waiters that look it up then.
    if (!IS_ERR_OR_NULL(parent)) {
        fence->parent.store(kshim::dma_fence_get(parent), std::memory_order_release);
        if (kshim::dma_fence_test_flag(&fence->finished, DRM_SCHED_FENCE_FLAG_HAS_DEADLINE_BIT)) {
            kshim::spin_lock(&fence->lock);
            ktime_t deadline = fence->deadline;
            kshim::spin_unlock(&fence->lock);
            kshim::dma_fence_set_deadline(parent, deadline);
        }
    }
    kshim::dma_fence_signal(&fence->scheduled);
}

void drm_sched_fence_finished(drm_sched_fence* fence, int result) {
    if (result)
        kshim::dma_fence_set_error(&fence->finished, result);
    kshim::dma_fence_signal(&fence->finished);
}

}  // namespace drm
