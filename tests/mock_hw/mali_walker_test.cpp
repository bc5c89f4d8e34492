// The mock MMU's Mali-LPAE walker (mock_hw/mali_lpae_walker.h, written from the hardware
// description) against kshim's io-pgtable ARM_MALI_LPAE format (written from upstream's
// io-pgtable-arm): tables built by one must translate the same, with the same permissions, in
// the other. Then hand-built tables for every fault the walker reports and the leaf bits it reads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "hw/jm/regs/mmu_regs.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/iommu/iommu.h"
#include "kernel_shim/page_alloc.h"
#include "mock_hw/mali_lpae_walker.h"
#include "tests/support/kernel_test.h"

namespace {

using namespace iommu;
using kshim::u64;
using kshim::u8;
using mock_hw::Access;
using mock_hw::AsConfig;
using mock_hw::check_permission;
using mock_hw::mali_lpae_walk;
using mock_hw::WalkResult;

constexpr u64 kTypeTable = 3;
constexpr u64 kTypeLeaf = 1;
constexpr u64 kRead = 1ull << 6;
constexpr u64 kWrite = 1ull << 7;
constexpr u64 kXn53 = 1ull << 53;
constexpr u64 kXn54 = 1ull << 54;

// ---------------------------------------------------------------------------------------------
// Differential: io-pgtable's tables through the mock's walker

class MaliWalkerCrossCheck : public kshim::testing::KernelTest, public ::testing::WithParamInterface<unsigned> {};

TEST_P(MaliWalkerCrossCheck, TranslatesIoPgtableTablesLikeIovaToPhys) {
    IoPgtableCfg cfg;
    cfg.pgsize_bitmap = SZ_4K | SZ_2M | SZ_1G;
    cfg.ias = 48;
    cfg.oas = 40;
    cfg.coherent_walk = GetParam() % 2;
    IoPgtableOps* ops = alloc_io_pgtable_ops(IoPgtableFmt::ARM_MALI_LPAE, &cfg, nullptr);
    ASSERT_NE(ops, nullptr);

    std::vector<u64> sizes = {SZ_4K, SZ_2M};
    if (cfg.pgsize_bitmap & SZ_1G)
        sizes.push_back(SZ_1G);
    std::mt19937_64 rng(GetParam());
    struct Mapping {
        u64 size;
        int prot;
    };
    std::map<u64, Mapping> maps;  // iova -> mapping, never overlapping
    // Two mappings also collide when they share a slot of the larger one's leaf size: a 2 MiB
    // block where a table of 4 KiB pages is, or the reverse, is -EEXIST as well.
    auto leaf_of = [](u64 size) -> u64 { return size >= SZ_1G ? SZ_1G : size >= SZ_2M ? SZ_2M : SZ_4K; };
    auto overlaps = [&](u64 start, u64 end, u64 leaf) {
        for (auto& [iova, m] : maps) {
            const u64 g = std::max(leaf, leaf_of(m.size));
            if ((start & ~(g - 1)) < ((iova + m.size + g - 1) & ~(g - 1)) &&
                (iova & ~(g - 1)) < ((end + g - 1) & ~(g - 1)))
                return true;
        }
        return false;
    };
    for (int i = 0; i < 200; i++) {
        const u64 pgsize = sizes[rng() % (i % 10 == 1 ? sizes.size() : 2)];
        const u64 count = pgsize == SZ_4K ? 1 + rng() % 8 : 1;
        // Cluster half of the mappings in one 1 GiB window so that tables are shared.
        const u64 span = i % 2 ? u64{1} << 48 : u64{1} << 30;
        const u64 iova = (rng() % span) & ~(pgsize - 1);
        const u64 pa = kshim::kPhysBase + ((rng() % (u64{32} << 30)) & ~(pgsize - 1));
        // At least one of READ/WRITE: io-pgtable maps nothing for neither.
        const int rw = 1 + static_cast<int>(rng() % 3);
        const int prot = rw | (rng() % 2 ? IOMMU_NOEXEC : 0) | (rng() % 2 ? IOMMU_CACHE : 0);
        // io-pgtable WARNs on a map over an existing one (and the Mali format takes no NO_WARN
        // quirk), so skip overlaps with any mapping or its 1 GiB/2 MiB table slot.
        const u64 end = iova + pgsize * count;
        if (end > (u64{1} << 48) || overlaps(iova, end, pgsize))
            continue;
        size_t mapped = 0;
        ASSERT_EQ(ops->map_pages(iova, pa, pgsize, count, prot, kshim::GFP_KERNEL, &mapped), 0) << std::hex << iova;
        ASSERT_EQ(mapped, pgsize * count);
        maps[iova] = {pgsize * count, prot};
    }
    ASSERT_GT(maps.size(), 100u);

    AsConfig as;
    as.transtab = cfg.arm_mali_lpae_cfg.transtab;
    as.memattr = cfg.arm_mali_lpae_cfg.memattr;
    as.transcfg = panfrost::AS_TRANSCFG_ADRMODE_LEGACY;
    as.pa_bits = 40;
    auto check = [&](u64 va) {
        if (va >> 48)
            return;  // wrapped around or past the top: io-pgtable's walk would alias it
        const u64 want = ops->iova_to_phys(va);
        const WalkResult r = mali_lpae_walk(as, va);
        if (!want) {
            EXPECT_FALSE(r.ok) << std::hex << "va 0x" << va << " is unmapped for io-pgtable";
            // An unmapped VA below 2^48 is a translation fault at some level.
            EXPECT_EQ(r.exception & 0xF8, 0xC0) << std::hex << "va 0x" << va << " exception 0x" << int(r.exception);
            EXPECT_FALSE(r.bus_fault);
            return;
        }
        ASSERT_TRUE(r.ok) << std::hex << "va 0x" << va << " exception 0x" << int(r.exception);
        EXPECT_EQ(r.t.pa_base + (va - r.t.va_base), want) << std::hex << "va 0x" << va;
    };
    int blocks_1g = 0, blocks_2m = 0, pages = 0;
    for (auto& [iova, m] : maps) {
        check(iova);
        check(iova + m.size - 8);
        check(iova + m.size);  // just past: mapped only if a neighbour starts there
        check(iova - 8);
        const WalkResult r = mali_lpae_walk(as, iova);
        ASSERT_TRUE(r.ok);
        const u64 leaf = m.size >= SZ_1G ? SZ_1G : m.size >= SZ_2M ? SZ_2M : SZ_4K;
        EXPECT_EQ(r.t.size, leaf) << std::hex << iova;
        EXPECT_EQ(r.t.level, leaf == SZ_1G ? 1 : leaf == SZ_2M ? 2 : 3) << std::hex << iova;
        (leaf == SZ_1G ? blocks_1g : leaf == SZ_2M ? blocks_2m : pages)++;
        EXPECT_EQ(r.t.no_read, !(m.prot & IOMMU_READ)) << std::hex << iova;
        EXPECT_EQ(r.t.read_only, !(m.prot & IOMMU_WRITE)) << std::hex << iova;
        EXPECT_EQ(r.t.xn, (m.prot & IOMMU_NOEXEC) != 0) << std::hex << iova;
        EXPECT_EQ(r.t.attr_idx, (m.prot & IOMMU_CACHE) ? 1 : 0) << std::hex << iova;
        EXPECT_EQ(check_permission(as, r.t, Access::Read) == 0, (m.prot & IOMMU_READ) != 0);
        EXPECT_EQ(check_permission(as, r.t, Access::Write) == 0, (m.prot & IOMMU_WRITE) != 0);
        EXPECT_EQ(check_permission(as, r.t, Access::Execute) == 0, (m.prot & IOMMU_NOEXEC) == 0);
    }
    EXPECT_GT(pages, 0);
    EXPECT_GT(blocks_2m, 0);
    if (cfg.pgsize_bitmap & SZ_1G) {
        EXPECT_GT(blocks_1g, 0);
    }
    for (int i = 0; i < 2000; i++)
        check(rng() % (u64{1} << 48));
    for (int i = 0; i < 2000; i++)
        check(rng() % (u64{1} << 30));

    // Unmapping shows up in the walker too.
    for (auto& [iova, m] : maps) {
        const u64 pgsize = m.size >= SZ_1G ? SZ_1G : m.size >= SZ_2M ? SZ_2M : SZ_4K;
        EXPECT_EQ(ops->unmap_pages(iova, pgsize, m.size / pgsize, nullptr), m.size);
        const WalkResult r = mali_lpae_walk(as, iova);
        EXPECT_FALSE(r.ok);
        EXPECT_EQ(r.exception & 0xF8, 0xC0);
    }
    free_io_pgtable_ops(ops);
}

INSTANTIATE_TEST_SUITE_P(Seeds, MaliWalkerCrossCheck, ::testing::Values(1u, 2u, 3u, 42u),
                         [](const ::testing::TestParamInfo<unsigned>& i) { return "seed" + std::to_string(i.param); });

// ---------------------------------------------------------------------------------------------
// Hand-built tables

// One table per level along the path of kVa: L0[1] -> L1[2] -> L2[3] -> L3[4].
constexpr u64 kVa = (u64{1} << 39) + (u64{2} << 30) + (u64{3} << 21) + (u64{4} << 12) + 0x123;
constexpr unsigned kIdx[4] = {1, 2, 3, 4};

class MaliWalkerTables : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        for (auto& t : tables_) {
            t = kshim::alloc_page(kshim::GFP_KERNEL | kshim::__GFP_ZERO);
            ASSERT_NE(t, nullptr);
        }
        for (unsigned l = 0; l < 3; l++)
            set(l, phys(l + 1) | kTypeTable);
        as_.transtab = phys(0) | panfrost::AS_TRANSTAB_LPAE_ADRMODE_TABLE;
        as_.memattr = 0x888D88;
        as_.transcfg = panfrost::AS_TRANSCFG_ADRMODE_LEGACY;
        as_.pa_bits = 40;
    }
    void TearDown() override {
        for (auto& t : tables_)
            kshim::__free_page(t);
    }
    u64 phys(unsigned level) const { return kshim::page_to_phys(tables_[level]); }
    // The descriptor for kVa in the table of `level`.
    void set(unsigned level, u64 desc) {
        std::memcpy(static_cast<char*>(kshim::page_address(tables_[level])) + 8 * kIdx[level], &desc, 8);
    }
    WalkResult walk(u64 va = kVa) const { return mali_lpae_walk(as_, va); }

    AsConfig as_;
    kshim::Page* tables_[4] = {};
};

