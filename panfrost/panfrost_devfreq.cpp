// Mirrors drivers/gpu/drm/panfrost/panfrost_devfreq.c: DVFS on the platform's OPP table with
// devfreq's simple_ondemand governor, fed by the busy/idle time of the job slots.
//
// DOC: A job going to the hardware records busy, its completion (or its removal by a reset)
// idle; the GPU counts as busy while any job is on it. Every polling period the governor asks
// for the busy and total time since the last poll and picks an OPP; target() sets the clock rate
// and the supply voltage through the OPP core. Runtime suspend stops the monitor, resume restarts
// it with fresh counts. No cooling device is registered.
#include "panfrost/panfrost_devfreq.h"

#include <climits>

#include "kernel_shim/clk.h"
#include "kernel_shim/err.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/report.h"
#include "panfrost/panfrost_device.h"

namespace panfrost {

namespace {

void panfrost_devfreq_update_utilization(panfrost_devfreq* pfdevfreq) {
    lockdep_assert_held(&pfdevfreq->lock);
    const kshim::ktime_t now = kshim::ktime_get();
    const kshim::ktime_t last = pfdevfreq->time_last_update;
    if (pfdevfreq->busy_count > 0)
        pfdevfreq->busy_time += kshim::ktime_sub(now, last);
    else
        pfdevfreq->idle_time += kshim::ktime_sub(now, last);
    pfdevfreq->time_last_update = now;
}

int panfrost_devfreq_target(kshim::Device* dev, unsigned long* freq, u32 flags) {
    auto* pfdev = static_cast<panfrost_device*>(kshim::dev_get_drvdata(dev));
    kshim::DevPmOpp* opp = kshim::devfreq_recommended_opp(dev, freq, flags);
    if (kshim::IS_ERR(opp))
        return static_cast<int>(kshim::PTR_ERR(opp));
    kshim::dev_pm_opp_put(opp);

    const int err = kshim::dev_pm_opp_set_rate(dev, *freq);
    if (!err)
        pfdev->pfdevfreq.current_frequency = *freq;
    return err;
}

void panfrost_devfreq_reset(panfrost_devfreq* pfdevfreq) {
    pfdevfreq->busy_time = 0;
    pfdevfreq->idle_time = 0;
    pfdevfreq->time_last_update = kshim::ktime_get();
}

int panfrost_devfreq_get_dev_status(kshim::Device* dev, kshim::devfreq_dev_status* status) {
    auto* pfdev = static_cast<panfrost_device*>(kshim::dev_get_drvdata(dev));
    panfrost_devfreq* pfdevfreq = &pfdev->pfdevfreq;

    status->current_frequency = kshim::clk_get_rate(pfdev->clock);
    {
        kshim::SpinGuard g(pfdevfreq->lock);
        panfrost_devfreq_update_utilization(pfdevfreq);
        status->total_time = static_cast<unsigned long>(pfdevfreq->busy_time + pfdevfreq->idle_time);
        status->busy_time = static_cast<unsigned long>(pfdevfreq->busy_time);
        panfrost_devfreq_reset(pfdevfreq);
    }
    dev_dbg(pfdev->dev, "busy %lu total %lu %lu %% freq %lu MHz", status->busy_time, status->total_time,
            status->total_time >= 100 ? status->busy_time / (status->total_time / 100) : 0,
            status->current_frequency / 1000 / 1000);
    return 0;
}

int panfrost_devfreq_get_cur_freq(kshim::Device* dev, unsigned long* freq) {
    auto* pfdev = static_cast<panfrost_device*>(kshim::dev_get_drvdata(dev));
    *freq = pfdev->pfdevfreq.current_frequency;
    return 0;
}

}  // namespace

int panfrost_devfreq_init(panfrost_device* pfdev) {
    panfrost_devfreq* pfdevfreq = &pfdev->pfdevfreq;
    kshim::Device* dev = pfdev->dev;
    unsigned long freq = ULONG_MAX;

    // The OPP core sets the supplies' voltage and enables them with the first OPP.
    int ret = kshim::devm_pm_opp_set_regulators(dev, pfdev->comp->supply_names);
    if (ret && ret != -ENODEV) {
        if (ret != -EPROBE_DEFER)
            dev_err(dev, "Couldn't set OPP regulators");
        return ret;
    }

    ret = kshim::devm_pm_opp_of_add_table(dev);
    if (ret) {
        // Optional: continue without devfreq.
        if (ret == -ENODEV)
            ret = 0;
        return ret;
    }
    pfdevfreq->opp_of_table_added = true;

    {
        kshim::SpinGuard g(pfdevfreq->lock);
        panfrost_devfreq_reset(pfdevfreq);
    }

    unsigned long cur_freq = kshim::clk_get_rate(pfdev->clock);
    kshim::DevPmOpp* opp = kshim::devfreq_recommended_opp(dev, &cur_freq, 0);
    if (kshim::IS_ERR(opp))
        return static_cast<int>(kshim::PTR_ERR(opp));
    pfdevfreq->profile.initial_freq = cur_freq;
    pfdevfreq->current_frequency = cur_freq;

    // Setting the recommended OPP configures and enables the supplies now.
    ret = kshim::dev_pm_opp_set_opp(dev, opp);
    kshim::dev_pm_opp_put(opp);
    if (ret) {
        dev_err(dev, "Couldn't set recommended OPP");
        return ret;
    }

    opp = kshim::dev_pm_opp_find_freq_floor(dev, &freq);
    if (kshim::IS_ERR(opp))
        return static_cast<int>(kshim::PTR_ERR(opp));
    kshim::dev_pm_opp_put(opp);
    pfdevfreq->fast_rate = freq;

    // Upstream's thresholds, found by experiment.
    pfdevfreq->gov_data.upthreshold = 45;
    pfdevfreq->gov_data.downdifferential = 5;

    pfdevfreq->profile.polling_ms = 50;  // ~3 frames
    pfdevfreq->profile.target = panfrost_devfreq_target;
    pfdevfreq->profile.get_dev_status = panfrost_devfreq_get_dev_status;
    pfdevfreq->profile.get_cur_freq = panfrost_devfreq_get_cur_freq;

    pfdevfreq->devfreq = kshim::devm_devfreq_add_device(dev, &pfdevfreq->profile, kshim::DEVFREQ_GOV_SIMPLE_ONDEMAND,
                                                        &pfdevfreq->gov_data);
    if (kshim::IS_ERR(pfdevfreq->devfreq)) {
        dev_err(dev, "Couldn't initialize GPU devfreq");
        ret = static_cast<int>(kshim::PTR_ERR(pfdevfreq->devfreq));
        pfdevfreq->devfreq = nullptr;
        return ret;
    }
    return 0;
}

void panfrost_devfreq_fini(panfrost_device*) {
    // The devfreq device and the OPP table are devres of the platform device.
}

void panfrost_devfreq_resume(panfrost_device* pfdev) {
    panfrost_devfreq* pfdevfreq = &pfdev->pfdevfreq;
    if (!pfdevfreq->devfreq)
        return;
    {
        kshim::SpinGuard g(pfdevfreq->lock);
        panfrost_devfreq_reset(pfdevfreq);
    }
    kshim::devfreq_resume_device(pfdevfreq->devfreq);
}

void panfrost_devfreq_suspend(panfrost_device* pfdev) {
    panfrost_devfreq* pfdevfreq = &pfdev->pfdevfreq;
    if (!pfdevfreq->devfreq)
        return;
    kshim::devfreq_suspend_device(pfdevfreq->devfreq);
}

void panfrost_devfreq_record_busy(panfrost_devfreq* pfdevfreq) {
    if (!pfdevfreq->devfreq)
        return;
    kshim::SpinGuard g(pfdevfreq->lock);
    panfrost_devfreq_update_utilization(pfdevfreq);
    pfdevfreq->busy_count++;
}

void panfrost_devfreq_record_idle(panfrost_devfreq* pfdevfreq) {
    if (!pfdevfreq->devfreq)
        return;
    kshim::SpinGuard g(pfdevfreq->lock);
    panfrost_devfreq_update_utilization(pfdevfreq);
    WARN_ON(--pfdevfreq->busy_count < 0);
}

}  // namespace panfrost
