// Mirrors drivers/gpu/drm/panfrost/panfrost_job.c: the job slots on drm_sched, the job IRQ, the
// JM contexts, job submission and the timeout/reset path.
//
// DOC: Every slot has a drm_gpu_scheduler with two credits when the GPU has
// JOBCHAIN_DISAMBIGUATION (one job current, one waiting in the slot's NEXT registers), else one;
// a JM context owns one entity per slot. run_job writes the NEXT registers and START
// (panfrost_job_hw_submit) and returns a per-slot HW fence ("panfrost-js-N"), which the job IRQ
// signals: pfdev->jobs[slot][0] is the job the slot runs, [1] the one in NEXT, and a DONE or FAIL
// dequeues [0]. A FAIL cancels the NEXT job with NOP and restarts it with START after the failed
// one is handled; a soft-stopped job (STOPPED) is not signalled: it resumes from JS_TAIL when the
// reset path resubmits it. A job still on the hardware 500 ms after it started times out: the
// reset path stops every scheduler, counts karma against the job, soft-stops every slot, collects
// the events, resets the GPU and resubmits (the guilty context's jobs get -ECANCELED).
#include "panfrost/panfrost_job.h"

#include "hw/jm/regs/exceptions.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/err.h"
#include "kernel_shim/iopoll.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "panfrost/panfrost_devfreq.h"
#include "panfrost/panfrost_dump.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_gpu.h"
#include "panfrost/panfrost_mmu.h"

