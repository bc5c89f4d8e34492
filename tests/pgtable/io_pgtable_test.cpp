// Tests for kernel_shim/iommu/io_pgtable_arm.cpp: configuration outputs, mapping semantics,
// table lifetime, TLB callbacks and allocation failure, checked through the independent walker.
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/page_alloc.h"
#include "tests/pgtable/pgtable_test_util.h"

using namespace iommu;
using namespace pgtable_test;

namespace {

// panthor's configuration on a Mali-G610: 4K pages with 2M/1G blocks, 48-bit VA, 40-bit PA.
IoPgtableCfg panthor_cfg(TlbLog* log = nullptr, unsigned long quirks = 0) {
    IoPgtableCfg cfg;
    cfg.pgsize_bitmap = SZ_4K | SZ_2M;
    cfg.ias = 48;
    cfg.oas = 40;
    cfg.coherent_walk = false;
    cfg.tlb = log ? TlbLog::ops() : nullptr;
    cfg.quirks = quirks;
    return cfg;
}

class Pgtable {
public:
    explicit Pgtable(IoPgtableCfg cfg, void* cookie = nullptr) : cfg_(cfg) {
        ops_ = alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg_, cookie);
    }
    ~Pgtable() { free_io_pgtable_ops(ops_); }
    IoPgtableOps* operator->() { return ops_; }
    IoPgtableOps* get() { return ops_; }
    const IoPgtableCfg& cfg() const { return cfg_; }
    Translation walk(u64 va) const { return lpae_walk(regs_of(cfg_), va); }

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

TEST(IoPgtableCfg, PanthorG610Registers) {
    LeakCheck leaks;
    {
        IoPgtableCfg cfg = panthor_cfg();
        cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G | SZ_64K;  // extra sizes are restricted away
        Pgtable pt(cfg);
        ASSERT_NE(pt.get(), nullptr);
        const auto& out = pt.cfg();
        EXPECT_EQ(out.pgsize_bitmap, SZ_4K | SZ_2M | SZ_1G);
        EXPECT_EQ(out.ias, 48u);
        EXPECT_EQ(out.oas, 40u);
        EXPECT_EQ(out.arm_lpae_s1_cfg.mair, 0xf404ff44ull);
        EXPECT_NE(out.arm_lpae_s1_cfg.ttbr, 0u);
        EXPECT_EQ(out.arm_lpae_s1_cfg.ttbr % SZ_4K, 0u);
        EXPECT_TRUE(kshim::phys_range_valid(out.arm_lpae_s1_cfg.ttbr, SZ_4K));
        EXPECT_LT(out.arm_lpae_s1_cfg.ttbr, 1ull << 40);

        WalkerGeometry g = lpae_geometry(arm_lpae_s1_tcr_value(out));
        EXPECT_EQ(g.granule_shift, 12u);
        EXPECT_EQ(g.input_bits, 48u);
        EXPECT_EQ(g.pa_bits, 40u);
        EXPECT_EQ(g.start_level, 0);
        u64 tcr = arm_lpae_s1_tcr_value(out);
        EXPECT_EQ(tcr & 0x3f, 16u);       // T0SZ
        EXPECT_EQ((tcr >> 12) & 3, 2u);   // SH0 outer: the walk does not snoop
        EXPECT_EQ((tcr >> 8) & 0xf, 0u);  // IRGN0/ORGN0 non-cacheable
        EXPECT_EQ((tcr >> 23) & 1, 1u);   // EPD1
    }
    {
        IoPgtableCfg cfg = panthor_cfg();
        cfg.coherent_walk = true;
        Pgtable pt(cfg);
        ASSERT_NE(pt.get(), nullptr);
        u64 tcr = arm_lpae_s1_tcr_value(pt.cfg());
        EXPECT_EQ((tcr >> 12) & 3, 3u);  // inner shareable
        EXPECT_EQ((tcr >> 8) & 3, 1u);   // IRGN0 WBWA
        EXPECT_EQ((tcr >> 10) & 3, 1u);  // ORGN0 WBWA
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(IoPgtableCfg, RejectsUnsupported) {
    LeakCheck leaks;
    IoPgtableCfg cfg = panthor_cfg();
    cfg.pgsize_bitmap = SZ_2M;  // no granule
    EXPECT_EQ(alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr), nullptr);
    cfg = panthor_cfg();
    cfg.oas = 41;  // no IPS encoding
    EXPECT_EQ(alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr), nullptr);
    cfg = panthor_cfg();
    cfg.quirks = 1ul << 5;  // TTBR1 is not implemented
    EXPECT_EQ(alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr), nullptr);
    cfg = panthor_cfg();
    cfg.alloc = [](void*, size_t, kshim::gfp_t) -> void* { return nullptr; };  // alloc without free
    EXPECT_EQ(alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr), nullptr);
    EXPECT_EQ(drain_warns(), 1u);
    EXPECT_EQ(leaks.diff(), "");
}

