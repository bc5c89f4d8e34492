// Mirrors drivers/devfreq/devfreq.c (the delayed-work load monitor, update_devfreq, suspend/
// resume, devfreq_recommended_opp) and governor_simpleondemand.c. The frequency table is the
// device's OPP table; there is no sysfs, no QoS, no transition notifier, and one governor.
//
// Like upstream, the monitor period is polling_ms rounded up to jiffies (52 ms for 50 ms at
// HZ=250), since it is a delayed work.
#include "kernel_shim/devfreq.h"

#include <atomic>
#include <climits>
#include <cstring>

#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/log.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/workqueue.h"

namespace kshim {

struct Devfreq {
    Device* parent = nullptr;  // the device whose frequency is scaled (devfreq->dev.parent)
    devfreq_dev_profile* profile = nullptr;
    devfreq_simple_ondemand_data* data = nullptr;
    workqueue_struct* wq = nullptr;  // devfreq_wq
    delayed_work work;               // devfreq_monitor

    // Protects everything below; held across the governor and the driver's target().
    Mutex lock{"devfreq.lock"};
    unsigned long previous_freq = 0;
    unsigned long scaling_min_freq = 0;
    unsigned long scaling_max_freq = 0;
    bool stop_polling = false;
    devfreq_dev_status last_status;

