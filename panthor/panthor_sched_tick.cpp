// Mirrors the slot and tick half of drivers/gpu/drm/panthor/panthor_sched.c: programming CS and
// CSG slots, batched CSG requests (csgs_upd_ctx), syncing state back from the FW, and the tick
// that picks which groups sit on the CSG slots.
//
// DOC: the tick. tick_ctx_init() asks every resident group for a status update, then groups are
// picked per priority (REALTIME first): non-idle resident groups and runnable ones first, with the
// resident group that had the highest CSG priority moved behind the others so same-priority
// groups take turns at the top; then idle groups if slots are left. tick_ctx_apply() suspends (or
// terminates, if they cannot run) the resident groups that were not picked, reprograms the
// priority of picked resident groups, and starts or resumes the new ones, each step one batch of
// CSG requests with one wait. A partial tick (an event in the middle of a time slice) only lets
// REALTIME groups preempt. The periodic tick runs only while the picked groups need rotating.
#include <algorithm>

#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/trace.h"
#include "panthor/panthor_devfreq.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched_priv.h"

namespace panthor {

using kshim::MutexGuard;

// ---- batched CSG requests -----------------------------------------------------------------------

void csgs_upd_ctx_init(panthor_csg_slots_upd_ctx* ctx) {
    *ctx = panthor_csg_slots_upd_ctx{};
}

void csgs_upd_ctx_queue_reqs(panthor_device* ptdev, panthor_csg_slots_upd_ctx* ctx, u32 csg_id, u32 value, u32 mask) {
    if (WARN_ON(!mask) || WARN_ON(csg_id >= ptdev->scheduler->csg_slot_count))
        return;
    ctx->requests[csg_id].value = (ctx->requests[csg_id].value & ~mask) | (value & mask);
    ctx->requests[csg_id].mask |= mask;
    ctx->update_mask |= 1u << csg_id;
}

namespace {

u32 panthor_fw_csg_endpoint_req_get(panthor_fw_csg_iface* csg_iface) {
    return fw_read_once(csg_iface->input->endpoint_req);
}
void panthor_fw_csg_endpoint_req_set(panthor_fw_csg_iface* csg_iface, u32 value) {
    fw_write_once(csg_iface->input->endpoint_req, value);
}
void panthor_fw_csg_endpoint_req_update(panthor_fw_csg_iface* csg_iface, u32 value, u32 mask) {
    kshim::SpinGuard g(csg_iface->lock);
    const u32 cur = fw_read_once(csg_iface->input->endpoint_req);
    fw_write_once(csg_iface->input->endpoint_req, (cur & ~mask) | (value & mask));
}

// The FW acked an endpoint config: the slot's priority is what it now runs with.
void csg_slot_sync_priority_locked(panthor_device* ptdev, u32 csg_id) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_id);
    const u32 endpoint_req = panthor_fw_csg_endpoint_req_get(csg_iface);
    ptdev->scheduler->csg_slots[csg_id].priority = static_cast<u8>((endpoint_req & CSG_EP_REQ_PRIORITY_MASK) >> 28);
}

