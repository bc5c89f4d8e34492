// MockPlatform: the mock GPU as the platform device a driver probes.
#include <gtest/gtest.h>

#include "hw/csf/regs/csf_regs.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/pm_runtime.h"
#include "mock_hw/platform.h"
#include "tests/support/kernel_test.h"

using namespace kshim;
using mock_hw::MockPlatform;

class MockPlatformTest : public kshim::testing::KernelTest {};

TEST_F(MockPlatformTest, DescribesTheRk3588GpuNode) {
    MockPlatform plat;
    PlatformDevice* pdev = plat.pdev();
    ASSERT_NE(pdev, nullptr);
    EXPECT_EQ(pdev->dev.name, "fb000000.gpu");
    EXPECT_EQ(pdev->desc.compatible, "rockchip,rk3588-mali");
    EXPECT_FALSE(device_get_dma_attr_coherent(&pdev->dev));

    EXPECT_EQ(platform_get_irq_byname(pdev, "job"), &plat.gpu().irq_job());
    EXPECT_EQ(platform_get_irq_byname(pdev, "mmu"), &plat.gpu().irq_mmu());
    EXPECT_EQ(platform_get_irq_byname(pdev, "gpu"), &plat.gpu().irq_gpu());

    Clk* core = devm_clk_get(&pdev->dev, nullptr);
    ASSERT_FALSE(IS_ERR(core));
    EXPECT_STREQ(core->name, "core");
    EXPECT_EQ(clk_get_rate(core), 200'000'000u);
    EXPECT_NE(devm_clk_get_optional(&pdev->dev, "coregroup"), nullptr);
    EXPECT_NE(devm_clk_get_optional(&pdev->dev, "stacks"), nullptr);
    Regulator* mali = devm_regulator_get(&pdev->dev, "mali");
    ASSERT_FALSE(IS_ERR(mali));
    EXPECT_EQ(regulator_get_voltage(mali), 675'000);
    EXPECT_FALSE(regulator_is_enabled(mali));
}

TEST_F(MockPlatformTest, OppTableIsRk3588) {
    MockPlatform plat;
    Device* dev = &plat.pdev()->dev;
    ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
    ASSERT_EQ(dev_pm_opp_get_opp_count(dev), 8);
    const unsigned long mhz[] = {300, 400, 500, 600, 700, 800, 900, 1000};
    const unsigned long uv[] = {675000, 675000, 675000, 675000, 700000, 750000, 800000, 850000};
    unsigned long f = 0;
    for (int i = 0; i < 8; i++, f++) {
        DevPmOpp* opp = dev_pm_opp_find_freq_ceil(dev, &f);
        ASSERT_FALSE(IS_ERR(opp));
        EXPECT_EQ(f, mhz[i] * 1'000'000);
        EXPECT_EQ(dev_pm_opp_get_voltage(opp), uv[i]);
    }
    devres_release_all(dev);
}

TEST_F(MockPlatformTest, MmioReachesTheGpuRegisters) {
    MockPlatform plat;
    Resource* res = nullptr;
    Iomem* io = devm_platform_get_and_ioremap_resource(plat.pdev(), 0, &res);
    ASSERT_FALSE(IS_ERR(io));
    EXPECT_EQ(res->start, 0xfb000000u);
    EXPECT_EQ(res->size, panthor::GPU_MMIO_SIZE);
    EXPECT_EQ(readl(io, panthor::GPU_ID), 0xA8670005u);
    EXPECT_EQ(readl(io, panthor::GPU_AS_PRESENT), plat.gpu().config().id.as_present);
    // A write lands in the GPU: the interrupt mask reads back.
    writel(0x5, io, panthor::GPU_INT_MASK);
    EXPECT_EQ(plat.gpu().read32(panthor::GPU_INT_MASK), 0x5u);
}

TEST_F(MockPlatformTest, PlatformConfigIsConfigurable) {
    mock_hw::GpuConfig cfg;
    cfg.platform.core_clk_hz = 500'000'000;
    cfg.platform.mali_supply_microvolt = 700'000;
    cfg.platform.dma_coherent = true;
    cfg.platform.opps = {{400'000'000, 650'000}, {600'000'000, 700'000}};
    MockPlatform plat(cfg);
    Device* dev = &plat.pdev()->dev;
    EXPECT_EQ(clk_get_rate(devm_clk_get(dev, "core")), 500'000'000u);
    EXPECT_EQ(regulator_get_voltage(devm_regulator_get(dev, "mali")), 700'000);
    EXPECT_TRUE(device_get_dma_attr_coherent(dev));
    ASSERT_EQ(devm_pm_opp_of_add_table(dev), 0);
    EXPECT_EQ(dev_pm_opp_get_opp_count(dev), 2);
    // The platform device is destroyed first, with its devres.
}
