// Configuration sweep in the manner of upstream's io-pgtable-arm selftest: page-size bitmaps x
// input VA bits x output PA bits, each run through the selftest sequence and the walker.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_shim/iommu/io_pgtable.h"
#include "tests/pgtable/pgtable_test_util.h"

using namespace iommu;
using namespace pgtable_test;

namespace {

struct Granule {
    const char* name;
    unsigned long pgsize_bitmap;
    unsigned max_bits;
};

const Granule kGranules[] = {
    {"G4K", SZ_4K | SZ_2M | SZ_1G, 48},
    {"G16K", SZ_16K | SZ_32M, 48},
    {"G64K", SZ_64K | SZ_512M | (1ul << 42), 52},
};

void PrintTo(const Granule& g, std::ostream* os) {
    *os << g.name;
}

using SweepParam = std::tuple<Granule, unsigned, unsigned>;

class IoPgtableSweep : public ::testing::TestWithParam<SweepParam> {};

std::vector<size_t> sizes_of(unsigned long bitmap) {
    std::vector<size_t> out;
    for (unsigned b = 0; b < 64; b++)
        if (bitmap & (1ul << b))
            out.push_back(size_t{1} << b);
    return out;
}

TEST_P(IoPgtableSweep, SelftestSequence) {
    const auto& [gran, ias, oas] = GetParam();
    LeakCheck leaks;
    TlbLog log;
    {
        IoPgtableCfg cfg;
        cfg.pgsize_bitmap = gran.pgsize_bitmap;
        cfg.ias = ias;
        cfg.oas = oas;
        cfg.tlb = TlbLog::ops();
        cfg.quirks = IO_PGTABLE_QUIRK_NO_WARN;
        IoPgtableOps* ops = alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg, &log);
        ASSERT_NE(ops, nullptr);

        // What the format settled on, and what the hardware would read from TCR.
        const unsigned eff_oas = std::min(oas, gran.max_bits);
        unsigned long expect_bitmap = gran.pgsize_bitmap;
        if (eff_oas <= 48)
            expect_bitmap &= ~(1ul << 42);  // 4T blocks need the 52-bit output format
        EXPECT_EQ(cfg.pgsize_bitmap, expect_bitmap);
        EXPECT_EQ(cfg.ias, ias);
        EXPECT_EQ(cfg.oas, eff_oas);
        const WalkerRegs regs = regs_of(cfg);
        const WalkerGeometry geo = lpae_geometry(regs.tcr);
        EXPECT_EQ(size_t{1} << geo.granule_shift, size_t(std::countr_zero(expect_bitmap) == 12   ? SZ_4K
                                                         : std::countr_zero(expect_bitmap) == 14 ? SZ_16K
                                                                                                 : SZ_64K));
        EXPECT_EQ(geo.input_bits, ias);
        EXPECT_EQ(geo.pa_bits, eff_oas);
        EXPECT_EQ(regs.mair, 0xf404ff44ull);

        const u64 va_limit = u64{1} << ias;
        const u64 pa_limit = u64{1} << eff_oas;
        const int prot = IOMMU_READ | IOMMU_WRITE | IOMMU_NOEXEC | IOMMU_CACHE;

        // Empty tables translate nothing.
        for (u64 va : {u64{42}, u64{SZ_1G + 42}, u64{2 * SZ_1G + 42}}) {
            EXPECT_EQ(ops->iova_to_phys(va), 0u);
            EXPECT_FALSE(lpae_walk(regs, va).ok);
        }

        // Distinct mappings of each page size; an overlapping map must fail.
        struct Placed {
            u64 iova;
            size_t size;
        };
        std::vector<Placed> placed;
        u64 cursor = 0;
        for (size_t size : sizes_of(cfg.pgsize_bitmap)) {
            u64 iova = (cursor + size - 1) & ~(u64{size} - 1);
            if (iova + size > va_limit || iova + size > pa_limit)
                continue;
            size_t mapped = 0;
            ASSERT_EQ(ops->map_pages(iova, iova, size, 1, prot, kshim::GFP_KERNEL, &mapped), 0) << size;
            EXPECT_EQ(mapped, size);
            EXPECT_EQ(ops->map_pages(iova, iova + size, size, 1, IOMMU_READ | IOMMU_NOEXEC, kshim::GFP_KERNEL, &mapped),
                      -EEXIST);
            EXPECT_EQ(ops->iova_to_phys(iova + 42), iova + 42);
            Translation t = lpae_walk(regs, iova + 42);
            ASSERT_TRUE(t.ok) << t.fault;
            EXPECT_EQ(t.pa, iova + 42);
            EXPECT_EQ(t.block_size, size);
            expect_leaf_attrs(t, prot, "size " + std::to_string(size));
            placed.push_back({iova, size});
            cursor = (iova + size + SZ_1G - 1) & ~u64{SZ_1G - 1};
        }
        ASSERT_FALSE(placed.empty());

        // Full unmap of each, then remap write-only.
        for (const Placed& p : placed) {
            EXPECT_EQ(ops->unmap_pages(p.iova, p.size, 1, nullptr), p.size);
            EXPECT_EQ(ops->iova_to_phys(p.iova + 42), 0u);
            EXPECT_FALSE(lpae_walk(regs, p.iova + 42).ok);
            size_t mapped = 0;
            ASSERT_EQ(ops->map_pages(p.iova, p.iova, p.size, 1, IOMMU_WRITE, kshim::GFP_KERNEL, &mapped), 0);
            Translation t = lpae_walk(regs, p.iova + 42);
            EXPECT_EQ(t.pa, p.iova + 42);
            expect_leaf_attrs(t, IOMMU_WRITE, "remap " + std::to_string(p.size));
        }
        for (const Placed& p : placed)
            EXPECT_EQ(ops->unmap_pages(p.iova, p.size, 1, nullptr), p.size);

        // The highest legal output address (exercises the 52-bit packing with 64K granules).
        const size_t page = placed[0].size;
        const u64 top_iova = va_limit - page;
        const u64 top_pa = pa_limit - page;
        size_t mapped = 0;
        ASSERT_EQ(ops->map_pages(top_iova, top_pa, page, 1, IOMMU_READ, kshim::GFP_KERNEL, &mapped), 0);
        Translation top = lpae_walk(regs, top_iova + page - 1);
        ASSERT_TRUE(top.ok) << top.fault;
        EXPECT_EQ(top.pa, top_pa + page - 1);
        EXPECT_EQ(ops->iova_to_phys(top_iova + page - 1), top_pa + page - 1);

        // A run of small pages across two leaf-table boundaries, every page checked.
        const size_t per_table = page / 8;
        const size_t count = 2 * per_table + 3;
        const u64 run = std::min<u64>(va_limit / 2, 1ull << 36) + (per_table - 1) * page;
        if (run + count * page <= top_iova) {
            const u64 pa = (pa_limit / 4) & ~(u64{page} - 1);
            ASSERT_EQ(ops->map_pages(run, pa, page, count, IOMMU_READ, kshim::GFP_KERNEL, &mapped), 0);
            for (size_t i = 0; i < count; i++) {
                Translation t = lpae_walk(regs, run + i * page + 8);
                ASSERT_TRUE(t.ok) << i << ": " << t.fault;
                ASSERT_EQ(t.pa, pa + i * page + 8) << i;
            }
            EXPECT_EQ(ops->unmap_pages(run, page, count, nullptr), count * page);
            EXPECT_FALSE(lpae_walk(regs, run + per_table * page).ok);
        }

        EXPECT_EQ(log.flush_all, 0);
        free_io_pgtable_ops(ops);
        EXPECT_EQ(log.flush_all, 1);
    }
    EXPECT_EQ(kshim::pending_report_count(), 0u);
    EXPECT_EQ(leaks.diff(), "");
}

std::string sweep_name(const ::testing::TestParamInfo<SweepParam>& info) {
    const auto& [gran, ias, oas] = info.param;
    return std::string(gran.name) + "_Ias" + std::to_string(ias) + "_Oas" + std::to_string(oas);
}

INSTANTIATE_TEST_SUITE_P(PgsizeIasOas, IoPgtableSweep,
                         ::testing::Combine(::testing::ValuesIn(kGranules),
                                            ::testing::Values(32u, 36u, 40u, 42u, 44u, 48u),
                                            ::testing::Values(32u, 40u, 48u, 52u)),
                         sweep_name);

}  // namespace
