// devfreq with simple_ondemand on an OPP table, in virtual time: the monitor's period, the
// governor's decisions, and the clock and supply following the chosen OPP.
#include <gtest/gtest.h>

#include "kernel_shim/clk.h"
#include "kernel_shim/devfreq.h"
#include "kernel_shim/err.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/time.h"
#include "tests/kshim/platform_test_util.h"
#include "tests/support/kernel_test.h"

using namespace kshim;
using kshim::testing::kMHz;
using kshim::testing::TestPlatform;

namespace {
// The load the fake driver reports, as panthor does: busy and total time since the last poll.
struct Load {
    int busy_pct = 100;
    ktime_t last = 0;
    int targets = 0;
};
Load g_load;

int load_target(Device* dev, unsigned long* freq, u32 flags) {
    g_load.targets++;
    DevPmOpp* opp = devfreq_recommended_opp(dev, freq, flags);
    if (IS_ERR(opp))
        return static_cast<int>(PTR_ERR(opp));
    return dev_pm_opp_set_rate(dev, *freq);
}

int load_status(Device* dev, devfreq_dev_status* st) {
    const ktime_t now = ktime_get();
    st->current_frequency = clk_get_rate(devm_clk_get(dev, "core"));
    st->total_time = static_cast<unsigned long>(now - g_load.last);
    st->busy_time = st->total_time / 100 * static_cast<unsigned long>(g_load.busy_pct);
    g_load.last = now;
    return 0;
}
}  // namespace

class DevfreqTest : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        g_load = {};
        tp_ = std::make_unique<TestPlatform>();
        dev = tp_->dev();
        static const char* const names[] = {"mali", nullptr};
        ASSERT_EQ(devm_pm_opp_set_regulators(dev, names), 0);
        ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
        core = devm_clk_get(dev, "core");
        mali = devm_regulator_get(dev, "mali");
        profile.polling_ms = 50;
        profile.target = load_target;
        profile.get_dev_status = load_status;
    }
    void TearDown() override {
        tp_.reset();  // removes the devfreq device through devres
        KernelTest::TearDown();
    }

    Devfreq* add(unsigned long initial_hz) {
        profile.initial_freq = initial_hz;
        unsigned long f = initial_hz;
        EXPECT_EQ(dev_pm_opp_set_opp(dev, devfreq_recommended_opp(dev, &f, 0)), 0);
        g_load.last = ktime_get();
        Devfreq* df = devm_devfreq_add_device(dev, &profile, DEVFREQ_GOV_SIMPLE_ONDEMAND, &gov);
        EXPECT_FALSE(IS_ERR(df));
        return df;
    }

    // msecs_to_jiffies rounds 50 ms up to 13 jiffies at HZ=250.
    const ktime_t period = static_cast<ktime_t>(jiffies_to_nsecs(msecs_to_jiffies(50)));
    // A round is a work item: it runs at its instant, but main may wake first at that instant.
    const ktime_t eps = NSEC_PER_USEC;
    devfreq_dev_profile profile;
    devfreq_simple_ondemand_data gov{.upthreshold = 45, .downdifferential = 5};
    Device* dev = nullptr;
    Clk* core = nullptr;
    Regulator* mali = nullptr;

private:
    std::unique_ptr<TestPlatform> tp_;
};

TEST_F(DevfreqTest, MonitorPollsEveryPollingPeriod) {
    EXPECT_EQ(period, 52 * NSEC_PER_MSEC);
    Devfreq* df = add(300 * kMHz);
    EXPECT_EQ(devfreq_monitor_rounds(df), 0u);
    advance(period - NSEC_PER_MSEC);
    EXPECT_EQ(devfreq_monitor_rounds(df), 0u);
    advance(NSEC_PER_MSEC + eps);
    EXPECT_EQ(devfreq_monitor_rounds(df), 1u);
    advance(4 * period - NSEC_PER_MSEC);
    EXPECT_EQ(devfreq_monitor_rounds(df), 4u);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(devfreq_monitor_rounds(df), 5u);
    EXPECT_EQ(g_load.targets, 5);
}

