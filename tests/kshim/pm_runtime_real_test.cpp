// Runtime PM and devfreq on real threads and the real clock (the tsan preset runs these).
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "kernel_shim/clk.h"
#include "kernel_shim/devfreq.h"
#include "kernel_shim/err.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/time.h"
#include "tests/kshim/platform_test_util.h"
#include "tests/kshim/pm_runtime_test_util.h"
#include "tests/support/kernel_test.h"

using namespace kshim;
using kshim::testing::PmProbe;
using kshim::testing::TestPlatform;

class PmRuntimeReal : public kshim::testing::RealKernelTest {};

TEST_F(PmRuntimeReal, ConcurrentUsersAndAutosuspend) {
    TestPlatform tp;
    Device* dev = tp.dev();
    PmProbe probe;
    dev->driver_data = &probe;
    dev->pm = &kshim::testing::kProbePmOps;
    pm_runtime_set_autosuspend_delay(dev, 1);
    pm_runtime_use_autosuspend(dev);
    pm_runtime_enable(dev);

    std::atomic<int> failures{0};
    std::vector<Task*> ts;
    for (int i = 0; i < 4; i++)
        ts.push_back(kthread_run(
            [&] {
                for (int k = 0; k < 200; k++) {
                    if (pm_runtime_resume_and_get(dev) != 0) {
                        failures++;
                        continue;
                    }
                    if (pm_runtime_status(dev) != RPM_ACTIVE)
                        failures++;
                    pm_runtime_mark_last_busy(dev);
                    pm_runtime_put_autosuspend(dev);
                    if (k % 16 == 0)
                        msleep(3);  // long enough for an autosuspend, now and then
                }
                return 0;
            },
            "pm_user"));
    for (Task* t : ts)
        kthread_stop(t);
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(probe.max_in_callback, 1);  // transitions never overlap

    EXPECT_TRUE(run_until([&] { return pm_runtime_status(dev) == RPM_SUSPENDED; }, 5 * NSEC_PER_SEC));
    EXPECT_EQ(pm_runtime_usage_count(dev), 0);
    EXPECT_GE(probe.resumes, 1);
    RecordProperty("resumes", probe.resumes.load());
    EXPECT_EQ(probe.resumes, probe.suspends);
    pm_runtime_disable(dev);
}

namespace {
std::atomic<int> g_busy_pct{100};

int real_target(Device* dev, unsigned long* freq, u32 flags) {
    DevPmOpp* opp = devfreq_recommended_opp(dev, freq, flags);
    if (IS_ERR(opp))
        return static_cast<int>(PTR_ERR(opp));
    return dev_pm_opp_set_rate(dev, *freq);
}

int real_status(Device* dev, devfreq_dev_status* st) {
    st->current_frequency = dev_pm_opp_get_current(dev) ? dev_pm_opp_get_freq(dev_pm_opp_get_current(dev)) : 0;
    st->total_time = 1'000'000;
    st->busy_time = 10'000ul * static_cast<unsigned long>(g_busy_pct.load());
    return 0;
}
}  // namespace

TEST_F(PmRuntimeReal, DevfreqMonitorRunsAndStops) {
    TestPlatform tp;
    Device* dev = tp.dev();
    ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
    devfreq_dev_profile profile;
    profile.polling_ms = 5;
    profile.target = real_target;
    profile.get_dev_status = real_status;
    g_busy_pct = 100;
    Devfreq* df = devm_devfreq_add_device(dev, &profile, DEVFREQ_GOV_SIMPLE_ONDEMAND, nullptr);
    ASSERT_FALSE(IS_ERR(df));
    EXPECT_TRUE(run_until([&] { return devfreq_monitor_rounds(df) >= 3; }, 5 * NSEC_PER_SEC));
    EXPECT_EQ(clk_get_rate(devm_clk_get(dev, "core")), 800 * kshim::testing::kMHz);

    // suspend waits for a round in progress, so none can start afterwards.
    EXPECT_EQ(devfreq_suspend_device(df), 0);
    const u64 rounds = devfreq_monitor_rounds(df);
    msleep(30);
    EXPECT_EQ(devfreq_monitor_rounds(df), rounds);
    EXPECT_EQ(devfreq_resume_device(df), 0);
    EXPECT_TRUE(run_until([&] { return devfreq_monitor_rounds(df) > rounds; }, 5 * NSEC_PER_SEC));
    // The platform device's destruction removes the devfreq device (devres).
}
