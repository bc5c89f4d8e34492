// Tests for the ARM_MALI_LPAE format of kernel_shim/iommu/io_pgtable_arm.cpp: the TRANSTAB and
// MEMATTR it returns, the configurations it refuses, the exact descriptor bits it writes, and the
// selftest sequence, map/unmap semantics, table lifetime, TLB callbacks and allocation failure
// the stage-1 tests cover, all checked through the independent Mali walker (lpae_walker.h).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/page_alloc.h"
#include "tests/pgtable/pgtable_test_util.h"

using namespace iommu;
using namespace pgtable_test;

namespace {

constexpr u64 kAddr = 0x0000fffffffff000ull;
constexpr u64 kXn = 3ull << 53;

// panfrost's configuration on a Mali-G52: ias/oas from MMU_FEATURES (48/40), 4K pages + 2M blocks.
IoPgtableCfg panfrost_cfg(TlbLog* log = nullptr) {
    IoPgtableCfg cfg;
    cfg.pgsize_bitmap = SZ_4K | SZ_2M;
    cfg.ias = 48;
    cfg.oas = 40;
    cfg.coherent_walk = false;
    cfg.tlb = log ? TlbLog::ops() : nullptr;
    return cfg;
}

IoPgtableOps* alloc_mali(IoPgtableCfg* cfg, void* cookie = nullptr) {
    return alloc_io_pgtable_ops(IoPgtableFmt::ARM_MALI_LPAE, cfg, cookie);
}

class MaliPgtable {
public:
    explicit MaliPgtable(IoPgtableCfg cfg, void* cookie = nullptr) : cfg_(cfg) { ops_ = alloc_mali(&cfg_, cookie); }
    ~MaliPgtable() { free_io_pgtable_ops(ops_); }
    IoPgtableOps* operator->() { return ops_; }
    IoPgtableOps* get() { return ops_; }
    const IoPgtableCfg& cfg() const { return cfg_; }
    Translation walk(u64 va) const { return mali_lpae_walk(mali_regs_of(cfg_), va); }

