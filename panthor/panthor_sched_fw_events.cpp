// Mirrors the FW event half of drivers/gpu/drm/panthor/panthor_sched.c: GLB and CSG IRQ
// processing (idle, progress timeout, sync update) and CS events (fatal, fault, tiler OOM), the
// sync-object waits of blocked queues, and heap growth on tiler OOM.
//
// Events arrive in the JOB IRQ thread, which only records them (panthor_sched_report_fw_events);
// process_fw_events_work handles them under the scheduler lock, so the tick's waits for CSG acks
// never hold up the IRQ path.
#include "hw/csf/regs/exceptions.h"
#include "panthor/panthor_coredump.h"
#include "panthor/panthor_heap.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched_priv.h"

namespace panthor {

using kshim::MutexGuard;
using kshim::SpinGuard;

namespace {

void cs_slot_process_fatal_event_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id) REQUIRES(ptdev->scheduler->lock) {
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);
    panthor_group* group = sched->csg_slots[csg_id].group;
    panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, csg_id, cs_id);
    const u32 fatal = fw_read_once(cs_iface->output->fatal);
    const u64 info = fw_read_once(cs_iface->output->fatal_info);

    if (group) {
        dev_warn(ptdev->dev, "CS_FATAL: pid=%d, comm=%s", group->task_info.pid, group->task_info.comm);
        group->fatal_queues |= 1u << cs_id;
    }

    if (CS_EXCEPTION_TYPE(fatal) == DRM_PANTHOR_EXCEPTION_CS_UNRECOVERABLE) {
        // Reset, and no scheduling until it has happened.
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_CS_UNRECOVERABLE);
        kshim::cancel_delayed_work(&sched->tick_work);
    } else {
        sched_queue_tick(sched, 0);
    }

    dev_warn(ptdev->dev,
             "CSG slot %d CS slot: %d\nCS_FATAL.EXCEPTION_TYPE: 0x%x (%s)\nCS_FATAL.EXCEPTION_DATA: 0x%x\n"
             "CS_FATAL_INFO.EXCEPTION_DATA: 0x%llx",
             csg_id, cs_id, CS_EXCEPTION_TYPE(fatal), panthor_exception_name(ptdev, CS_EXCEPTION_TYPE(fatal)),
             CS_EXCEPTION_DATA(fatal), static_cast<unsigned long long>(info));
    panthor_coredump_capture_group_locked(ptdev, PANTHOR_COREDUMP_CS_FATAL, csg_id, static_cast<int>(cs_id));
}

void cs_slot_process_fault_event_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id) REQUIRES(ptdev->scheduler->lock) {
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);
    panthor_group* group = sched->csg_slots[csg_id].group;
    panthor_queue* queue = group && cs_id < group->queue_count ? group->queues[cs_id] : nullptr;
    panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, csg_id, cs_id);
    const u32 fault = fw_read_once(cs_iface->output->fault);
    const u64 info = fw_read_once(cs_iface->output->fault_info);

    if (queue) {
        // The jobs whose ring range holds the current position get the error (the FW then runs on
        // to the ERROR_BARRIER that ends the job).
        const u64 cs_extract = fw_read_once(queue->iface.output->extract);
        SpinGuard g(queue->fence_ctx.lock);
        for (panthor_job& job : queue->fence_ctx.in_flight_jobs) {
            if (cs_extract >= job.ringbuf.end)
                continue;
            if (cs_extract < job.ringbuf.start)
                break;
            kshim::dma_fence_set_error(job.done_fence, -EINVAL);
        }
    }

    if (group)
        dev_warn(ptdev->dev, "CS_FAULT: pid=%d, comm=%s", group->task_info.pid, group->task_info.comm);

    dev_warn(ptdev->dev,
             "CSG slot %d CS slot: %d\nCS_FAULT.EXCEPTION_TYPE: 0x%x (%s)\nCS_FAULT.EXCEPTION_DATA: 0x%x\n"
             "CS_FAULT_INFO.EXCEPTION_DATA: 0x%llx",
             csg_id, cs_id, CS_EXCEPTION_TYPE(fault), panthor_exception_name(ptdev, CS_EXCEPTION_TYPE(fault)),
             CS_EXCEPTION_DATA(fault), static_cast<unsigned long long>(info));
    panthor_coredump_capture_group_locked(ptdev, PANTHOR_COREDUMP_CS_FAULT, csg_id, static_cast<int>(cs_id));
}

