// Platform devices, clocks, regulators, OPP tables and devres: what a driver's probe relies on.
#include <gtest/gtest.h>

#include <vector>

#include "kernel_shim/clk.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/pm_runtime.h"
#include "tests/kshim/platform_test_util.h"
#include "tests/support/kernel_test.h"

using namespace kshim;
using kshim::testing::kMHz;
using kshim::testing::TestPlatform;

class Platform : public kshim::testing::KernelTest {};

TEST_F(Platform, DescribesTheDevice) {
    TestPlatform tp(/*dma_coherent=*/true);
    PlatformDevice* pdev = tp.pdev();
    ASSERT_NE(pdev, nullptr);
    EXPECT_EQ(pdev->dev.name, "test.gpu");
    EXPECT_EQ(to_platform_device(&pdev->dev), pdev);
    EXPECT_TRUE(device_get_dma_attr_coherent(&pdev->dev));

    // Runtime PM starts disabled and suspended.
    EXPECT_FALSE(pm_runtime_enabled(&pdev->dev));
    EXPECT_EQ(pm_runtime_status(&pdev->dev), RPM_SUSPENDED);
    EXPECT_EQ(pm_runtime_usage_count(&pdev->dev), 0);

    int drvdata = 0;
    platform_set_drvdata(pdev, &drvdata);
    EXPECT_EQ(dev_get_drvdata(&pdev->dev), &drvdata);
    EXPECT_EQ(platform_get_drvdata(pdev), &drvdata);
}

TEST_F(Platform, IrqsByName) {
    TestPlatform tp;
    EXPECT_EQ(platform_get_irq_byname(tp.pdev(), "job"), &tp.irq_job());
    EXPECT_EQ(platform_get_irq_byname(tp.pdev(), "gpu"), &tp.irq_gpu());
    IrqLine* mmu = platform_get_irq_byname(tp.pdev(), "mmu");
    ASSERT_TRUE(IS_ERR(mmu));
    EXPECT_EQ(PTR_ERR(mmu), -ENXIO);
    EXPECT_TRUE(log_contains("IRQ mmu not found", LogLevel::Err));
}

TEST_F(Platform, IoremapGivesTheDeviceModelsIomem) {
    TestPlatform tp;
    Resource* res = nullptr;
    Iomem* io = devm_platform_get_and_ioremap_resource(tp.pdev(), 0, &res);
    ASSERT_FALSE(IS_ERR(io));
    ASSERT_NE(res, nullptr);
    EXPECT_EQ(res->start, 0xfb000000u);
    EXPECT_EQ(res->size, 0x10000u);

    std::vector<std::tuple<bool, u32, u32>> trace;
    io->trace_hook = [&](bool w, u32 off, u32 v) { trace.emplace_back(w, off, v); };
    writel(0x1234, io, 0x40);
    EXPECT_EQ(readl(io, 0x40), 0x1234u);
    ASSERT_EQ(trace.size(), 2u);
    EXPECT_EQ(trace[0], std::make_tuple(true, 0x40u, 0x1234u));
    EXPECT_EQ(trace[1], std::make_tuple(false, 0x40u, 0x1234u));
    io->trace_hook = nullptr;

    Iomem* none = devm_platform_get_and_ioremap_resource(tp.pdev(), 1, nullptr);
    ASSERT_TRUE(IS_ERR(none));
    EXPECT_EQ(PTR_ERR(none), -ENODEV);
}

