// The mock MMU's walker (written from the architecture) against kshim's io-pgtable (written
// from upstream's io-pgtable-arm): tables built by one must translate the same in the other.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/iommu/iommu.h"
#include "kernel_shim/page_alloc.h"
#include "mock_hw/lpae_walker.h"
#include "tests/mock_hw/mock_test.h"
#include "tests/support/kernel_test.h"

namespace {

using namespace iommu;
using kshim::u64;

class WalkerCrossCheck : public kshim::testing::KernelTest, public ::testing::WithParamInterface<unsigned> {};

TEST_P(WalkerCrossCheck, MockWalkerTranslatesIoPgtableTablesLikeIovaToPhys) {
    IoPgtableCfg cfg;
    cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
    cfg.ias = 48;
    cfg.oas = 40;
    cfg.coherent_walk = true;
    IoPgtableOps* ops = alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr);
    ASSERT_NE(ops, nullptr);

    std::mt19937_64 rng(GetParam());
    struct Mapping {
        u64 size;
        int prot;
    };
    std::map<u64, Mapping> maps;  // iova -> mapping, never overlapping
    const u64 sizes[] = {SZ_4K, SZ_2M, SZ_1G};
    for (int i = 0; i < 200; i++) {
        const u64 pgsize = sizes[rng() % (i % 10 == 0 ? 3 : 2)];
        const u64 count = pgsize == SZ_4K ? 1 + rng() % 8 : 1;
        const u64 iova = (rng() % (u64{1} << 47)) & ~(pgsize - 1);
        const u64 pa = kshim::kPhysBase + ((rng() % (u64{32} << 30)) & ~(pgsize - 1));
        const int prot = IOMMU_READ | (rng() % 2 ? IOMMU_WRITE : 0) | (rng() % 2 ? IOMMU_NOEXEC : 0) | IOMMU_CACHE;
        size_t mapped = 0;
        if (ops->map_pages(iova, pa, pgsize, count, prot, kshim::GFP_KERNEL, &mapped) == 0)
            maps[iova] = {pgsize * count, prot};
        else
            ASSERT_EQ(mapped, 0u);  // an overlap: nothing half-mapped
    }
    ASSERT_GT(maps.size(), 100u);

    mock_hw::AsConfig as;
    as.transtab = cfg.arm_lpae_s1_cfg.ttbr;
    as.memattr = mock_hw::testing::kMemattr;
    as.transcfg = mock_hw::testing::kTranscfg48;
    as.pa_bits = 40;
    auto check = [&](u64 va) {
        const u64 want = ops->iova_to_phys(va);
        const mock_hw::WalkResult r = mock_hw::lpae_walk(as, va);
        if (!want) {
            EXPECT_FALSE(r.ok) << std::hex << "va 0x" << va << " is unmapped for io-pgtable";
            return;
        }
        ASSERT_TRUE(r.ok) << std::hex << "va 0x" << va << " exception 0x" << int(r.exception);
        EXPECT_EQ(r.t.pa_base + (va - r.t.va_base), want) << std::hex << "va 0x" << va;
    };
    for (auto& [iova, m] : maps) {
        check(iova);
        check(iova + m.size - 8);
        check(iova + m.size);  // just past: mapped only if a neighbour starts there
        const mock_hw::WalkResult r = mock_hw::lpae_walk(as, iova);
        ASSERT_TRUE(r.ok);
        EXPECT_EQ(r.t.read_only, !(m.prot & IOMMU_WRITE)) << std::hex << iova;
        EXPECT_EQ(r.t.xn, (m.prot & IOMMU_NOEXEC) != 0) << std::hex << iova;
        EXPECT_EQ(mock_hw::check_permission(as, r.t, mock_hw::Access::Write) == 0, (m.prot & IOMMU_WRITE) != 0);
    }
    for (int i = 0; i < 2000; i++)
        check(rng() % (u64{1} << 48));

    // Unmapping shows up in the walker too.
    for (auto& [iova, m] : maps) {
        const u64 pgsize = m.size >= SZ_1G ? SZ_1G : m.size >= SZ_2M ? SZ_2M : SZ_4K;
        EXPECT_EQ(ops->unmap_pages(iova, pgsize, m.size / pgsize, nullptr), m.size);
        EXPECT_FALSE(mock_hw::lpae_walk(as, iova).ok);
    }
    free_io_pgtable_ops(ops);
}

INSTANTIATE_TEST_SUITE_P(Seeds, WalkerCrossCheck, ::testing::Values(1u, 2u, 3u, 42u),
                         [](const ::testing::TestParamInfo<unsigned>& i) { return "seed" + std::to_string(i.param); });

}  // namespace