void cs_slot_process_tiler_oom_event_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id)
    REQUIRES(ptdev->scheduler->lock) {
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);
    panthor_group* group = sched->csg_slots[csg_id].group;
    if (WARN_ON(!group))
        return;

    group->tiler_oom.fetch_or(1u << cs_id);
    // Heap growth allocates: its own workqueue, not the scheduler's (in the signalling path).
    group_get(group);
    if (!kshim::queue_work(sched->heap_alloc_wq, &group->tiler_oom_work))
        group_put(group);
}

// Returns whether the CS needs its doorbell rung (a FAULT to recover from, an OOM to re-try).
bool cs_slot_process_irq_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, csg_id, cs_id);
    const u32 req = fw_read_once(cs_iface->input->req);
    const u32 ack = fw_read_once(cs_iface->output->ack);
    const u32 events = (req ^ ack) & CS_EVT_MASK;

    if (events & CS_FATAL)
        cs_slot_process_fatal_event_locked(ptdev, csg_id, cs_id);
    if (events & CS_FAULT)
        cs_slot_process_fault_event_locked(ptdev, csg_id, cs_id);
    if (events & CS_TILER_OOM)
        cs_slot_process_tiler_oom_event_locked(ptdev, csg_id, cs_id);

    // TILER_OOM is acked by the OOM work, once it has an answer.
    panthor_fw_update_reqs(cs_iface, req, ack, CS_FATAL | CS_FAULT);
    return (events & (CS_FAULT | CS_TILER_OOM)) != 0;
}

void csg_slot_process_idle_event_locked(panthor_device* ptdev, u32) REQUIRES(ptdev->scheduler->lock) {
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);
    sched->might_have_idle_groups = true;
    // A tick evicts idle groups, lets waiting ones in, and updates PM and devfreq.
    sched_queue_tick(sched, 0);
}

void csg_slot_process_progress_timer_event_locked(panthor_device* ptdev, u32 csg_id) REQUIRES(ptdev->scheduler->lock) {
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);
    panthor_group* group = sched->csg_slots[csg_id].group;
    if (!WARN_ON(!group)) {
        dev_warn(ptdev->dev, "CSG_PROGRESS_TIMER_EVENT: pid=%d, comm=%s", group->task_info.pid, group->task_info.comm);
        group->timedout = true;
    }
    dev_warn(ptdev->dev, "CSG slot %d progress timeout", csg_id);
    panthor_coredump_capture_group_locked(ptdev, PANTHOR_COREDUMP_PROGRESS_TIMEOUT, csg_id, -1);
    sched_queue_tick(sched, 0);
}

void sched_process_idle_event_locked(panthor_device* ptdev) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);
    panthor_fw_update_reqs(glb_iface, req, fw_read_once(glb_iface->output->ack), GLB_IDLE);
    sched_queue_tick(ptdev->scheduler, 0);
}

void sched_process_global_irq_locked(panthor_device* ptdev) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);
    const u32 req = fw_read_once(glb_iface->input->req);
    const u32 ack = fw_read_once(glb_iface->output->ack);
    if ((req ^ ack) & GLB_EVT_MASK & GLB_IDLE)
        sched_process_idle_event_locked(ptdev);
}

}  // namespace

void csg_slot_sync_update_locked(panthor_device* ptdev, u32 csg_id) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_group* group = ptdev->scheduler->csg_slots[csg_id].group;
    if (group)
        group_queue_work(group, &group->sync_upd_work);
    sched_queue_work(ptdev->scheduler, &ptdev->scheduler->sync_upd_work);
}

