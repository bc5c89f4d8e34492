// Mirrors the group half of drivers/gpu/drm/panthor/panthor_sched.c: group lifetime, binding to
// CSG slots, scheduling requests, termination, the per-file group pool and GROUP_GET_STATE.
#include <bit>
#include <cstring>

#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/task_comm.h"
#include "panthor/panthor_drv.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched_priv.h"

namespace panthor {

using kshim::GFP_KERNEL;
using kshim::MutexGuard;
using kshim::SpinGuard;

panthor_group* group_get(panthor_group* group) {
    if (group)
        kshim::kref_get(&group->refcount);
    return group;
}

namespace {

void group_release_work(kshim::work_struct* work) {
    panthor_group* group = container_of(work, panthor_group, release_work);

    for (u32 i = 0; i < group->queue_count; i++)
        group_free_queue(group, group->queues[i]);

    panthor_kernel_bo_destroy(group->suspend_buf);
    panthor_kernel_bo_destroy(group->protm_suspend_buf);
    panthor_kernel_bo_destroy(group->syncobjs);

    panthor_vm_put(group->vm);
    kshim::kdelete(group);
}

void group_release(kshim::kref* kref) {
    panthor_group* group = container_of(kref, panthor_group, refcount);

    WARN_ON(group->csg_id >= 0);
    WARN_ON(group->run_node.is_linked());
    WARN_ON(group->wait_node.is_linked());
    // The queues' drm_scheds are torn down from the cleanup workqueue: the last reference may go
    // in one of their own callbacks.
    kshim::queue_work(panthor_cleanup_wq, &group->release_work);
}

}  // namespace

void group_put(panthor_group* group) {
    if (group)
        kshim::kref_put(&group->refcount, group_release);
}

void group_queue_work(panthor_group* group, kshim::work_struct* work) {
    group_get(group);
    if (!kshim::queue_work(group->ptdev->scheduler->wq, work))
        group_put(group);
}

int group_bind_locked(panthor_group* group, u32 csg_id) {
    panthor_device* ptdev = group->ptdev;
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);

    if (WARN_ON(group->csg_id != -1 || csg_id >= MAX_CSGS || sched->csg_slots[csg_id].group))
        return -EINVAL;

    const int ret = panthor_vm_active(group->vm);
    if (ret)
        return ret;

    group_get(group);
    group->csg_id = static_cast<int>(csg_id);
    // All queues of a group share the slot's doorbell (upstream's placeholder assignment too).
    for (u32 i = 0; i < group->queue_count; i++)
        group->queues[i]->doorbell_id = static_cast<u8>(csg_id + 1);
    sched->csg_slots[csg_id].group = group;
    return 0;
}

int group_unbind_locked(panthor_group* group) {
    panthor_scheduler* sched = group->ptdev->scheduler;
    lockdep_assert_held(&sched->lock);

    if (WARN_ON(group->csg_id < 0 || group->csg_id >= static_cast<int>(MAX_CSGS)))
        return -EINVAL;
    if (WARN_ON(group->state == PANTHOR_CS_GROUP_ACTIVE))
        return -EINVAL;

    panthor_csg_slot* slot = &sched->csg_slots[group->csg_id];
    panthor_vm_idle(group->vm);
    group->csg_id = -1;

    // The FW re-raises pending tiler OOMs when the group is back on a slot.
    group->tiler_oom.store(0);
    if (kshim::cancel_work(&group->tiler_oom_work))
        group_put(group);

    for (u32 i = 0; i < group->queue_count; i++)
        group->queues[i]->doorbell_id = 0xFF;
    slot->group = nullptr;
    group_put(group);
    return 0;
}

bool group_is_idle(const panthor_group* group) {
    const u32 inactive_queues = group->idle_queues | group->blocked_queues;
    return static_cast<u32>(std::popcount(inactive_queues)) == group->queue_count;
}

bool group_can_run(const panthor_group* group) {
    return group->state != PANTHOR_CS_GROUP_TERMINATED && group->state != PANTHOR_CS_GROUP_UNKNOWN_STATE &&
           !group->destroyed && group->fatal_queues == 0 && !group->timedout;
}