    int map(u64 iova, u64 pa, size_t pgsize, size_t count, int prot = kRW, kshim::gfp_t gfp = kshim::GFP_KERNEL) {
        size_t mapped = 0;
        int ret = ops_->map_pages(iova, pa, pgsize, count, prot, gfp, &mapped);
        EXPECT_EQ(mapped, ret ? 0 : pgsize * count) << "map_pages reports partial progress";
        return ret;
    }

private:
    IoPgtableCfg cfg_;
    IoPgtableOps* ops_;
};

// ---------------------------------------------------------------------------------------------
// Configuration

TEST(MaliPgtableCfg, PanfrostG52Registers) {
    LeakCheck leaks;
    {
        IoPgtableCfg cfg = panfrost_cfg();
        cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G | SZ_64K | SZ_16K;  // only the 4K granule's sizes stay
        MaliPgtable pt(cfg);
        ASSERT_NE(pt.get(), nullptr);
        const auto& out = pt.cfg();
        EXPECT_EQ(out.pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G);
        EXPECT_EQ(out.ias, 48u);
        EXPECT_EQ(out.oas, 40u);
        // READ_INNER | ADRMODE_TABLE, and nothing else below the table address.
        EXPECT_EQ(out.arm_mali_lpae_cfg.transtab & 0xfff, 0x7u);
        const MaliTranstab tt = mali_decode_transtab(out.arm_mali_lpae_cfg.transtab);
        EXPECT_EQ(tt.adrmode, 3u);
        EXPECT_TRUE(tt.read_inner);
        EXPECT_FALSE(tt.share_outer);
        EXPECT_EQ(tt.reserved, 0u);
        EXPECT_NE(tt.table, 0u);
        EXPECT_TRUE(kshim::phys_range_valid(tt.table, 64));
        EXPECT_LT(tt.table, 1ull << 40);
        // Byte 0 (non-cached) and 2 (device) implementation-defined, byte 1 (cached) write-alloc.
        EXPECT_EQ(out.arm_mali_lpae_cfg.memattr, 0x888D88ull);
        // The stage-1 outputs are not this format's.
        EXPECT_EQ(out.arm_lpae_s1_cfg.ttbr, 0u);
        EXPECT_EQ(out.arm_lpae_s1_cfg.mair, 0u);
    }
    {
        IoPgtableCfg cfg = panfrost_cfg();
        cfg.coherent_walk = true;
        MaliPgtable pt(cfg);
        ASSERT_NE(pt.get(), nullptr);
        EXPECT_EQ(pt.cfg().arm_mali_lpae_cfg.transtab & 0xfff, 0x17u);  // | SHARE_OUTER
        EXPECT_TRUE(mali_decode_transtab(pt.cfg().arm_mali_lpae_cfg.transtab).share_outer);
        EXPECT_EQ(pt.cfg().arm_mali_lpae_cfg.memattr, 0x888D88ull);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(MaliPgtableCfg, RejectsWhatUpstreamRejects) {
    LeakCheck leaks;
    // No quirk at all, not even the ones the stage-1 format takes.
    for (unsigned long quirk : {IO_PGTABLE_QUIRK_ARM_NS, IO_PGTABLE_QUIRK_ARM_OUTER_WBWA, IO_PGTABLE_QUIRK_NO_WARN}) {
        IoPgtableCfg cfg = panfrost_cfg();
        cfg.quirks = quirk;
        EXPECT_EQ(alloc_mali(&cfg), nullptr) << quirk;
        IoPgtableCfg s1 = panfrost_cfg();
        s1.quirks = quirk;
        IoPgtableOps* ops = alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &s1, nullptr);
        EXPECT_NE(ops, nullptr) << quirk;
        free_io_pgtable_ops(ops);
    }
    IoPgtableCfg cfg = panfrost_cfg();
    cfg.ias = 49;  // more than four 9-bit levels
    EXPECT_EQ(alloc_mali(&cfg), nullptr);
    cfg = panfrost_cfg();
    cfg.oas = 41;  // Mali PAs are at most 40 bits
    EXPECT_EQ(alloc_mali(&cfg), nullptr);
    cfg = panfrost_cfg();
    cfg.oas = 44;  // fine for stage 1, not for Mali
    EXPECT_EQ(alloc_mali(&cfg), nullptr);
    for (unsigned long bitmap : {SZ_2M, SZ_2M | SZ_1G, SZ_16K | SZ_32M, SZ_64K | SZ_512M}) {
        cfg = panfrost_cfg();
        cfg.pgsize_bitmap = bitmap;  // no 4 KiB granule left
        EXPECT_EQ(alloc_mali(&cfg), nullptr) << bitmap;
    }
    cfg = panfrost_cfg();
    cfg.alloc = [](void*, size_t, kshim::gfp_t) -> void* { return nullptr; };  // alloc without free
    EXPECT_EQ(alloc_mali(&cfg), nullptr);
    EXPECT_EQ(drain_warns(), 1u);
    EXPECT_EQ(leaks.diff(), "");
}

TEST(MaliPgtableCfg, AnyOutputSizeUpTo40BitsIsAccepted) {
    // Mali has no IPS field, so sizes stage 1 cannot encode are fine.
    for (unsigned oas : {33u, 35u, 39u}) {
        IoPgtableCfg cfg = panfrost_cfg();
        cfg.oas = oas;
        MaliPgtable pt(cfg);
        ASSERT_NE(pt.get(), nullptr) << oas;
        EXPECT_EQ(pt.cfg().oas, oas);
        size_t mapped = 0;
        EXPECT_EQ(pt->map_pages(0, 1ull << oas, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
        EXPECT_EQ(drain_warns(), 1u);
        EXPECT_EQ(pt.map(0, (1ull << oas) - SZ_4K, SZ_4K, 1), 0);
        EXPECT_EQ(pt.walk(0).pa, (1ull << oas) - SZ_4K);
        IoPgtableCfg s1 = cfg;
        EXPECT_EQ(alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &s1, nullptr), nullptr) << oas;
    }
}

// TRANSTAB carries no input size: the GPU always walks four levels. A small ias must still build
// a level-0 table (one entry) above the level-1 table.
TEST(MaliPgtableCfg, SmallIasStillStartsAtLevelZero) {
    LeakCheck leaks;
    for (unsigned ias : {25u, 32u, 36u, 39u}) {
        SCOPED_TRACE("ias " + std::to_string(ias));
        IoPgtableCfg cfg = panfrost_cfg();
        cfg.ias = ias;
        MaliPgtable pt(cfg);
        ASSERT_NE(pt.get(), nullptr);
        const long base = pages_live();
        const u64 top = (1ull << ias) - SZ_4K;
        ASSERT_EQ(pt.map(top, 0x12345000, SZ_4K, 1), 0);
        EXPECT_EQ(pages_live() - base, 3);  // L1, L2 and L3 below the level-0 pgd
        Translation t = pt.walk(top + 0x123);
        ASSERT_TRUE(t.ok) << t.fault;
        EXPECT_EQ(t.level, 3);
        EXPECT_EQ(t.pa, 0x12345123u);
        EXPECT_EQ(t.path[0] & 3, 3u);  // the level-0 entry is a table
        EXPECT_EQ(pt->iova_to_phys(top + 0x123), 0x12345123u);
        // Only entry 0 of the level-0 table is ever used.
        const auto* pgd = static_cast<const u64*>(kshim::phys_to_virt(mali_regs_of(pt.cfg()).transtab & kAddr));
        EXPECT_EQ(pgd[0], t.path[0]);
        size_t mapped = 0;
        EXPECT_EQ(pt->map_pages(1ull << ias, 0, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
        EXPECT_EQ(drain_warns(), 1u);
        EXPECT_EQ(pt->unmap_pages(top, SZ_4K, 1, nullptr), SZ_4K);
        EXPECT_FALSE(pt.walk(top).ok);
    }
    EXPECT_EQ(leaks.diff(), "");
}

// ---------------------------------------------------------------------------------------------
// Descriptor bits

// Type 1 at levels 1-3 (no page type), read bit 6, write bit 7, SH outer, no AF/nG; tables type 3.
TEST(MaliPgtableDescriptors, PageBlockAndTableEntriesExact) {
    IoPgtableCfg cfg = panfrost_cfg();
    cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
    MaliPgtable pt(cfg);
    ASSERT_NE(pt.get(), nullptr);

    ASSERT_EQ(pt.map(0x12345000, 0x87654000, SZ_4K, 1, kRW), 0);
    Translation page = pt.walk(0x12345000);
    ASSERT_TRUE(page.ok) << page.fault;
    EXPECT_EQ(page.level, 3);
    EXPECT_EQ(page.descriptor, 0x87654000ull | 0x2c1);
    // Each table entry is the next table's PA | 3, and that table holds the next descriptor.
    for (int lvl = 0; lvl < 3; lvl++) {
        SCOPED_TRACE("level " + std::to_string(lvl));
        const u64 desc = page.path[lvl];
        EXPECT_EQ(desc & ~kAddr, 3u);
        ASSERT_TRUE(kshim::phys_range_valid(desc & kAddr, SZ_4K));
        EXPECT_EQ((desc & kAddr) % SZ_4K, 0u);
        const unsigned shift = 12 + 9 * unsigned(2 - lvl);
        const auto* next = static_cast<const u64*>(kshim::phys_to_virt(desc & kAddr));
        EXPECT_EQ(next[(0x12345000ull >> shift) & 511], page.path[lvl + 1]);
    }

    ASSERT_EQ(pt.map(0x40000000, 0x80000000, SZ_2M, 1, kRW | IOMMU_CACHE), 0);
    Translation block = pt.walk(0x40000000);
    ASSERT_TRUE(block.ok) << block.fault;
    EXPECT_EQ(block.level, 2);
    EXPECT_EQ(block.descriptor, 0x80000000ull | 0x2c5);

    ASSERT_EQ(pt.map(2 * SZ_1G, 0xc0000000, SZ_1G, 1, IOMMU_READ | IOMMU_NOEXEC), 0);
    Translation giga = pt.walk(2 * SZ_1G + 77);
    ASSERT_TRUE(giga.ok) << giga.fault;
    EXPECT_EQ(giga.level, 1);
    EXPECT_EQ(giga.descriptor, 0xc0000000ull | 0x241 | kXn);
    EXPECT_EQ(giga.pa, 0xc0000000ull + 77);
}

TEST(MaliPgtableDescriptors, ProtBitsExact) {
    struct Case {
        int prot;
        u64 bits;  // everything but the type and the address
    };
    // bit 6 read, bit 7 write, AttrIndx[4:2], SH[9:8] = 2, XN[54:53].
    const Case cases[] = {
        {IOMMU_READ, 0x240},
        {IOMMU_WRITE, 0x280},
        {kRW, 0x2c0},
        {kRW | IOMMU_CACHE, 0x2c4},
        {kRW | IOMMU_NOEXEC, 0x2c0 | kXn},
        {kRW | IOMMU_MMIO, 0x2c8},
        {kRW | IOMMU_MMIO | IOMMU_CACHE, 0x2c8},
        {IOMMU_READ | IOMMU_PRIV, 0x240},
        {kRW | IOMMU_CACHE | IOMMU_NOEXEC | IOMMU_PRIV, 0x2c4 | kXn},
        {IOMMU_READ | IOMMU_MMIO | IOMMU_NOEXEC, 0x248 | kXn},
    };
    MaliPgtable pt(panfrost_cfg());
    u64 iova = 0x1000000;
    for (const Case& c : cases) {
        for (size_t size : {SZ_4K, SZ_2M}) {
            const std::string where = "prot " + std::to_string(c.prot) + " size " + std::to_string(size);
            iova = (iova + size - 1) & ~(u64{size} - 1);
            ASSERT_EQ(pt.map(iova, 0x100000000ull, size, 1, c.prot), 0) << where;
            Translation t = pt.walk(iova);
            ASSERT_TRUE(t.ok) << where << ": " << t.fault;
            EXPECT_EQ(t.descriptor, 0x100000000ull | c.bits | 1) << where;
            expect_mali_leaf_attrs(t, c.prot, where);
            iova += size;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The selftest sequence over ias x oas (the stage-1 sweep, for the one Mali granule)

using MaliSweepParam = std::tuple<unsigned, unsigned>;
class MaliPgtableSweep : public ::testing::TestWithParam<MaliSweepParam> {};

TEST_P(MaliPgtableSweep, SelftestSequence) {
    const auto& [ias, oas] = GetParam();
    LeakCheck leaks;
    TlbLog log;
    {
        IoPgtableCfg cfg;
        cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
        cfg.ias = ias;
        cfg.oas = oas;
        cfg.tlb = TlbLog::ops();
        IoPgtableOps* ops = alloc_mali(&cfg, &log);
        ASSERT_NE(ops, nullptr);
        EXPECT_EQ(cfg.pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G);
        EXPECT_EQ(cfg.ias, ias);
        EXPECT_EQ(cfg.oas, oas);
        EXPECT_EQ(cfg.arm_mali_lpae_cfg.memattr, 0x888D88ull);
        const MaliWalkerRegs regs = mali_regs_of(cfg);
        const u64 va_limit = u64{1} << ias;
        const u64 pa_limit = u64{1} << oas;
        const int prot = IOMMU_READ | IOMMU_WRITE | IOMMU_NOEXEC | IOMMU_CACHE;

        for (u64 va : {u64{42}, u64{SZ_1G + 42}, u64{2 * SZ_1G + 42}}) {
            EXPECT_EQ(ops->iova_to_phys(va), 0u);
            EXPECT_FALSE(mali_lpae_walk(regs, va).ok);
        }

        struct Placed {
            u64 iova;
            size_t size;
        };
        std::vector<Placed> placed;
        u64 cursor = 0;
        for (size_t size : {SZ_4K, SZ_2M, SZ_1G}) {
            u64 iova = (cursor + size - 1) & ~(u64{size} - 1);
            if (iova + size > va_limit || iova + size > pa_limit)
                continue;
            size_t mapped = 0;
            ASSERT_EQ(ops->map_pages(iova, iova, size, 1, prot, kshim::GFP_KERNEL, &mapped), 0) << size;
            EXPECT_EQ(mapped, size);
            EXPECT_EQ(ops->map_pages(iova, iova + size, size, 1, IOMMU_READ | IOMMU_NOEXEC, kshim::GFP_KERNEL, &mapped),
                      -EEXIST);
            EXPECT_EQ(drain_warns(), 1u);  // no NO_WARN quirk for Mali
            EXPECT_EQ(ops->iova_to_phys(iova + 42), iova + 42);
            Translation t = mali_lpae_walk(regs, iova + 42);
            ASSERT_TRUE(t.ok) << t.fault;
            EXPECT_EQ(t.pa, iova + 42);
            EXPECT_EQ(t.block_size, size);
            expect_mali_leaf_attrs(t, prot, "size " + std::to_string(size));
            placed.push_back({iova, size});
            cursor = (iova + size + SZ_1G - 1) & ~u64{SZ_1G - 1};
        }
        ASSERT_FALSE(placed.empty());

        for (const Placed& p : placed) {
            EXPECT_EQ(ops->unmap_pages(p.iova, p.size, 1, nullptr), p.size);
            EXPECT_EQ(ops->iova_to_phys(p.iova + 42), 0u);
            EXPECT_FALSE(mali_lpae_walk(regs, p.iova + 42).ok);
            size_t mapped = 0;
            ASSERT_EQ(ops->map_pages(p.iova, p.iova, p.size, 1, IOMMU_WRITE, kshim::GFP_KERNEL, &mapped), 0);
            Translation t = mali_lpae_walk(regs, p.iova + 42);
            EXPECT_EQ(t.pa, p.iova + 42);
            expect_mali_leaf_attrs(t, IOMMU_WRITE, "remap " + std::to_string(p.size));
        }
        for (const Placed& p : placed)
            EXPECT_EQ(ops->unmap_pages(p.iova, p.size, 1, nullptr), p.size);

        // The highest legal input and output addresses.
        const u64 top_iova = va_limit - SZ_4K;
        const u64 top_pa = pa_limit - SZ_4K;
        size_t mapped = 0;
        ASSERT_EQ(ops->map_pages(top_iova, top_pa, SZ_4K, 1, IOMMU_READ, kshim::GFP_KERNEL, &mapped), 0);
        Translation top = mali_lpae_walk(regs, top_iova + SZ_4K - 1);
        ASSERT_TRUE(top.ok) << top.fault;
        EXPECT_EQ(top.pa, top_pa + SZ_4K - 1);
        EXPECT_EQ(ops->iova_to_phys(top_iova + SZ_4K - 1), top_pa + SZ_4K - 1);

        // A run of pages across two leaf-table boundaries, every page checked.
        const size_t count = 2 * 512 + 3;
        const u64 run = std::min<u64>(va_limit / 2, 1ull << 36) + 511 * SZ_4K;
        const u64 pa = (pa_limit / 4) & ~u64{SZ_4K - 1};
        ASSERT_EQ(ops->map_pages(run, pa, SZ_4K, count, IOMMU_READ, kshim::GFP_KERNEL, &mapped), 0);
        for (size_t i = 0; i < count; i++) {
            Translation t = mali_lpae_walk(regs, run + i * SZ_4K + 8);
            ASSERT_TRUE(t.ok) << i << ": " << t.fault;
            ASSERT_EQ(t.pa, pa + i * SZ_4K + 8) << i;
            ASSERT_EQ(t.level, 3) << i;
        }
        EXPECT_EQ(ops->unmap_pages(run, SZ_4K, count, nullptr), count * SZ_4K);
        EXPECT_FALSE(mali_lpae_walk(regs, run + 512 * SZ_4K).ok);

        EXPECT_EQ(log.flush_all, 0);
        free_io_pgtable_ops(ops);
        EXPECT_EQ(log.flush_all, 1);
    }
    EXPECT_EQ(kshim::pending_report_count(), 0u);
    EXPECT_EQ(leaks.diff(), "");
}

INSTANTIATE_TEST_SUITE_P(IasOas, MaliPgtableSweep,
                         ::testing::Combine(::testing::Values(32u, 36u, 39u, 40u, 42u, 44u, 48u),
                                            ::testing::Values(32u, 36u, 40u)),
                         [](const ::testing::TestParamInfo<MaliSweepParam>& info) {
                             return "Ias" + std::to_string(std::get<0>(info.param)) + "_Oas" +
                                    std::to_string(std::get<1>(info.param));
                         });

// The whole input space of a 32-bit configuration, in blocks of each size and then in pages,
// every entry checked through the walker and iova_to_phys.
TEST(MaliPgtableMap, FullRangeSweep32BitVa) {
    LeakCheck leaks;
    {
        IoPgtableCfg cfg = panfrost_cfg();
        cfg.ias = 32;
        cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
        MaliPgtable pt(cfg);
        ASSERT_NE(pt.get(), nullptr);
        const u64 pa = (1ull << 40) - (1ull << 32);  // the top 4 GiB of the 40-bit PA
        for (size_t size : {SZ_1G, SZ_2M}) {
            const size_t n = (1ull << 32) / size;
            ASSERT_EQ(pt.map(0, pa, size, n, kRW), 0) << size;
            for (size_t i = 0; i < n; i++) {
                const u64 va = i * size + (i * 4099) % size;
                Translation t = pt.walk(va);
                ASSERT_TRUE(t.ok) << size << " " << i << ": " << t.fault;
                ASSERT_EQ(t.pa, pa + va) << size << " " << i;
                ASSERT_EQ(t.block_size, size);
                ASSERT_EQ(pt->iova_to_phys(va), pa + va);
            }
            size_t mapped = 0;
            EXPECT_EQ(pt->map_pages(0, 0, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -EEXIST);
            EXPECT_EQ(drain_warns(), 1u);
            EXPECT_EQ(pt->unmap_pages(0, size, n, nullptr), 1ull << 32);
            EXPECT_FALSE(pt.walk(0).ok);
        }
        // 4 KiB pages over the top 64 MiB, through the last page of the space.
        const u64 base = (1ull << 32) - (64ull << 20);
        const size_t n = (64ull << 20) / SZ_4K;
        ASSERT_EQ(pt.map(base, 0x1000000, SZ_4K, n, IOMMU_READ), 0);
        for (size_t i = 0; i < n; i++)
            ASSERT_EQ(pt.walk(base + i * SZ_4K + 1).pa, 0x1000000 + i * SZ_4K + 1) << i;
        EXPECT_EQ(pt->unmap_pages(base, SZ_4K, n, nullptr), n * SZ_4K);
    }
    EXPECT_EQ(leaks.diff(), "");
}

// ---------------------------------------------------------------------------------------------
// Map and unmap semantics (as for stage 1)

TEST(MaliPgtableMap, MultiTableRangeEveryPageTranslates) {
    LeakCheck leaks;
    {
        MaliPgtable pt(panfrost_cfg());
        const u64 iova = (1ull << 39) - 3 * SZ_4K - 5 * SZ_2M;  // crosses L3, L2, L1 and L0 indices
        const u64 pa = 0x123456000ull;
        const size_t count = 3 * 512 + 17;
        ASSERT_EQ(pt.map(iova, pa, SZ_4K, count, IOMMU_READ), 0);
        for (size_t i = 0; i < count; i++) {
            Translation t = pt.walk(iova + i * SZ_4K + 7);
            ASSERT_TRUE(t.ok) << i << ": " << t.fault;
            ASSERT_EQ(t.pa, pa + i * SZ_4K + 7) << i;
            ASSERT_EQ(t.level, 3);
        }
        EXPECT_FALSE(pt.walk(iova - SZ_4K).ok);
        EXPECT_FALSE(pt.walk(iova + count * SZ_4K).ok);
        EXPECT_EQ(pt->unmap_pages(iova, SZ_4K, count, nullptr), count * SZ_4K);
        for (size_t i = 0; i < count; i += 97)
            EXPECT_EQ(pt->iova_to_phys(iova + i * SZ_4K), 0u);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(MaliPgtableMap, OverLiveEntryFailsAndLeavesItAlone) {
    MaliPgtable pt(panfrost_cfg());
    ASSERT_EQ(pt.map(0x200000, 0x40000000, SZ_4K, 4), 0);
    const u64 before = pt.walk(0x201000).descriptor;
    EXPECT_EQ(pt.map(0x1f4000, 0x50000000, SZ_4K, 14), -EEXIST);
    EXPECT_EQ(drain_warns(), 1u);
    for (int i = 0; i < 12; i++)
        EXPECT_EQ(pt->iova_to_phys(0x1f4000 + i * SZ_4K), 0u) << i;
    EXPECT_EQ(pt.walk(0x201000).descriptor, before);

    // A page inside a block, a block over pages: the type-1 leaf at level 3 is live, not a hole.
    ASSERT_EQ(pt.map(0x40000000, 0x60000000, SZ_2M, 1), 0);
    EXPECT_EQ(pt.map(0x40001000, 0x1000, SZ_4K, 1), -EEXIST);
    EXPECT_EQ(pt.map(0x200000, 0x1000000, SZ_2M, 1), -EEXIST);
    EXPECT_EQ(pt->iova_to_phys(0x40001000), 0x60001000u);
    EXPECT_EQ(pt->iova_to_phys(0x201000), 0x40001000u);
    EXPECT_EQ(drain_warns(), 2u);
}

TEST(MaliPgtableMap, ConflictAfterFilledTablesUndoesThem) {
    TlbLog log;
    MaliPgtable pt(panfrost_cfg(&log), &log);
    ASSERT_EQ(pt.map(0x0, 0x1000, SZ_4K, 1), 0);
    ASSERT_EQ(pt.map(0x200000, 0x2000, SZ_4K, 1), 0);
    EXPECT_EQ(pt.map(0x1000, 0x10000000, SZ_4K, 512), -EEXIST);
    EXPECT_EQ(drain_warns(), 1u);
    for (u64 va = 0x1000; va < 0x200000; va += SZ_4K)
        ASSERT_FALSE(pt.walk(va).ok) << va;
    EXPECT_EQ(pt->iova_to_phys(0x0), 0x1000u);
    EXPECT_EQ(pt->iova_to_phys(0x200000), 0x2000u);
    ASSERT_EQ(log.walks.size(), 1u);
    EXPECT_EQ(log.walks[0].iova, 0x1000u);
    EXPECT_EQ(log.walks[0].size, 511 * SZ_4K);
}

TEST(MaliPgtableMap, BadInputIsRejected) {
    LeakCheck leaks;
    {
        MaliPgtable pt(panfrost_cfg());
        size_t mapped = 0;
        auto map = [&](u64 iova, u64 pa, size_t pgsize, size_t count, int prot = kRW) {
            return pt->map_pages(iova, pa, pgsize, count, prot, kshim::GFP_KERNEL, &mapped);
        };
        EXPECT_EQ(map(0x1800, 0x1000, SZ_4K, 1), -EINVAL);
        EXPECT_EQ(map(0x1000, 0x1800, SZ_4K, 1), -EINVAL);
        EXPECT_EQ(map(0x100000, 0x200000, SZ_2M, 1), -EINVAL);
        EXPECT_EQ(map(0x1000, 0x1000, SZ_4K, 1, IOMMU_CACHE), -EINVAL);
        EXPECT_EQ(kshim::pending_report_count(), 0u);
        EXPECT_EQ(map(0x10000, 0x10000, SZ_64K, 1), -EINVAL);
        EXPECT_EQ(map(0, 0, SZ_1G, 1), -EINVAL);  // not in panfrost's bitmap
        EXPECT_EQ(map(0, 0, SZ_4K | SZ_2M, 1), -EINVAL);
        EXPECT_EQ(map(0, 0, 0, 1), -EINVAL);
        EXPECT_EQ(drain_warns(), 4u);
        EXPECT_EQ(map(1ull << 48, 0x1000, SZ_4K, 1), -ERANGE);
        EXPECT_EQ(map((1ull << 48) - SZ_4K, 0x1000, SZ_4K, 2), -ERANGE);
        EXPECT_EQ(map(0x1000, 1ull << 40, SZ_4K, 1), -ERANGE);
        EXPECT_EQ(map(0x1000, (1ull << 40) - SZ_4K, SZ_4K, 2), -ERANGE);
        EXPECT_EQ(map(0, 0, SZ_4K, ~size_t{0}), -ERANGE);
        EXPECT_EQ(drain_warns(), 5u);
        EXPECT_EQ(mapped, 0u);
        EXPECT_EQ(map(0x1000, 0x1000, SZ_4K, 0), 0);
        EXPECT_EQ(mapped, 0u);
        EXPECT_EQ(pt.map((1ull << 48) - SZ_4K, (1ull << 40) - SZ_4K, SZ_4K, 1), 0);
        EXPECT_EQ(pt->iova_to_phys((1ull << 48) - 1), (1ull << 40) - 1);
        EXPECT_EQ(pt.walk((1ull << 48) - 1).pa, (1ull << 40) - 1);
        EXPECT_EQ(pt->iova_to_phys(1ull << 48), 0u);

        EXPECT_EQ(pt->unmap_pages(0x1000, SZ_4K, 0, nullptr), 0u);
        EXPECT_EQ(pt->unmap_pages(0x1000, SZ_64K, 1, nullptr), 0u);
        EXPECT_EQ(pt->unmap_pages(1ull << 48, SZ_4K, 1, nullptr), 0u);
        EXPECT_EQ(pt->unmap_pages((1ull << 48) - SZ_2M + SZ_4K, SZ_2M, 1, nullptr), 0u);
        EXPECT_EQ(drain_warns(), 4u);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(MaliPgtableUnmap, PartOfABlockIsNotSplit) {
    MaliPgtable pt(panfrost_cfg());
    ASSERT_EQ(pt.map(0x40000000, 0x80000000, SZ_2M, 1), 0);
    EXPECT_EQ(pt->unmap_pages(0x40001000, SZ_4K, 1, nullptr), 0u);
    drain_warns();  // once per process
    EXPECT_EQ(pt->iova_to_phys(0x40001000), 0x80001000u);
    EXPECT_EQ(pt.walk(0x40000000).block_size, SZ_2M);
    EXPECT_EQ(pt->unmap_pages(0x40000000, SZ_2M, 1, nullptr), SZ_2M);
    EXPECT_EQ(pt->iova_to_phys(0x40001000), 0u);
}

TEST(MaliPgtableUnmap, StopsAtTheFirstHole) {
    MaliPgtable pt(panfrost_cfg());
    ASSERT_EQ(pt.map(0x10000, 0x10000, SZ_4K, 5), 0);
    ASSERT_EQ(pt.map(0x16000, 0x16000, SZ_4K, 5), 0);
    EXPECT_EQ(pt->unmap_pages(0x10000, SZ_4K, 11, nullptr), 5 * SZ_4K);
    EXPECT_EQ(drain_warns(), 1u);
    EXPECT_EQ(pt->iova_to_phys(0x16000), 0x16000u);
    EXPECT_EQ(pt->unmap_pages(0x15000, SZ_4K, 6, nullptr), 0u);
    EXPECT_EQ(drain_warns(), 1u);
    EXPECT_EQ(pt.walk(0x16000).pa, 0x16000u);
}

TEST(MaliPgtableTables, SmallPageUnmapKeepsTablesBlockSizeUnmapFreesThem) {
    LeakCheck leaks;
    {
        TlbLog log;
        MaliPgtable pt(panfrost_cfg(&log), &log);
        const long base = pages_live();
        const u64 iova = 0x7f0000000000ull;
        ASSERT_EQ(pt.map(iova, 0x100000000ull, SZ_4K, 1024), 0);
        EXPECT_EQ(pages_live() - base, 4);
        EXPECT_EQ(pt->unmap_pages(iova, SZ_4K, 1024, nullptr), 1024 * SZ_4K);
        EXPECT_EQ(pages_live() - base, 4);
        EXPECT_TRUE(log.walks.empty());

        ASSERT_EQ(pt.map(iova, 0x100000000ull, SZ_4K, 1024), 0);
        EXPECT_EQ(pt->unmap_pages(iova, SZ_2M, 2, nullptr), 2 * SZ_2M);
        EXPECT_EQ(pages_live() - base, 2);
        ASSERT_EQ(log.walks.size(), 1u);
        EXPECT_EQ(log.walks[0].iova, iova);
        EXPECT_EQ(log.walks[0].size, 2 * SZ_2M);
        EXPECT_EQ(log.walks[0].granule, SZ_4K);

        // An emptied leaf table gives way to a block.
        ASSERT_EQ(pt.map(iova, 0x100000000ull, SZ_4K, 512), 0);
        EXPECT_EQ(pt->unmap_pages(iova, SZ_4K, 512, nullptr), 512 * SZ_4K);
        log.walks.clear();
        ASSERT_EQ(pt.map(iova, 0x200000000ull, SZ_2M, 1), 0);
        EXPECT_EQ(pages_live() - base, 2);
        EXPECT_EQ(log.walks.size(), 1u);
        EXPECT_EQ(pt.walk(iova + 0x1234).pa, 0x200001234ull);
        EXPECT_EQ(pt.walk(iova).level, 2);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(MaliPgtableTables, GigabyteUnmapFreesTheWholeSubtree) {
    LeakCheck leaks;
    {
        TlbLog log;
        IoPgtableCfg cfg = panfrost_cfg(&log);
        cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
        MaliPgtable pt(cfg, &log);
        const long base = pages_live();
        ASSERT_EQ(pt.map(SZ_1G, 0, SZ_4K, 600), 0);
        ASSERT_EQ(pt.map(SZ_1G + 8 * SZ_2M, 0, SZ_2M, 3), 0);
        EXPECT_EQ(pages_live() - base, 4);
        EXPECT_EQ(pt->unmap_pages(SZ_1G, SZ_1G, 1, nullptr), SZ_1G);
        EXPECT_EQ(pages_live() - base, 1);
        ASSERT_EQ(log.walks.size(), 1u);
        ASSERT_EQ(pt.map(SZ_1G, 0, SZ_1G, 1), 0);
        EXPECT_EQ(pt.walk(SZ_1G + 5).block_size, SZ_1G);
        EXPECT_EQ(pt.walk(SZ_1G + 5).level, 1);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(MaliPgtableTlb, CallbacksWhereUpstreamCallsThem) {
    TlbLog log;
    {
        MaliPgtable pt(panfrost_cfg(&log), &log);
        ASSERT_EQ(pt.map(0x100000, 0x100000, SZ_4K, 8), 0);
        EXPECT_TRUE(log.walks.empty() && log.pages.empty());
        IommuIotlbGather gather;
        EXPECT_EQ(pt->unmap_pages(0x100000, SZ_4K, 3, &gather), 3 * SZ_4K);
        ASSERT_EQ(log.pages.size(), 3u);
        EXPECT_EQ(gather.start, 0x100000u);
        EXPECT_EQ(gather.end, 0x103000u - 1);
        EXPECT_EQ(pt->unmap_pages(0x103000, SZ_4K, 5, nullptr), 5 * SZ_4K);
        EXPECT_EQ(log.pages.size(), 3u);
        EXPECT_EQ(log.flush_all, 0);
    }
    EXPECT_EQ(log.flush_all, 1);
}

TEST(MaliPgtableAlloc, CustomHooksProvideEveryTable) {
    LeakCheck leaks;
    PtCache cache;
    for (int i = 0; i < 8; i++)
        cache.pages.push_back(kshim::page_address(kshim::alloc_page(kshim::GFP_KERNEL)));
    {
        IoPgtableCfg cfg = panfrost_cfg();
        cfg.ias = 36;  // the one-entry level-0 table comes from the hook too
        cfg.alloc = PtCache::alloc;
        cfg.free = PtCache::free;
        MaliPgtable pt(cfg, &cache);
        ASSERT_NE(pt.get(), nullptr);
        EXPECT_EQ(cache.allocs, 1);
        const long base = pages_live();
        ASSERT_EQ(pt.map(0x400000000ull, 0x1000, SZ_4K, 513, kRW, kshim::GFP_NOWAIT), 0);
        EXPECT_EQ(cache.allocs, 1 + 4);  // L1, L2 and two leaf tables
        EXPECT_EQ(pages_live(), base);
        EXPECT_TRUE(pt.walk(0x400000000ull + 512 * SZ_4K).ok);

        cache.fail_at = cache.allocs + 1;
        const int frees_before = cache.frees;
        EXPECT_EQ(pt.map(0x800000000ull, 0x1000, SZ_4K, 1, kRW, kshim::GFP_NOWAIT), -ENOMEM);
        EXPECT_EQ(cache.frees - frees_before, 1);
        EXPECT_FALSE(pt.walk(0x800000000ull).ok);
        cache.fail_at = -1;
    }
    EXPECT_EQ(cache.frees, cache.allocs);
    EXPECT_EQ(cache.pages.size(), 8u);
    for (void* p : cache.pages)
        kshim::__free_page(kshim::virt_to_page(p));
    EXPECT_EQ(leaks.diff(), "");
}

TEST(MaliPgtableAlloc, NowaitFailureAtEachTableLeavesNothingHalfMapped) {
    LeakCheck leaks;
    {
        MaliPgtable pt(panfrost_cfg());
        ASSERT_EQ(pt.map(0, 0, SZ_4K, 1), 0);
        const u64 iova = (1ull << 39) - 2 * SZ_2M;
        ASSERT_EQ(pt.map(iova, 0, SZ_4K, 1), 0);
        ASSERT_EQ(pt->unmap_pages(iova, SZ_4K, 1, nullptr), SZ_4K);
        const size_t count = 2 * 512 + 10;
        for (int nth = 1; nth <= 4; nth++) {
            const long before_pages = pages_live();
            kshim::fault_inject_arm(kshim::FaultPlan{.fail_nth = u64(nth), .only_cache = "pt_pages"});
            EXPECT_EQ(pt.map(iova, 0x1000000, SZ_4K, count, kRW, kshim::GFP_NOWAIT), -ENOMEM) << nth;
            EXPECT_EQ(kshim::fault_inject_failures(), 1u) << nth;
            kshim::fault_inject_disarm();
            EXPECT_EQ(pages_live(), before_pages) << nth;
            for (size_t i = 0; i < count; i += 101)
                EXPECT_FALSE(pt.walk(iova + i * SZ_4K).ok) << nth << " " << i;
        }
        EXPECT_EQ(pt.map(iova, 0x1000000, SZ_4K, count, kRW, kshim::GFP_NOWAIT), 0);
        EXPECT_EQ(pt.walk(iova + (count - 1) * SZ_4K).pa, 0x1000000 + (count - 1) * SZ_4K);
    }
    EXPECT_EQ(leaks.diff(), "");
}

}  // namespace