void sched_process_csg_irq_locked(panthor_device* ptdev, u32 csg_id) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    if (WARN_ON(csg_id >= ptdev->scheduler->csg_slot_count))
        return;

    panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_id);
    const u32 req = fw_read_once(csg_iface->input->req);
    const u32 ack = fw_read_once(csg_iface->output->ack);
    const u32 cs_irq_req = fw_read_once(csg_iface->output->cs_irq_req);
    const u32 cs_irq_ack = fw_read_once(csg_iface->input->cs_irq_ack);
    const u32 csg_events = (req ^ ack) & CSG_EVT_MASK;

    if (req == ack && cs_irq_req == cs_irq_ack)
        return;

    // Ack the CS IRQs before looking at the CS req/ack bits, so an event the FW raises meanwhile
    // comes with a new IRQ instead of being lost.
    fw_write_once(csg_iface->input->cs_irq_ack, cs_irq_req);
    panthor_fw_update_reqs(csg_iface, req, ack, CSG_SYNC_UPDATE | CSG_IDLE | CSG_PROGRESS_TIMER_EVENT);

    if (csg_events & CSG_IDLE)
        csg_slot_process_idle_event_locked(ptdev, csg_id);
    if (csg_events & CSG_PROGRESS_TIMER_EVENT)
        csg_slot_process_progress_timer_event_locked(ptdev, csg_id);

    u32 ring_cs_db_mask = 0;
    for (u32 cs_irqs = cs_irq_req ^ cs_irq_ack; cs_irqs; cs_irqs &= cs_irqs - 1) {
        const u32 cs_id = static_cast<u32>(ffs_index(cs_irqs));
        if (cs_slot_process_irq_locked(ptdev, csg_id, cs_id))
            ring_cs_db_mask |= 1u << cs_id;
    }

    if (csg_events & CSG_SYNC_UPDATE)
        csg_slot_sync_update_locked(ptdev, csg_id);

    if (ring_cs_db_mask)
        panthor_fw_toggle_reqs(csg_iface, doorbell_req, doorbell_ack, ring_cs_db_mask);
    panthor_fw_ring_csg_doorbells(ptdev, 1u << csg_id);
}

void process_fw_events_work(kshim::work_struct* work) {
    panthor_scheduler* sched = container_of(work, panthor_scheduler, fw_events_work);
    u32 events = sched->fw_events.exchange(0);
    panthor_device* ptdev = sched->ptdev;

    MutexGuard g(sched->lock);
    if (events & JOB_INT_GLOBAL_IF) {
        sched_process_global_irq_locked(ptdev);
        events &= ~JOB_INT_GLOBAL_IF;
    }
    for (; events; events &= events - 1)
        sched_process_csg_irq_locked(ptdev, static_cast<u32>(ffs_index(events)));
}

// ---- sync-object waits ---------------------------------------------------------------------------

namespace {

// 1 if the queue's SYNC_WAIT condition now holds, 0 if not, -EAGAIN if its sync object is not
// mapped yet (sync_upd_work maps it first).
int panthor_queue_eval_syncwait(panthor_group* group, u8 queue_idx) {
    panthor_queue* queue = group->queues[queue_idx];
    void* syncobj = panthor_queue_get_syncwait_obj(group, queue);
    if (!syncobj)
        return -EAGAIN;

    const u64 value = queue->syncwait.sync64 ? fw_read_once(static_cast<panthor_syncobj_64b*>(syncobj)->seqno)
                                             : fw_read_once(static_cast<panthor_syncobj_32b*>(syncobj)->seqno);
    return queue->syncwait.gt ? value > queue->syncwait.ref : value <= queue->syncwait.ref;
}

// Maps, outside the scheduler lock, the sync objects blocked queues wait on that are not mapped
// yet, one at a time (there are few). Deviation: upstream maps under the scheduler lock and
// unmaps once the wait is satisfied; the vmap takes the BO's resv, which must not nest inside the
// scheduler lock (run_job takes that lock in the fence-signalling path, and resv holders may wait
// for fences), so here the mapping is made and dropped without the lock, and kept until the queue
// waits on another object or goes away.
void sync_upd_map_syncwait_objs(panthor_scheduler* sched) {
    for (;;) {
        panthor_group* group = nullptr;
        u32 cs_id = 0;
        u64 va = 0;
        {
            MutexGuard g(sched->lock);
            for (panthor_group& grp : sched->groups.waiting) {
                for (u32 tested = grp.blocked_queues; tested; tested &= tested - 1) {
                    const u32 q = static_cast<u32>(ffs_index(tested));
                    panthor_queue* queue = grp.queues[q];
                    if (!panthor_queue_get_syncwait_obj(&grp, queue) &&
                        queue->syncwait.failed_va != queue->syncwait.gpu_va) {
                        group = group_get(&grp);
                        cs_id = q;
                        va = grp.queues[q]->syncwait.gpu_va;
                        break;
                    }
                }
                if (group)
                    break;
            }
        }
        if (!group)
            return;

        panthor_syncwait_map m;
        const int ret = panthor_syncwait_map_create(group->vm, va, &m);
        {
            MutexGuard g(sched->lock);
            panthor_queue* queue = group->queues[cs_id];
            if (!ret && queue->syncwait.gpu_va == va)
                panthor_queue_swap_syncwait_map(queue, va, &m);  // m now holds the old mapping
            else if (WARN_ON(ret))
                // Nothing mapped there (upstream WARNs too): the wait cannot be evaluated, the
                // queue stays blocked until its job times out.
                queue->syncwait.failed_va = va;
        }
        panthor_syncwait_map_release(&m);
        group_put(group);
    }
}

}  // namespace