void group_schedule_locked(panthor_group* group, u32 queue_mask) {
    panthor_device* ptdev = group->ptdev;
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);

    if (!group_can_run(group))
        return;
    // Every queue that got work is blocked on a sync object: nothing to run yet.
    if ((queue_mask & group->blocked_queues) == queue_mask)
        return;

    const bool was_idle = group_is_idle(group);
    group->idle_queues &= ~queue_mask;

    // The reset path owns the lists until post_reset.
    if (sched->reset.in_progress.load())
        return;

    if (was_idle && !group_is_idle(group))
        list_move_tail(*group, group->run_node, sched->groups.runnable[group->priority]);

    // RT groups preempt: tick now.
    if (group->priority == PANTHOR_CSG_PRIORITY_RT) {
        sched_queue_tick(sched, 0);
        return;
    }
    // Some resident groups may have gone idle: re-evaluate now.
    if (sched->might_have_idle_groups) {
        sched_queue_tick(sched, 0);
        return;
    }
    if (sched->resched_target != U64_MAX) {
        // Ticking already; only a free slot is worth an early tick.
        if (sched->used_csg_slot_count < sched->csg_slot_count)
            sched_queue_tick(sched, 0);
        return;
    }
    sched_resume_tick(ptdev);
}

void panthor_group_stop(panthor_group* group) {
    panthor_scheduler* sched = group->ptdev->scheduler;
    lockdep_assert_held(&sched->reset.lock);

    for (u32 i = 0; i < group->queue_count; i++)
        queue_stop(group->queues[i], nullptr);

    group_get(group);
    MutexGuard g(sched->lock);
    list_move_tail(*group, group->run_node, sched->reset.stopped_groups);
}

void panthor_group_start(panthor_group* group) {
    panthor_scheduler* sched = group->ptdev->scheduler;
    lockdep_assert_held(&sched->reset.lock);

    for (u32 i = 0; i < group->queue_count; i++)
        queue_start(group->queues[i]);

    {
        MutexGuard g(sched->lock);
        if (group_can_run(group)) {
            list_move_tail(
                *group, group->run_node,
                group_is_idle(group) ? sched->groups.idle[group->priority] : sched->groups.runnable[group->priority]);
        } else {
            list_del_init(group->run_node);
            list_del_init(group->wait_node);
            group_queue_work(group, &group->term_work);
        }
    }
    group_put(group);
}

namespace {

// Every fence still in flight fails: -EINVAL on the queues that faulted, -ETIMEDOUT if the group
// timed out, -ECANCELED otherwise. The sync objects are forced to their last seqno with an error
// status so that queues of other groups waiting on them are released.
void group_term_post_processing(panthor_group* group) {
    panthor_job_list faulty_jobs;

    if (WARN_ON(group_can_run(group)))
        return;

    const bool cookie = kshim::dma_fence_begin_signalling();
    for (u32 i = 0; i < group->queue_count; i++) {
        panthor_queue* queue = group->queues[i];
        int err;
        if (group->fatal_queues & (1u << i))
            err = -EINVAL;
        else if (group->timedout)
            err = -ETIMEDOUT;
        else
            err = -ECANCELED;
        if (!queue)
            continue;

        {
            SpinGuard g(queue->fence_ctx.lock);
            while (!queue->fence_ctx.in_flight_jobs.empty()) {
                panthor_job& job = queue->fence_ctx.in_flight_jobs.front();
                list_move_tail(job, job.node, faulty_jobs);
                kshim::dma_fence_set_error(job.done_fence, err);
                kshim::dma_fence_signal_locked(job.done_fence);
            }
        }

        auto* syncobj = static_cast<panthor_syncobj_64b*>(group->syncobjs->kmap) + i;
        fw_write_once(syncobj->status, ~0u);
        fw_write_once(syncobj->seqno, queue->fence_ctx.seqno.load());
        sched_queue_work(group->ptdev->scheduler, &group->ptdev->scheduler->sync_upd_work);
    }
    kshim::dma_fence_end_signalling(cookie);

    while (!faulty_jobs.empty()) {
        panthor_job& job = faulty_jobs.front();
        list_del_init(job.node);
        panthor_job_put(&job.base);
    }
}

panthor_group* group_from_handle(panthor_group_pool* pool, u32 group_handle) {
    return pool->xa.load_locked(group_handle,
                                [](panthor_group* g) { return g && g->registered.load() ? group_get(g) : nullptr; });
}

void add_group_kbo_sizes(panthor_group* group) {
    group->fdinfo.kbo_sizes += group->suspend_buf->obj->size;
    group->fdinfo.kbo_sizes += group->protm_suspend_buf->obj->size;
    group->fdinfo.kbo_sizes += group->syncobjs->obj->size;
    for (u32 i = 0; i < group->queue_count; i++) {
        panthor_queue* queue = group->queues[i];
        group->fdinfo.kbo_sizes += queue->ringbuf->obj->size;
        group->fdinfo.kbo_sizes += queue->iface.mem->obj->size;
        group->fdinfo.kbo_sizes += queue->profiling.slots->obj->size;
    }
}

}  // namespace

void group_term_work(kshim::work_struct* work) {
    panthor_group* group = container_of(work, panthor_group, term_work);
    group_term_post_processing(group);
    group_put(group);
}