constexpr u64 kPa = kshim::kPhysBase + (u64{5} << 30);  // 1 GiB aligned, inside the arena

TEST_F(MaliWalkerTables, PageAndBlocksAtLevelsOneToThree) {
    set(3, kPa | kRead | kWrite | kTypeLeaf);
    WalkResult r = walk();
    ASSERT_TRUE(r.ok) << std::hex << int(r.exception);
    EXPECT_EQ(r.t.level, 3);
    EXPECT_EQ(r.t.size, SZ_4K);
    EXPECT_EQ(r.t.va_base, kVa & ~u64{0xFFF});
    EXPECT_EQ(r.t.pa_base, kPa);
    // The low bits of an output address below a block's size are not address bits.
    set(2, (kPa + SZ_4K * 5) | kRead | kTypeLeaf);
    r = walk();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.t.level, 2);
    EXPECT_EQ(r.t.size, SZ_2M);
    EXPECT_EQ(r.t.va_base, kVa & ~(u64{SZ_2M} - 1));
    EXPECT_EQ(r.t.pa_base, kPa);
    set(1, (kPa + SZ_2M * 3) | kRead | kTypeLeaf);
    r = walk();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.t.level, 1);
    EXPECT_EQ(r.t.size, SZ_1G);
    EXPECT_EQ(r.t.va_base, kVa & ~(u64{SZ_1G} - 1));
    EXPECT_EQ(r.t.pa_base, kPa);
    // Each level's index comes from its own VA field: a neighbour at any level is unmapped.
    set(3, kPa | kRead | kTypeLeaf);
    set(2, phys(3) | kTypeTable);
    set(1, phys(2) | kTypeTable);
    ASSERT_TRUE(walk().ok);
    for (unsigned l = 0; l < 4; l++) {
        const WalkResult n = walk(kVa + (u64{1} << panfrost::MALI_LPAE_LEVEL_SHIFT(l)));
        EXPECT_FALSE(n.ok) << l;
        EXPECT_EQ(n.exception, 0xC0 + l) << l;
    }
}