void sync_upd_work(kshim::work_struct* work) {
    panthor_scheduler* sched = container_of(work, panthor_scheduler, sync_upd_work);
    bool immediate_tick = false, retry = false, resume_tick = false;

    sync_upd_map_syncwait_objs(sched);

    {
        MutexGuard g(sched->lock);
        for (auto it = sched->groups.waiting.begin(); it != sched->groups.waiting.end();) {
            panthor_group& group = *it++;
            u32 unblocked_queues = 0;
            for (u32 tested = group.blocked_queues; tested; tested &= tested - 1) {
                const u32 cs_id = static_cast<u32>(ffs_index(tested));
                const int ret = panthor_queue_eval_syncwait(&group, static_cast<u8>(cs_id));
                // -EAGAIN: a tick changed what it waits on since the mapping pass: run again.
                if (ret > 0)
                    unblocked_queues |= 1u << cs_id;
                else if (ret == -EAGAIN &&
                         group.queues[cs_id]->syncwait.failed_va != group.queues[cs_id]->syncwait.gpu_va)
                    retry = true;
            }

            if (unblocked_queues) {
                group.blocked_queues &= ~unblocked_queues;
                if (group.csg_id < 0) {
                    list_move(group, group.run_node, sched->groups.runnable[group.priority]);
                    if (group.priority == PANTHOR_CSG_PRIORITY_RT)
                        immediate_tick = true;
                    else
                        resume_tick = true;
                }
            }
            if (!group.blocked_queues)
                list_del_init(group.wait_node);
        }
        // Deviation: upstream ticks only for RT groups here. With the tick off (every resident
        // group was idle at the last tick), a group unblocked off-slot then waits for some
        // unrelated event, however long the resident groups, unblocked too, run. Make sure a
        // tick comes, as group_schedule_locked does for a submission to an off-slot group.
        if (resume_tick && !immediate_tick) {
            if (sched->might_have_idle_groups ||
                (sched->resched_target != U64_MAX && sched->used_csg_slot_count < sched->csg_slot_count))
                immediate_tick = true;
            else if (sched->resched_target == U64_MAX)
                sched_resume_tick(sched->ptdev);
        }
        sched_arm_sync_poll_locked(sched);
    }
    if (immediate_tick)
        sched_queue_tick(sched, 0);
    if (retry)
        sched_queue_work(sched, &sched->sync_upd_work);
}

// Deviation (no upstream counterpart). The FW re-evaluates the SYNC_WAIT of a resident stream by
// itself, so a CPU store into the sync object (panvk's host vkSetEvent) releases it; once the
// group is off its slot (evicted, or the device runtime-suspended because every group was idle)
// only sync_upd_work evaluates the wait, and upstream runs it on a GPU sync update alone, which a
// CPU store never raises: the job then waits for its 5 s timeout. Poll instead, from the CPU
// (the device stays suspended), for as long as such a group exists; its queue timer still bounds
// the wait. An unblocked group gets a tick (sync_upd_work), which resumes the device.
void sched_arm_sync_poll_locked(panthor_scheduler* sched) {
    if (kshim::delayed_work_pending(&sched->sync_poll_work) || sched->reset.in_progress.load() ||
        panthor_device_reset_is_pending(sched->ptdev))
        return;
    for (const panthor_group& group : sched->groups.waiting) {
        if (group.csg_id < 0 && group.blocked_queues) {
            kshim::queue_delayed_work(sched->wq, &sched->sync_poll_work,
                                      static_cast<unsigned long>(sched->tick_period));
            return;
        }
    }
}

