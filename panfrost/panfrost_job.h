// Mirrors drivers/gpu/drm/panfrost/panfrost_job.h: jobs, JM contexts and the job slots' entry
// points.
#pragma once
#include <atomic>

#include "drm/drm_file.h"
#include "drm/sched/gpu_scheduler.h"
#include "kernel_shim/kref.h"
#include "panfrost/panfrost_device.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost {

struct panfrost_gem_mapping;
struct panfrost_mmu;
struct panfrost_jm_ctx;

struct panfrost_job {
    drm::drm_sched_job base;
    kshim::kref refcount;

    panfrost_device* pfdev = nullptr;
    panfrost_mmu* mmu = nullptr;             // a reference on the submitting file's VM
    panfrost_jm_ctx* ctx = nullptr;          // a reference
    kshim::dma_fence* done_fence = nullptr;  // the HW fence the job IRQ signals (a reference)

    // Where the slot starts the chain: the submitted head, JS_TAIL after a soft-stop, 0 once the
    // job completed or was cancelled. pfdev->js->job_lock.
    u64 jc = 0;
    u32 requirements = 0;
    u32 flush_id = 0;

    panfrost_gem_mapping** mappings = nullptr;  // references, bo_count of them (nullptr-terminated on error)
    drm::drm_gem_object** bos = nullptr;        // references
    u32 bo_count = 0;

    // The scheduler's finished fence (a reference): out_sync and the BOs' reservations get it.
    kshim::dma_fence* render_done_fence = nullptr;

    // Profiling (pfdev->profile_mode when the job went to the hardware): the time and cycle
    // counter at START, accounted to engine_usage (the submitting file's, or nullptr once it
    // closed) when the job leaves the slot. The cycle counter is held while the job is on the
    // hardware when profiled or PANFROST_JD_REQ_CYCLE_COUNT. pfdev->js->job_lock.
    bool is_profiled = false;
    bool cycle_counter_held = false;
    kshim::ktime_t start_time = 0;
    u64 start_cycles = 0;
    panfrost_engine_usage* engine_usage = nullptr;

    // free_job runs in a fence-signalling section, where dropping the last BO reference (its
    // reservation lock) is not allowed: the scheduler's reference is dropped from this work.
    kshim::work_struct put_work;
};

// A JM context (driver 1.5): one entity per slot scheduler, at the context's priority.
struct panfrost_js_ctx {
    drm::drm_sched_entity sched_entity;
    bool enabled = false;
};

struct panfrost_jm_ctx {
    kshim::kref refcnt;
    std::atomic<bool> destroyed{false};
    panfrost_js_ctx slot_entity[NUM_JOB_SLOTS];
};

int panfrost_jm_ctx_create(drm::drm_file* file, drm_panfrost_jm_ctx_create* args);
int panfrost_jm_ctx_destroy(drm::drm_file* file, u32 handle);
void panfrost_jm_ctx_put(panfrost_jm_ctx* jm_ctx);
panfrost_jm_ctx* panfrost_jm_ctx_get(panfrost_jm_ctx* jm_ctx);
// The file's live context `handle` with a reference, or nullptr.
panfrost_jm_ctx* panfrost_jm_ctx_from_handle(drm::drm_file* file, u32 handle);

// One scheduler per slot, the reset work queue and the "job" threaded IRQ.
int panfrost_jm_init(panfrost_device* pfdev);
void panfrost_jm_fini(panfrost_device* pfdev);
// The file's default context (handle 0) / destroying every context of the file.
int panfrost_jm_open(drm::drm_file* file);
void panfrost_jm_close(drm::drm_file* file);
void panfrost_jm_reset_interrupts(panfrost_device* pfdev);
void panfrost_jm_enable_interrupts(panfrost_device* pfdev);
// Runtime suspend: mask the job interrupts and wait for a running handler.
void panfrost_jm_suspend_irq(panfrost_device* pfdev);
// True when no job is queued or on the hardware.
bool panfrost_jm_is_idle(panfrost_device* pfdev);
int panfrost_job_get_slot(panfrost_job* job);
// The lock of pfdev->jobs and of the jobs' accounting into the files' engine usage.
kshim::SpinLock& panfrost_jm_job_lock(panfrost_device* pfdev);
// Locks the BOs, arms the job with implicit (writer) dependencies on them, pushes it and adds its
// finished fence to every BO.
int panfrost_job_push(panfrost_job* job);
void panfrost_job_put(panfrost_job* job);

// The reset path (panfrost_reset): stops every slot scheduler, soft-stops the slots, resets the
// GPU and resubmits. `bad` is the job that timed out, or nullptr.
void panfrost_reset(panfrost_device* pfdev, drm::drm_sched_job* bad);
// Marks a reset pending and queues the reset work (bad = nullptr).
void panfrost_device_schedule_reset(panfrost_device* pfdev);

}  // namespace panfrost