TEST_F(Platform, ClocksByNameAndTheDefaultClock) {
    TestPlatform tp;
    Clk* core = devm_clk_get(tp.dev(), "core");
    ASSERT_FALSE(IS_ERR(core));
    EXPECT_STREQ(core->name, "core");
    EXPECT_EQ(devm_clk_get(tp.dev(), nullptr), core);  // NULL id: the first clock
    EXPECT_EQ(clk_get_rate(core), 200 * kMHz);
    EXPECT_EQ(clk_get_rate(devm_clk_get(tp.dev(), "stacks")), 100 * kMHz);

    Clk* missing = devm_clk_get(tp.dev(), "coregroup");
    ASSERT_TRUE(IS_ERR(missing));
    EXPECT_EQ(PTR_ERR(missing), -ENOENT);
    EXPECT_TRUE(log_contains("coregroup", LogLevel::Err));
    EXPECT_EQ(devm_clk_get_optional(tp.dev(), "coregroup"), nullptr);

    // A missing optional clock is a no-op clock.
    EXPECT_EQ(clk_prepare_enable(nullptr), 0);
    clk_disable_unprepare(nullptr);
    EXPECT_EQ(clk_get_rate(nullptr), 0u);
}

TEST_F(Platform, ClockCountsAndInjectedEnableFailure) {
    TestPlatform tp;
    Clk* core = devm_clk_get(tp.dev(), "core");
    ASSERT_EQ(clk_prepare_enable(core), 0);
    ASSERT_EQ(clk_prepare_enable(core), 0);
    EXPECT_EQ(core->prepare_count, 2);
    EXPECT_EQ(core->enable_count, 2);
    clk_disable_unprepare(core);
    clk_disable_unprepare(core);
    EXPECT_EQ(core->prepare_count, 0);
    EXPECT_EQ(core->enable_count, 0);

    core->fail_next_enable = -EIO;
    EXPECT_EQ(clk_prepare_enable(core), -EIO);
    EXPECT_EQ(core->prepare_count, 0);  // prepare undone
    EXPECT_EQ(core->enable_count, 0);
    EXPECT_EQ(core->fail_next_enable, 0);
    EXPECT_EQ(clk_prepare_enable(core), 0);  // only the next one failed
    clk_disable_unprepare(core);

    EXPECT_EQ(clk_set_rate(core, 400 * kMHz), 0);
    EXPECT_EQ(clk_get_rate(core), 400 * kMHz);
}

TEST_F(Platform, UnbalancedClockCallsWarn) {
    TestPlatform tp;
    Clk* core = devm_clk_get(tp.dev(), "core");
    clk_disable(core);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    clk_unprepare(core);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    EXPECT_EQ(clk_enable(core), -ESHUTDOWN);  // enabling an unprepared clock
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    EXPECT_EQ(core->enable_count, 0);
    EXPECT_EQ(core->prepare_count, 0);
}

