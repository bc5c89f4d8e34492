// Mirrors drivers/gpu/drm/panthor/panthor_sched.h: the CSF scheduler (groups, queues, jobs) and
// the hooks the device, MMU and FW code call into it.
#pragma once
#include <string>

#include "drm/drm_exec.h"
#include "drm/sched/gpu_scheduler.h"
#include "panthor/panthor_device.h"

namespace panthor {

// Job profiling (upstream's sysfs `profiling` attribute, ptdev->profile_mask).
inline constexpr u32 PANTHOR_DEVICE_PROFILING_DISABLED = 0;
inline constexpr u32 PANTHOR_DEVICE_PROFILING_CYCLES = 1u << 0;
inline constexpr u32 PANTHOR_DEVICE_PROFILING_TIMESTAMP = 1u << 1;
inline constexpr u32 PANTHOR_DEVICE_PROFILING_ALL =
    PANTHOR_DEVICE_PROFILING_CYCLES | PANTHOR_DEVICE_PROFILING_TIMESTAMP;

// drm_memory_stats.
struct panthor_memory_stats {
    u64 shared = 0, _private = 0, resident = 0, purgeable = 0, active = 0;
};

int panthor_group_create(panthor_file* pfile, const drm_panthor_group_create* group_args,
                         const drm_panthor_queue_create* queue_args, u64 drm_client_id);
int panthor_group_destroy(panthor_file* pfile, u32 group_handle);
int panthor_group_get_state(panthor_file* pfile, drm_panthor_group_get_state* get_state);

drm::drm_sched_job* panthor_job_create(panthor_file* pfile, u16 group_handle, const drm_panthor_queue_submit* qsubmit,
                                       u64 drm_client_id);
drm::drm_sched_job* panthor_job_get(drm::drm_sched_job* job);
panthor_vm* panthor_job_vm(drm::drm_sched_job* sched_job);
void panthor_job_put(drm::drm_sched_job* job);
void panthor_job_update_resvs(drm::drm_exec* exec, drm::drm_sched_job* job);

int panthor_group_pool_create(panthor_file* pfile);
void panthor_group_pool_destroy(panthor_file* pfile);

// fdinfo: folds the groups' sampled GPU usage into pfile->stats / adds their kernel BOs.
void panthor_fdinfo_gather_group_samples(panthor_file* pfile);
void panthor_fdinfo_gather_group_mem_info(panthor_file* pfile, panthor_memory_stats* stats);

int panthor_sched_init(panthor_device* ptdev);
void panthor_sched_unplug(panthor_device* ptdev);
void panthor_sched_suspend(panthor_device* ptdev);
void panthor_sched_resume(panthor_device* ptdev);
void panthor_sched_pre_reset(panthor_device* ptdev);
void panthor_sched_post_reset(panthor_device* ptdev, bool reset_failed);
// An AS fault was reported by the MMU IRQ handler: force a tick.
void panthor_sched_report_mmu_fault(panthor_device* ptdev);
// A JOB IRQ with CSG or GLB events (the FW layer calls this for events it does not own).
void panthor_sched_report_fw_events(panthor_device* ptdev, u32 events);
// Waits for a pending tick, so that groups evicted because of a VM's destruction are off their
// slots (the FW may write heap contexts on suspend) before the VM goes.
void panthor_sched_prepare_for_vm_destruction(panthor_device* ptdev);

// Observability for tests, benchmarks and the simulator (no upstream counterpart).
struct panthor_sched_stats {
    u64 ticks = 0;         // tick_work runs that got past the reset check
    u64 full_ticks = 0;    // ... of which full ticks
    u64 csg_starts = 0;    // START/RESUME requests
    u64 csg_suspends = 0;  // SUSPEND/TERMINATE requests
    u32 used_csg_slots = 0;
    bool ticking = false;  // a periodic tick is armed (resched_target != U64_MAX)
};
panthor_sched_stats panthor_sched_get_stats(panthor_device* ptdev);

}  // namespace panthor