TEST_F(MaliWalkerTables, InvalidDescriptorFaultsAtItsLevel) {
    set(3, kPa | kRead | kWrite | kTypeLeaf);
    ASSERT_TRUE(walk().ok);
    for (unsigned level = 0; level < 4; level++) {
        for (u64 type : {u64{0}, u64{2}}) {
            // Invalid types keep faulting whatever else the descriptor holds.
            set(level, (level < 3 ? phys(level + 1) : kPa) | kRead | kWrite | type);
            const WalkResult r = walk();
            EXPECT_FALSE(r.ok) << level << " type " << type;
            EXPECT_EQ(r.exception, 0xC0 + level) << level << " type " << type;
            EXPECT_FALSE(r.bus_fault);
        }
        set(level, level < 3 ? phys(level + 1) | kTypeTable : kPa | kRead | kWrite | kTypeLeaf);
        ASSERT_TRUE(walk().ok) << level;
    }
}

TEST_F(MaliWalkerTables, NoBlockAtLevelZeroNoTableAtLevelThree) {
    // A type-1 entry at level 0 would be a 512 GiB block: the format has none.
    set(0, kshim::kPhysBase | kRead | kWrite | kTypeLeaf);
    WalkResult r = walk();
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.exception, 0xC0);
    set(0, phys(1) | kTypeTable);
    // Type 3 at level 3 is the AArch64 page encoding, not Mali's (see mali_lpae_walker.cpp).
    set(3, kPa | kRead | kWrite | kTypeTable);
    r = walk();
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.exception, 0xC3);
    set(3, kPa | kRead | kWrite | kTypeLeaf);
    EXPECT_TRUE(walk().ok);
}