TEST_F(Platform, Regulators) {
    TestPlatform tp;
    Regulator* mali = devm_regulator_get(tp.dev(), "mali");
    ASSERT_FALSE(IS_ERR(mali));
    Regulator* sram = devm_regulator_get(tp.dev(), "sram");
    ASSERT_TRUE(IS_ERR(sram));
    EXPECT_EQ(PTR_ERR(sram), -ENODEV);

    EXPECT_EQ(regulator_get_voltage(mali), 600'000);
    EXPECT_FALSE(regulator_is_enabled(mali));  // off at creation
    EXPECT_EQ(regulator_enable(mali), 0);
    EXPECT_TRUE(regulator_is_enabled(mali));
    EXPECT_EQ(regulator_set_voltage(mali, 750'000, 800'000), 0);
    EXPECT_EQ(regulator_get_voltage(mali), 750'000);
    EXPECT_EQ(regulator_set_voltage(mali, 800'000, 750'000), -EINVAL);
    EXPECT_EQ(regulator_disable(mali), 0);
    EXPECT_FALSE(regulator_is_enabled(mali));

    EXPECT_EQ(regulator_disable(mali), -EIO);
    EXPECT_TRUE(expect_report(ReportKind::Warn));

    mali->fail_next_enable = -ETIMEDOUT;
    EXPECT_EQ(regulator_enable(mali), -ETIMEDOUT);
    EXPECT_FALSE(regulator_is_enabled(mali));
}

TEST_F(Platform, OppTableLookups) {
    TestPlatform tp;
    Device* dev = tp.dev();
    EXPECT_EQ(dev_pm_opp_get_opp_count(dev), -ENODEV);  // not populated yet
    ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
    EXPECT_EQ(dev_pm_opp_get_opp_count(dev), 3);

    unsigned long f = 0;
    DevPmOpp* opp = dev_pm_opp_find_freq_ceil(dev, &f);
    ASSERT_FALSE(IS_ERR(opp));
    EXPECT_EQ(f, 300 * kMHz);
    EXPECT_EQ(dev_pm_opp_get_voltage(opp), 650'000u);

    f = 450 * kMHz;
    opp = dev_pm_opp_find_freq_ceil(dev, &f);
    EXPECT_EQ(f, 500 * kMHz);
    EXPECT_EQ(dev_pm_opp_get_freq(opp), 500 * kMHz);
    f = 450 * kMHz;
    opp = dev_pm_opp_find_freq_floor(dev, &f);
    EXPECT_EQ(f, 300 * kMHz);
    f = 500 * kMHz;
    dev_pm_opp_find_freq_floor(dev, &f);
    EXPECT_EQ(f, 500 * kMHz);  // exact match either way
    f = ULONG_MAX;
    dev_pm_opp_find_freq_floor(dev, &f);
    EXPECT_EQ(f, 800 * kMHz);

    f = 900 * kMHz;
    EXPECT_EQ(PTR_ERR(dev_pm_opp_find_freq_ceil(dev, &f)), -ERANGE);
    f = 100 * kMHz;
    EXPECT_EQ(PTR_ERR(dev_pm_opp_find_freq_floor(dev, &f)), -ERANGE);
}

TEST_F(Platform, SetOppDrivesClockAndSupply) {
    TestPlatform tp;
    Device* dev = tp.dev();
    static const char* const names[] = {"mali", nullptr};
    ASSERT_EQ(devm_pm_opp_set_regulators(dev, names), 0);
    ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
    Clk* core = devm_clk_get(dev, "core");
    Regulator* mali = devm_regulator_get(dev, "mali");
    EXPECT_EQ(dev_pm_opp_get_current(dev), nullptr);

    unsigned long f = 500 * kMHz;
    DevPmOpp* mid = dev_pm_opp_find_freq_ceil(dev, &f);
    ASSERT_EQ(dev_pm_opp_set_opp(dev, mid), 0);
    EXPECT_EQ(clk_get_rate(core), 500 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 700'000);
    EXPECT_EQ(mali->enable_count, 1);  // enabled on first use
    EXPECT_EQ(dev_pm_opp_get_current(dev), mid);

    // Between two OPPs: the clock gets the rate asked for, the supply the higher OPP's voltage.
    ASSERT_EQ(dev_pm_opp_set_rate(dev, 650 * kMHz), 0);
    EXPECT_EQ(clk_get_rate(core), 650 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 800'000);
    EXPECT_EQ(dev_pm_opp_get_freq(dev_pm_opp_get_current(dev)), 800 * kMHz);
    EXPECT_EQ(mali->enable_count, 1);  // enabled once

    EXPECT_EQ(dev_pm_opp_set_rate(dev, 900 * kMHz), -ERANGE);
    EXPECT_EQ(clk_get_rate(core), 650 * kMHz);

    // The table's removal turns the supply it enabled off.
    devres_release_all(dev);
    EXPECT_EQ(mali->enable_count, 0);
    EXPECT_EQ(dev_pm_opp_get_opp_count(dev), -ENODEV);
}

// A failing voltage change shows the order: up, the voltage goes first (so the clock does not
// move); down, the clock goes first (so it has moved).
TEST_F(Platform, VoltageRisesBeforeRateAndDropsAfter) {
    TestPlatform tp;
    Device* dev = tp.dev();
    static const char* const names[] = {"mali", nullptr};
    ASSERT_EQ(devm_pm_opp_set_regulators(dev, names), 0);
    ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
    Clk* core = devm_clk_get(dev, "core");
    Regulator* mali = devm_regulator_get(dev, "mali");
    ASSERT_EQ(dev_pm_opp_set_rate(dev, 500 * kMHz), 0);

    mali->fail_next_set_voltage = -EIO;
    EXPECT_EQ(dev_pm_opp_set_rate(dev, 800 * kMHz), -EIO);
    EXPECT_EQ(clk_get_rate(core), 500 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 700'000);

    mali->fail_next_set_voltage = -EIO;
    EXPECT_EQ(dev_pm_opp_set_rate(dev, 300 * kMHz), -EIO);
    EXPECT_EQ(clk_get_rate(core), 300 * kMHz);
    EXPECT_EQ(regulator_get_voltage(mali), 700'000);

    ASSERT_EQ(dev_pm_opp_set_rate(dev, 300 * kMHz), 0);
    EXPECT_EQ(regulator_get_voltage(mali), 650'000);
}

TEST_F(Platform, SetOppNullTurnsTheSupplyOff) {
    TestPlatform tp;
    Device* dev = tp.dev();
    static const char* const names[] = {"mali", nullptr};
    ASSERT_EQ(devm_pm_opp_set_regulators(dev, names), 0);
    ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
    Regulator* mali = devm_regulator_get(dev, "mali");
    ASSERT_EQ(dev_pm_opp_set_rate(dev, 300 * kMHz), 0);
    EXPECT_EQ(mali->enable_count, 1);
    ASSERT_EQ(dev_pm_opp_set_opp(dev, nullptr), 0);
    EXPECT_EQ(mali->enable_count, 0);
    EXPECT_EQ(dev_pm_opp_get_current(dev), nullptr);
}

TEST_F(Platform, MissingSupplyFailsWithEnodev) {
    TestPlatform tp;
    static const char* const names[] = {"sram", nullptr};
    EXPECT_EQ(devm_pm_opp_set_regulators(tp.dev(), names), -ENODEV);
    EXPECT_EQ(devres_count(tp.dev()), 0u);
}

TEST_F(Platform, DevresRunsInReverseOrder) {
    TestPlatform tp;
    Device* dev = tp.dev();
    std::vector<int> order;
    EXPECT_EQ(devres_count(dev), 0u);
    for (int i = 0; i < 4; i++)
        ASSERT_EQ(devm_add_action(dev, [&order, i] { order.push_back(i); }), 0);
    EXPECT_EQ(devres_count(dev), 4u);
    EXPECT_NE(dev->devres, nullptr);
    devres_release_all(dev);
    EXPECT_EQ(order, (std::vector<int>{3, 2, 1, 0}));
    EXPECT_EQ(dev->devres, nullptr);
    EXPECT_EQ(devres_count(dev), 0u);
    devres_release_all(dev);  // nothing left: a no-op
    EXPECT_EQ(order.size(), 4u);
}

TEST_F(Platform, DestroyReleasesDevres) {
    int released = 0;
    {
        TestPlatform tp;
        ASSERT_EQ(devm_add_action(tp.dev(), [&] { released++; }), 0);
    }
    EXPECT_EQ(released, 1);
}

TEST_F(Platform, FailedRegistrationResetsOnlyWithOrReset) {
    TestPlatform tp;
    Device* dev = tp.dev();
    int ran = 0;
    ASSERT_EQ(devm_add_action(dev, [&] { ran += 100; }), 0);

    fault_inject_arm({.fail_nth = 1, .only_cache = "devres"});
    EXPECT_EQ(devm_add_action(dev, [&] { ran += 1; }), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(ran, 0);  // plain devm_add_action leaves it to the caller

    fault_inject_arm({.fail_nth = 1, .only_cache = "devres"});
    EXPECT_EQ(devm_add_action_or_reset(dev, [&] { ran += 10; }), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(ran, 10);  // the _or_reset form ran it at once
    EXPECT_EQ(devres_count(dev), 1u);

    // kmalloc failures reach it too.
    fault_inject_arm({.fail_nth = 1, .only_cache = "kmalloc"});
    EXPECT_EQ(devm_add_action_or_reset(dev, [&] { ran += 1000; }), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(ran, 1010);

    devres_release_all(dev);
    EXPECT_EQ(ran, 1110);
}
