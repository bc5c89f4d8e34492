// Mirrors include/linux/pm_runtime.h and drivers/base/power/runtime.c: runtime PM with the
// kernel's semantics. A usage count keeps the device active; when it drops to zero the device
// suspends, after the autosuspend delay if autosuspend is in use. Suspend and resume callbacks
// (dev->pm) run in task context: synchronously for the _sync/resume_and_get forms, on the PM
// workqueue for the asynchronous ones (autosuspend expiry, put_autosuspend). A failed resume
// is reported to the caller (the device stays suspended, runtime_error keeps the errno until
// the next successful transition).
//
// System sleep (pm_runtime_force_suspend / _resume, which panthor's DEFINE_RUNTIME_DEV_PM_OPS
// uses) and device_pm_suspend/resume, the entry points a test or the simulator calls to suspend
// the "system", are here too.
#pragma once
#include "kernel_shim/device.h"
#include "kernel_shim/types.h"

namespace kshim {

struct DevPmOps {
    int (*runtime_suspend)(Device* dev) = nullptr;
    int (*runtime_resume)(Device* dev) = nullptr;
    int (*runtime_idle)(Device* dev) = nullptr;
    int (*suspend)(Device* dev) = nullptr;  // system sleep
    int (*resume)(Device* dev) = nullptr;
};

enum rpm_status { RPM_INVALID = -1, RPM_ACTIVE = 0, RPM_RESUMING, RPM_SUSPENDED, RPM_SUSPENDING };

// Allocates dev->power (if the creator did not) and sets it up disabled and suspended.
int pm_runtime_init(Device* dev);
// Frees dev->power; the device must be disabled.
void pm_runtime_release(Device* dev);

void pm_runtime_enable(Device* dev);
void pm_runtime_disable(Device* dev);
// Enables now and registers the disable (and dont_use_autosuspend) as a devres action.
int devm_pm_runtime_enable(Device* dev);
// Only while disabled: declares the hardware state. 0 or -EAGAIN when enabled.
int pm_runtime_set_active(Device* dev);
int pm_runtime_set_suspended(Device* dev);

// Increments the usage count and resumes synchronously. On failure the count is dropped again
// and the callback's errno returned (-EACCES while disabled and not active).
int pm_runtime_resume_and_get(Device* dev);
// Increments and resumes; returns 1 if already active, 0 if resumed, -errno (count kept).
int pm_runtime_get_sync(Device* dev);
// Increments only when active and in use: 1 if it did, 0 if not, -EINVAL when disabled.
int pm_runtime_get_if_in_use(Device* dev);
int pm_runtime_get_if_active(Device* dev);
void pm_runtime_get_noresume(Device* dev);
void pm_runtime_put_noidle(Device* dev);
// Decrements; at zero: suspends asynchronously (put), after the autosuspend delay
// (put_autosuspend), or synchronously (put_sync_suspend / put_sync).
int pm_runtime_put(Device* dev);
int pm_runtime_put_autosuspend(Device* dev);
int pm_runtime_put_sync(Device* dev);
int pm_runtime_put_sync_suspend(Device* dev);
void pm_runtime_mark_last_busy(Device* dev);
void pm_runtime_use_autosuspend(Device* dev);
void pm_runtime_dont_use_autosuspend(Device* dev);
void pm_runtime_set_autosuspend_delay(Device* dev, int delay_ms);
// Synchronous forms without touching the usage count.
int pm_runtime_suspend(Device* dev);
int pm_runtime_resume(Device* dev);
// Waits for pending asynchronous PM work (pm_runtime_barrier).
void pm_runtime_barrier(Device* dev);

bool pm_runtime_active(const Device* dev);
bool pm_runtime_suspended(const Device* dev);
bool pm_runtime_enabled(const Device* dev);
int pm_runtime_usage_count(const Device* dev);
rpm_status pm_runtime_status(const Device* dev);
// The errno of the last failed transition, 0 if the last one succeeded.
int pm_runtime_error(const Device* dev);

// System sleep helpers: suspend through the runtime callback unless already suspended / resume
// if it was active before force_suspend.
int pm_runtime_force_suspend(Device* dev);
int pm_runtime_force_resume(Device* dev);
// The "system" suspend/resume of one device: dev->pm->suspend / ->resume.
int device_pm_suspend(Device* dev);
int device_pm_resume(Device* dev);

}  // namespace kshim