void cs_slot_sync_queue_state_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id) REQUIRES(ptdev->scheduler->lock) {
    panthor_group* group = ptdev->scheduler->csg_slots[csg_id].group;
    panthor_queue* queue = group->queues[cs_id];
    panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, csg_id, cs_id);
    const panthor_fw_cs_output_iface* out = cs_iface->output;

    switch (fw_read_once(out->status_blocked_reason) & CS_STATUS_BLOCKED_REASON_MASK) {
    case CS_STATUS_BLOCKED_REASON_UNBLOCKED:
        if (fw_read_once(queue->iface.input->insert) == fw_read_once(queue->iface.output->extract) &&
            fw_read_once(out->status_scoreboards) == 0)
            group->idle_queues |= 1u << cs_id;
        break;

    case CS_STATUS_BLOCKED_REASON_SYNC_WAIT: {
        if (!group->wait_node.is_linked())
            ptdev->scheduler->groups.waiting.push_back(*group);
        // Only blocked if no deferred operation is pending (the scoreboards say).
        if (!fw_read_once(out->status_scoreboards))
            group->blocked_queues |= 1u << cs_id;

        const u32 status_wait = fw_read_once(out->status_wait);
        queue->syncwait.gpu_va = fw_read_once(out->status_wait_sync_ptr);
        queue->syncwait.ref = fw_read_once(out->status_wait_sync_value);
        queue->syncwait.gt = (status_wait & CS_STATUS_WAIT_SYNC_COND_MASK) == CS_STATUS_WAIT_SYNC_COND_GT;
        if (status_wait & CS_STATUS_WAIT_SYNC_64B) {
            queue->syncwait.sync64 = true;
            queue->syncwait.ref |= u64{fw_read_once(out->status_wait_sync_value_hi)} << 32;
        } else {
            queue->syncwait.sync64 = false;
        }
        break;
    }
    default:
        // Other reasons do not block for long: the queue counts as runnable.
        break;
    }
}

void csg_slot_sync_queues_state_locked(panthor_device* ptdev, u32 csg_id) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_group* group = ptdev->scheduler->csg_slots[csg_id].group;
    group->idle_queues = 0;
    group->blocked_queues = 0;
    for (u32 i = 0; i < group->queue_count; i++) {
        if (group->queues[i])
            cs_slot_sync_queue_state_locked(ptdev, csg_id, i);
    }
}

void csg_slot_sync_state_locked(panthor_device* ptdev, u32 csg_id) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_id);
    panthor_group* group = ptdev->scheduler->csg_slots[csg_id].group;
    if (!group)
        return;

    const panthor_group_state old_state = group->state;
    const u32 csg_state = fw_read_once(csg_iface->output->ack) & CSG_STATE_MASK;
    panthor_group_state new_state;
    switch (csg_state) {
    case CSG_STATE_START:
    case CSG_STATE_RESUME: new_state = PANTHOR_CS_GROUP_ACTIVE; break;
    case CSG_STATE_TERMINATE: new_state = PANTHOR_CS_GROUP_TERMINATED; break;
    case CSG_STATE_SUSPEND: new_state = PANTHOR_CS_GROUP_SUSPENDED; break;
    default:
        // A corrupted FW state: the group's metadata, and what a SUSPEND would save, cannot be
        // trusted any more.
        dev_err(ptdev->dev, "Invalid state on CSG %d (state=%d)", csg_id, csg_state);
        new_state = PANTHOR_CS_GROUP_UNKNOWN_STATE;
        break;
    }
    if (old_state == new_state)
        return;

    if (new_state == PANTHOR_CS_GROUP_UNKNOWN_STATE)
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_CSG_INVALID_STATE);
    if (new_state == PANTHOR_CS_GROUP_SUSPENDED)
        csg_slot_sync_queues_state_locked(ptdev, csg_id);

    if (old_state == PANTHOR_CS_GROUP_ACTIVE) {
        // Stop the CS slots so the next group on this slot starts clean; no wait or doorbell:
        // the slot is only reused by the next CSG start.
        for (u32 i = 0; i < group->queue_count; i++) {
            if (group->queues[i])
                cs_slot_reset_locked(ptdev, csg_id, i);
        }
    }
    group->state = new_state;
}