TEST_F(MaliWalkerTables, OutputAddressBeyondPaBits) {
    const u64 big = u64{1} << 40;
    set(3, big | kRead | kTypeLeaf);
    WalkResult r = walk();
    EXPECT_EQ(r.exception, 0xE7);  // ADDR_SIZE_FAULT_OUT0 + 3
    EXPECT_FALSE(r.ok);
    set(3, (big - SZ_4K) | kRead | kTypeLeaf);  // the last page below the limit translates
    r = walk();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.t.pa_base, big - SZ_4K);
    set(2, (u64{1} << 45) | kRead | kTypeLeaf);
    EXPECT_EQ(walk().exception, 0xE6);
    set(1, (u64{1} << 47) | kTypeTable);  // a table pointer beyond the PA size
    EXPECT_EQ(walk().exception, 0xE5);
    set(0, big | kTypeTable);
    EXPECT_EQ(walk().exception, 0xE4);
    // A smaller PA size moves the limit.
    set(0, phys(1) | kTypeTable);
    set(1, phys(2) | kTypeTable);
    set(2, phys(3) | kTypeTable);
    set(3, (u64{1} << 39) | kRead | kTypeLeaf);
    EXPECT_TRUE(walk().ok);
    as_.pa_bits = 39;
    EXPECT_EQ(walk().exception, 0xE7);
}

