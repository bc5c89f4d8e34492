// Mirrors include/linux/pm_opp.h: the operating-performance-point table of a device
// (operating-points-v2), and setting an OPP through the device's clock and regulator.
#pragma once
#include "kernel_shim/device.h"
#include "kernel_shim/types.h"

namespace kshim {

struct DevPmOpp {
    unsigned long rate = 0;  // Hz
    unsigned long microvolt = 0;
};

// Attaches the named supplies (e.g. {"mali", nullptr}) to the device's OPP table: later
// dev_pm_opp_set_rate/set_opp set their voltage and enable them. 0 or -errno.
int devm_pm_opp_set_regulators(Device* dev, const char* const names[]);
// Populates the OPP table from the platform description. -ENODEV when there is none.
int devm_pm_opp_of_add_table(Device* dev);
int dev_pm_opp_get_opp_count(Device* dev);
// The lowest OPP with rate >= *freq (ceil) / highest with rate <= *freq (floor); *freq is set to
// its rate. ERR_PTR(-ERANGE) when none. OPPs are owned by the table: dev_pm_opp_put is a no-op.
DevPmOpp* dev_pm_opp_find_freq_ceil(Device* dev, unsigned long* freq);
DevPmOpp* dev_pm_opp_find_freq_floor(Device* dev, unsigned long* freq);
inline void dev_pm_opp_put(DevPmOpp*) {}
inline unsigned long dev_pm_opp_get_freq(const DevPmOpp* opp) {
    return opp->rate;
}
inline unsigned long dev_pm_opp_get_voltage(const DevPmOpp* opp) {
    return opp->microvolt;
}
// Sets the device's first clock to the OPP rate and the table's regulators to its voltage
// (enabling them on first use), raising the voltage before the rate and lowering it after.
int dev_pm_opp_set_opp(Device* dev, DevPmOpp* opp);
// As upstream: the clock gets `target_freq`, the voltage comes from the ceil OPP.
int dev_pm_opp_set_rate(Device* dev, unsigned long target_freq);
// The OPP the device runs at now (nullptr before any was set).
DevPmOpp* dev_pm_opp_get_current(Device* dev);

}  // namespace kshim