int panthor_group_create(panthor_file* pfile, const drm_panthor_group_create* group_args,
                         const drm_panthor_queue_create* queue_args, u64 drm_client_id) {
    panthor_device* ptdev = pfile->ptdev;
    panthor_group_pool* gpool = pfile->groups;
    panthor_scheduler* sched = ptdev->scheduler;
    panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, 0);
    u32 gid = 0;
    int ret;

    if (group_args->pad)
        return -EINVAL;
    if (group_args->priority >= PANTHOR_CSG_PRIORITY_COUNT)
        return -EINVAL;
    if ((group_args->compute_core_mask & ~ptdev->gpu_info.shader_present) ||
        (group_args->fragment_core_mask & ~ptdev->gpu_info.shader_present) ||
        (group_args->tiler_core_mask & ~ptdev->gpu_info.tiler_present))
        return -EINVAL;
    if (std::popcount(group_args->compute_core_mask) < group_args->max_compute_cores ||
        std::popcount(group_args->fragment_core_mask) < group_args->max_fragment_cores ||
        std::popcount(group_args->tiler_core_mask) < group_args->max_tiler_cores)
        return -EINVAL;
    // Deviation: upstream only checks MAX_CS_PER_CSG (the ioctl), so a group with more queues
    // than the FW has CS slots per CSG (8 on G610) is accepted and programming its slot
    // dereferences a CS interface the FW never set up. Reject it here instead.
    if (group_args->queues.count > sched->cs_slot_count)
        return -EINVAL;

    auto* group = kshim::knew<panthor_group>(GFP_KERNEL);
    if (!group)
        return -ENOMEM;

    kshim::kref_init(&group->refcount);
    group->state = PANTHOR_CS_GROUP_CREATED;
    group->csg_id = -1;
    group->ptdev = ptdev;
    group->max_compute_cores = group_args->max_compute_cores;
    group->compute_core_mask = group_args->compute_core_mask;
    group->max_fragment_cores = group_args->max_fragment_cores;
    group->fragment_core_mask = group_args->fragment_core_mask;
    group->max_tiler_cores = group_args->max_tiler_cores;
    group->tiler_core_mask = group_args->tiler_core_mask;
    group->priority = group_args->priority;
    INIT_WORK(&group->term_work, group_term_work);
    INIT_WORK(&group->sync_upd_work, group_sync_upd_work);
    INIT_WORK(&group->tiler_oom_work, group_tiler_oom_work);
    INIT_WORK(&group->release_work, group_release_work);

    group->vm = panthor_vm_pool_get_vm(pfile->vms, group_args->vm_id);
    if (!group->vm) {
        ret = -EINVAL;
        goto err_put_group;
    }

    group->suspend_buf = panthor_fw_alloc_suspend_buf_mem(ptdev, csg_iface->control->suspend_size);
    if (IS_ERR(group->suspend_buf)) {
        ret = static_cast<int>(PTR_ERR(group->suspend_buf));
        group->suspend_buf = nullptr;
        goto err_put_group;
    }
    group->protm_suspend_buf = panthor_fw_alloc_suspend_buf_mem(ptdev, csg_iface->control->protm_suspend_size);
    if (IS_ERR(group->protm_suspend_buf)) {
        ret = static_cast<int>(PTR_ERR(group->protm_suspend_buf));
        group->protm_suspend_buf = nullptr;
        goto err_put_group;
    }

    group->syncobjs = panthor_kernel_bo_create(ptdev, group->vm, group_args->queues.count * sizeof(panthor_syncobj_64b),
                                               DRM_PANTHOR_BO_NO_MMAP,
                                               DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC | DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED,
                                               PANTHOR_VM_KERNEL_AUTO_VA, "Group sync objects");
    if (IS_ERR(group->syncobjs)) {
        ret = static_cast<int>(PTR_ERR(group->syncobjs));
        group->syncobjs = nullptr;
        goto err_put_group;
    }
    ret = panthor_kernel_bo_vmap(group->syncobjs);
    if (ret)
        goto err_put_group;
    std::memset(group->syncobjs->kmap, 0, group_args->queues.count * sizeof(panthor_syncobj_64b));

    ret = gpool->xa.alloc(&gid, group, kshim::XaLimit{1, MAX_GROUPS_PER_POOL}, GFP_KERNEL);
    if (ret)
        goto err_put_group;

    for (u32 i = 0; i < group_args->queues.count; i++) {
        group->queues[i] = group_create_queue(group, &queue_args[i], drm_client_id, gid, i);
        if (IS_ERR(group->queues[i])) {
            ret = static_cast<int>(PTR_ERR(group->queues[i]));
            group->queues[i] = nullptr;
            goto err_erase_gid;
        }
        group->queue_count++;
    }

    group->idle_queues = genmask_low(group->queue_count);

    {
        MutexGuard rg(sched->reset.lock);
        if (sched->reset.in_progress.load()) {
            panthor_group_stop(group);
        } else {
            MutexGuard g(sched->lock);
            sched->groups.idle[group->priority].push_back(*group);
        }
    }

    add_group_kbo_sizes(group);
    // The creating process, as upstream's group_init_task_info names it in fault messages.
    group->task_info.pid = kshim::task_tgid_nr(kshim::current());
    kshim::get_task_comm(group->task_info.comm, kshim::current());
    group->registered.store(true);
    return static_cast<int>(gid);

