// Mirrors include/linux/devfreq.h with the simple_ondemand governor: every polling_ms the
// monitor asks the driver for busy/total time (get_dev_status), picks the next frequency and
// calls the driver's target(); suspend/resume stop and restart the monitor.
#pragma once
#include "kernel_shim/device.h"
#include "kernel_shim/types.h"

namespace kshim {

struct devfreq_dev_status {
    unsigned long total_time = 0;
    unsigned long busy_time = 0;
    unsigned long current_frequency = 0;
    void* private_data = nullptr;
};

inline constexpr u32 DEVFREQ_FLAG_LEAST_UPPER_BOUND = 0x1;

struct devfreq_dev_profile {
    unsigned long initial_freq = 0;
    unsigned polling_ms = 0;
    int (*target)(Device* dev, unsigned long* freq, u32 flags) = nullptr;
    int (*get_dev_status)(Device* dev, devfreq_dev_status* stat) = nullptr;
    int (*get_cur_freq)(Device* dev, unsigned long* freq) = nullptr;
};

struct devfreq_simple_ondemand_data {
    unsigned upthreshold = 90;
    unsigned downdifferential = 5;
};

inline constexpr const char* DEVFREQ_GOV_SIMPLE_ONDEMAND = "simple_ondemand";

struct Devfreq;  // opaque

// Registers a devfreq device whose frequencies are the device's OPPs; the monitor starts at
// once. Registers its removal as a devres action. ERR_PTR(-errno) on failure (unknown governor:
// -EINVAL).
Devfreq* devm_devfreq_add_device(Device* dev, devfreq_dev_profile* profile, const char* governor, void* data);
int devfreq_suspend_device(Devfreq* df);
int devfreq_resume_device(Devfreq* df);
// The OPP closest to *freq under `flags` (LEAST_UPPER_BOUND: floor, else ceil); *freq updated.
struct DevPmOpp* devfreq_recommended_opp(Device* dev, unsigned long* freq, u32 flags);
// Tests: how many monitor rounds ran and the last frequency target() was asked for.
u64 devfreq_monitor_rounds(const Devfreq* df);
unsigned long devfreq_last_target(const Devfreq* df);

}  // namespace kshim