TEST_F(DevfreqTest, BusyLoadRaisesToTheTopOpp) {
    Devfreq* df = add(300 * kMHz);
    EXPECT_EQ(clk_get_rate(core), 300 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 650'000);
    g_load.busy_pct = 100;
    advance(period + eps);
    // Above the up-threshold: the maximum, clamped to the highest OPP.
    EXPECT_EQ(devfreq_last_target(df), 800 * kMHz);
    EXPECT_EQ(clk_get_rate(core), 800 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 800'000);
    EXPECT_EQ(dev_pm_opp_get_freq(dev_pm_opp_get_current(dev)), 800 * kMHz);
}

TEST_F(DevfreqTest, IdleLowersToTheBottomOpp) {
    Devfreq* df = add(800 * kMHz);
    g_load.busy_pct = 0;
    advance(period + eps);
    EXPECT_EQ(devfreq_last_target(df), 300 * kMHz);  // 0 Hz wanted, clamped to the lowest OPP
    EXPECT_EQ(clk_get_rate(core), 300 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 650'000);
    EXPECT_EQ(mali->enable_count, 1);
}

TEST_F(DevfreqTest, PartialLoadScalesWithHysteresis) {
    Devfreq* df = add(800 * kMHz);
    // 42% is inside (upthreshold - downdifferential, upthreshold]: keep the frequency.
    g_load.busy_pct = 42;
    advance(period + eps);
    EXPECT_EQ(devfreq_last_target(df), 800 * kMHz);
    // 20%: busy * freq * 100 / (upthreshold - downdifferential / 2) = 0.2 * 800 MHz * 100 / 43.
    g_load.busy_pct = 20;
    advance(period);
    const unsigned long want = devfreq_last_target(df);
    EXPECT_NEAR(static_cast<double>(want), 0.2 * 800e6 * 100 / 43, 1e4);
    // The ceiling OPP of ~372 MHz.
    EXPECT_EQ(clk_get_rate(core), 500 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 700'000);
}

TEST_F(DevfreqTest, SuspendStopsPollingAndResumeRestartsIt) {
    Devfreq* df = add(300 * kMHz);
    advance(2 * period + eps);
    EXPECT_EQ(devfreq_monitor_rounds(df), 2u);
    EXPECT_EQ(devfreq_suspend_device(df), 0);
    EXPECT_EQ(devfreq_suspend_device(df), 0);  // nests
    advance(ms_to_ktime(1000));
    EXPECT_EQ(devfreq_monitor_rounds(df), 2u);
    EXPECT_EQ(devfreq_resume_device(df), 0);
    advance(ms_to_ktime(1000));
    EXPECT_EQ(devfreq_monitor_rounds(df), 2u);  // still suspended once
    EXPECT_EQ(devfreq_resume_device(df), 0);
    advance(period);
    EXPECT_EQ(devfreq_monitor_rounds(df), 3u);
}

TEST_F(DevfreqTest, RecommendedOpp) {
    unsigned long f = 450 * kMHz;
    EXPECT_EQ(dev_pm_opp_get_freq(devfreq_recommended_opp(dev, &f, 0)), 500 * kMHz);
    f = 450 * kMHz;
    EXPECT_EQ(dev_pm_opp_get_freq(devfreq_recommended_opp(dev, &f, DEVFREQ_FLAG_LEAST_UPPER_BOUND)), 300 * kMHz);
    // Out of range: the closest OPP either way.
    f = 2000 * kMHz;
    devfreq_recommended_opp(dev, &f, 0);
    EXPECT_EQ(f, 800 * kMHz);
    f = 1;
    devfreq_recommended_opp(dev, &f, DEVFREQ_FLAG_LEAST_UPPER_BOUND);
    EXPECT_EQ(f, 300 * kMHz);
}

TEST_F(DevfreqTest, RejectsUnknownGovernorAndMissingOpps) {
    Devfreq* df = devm_devfreq_add_device(dev, &profile, "performance", nullptr);
    ASSERT_TRUE(IS_ERR(df));
    EXPECT_EQ(PTR_ERR(df), -EINVAL);

    TestPlatform bare;  // no OPP table added
    df = devm_devfreq_add_device(bare.dev(), &profile, DEVFREQ_GOV_SIMPLE_ONDEMAND, nullptr);
    ASSERT_TRUE(IS_ERR(df));
    EXPECT_EQ(PTR_ERR(df), -EINVAL);
}

TEST_F(DevfreqTest, FailingTargetIsLoggedAndPollingContinues) {
    Devfreq* df = add(300 * kMHz);
    profile.target = [](Device*, unsigned long*, u32) { return -EIO; };
    advance(2 * period + eps);
    EXPECT_EQ(devfreq_monitor_rounds(df), 2u);
    EXPECT_TRUE(log_contains("dvfs failed with (-5) error", LogLevel::Err));
    EXPECT_EQ(clk_get_rate(core), 300 * kMHz);
}
