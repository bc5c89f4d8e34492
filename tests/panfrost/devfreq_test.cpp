// panfrost_devfreq on the mock G52's OPP table: devfreq starts at an OPP with the supply at its
// voltage, the job slots' busy/idle accounting is what the governor sees during and after a job,
// the frequency the governor picks reaches the clock and the supply, runtime suspend stops the
// monitor and resume restarts it, and a reset keeps the accounting balanced.
#include <climits>

#include "kernel_shim/clk.h"
#include "kernel_shim/devfreq.h"
#include "kernel_shim/log.h"
#include "tests/panfrost/pf_job_fixture.h"

namespace panfrost::testing {
namespace {

constexpr unsigned long kFastRate = 800'000'000;
constexpr unsigned long kSlowRate = 200'000'000;
constexpr kshim::ktime_t kMs = kshim::NSEC_PER_MSEC;

class PanfrostDevfreqTest : public PfJobTest {
protected:
    // Each WRITE_VALUE job runs 100 ms of modelled time: a three-job chain keeps slot 1 busy for
    // 300 ms, under the 500 ms timeout.
    mock_jm::JmConfig jm_config() const override {
        mock_jm::JmConfig c;
        c.jm_lat.simple_job = 100 * kMs;
        return c;
    }
    kshim::Clk* clk() { return kshim::devm_clk_get(dev(), "gpu"); }
    kshim::Regulator* supply() { return kshim::devm_regulator_get(dev(), "mali"); }
    // What the governor's next poll would see (and, as a poll does, restart the counts).
    kshim::devfreq_dev_status status() {
        kshim::devfreq_dev_status st;
        EXPECT_EQ(pfdev->pfdevfreq.profile.get_dev_status(dev(), &st), 0);
        return st;
    }
    u64 long_chain(JobBo& bo, u64 target) {
        u64 prev = 0, head = 0;
        for (int i = 0; i < 3; i++) {
            prev = bo.write_value(target, static_cast<u64>(i + 1), prev);
            if (!head)
                head = prev;
        }
        return head;
    }
};

TEST_F(PanfrostDevfreqTest, StartsAtAnOppWithTheSupplyAtItsVoltage) {
    ASSERT_NE(pfdev->pfdevfreq.devfreq, nullptr);
    EXPECT_TRUE(pfdev->pfdevfreq.opp_of_table_added);
    EXPECT_EQ(pfdev->pfdevfreq.fast_rate, kFastRate);
    EXPECT_EQ(pfdev->pfdevfreq.current_frequency, kshim::clk_get_rate(clk()));
    EXPECT_EQ(kshim::clk_get_rate(clk()), kSlowRate) << "the DT rate is the lowest OPP";
    EXPECT_EQ(kshim::regulator_is_enabled(supply()), 1) << "the OPP core enabled the supply";
    EXPECT_EQ(kshim::regulator_get_voltage(supply()), 825'000);
}

TEST_F(PanfrostDevfreqTest, GovernorSeesBusyDuringAJobAndIdleAfter) {
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    kshim::dma_fence* f = submit_fenced({.jc = long_chain(bo, target), .bos = {bo.handle}});
    ASSERT_TRUE(run_until([&] { return pfdev->jobs[1][0] != nullptr; }, 10 * kMs));
    status();  // from here on
    advance(20 * kMs);
    kshim::devfreq_dev_status st = status();
    EXPECT_GT(st.total_time, 0u);
    EXPECT_EQ(st.busy_time, st.total_time) << "a job on the hardware is busy time";

    // Fully busy: the governor raises the clock to the fastest OPP within two polls, with the
    // supply at that OPP's voltage.
    EXPECT_TRUE(run_until([&] { return kshim::clk_get_rate(clk()) == kFastRate; }, 2 * 50 * kMs + 5 * kMs))
        << kshim::clk_get_rate(clk());
    EXPECT_EQ(pfdev->pfdevfreq.current_frequency, kFastRate);
    EXPECT_EQ(kshim::regulator_get_voltage(supply()), 1'000'000);

    ASSERT_TRUE(wait_signaled(f, kshim::NSEC_PER_SEC));
    EXPECT_EQ(bo.value(target), 3u);
    // Keep the GPU (and the monitor) up to watch it idle.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    status();
    advance(20 * kMs);
    st = status();
    EXPECT_GT(st.total_time, 0u);
    EXPECT_EQ(st.busy_time, 0u) << "no job, no busy time";
    EXPECT_EQ(pfdev->pfdevfreq.busy_count, 0);
    // Idle: back down to the slowest OPP.
    EXPECT_TRUE(run_until([&] { return kshim::clk_get_rate(clk()) == kSlowRate; }, 500 * kMs))
        << kshim::clk_get_rate(clk());
    EXPECT_EQ(pfdev->pfdevfreq.current_frequency, kSlowRate);
    EXPECT_EQ(kshim::regulator_get_voltage(supply()), 825'000);
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(PanfrostDevfreqTest, RuntimeSuspendStopsTheMonitorAndResumeRestartsIt) {
    kshim::Devfreq* df = pfdev->pfdevfreq.devfreq;
    ASSERT_TRUE(kshim::pm_runtime_suspended(dev()));
    const u64 rounds = kshim::devfreq_monitor_rounds(df);
    advance(500 * kMs);
    EXPECT_EQ(kshim::devfreq_monitor_rounds(df), rounds) << "no polling while suspended";

    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    advance(120 * kMs);
    EXPECT_GE(kshim::devfreq_monitor_rounds(df), rounds + 2) << "polling every 50 ms again";
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(PanfrostDevfreqTest, AResetLeavesTheAccountingBalanced) {
    JobBo bo = job_bo();
    kshim::dma_fence* f = submit_fenced({.jc = bo.endless(), .bos = {bo.handle}});
    ASSERT_TRUE(run_until([&] { return pfdev->jobs[1][0] != nullptr; }, 10 * kMs));
    EXPECT_EQ(pfdev->pfdevfreq.busy_count, 1);
    ASSERT_TRUE(wait_signaled(f, 2 * kshim::NSEC_PER_SEC));
    EXPECT_TRUE(kshim::log_contains("gpu sched timeout"));
    EXPECT_EQ(pfdev->pfdevfreq.busy_count, 0) << "the reset recorded the collected job idle";
}

}  // namespace
}  // namespace panfrost::testing