void sync_poll_work(kshim::work_struct* work) {
    panthor_scheduler* sched = container_of(kshim::to_delayed_work(work), panthor_scheduler, sync_poll_work);
    sched_queue_work(sched, &sched->sync_upd_work);
}

// ---- tiler OOM -----------------------------------------------------------------------------------

namespace {

int group_process_tiler_oom(panthor_group* group, u32 cs_id) {
    panthor_device* ptdev = group->ptdev;
    panthor_scheduler* sched = ptdev->scheduler;
    panthor_heap_pool* heaps = nullptr;
    u64 heap_address = 0, new_chunk_va = 0;
    u32 vt_start = 0, vt_end = 0, frag_end = 0, renderpasses_in_flight = 0, pending_frag_count = 0;
    int ret, csg_id;

    // Before sched->lock: vm->heaps.lock is held across allocations (pool creation), and
    // sched->lock is taken on the fence-signalling path (queue_run_job).
    heaps = panthor_vm_get_heap_pool(group->vm, false);

    {
        MutexGuard g(sched->lock);
        csg_id = group->csg_id;
        if (csg_id >= 0) {
            panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, static_cast<u32>(csg_id), cs_id);
            heap_address = fw_read_once(cs_iface->output->heap_address);
            vt_start = fw_read_once(cs_iface->output->heap_vt_start);
            vt_end = fw_read_once(cs_iface->output->heap_vt_end);
            frag_end = fw_read_once(cs_iface->output->heap_frag_end);
            renderpasses_in_flight = vt_start - frag_end;
            pending_frag_count = vt_end - frag_end;
        }
    }

    // Scheduled out meanwhile: the FW raises the OOM again when the group is back.
    if (csg_id < 0) {
        if (!IS_ERR(heaps))
            panthor_heap_pool_put(heaps);
        return 0;
    }

    if (IS_ERR(heaps)) {
        ret = -EINVAL;
        heaps = nullptr;
    } else if (frag_end > vt_end || vt_end >= vt_start) {
        ret = -EINVAL;
    } else {
        // Allocates: without the scheduler lock, so scheduling goes on.
        ret = panthor_heap_grow(heaps, heap_address, renderpasses_in_flight, pending_frag_count, &new_chunk_va);
    }

    // -ENOMEM: no chunk, the FW waits for fragment jobs to return memory or runs the OOM
    // exception handler (incremental rendering). Any other error is fatal for the queue.
    if (ret && ret != -ENOMEM) {
        dev_warn(ptdev->dev, "Failed to extend the tiler heap");
        {
            MutexGuard g(sched->lock);
            group->fatal_queues |= 1u << cs_id;
        }
        sched_queue_tick(sched, 0);
        panthor_heap_pool_put(heaps);
        return ret;
    }

    {
        MutexGuard g(sched->lock);
        csg_id = group->csg_id;
        if (csg_id >= 0) {
            panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, static_cast<u32>(csg_id));
            panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, static_cast<u32>(csg_id), cs_id);
            fw_write_once(cs_iface->input->heap_start, new_chunk_va);
            fw_write_once(cs_iface->input->heap_end, new_chunk_va);
            panthor_fw_update_reqs(cs_iface, req, fw_read_once(cs_iface->output->ack), CS_TILER_OOM);
            panthor_fw_toggle_reqs(csg_iface, doorbell_req, doorbell_ack, 1u << cs_id);
            panthor_fw_ring_csg_doorbells(ptdev, 1u << csg_id);
        }
    }

    // Scheduled out while we allocated: the chunk never reached the FW, give it back.
    if (csg_id < 0 && new_chunk_va)
        panthor_heap_return_chunk(heaps, heap_address, new_chunk_va);

    panthor_heap_pool_put(heaps);
    return 0;
}

}  // namespace

void group_tiler_oom_work(kshim::work_struct* work) {
    panthor_group* group = container_of(work, panthor_group, tiler_oom_work);
    for (u32 tiler_oom = group->tiler_oom.exchange(0); tiler_oom; tiler_oom &= tiler_oom - 1)
        group_process_tiler_oom(group, static_cast<u32>(ffs_index(tiler_oom)));
    group_put(group);
}

}  // namespace panthor