namespace panfrost {

using namespace kshim;
using drm::drm_file;
using drm::drm_gpu_scheduler;
using drm::drm_sched_job;

namespace {

constexpr unsigned JOB_TIMEOUT_MS = 500;
// DONE and FAIL of the slots panfrost drives.
constexpr u32 JOB_INT_MASK_ALL = GENMASK(16 + NUM_JOB_SLOTS - 1, 16) | GENMASK(NUM_JOB_SLOTS - 1, 0);

inline void job_write(panfrost_device* pfdev, u32 reg, u32 data) {
    gpu_write(pfdev, reg, data);
}
inline u32 job_read(panfrost_device* pfdev, u32 reg) {
    return gpu_read(pfdev, reg);
}

}  // namespace

struct panfrost_queue_state {
    drm_gpu_scheduler sched;
    drm_gpu_scheduler* sched_list[1] = {&sched};  // what the entities are created on
    u64 fence_context = 0;
    u64 emit_seqno = 0;  // the last HW fence's seqno; only run_job (ordered per scheduler) writes it
};

struct panfrost_job_slot {
    panfrost_queue_state queue[NUM_JOB_SLOTS];
    // Protects pfdev->jobs, the jobs' jc and is the HW fences' lock.
    SpinLock job_lock{"panfrost_job_slot.job_lock"};
};

namespace {

panfrost_job* to_panfrost_job(drm_sched_job* sched_job) {
    return container_of(sched_job, panfrost_job, base);
}

struct panfrost_fence {
    dma_fence base;
    u64 seqno = 0;
    int queue = 0;
};

panfrost_fence* to_panfrost_fence(dma_fence* fence) {
    return container_of(fence, panfrost_fence, base);
}

const char* panfrost_fence_get_driver_name(dma_fence*) {
    return "panfrost";
}

const char* panfrost_fence_get_timeline_name(dma_fence* fence) {
    switch (to_panfrost_fence(fence)->queue) {
    case 0: return "panfrost-js-0";
    case 1: return "panfrost-js-1";
    case 2: return "panfrost-js-2";
    default: return nullptr;
    }
}

void panfrost_fence_release(dma_fence* fence) {
    kdelete(to_panfrost_fence(fence));
}

const dma_fence_ops panfrost_fence_ops = {
    .get_driver_name = panfrost_fence_get_driver_name,
    .get_timeline_name = panfrost_fence_get_timeline_name,
    .release = panfrost_fence_release,
};

dma_fence* panfrost_fence_create(panfrost_device* pfdev, int js_num) {
    panfrost_job_slot* js = pfdev->js;
    // run_job is a fence-signalling path: no reclaim (upstream allocates with GFP_KERNEL here,
    // which lockdep's dma_fence_map annotation flags).
    auto* fence = knew<panfrost_fence>(GFP_NOWAIT);
    if (!fence)
        return ERR_PTR<dma_fence>(-ENOMEM);
    fence->queue = js_num;
    fence->seqno = ++js->queue[js_num].emit_seqno;
    dma_fence_init(&fence->base, &panfrost_fence_ops, &js->job_lock, js->queue[js_num].fence_context, fence->seqno);
    return &fence->base;
}

// The JOB_CHAIN_FLAG of a job: the parity of its HW fence's seqno, so a job and the one queued
// behind it on the slot always differ and the _0/_1 stop commands can tell them apart.
int panfrost_get_job_chain_flag(const panfrost_job* job) {
    if (!panfrost_has_hw_feature(job->pfdev, HW_FEATURE_JOBCHAIN_DISAMBIGUATION))
        return 0;
    return static_cast<int>(to_panfrost_fence(job->done_fence)->seqno & 1);
}

panfrost_job* panfrost_dequeue_job(panfrost_device* pfdev, int slot) {
    panfrost_job* job = pfdev->jobs[slot][0];
    WARN_ON(!job);
    if (!job)
        return nullptr;
    if (job->is_profiled && job->engine_usage) {
        job->engine_usage->elapsed_ns[slot] += static_cast<u64>(ktime_sub(ktime_get(), job->start_time));
        job->engine_usage->cycles[slot] += panfrost_cycle_counter_read(pfdev) - job->start_cycles;
    }
    job->is_profiled = false;
    if (job->cycle_counter_held) {
        panfrost_cycle_counter_put(pfdev);
        job->cycle_counter_held = false;
    }
    pfdev->jobs[slot][0] = pfdev->jobs[slot][1];
    pfdev->jobs[slot][1] = nullptr;
    return job;
}

// The subslot the job went to: 0 when the slot had nothing, else 1 (NEXT).
int panfrost_enqueue_job(panfrost_device* pfdev, int slot, panfrost_job* job) {
    if (WARN_ON(!job))
        return 0;
    if (!pfdev->jobs[slot][0]) {
        pfdev->jobs[slot][0] = job;
        return 0;
    }
    WARN_ON(pfdev->jobs[slot][1]);
    pfdev->jobs[slot][1] = job;
    WARN_ON(panfrost_get_job_chain_flag(job) == panfrost_get_job_chain_flag(pfdev->jobs[slot][0]));
    return 1;
}

int panfrost_job_hw_submit(panfrost_job* job, int js) {
    panfrost_device* pfdev = job->pfdev;
    const u64 jc_head = job->jc;

    int ret = pm_runtime_get_sync(pfdev->dev);
    if (ret < 0)
        goto err_hwsubmit;

    // The NEXT registers must be free: the scheduler never has more than two jobs on a slot.
    if (WARN_ON(job_read(pfdev, JS_COMMAND_NEXT(js)))) {
        ret = -EINVAL;
        goto err_hwsubmit;
    }

    {
        u32 cfg = panfrost_mmu_as_get(pfdev, job->mmu);
        panfrost_devfreq_record_busy(&pfdev->pfdevfreq);

        job_write(pfdev, JS_HEAD_NEXT_LO(js), static_cast<u32>(jc_head));
        job_write(pfdev, JS_HEAD_NEXT_HI(js), static_cast<u32>(jc_head >> 32));

        // Every shader core, for every job (no tiler-only jobs or core groups).
        const u64 affinity = pfdev->features.shader_present;
        job_write(pfdev, JS_AFFINITY_NEXT_LO(js), static_cast<u32>(affinity));
        job_write(pfdev, JS_AFFINITY_NEXT_HI(js), static_cast<u32>(affinity >> 32));

        cfg |= JS_CONFIG_THREAD_PRI(8) | JS_CONFIG_START_FLUSH_CLEAN_INVALIDATE | JS_CONFIG_END_FLUSH_CLEAN_INVALIDATE;
        if (panfrost_has_hw_feature(pfdev, HW_FEATURE_FLUSH_REDUCTION))
            cfg |= JS_CONFIG_ENABLE_FLUSH_REDUCTION;
        if (panfrost_has_hw_issue(pfdev, HW_ISSUE_10649))
            cfg |= JS_CONFIG_START_MMU;
        if (panfrost_get_job_chain_flag(job))
            cfg |= JS_CONFIG_JOB_CHAIN_FLAG;
        job_write(pfdev, JS_CONFIG_NEXT(js), cfg);

        if (panfrost_has_hw_feature(pfdev, HW_FEATURE_FLUSH_REDUCTION))
            job_write(pfdev, JS_FLUSH_ID_NEXT(js), job->flush_id);

        SpinGuard g(pfdev->js->job_lock);
        const int subslot = panfrost_enqueue_job(pfdev, js, job);
        // With a reset pending the registers are written but not armed: the reset path
        // resubmits the job.
        if (!pfdev->reset.pending.load()) {
            job->is_profiled = pfdev->profile_mode.load();
            if ((job->requirements & PANFROST_JD_REQ_CYCLE_COUNT) || job->is_profiled) {
                panfrost_cycle_counter_get(pfdev);
                job->cycle_counter_held = true;
            }
            if (job->is_profiled) {
                job->start_time = ktime_get();
                job->start_cycles = panfrost_cycle_counter_read(pfdev);
            }
            job_write(pfdev, JS_COMMAND_NEXT(js), JS_COMMAND_START);
            dev_dbg(pfdev->dev, "JS: Submitting atom %p to js[%d][%d] with head=0x%llx AS %d", static_cast<void*>(job),
                    js, subslot, static_cast<unsigned long long>(jc_head), cfg & 0xf);
        }
    }
    return 0;

err_hwsubmit:
    pm_runtime_put_autosuspend(pfdev->dev);
    return ret;
}

void panfrost_job_cleanup(kref* ref) {
    panfrost_job* job = container_of(ref, panfrost_job, refcount);

    dma_fence_put(job->done_fence);
    dma_fence_put(job->render_done_fence);

    if (job->mappings) {
        for (u32 i = 0; i < job->bo_count; i++) {
            if (!job->mappings[i])
                break;
            job->mappings[i]->obj->gpu_usecount.fetch_sub(1);
            panfrost_gem_mapping_put(job->mappings[i]);
        }
        kfree(job->mappings);
    }
    if (job->bos) {
        for (u32 i = 0; i < job->bo_count; i++)
            if (job->bos[i])
                drm::drm_gem_object_put(job->bos[i]);
        kfree(job->bos);
    }
    if (job->ctx)
        panfrost_jm_ctx_put(job->ctx);
    if (job->mmu)
        panfrost_mmu_ctx_put(job->mmu);
    kdelete(job);
}

void panfrost_job_put_work(work_struct* work) {
    panfrost_job_put(container_of(work, panfrost_job, put_work));
}

void panfrost_job_free(drm_sched_job* sched_job) {
    panfrost_job* job = to_panfrost_job(sched_job);
    drm::drm_sched_job_cleanup(sched_job);
    // Upstream puts the job here; the shim's drm_sched annotates free_job as fence signalling
    // and the put may free the job's BOs (their reservation lock): deferred.
    INIT_WORK(&job->put_work, panfrost_job_put_work);
    queue_work(job->pfdev->job_put_wq, &job->put_work);
}

dma_fence* panfrost_job_run(drm_sched_job* sched_job) {
    panfrost_job* job = to_panfrost_job(sched_job);
    panfrost_device* pfdev = job->pfdev;
    const int slot = panfrost_job_get_slot(job);

    if (job->ctx->destroyed.load())
        return ERR_PTR<dma_fence>(-ECANCELED);
    // Guilty after a reset (drm_sched_resubmit_jobs set the error): not run again.
    if (job->base.s_fence->finished.error.load()) [[unlikely]]
        return nullptr;
    // Completed before the reset that resubmits it.
    if (!job->jc)
        return nullptr;

    dma_fence* fence = panfrost_fence_create(pfdev, slot);
    if (IS_ERR(fence))
        return fence;

    if (job->done_fence)
        dma_fence_put(job->done_fence);
    job->done_fence = dma_fence_get(fence);

    const int ret = panfrost_job_hw_submit(job, slot);
    if (ret) {
        dma_fence_put(fence);
        return ERR_PTR<dma_fence>(ret);
    }
    return fence;
}

// Only a JOB_BUS_FAULT on GPUs with TTRX_3076 leaves the GPU needing a reset.
bool panfrost_exception_needs_reset(const panfrost_device* pfdev, u32 exception_code) {
    return panfrost_has_hw_issue(pfdev, HW_ISSUE_TTRX_3076) && exception_code == DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT;
}

void panfrost_job_handle_err(panfrost_device* pfdev, panfrost_job* job, int js) {
    const u32 js_status = job_read(pfdev, JS_STATUS(js));
    const char* exception_name = panfrost_exception_name(js_status);
    bool signal_fence = true;

    if (!exception_is_fault(js_status)) {
        dev_dbg(pfdev->dev, "js event, js=%d, status=%s, head=0x%x, tail=0x%x", js, exception_name,
                job_read(pfdev, JS_HEAD_LO(js)), job_read(pfdev, JS_TAIL_LO(js)));
    } else {
        dev_err(pfdev->dev, "js fault, js=%d, status=%s, head=0x%x, tail=0x%x", js, exception_name,
                job_read(pfdev, JS_HEAD_LO(js)), job_read(pfdev, JS_TAIL_LO(js)));
    }

    if (js_status == DRM_PANFROST_EXCEPTION_STOPPED) {
        // Soft-stopped (a reset is coming): resume from where the chain stopped.
        job->jc = job_read(pfdev, JS_TAIL_LO(js)) | (static_cast<u64>(job_read(pfdev, JS_TAIL_HI(js))) << 32);
        signal_fence = false;
    } else if (js_status == DRM_PANFROST_EXCEPTION_TERMINATED) {
        dma_fence_set_error(job->done_fence, -ECANCELED);
        job->jc = 0;
    } else if (exception_is_fault(js_status)) {
        // Every fault is -EINVAL to userspace.
        dma_fence_set_error(job->done_fence, -EINVAL);
        job->jc = 0;
    } else {
        job->jc = 0;
    }

    panfrost_mmu_as_put(pfdev, job->mmu);
    panfrost_devfreq_record_idle(&pfdev->pfdevfreq);
    if (signal_fence)
        dma_fence_signal_locked(job->done_fence);
    pm_runtime_put_autosuspend(pfdev->dev);

    if (panfrost_exception_needs_reset(pfdev, js_status)) {
        pfdev->reset.pending.store(1);
        drm::drm_sched_fault(&pfdev->js->queue[js].sched);
    }
}

void panfrost_jm_handle_done(panfrost_device* pfdev, panfrost_job* job) {
    // So a resubmission after a reset does not run it again.
    job->jc = 0;
    panfrost_mmu_as_put(pfdev, job->mmu);
    panfrost_devfreq_record_idle(&pfdev->pfdevfreq);
    dma_fence_signal_locked(job->done_fence);
    pm_runtime_put_autosuspend(pfdev->dev);
}

void panfrost_jm_handle_irq(panfrost_device* pfdev, u32 status) REQUIRES(pfdev->js->job_lock) {
    lockdep_assert_held(&pfdev->js->job_lock);
    panfrost_job* done[NUM_JOB_SLOTS][2] = {};
    panfrost_job* failed[NUM_JOB_SLOTS] = {};
    u32 js_state = 0, js_events = 0;

    // Collect: a DONE and a FAIL can both be pending on a slot (the current chain completed, the
    // promoted NEXT one failed), DONE first.
    while (status) {
        u32 js_state_mask = 0;
        for (u32 j = 0; j < NUM_JOB_SLOTS; j++) {
            if (status & MK_JS_MASK(j))
                js_state_mask |= MK_JS_MASK(j);
            if (status & JOB_INT_MASK_DONE(j)) {
                if (done[j][0])
                    done[j][1] = panfrost_dequeue_job(pfdev, static_cast<int>(j));
                else
                    done[j][0] = panfrost_dequeue_job(pfdev, static_cast<int>(j));
            }
            if (status & JOB_INT_MASK_ERR(j)) {
                // The queued job must not start after a failure; it is re-armed below.
                job_write(pfdev, JS_COMMAND_NEXT(j), JS_COMMAND_NOP);
                failed[j] = panfrost_dequeue_job(pfdev, static_cast<int>(j));
            }
        }
        // Clearing samples JS_STATE for the cleared slots.
        job_write(pfdev, JOB_INT_CLEAR, status);
        js_state &= ~js_state_mask;
        js_state |= job_read(pfdev, JOB_INT_JS_STATE) & js_state_mask;
        js_events |= status;
        status = job_read(pfdev, JOB_INT_RAWSTAT);
    }

    for (u32 j = 0; j < NUM_JOB_SLOTS; j++) {
        if (!(js_events & MK_JS_MASK(j)))
            continue;
        if (failed[j]) {
            panfrost_job_handle_err(pfdev, failed[j], static_cast<int>(j));
        } else if (pfdev->jobs[j][0] && !(js_state & MK_JS_MASK(j))) {
            // The slot is idle with a job still recorded: the NEXT job was promoted and
            // completed too, its DONE merged with the first one's.
            if (done[j][0])
                done[j][1] = panfrost_dequeue_job(pfdev, static_cast<int>(j));
            else
                done[j][0] = panfrost_dequeue_job(pfdev, static_cast<int>(j));
        }

        for (int i = 0; i < 2 && done[j][i]; i++)
            panfrost_jm_handle_done(pfdev, done[j][i]);

        // Restart the job the failure held back in NEXT, or finish it if it was cancelled.
        if (failed[j] && pfdev->jobs[j][0]) {
            panfrost_job* canceled = pfdev->jobs[j][0];
            if (!canceled->jc) {
                panfrost_dequeue_job(pfdev, static_cast<int>(j));
                dma_fence_set_error(canceled->done_fence, -ECANCELED);
                panfrost_jm_handle_done(pfdev, canceled);
            } else if (!pfdev->reset.pending.load()) {
                // NOP kept the NEXT registers: START alone re-arms them.
                job_write(pfdev, JS_COMMAND_NEXT(j), JS_COMMAND_START);
            }
        }
    }
}

irqreturn_t panfrost_jm_irq_handler(int, void* data) {
    auto* pfdev = static_cast<panfrost_device*>(data);
    // The line is shared: a suspended block's registers are not ours to read.
    if (pfdev->is_suspended.load() & (1u << PANFROST_COMP_BIT_JOB))
        return IRQ_NONE;
    if (!job_read(pfdev, JOB_INT_STAT))
        return IRQ_NONE;
    job_write(pfdev, JOB_INT_MASK, 0);
    return IRQ_WAKE_THREAD;
}

irqreturn_t panfrost_jm_irq_handler_thread(int, void* data);

void panfrost_reset_work(work_struct* work) {
    panfrost_device* pfdev = container_of(work, panfrost_device, reset.work);
    panfrost_reset(pfdev, nullptr);
}

drm::drm_gpu_sched_stat panfrost_job_timedout(drm_sched_job* sched_job) {
    panfrost_job* job = to_panfrost_job(sched_job);
    panfrost_device* pfdev = job->pfdev;
    const int js = panfrost_job_get_slot(job);

    // The GPU finished the job meanwhile: a spurious timeout.
    if (!job->done_fence || dma_fence_is_signaled(job->done_fence))
        return drm::DRM_GPU_SCHED_STAT_NO_HANG;

    // The IRQ may be on its way.
    synchronize_irq(pfdev->job_irq);
    if (dma_fence_is_signaled(job->done_fence)) {
        dev_warn(pfdev->dev, "unexpectedly high interrupt latency");
        return drm::DRM_GPU_SCHED_STAT_NO_HANG;
    }

    dev_err(pfdev->dev, "gpu sched timeout, js=%d, config=0x%x, status=0x%x, head=0x%x, tail=0x%x, sched_job=%p", js,
            job_read(pfdev, JS_CONFIG(js)), job_read(pfdev, JS_STATUS(js)), job_read(pfdev, JS_HEAD_LO(js)),
            job_read(pfdev, JS_TAIL_LO(js)), static_cast<void*>(sched_job));

    panfrost_core_dump(job);

    pfdev->reset.pending.store(1);
    panfrost_reset(pfdev, sched_job);
    return drm::DRM_GPU_SCHED_STAT_RESET;
}

const drm::drm_sched_backend_ops panfrost_sched_ops = {
    .run_job = panfrost_job_run,
    .timedout_job = panfrost_job_timedout,
    .free_job = panfrost_job_free,
};

void panfrost_jm_handle_irqs(panfrost_device* pfdev) {
    u32 status = job_read(pfdev, JOB_INT_RAWSTAT);
    while (status) {
        pm_runtime_mark_last_busy(pfdev->dev);
        {
            SpinGuard g(pfdev->js->job_lock);
            panfrost_jm_handle_irq(pfdev, status);
        }
        status = job_read(pfdev, JOB_INT_RAWSTAT);
    }
}

irqreturn_t panfrost_jm_irq_handler_thread(int, void* data) {
    auto* pfdev = static_cast<panfrost_device*>(data);
    panfrost_jm_handle_irqs(pfdev);
    // Not when a suspend is on its way: it masked everything on purpose.
    if (!(pfdev->is_suspended.load() & (1u << PANFROST_COMP_BIT_JOB)))
        job_write(pfdev, JOB_INT_MASK, JOB_INT_MASK_ALL);
    return IRQ_HANDLED;
}

drm::drm_sched_priority jm_ctx_prio_to_drm_sched_prio(u32 prio) {
    switch (prio) {
    case PANFROST_JM_CTX_PRIORITY_LOW: return drm::DRM_SCHED_PRIORITY_LOW;
    case PANFROST_JM_CTX_PRIORITY_HIGH: return drm::DRM_SCHED_PRIORITY_HIGH;
    default: return drm::DRM_SCHED_PRIORITY_NORMAL;
    }
}

void panfrost_jm_ctx_release(kref* kref) {
    panfrost_jm_ctx* jm_ctx = container_of(kref, panfrost_jm_ctx, refcnt);
    for (panfrost_js_ctx& js_ctx : jm_ctx->slot_entity)
        if (js_ctx.enabled)
            drm::drm_sched_entity_destroy(&js_ctx.sched_entity);
    kdelete(jm_ctx);
}

panfrost_jm_ctx* panfrost_jm_ctx_alloc(panfrost_device* pfdev, u32 priority) {
    auto* jm_ctx = knew<panfrost_jm_ctx>(GFP_KERNEL);
    if (!jm_ctx)
        return ERR_PTR<panfrost_jm_ctx>(-ENOMEM);
    kref_init(&jm_ctx->refcnt);
    const drm::drm_sched_priority prio = jm_ctx_prio_to_drm_sched_prio(priority);
    for (u32 i = 0; i < NUM_JOB_SLOTS; i++) {
        const int ret = drm::drm_sched_entity_init(&jm_ctx->slot_entity[i].sched_entity, prio,
                                                   pfdev->js->queue[i].sched_list, 1, nullptr);
        if (ret) {
            panfrost_jm_ctx_put(jm_ctx);
            return ERR_PTR<panfrost_jm_ctx>(ret);
        }
        jm_ctx->slot_entity[i].enabled = true;
    }
    return jm_ctx;
}

}  // namespace

int panfrost_job_get_slot(panfrost_job* job) {
    // JS0 fragment jobs, JS1 everything else; the compute-only JS2 path is not exposed.
    if (job->requirements & PANFROST_JD_REQ_FS)
        return 0;
    return 1;
}

SpinLock& panfrost_jm_job_lock(panfrost_device* pfdev) {
    return pfdev->js->job_lock;
}

void panfrost_job_put(panfrost_job* job) {
    kref_put(&job->refcount, panfrost_job_cleanup);
}

int panfrost_job_push(panfrost_job* job) {
    panfrost_device* pfdev = job->pfdev;
    WwAcquireCtx acquire_ctx;

    int ret = drm::drm_gem_lock_reservations(job->bos, static_cast<int>(job->bo_count), &acquire_ctx);
    if (ret)
        return ret;

    {
        MutexGuard g(pfdev->sched_lock);
        drm::drm_sched_job_arm(&job->base);
        job->render_done_fence = dma_fence_get(&job->base.s_fence->finished);

        // Every BO is written as far as implicit sync knows (the uAPI has no read-only BOs).
        for (u32 i = 0; i < job->bo_count && !ret; i++) {
            ret = dma_resv_reserve_fences(job->bos[i]->resv, 1);
            if (!ret)
                ret = drm::drm_sched_job_add_implicit_dependencies(&job->base, job->bos[i]->resv, true);
        }
        if (!ret) {
            kref_get(&job->refcount);  // the scheduler's, dropped by free_job
            drm::drm_sched_entity_push_job(&job->base);
        }
    }

    if (!ret)
        for (u32 i = 0; i < job->bo_count; i++)
            dma_resv_add_fence(job->bos[i]->resv, job->render_done_fence, DMA_RESV_USAGE_WRITE);

    drm::drm_gem_unlock_reservations(job->bos, static_cast<int>(job->bo_count), &acquire_ctx);
    return ret;
}

void panfrost_jm_reset_interrupts(panfrost_device* pfdev) {
    job_write(pfdev, JOB_INT_CLEAR, JOB_INT_MASK_ALL);
}

void panfrost_jm_enable_interrupts(panfrost_device* pfdev) {
    pfdev->is_suspended.fetch_and(~(1u << PANFROST_COMP_BIT_JOB));
    job_write(pfdev, JOB_INT_MASK, JOB_INT_MASK_ALL);
}

void panfrost_jm_suspend_irq(panfrost_device* pfdev) {
    pfdev->is_suspended.fetch_or(1u << PANFROST_COMP_BIT_JOB);
    job_write(pfdev, JOB_INT_MASK, 0);
    synchronize_irq(pfdev->job_irq);
}

bool panfrost_jm_is_idle(panfrost_device* pfdev) {
    panfrost_job_slot* js = pfdev->js;
    for (u32 i = 0; i < NUM_JOB_SLOTS; i++) {
        // Jobs the scheduler handed to the hardware and that did not finish.
        if (drm::drm_sched_available_credits(&js->queue[i].sched) != js->queue[i].sched.credit_limit)
            return false;
    }
    return true;
}

void panfrost_device_schedule_reset(panfrost_device* pfdev) {
    pfdev->reset.pending.store(1);
    // Before panfrost_jm_init or after fini there is nothing to recover.
    if (pfdev->reset.wq)
        queue_work(pfdev->reset.wq, &pfdev->reset.work);
}

void panfrost_reset(panfrost_device* pfdev, drm_sched_job* bad) {
    if (!pfdev->reset.pending.load())
        return;

    for (u32 i = 0; i < NUM_JOB_SLOTS; i++)
        drm::drm_sched_stop(&pfdev->js->queue[i].sched, bad);

    const bool cookie = dma_fence_begin_signalling();

    if (bad)
        drm::drm_sched_increase_karma(bad);

    // The handler must not run while the slots are stopped and collected below.
    job_write(pfdev, JOB_INT_MASK, 0);
    synchronize_irq(pfdev->job_irq);

    for (u32 i = 0; i < NUM_JOB_SLOTS; i++) {
        // Cancel the queued job and stop the current one at a job boundary (resumable).
        job_write(pfdev, JS_COMMAND_NEXT(i), JS_COMMAND_NOP);
        job_write(pfdev, JS_COMMAND(i), JS_COMMAND_SOFT_STOP);
    }

    // Wait for every slot without a pending event to go idle.
    auto active_slots = [pfdev] {
        const u32 raw = job_read(pfdev, JOB_INT_RAWSTAT);
        u32 mask = JOB_INT_MASK_ALL;
        for (u32 j = 0; j < NUM_JOB_SLOTS; j++)
            if (raw & MK_JS_MASK(j))
                mask &= ~MK_JS_MASK(j);
        return job_read(pfdev, JOB_INT_JS_STATE) & mask;
    };
    u32 js_state = 0;
    const int ret = read_poll_timeout(active_slots, js_state, !js_state, 10, 10000, false);
    if (ret)
        dev_err(pfdev->dev, "Soft-stop failed");

    // STOPPED, DONE and FAIL events, with the interrupt still masked.
    panfrost_jm_handle_irqs(pfdev);

    // What is still recorded never reports now: drop what it held.
    {
        SpinGuard g(pfdev->js->job_lock);
        for (u32 i = 0; i < NUM_JOB_SLOTS; i++) {
            for (int j = 0; j < 2; j++) {
                panfrost_job* job = pfdev->jobs[i][j];
                if (!job)
                    continue;
                job->is_profiled = false;
                if (job->cycle_counter_held) {
                    panfrost_cycle_counter_put(pfdev);
                    job->cycle_counter_held = false;
                }
                pm_runtime_put_noidle(pfdev->dev);
                panfrost_devfreq_record_idle(&pfdev->pfdevfreq);
                pfdev->jobs[i][j] = nullptr;
            }
        }
    }

    // The reset forgets every AS binding (and with it the jobs' AS references).
    panfrost_device_reset(pfdev, false);

    // Every pending job runs again; the flag goes before, so they are armed.
    pfdev->reset.pending.store(0);

    // Resubmitting calls run_job, which may sleep (runtime PM): outside the signalling section.
    dma_fence_end_signalling(cookie);
    for (u32 i = 0; i < NUM_JOB_SLOTS; i++)
        drm::drm_sched_resubmit_jobs(&pfdev->js->queue[i].sched);
    const bool cookie2 = dma_fence_begin_signalling();

    for (u32 i = 0; i < NUM_JOB_SLOTS; i++)
        drm::drm_sched_start(&pfdev->js->queue[i].sched, 0);

    panfrost_jm_enable_interrupts(pfdev);
    dma_fence_end_signalling(cookie2);
}

int panfrost_jm_init(panfrost_device* pfdev) {
    INIT_WORK(&pfdev->reset.work, panfrost_reset_work);

    auto* js = knew<panfrost_job_slot>(GFP_KERNEL);
    if (!js)
        return -ENOMEM;
    pfdev->js = js;

    IrqLine* irq = platform_get_irq_byname(pfdev->pdev, "job");
    int ret;
    if (IS_ERR_OR_NULL(irq)) {
        ret = -ENODEV;
        goto err_free_js;
    }
    ret = request_threaded_irq(irq, panfrost_jm_irq_handler, panfrost_jm_irq_handler_thread, IRQF_SHARED,
                               "panfrost-job", pfdev);
    if (ret) {
        dev_err(pfdev->dev, "failed to request job irq");
        goto err_free_js;
    }
    pfdev->job_irq = irq;

    pfdev->reset.wq = alloc_ordered_workqueue("panfrost-reset", 0);
    if (!pfdev->reset.wq) {
        ret = -ENOMEM;
        goto err_free_irq;
    }
    pfdev->job_put_wq = alloc_workqueue("panfrost-job-put", 0, 0);
    if (!pfdev->job_put_wq) {
        ret = -ENOMEM;
        goto err_destroy_wq;
    }

    {
        // Two jobs per slot when the chain flag tells them apart, so NEXT is always loaded.
        const u32 nentries = panfrost_has_hw_feature(pfdev, HW_FEATURE_JOBCHAIN_DISAMBIGUATION) ? 2 : 1;
        static const char* const names[NUM_JOB_SLOTS] = {"pan_js0", "pan_js1", "pan_js2"};
        u32 j;
        for (j = 0; j < NUM_JOB_SLOTS; j++) {
            js->queue[j].fence_context = dma_fence_context_alloc(1);
            drm::drm_sched_init_args args;
            args.ops = &panfrost_sched_ops;
            args.credit_limit = nentries;
            args.timeout = static_cast<long>(msecs_to_jiffies(JOB_TIMEOUT_MS));
            args.timeout_wq = pfdev->reset.wq;
            args.name = names[j];
            args.dev = pfdev->dev;
            ret = drm::drm_sched_init(&js->queue[j].sched, &args);
            if (ret) {
                dev_err(pfdev->dev, "Failed to create scheduler: %d.", ret);
                break;
            }
        }
        if (ret) {
            while (j-- > 0)
                drm::drm_sched_fini(&js->queue[j].sched);
            goto err_destroy_wq;
        }
    }

    panfrost_jm_reset_interrupts(pfdev);
    panfrost_jm_enable_interrupts(pfdev);
    return 0;

err_destroy_wq:
    if (pfdev->job_put_wq)
        destroy_workqueue(pfdev->job_put_wq);
    pfdev->job_put_wq = nullptr;
    destroy_workqueue(pfdev->reset.wq);
    pfdev->reset.wq = nullptr;
err_free_irq:
    free_irq(irq, pfdev);
    pfdev->job_irq = nullptr;
err_free_js:
    kdelete(js);
    pfdev->js = nullptr;
    return ret;
}

void panfrost_jm_fini(panfrost_device* pfdev) {
    panfrost_job_slot* js = pfdev->js;
    job_write(pfdev, JOB_INT_MASK, 0);
    for (u32 j = 0; j < NUM_JOB_SLOTS; j++)
        drm::drm_sched_fini(&js->queue[j].sched);
    cancel_work_sync(&pfdev->reset.work);
    // Drains the last job puts.
    destroy_workqueue(pfdev->job_put_wq);
    pfdev->job_put_wq = nullptr;
    destroy_workqueue(pfdev->reset.wq);
    pfdev->reset.wq = nullptr;
    free_irq(pfdev->job_irq, pfdev);
    pfdev->job_irq = nullptr;
    kdelete(js);
    pfdev->js = nullptr;
}

panfrost_jm_ctx* panfrost_jm_ctx_get(panfrost_jm_ctx* jm_ctx) {
    if (jm_ctx)
        kref_get(&jm_ctx->refcnt);
    return jm_ctx;
}

void panfrost_jm_ctx_put(panfrost_jm_ctx* jm_ctx) {
    if (jm_ctx)
        kref_put(&jm_ctx->refcnt, panfrost_jm_ctx_release);
}

panfrost_jm_ctx* panfrost_jm_ctx_from_handle(drm_file* file, u32 handle) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    return priv->jm_ctxs.load_locked(handle, [](panfrost_jm_ctx* ctx) { return panfrost_jm_ctx_get(ctx); });
}

