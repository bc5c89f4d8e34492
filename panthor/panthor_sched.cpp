// Mirrors the device-level half of drivers/gpu/drm/panthor/panthor_sched.c: scheduler init and
// teardown, suspend/resume of the resident groups, the pre/post reset steps, and the hooks the
// FW and MMU code report events through. The design notes are in panthor_sched_priv.h.
#include "panthor/panthor_sched.h"

#include <algorithm>
#include <bit>

#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/slab.h"
#include "panthor/panthor_drv.h"
#include "panthor/panthor_gpu.h"
#include "panthor/panthor_sched_priv.h"

namespace panthor {

using kshim::MutexGuard;

void sched_queue_work(panthor_scheduler* sched, kshim::work_struct* work) {
    if (!sched->reset.in_progress.load() && !panthor_device_reset_is_pending(sched->ptdev))
        kshim::queue_work(sched->wq, work);
}

void sched_queue_tick(panthor_scheduler* sched, unsigned long delay) {
    if (!sched->reset.in_progress.load() && !panthor_device_reset_is_pending(sched->ptdev))
        kshim::mod_delayed_work(sched->wq, &sched->tick_work, delay);
}

namespace {

// The JOB and MMU IRQ threads run before panthor_sched_init() has published the scheduler (FW
// boot events): ptdev->scheduler is published and read from them with release/acquire (a plain
// pointer in upstream; a data race for TSan).
panthor_scheduler* sched_from_irq(panthor_device* ptdev) {
    return std::atomic_ref<panthor_scheduler*>(ptdev->scheduler).load(std::memory_order_acquire);
}
void sched_publish(panthor_device* ptdev, panthor_scheduler* sched) {
    std::atomic_ref<panthor_scheduler*>(ptdev->scheduler).store(sched, std::memory_order_release);
}

}  // namespace

void panthor_sched_report_fw_events(panthor_device* ptdev, u32 events) {
    panthor_scheduler* sched = sched_from_irq(ptdev);
    if (!sched)
        return;
    sched->fw_events.fetch_or(events);
    sched_queue_work(sched, &sched->fw_events_work);
}

void panthor_sched_report_mmu_fault(panthor_device* ptdev) {
    // Tick now: the groups using the faulty VM get killed.
    if (panthor_scheduler* sched = sched_from_irq(ptdev))
        sched_queue_tick(sched, 0);
}

void panthor_sched_prepare_for_vm_destruction(panthor_device* ptdev) {
    // The FW may write group state (heap contexts) while suspending, so a pending eviction of the
    // VM's groups must be done before the VM goes.
    if (ptdev->scheduler)
        kshim::flush_delayed_work(&ptdev->scheduler->tick_work);
}

void panthor_sched_resume(panthor_device* ptdev) {
    // Re-evaluate after a resume.
    sched_queue_tick(ptdev->scheduler, 0);
}

void panthor_sched_suspend(panthor_device* ptdev) {
    panthor_scheduler* sched = ptdev->scheduler;
    panthor_csg_slots_upd_ctx upd_ctx;

    MutexGuard g(sched->lock);
    csgs_upd_ctx_init(&upd_ctx);
    for (u32 i = 0; i < sched->csg_slot_count; i++) {
        panthor_group* group = sched->csg_slots[i].group;
        if (group)
            csgs_upd_ctx_queue_reqs(ptdev, &upd_ctx, i, group_can_run(group) ? CSG_STATE_SUSPEND : CSG_STATE_TERMINATE,
                                    CSG_STATE_MASK);
    }

    u32 suspended_slots = upd_ctx.update_mask;
    csgs_upd_ctx_apply_locked(ptdev, &upd_ctx);
    suspended_slots &= ~upd_ctx.timedout_mask;

    if (upd_ctx.timedout_mask) {
        u32 slot_mask = upd_ctx.timedout_mask;
        dev_err(ptdev->dev, "CSG suspend failed, escalating to termination");
        csgs_upd_ctx_init(&upd_ctx);
        for (; slot_mask; slot_mask &= slot_mask - 1) {
            const u32 csg_id = static_cast<u32>(ffs_index(slot_mask));
            panthor_group* group = sched->csg_slots[csg_id].group;
            // Still usable until now: another group may have put the FW in this state.
            if (group_can_run(group))
                group->innocent = true;
            // A failed suspend makes the group unusable.
            group->timedout = true;
            csgs_upd_ctx_queue_reqs(ptdev, &upd_ctx, csg_id, CSG_STATE_TERMINATE, CSG_STATE_MASK);
        }
        csgs_upd_ctx_apply_locked(ptdev, &upd_ctx);

        for (slot_mask = upd_ctx.timedout_mask; slot_mask; slot_mask &= slot_mask - 1) {
            const u32 csg_id = static_cast<u32>(ffs_index(slot_mask));
            panthor_group* group = sched->csg_slots[csg_id].group;
            // The terminate timed out too; the soft reset that follows terminates every group.
            if (group->state != PANTHOR_CS_GROUP_TERMINATED) {
                group->state = PANTHOR_CS_GROUP_TERMINATED;
                for (u32 i = 0; i < group->queue_count; i++) {
                    if (group->queues[i])
                        cs_slot_reset_locked(ptdev, csg_id, i);
                }
            }
        }
    }

    // The suspend buffers must be in memory; if the flush fails, nothing saved can be trusted.
    if (suspended_slots) {
        const bool flush_caches_failed = panthor_gpu_flush_caches(ptdev, CACHE_CLEAN, CACHE_CLEAN, 0) != 0;
        for (u32 slot_mask = suspended_slots; slot_mask; slot_mask &= slot_mask - 1) {
            const u32 csg_id = static_cast<u32>(ffs_index(slot_mask));
            if (flush_caches_failed)
                sched->csg_slots[csg_id].group->state = PANTHOR_CS_GROUP_TERMINATED;
            else
                csg_slot_sync_update_locked(ptdev, csg_id);
        }
    }

    for (u32 i = 0; i < sched->csg_slot_count; i++) {
        panthor_group* group = sched->csg_slots[i].group;
        if (!group)
            continue;
        group_get(group);
        if (group->csg_id >= 0)
            sched_process_csg_irq_locked(ptdev, static_cast<u32>(group->csg_id));
        group_unbind_locked(group);
        WARN_ON(group->run_node.is_linked());
        if (group_can_run(group)) {
            sched->groups.idle[group->priority].push_front(*group);
        } else {
            // No need to stop its drm_scheds: termination finishes the job.
            list_del_init(group->wait_node);
            group_queue_work(group, &group->term_work);
        }
        group_put(group);
    }
    // Nothing is resident any more (upstream leaves the count of the last tick).
    sched->used_csg_slot_count = 0;
    sched_arm_sync_poll_locked(sched);
}

void panthor_sched_pre_reset(panthor_device* ptdev) {
    panthor_scheduler* sched = ptdev->scheduler;
    if (!sched)
        return;

    MutexGuard rg(sched->reset.lock);
    sched->reset.in_progress.store(true);

    // From here until post_reset, sched_queue_* queue nothing.
    kshim::cancel_delayed_work_sync(&sched->sync_poll_work);
    kshim::cancel_work_sync(&sched->sync_upd_work);
    kshim::cancel_delayed_work_sync(&sched->tick_work);

    panthor_sched_suspend(ptdev);

    // Groups that could still take jobs are stopped, so none arrives during the reset. Stopping
    // waits for their drm_scheds' run_job, which takes the scheduler lock: not held meanwhile.
    for (;;) {
        panthor_group* group = nullptr;
        {
            MutexGuard g(sched->lock);
            for (auto* lists : {&sched->groups.runnable, &sched->groups.idle}) {
                for (auto& list : *lists) {
                    if (!group && !list.empty())
                        group = &list.front();
                }
            }
        }
        if (!group)
            break;
        panthor_group_stop(group);
    }
}

void panthor_sched_post_reset(panthor_device* ptdev, bool reset_failed) {
    panthor_scheduler* sched = ptdev->scheduler;
    if (!sched)
        return;

    {
        MutexGuard rg(sched->reset.lock);
        while (!sched->reset.stopped_groups.empty()) {
            panthor_group* group = &sched->reset.stopped_groups.front();
            // A failed reset takes every previously running group with it.
            if (reset_failed)
                group->state = PANTHOR_CS_GROUP_TERMINATED;
            panthor_group_start(group);
        }
        sched->reset.in_progress.store(false);
    }

    if (!reset_failed) {
        sched_queue_tick(sched, 0);
        sched_queue_work(sched, &sched->sync_upd_work);
    }
}

void panthor_sched_unplug(panthor_device* ptdev) {
    panthor_scheduler* sched = ptdev->scheduler;
    if (!sched)
        return;

    kshim::disable_delayed_work_sync(&sched->tick_work);
    kshim::disable_work_sync(&sched->fw_events_work);
    kshim::disable_delayed_work_sync(&sched->sync_poll_work);
    kshim::disable_work_sync(&sched->sync_upd_work);

    // Deviation: upstream's device outlives unplug by reference counting (VMs hold the DRM
    // device), so groups a tick had yet to evict are released whenever that happens. Here the
    // MMU goes right after this, so the resident groups are taken off their slots now (the FW is
    // still up), the destroyed ones terminated, and their release run before returning.
    panthor_sched_suspend(ptdev);
    kshim::flush_workqueue(sched->wq);
    kshim::flush_workqueue(panthor_cleanup_wq);

    MutexGuard g(sched->lock);
    if (sched->pm.has_ref) {
        kshim::pm_runtime_put(ptdev->dev);
        sched->pm.has_ref = false;
    }
}

panthor_sched_stats panthor_sched_get_stats(panthor_device* ptdev) {
    panthor_scheduler* sched = ptdev->scheduler;
    MutexGuard g(sched->lock);
    panthor_sched_stats s = sched->stats;
    s.used_csg_slots = sched->used_csg_slot_count;
    s.ticking = sched->resched_target != U64_MAX;
    return s;
}

namespace {

// Outside the thread-safety analysis: it reads the group lists without sched->lock, which is
// right only because nothing can reach the scheduler any more (its workqueues are gone).
void panthor_sched_fini(panthor_scheduler* sched) NO_THREAD_SAFETY_ANALYSIS {
    if (!sched)
        return;
    // Groups destroyed after an unplug (files closed after a failed reset lost the device) queue
    // their release on the cleanup workqueue: it unmaps their kernel BOs, so it must run before the
    // MMU goes (released after us).
    kshim::flush_workqueue(panthor_cleanup_wq);
    if (sched->wq)
        kshim::destroy_workqueue(sched->wq);
    if (sched->heap_alloc_wq)
        kshim::destroy_workqueue(sched->heap_alloc_wq);
    for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0; prio--) {
        WARN_ON(!sched->groups.runnable[prio].empty());
        WARN_ON(!sched->groups.idle[prio].empty());
    }
    WARN_ON(!sched->groups.waiting.empty());
    if (sched->ptdev && sched->ptdev->scheduler == sched)
        sched_publish(sched->ptdev, nullptr);
    kshim::kdelete(sched);
}

}  // namespace