TEST(IoPgtableMap, EmptyTableTranslatesNothing) {
    Pgtable pt(panthor_cfg());
    for (u64 va : {u64{42}, u64{SZ_1G + 42}, u64{2 * SZ_1G + 42}, u64{(1ull << 47) + 42}}) {
        EXPECT_EQ(pt->iova_to_phys(va), 0u);
        EXPECT_FALSE(pt.walk(va).ok);
    }
}

TEST(IoPgtableMap, EachPageSizeTranslatesThroughTheWalker) {
    LeakCheck leaks;
    {
        IoPgtableCfg cfg = panthor_cfg();
        cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
        Pgtable pt(cfg);
        u64 iova = 0;
        for (size_t size : {SZ_4K, SZ_2M, SZ_1G}) {
            const u64 pa = 0x80000000ull + 4 * size;
            ASSERT_EQ(pt.map(iova, pa, size, 1, kRW | IOMMU_NOEXEC | IOMMU_CACHE), 0);
            for (u64 off : {u64{0}, u64{42}, u64{size - 8}}) {
                EXPECT_EQ(pt->iova_to_phys(iova + off), pa + off);
                Translation t = pt.walk(iova + off);
                ASSERT_TRUE(t.ok) << t.fault;
                EXPECT_EQ(t.pa, pa + off);
                EXPECT_EQ(t.block_size, size);
                expect_leaf_attrs(t, kRW | IOMMU_NOEXEC | IOMMU_CACHE, "size " + std::to_string(size));
            }
            EXPECT_EQ(pt->iova_to_phys(iova + size), 0u);
            iova += SZ_1G;
        }
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(IoPgtableMap, ProtBitsFollowTheArchitecture) {
    Pgtable pt(panthor_cfg());
    const int prots[] = {IOMMU_READ,
                         IOMMU_WRITE,
                         kRW,
                         kRW | IOMMU_CACHE,
                         kRW | IOMMU_NOEXEC,
                         kRW | IOMMU_MMIO,
                         IOMMU_READ | IOMMU_PRIV,
                         kRW | IOMMU_CACHE | IOMMU_NOEXEC | IOMMU_PRIV,
                         IOMMU_READ | IOMMU_MMIO | IOMMU_NOEXEC};
    u64 iova = 0x1000000;
    for (int prot : prots) {
        for (size_t size : {SZ_4K, SZ_2M}) {
            iova = (iova + size - 1) & ~(u64{size} - 1);
            ASSERT_EQ(pt.map(iova, 0x100000000ull, size, 1, prot), 0);
            expect_leaf_attrs(pt.walk(iova), prot, "prot " + std::to_string(prot) + " size " + std::to_string(size));
            iova += size;
        }
    }
}

TEST(IoPgtableMap, MultiTableRangeEveryPageTranslates) {
    LeakCheck leaks;
    {
        Pgtable pt(panthor_cfg());
        // Starts 3 pages before a 1 GiB boundary and crosses L3, L2 and L1 table boundaries.
        const u64 iova = (1ull << 39) - 3 * SZ_4K - 5 * SZ_2M;
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

TEST(IoPgtableMap, OverLiveEntryFailsAndLeavesItAlone) {
    Pgtable pt(panthor_cfg());
    ASSERT_EQ(pt.map(0x200000, 0x40000000, SZ_4K, 4), 0);
    u64 before = pt.walk(0x201000).descriptor;

    // Overlap on the last page of a 16-page range: nothing of the range may appear.
    EXPECT_EQ(pt.map(0x1f4000, 0x50000000, SZ_4K, 14), -EEXIST);
    EXPECT_EQ(drain_warns(), 1u);  // upstream WARNs: "we require an unmap first"
    for (int i = 0; i < 12; i++)
        EXPECT_EQ(pt->iova_to_phys(0x1f4000 + i * SZ_4K), 0u) << i;
    EXPECT_EQ(pt.walk(0x201000).descriptor, before);
    EXPECT_EQ(pt->iova_to_phys(0x201000), 0x40001000u);

    // A small page inside a block, and a block over small pages.
    ASSERT_EQ(pt.map(0x40000000, 0x60000000, SZ_2M, 1), 0);
    EXPECT_EQ(pt.map(0x40001000, 0x1000, SZ_4K, 1), -EEXIST);
    EXPECT_EQ(pt.map(0x200000, 0x1000000, SZ_2M, 1), -EEXIST);
    EXPECT_EQ(pt->iova_to_phys(0x40001000), 0x60001000u);
    EXPECT_EQ(drain_warns(), 2u);
}

// The fast path fills existing empty leaf tables first; a conflict further on must undo that.
TEST(IoPgtableMap, ConflictAfterFilledTablesUndoesThem) {
    TlbLog log;
    Pgtable pt(panthor_cfg(&log), &log);
    ASSERT_EQ(pt.map(0x0, 0x1000, SZ_4K, 1), 0);       // leaf table for [0, 2M)
    ASSERT_EQ(pt.map(0x200000, 0x2000, SZ_4K, 1), 0);  // live page at the start of the next one
    EXPECT_EQ(pt.map(0x1000, 0x10000000, SZ_4K, 512), -EEXIST);
    EXPECT_EQ(drain_warns(), 1u);
    for (u64 va = 0x1000; va < 0x200000; va += SZ_4K)
        ASSERT_FALSE(pt.walk(va).ok) << va;
    EXPECT_EQ(pt->iova_to_phys(0x0), 0x1000u);
    EXPECT_EQ(pt->iova_to_phys(0x200000), 0x2000u);
    ASSERT_EQ(log.walks.size(), 1u);  // the briefly live entries are invalidated
    EXPECT_EQ(log.walks[0].iova, 0x1000u);
    EXPECT_EQ(log.walks[0].size, 511 * SZ_4K);
}

TEST(IoPgtableMap, NoWarnQuirkSilencesExpectedFailures) {
    Pgtable pt(panthor_cfg(nullptr, IO_PGTABLE_QUIRK_NO_WARN));
    ASSERT_EQ(pt.map(0x1000, 0x1000, SZ_4K, 1), 0);
    EXPECT_EQ(pt.map(0x1000, 0x2000, SZ_4K, 1), -EEXIST);
    EXPECT_EQ(pt->unmap_pages(0x5000, SZ_4K, 1, nullptr), 0u);
    EXPECT_EQ(kshim::pending_report_count(), 0u);
}

// The quirk covers conflicts and holes only; caller bugs still WARN, as upstream.
TEST(IoPgtableMap, NoWarnQuirkKeepsRangeAndPartialBlockWarnings) {
    Pgtable pt(panthor_cfg(nullptr, IO_PGTABLE_QUIRK_NO_WARN));
    size_t mapped = 0;
    EXPECT_EQ(pt->map_pages(1ull << 48, 0x1000, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
    EXPECT_EQ(pt->map_pages(0x1000, 1ull << 40, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
    EXPECT_EQ(drain_warns(), 2u);
    EXPECT_EQ(pt->map_pages(0x1800, 0x1000, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
    EXPECT_EQ(pt->map_pages(0x10000, 0x10000, SZ_64K, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
    EXPECT_EQ(drain_warns(), 1u);  // the bad page size; misalignment is a plain -EINVAL
    // Partial block unmap: refused. Its WARN is once per boot upstream (and per process here),
    // so an earlier test may already have used it up.
    ASSERT_EQ(pt.map(0x200000, 0x200000, SZ_2M, 1), 0);
    EXPECT_EQ(pt->unmap_pages(0x201000, SZ_4K, 1, nullptr), 0u);
    EXPECT_LE(drain_warns(), 1u);
    EXPECT_EQ(pt->iova_to_phys(0x201000), 0x201000u);
}

TEST(IoPgtableMap, BadInputIsRejected) {
    LeakCheck leaks;
    {
        Pgtable pt(panthor_cfg());
        size_t mapped = 0;
        // Misaligned iova or paddr: -EINVAL, as the iommu core answers.
        EXPECT_EQ(pt->map_pages(0x1800, 0x1000, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
        EXPECT_EQ(pt->map_pages(0x1000, 0x1800, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
        EXPECT_EQ(pt->map_pages(0x100000, 0x200000, SZ_2M, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
        // No access at all.
        EXPECT_EQ(pt->map_pages(0x1000, 0x1000, SZ_4K, 1, IOMMU_CACHE, kshim::GFP_KERNEL, &mapped), -EINVAL);
        EXPECT_EQ(kshim::pending_report_count(), 0u);
        // Unsupported page sizes (upstream WARNs).
        EXPECT_EQ(pt->map_pages(0x10000, 0x10000, SZ_64K, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
        EXPECT_EQ(pt->map_pages(0, 0, SZ_4K | SZ_2M, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
        EXPECT_EQ(pt->map_pages(0, 0, 0, 1, kRW, kshim::GFP_KERNEL, &mapped), -EINVAL);
        EXPECT_EQ(drain_warns(), 3u);
        // Out of range input or output (upstream: WARN and -ERANGE).
        EXPECT_EQ(pt->map_pages(1ull << 48, 0x1000, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
        EXPECT_EQ(pt->map_pages((1ull << 48) - SZ_4K, 0x1000, SZ_4K, 2, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
        EXPECT_EQ(pt->map_pages(0x1000, 1ull << 40, SZ_4K, 1, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
        EXPECT_EQ(pt->map_pages(0x1000, (1ull << 40) - SZ_4K, SZ_4K, 2, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
        EXPECT_EQ(pt->map_pages(0, 0, SZ_4K, ~size_t{0}, kRW, kshim::GFP_KERNEL, &mapped), -ERANGE);
        EXPECT_EQ(drain_warns(), 5u);
        EXPECT_EQ(mapped, 0u);
        // Zero pages is a no-op, like upstream.
        EXPECT_EQ(pt->map_pages(0x1000, 0x1000, SZ_4K, 0, kRW, kshim::GFP_KERNEL, &mapped), 0);
        EXPECT_EQ(mapped, 0u);
        // The last page of the input space is fine.
        EXPECT_EQ(pt.map((1ull << 48) - SZ_4K, (1ull << 40) - SZ_4K, SZ_4K, 1), 0);
        EXPECT_EQ(pt->iova_to_phys((1ull << 48) - 1), (1ull << 40) - 1);
        EXPECT_EQ(pt->iova_to_phys(1ull << 48), 0u);

        // Unmap with bad arguments unmaps nothing.
        EXPECT_EQ(pt->unmap_pages(0x1000, SZ_4K, 0, nullptr), 0u);
        EXPECT_EQ(pt->unmap_pages(0x1000, SZ_64K, 1, nullptr), 0u);
        EXPECT_EQ(pt->unmap_pages(1ull << 48, SZ_4K, 1, nullptr), 0u);
        EXPECT_EQ(pt->unmap_pages((1ull << 48) - SZ_2M + SZ_4K, SZ_2M, 1, nullptr), 0u);
        EXPECT_EQ(drain_warns(), 4u);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(IoPgtableUnmap, PartOfABlockIsNotSplit) {
    Pgtable pt(panthor_cfg());
    ASSERT_EQ(pt.map(0x40000000, 0x80000000, SZ_2M, 1), 0);
    EXPECT_EQ(pt->unmap_pages(0x40001000, SZ_4K, 1, nullptr), 0u);
    drain_warns();  // "Unmap of a partial large IOPTE is not allowed" (once per process)
    EXPECT_EQ(pt->iova_to_phys(0x40001000), 0x80001000u);
    Translation t = pt.walk(0x40000000);
    ASSERT_TRUE(t.ok);
    EXPECT_EQ(t.block_size, SZ_2M);
    EXPECT_EQ(pt->unmap_pages(0x40000000, SZ_2M, 1, nullptr), SZ_2M);
    EXPECT_EQ(pt->iova_to_phys(0x40001000), 0u);
}

TEST(IoPgtableUnmap, StopsAtTheFirstHole) {
    Pgtable pt(panthor_cfg());
    ASSERT_EQ(pt.map(0x10000, 0x10000, SZ_4K, 5), 0);
    ASSERT_EQ(pt.map(0x16000, 0x16000, SZ_4K, 5), 0);
    EXPECT_EQ(pt->unmap_pages(0x10000, SZ_4K, 11, nullptr), 5 * SZ_4K);
    EXPECT_EQ(drain_warns(), 1u);
    EXPECT_EQ(pt->iova_to_phys(0x16000), 0x16000u);
    EXPECT_EQ(pt->unmap_pages(0x15000, SZ_4K, 6, nullptr), 0u);
    EXPECT_EQ(drain_warns(), 1u);
    EXPECT_EQ(pt->iova_to_phys(0x16000), 0x16000u);
}

TEST(IoPgtableTables, SmallPageUnmapKeepsTablesBlockSizeUnmapFreesThem) {
    LeakCheck leaks;
    {
        TlbLog log;
        Pgtable pt(panthor_cfg(&log), &log);
        const long base = pages_live();
        const u64 iova = 0x7f0000000000ull;
        ASSERT_EQ(pt.map(iova, 0x100000000ull, SZ_4K, 1024), 0);  // two leaf tables, fresh L1/L2
        EXPECT_EQ(pages_live() - base, 4);

        // Unmapping with the page size clears leaves but keeps every table, as upstream.
        EXPECT_EQ(pt->unmap_pages(iova, SZ_4K, 1024, nullptr), 1024 * SZ_4K);
        EXPECT_EQ(pages_live() - base, 4);
        EXPECT_TRUE(log.walks.empty());
        EXPECT_TRUE(log.pages.empty());

        // Unmapping with the block size over 4K mappings frees the leaf tables, after one walk flush.
        ASSERT_EQ(pt.map(iova, 0x100000000ull, SZ_4K, 1024), 0);
        EXPECT_EQ(pages_live() - base, 4);
        EXPECT_EQ(pt->unmap_pages(iova, SZ_2M, 2, nullptr), 2 * SZ_2M);
        EXPECT_EQ(pages_live() - base, 2);
        ASSERT_EQ(log.walks.size(), 1u);
        EXPECT_EQ(log.walks[0].iova, iova);
        EXPECT_EQ(log.walks[0].size, 2 * SZ_2M);
        EXPECT_EQ(log.walks[0].granule, SZ_4K);
        EXPECT_EQ(pt->iova_to_phys(iova), 0u);

        // An emptied table (kept after a page-size unmap) is an empty slot for a block.
        ASSERT_EQ(pt.map(iova, 0x100000000ull, SZ_4K, 512), 0);
        EXPECT_EQ(pages_live() - base, 3);
        EXPECT_EQ(pt->unmap_pages(iova, SZ_4K, 512, nullptr), 512 * SZ_4K);
        log.walks.clear();
        ASSERT_EQ(pt.map(iova, 0x200000000ull, SZ_2M, 1), 0);
        EXPECT_EQ(pages_live() - base, 2);
        EXPECT_EQ(log.walks.size(), 1u);
        EXPECT_EQ(pt.walk(iova + 0x1234).pa, 0x200001234ull);
        EXPECT_EQ(pt.walk(iova).block_size, SZ_2M);
        EXPECT_EQ(log.flush_all, 0);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(IoPgtableTables, GigabyteUnmapFreesTheWholeSubtree) {
    LeakCheck leaks;
    {
        TlbLog log;
        IoPgtableCfg cfg = panthor_cfg(&log);
        cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
        Pgtable pt(cfg, &log);
        const long base = pages_live();
        ASSERT_EQ(pt.map(SZ_1G, 0, SZ_4K, 600), 0);            // L1 + L2 + 2 leaf tables
        ASSERT_EQ(pt.map(SZ_1G + 8 * SZ_2M, 0, SZ_2M, 3), 0);  // blocks in the same L2 table
        EXPECT_EQ(pages_live() - base, 4);
        EXPECT_EQ(pt->unmap_pages(SZ_1G, SZ_1G, 1, nullptr), SZ_1G);
        EXPECT_EQ(pages_live() - base, 1);  // only the L1 table remains
        ASSERT_EQ(log.walks.size(), 1u);
        EXPECT_EQ(log.walks[0].iova, SZ_1G);
        EXPECT_EQ(log.walks[0].size, SZ_1G);
        // Now a 1G block fits there.
        ASSERT_EQ(pt.map(SZ_1G, 0, SZ_1G, 1), 0);
        EXPECT_EQ(pt.walk(SZ_1G + 5).block_size, SZ_1G);
    }
    EXPECT_EQ(leaks.diff(), "");
}

TEST(IoPgtableTlb, CallbacksWhereUpstreamCallsThem) {
    TlbLog log;
    {
        Pgtable pt(panthor_cfg(&log), &log);
        ASSERT_EQ(pt.map(0x100000, 0x100000, SZ_4K, 8), 0);
        EXPECT_TRUE(log.walks.empty() && log.pages.empty());

        // With a gather, one leaf invalidation per page.
        IommuIotlbGather gather;
        EXPECT_EQ(pt->unmap_pages(0x100000, SZ_4K, 3, &gather), 3 * SZ_4K);
        ASSERT_EQ(log.pages.size(), 3u);
        for (size_t i = 0; i < 3; i++) {
            EXPECT_EQ(log.pages[i].iova, 0x100000 + i * SZ_4K);
            EXPECT_EQ(log.pages[i].granule, SZ_4K);
        }
        EXPECT_EQ(gather.start, 0x100000u);
        EXPECT_EQ(gather.end, 0x103000u - 1);

        // A queued gather (flush queue) or none at all: the caller flushes, no per-page calls.
        IommuIotlbGather queued;
        queued.queued = true;
        EXPECT_EQ(pt->unmap_pages(0x103000, SZ_4K, 2, &queued), 2 * SZ_4K);
        EXPECT_EQ(pt->unmap_pages(0x105000, SZ_4K, 3, nullptr), 3 * SZ_4K);
        EXPECT_EQ(log.pages.size(), 3u);
        EXPECT_EQ(log.flush_all, 0);
    }
    // Freeing the tables invalidates the whole context first.
    EXPECT_EQ(log.flush_all, 1);
}

TEST(IoPgtableAlloc, CustomHooksProvideEveryTable) {
    LeakCheck leaks;
    PtCache cache;
    for (int i = 0; i < 8; i++)
        cache.pages.push_back(kshim::page_address(kshim::alloc_page(kshim::GFP_KERNEL)));
    {
        IoPgtableCfg cfg = panthor_cfg();
        cfg.alloc = PtCache::alloc;
        cfg.free = PtCache::free;
        Pgtable pt(cfg, &cache);
        ASSERT_NE(pt.get(), nullptr);
        EXPECT_EQ(cache.allocs, 1);  // the pgd
        const long base = pages_live();
        ASSERT_EQ(pt.map(0x4000000000ull, 0x1000, SZ_4K, 513, kRW, kshim::GFP_NOWAIT), 0);
        EXPECT_EQ(cache.allocs, 1 + 4);
        EXPECT_EQ(pages_live(), base);  // nothing came from the shim's allocators
        EXPECT_TRUE(pt.walk(0x4000000000ull + 512 * SZ_4K).ok);

        // The cache runs dry on the third of three tables: -ENOMEM, and the two taken go back.
        cache.fail_at = cache.allocs + 2;
        const int frees_before = cache.frees;
        EXPECT_EQ(pt.map(0x8000000000ull, 0x1000, SZ_4K, 1, kRW, kshim::GFP_NOWAIT), -ENOMEM);
        EXPECT_EQ(cache.frees - frees_before, 2);
        EXPECT_EQ(pt->iova_to_phys(0x8000000000ull), 0u);
        EXPECT_FALSE(pt.walk(0x8000000000ull).ok);
        cache.fail_at = -1;
    }
    EXPECT_EQ(cache.frees, cache.allocs);
    EXPECT_EQ(cache.pages.size(), 8u);
    for (void* p : cache.pages)
        kshim::__free_page(kshim::virt_to_page(p));
    EXPECT_EQ(leaks.diff(), "");
}

TEST(IoPgtableAlloc, HookMemoryOutsideTheArenaIsRefused) {
    static std::aligned_storage_t<SZ_4K, SZ_4K> heap_page;
    IoPgtableCfg cfg = panthor_cfg();
    cfg.alloc = [](void*, size_t, kshim::gfp_t) -> void* { return &heap_page; };
    cfg.free = [](void*, void*, size_t) {};
    EXPECT_EQ(alloc_io_pgtable_ops(IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr), nullptr);
    EXPECT_EQ(drain_warns(), 1u);
}

// Every allocation of a multi-table map fails in turn: -ENOMEM, nothing mapped, nothing leaked.
TEST(IoPgtableAlloc, NowaitFailureAtEachTableLeavesNothingHalfMapped) {
    LeakCheck leaks;
    {
        Pgtable pt(panthor_cfg());
        ASSERT_EQ(pt.map(0, 0, SZ_4K, 1), 0);
        const u64 iova = (1ull << 39) - 2 * SZ_2M;
        // The first leaf table exists (the fast path fills it); then one more leaf table, and a
        // new L1, L2 and L3 past the 512 GiB boundary are needed.
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
        kshim::fault_inject_arm(kshim::FaultPlan{.fail_nth = 5, .only_cache = "pt_pages"});
        EXPECT_EQ(pt.map(iova, 0x1000000, SZ_4K, count, kRW, kshim::GFP_NOWAIT), 0);
        EXPECT_EQ(kshim::fault_inject_failures(), 0u);
        kshim::fault_inject_disarm();
        EXPECT_EQ(pt->iova_to_phys(iova + (count - 1) * SZ_4K), 0x1000000 + (count - 1) * SZ_4K);
    }
    EXPECT_EQ(leaks.diff(), "");
}

}  // namespace