void cs_slot_prog_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_queue* queue = ptdev->scheduler->csg_slots[csg_id].group->queues[cs_id];
    panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, csg_id, cs_id);
    panthor_fw_cs_input_iface* in = cs_iface->input;

    fw_write_once(queue->iface.input->extract, fw_read_once(queue->iface.output->extract));
    WARN_ON(fw_read_once(queue->iface.input->insert) < fw_read_once(queue->iface.input->extract));

    fw_write_once(in->ringbuf_base, panthor_kernel_bo_gpuva(queue->ringbuf));
    fw_write_once(in->ringbuf_size, static_cast<u32>(panthor_kernel_bo_size(queue->ringbuf)));
    fw_write_once(in->ringbuf_input, u64{queue->iface.input_fw_va});
    fw_write_once(in->ringbuf_output, u64{queue->iface.output_fw_va});
    fw_write_once(in->config, CS_CONFIG_PRIORITY(queue->priority) | CS_CONFIG_DOORBELL(queue->doorbell_id));
    fw_write_once(in->ack_irq_mask, ~0u);
    panthor_fw_update_reqs(cs_iface, req, CS_IDLE_SYNC_WAIT | CS_IDLE_EMPTY | CS_STATE_START,
                           CS_IDLE_SYNC_WAIT | CS_IDLE_EMPTY | CS_STATE_MASK);
    if (fw_read_once(queue->iface.input->insert) != fw_read_once(queue->iface.input->extract))
        queue_resume_timeout(queue);
}

int csg_slot_prog_locked(panthor_device* ptdev, u32 csg_id, u32 priority) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    if (priority > MAX_CSG_PRIO)
        return -EINVAL;
    if (WARN_ON(csg_id >= MAX_CSGS))
        return -EINVAL;

    panthor_group* group = ptdev->scheduler->csg_slots[csg_id].group;
    if (!group || group->state == PANTHOR_CS_GROUP_ACTIVE)
        return 0;

    panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_id);
    u32 queue_mask = 0;
    for (u32 i = 0; i < group->queue_count; i++) {
        if (group->queues[i]) {
            cs_slot_prog_locked(ptdev, csg_id, i);
            queue_mask |= 1u << i;
        }
    }

    panthor_fw_csg_input_iface* in = csg_iface->input;
    fw_write_once(in->allow_compute, group->compute_core_mask);
    fw_write_once(in->allow_fragment, group->fragment_core_mask);
    fw_write_once(in->allow_other, static_cast<u32>(group->tiler_core_mask));
    panthor_fw_csg_endpoint_req_set(
        csg_iface, CSG_EP_REQ_COMPUTE(group->max_compute_cores) | CSG_EP_REQ_FRAGMENT(group->max_fragment_cores) |
                       CSG_EP_REQ_TILER(group->max_tiler_cores) | CSG_EP_REQ_PRIORITY(priority));
    fw_write_once(in->config, static_cast<u32>(panthor_vm_as(group->vm)));
    fw_write_once(in->suspend_buf, group->suspend_buf ? panthor_kernel_bo_gpuva(group->suspend_buf) : u64{0});
    fw_write_once(in->protm_suspend_buf,
                  group->protm_suspend_buf ? panthor_kernel_bo_gpuva(group->protm_suspend_buf) : u64{0});
    fw_write_once(in->ack_irq_mask, ~0u);
    panthor_fw_toggle_reqs(csg_iface, doorbell_req, doorbell_ack, queue_mask);
    return 0;
}

}  // namespace

int cs_slot_reset_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_fw_cs_iface* cs_iface = panthor_fw_get_cs_iface(ptdev, csg_id, cs_id);
    panthor_group* group = ptdev->scheduler->csg_slots[csg_id].group;
    panthor_fw_update_reqs(cs_iface, req, CS_STATE_STOP, CS_STATE_MASK);
    queue_suspend_timeout(group->queues[cs_id]);
    return 0;
}