    std::atomic<int> suspend_count{0};
    // Tests.
    std::atomic<u64> monitor_rounds{0};
    std::atomic<unsigned long> last_target{0};
};

namespace {

constexpr unsigned long DEVFREQ_MAX_FREQ = ULONG_MAX;
constexpr unsigned DFSO_UPTHRESHOLD = 90;
constexpr unsigned DFSO_DOWNDIFFERENTIAL = 5;

unsigned long find_available_min_freq(Device* dev) {
    unsigned long freq = 0;
    DevPmOpp* opp = dev_pm_opp_find_freq_ceil(dev, &freq);
    return IS_ERR(opp) ? 0 : freq;
}

unsigned long find_available_max_freq(Device* dev) {
    unsigned long freq = ULONG_MAX;
    DevPmOpp* opp = dev_pm_opp_find_freq_floor(dev, &freq);
    return IS_ERR(opp) ? 0 : freq;
}

int devfreq_update_stats(Devfreq* df) {
    return df->profile->get_dev_status(df->parent, &df->last_status);
}

int devfreq_simple_ondemand_func(Devfreq* df, unsigned long* freq) {
    int err = devfreq_update_stats(df);
    if (err)
        return err;
    devfreq_dev_status* stat = &df->last_status;

    unsigned upthreshold = DFSO_UPTHRESHOLD;
    unsigned downdifferential = DFSO_DOWNDIFFERENTIAL;
    if (df->data) {
        if (df->data->upthreshold)
            upthreshold = df->data->upthreshold;
        if (df->data->downdifferential)
            downdifferential = df->data->downdifferential;
    }
    if (upthreshold > 100 || upthreshold < downdifferential)
        return -EINVAL;

    if (stat->total_time == 0) {  // would divide by zero: assume busy
        *freq = DEVFREQ_MAX_FREQ;
        return 0;
    }
    // Keep the products below 64 bits.
    if (stat->busy_time >= (1u << 24) || stat->total_time >= (1u << 24)) {
        stat->busy_time >>= 7;
        stat->total_time >>= 7;
    }
    if (stat->busy_time * 100 > stat->total_time * upthreshold) {
        *freq = DEVFREQ_MAX_FREQ;
        return 0;
    }
    if (stat->current_frequency == 0) {
        *freq = DEVFREQ_MAX_FREQ;
        return 0;
    }
    if (stat->busy_time * 100 > stat->total_time * (upthreshold - downdifferential)) {
        *freq = stat->current_frequency;
        return 0;
    }
    // Scale to the frequency at which the load would sit in the middle of the hysteresis band.
    unsigned long long a = stat->busy_time;
    a *= stat->current_frequency;
    unsigned long long b = a / stat->total_time;
    b *= 100;
    b /= upthreshold - downdifferential / 2;
    *freq = static_cast<unsigned long>(b);
    return 0;
}

int devfreq_set_target(Devfreq* df, unsigned long new_freq, u32 flags) {
    lockdep_assert_held(&df->lock);
    df->last_target.store(new_freq);
    int err = df->profile->target(df->parent, &new_freq, flags);
    if (err)
        return err;
    df->previous_freq = new_freq;
    return 0;
}

int update_devfreq(Devfreq* df) {
    lockdep_assert_held(&df->lock);
    unsigned long freq = 0;
    u32 flags = 0;
    int err = devfreq_simple_ondemand_func(df, &freq);
    if (err)
        return err;
    // Out of range: the lowest OPP is a greatest-lower-bound, the highest a least-upper-bound.
    if (freq < df->scaling_min_freq) {
        freq = df->scaling_min_freq;
        flags &= ~DEVFREQ_FLAG_LEAST_UPPER_BOUND;
    }
    if (freq > df->scaling_max_freq) {
        freq = df->scaling_max_freq;
        flags |= DEVFREQ_FLAG_LEAST_UPPER_BOUND;
    }
    return devfreq_set_target(df, freq, flags);
}

void devfreq_monitor(work_struct* work) {
    Devfreq* df = container_of(to_delayed_work(work), Devfreq, work);
    MutexGuard g(df->lock);
    df->monitor_rounds.fetch_add(1);
    int err = update_devfreq(df);
    if (err)
        dev_err(df->parent, "dvfs failed with (%d) error", err);
    if (!df->stop_polling)
        queue_delayed_work(df->wq, &df->work, msecs_to_jiffies(df->profile->polling_ms));
}

void devfreq_monitor_start(Devfreq* df) {
    if (df->profile->polling_ms)
        queue_delayed_work(df->wq, &df->work, msecs_to_jiffies(df->profile->polling_ms));
}

void devfreq_monitor_stop(Devfreq* df) {
    {
        MutexGuard g(df->lock);
        df->stop_polling = true;
    }
    cancel_delayed_work_sync(&df->work);
}

void devfreq_monitor_suspend(Devfreq* df) {
    {
        MutexGuard g(df->lock);
        if (df->stop_polling)
            return;
        df->stop_polling = true;
    }
    cancel_delayed_work_sync(&df->work);
}

void devfreq_monitor_resume(Devfreq* df) {
    MutexGuard g(df->lock);
    if (!df->stop_polling)
        return;
    if (!delayed_work_pending(&df->work) && df->profile->polling_ms)
        queue_delayed_work(df->wq, &df->work, msecs_to_jiffies(df->profile->polling_ms));
    df->stop_polling = false;
    unsigned long freq;
    if (df->profile->get_cur_freq && !df->profile->get_cur_freq(df->parent, &freq))
        df->previous_freq = freq;
}

void devfreq_remove_device(Devfreq* df) {
    devfreq_monitor_stop(df);
    destroy_workqueue(df->wq);
    kdelete(df);
}

}  // namespace

Devfreq* devm_devfreq_add_device(Device* dev, devfreq_dev_profile* profile, const char* governor, void* data) {
    if (!dev || !profile || !profile->target || !profile->get_dev_status)
        return ERR_PTR<Devfreq>(-EINVAL);
    if (!governor || std::strcmp(governor, DEVFREQ_GOV_SIMPLE_ONDEMAND) != 0) {
        dev_err(dev, "devfreq: unknown governor %s", governor ? governor : "(null)");
        return ERR_PTR<Devfreq>(-EINVAL);
    }
    if (dev_pm_opp_get_opp_count(dev) <= 0)
        return ERR_PTR<Devfreq>(-EINVAL);

    auto* df = knew<Devfreq>(GFP_KERNEL);
    if (!df)
        return ERR_PTR<Devfreq>(-ENOMEM);
    df->parent = dev;
    df->profile = profile;
    df->data = static_cast<devfreq_simple_ondemand_data*>(data);
    df->previous_freq = profile->initial_freq;
    df->last_status.current_frequency = profile->initial_freq;
    df->scaling_min_freq = find_available_min_freq(dev);
    df->scaling_max_freq = find_available_max_freq(dev);
    INIT_DELAYED_WORK(&df->work, devfreq_monitor);
    df->wq = alloc_workqueue("devfreq_wq:%s", WQ_FREEZABLE | WQ_UNBOUND, 1, dev->name.c_str());
    if (!df->wq) {
        kdelete(df);
        return ERR_PTR<Devfreq>(-ENOMEM);
    }
    devfreq_monitor_start(df);
    int ret = devm_add_action_or_reset(dev, [df] { devfreq_remove_device(df); });
    if (ret)
        return ERR_PTR<Devfreq>(ret);
    return df;
}

int devfreq_suspend_device(Devfreq* df) {
    if (!df)
        return -EINVAL;
    if (df->suspend_count.fetch_add(1) + 1 > 1)
        return 0;
    devfreq_monitor_suspend(df);
    return 0;
}

int devfreq_resume_device(Devfreq* df) {
    if (!df)
        return -EINVAL;
    if (df->suspend_count.fetch_sub(1) - 1 >= 1)
        return 0;
    devfreq_monitor_resume(df);
    return 0;
}

DevPmOpp* devfreq_recommended_opp(Device* dev, unsigned long* freq, u32 flags) {
    DevPmOpp* opp;
    if (flags & DEVFREQ_FLAG_LEAST_UPPER_BOUND) {
        // *freq is an upper bound: the highest OPP under it, else the closest above.
        opp = dev_pm_opp_find_freq_floor(dev, freq);
        if (PTR_ERR(opp) == -ERANGE)
            opp = dev_pm_opp_find_freq_ceil(dev, freq);
    } else {
        opp = dev_pm_opp_find_freq_ceil(dev, freq);
        if (PTR_ERR(opp) == -ERANGE)
            opp = dev_pm_opp_find_freq_floor(dev, freq);
    }
    return opp;
}

u64 devfreq_monitor_rounds(const Devfreq* df) {
    return df->monitor_rounds.load();
}
unsigned long devfreq_last_target(const Devfreq* df) {
    return df->last_target.load();
}

}  // namespace kshim
