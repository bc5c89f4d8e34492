// Mirrors drivers/gpu/drm/panfrost/panfrost_devfreq.h: DVFS through devfreq's simple_ondemand on
// the busy/idle time the job slots record.
#pragma once
#include "kernel_shim/devfreq.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/time.h"

namespace panfrost {

struct panfrost_device;

struct panfrost_devfreq {
    kshim::Devfreq* devfreq = nullptr;
    // The profile is per device here (upstream's is a static shared by every device).
    kshim::devfreq_dev_profile profile;
    kshim::devfreq_simple_ondemand_data gov_data;
    // The platform has an OPP table: the OPP core owns the supplies.
    bool opp_of_table_added = false;

    unsigned long current_frequency = 0;
    unsigned long fast_rate = 0;

    // Protects busy_time, idle_time, time_last_update and busy_count: the devfreq monitor reads
    // them (get_dev_status) while the job slots record busy/idle transitions.
    kshim::SpinLock lock{"panfrost_devfreq.lock"};
    kshim::ktime_t busy_time = 0;
    kshim::ktime_t idle_time = 0;
    kshim::ktime_t time_last_update = 0;
    int busy_count = 0;  // jobs on the hardware
};

// Optional: without an OPP table (-ENODEV) the driver runs at the clock's rate without devfreq.
int panfrost_devfreq_init(panfrost_device* pfdev);
void panfrost_devfreq_fini(panfrost_device* pfdev);
void panfrost_devfreq_resume(panfrost_device* pfdev);
void panfrost_devfreq_suspend(panfrost_device* pfdev);
// A job went to the hardware / left it.
void panfrost_devfreq_record_busy(panfrost_devfreq* pfdevfreq);
void panfrost_devfreq_record_idle(panfrost_devfreq* pfdevfreq);

}  // namespace panfrost