int csgs_upd_ctx_apply_locked(panthor_device* ptdev, panthor_csg_slots_upd_ctx* ctx) {
    panthor_scheduler* sched = ptdev->scheduler;
    lockdep_assert_held(&sched->lock);

    if (!ctx->update_mask)
        return 0;

    for (u32 slots = ctx->update_mask; slots; slots &= slots - 1) {
        const u32 csg_id = static_cast<u32>(ffs_index(slots));
        panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_id);
        panthor_fw_update_reqs(csg_iface, req, ctx->requests[csg_id].value, ctx->requests[csg_id].mask);
        const u32 state_req =
            ctx->requests[csg_id].mask & CSG_STATE_MASK ? ctx->requests[csg_id].value & CSG_STATE_MASK : ~0u;
        if (state_req == CSG_STATE_START || state_req == CSG_STATE_RESUME)
            sched->stats.csg_starts++;
        else if (state_req == CSG_STATE_SUSPEND || state_req == CSG_STATE_TERMINATE)
            sched->stats.csg_suspends++;
    }

    panthor_fw_ring_csg_doorbells(ptdev, ctx->update_mask);

    for (u32 slots = ctx->update_mask; slots; slots &= slots - 1) {
        const u32 csg_id = static_cast<u32>(ffs_index(slots));
        panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_id);
        const u32 req_mask = ctx->requests[csg_id].mask;
        u32 acked = 0;

        const int ret = panthor_fw_csg_wait_acks(ptdev, csg_id, req_mask, &acked, 100);

        if (acked & CSG_ENDPOINT_CONFIG)
            csg_slot_sync_priority_locked(ptdev, csg_id);
        if (acked & CSG_STATE_MASK)
            csg_slot_sync_state_locked(ptdev, csg_id);
        if (acked & CSG_STATUS_UPDATE)
            csg_slot_sync_queues_state_locked(ptdev, csg_id);

        if (ret && acked != req_mask &&
            ((fw_read_once(csg_iface->input->req) ^ fw_read_once(csg_iface->output->ack)) & req_mask) != 0) {
            dev_err(ptdev->dev, "CSG %d update request timedout", csg_id);
            ctx->timedout_mask |= 1u << csg_id;
        }
    }
    return ctx->timedout_mask ? -ETIMEDOUT : 0;
}

// ---- the tick -----------------------------------------------------------------------------------

namespace {

struct panthor_sched_tick_ctx {
    panthor_group_run_list old_groups[PANTHOR_CSG_PRIORITY_COUNT];
    panthor_group_run_list groups[PANTHOR_CSG_PRIORITY_COUNT];
    u32 idle_group_count = 0;
    u32 group_count = 0;
    panthor_vm* vms[MAX_CS_PER_CSG] = {};
    u32 as_count = 0;
    bool immediate_tick = false;
    bool stop_tick = true;
    u32 csg_upd_failed_mask = 0;
};

bool tick_ctx_is_full(const panthor_scheduler* sched, const panthor_sched_tick_ctx* ctx) {
    return ctx->group_count == sched->csg_slot_count;
}

// Moves groups that can run from `queue` to ctx->groups until the slots are full. Groups coming
// from the scheduler's lists get a reference (the context's); old groups already have one.
void tick_ctx_pick_groups_from_list(const panthor_scheduler* sched, panthor_sched_tick_ctx* ctx,
                                    panthor_group_run_list& queue, bool skip_idle_groups, bool owned_by_tick_ctx) {
    if (tick_ctx_is_full(sched, ctx))
        return;

    for (auto it = queue.begin(); it != queue.end();) {
        panthor_group& group = *it++;

        if (!group_can_run(&group))
            continue;
        if (skip_idle_groups && group_is_idle(&group))
            continue;

        u32 i;
        for (i = 0; i < ctx->as_count; i++) {
            if (ctx->vms[i] == group.vm)
                break;
        }
        // Every AS is taken by the groups already picked, and this one needs another.
        if (i == ctx->as_count && ctx->as_count == sched->as_slot_count)
            continue;

        if (!owned_by_tick_ctx)
            group_get(&group);

        ctx->group_count++;
        // Two non-idle groups of one priority on slots: keep ticking to rotate their CSG priorities.
        if (group_is_idle(&group))
            ctx->idle_group_count++;
        else if (!ctx->groups[group.priority].empty())
            ctx->stop_tick = false;

        list_move_tail(group, group.run_node, ctx->groups[group.priority]);

        if (i == ctx->as_count)
            ctx->vms[ctx->as_count++] = group.vm;

        if (tick_ctx_is_full(sched, ctx))
            return;
    }
}

// Old groups sorted by decreasing CSG priority within their group priority, so rotation is a
// matter of moving the first one behind the others.
void tick_ctx_insert_old_group(panthor_scheduler* sched, panthor_sched_tick_ctx* ctx, panthor_group* group)
    REQUIRES(sched->lock) {
    const panthor_csg_slot* csg_slot = &sched->csg_slots[group->csg_id];
    auto& list = ctx->old_groups[group->priority];
    for (auto it = list.begin(); it != list.end(); ++it) {
        if (csg_slot->priority > sched->csg_slots[it->csg_id].priority) {
            list.insert(it, *group);
            return;
        }
    }
    list.push_back(*group);
}

void tick_ctx_init(panthor_scheduler* sched, panthor_sched_tick_ctx* ctx) REQUIRES(sched->lock) {
    panthor_device* ptdev = sched->ptdev;
    panthor_csg_slots_upd_ctx upd_ctx;
    csgs_upd_ctx_init(&upd_ctx);

    for (u32 i = 0; i < sched->csg_slot_count; i++) {
        panthor_group* group = sched->csg_slots[i].group;
        if (!group)
            continue;
        panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, i);
        group_get(group);

        // Unhandled faults on the VM: process the CSG IRQs so a CS fatal can name the queue; if
        // none does, every queue of the group is faulty.
        if (panthor_vm_has_unhandled_faults(group->vm)) {
            sched_process_csg_irq_locked(ptdev, i);
            if (!group->fatal_queues)
                group->fatal_queues |= genmask_low(group->queue_count);
        }

        tick_ctx_insert_old_group(sched, ctx, group);
        csgs_upd_ctx_queue_reqs(ptdev, &upd_ctx, i, fw_read_once(csg_iface->output->ack) ^ CSG_STATUS_UPDATE,
                                CSG_STATUS_UPDATE);
    }

