// Internal to kernel_shim's platform-device services (platform.cpp, clk.cpp, pm_opp.cpp): what a
// platform device owns besides its description. Drivers use platform.h, clk.h and pm_opp.h.
#pragma once
#include <vector>

#include "kernel_shim/clk.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/platform.h"
#include "kernel_shim/pm_opp.h"

namespace kshim {

// The device's operating-points-v2 table and the supplies attached to it (drivers/opp/opp.h).
struct OppTable {
    // Serialises OPP changes and protects everything below but `opps`, which is fixed between
    // devm_pm_opp_of_add_table and the table's removal.
    Mutex lock{"opp_table.lock"};
    std::vector<DevPmOpp> opps;  // ascending rate
    bool added = false;
    std::vector<Regulator*> regulators;
    bool enabled = false;  // the regulators were enabled by a set_opp
    DevPmOpp* current = nullptr;
    unsigned long current_rate = 0;  // what the clock was last set to through the table
};

struct PlatformDeviceState {
    std::vector<Clk> clks;              // in desc.clks order; clks[0] is the OPP table's clock
    std::vector<Regulator> regulators;  // in desc.regulators order
    OppTable opp;
};

// The state of the platform device `dev` is embedded in (every Device handed to the clock, OPP
// and devfreq services is a platform device's).
inline PlatformDeviceState* platform_state(Device* dev) {
    return to_platform_device(dev)->state;
}

}  // namespace kshim