int panfrost_jm_ctx_create(drm_file* file, drm_panfrost_jm_ctx_create* args) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    panfrost_jm_ctx* jm_ctx = panfrost_jm_ctx_alloc(priv->pfdev, args->priority);
    if (IS_ERR(jm_ctx))
        return static_cast<int>(PTR_ERR(jm_ctx));
    const int ret = priv->jm_ctxs.alloc(&args->handle, jm_ctx, XA_LIMIT(0, 64), GFP_KERNEL);
    if (ret)
        panfrost_jm_ctx_put(jm_ctx);
    return ret;
}

int panfrost_jm_ctx_destroy(drm_file* file, u32 handle) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    panfrost_device* pfdev = priv->pfdev;

    panfrost_jm_ctx* jm_ctx = priv->jm_ctxs.erase(handle);
    if (!jm_ctx)
        return -EINVAL;
    jm_ctx->destroyed.store(true);

    // Kill the context's jobs on the hardware: a queued one is cancelled and never starts; the
    // conditional hard-stop hits the current chain only if it is the context's.
    {
        SpinGuard g(pfdev->js->job_lock);
        for (u32 i = 0; i < NUM_JOB_SLOTS; i++) {
            for (int j = 1; j >= 0; j--) {
                panfrost_job* job = pfdev->jobs[i][j];
                if (!job || job->ctx != jm_ctx)
                    continue;
                if (j == 1) {
                    job_write(pfdev, JS_COMMAND_NEXT(i), JS_COMMAND_NOP);
                    job->jc = 0;
                }
                u32 cmd = JS_COMMAND_HARD_STOP;
                if (panfrost_has_hw_feature(pfdev, HW_FEATURE_JOBCHAIN_DISAMBIGUATION))
                    cmd = panfrost_get_job_chain_flag(job) ? JS_COMMAND_HARD_STOP_1 : JS_COMMAND_HARD_STOP_0;
                job_write(pfdev, JS_COMMAND(i), cmd);
                // Jobs can outlive their file: stop accounting into its usage counters.
                job->engine_usage = nullptr;
            }
        }
    }

    panfrost_jm_ctx_put(jm_ctx);
    return 0;
}

int panfrost_jm_open(drm_file* file) {
    drm_panfrost_jm_ctx_create args{};
    args.priority = PANFROST_JM_CTX_PRIORITY_MEDIUM;
    const int ret = panfrost_jm_ctx_create(file, &args);
    if (ret)
        return ret;
    // The default context must be handle 0: SUBMIT's jm_ctx_handle 0 names it.
    WARN_ON(args.handle != 0);
    return 0;
}

void panfrost_jm_close(drm_file* file) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);

    std::vector<u32> handles;
    priv->jm_ctxs.for_each([&](u32 handle, panfrost_jm_ctx*) { handles.push_back(handle); });
    for (u32 handle : handles)
        panfrost_jm_ctx_destroy(file, handle);
}

}  // namespace panfrost