    if (csgs_upd_ctx_apply_locked(ptdev, &upd_ctx)) {
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_CSG_ACK_TIMEOUT);
        ctx->csg_upd_failed_mask |= upd_ctx.timedout_mask;
    }
}

void tick_ctx_cleanup(panthor_scheduler* sched, panthor_sched_tick_ctx* ctx) REQUIRES(sched->lock) {
    for (auto& list : ctx->old_groups) {
        while (!list.empty()) {
            panthor_group& group = list.front();
            // Without a failed update, only groups to terminate are left here.
            WARN_ON(!ctx->csg_upd_failed_mask && group_can_run(&group));
            if (!group_can_run(&group)) {
                list_del_init(group.run_node);
                list_del_init(group.wait_node);
                group_queue_work(&group, &group.term_work);
            } else if (group.csg_id >= 0) {
                list_del_init(group.run_node);
            } else {
                list_move(group, group.run_node,
                          group_is_idle(&group) ? sched->groups.idle[group.priority]
                                                : sched->groups.runnable[group.priority]);
            }
            group_put(&group);
        }
    }

    for (auto& list : ctx->groups) {
        // Without a failed update, apply consumed these lists.
        WARN_ON(!ctx->csg_upd_failed_mask && !list.empty());
        while (!list.empty()) {
            panthor_group& group = list.front();
            if (group.csg_id >= 0) {
                list_del_init(group.run_node);
            } else {
                list_move(group, group.run_node,
                          group_is_idle(&group) ? sched->groups.idle[group.priority]
                                                : sched->groups.runnable[group.priority]);
            }
            group_put(&group);
        }
    }
}

