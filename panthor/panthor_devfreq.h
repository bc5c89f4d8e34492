// Mirrors drivers/gpu/drm/panthor/panthor_devfreq.h: DVFS through devfreq's simple_ondemand on
// busy/idle time the driver records.
#pragma once
#include "panthor/panthor_device.h"

namespace panthor {

int panthor_devfreq_init(panthor_device* ptdev);
void panthor_devfreq_resume(panthor_device* ptdev);
void panthor_devfreq_suspend(panthor_device* ptdev);
// The scheduler records busy/idle transitions here.
void panthor_devfreq_record_busy(panthor_device* ptdev);
void panthor_devfreq_record_idle(panthor_device* ptdev);

}  // namespace panthor
