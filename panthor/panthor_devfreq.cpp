// Mirrors drivers/gpu/drm/panthor/panthor_devfreq.c: DVFS through devfreq's simple_ondemand
// governor, fed with the busy and idle time the scheduler records.
//
// Differences: the devfreq profile lives in panthor_devfreq (upstream's is a static shared by
// every device), panthor_devfreq itself is freed by a devres action of the platform device (upstream
// ties it to the DRM device), and no cooling device is registered.
#include "panthor/panthor_devfreq.h"

#include <climits>

#include "kernel_shim/clk.h"
#include "kernel_shim/devfreq.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"

namespace panthor {

struct panthor_devfreq {
    kshim::Devfreq* devfreq = nullptr;
    kshim::devfreq_dev_profile profile;
    kshim::devfreq_simple_ondemand_data gov_data;

    // Protects busy_time, idle_time, time_last_update and last_busy_state: the devfreq
    // monitor reads them (get_dev_status) while the scheduler records busy/idle transitions.
    kshim::SpinLock lock{"panthor_devfreq.lock"};
    kshim::ktime_t busy_time = 0;
    kshim::ktime_t idle_time = 0;
    kshim::ktime_t time_last_update = 0;
    bool last_busy_state = false;  // whether the GPU was busy at the last update
};

namespace {

void panthor_devfreq_update_utilization(panthor_devfreq* pdevfreq) {
    lockdep_assert_held(&pdevfreq->lock);
    const kshim::ktime_t now = kshim::ktime_get();
    const kshim::ktime_t last = pdevfreq->time_last_update;
    if (pdevfreq->last_busy_state)
        pdevfreq->busy_time += kshim::ktime_sub(now, last);
    else
        pdevfreq->idle_time += kshim::ktime_sub(now, last);
    pdevfreq->time_last_update = now;
}

int panthor_devfreq_target(kshim::Device* dev, unsigned long* freq, u32 flags) {
    auto* ptdev = static_cast<panthor_device*>(kshim::dev_get_drvdata(dev));
    kshim::DevPmOpp* opp = kshim::devfreq_recommended_opp(dev, freq, flags);
    if (kshim::IS_ERR(opp))
        return static_cast<int>(kshim::PTR_ERR(opp));
    kshim::dev_pm_opp_put(opp);

    int err = kshim::dev_pm_opp_set_rate(dev, *freq);
    if (!err)
        ptdev->current_frequency = *freq;
    return err;
}

void panthor_devfreq_reset(panthor_devfreq* pdevfreq) {
    pdevfreq->busy_time = 0;
    pdevfreq->idle_time = 0;
    pdevfreq->time_last_update = kshim::ktime_get();
}

int panthor_devfreq_get_dev_status(kshim::Device* dev, kshim::devfreq_dev_status* status) {
    auto* ptdev = static_cast<panthor_device*>(kshim::dev_get_drvdata(dev));
    panthor_devfreq* pdevfreq = ptdev->devfreq;

    status->current_frequency = kshim::clk_get_rate(ptdev->clks.core);
    {
        kshim::SpinGuard g(pdevfreq->lock);
        panthor_devfreq_update_utilization(pdevfreq);
        status->total_time = static_cast<unsigned long>(pdevfreq->busy_time + pdevfreq->idle_time);
        status->busy_time = static_cast<unsigned long>(pdevfreq->busy_time);
        panthor_devfreq_reset(pdevfreq);
    }
    dev_dbg(ptdev->dev, "busy %lu total %lu %lu %% freq %lu MHz", status->busy_time, status->total_time,
            status->total_time >= 100 ? status->busy_time / (status->total_time / 100) : 0,
            status->current_frequency / 1000 / 1000);
    return 0;
}

// Upstream keeps a coupled "sram" supply on for the device's lifetime; the OPP core only drives
// the "mali" one.
int panthor_devfreq_enable_sram(kshim::Device* dev) {
    kshim::Regulator* sram = kshim::devm_regulator_get(dev, "sram");
    if (kshim::IS_ERR(sram))
        return kshim::PTR_ERR(sram) == -ENODEV ? 0 : static_cast<int>(kshim::PTR_ERR(sram));
    int ret = kshim::regulator_enable(sram);
    if (ret)
        return ret;
    return kshim::devm_add_action_or_reset(dev, [sram] { kshim::regulator_disable(sram); });
}

}  // namespace

int panthor_devfreq_init(panthor_device* ptdev) {
    static const char* const reg_names[] = {"mali", nullptr};
    kshim::Device* dev = ptdev->dev;
    unsigned long freq = ULONG_MAX;
    int ret;

    auto* pdevfreq = kshim::knew<panthor_devfreq>(kshim::GFP_KERNEL);
    if (!pdevfreq)
        return -ENOMEM;
    ptdev->devfreq = pdevfreq;
    ret = kshim::devm_add_action_or_reset(dev, [ptdev, pdevfreq] {
        ptdev->devfreq = nullptr;
        kshim::kdelete(pdevfreq);
    });
    if (ret)
        return ret;

    ret = kshim::devm_pm_opp_set_regulators(dev, reg_names);
    if (ret && ret != -ENODEV) {
        if (ret != -EPROBE_DEFER)
            dev_err(dev, "Couldn't set OPP regulators");
        return ret;
    }

    ret = kshim::devm_pm_opp_of_add_table(dev);
    if (ret)
        return ret;

    panthor_devfreq_reset(pdevfreq);

    unsigned long cur_freq = kshim::clk_get_rate(ptdev->clks.core);

    ret = panthor_devfreq_enable_sram(dev);
    if (ret) {
        if (ret != -EPROBE_DEFER)
            dev_err(dev, "Couldn't retrieve/enable sram supply");
        return ret;
    }

    kshim::DevPmOpp* opp = kshim::devfreq_recommended_opp(dev, &cur_freq, 0);
    if (kshim::IS_ERR(opp))
        return static_cast<int>(kshim::PTR_ERR(opp));

    pdevfreq->profile.initial_freq = cur_freq;
    ptdev->current_frequency = cur_freq;

    // Setting the recommended OPP enables and configures the regulator now.
    ret = kshim::dev_pm_opp_set_opp(dev, opp);
    kshim::dev_pm_opp_put(opp);
    if (ret) {
        dev_err(dev, "Couldn't set recommended OPP");
        return ret;
    }

    opp = kshim::dev_pm_opp_find_freq_floor(dev, &freq);
    if (kshim::IS_ERR(opp))
        return static_cast<int>(kshim::PTR_ERR(opp));
    ptdev->fast_rate = freq;
    kshim::dev_pm_opp_put(opp);

    // Thresholds found by experiment upstream.
    pdevfreq->gov_data.upthreshold = 45;
    pdevfreq->gov_data.downdifferential = 5;

    pdevfreq->profile.polling_ms = 50;  // about three frames
    pdevfreq->profile.target = panthor_devfreq_target;
    pdevfreq->profile.get_dev_status = panthor_devfreq_get_dev_status;

    pdevfreq->devfreq = kshim::devm_devfreq_add_device(dev, &pdevfreq->profile, kshim::DEVFREQ_GOV_SIMPLE_ONDEMAND,
                                                       &pdevfreq->gov_data);
    if (kshim::IS_ERR(pdevfreq->devfreq)) {
        dev_err(dev, "Couldn't initialize GPU devfreq");
        ret = static_cast<int>(kshim::PTR_ERR(pdevfreq->devfreq));
        pdevfreq->devfreq = nullptr;
        return ret;
    }
    return 0;
}

void panthor_devfreq_resume(panthor_device* ptdev) {
    panthor_devfreq* pdevfreq = ptdev->devfreq;
    if (!pdevfreq || !pdevfreq->devfreq)
        return;
    {
        kshim::SpinGuard g(pdevfreq->lock);
        panthor_devfreq_reset(pdevfreq);
    }
    WARN_ON(kshim::devfreq_resume_device(pdevfreq->devfreq));
}

void panthor_devfreq_suspend(panthor_device* ptdev) {
    panthor_devfreq* pdevfreq = ptdev->devfreq;
    if (!pdevfreq || !pdevfreq->devfreq)
        return;
    WARN_ON(kshim::devfreq_suspend_device(pdevfreq->devfreq));
}

void panthor_devfreq_record_busy(panthor_device* ptdev) {
    panthor_devfreq* pdevfreq = ptdev->devfreq;
    if (!pdevfreq || !pdevfreq->devfreq)
        return;
    kshim::SpinGuard g(pdevfreq->lock);
    panthor_devfreq_update_utilization(pdevfreq);
    pdevfreq->last_busy_state = true;
}

void panthor_devfreq_record_idle(panthor_device* ptdev) {
    panthor_devfreq* pdevfreq = ptdev->devfreq;
    if (!pdevfreq || !pdevfreq->devfreq)
        return;
    kshim::SpinGuard g(pdevfreq->lock);
    panthor_devfreq_update_utilization(pdevfreq);
    pdevfreq->last_busy_state = false;
}

}  // namespace panthor
