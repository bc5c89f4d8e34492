// Mirrors drivers/gpu/drm/panthor/panthor_sched.h. Part 1 of the driver has no CSF scheduler:
// these are the hooks the device, MMU and FW code call into it, each a no-op while
// ptdev->scheduler is null. Part 2 (panthor_sched*.cpp) fills them in.
#pragma once
#include "panthor/panthor_device.h"

namespace panthor {

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

}  // namespace panthor