void tick_ctx_apply(panthor_scheduler* sched, panthor_sched_tick_ctx* ctx) REQUIRES(sched->lock) {
    panthor_device* ptdev = sched->ptdev;
    int new_csg_prio = MAX_CSG_PRIO;
    panthor_csg_slots_upd_ctx upd_ctx;
    csgs_upd_ctx_init(&upd_ctx);

    for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0; prio--) {
        // Evicted groups: suspend, or terminate the ones that cannot run any more.
        for (panthor_group& group : ctx->old_groups[prio]) {
            const bool term = !group_can_run(&group);
            if (WARN_ON(group.csg_id < 0))
                continue;
            csgs_upd_ctx_queue_reqs(ptdev, &upd_ctx, static_cast<u32>(group.csg_id),
                                    term ? CSG_STATE_TERMINATE : CSG_STATE_SUSPEND, CSG_STATE_MASK);
        }
        // Resident groups that stay: new CSG priority if it changed.
        for (panthor_group& group : ctx->groups[prio]) {
            if (group.csg_id < 0) {
                new_csg_prio--;
                continue;
            }
            const u32 csg_id = static_cast<u32>(group.csg_id);
            panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, csg_id);
            if (sched->csg_slots[csg_id].priority == new_csg_prio) {
                new_csg_prio--;
                continue;
            }
            panthor_fw_csg_endpoint_req_update(csg_iface, CSG_EP_REQ_PRIORITY(static_cast<u32>(new_csg_prio)),
                                               CSG_EP_REQ_PRIORITY_MASK);
            csgs_upd_ctx_queue_reqs(ptdev, &upd_ctx, csg_id, fw_read_once(csg_iface->output->ack) ^ CSG_ENDPOINT_CONFIG,
                                    CSG_ENDPOINT_CONFIG);
            new_csg_prio--;
        }
    }

    if (csgs_upd_ctx_apply_locked(ptdev, &upd_ctx)) {
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_CSG_ACK_TIMEOUT);
        ctx->csg_upd_failed_mask |= upd_ctx.timedout_mask;
        return;
    }

    // Unbind the evicted groups, after handling what they still had pending.
    for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0; prio--) {
        for (panthor_group& group : ctx->old_groups[prio]) {
            if (group.csg_id >= 0)
                sched_process_csg_irq_locked(ptdev, static_cast<u32>(group.csg_id));
            group_unbind_locked(&group);
        }
    }

    u32 free_csg_slots = 0;
    for (u32 i = 0; i < sched->csg_slot_count; i++) {
        if (!sched->csg_slots[i].group)
            free_csg_slots |= 1u << i;
    }

    csgs_upd_ctx_init(&upd_ctx);
    new_csg_prio = MAX_CSG_PRIO;

    // Start (or resume) the new groups.
    for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0; prio--) {
        for (panthor_group& group : ctx->groups[prio]) {
            if (group.csg_id >= 0) {
                new_csg_prio--;
                continue;
            }
            const int csg_id = ffs_index(free_csg_slots);
            if (WARN_ON(csg_id < 0))
                break;
            panthor_fw_csg_iface* csg_iface = panthor_fw_get_csg_iface(ptdev, static_cast<u32>(csg_id));
            if (group_bind_locked(&group, static_cast<u32>(csg_id))) {
                panthor_device_schedule_reset(ptdev, PANTHOR_RESET_GROUP_BIND);
                ctx->csg_upd_failed_mask |= 1u << csg_id;
                return;
            }
            csg_slot_prog_locked(ptdev, static_cast<u32>(csg_id), static_cast<u32>(new_csg_prio--));
            csgs_upd_ctx_queue_reqs(ptdev, &upd_ctx, static_cast<u32>(csg_id),
                                    group.state == PANTHOR_CS_GROUP_SUSPENDED ? CSG_STATE_RESUME : CSG_STATE_START,
                                    CSG_STATE_MASK);
            csgs_upd_ctx_queue_reqs(ptdev, &upd_ctx, static_cast<u32>(csg_id),
                                    fw_read_once(csg_iface->output->ack) ^ CSG_ENDPOINT_CONFIG, CSG_ENDPOINT_CONFIG);
            free_csg_slots &= ~(1u << csg_id);
        }
    }

    if (csgs_upd_ctx_apply_locked(ptdev, &upd_ctx)) {
        panthor_device_schedule_reset(ptdev, PANTHOR_RESET_CSG_ACK_TIMEOUT);
        ctx->csg_upd_failed_mask |= upd_ctx.timedout_mask;
        return;
    }

    for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0; prio--) {
        auto& picked = ctx->groups[prio];
        while (!picked.empty()) {
            panthor_group& group = picked.front();
            list_del_init(group.run_node);
            // Destroyed while we were scheduling it: tick again right away to get rid of it.
            if (group.destroyed)
                ctx->immediate_tick = true;
            group_put(&group);
        }

        // Evicted groups go back to the idle or runnable lists; the ones that cannot run stay
        // for tick_ctx_cleanup to terminate.
        auto& old = ctx->old_groups[prio];
        for (auto it = old.begin(); it != old.end();) {
            panthor_group& group = *it++;
            if (!group_can_run(&group))
                continue;
            list_move_tail(group, group.run_node,
                           group_is_idle(&group) ? sched->groups.idle[prio] : sched->groups.runnable[prio]);
            group_put(&group);
        }
    }

    sched->used_csg_slot_count = ctx->group_count;
    sched->might_have_idle_groups = ctx->idle_group_count > 0;
}

