// Mirrors drivers/opp/core.c and of.c (the single-clock, single-config-regulator case): the OPP
// table comes from the platform description, its clock is the device's first clock.
#include "kernel_shim/pm_opp.h"

#include <algorithm>
#include <climits>

#include "kernel_shim/clk.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/log.h"
#include "kernel_shim/platform_internal.h"

namespace kshim {
namespace {

OppTable* opp_table(Device* dev) {
    return &platform_state(dev)->opp;
}

Clk* opp_table_clk(Device* dev) {
    auto& clks = platform_state(dev)->clks;
    return clks.empty() ? nullptr : &clks[0];
}

DevPmOpp* find_freq_ceil(OppTable* t, unsigned long* freq) {
    if (!t->added)
        return ERR_PTR<DevPmOpp>(-ENODEV);
    for (DevPmOpp& opp : t->opps)
        if (opp.rate >= *freq) {
            *freq = opp.rate;
            return &opp;
        }
    return ERR_PTR<DevPmOpp>(-ERANGE);
}

DevPmOpp* find_freq_floor(OppTable* t, unsigned long* freq) {
    if (!t->added)
        return ERR_PTR<DevPmOpp>(-ENODEV);
    for (auto it = t->opps.rbegin(); it != t->opps.rend(); ++it)
        if (it->rate <= *freq) {
            *freq = it->rate;
            return &*it;
        }
    return ERR_PTR<DevPmOpp>(-ERANGE);
}

int config_regulators_locked(Device* dev, OppTable* t, const DevPmOpp* opp) {
    lockdep_assert_held(&t->lock);
    for (Regulator* reg : t->regulators) {
        int uv = static_cast<int>(opp->microvolt);
        int ret = regulator_set_voltage(reg, uv, uv);
        if (ret) {
            dev_err(dev, "failed to set voltage (%d %d uV): %d", uv, uv, ret);
            return ret;
        }
    }
    if (t->enabled)
        return 0;
    for (size_t i = 0; i < t->regulators.size(); i++) {
        int ret = regulator_enable(t->regulators[i]);
        if (ret) {
            dev_err(dev, "failed to enable regulator: %d", ret);
            while (i--)
                regulator_disable(t->regulators[i]);
            return ret;
        }
    }
    return 0;
}

void disable_opp_table_locked(OppTable* t) {
    lockdep_assert_held(&t->lock);
    if (t->enabled)
        for (Regulator* reg : t->regulators)
            regulator_disable(reg);
    t->enabled = false;
    t->current = nullptr;
}

// _set_opp: the voltage must already allow the new rate when the rate goes up, and may only
// drop once the rate is down.
int set_opp_locked(Device* dev, OppTable* t, DevPmOpp* opp, unsigned long rate) {
    lockdep_assert_held(&t->lock);
    if (t->current == opp && t->current_rate == rate && t->enabled)
        return 0;
    const bool scaling_down = t->current && t->enabled && opp->rate < t->current->rate;
    if (!scaling_down) {
        int ret = config_regulators_locked(dev, t, opp);
        if (ret)
            return ret;
    }
    int ret = clk_set_rate(opp_table_clk(dev), rate);
    if (ret) {
        dev_err(dev, "failed to set clock rate: %d", ret);
        return ret;
    }
    t->current_rate = rate;
    if (scaling_down) {
        ret = config_regulators_locked(dev, t, opp);
        if (ret)
            return ret;
    }
    t->enabled = true;
    t->current = opp;
    return 0;
}

}  // namespace

int devm_pm_opp_set_regulators(Device* dev, const char* const names[]) {
    OppTable* t = opp_table(dev);
    std::vector<Regulator*> regs;
    for (size_t i = 0; names && names[i]; i++) {
        Regulator* reg = devm_regulator_get(dev, names[i]);
        if (IS_ERR(reg))
            return static_cast<int>(PTR_ERR(reg));
        regs.push_back(reg);
    }
    {
        MutexGuard g(t->lock);
        t->regulators = std::move(regs);
    }
    // dev_pm_opp_put_regulators: supplies enabled through the table are disabled with it.
    return devm_add_action_or_reset(dev, [t] {
        MutexGuard g(t->lock);
        disable_opp_table_locked(t);
        t->regulators.clear();
    });
}

int devm_pm_opp_of_add_table(Device* dev) {
    OppTable* t = opp_table(dev);
    const auto& desc = to_platform_device(dev)->desc.opps;
    if (desc.empty())
        return -ENODEV;
    {
        MutexGuard g(t->lock);
        if (t->added)
            return -EBUSY;
        for (const PlatformOpp& o : desc)
            t->opps.push_back(DevPmOpp{.rate = o.hz, .microvolt = o.microvolt});
        std::sort(t->opps.begin(), t->opps.end(), [](const DevPmOpp& a, const DevPmOpp& b) { return a.rate < b.rate; });
        t->added = true;
    }
    return devm_add_action_or_reset(dev, [t] {
        MutexGuard g(t->lock);
        t->current = nullptr;
        t->opps.clear();
        t->added = false;
    });
}

int dev_pm_opp_get_opp_count(Device* dev) {
    OppTable* t = opp_table(dev);
    MutexGuard g(t->lock);
    return t->added ? static_cast<int>(t->opps.size()) : -ENODEV;
}

DevPmOpp* dev_pm_opp_find_freq_ceil(Device* dev, unsigned long* freq) {
    OppTable* t = opp_table(dev);
    MutexGuard g(t->lock);
    return find_freq_ceil(t, freq);
}

DevPmOpp* dev_pm_opp_find_freq_floor(Device* dev, unsigned long* freq) {
    OppTable* t = opp_table(dev);
    MutexGuard g(t->lock);
    return find_freq_floor(t, freq);
}

int dev_pm_opp_set_opp(Device* dev, DevPmOpp* opp) {
    OppTable* t = opp_table(dev);
    MutexGuard g(t->lock);
    if (!opp) {  // a NULL OPP turns the table's supplies off
        disable_opp_table_locked(t);
        return 0;
    }
    return set_opp_locked(dev, t, opp, opp->rate);
}

int dev_pm_opp_set_rate(Device* dev, unsigned long target_freq) {
    OppTable* t = opp_table(dev);
    MutexGuard g(t->lock);
    if (!target_freq) {
        disable_opp_table_locked(t);
        return 0;
    }
    unsigned long freq = target_freq;
    DevPmOpp* opp = find_freq_ceil(t, &freq);
    if (IS_ERR(opp)) {
        int ret = static_cast<int>(PTR_ERR(opp));
        dev_err(dev, "dev_pm_opp_set_rate: failed to find OPP for freq %lu (%d)", target_freq, ret);
        return ret;
    }
    // The OPP gives the voltage needed up to its rate; the clock gets what was asked for.
    return set_opp_locked(dev, t, opp, target_freq);
}

DevPmOpp* dev_pm_opp_get_current(Device* dev) {
    OppTable* t = opp_table(dev);
    MutexGuard g(t->lock);
    return t->current;
}

}  // namespace kshim