err_erase_gid:
    gpool->xa.erase(gid);
err_put_group:
    group_put(group);
    return ret;
}

int panthor_group_destroy(panthor_file* pfile, u32 group_handle) {
    panthor_group_pool* gpool = pfile->groups;
    panthor_scheduler* sched = pfile->ptdev->scheduler;

    panthor_group* group =
        gpool->xa.load_locked(group_handle, [](panthor_group* g) { return g && g->registered.load() ? g : nullptr; });
    if (!group)
        return -EINVAL;
    group = gpool->xa.erase(group_handle);
    if (!group)
        return -EINVAL;

    {
        MutexGuard rg(sched->reset.lock);
        MutexGuard g(sched->lock);
        group->destroyed = true;
        if (group->csg_id >= 0) {
            sched_queue_tick(sched, 0);
        } else if (!sched->reset.in_progress.load()) {
            // Off the run queues so that no tick picks it again.
            list_del_init(group->run_node);
            list_del_init(group->wait_node);
            group_queue_work(group, &group->term_work);
        }
    }
    group_put(group);
    return 0;
}

int panthor_group_get_state(panthor_file* pfile, drm_panthor_group_get_state* get_state) {
    panthor_scheduler* sched = pfile->ptdev->scheduler;

    if (get_state->pad)
        return -EINVAL;
    panthor_group* group = group_from_handle(pfile->groups, get_state->group_handle);
    if (!group)
        return -EINVAL;

    std::memset(get_state, 0, sizeof(*get_state));
    {
        MutexGuard g(sched->lock);
        if (group->timedout)
            get_state->state |= DRM_PANTHOR_GROUP_STATE_TIMEDOUT;
        if (group->fatal_queues) {
            get_state->state |= DRM_PANTHOR_GROUP_STATE_FATAL_FAULT;
            get_state->fatal_queues = group->fatal_queues;
        }
        if (group->innocent)
            get_state->state |= DRM_PANTHOR_GROUP_STATE_INNOCENT;
    }
    group_put(group);
    return 0;
}

int panthor_group_pool_create(panthor_file* pfile) {
    auto* gpool = kshim::knew<panthor_group_pool>(GFP_KERNEL);
    if (!gpool)
        return -ENOMEM;
    pfile->groups = gpool;
    return 0;
}

void panthor_group_pool_destroy(panthor_file* pfile) {
    panthor_group_pool* gpool = pfile->groups;
    if (!gpool)
        return;
    gpool->xa.for_each([pfile](u32 id, panthor_group*) { panthor_group_destroy(pfile, id); });
    // Handles whose group never finished creating cannot be here: create erases them on failure.
    WARN_ON(!gpool->xa.empty());
    kshim::kdelete(gpool);
    pfile->groups = nullptr;
}

void panthor_fdinfo_gather_group_samples(panthor_file* pfile) {
    panthor_group_pool* gpool = pfile->groups;
    if (!gpool)
        return;
    gpool->xa.for_each_locked([pfile](u32, panthor_group* group) {
        if (!group->registered.load())
            return;
        SpinGuard g(group->fdinfo.lock);
        SpinGuard s(pfile->stats_lock);
        pfile->stats.cycles += group->fdinfo.data.cycles;
        pfile->stats.time += group->fdinfo.data.time;
        group->fdinfo.data.cycles = 0;
        group->fdinfo.data.time = 0;
    });
}

void panthor_fdinfo_gather_group_mem_info(panthor_file* pfile, panthor_memory_stats* stats) {
    panthor_group_pool* gpool = pfile->groups;
    if (!gpool)
        return;
    // Upstream reads csg_id under the xa_lock only; the scheduler lock keeps that read race-free
    // here (TSan), at the cost of waiting for a tick in progress.
    MutexGuard g(pfile->ptdev->scheduler->lock);
    gpool->xa.for_each_locked([stats](u32, panthor_group* group) {
        if (!group->registered.load())
            return;
        stats->resident += group->fdinfo.kbo_sizes;
        if (group->csg_id >= 0)
            stats->active += group->fdinfo.kbo_sizes;
    });
}

}  // namespace panthor