int panthor_sched_init(panthor_device* ptdev) {
    panthor_fw_global_iface* glb_iface = panthor_fw_get_glb_iface(ptdev);
    panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, 0);
    panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, 0, 0);

    // JOB_INT bit 31 is the GLB interface: 31 CSG slots at most. One CSG priority per slot, so
    // that two groups never compete with the same priority for overlapping resources (the FW
    // could deadlock): at most MAX_CSG_PRIO + 1 slots.
    u32 num_groups = std::min(MAX_CSGS, glb_iface->control->group_num);
    num_groups = std::min(MAX_CSG_PRIO + 1, num_groups);

    // One AS for the MCU, at least one for the groups.
    const u32 gpu_as_count = static_cast<u32>(std::popcount(ptdev->gpu_info.as_present & ~1u));
    if (!gpu_as_count) {
        dev_err(ptdev->dev, "Not enough AS (%d, expected at least 2)", gpu_as_count + 1);
        return -EINVAL;
    }

    auto* sched = kshim::knew<panthor_scheduler>(kshim::GFP_KERNEL);
    if (!sched)
        return -ENOMEM;

    sched->ptdev = ptdev;
    sched->sb_slot_count = CS_FEATURES_SCOREBOARDS(cs_iface->control->features);
    sched->csg_slot_count = num_groups;
    sched->cs_slot_count = csg_iface->control->stream_num;
    sched->as_slot_count = gpu_as_count;
    ptdev->csif_info.csg_slot_count = sched->csg_slot_count;
    ptdev->csif_info.cs_slot_count = sched->cs_slot_count;
    ptdev->csif_info.cs_reg_count = CS_FEATURES_WORK_REGS(cs_iface->control->features);
    ptdev->csif_info.scoreboard_slot_count = sched->sb_slot_count;
    ptdev->csif_info.unpreserved_cs_reg_count = CSF_UNPRESERVED_REG_COUNT;

    sched->last_tick = 0;
    sched->resched_target = U64_MAX;
    sched->tick_period = kshim::msecs_to_jiffies(10);
    INIT_DELAYED_WORK(&sched->tick_work, tick_work);
    INIT_WORK(&sched->sync_upd_work, sync_upd_work);
    INIT_DELAYED_WORK(&sched->sync_poll_work, sync_poll_work);
    INIT_WORK(&sched->fw_events_work, process_fw_events_work);

    // Heap growth allocates memory, which must not happen on the scheduler's workqueue (it runs
    // in the fence-signalling path): it gets its own.
    sched->heap_alloc_wq = kshim::alloc_workqueue("panthor-heap-alloc", kshim::WQ_UNBOUND, 0);
    sched->wq = kshim::alloc_workqueue("panthor-csf-sched", kshim::WQ_MEM_RECLAIM | kshim::WQ_UNBOUND, 0);
    if (!sched->wq || !sched->heap_alloc_wq) {
        panthor_sched_fini(sched);
        dev_err(ptdev->dev, "Failed to allocate the workqueues");
        return -ENOMEM;
    }

    const int ret = kshim::devm_add_action_or_reset(ptdev->dev, [sched] { panthor_sched_fini(sched); });
    if (ret)
        return ret;

    sched_publish(ptdev, sched);
    return 0;
}

}  // namespace panthor