u64 tick_ctx_update_resched_target(panthor_scheduler* sched, const panthor_sched_tick_ctx* ctx) REQUIRES(sched->lock) {
    if (ctx->stop_tick) {
        sched->resched_target = U64_MAX;
        return U64_MAX;
    }
    const u64 resched_target = sched->last_tick + sched->tick_period;
    // A target reached in this very jiffy is spent too (deviation: upstream's strict
    // time_before keeps it and re-ticks at once, a full tick each time, until jiffies move on).
    if (kshim::time_before_eq(sched->resched_target, sched->last_tick) ||
        kshim::time_before(resched_target, sched->resched_target))
        sched->resched_target = resched_target;
    return sched->resched_target - sched->last_tick;
}

}  // namespace

void tick_work(kshim::work_struct* work) {
    panthor_scheduler* sched = container_of(kshim::to_delayed_work(work), panthor_scheduler, tick_work);
    panthor_device* ptdev = sched->ptdev;
    u64 remaining_jiffies = 0;
    const u64 now = jiffies;

    int cookie;
    if (!drm::drm_dev_enter(&ptdev->base, &cookie))
        return;

    const int ret = panthor_device_resume_and_get(ptdev);
    if (WARN_ON(ret)) {
        drm::drm_dev_exit(cookie);
        return;
    }

    {
        MutexGuard g(sched->lock);
        // Read under the lock (upstream reads it before): sched_resume_tick() moves it meanwhile.
        u64 resched_target = sched->resched_target;
        // With the tick stopped, when it would have been.
        if (resched_target == U64_MAX)
            resched_target = sched->last_tick + sched->tick_period;
        if (kshim::time_before(now, resched_target))
            remaining_jiffies = resched_target - now;
        const bool full_tick = remaining_jiffies == 0;

        if (!panthor_device_reset_is_pending(ptdev)) {
            const bool tracing = kshim::trace::enabled();
            if (tracing)
                kshim::trace::begin(full_tick ? "panthor_tick" : "panthor_tick_partial", "panthor");
            panthor_sched_tick_ctx ctx;
            sched->stats.ticks++;
            if (full_tick)
                sched->stats.full_ticks++;

            tick_ctx_init(sched, &ctx);
            if (!ctx.csg_upd_failed_mask) {
                if (!full_tick) {
                    // Mid-slice: only RT groups preempt; resident RT groups stay.
                    for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0 && !tick_ctx_is_full(sched, &ctx);
                         prio--) {
                        tick_ctx_pick_groups_from_list(sched, &ctx, ctx.old_groups[prio], true, true);
                        if (prio == PANTHOR_CSG_PRIORITY_RT)
                            tick_ctx_pick_groups_from_list(sched, &ctx, sched->groups.runnable[prio], true, false);
                    }
                }

                // Non-idle groups first.
                for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0 && !tick_ctx_is_full(sched, &ctx); prio--) {
                    auto& old = ctx.old_groups[prio];
                    // The resident group with the highest CSG priority goes last, for rotation.
                    panthor_group* old_highest_prio_group = old.empty() ? nullptr : &old.front();
                    if (old_highest_prio_group)
                        list_del_init(old_highest_prio_group->run_node);

                    tick_ctx_pick_groups_from_list(sched, &ctx, old, true, true);
                    tick_ctx_pick_groups_from_list(sched, &ctx, sched->groups.runnable[prio], true, false);

                    if (old_highest_prio_group) {
                        old.push_back(*old_highest_prio_group);
                        tick_ctx_pick_groups_from_list(sched, &ctx, old, true, true);
                    }
                }

                // Slots left: idle groups, resident ones first so their slots need no reprogramming.
                for (int prio = PANTHOR_CSG_PRIORITY_COUNT - 1; prio >= 0 && !tick_ctx_is_full(sched, &ctx); prio--) {
                    tick_ctx_pick_groups_from_list(sched, &ctx, ctx.old_groups[prio], false, true);
                    tick_ctx_pick_groups_from_list(sched, &ctx, sched->groups.idle[prio], false, false);
                }

                tick_ctx_apply(sched, &ctx);
                if (!ctx.csg_upd_failed_mask) {
                    if (ctx.idle_group_count == ctx.group_count) {
                        panthor_devfreq_record_idle(ptdev);
                        if (sched->pm.has_ref) {
                            kshim::pm_runtime_put_autosuspend(ptdev->dev);
                            sched->pm.has_ref = false;
                        }
                    } else {
                        panthor_devfreq_record_busy(ptdev);
                        if (!sched->pm.has_ref) {
                            // Resumed above: upstream's async pm_runtime_get.
                            kshim::pm_runtime_get_noresume(ptdev->dev);
                            sched->pm.has_ref = true;
                        }
                    }

                    sched->last_tick = now;
                    u64 resched_delay = tick_ctx_update_resched_target(sched, &ctx);
                    if (ctx.immediate_tick)
                        resched_delay = 0;
                    if (resched_delay != U64_MAX)
                        sched_queue_tick(sched, static_cast<unsigned long>(resched_delay));
                }
            }
            tick_ctx_cleanup(sched, &ctx);
            // Evicted groups waiting on a sync object: nobody else watches it now.
            sched_arm_sync_poll_locked(sched);
            sched->stats.used_csg_slots = sched->used_csg_slot_count;
            sched->stats.ticking = sched->resched_target != U64_MAX;
            if (tracing) {
                kshim::trace::counter("csg slots used", sched->used_csg_slot_count);
                kshim::trace::end(full_tick ? "panthor_tick" : "panthor_tick_partial", "panthor");
            }
        }
    }

    kshim::pm_runtime_mark_last_busy(ptdev->dev);
    kshim::pm_runtime_put_autosuspend(ptdev->dev);
    drm::drm_dev_exit(cookie);
}

void sched_resume_tick(panthor_device* ptdev) {
    panthor_scheduler* sched = ptdev->scheduler;
    WARN_ON(sched->resched_target != U64_MAX);

    // The tick was off: its target follows from the last tick.
    const u64 now = jiffies;
    sched->resched_target = sched->last_tick + sched->tick_period;
    u64 delay_jiffies = 0;
    if (sched->used_csg_slot_count == sched->csg_slot_count && kshim::time_before(now, sched->resched_target))
        delay_jiffies = sched->resched_target - now;

    // An immediate tick already queued (for CSG events) must not be pushed back: those do not
    // move resched_target, so resident groups keep the rest of their time slice.
    if (!kshim::delayed_work_pending(&sched->tick_work))
        sched_queue_tick(sched, static_cast<unsigned long>(delay_jiffies));
}

}  // namespace panthor
