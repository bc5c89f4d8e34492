// Mirrors the queue and job half of drivers/gpu/drm/panthor/panthor_sched.c: queue creation, the
// per-job ring-buffer sequence (prepare_job_instrs), run_job / timedout_job, the queue timeout
// that only runs while the queue can make progress, and job completion.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/slab.h"
#include "panthor/panthor_devfreq.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched_priv.h"

namespace panthor {

using kshim::dma_fence;
using kshim::GFP_KERNEL;
using kshim::MutexGuard;
using kshim::SpinGuard;

// ---- sync-wait object ---------------------------------------------------------------------------

int panthor_syncwait_map_create(panthor_vm* vm, u64 gpu_va, panthor_syncwait_map* out) {
    panthor_gem_object* bo = panthor_vm_get_bo_for_va(vm, gpu_va, &out->offset);
    if (IS_ERR_OR_NULL(bo))
        return bo ? static_cast<int>(PTR_ERR(bo)) : -EINVAL;
    out->obj = &bo->base.base;
    drm::IosysMap map;
    const int ret = drm::drm_gem_vmap(out->obj, &map);
    if (ret || !map.vaddr) {
        drm::drm_gem_object_put(out->obj);
        *out = {};
        return ret ? ret : -ENOMEM;
    }
    out->kmap = map.vaddr;
    return 0;
}

void panthor_syncwait_map_release(panthor_syncwait_map* m) {
    if (m->kmap) {
        drm::IosysMap map;
        map.vaddr = m->kmap;
        drm::drm_gem_vunmap(m->obj, &map);
    }
    if (m->obj)
        drm::drm_gem_object_put(m->obj);
    *m = {};
}

void panthor_queue_swap_syncwait_map(panthor_queue* queue, u64 gpu_va, panthor_syncwait_map* m) {
    panthor_syncwait_map old{queue->syncwait.obj, queue->syncwait.kmap, queue->syncwait.offset};
    queue->syncwait.obj = m->obj;
    queue->syncwait.kmap = m->kmap;
    queue->syncwait.offset = m->offset;
    queue->syncwait.mapped_va = m->kmap ? gpu_va : 0;
    *m = old;
}

void panthor_queue_put_syncwait_obj(panthor_queue* queue) {
    panthor_syncwait_map none;
    panthor_queue_swap_syncwait_map(queue, 0, &none);
    panthor_syncwait_map_release(&none);
}

void* panthor_queue_get_syncwait_obj(panthor_group*, panthor_queue* queue) {
    if (!queue->syncwait.kmap || queue->syncwait.mapped_va != queue->syncwait.gpu_va)
        return nullptr;
    // A write-back mapped BO (1.7) may hold a stale seqno in the CPU caches (no-op when WC).
    panthor_gem_sync(queue->syncwait.obj, DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE, queue->syncwait.offset,
                     queue->syncwait.sync64 ? sizeof(panthor_syncobj_64b) : sizeof(panthor_syncobj_32b));
    return static_cast<u8*>(queue->syncwait.kmap) + queue->syncwait.offset;
}

// ---- queue timeout ------------------------------------------------------------------------------
// drm_sched's own timeout is disabled (MAX_SCHEDULE_TIMEOUT); the queue's timer runs only while
// the queue is on a slot with work, and is suspended (keeping what was left) while its group is
// off slot, so that time spent waiting for a slot is not charged to the job.

namespace {

bool queue_timeout_is_suspended(const panthor_queue* queue) {
    return queue->timeout.remaining != static_cast<unsigned long>(kshim::MAX_SCHEDULE_TIMEOUT);
}

void queue_arm_timeout_locked(panthor_queue* queue, unsigned long delay) {
    queue->timeout.expires = jiffies + delay;
    kshim::mod_delayed_work(queue->scheduler.timeout_wq, &queue->timeout.work, delay);
}

void queue_reset_timeout_locked(panthor_queue* queue) {
    lockdep_assert_held(&queue->fence_ctx.lock);
    if (!queue_timeout_is_suspended(queue))
        queue_arm_timeout_locked(queue, kshim::msecs_to_jiffies(JOB_TIMEOUT_MS));
}

void queue_suspend_timeout_locked(panthor_queue* queue) {
    lockdep_assert_held(&queue->fence_ctx.lock);
    if (queue_timeout_is_suspended(queue))
        return;

    panthor_job* job = queue->fence_ctx.in_flight_jobs.empty() ? nullptr : &queue->fence_ctx.in_flight_jobs.front();
    panthor_group* group = job ? job->group : nullptr;

    // A blocked queue of an idle group can only be released from outside: keep timing that wait.
    if (group && group_can_run(group) && (group->blocked_queues & (1u << job->queue_idx)) && group_is_idle(group))
        return;

    const unsigned long now = jiffies;
    const unsigned long qtimeout = queue->timeout.expires;
    const bool timer_was_active = kshim::cancel_delayed_work(&queue->timeout.work);
    if (!timer_was_active || !job)
        queue->timeout.remaining = kshim::msecs_to_jiffies(JOB_TIMEOUT_MS);
    else if (kshim::time_after(qtimeout, now))
        queue->timeout.remaining = qtimeout - now;
    else
        queue->timeout.remaining = 0;

    if (WARN_ON(queue->timeout.remaining > kshim::msecs_to_jiffies(JOB_TIMEOUT_MS)))
        queue->timeout.remaining = kshim::msecs_to_jiffies(JOB_TIMEOUT_MS);
}

}  // namespace

void queue_suspend_timeout(panthor_queue* queue) {
    SpinGuard g(queue->fence_ctx.lock);
    queue_suspend_timeout_locked(queue);
}

void queue_resume_timeout(panthor_queue* queue) {
    SpinGuard g(queue->fence_ctx.lock);
    if (queue_timeout_is_suspended(queue)) {
        queue_arm_timeout_locked(queue, queue->timeout.remaining);
        queue->timeout.remaining = static_cast<unsigned long>(kshim::MAX_SCHEDULE_TIMEOUT);
    }
}

void queue_stop(panthor_queue* queue, panthor_job* bad_job) {
    kshim::disable_delayed_work_sync(&queue->timeout.work);
    drm::drm_sched_stop(&queue->scheduler, bad_job ? &bad_job->base : nullptr);
}

void queue_start(panthor_queue* queue) {
    // The hardware fences of the jobs still pending are the done fences.
    {
        SpinGuard g(queue->scheduler.job_list_lock);
        for (drm::drm_sched_job& j : queue->scheduler.pending_list) {
            panthor_job* job = to_panthor_job(&j);
            dma_fence* old = j.s_fence->parent.exchange(kshim::dma_fence_get(job->done_fence));
            kshim::dma_fence_put(old);
        }
    }
    kshim::enable_delayed_work(&queue->timeout.work);
    // Deviation from upstream: queue_stop's disable_delayed_work_sync() dropped a pending timeout
    // (a blocked queue of an idle group keeps its timer running off-slot), and nothing re-arms a
    // timer that was not suspended, so such a queue would never time out after a reset (the fault
    // campaign's job_timeout x during_reset). A queue with jobs in flight gets a fresh timeout.
    {
        SpinGuard g(queue->fence_ctx.lock);
        if (!queue->fence_ctx.in_flight_jobs.empty() && !queue_timeout_is_suspended(queue))
            queue_reset_timeout_locked(queue);
    }
    drm::drm_sched_start(&queue->scheduler, 0);
}

// ---- job completion -----------------------------------------------------------------------------

namespace {

void update_fdinfo_stats(panthor_job* job) {
    panthor_group* group = job->group;
    panthor_queue* queue = group->queues[job->queue_idx];
    const auto* slots = static_cast<const panthor_job_profiling_data*>(queue->profiling.slots->kmap);
    const panthor_job_profiling_data& data = slots[job->profiling.slot];

    SpinGuard g(group->fdinfo.lock);
    if (job->profiling.mask & PANTHOR_DEVICE_PROFILING_CYCLES)
        group->fdinfo.data.cycles += fw_read_once(data.cycles.after) - fw_read_once(data.cycles.before);
    if (job->profiling.mask & PANTHOR_DEVICE_PROFILING_TIMESTAMP)
        group->fdinfo.data.time += fw_read_once(data.time.after) - fw_read_once(data.time.before);
}

}  // namespace

bool queue_check_job_completion(panthor_queue* queue) {
    const panthor_syncobj_64b* syncobj = nullptr;
    panthor_job_list done_jobs;
    bool progress = false;

    const bool cookie = kshim::dma_fence_begin_signalling();
    {
        SpinGuard g(queue->fence_ctx.lock);
        while (!queue->fence_ctx.in_flight_jobs.empty()) {
            panthor_job& job = queue->fence_ctx.in_flight_jobs.front();
            if (!syncobj)
                syncobj = static_cast<const panthor_syncobj_64b*>(job.group->syncobjs->kmap) + job.queue_idx;
            if (fw_read_once(syncobj->seqno) < job.done_fence->seqno)
                break;
            list_move_tail(job, job.node, done_jobs);
            kshim::dma_fence_signal_locked(job.done_fence);
        }

        if (queue->fence_ctx.in_flight_jobs.empty()) {
            // Nothing left: stop the timer (restarted by the next job) and count it as progress,
            // in case the timeout work raced with this update.
            queue_suspend_timeout_locked(queue);
            progress = true;
        } else if (!done_jobs.empty()) {
            queue_reset_timeout_locked(queue);
            progress = true;
        }
    }
    kshim::dma_fence_end_signalling(cookie);

    while (!done_jobs.empty()) {
        panthor_job& job = done_jobs.front();
        if (job.profiling.mask)
            update_fdinfo_stats(&job);
        list_del_init(job.node);
        panthor_job_put(&job.base);
    }
    return progress;
}

void group_sync_upd_work(kshim::work_struct* work) {
    panthor_group* group = container_of(work, panthor_group, sync_upd_work);

    const bool cookie = kshim::dma_fence_begin_signalling();
    for (u32 i = 0; i < group->queue_count; i++) {
        if (group->queues[i])
            queue_check_job_completion(group->queues[i]);
    }
    kshim::dma_fence_end_signalling(cookie);
    group_put(group);
}

// ---- the ring-buffer sequence -------------------------------------------------------------------

namespace {

struct panthor_job_ringbuf_instrs {
    u64 buffer[MAX_INSTRS_PER_JOB] = {};
    u32 count = 0;
};
static_assert(sizeof(panthor_job_ringbuf_instrs::buffer) % 64 == 0);

struct panthor_job_instr {
    u32 profile_mask;  // 0: always emitted
    u64 instr;
};

struct panthor_job_cs_params {
    u32 profile_mask = 0;
    u64 addr_reg = 0, val_reg = 0;
    u64 cycle_reg = 0, time_reg = 0;
    u64 sync_addr = 0, times_addr = 0;
    u64 cs_start = 0, cs_size = 0;
    u32 last_flush = 0, waitall_mask = 0;
};

void get_job_cs_params(panthor_job* job, panthor_job_cs_params* params) {
    panthor_group* group = job->group;
    panthor_queue* queue = group->queues[job->queue_idx];
    panthor_device* ptdev = group->ptdev;

    params->addr_reg = ptdev->csif_info.cs_reg_count - ptdev->csif_info.unpreserved_cs_reg_count;
    params->val_reg = params->addr_reg + 2;
    params->cycle_reg = params->addr_reg;
    params->time_reg = params->val_reg;
    params->sync_addr = panthor_kernel_bo_gpuva(group->syncobjs) + job->queue_idx * sizeof(panthor_syncobj_64b);
    params->times_addr =
        panthor_kernel_bo_gpuva(queue->profiling.slots) + job->profiling.slot * sizeof(panthor_job_profiling_data);
    params->waitall_mask = genmask_low(ptdev->scheduler->sb_slot_count);
    params->cs_start = job->call_info.start;
    params->cs_size = job->call_info.size;
    params->last_flush = job->call_info.latest_flush;
    params->profile_mask = job->profiling.mask;
}

// docs/hw/csf/cs-isa.md, panthor's per-job sequence: the encodings are written out as the kernel
// does (not through cs_isa.h), so that the two implementations check each other through the mock's
// decoder.
void prepare_job_instrs(const panthor_job_cs_params* p, panthor_job_ringbuf_instrs* instrs) {
    constexpr u32 ALWAYS = PANTHOR_DEVICE_PROFILING_DISABLED;
    constexpr u32 CYCLES = PANTHOR_DEVICE_PROFILING_CYCLES;
    constexpr u32 TIMESTAMP = PANTHOR_DEVICE_PROFILING_TIMESTAMP;
    const panthor_job_instr instr_seq[] = {
        // MOVE32 rV, latest_flush
        {ALWAYS, (2ull << 56) | (p->val_reg << 48) | p->last_flush},
        // FLUSH_CACHE2 clean+inv all, flush id in rV, no wait, signal slot 0
        {ALWAYS, (36ull << 56) | (0ull << 48) | (p->val_reg << 40) | (0 << 16) | 0x233},
        // MOVE48 dA, cycles.before; STORE_STATE cycles
        {CYCLES,
         (1ull << 56) | (p->cycle_reg << 48) | (p->times_addr + offsetof(panthor_job_profiling_data, cycles.before))},
        {CYCLES, (40ull << 56) | (p->cycle_reg << 40) | (1ull << 32)},
        // MOVE48 dV, time.before; STORE_STATE timestamp
        {TIMESTAMP,
         (1ull << 56) | (p->time_reg << 48) | (p->times_addr + offsetof(panthor_job_profiling_data, time.before))},
        {TIMESTAMP, (40ull << 56) | (p->time_reg << 40) | (0ull << 32)},
        // MOVE48 dA, stream; MOVE32 rV, size; WAIT(SB 0: the flush); CALL dA, rV
        {ALWAYS, (1ull << 56) | (p->addr_reg << 48) | p->cs_start},
        {ALWAYS, (2ull << 56) | (p->val_reg << 48) | p->cs_size},
        {ALWAYS, (3ull << 56) | (1 << 16)},
        {ALWAYS, (32ull << 56) | (p->addr_reg << 40) | (p->val_reg << 32)},
        // cycles.after, time.after
        {CYCLES,
         (1ull << 56) | (p->cycle_reg << 48) | (p->times_addr + offsetof(panthor_job_profiling_data, cycles.after))},
        {CYCLES, (40ull << 56) | (p->cycle_reg << 40) | (1ull << 32)},
        {TIMESTAMP,
         (1ull << 56) | (p->time_reg << 48) | (p->times_addr + offsetof(panthor_job_profiling_data, time.after))},
        {TIMESTAMP, (40ull << 56) | (p->time_reg << 40) | (0ull << 32)},
        // MOVE48 dA, syncobj; MOVE48 dV, 1; WAIT(all); SYNC_ADD64 system scope, propagate errors
        {ALWAYS, (1ull << 56) | (p->addr_reg << 48) | p->sync_addr},
        {ALWAYS, (1ull << 56) | (p->val_reg << 48) | 1},
        {ALWAYS, (3ull << 56) | (u64{p->waitall_mask} << 16)},
        {ALWAYS, (51ull << 56) | (0ull << 48) | (p->addr_reg << 40) | (p->val_reg << 32) | (0 << 16) | 1},
        // ERROR_BARRIER: a fault does not leak into the next job.
        {ALWAYS, 47ull << 56},
    };
    static_assert((std::size(instr_seq) + NUM_INSTRS_PER_CACHE_LINE - 1) / NUM_INSTRS_PER_CACHE_LINE *
                      NUM_INSTRS_PER_CACHE_LINE ==
                  MAX_INSTRS_PER_JOB);

    instrs->count = 0;
    for (const panthor_job_instr& in : instr_seq) {
        if (in.profile_mask && !(in.profile_mask & p->profile_mask))
            continue;
        instrs->buffer[instrs->count++] = in.instr;
    }
    // Whole cache lines, for the prefetcher.
    const u32 pad =
        (instrs->count + NUM_INSTRS_PER_CACHE_LINE - 1) / NUM_INSTRS_PER_CACHE_LINE * NUM_INSTRS_PER_CACHE_LINE;
    std::fill(instrs->buffer + instrs->count, instrs->buffer + pad, 0);
    instrs->count = pad;
}

void copy_instrs_to_ringbuf(panthor_queue* queue, panthor_job* job, panthor_job_ringbuf_instrs* instrs) {
    const u64 ringbuf_size = panthor_kernel_bo_size(queue->ringbuf);
    const u64 start = job->ringbuf.start & (ringbuf_size - 1);
    const u64 size = instrs->count * sizeof(u64);
    WARN_ON(size > ringbuf_size);
    const u64 written = std::min(ringbuf_size - start, size);

    auto* ring = static_cast<u8*>(queue->ringbuf->kmap);
    std::memcpy(ring + start, instrs->buffer, written);
    if (written < size)
        std::memcpy(ring, &instrs->buffer[written / sizeof(u64)], size - written);
}

const char* fence_get_driver_name(dma_fence*) {
    return "panthor";
}
const char* queue_fence_get_timeline_name(dma_fence*) {
    return "queue-fence";
}

const kshim::dma_fence_ops panthor_queue_fence_ops = {
    .use_64bit_seqno = true,
    .get_driver_name = fence_get_driver_name,
    .get_timeline_name = queue_fence_get_timeline_name,
};

}  // namespace

u32 calc_job_credits(u32 profile_mask) {
    panthor_job_ringbuf_instrs instrs;
    panthor_job_cs_params params;
    params.profile_mask = profile_mask;
    prepare_job_instrs(&params, &instrs);
    return instrs.count;
}

namespace {

dma_fence* queue_run_job(drm::drm_sched_job* sched_job) {
    panthor_job* job = to_panthor_job(sched_job);
    panthor_group* group = job->group;
    panthor_queue* queue = group->queues[job->queue_idx];
    panthor_device* ptdev = group->ptdev;
    panthor_scheduler* sched = ptdev->scheduler;
    dma_fence* done_fence;

    // Empty stream: done when every job before it is, which the last fence says.
    // (No last fence yet: null, which drm_sched takes as done.)
    if (!job->call_info.size) {
        MutexGuard g(sched->lock);
        job->done_fence = kshim::dma_fence_get(queue->fence_ctx.last_fence);
        return kshim::dma_fence_get(job->done_fence);
    }

    const int ret = panthor_device_resume_and_get(ptdev);
    if (WARN_ON(ret))
        return kshim::ERR_PTR<dma_fence>(ret);

    {
        MutexGuard g(sched->lock);
        if (!group_can_run(group)) {
            done_fence = kshim::ERR_PTR<dma_fence>(-ECANCELED);
        } else {
            kshim::dma_fence_init(job->done_fence, &panthor_queue_fence_ops, &queue->fence_ctx.lock,
                                  queue->fence_ctx.id, ++queue->fence_ctx.seqno);
            job->done_fence_initialized = true;

            job->profiling.slot = queue->profiling.seqno++;
            if (queue->profiling.seqno == queue->profiling.slot_count)
                queue->profiling.seqno = 0;

            job->ringbuf.start = fw_read_once(queue->iface.input->insert);

            panthor_job_cs_params cs_params;
            panthor_job_ringbuf_instrs instrs;
            get_job_cs_params(job, &cs_params);
            prepare_job_instrs(&cs_params, &instrs);
            copy_instrs_to_ringbuf(queue, job, &instrs);
            job->ringbuf.end = job->ringbuf.start + instrs.count * sizeof(u64);

            panthor_job_get(&job->base);
            {
                SpinGuard fg(queue->fence_ctx.lock);
                queue->fence_ctx.in_flight_jobs.push_back(*job);
            }

            fw_write_once(queue->iface.input->extract, fw_read_once(queue->iface.output->extract));
            // A release store (the kernel's wmb() before WRITE_ONCE): the FW reads the ring once it
            // sees INSERT move, so the contents above must be visible first. (A fence plus a
            // relaxed store orders the same, but TSan does not model fences.)
            std::atomic_ref<u64>(queue->iface.input->insert).store(job->ringbuf.end, std::memory_order_release);

            if (group->csg_id < 0) {
                group_schedule_locked(group, 1u << job->queue_idx);
            } else {
                const u32 queue_mask = 1u << job->queue_idx;
                const bool resume_tick = group_is_idle(group) && (group->idle_queues & queue_mask) &&
                                         !(group->blocked_queues & queue_mask) && sched->resched_target == U64_MAX;

                // It has work now.
                group->idle_queues &= ~queue_mask;
                if (resume_tick)
                    sched_resume_tick(ptdev);

                panthor_fw_ring_doorbell(ptdev, queue->doorbell_id);
                if (!sched->pm.has_ref && !(group->blocked_queues & queue_mask)) {
                    // The device is resumed (resume_and_get above): upstream's async get.
                    kshim::pm_runtime_get_noresume(ptdev->dev);
                    sched->pm.has_ref = true;
                }
                queue_resume_timeout(queue);
                panthor_devfreq_record_busy(ptdev);
            }

            kshim::dma_fence_put(queue->fence_ctx.last_fence);
            queue->fence_ctx.last_fence = kshim::dma_fence_get(job->done_fence);
            done_fence = kshim::dma_fence_get(job->done_fence);
        }
    }
    kshim::pm_runtime_mark_last_busy(ptdev->dev);
    kshim::pm_runtime_put_autosuspend(ptdev->dev);
    return done_fence;
}

drm::drm_gpu_sched_stat queue_timedout_job(drm::drm_sched_job* sched_job) {
    panthor_job* job = to_panthor_job(sched_job);
    panthor_group* group = job->group;
    panthor_device* ptdev = group->ptdev;
    panthor_scheduler* sched = ptdev->scheduler;
    panthor_queue* queue = group->queues[job->queue_idx];

    dev_warn(ptdev->dev, "job timeout: pid=%d, comm=%s, seqno=%llu", group->task_info.pid, group->task_info.comm,
             static_cast<unsigned long long>(job->done_fence_initialized ? job->done_fence->seqno : 0));

    WARN_ON(sched->reset.in_progress.load());

    queue_stop(queue, job);

    {
        MutexGuard g(sched->lock);
        group->timedout = true;
        if (group->csg_id >= 0) {
            sched_queue_tick(sched, 0);
        } else {
            // Off the run queues, so that no tick picks it.
            list_del_init(group->run_node);
            list_del_init(group->wait_node);
            group_queue_work(group, &group->term_work);
        }
    }

    queue_start(queue);
    return drm::DRM_GPU_SCHED_STAT_RESET;
}

void queue_free_job(drm::drm_sched_job* sched_job) {
    panthor_job_put(sched_job);
}

const drm::drm_sched_backend_ops panthor_queue_sched_ops = {
    .run_job = queue_run_job,
    .timedout_job = queue_timedout_job,
    .free_job = queue_free_job,
};

// How many profiled jobs the ring can hold at once: sized for the shortest profiled sequence.
u32 calc_profiling_ringbuf_num_slots(u32 cs_ringbuf_size) {
    u32 min_profiled_job_instrs = ~0u;
    for (u32 bit = PANTHOR_DEVICE_PROFILING_CYCLES; bit <= PANTHOR_DEVICE_PROFILING_TIMESTAMP; bit <<= 1)
        min_profiled_job_instrs = std::min(min_profiled_job_instrs, calc_job_credits(bit));
    const u32 per_job = min_profiled_job_instrs * sizeof(u64);
    return (cs_ringbuf_size + per_job - 1) / per_job;
}

void queue_timeout_work(kshim::work_struct* work) {
    panthor_queue* queue = container_of(kshim::to_delayed_work(work), panthor_queue, timeout.work);
    if (!queue_check_job_completion(queue))
        drm::drm_sched_fault(&queue->scheduler);
}

}  // namespace

void group_free_queue(panthor_group* group, panthor_queue* queue) {
    (void)group;
    if (IS_ERR_OR_NULL(queue))
        return;

    // The timeout must not fire into a half-torn-down drm_sched.
    kshim::disable_delayed_work_sync(&queue->timeout.work);

    if (queue->entity.fence_context)
        drm::drm_sched_entity_destroy(&queue->entity);
    if (queue->scheduler.ops)
        drm::drm_sched_fini(&queue->scheduler);

    kshim::kfree(queue->name);
    panthor_queue_put_syncwait_obj(queue);
    panthor_kernel_bo_destroy(queue->ringbuf);
    panthor_kernel_bo_destroy(queue->iface.mem);
    panthor_kernel_bo_destroy(queue->profiling.slots);
    kshim::dma_fence_put(queue->fence_ctx.last_fence);
    kshim::kdelete(queue);
}

panthor_queue* group_create_queue(panthor_group* group, const drm_panthor_queue_create* args, u64 drm_client_id,
                                  u32 gid, u32 qid) {
    panthor_device* ptdev = group->ptdev;
    int ret;

    if (args->pad[0] || args->pad[1] || args->pad[2])
        return kshim::ERR_PTR<panthor_queue>(-EINVAL);
    if (args->ringbuf_size < 4096 || args->ringbuf_size > 65536 || (args->ringbuf_size & (args->ringbuf_size - 1)))
        return kshim::ERR_PTR<panthor_queue>(-EINVAL);
    if (args->priority > CSF_MAX_QUEUE_PRIO)
        return kshim::ERR_PTR<panthor_queue>(-EINVAL);

    auto* queue = kshim::knew<panthor_queue>(GFP_KERNEL);
    if (!queue)
        return kshim::ERR_PTR<panthor_queue>(-ENOMEM);

    queue->timeout.remaining = kshim::msecs_to_jiffies(JOB_TIMEOUT_MS);
    INIT_DELAYED_WORK(&queue->timeout.work, queue_timeout_work);
    queue->fence_ctx.id = kshim::dma_fence_context_alloc(1);
    queue->priority = args->priority;

    queue->ringbuf = panthor_kernel_bo_create(ptdev, group->vm, args->ringbuf_size, DRM_PANTHOR_BO_NO_MMAP,
                                              DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC | DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED,
                                              PANTHOR_VM_KERNEL_AUTO_VA, "CS ring buffer");
    if (IS_ERR(queue->ringbuf)) {
        ret = static_cast<int>(PTR_ERR(queue->ringbuf));
        goto err_free_queue;
    }
    ret = panthor_kernel_bo_vmap(queue->ringbuf);
    if (ret)
        goto err_free_queue;

    queue->iface.mem = panthor_fw_alloc_queue_iface_mem(ptdev, &queue->iface.input, &queue->iface.output,
                                                        &queue->iface.input_fw_va, &queue->iface.output_fw_va);
    if (IS_ERR(queue->iface.mem)) {
        ret = static_cast<int>(PTR_ERR(queue->iface.mem));
        goto err_free_queue;
    }

    queue->profiling.slot_count = calc_profiling_ringbuf_num_slots(args->ringbuf_size);
    queue->profiling.slots = panthor_kernel_bo_create(
        ptdev, group->vm, queue->profiling.slot_count * sizeof(panthor_job_profiling_data), DRM_PANTHOR_BO_NO_MMAP,
        DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC | DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED, PANTHOR_VM_KERNEL_AUTO_VA,
        "Group job stats");
    if (IS_ERR(queue->profiling.slots)) {
        ret = static_cast<int>(PTR_ERR(queue->profiling.slots));
        goto err_free_queue;
    }
    ret = panthor_kernel_bo_vmap(queue->profiling.slots);
    if (ret)
        goto err_free_queue;

    {
        char name[64];
        std::snprintf(name, sizeof(name), "panthor-queue-%llu-%u-%u", static_cast<unsigned long long>(drm_client_id),
                      gid, qid);
        queue->name = static_cast<char*>(kshim::kmalloc(std::strlen(name) + 1, GFP_KERNEL));
        if (!queue->name) {
            ret = -ENOMEM;
            goto err_free_queue;
        }
        std::memcpy(queue->name, name, std::strlen(name) + 1);
    }

    {
        drm::drm_sched_init_args sched_args;
        sched_args.ops = &panthor_queue_sched_ops;
        sched_args.submit_wq = ptdev->scheduler->wq;
        // Credits are ring-buffer instructions; a job takes 16 or 24 of them.
        sched_args.credit_limit = args->ringbuf_size / sizeof(u64);
        sched_args.timeout = kshim::MAX_SCHEDULE_TIMEOUT;
        sched_args.timeout_wq = ptdev->reset.wq;
        sched_args.name = queue->name;
        sched_args.dev = ptdev->dev;
        ret = drm::drm_sched_init(&queue->scheduler, &sched_args);
        if (ret)
            goto err_free_queue;
    }

    {
        queue->sched_list[0] = &queue->scheduler;
        ret = drm::drm_sched_entity_init(&queue->entity, drm::DRM_SCHED_PRIORITY_KERNEL, queue->sched_list, 1, nullptr);
        if (ret)
            goto err_free_queue;
    }
    return queue;

err_free_queue:
    group_free_queue(group, queue);
    return kshim::ERR_PTR<panthor_queue>(ret);
}

// ---- jobs ---------------------------------------------------------------------------------------

namespace {

void job_release(kshim::kref* ref) {
    panthor_job* job = container_of(ref, panthor_job, refcount);

    WARN_ON(job->node.is_linked());
    if (job->base.s_fence)
        drm::drm_sched_job_cleanup(&job->base);
    if (job->done_fence) {
        if (job->done_fence_initialized || !job->call_info.size)
            kshim::dma_fence_put(job->done_fence);
        else
            kshim::dma_fence_free(job->done_fence);
    }
    group_put(job->group);
    kshim::kdelete(job);
}

}  // namespace

drm::drm_sched_job* panthor_job_get(drm::drm_sched_job* sched_job) {
    if (sched_job)
        kshim::kref_get(&to_panthor_job(sched_job)->refcount);
    return sched_job;
}

void panthor_job_put(drm::drm_sched_job* sched_job) {
    if (sched_job)
        kshim::kref_put(&to_panthor_job(sched_job)->refcount, job_release);
}

panthor_vm* panthor_job_vm(drm::drm_sched_job* sched_job) {
    return to_panthor_job(sched_job)->group->vm;
}

drm::drm_sched_job* panthor_job_create(panthor_file* pfile, u16 group_handle, const drm_panthor_queue_submit* qsubmit,
                                       u64 drm_client_id) {
    int ret;

    if (qsubmit->pad)
        return kshim::ERR_PTR<drm::drm_sched_job>(-EINVAL);
    // A stream address without a size, or the reverse.
    if ((qsubmit->stream_size == 0) != (qsubmit->stream_addr == 0))
        return kshim::ERR_PTR<drm::drm_sched_job>(-EINVAL);
    // Cache-line aligned start, whole instructions.
    if ((qsubmit->stream_addr & 63) || (qsubmit->stream_size & 7))
        return kshim::ERR_PTR<drm::drm_sched_job>(-EINVAL);
    // Bits 24..30 of the flush ID are reserved.
    if (qsubmit->latest_flush & 0x7F000000u)
        return kshim::ERR_PTR<drm::drm_sched_job>(-EINVAL);

    auto* job = kshim::knew<panthor_job>(GFP_KERNEL);
    if (!job)
        return kshim::ERR_PTR<drm::drm_sched_job>(-ENOMEM);

    kshim::kref_init(&job->refcount);
    job->queue_idx = qsubmit->queue_index;
    job->call_info.size = qsubmit->stream_size;
    job->call_info.start = qsubmit->stream_addr;
    job->call_info.latest_flush = qsubmit->latest_flush;

    job->group = pfile->groups->xa.load_locked(
        group_handle, [](panthor_group* g) { return g && g->registered.load() ? group_get(g) : nullptr; });
    if (!job->group) {
        ret = -EINVAL;
        goto err_put_job;
    }
    {
        // The tick changes what group_can_run() reads, under the scheduler lock (upstream reads
        // it unlocked: a data race for TSan).
        kshim::MutexGuard g(pfile->ptdev->scheduler->lock);
        ret = group_can_run(job->group) ? 0 : -EINVAL;
    }
    if (ret)
        goto err_put_job;
    if (job->queue_idx >= job->group->queue_count || !job->group->queues[job->queue_idx]) {
        ret = -EINVAL;
        goto err_put_job;
    }

    // An empty stream borrows the previous job's fence in run_job.
    if (job->call_info.size) {
        job->done_fence = kshim::knew<dma_fence>(GFP_KERNEL);
        if (!job->done_fence) {
            ret = -ENOMEM;
            goto err_put_job;
        }
    }

    job->profiling.mask = pfile->ptdev->profile_mask;
    {
        const u32 credits = calc_job_credits(job->profiling.mask);
        if (credits == 0) {
            ret = -EINVAL;
            goto err_put_job;
        }
        ret = drm::drm_sched_job_init(&job->base, &job->group->queues[job->queue_idx]->entity, credits, job->group,
                                      drm_client_id);
        if (ret)
            goto err_put_job;
    }
    return &job->base;

err_put_job:
    panthor_job_put(&job->base);
    return kshim::ERR_PTR<drm::drm_sched_job>(ret);
}

void panthor_job_update_resvs(drm::drm_exec* exec, drm::drm_sched_job* sched_job) {
    panthor_job* job = to_panthor_job(sched_job);
    // Kernel-mode queues: every BO of the VM may be touched, so the job's fence goes on all of
    // them as BOOKKEEP (no implicit sync).
    panthor_vm_update_resvs(job->group->vm, exec, &sched_job->s_fence->finished, kshim::DMA_RESV_USAGE_BOOKKEEP,
                            kshim::DMA_RESV_USAGE_BOOKKEEP);
}

}  // namespace panthor