TEST_F(MaliWalkerTables, VaAbove48Bits) {
    set(3, kPa | kRead | kTypeLeaf);
    EXPECT_TRUE(walk().ok);
    for (unsigned bit : {48u, 52u, 63u}) {
        const WalkResult r = walk(kVa | (u64{1} << bit));
        EXPECT_FALSE(r.ok) << bit;
        EXPECT_EQ(r.exception, 0xE0) << bit;  // ADDR_SIZE_FAULT_IN
    }
    // The top of the 48-bit space is walked (and unmapped here).
    EXPECT_EQ(walk((u64{1} << 48) - 1).exception, 0xC0);
}

TEST_F(MaliWalkerTables, TranstabModes) {
    set(3, kPa | kRead | kTypeLeaf);
    // The walk-attribute bits in TRANSTAB[11:2] (READ_INNER, SHARE_OUTER, ...) are not address bits.
    as_.transtab = phys(0) | 0xFFC | panfrost::AS_TRANSTAB_LPAE_ADRMODE_TABLE;
    WalkResult r = walk();
    ASSERT_TRUE(r.ok) << std::hex << int(r.exception);
    EXPECT_EQ(r.t.pa_base, kPa);
    // ADRMODE 0 (unmapped) and the reserved 1: the AS is disabled.
    for (u64 mode : {u64{0}, u64{1}}) {
        as_.transtab = phys(0) | panfrost::AS_TRANSTAB_LPAE_READ_INNER | mode;
        r = walk();
        EXPECT_FALSE(r.ok) << mode;
        EXPECT_EQ(r.exception, 0xC0) << mode;
        EXPECT_FALSE(r.bus_fault);
    }
    as_.transtab = 0;  // what panfrost writes to disable an AS
    EXPECT_EQ(walk().exception, 0xC0);
    // ADRMODE 2: identity over the physical address space, tables ignored.
    as_.transtab = phys(0) | panfrost::AS_TRANSTAB_LPAE_ADRMODE_IDENTITY;
    r = walk();
    ASSERT_TRUE(r.ok);
    EXPECT_EQ(r.t.pa_base + (kVa - r.t.va_base), kVa);
    EXPECT_EQ(r.t.size, u64{1} << 40);
    EXPECT_FALSE(r.t.read_only);
    EXPECT_FALSE(r.t.no_read);
    EXPECT_FALSE(r.t.xn);
    r = walk(u64{1} << 40);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.exception, 0xE4);
    EXPECT_TRUE(walk((u64{1} << 40) - 1).ok);
    // A level-0 table address beyond the PA size.
    as_.transtab = (u64{1} << 40) | panfrost::AS_TRANSTAB_LPAE_ADRMODE_TABLE;
    EXPECT_EQ(walk().exception, 0xE4);
}

TEST_F(MaliWalkerTables, DescriptorFetchOutsideMemoryIsABusFault) {
    set(3, kPa | kRead | kTypeLeaf);
    ASSERT_TRUE(walk().ok);
    const u64 holes[] = {0x1000, kshim::kPhysBase + kshim::kArenaSize, (u64{1} << 40) - SZ_4K};
    for (u64 hole : holes) {
        ASSERT_FALSE(kshim::phys_range_valid(hole, 8));
        for (unsigned level = 1; level < 4; level++) {
            set(level - 1, hole | kTypeTable);
            const WalkResult r = walk();
            EXPECT_FALSE(r.ok) << std::hex << hole << " " << level;
            EXPECT_TRUE(r.bus_fault) << std::hex << hole << " " << level;
            EXPECT_EQ(r.exception, 0xD0 + level) << level;  // TRANSTAB_BUS_FAULT_n
            EXPECT_EQ(r.bus_addr, hole + 8 * kIdx[level]) << level;
            set(level - 1, phys(level) | kTypeTable);
        }
        as_.transtab = hole | panfrost::AS_TRANSTAB_LPAE_ADRMODE_TABLE;
        const WalkResult r = walk();
        EXPECT_TRUE(r.bus_fault);
        EXPECT_EQ(r.exception, 0xD0);
        EXPECT_EQ(r.bus_addr, hole + 8 * kIdx[0]);
        as_.transtab = phys(0) | panfrost::AS_TRANSTAB_LPAE_ADRMODE_TABLE;
    }
    EXPECT_TRUE(walk().ok);
}

