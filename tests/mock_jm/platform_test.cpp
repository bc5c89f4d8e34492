// JmPlatform: the mock Mali-G52 as the RK356x platform device panfrost probes.
#include <gtest/gtest.h>

#include "hw/jm/regs/gpu_regs.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/pm_opp.h"
#include "mock_jm/jm_platform.h"
#include "tests/support/kernel_test.h"

namespace {

using namespace kshim;
using mock_jm::JmPlatform;

class JmPlatformTest : public kshim::testing::KernelTest {};

TEST_F(JmPlatformTest, DescribesTheRk356xGpuNode) {
    JmPlatform plat;
    PlatformDevice* pdev = plat.pdev();
    ASSERT_NE(pdev, nullptr);
    EXPECT_EQ(pdev->dev.name, "fde60000.gpu");
    EXPECT_EQ(pdev->desc.compatible, "rockchip,rk3568-mali");
    EXPECT_EQ(platform_get_irq_byname(pdev, "job"), &plat.gpu().irq_job());
    EXPECT_EQ(platform_get_irq_byname(pdev, "mmu"), &plat.gpu().irq_mmu());
    EXPECT_EQ(platform_get_irq_byname(pdev, "gpu"), &plat.gpu().irq_gpu());
    // panfrost takes the first clock unnamed and "bus" optionally.
    Clk* gpu = devm_clk_get(&pdev->dev, nullptr);
    ASSERT_FALSE(IS_ERR(gpu));
    EXPECT_STREQ(gpu->name, "gpu");
    EXPECT_NE(devm_clk_get_optional(&pdev->dev, "bus"), nullptr);
    EXPECT_EQ(devm_clk_get_optional(&pdev->dev, "coregroup"), nullptr) << "a G610 clock the RK356x node lacks";
    Regulator* mali = devm_regulator_get(&pdev->dev, "mali");
    ASSERT_FALSE(IS_ERR(mali));
    EXPECT_EQ(regulator_get_voltage(mali), 825'000);
    ASSERT_EQ(devm_pm_opp_of_add_table(&pdev->dev), 0);
    EXPECT_EQ(dev_pm_opp_get_opp_count(&pdev->dev), 6);
    devres_release_all(&pdev->dev);
}

TEST_F(JmPlatformTest, MmioReachesTheG52Registers) {
    JmPlatform plat;
    Resource* res = nullptr;
    Iomem* io = devm_platform_get_and_ioremap_resource(plat.pdev(), 0, &res);
    ASSERT_FALSE(IS_ERR(io));
    EXPECT_EQ(res->start, 0xfde60000u);
    EXPECT_EQ(res->size, JmPlatform::kMmioSize);
    EXPECT_EQ(readl(io, panfrost::GPU_ID), 0x74021000u);
    EXPECT_EQ(readl(io, panfrost::GPU_JS_PRESENT), 0x7u);
    writel(0x5, io, panfrost::GPU_INT_MASK);
    EXPECT_EQ(plat.gpu().read32(panfrost::GPU_INT_MASK), 0x5u);
    devres_release_all(&plat.pdev()->dev);
}

}  // namespace