TEST_F(MaliWalkerTables, LeafPermissionAndAttributeBits) {
    for (u64 bits = 0; bits < 64; bits++) {
        const bool rd = bits & 1, wr = bits & 2, x53 = bits & 4, x54 = bits & 8, af = bits & 16;
        const u64 sh = (bits >> 5) & 1 ? 3 : 2;
        const u64 attr = bits % 8;
        const u64 desc = kPa | kTypeLeaf | (attr << 2) | (rd ? kRead : 0) | (wr ? kWrite : 0) | (x53 ? kXn53 : 0) |
                         (x54 ? kXn54 : 0) | (af ? u64{1} << 10 : 0) | (sh << 8);
        set(3, desc);
        const WalkResult r = walk();
        // No access flag: a leaf with bit 10 clear translates.
        ASSERT_TRUE(r.ok) << std::hex << desc;
        EXPECT_EQ(r.t.no_read, !rd) << std::hex << desc;
        EXPECT_EQ(r.t.read_only, !wr) << std::hex << desc;
        // Either XN bit (io-pgtable sets both, kbase only bit 54) makes the leaf non-executable.
        EXPECT_EQ(r.t.xn, x53 || x54) << std::hex << desc;
        EXPECT_EQ(r.t.attr_idx, attr) << std::hex << desc;
        EXPECT_EQ(r.t.pa_base, kPa) << std::hex << desc;  // attribute bits are not address bits
    }
}

TEST_F(MaliWalkerTables, CheckPermissionOnMaliLeaves) {
    struct Case {
        unsigned level;
        u64 bits;
        u8 read, write, exec, atomic;
    };
    const Case cases[] = {
        {3, kRead, 0, 0xCB, 0, 0xCB},                        // read-only page
        {3, kWrite, 0xCB, 0, 0, 0xCB},                       // write-only page
        {3, kRead | kWrite, 0, 0, 0, 0},                     // read-write page
        {3, kRead | kWrite | kXn53 | kXn54, 0, 0, 0xCB, 0},  // no-exec page
        {3, 0, 0xCB, 0xCB, 0, 0xCB},                         // no access
        {2, kRead | kXn53 | kXn54, 0, 0xCA, 0xCA, 0xCA},     // 2 MiB block
        {1, kWrite | kXn54, 0xC9, 0, 0xC9, 0xC9},            // 1 GiB block
    };
    for (const Case& c : cases) {
        set(c.level, kPa | c.bits | kTypeLeaf);
        const WalkResult r = walk();
        ASSERT_TRUE(r.ok) << c.level;
        ASSERT_EQ(r.t.level, c.level);
        EXPECT_EQ(check_permission(as_, r.t, Access::Read), c.read) << std::hex << c.bits;
        EXPECT_EQ(check_permission(as_, r.t, Access::Write), c.write) << std::hex << c.bits;
        EXPECT_EQ(check_permission(as_, r.t, Access::Execute), c.exec) << std::hex << c.bits;
        EXPECT_EQ(check_permission(as_, r.t, Access::Atomic), c.atomic) << std::hex << c.bits;
        for (unsigned l = 0; l < 3; l++)
            set(l, phys(l + 1) | kTypeTable);
    }
}

}  // namespace
