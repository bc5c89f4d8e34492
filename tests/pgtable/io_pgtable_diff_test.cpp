// Seeded differential test: 100,000 random map/unmap/lookup operations against a plain std::map
// model of the translations (and a std::set model of which tables exist), for several page-size
// mixes, in both formats. Lookups are checked through both iova_to_phys and the independent walker
// of the format (stage-1 or Mali LPAE); the page count the allocator reports must match the
// model's table count.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/page_alloc.h"
#include "tests/pgtable/pgtable_test_util.h"

using namespace iommu;
using namespace pgtable_test;

namespace {

constexpr unsigned kIas = 48;
constexpr unsigned kOas = 40;
constexpr int kOps = 100000;

struct Mix {
    const char* name;
    unsigned long cfg_bitmap;
    std::vector<size_t> sizes;
    std::vector<int> weights;
    u64 window;  // the IOVA window ops land in: small enough that they collide often
    IoPgtableFmt fmt = IoPgtableFmt::ARM_64_LPAE_S1;
};

const Mix kMixes[] = {
    {"Only4K", SZ_4K | SZ_2M | SZ_1G, {SZ_4K}, {1}, 64ull << 20},
    {"Pages4K_Blocks2M", SZ_4K | SZ_2M | SZ_1G, {SZ_4K, SZ_2M}, {6, 2}, 256ull << 20},
    {"Pages4K_Blocks2M1G", SZ_4K | SZ_2M | SZ_1G, {SZ_4K, SZ_2M, SZ_1G}, {6, 3, 1}, 8ull << 30},
    {"Pages16K_Blocks32M", SZ_16K | SZ_32M, {SZ_16K, SZ_32M}, {6, 2}, 1ull << 30},
    {"Pages64K_Blocks512M", SZ_64K | SZ_512M, {SZ_64K, SZ_512M}, {6, 2}, 8ull << 30},
    {"Mali_Only4K", SZ_4K | SZ_2M | SZ_1G, {SZ_4K}, {1}, 64ull << 20, IoPgtableFmt::ARM_MALI_LPAE},
    {"Mali_Pages4K_Blocks2M", SZ_4K | SZ_2M, {SZ_4K, SZ_2M}, {6, 2}, 256ull << 20, IoPgtableFmt::ARM_MALI_LPAE},
    {"Mali_Pages4K_Blocks2M1G",
     SZ_4K | SZ_2M | SZ_1G,
     {SZ_4K, SZ_2M, SZ_1G},
     {6, 3, 1},
     8ull << 30,
     IoPgtableFmt::ARM_MALI_LPAE},
};

void PrintTo(const Mix& mix, std::ostream* os) {
    *os << mix.name;
}

// The architecture's view of the table tree, independent of the implementation.
class Model {
public:
    struct Leaf {
        size_t size;
        u64 pa;
        int prot;
    };

    explicit Model(unsigned granule_shift)
        : g_(granule_shift),
          stride_(granule_shift - 3),
          start_(4 - int((kIas - granule_shift + stride_ - 1) / stride_)) {}

    u64 bsize(int lvl) const { return u64{1} << (g_ + unsigned(3 - lvl) * stride_); }
    int level_of(size_t size) const {
        for (int l = start_; l <= 3; l++)
            if (bsize(l) == size)
                return l;
        return -1;
    }
    size_t table_count() const { return tables_.size(); }
    const std::map<u64, Leaf>& leaves() const { return leaves_; }

    int map(u64 iova, size_t size, size_t count, u64 pa, int prot) {
        const int L = level_of(size);
        for (size_t i = 0; i < count; i++) {
            const u64 e = iova + i * size;
            bool tables_all_there = true;
            for (int l = start_; l < L; l++) {
                if (has_table(l + 1, e))
                    continue;
                if (leaf_at(align(e, l), bsize(l)))
                    return -EEXIST;
                tables_all_there = false;
                break;
            }
            if (!tables_all_there)
                continue;
            if (leaf_at(e, size))
                return -EEXIST;
            if (L < 3 && has_table(L + 1, e) && any_leaf_in(e, e + size))
                return -EEXIST;
        }
        for (size_t i = 0; i < count; i++) {
            const u64 e = iova + i * size;
            for (int l = start_; l < L; l++)
                tables_.insert({l + 1, align(e, l)});
            if (L < 3)
                erase_tables_in(L + 1, e, e + size);
            leaves_[e] = {size, pa + i * size, prot};
        }
        return 0;
    }

    size_t unmap(u64 iova, size_t size, size_t count) {
        const int L = level_of(size);
        size_t done = 0;
        for (size_t i = 0; i < count; i++) {
            const u64 e = iova + i * size;
            if (e >> kIas)
                break;
            for (int l = start_; l < L; l++)
                if (!has_table(l + 1, e))
                    return done;  // a hole, or part of a larger block
            if (leaf_at(e, size)) {
                leaves_.erase(e);
            } else if (L < 3 && has_table(L + 1, e)) {
                leaves_.erase(leaves_.lower_bound(e), leaves_.lower_bound(e + size));
                erase_tables_in(L + 1, e, e + size);
            } else {
                return done;
            }
            done += size;
        }
        return done;
    }

    std::optional<std::pair<u64, const Leaf*>> lookup(u64 va) const {
        auto it = leaves_.upper_bound(va);
        if (it == leaves_.begin())
            return std::nullopt;
        --it;
        if (it->first + it->second.size <= va)
            return std::nullopt;
        return std::make_pair(it->second.pa + (va - it->first), &it->second);
    }

private:
    u64 align(u64 va, int lvl) const { return va & ~(bsize(lvl) - 1); }
    // A table at level k covers one level-(k-1) entry.
    bool has_table(int k, u64 va) const { return k == start_ || tables_.count({k, align(va, k - 1)}); }
    const Leaf* leaf_at(u64 va, size_t size) const {
        auto it = leaves_.find(va);
        return it != leaves_.end() && it->second.size == size ? &it->second : nullptr;
    }
    bool any_leaf_in(u64 a, u64 b) const {
        auto it = leaves_.lower_bound(a);
        if (it != leaves_.end() && it->first < b)
            return true;
        return false;
    }
    void erase_tables_in(int from_level, u64 a, u64 b) {
        for (int k = from_level; k <= 3; k++) {
            auto it = tables_.lower_bound({k, a});
            while (it != tables_.end() && it->first == k && it->second < b)
                it = tables_.erase(it);
        }
    }

    unsigned g_, stride_;
    int start_;
    std::map<u64, Leaf> leaves_;
    std::set<std::pair<int, u64>> tables_;
};

class IoPgtableDifferential : public ::testing::TestWithParam<Mix> {};

TEST_P(IoPgtableDifferential, HundredThousandRandomOps) {
    const Mix& mix = GetParam();
    const u64 seed = std::getenv("PGTABLE_SEED") ? std::strtoull(std::getenv("PGTABLE_SEED"), nullptr, 0)
                                                 : 0x5eed0000 + std::hash<std::string>{}(mix.name) % 1000;
    SCOPED_TRACE("replay with PGTABLE_SEED=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    auto rnd = [&](u64 n) { return n ? rng() % n : 0; };

    LeakCheck leaks;
    IoPgtableCfg cfg;
    cfg.pgsize_bitmap = mix.cfg_bitmap;
    cfg.ias = kIas;
    cfg.oas = kOas;
    // Holes and overlaps are the point here. Upstream's Mali format takes no quirk, so its WARNs
    // are drained after every op instead.
    const bool mali = mix.fmt == IoPgtableFmt::ARM_MALI_LPAE;
    cfg.quirks = mali ? 0 : IO_PGTABLE_QUIRK_NO_WARN;
    IoPgtableOps* ops = alloc_io_pgtable_ops(mix.fmt, &cfg, nullptr);
    ASSERT_NE(ops, nullptr);
    const unsigned granule_shift = unsigned(__builtin_ctzl(cfg.pgsize_bitmap));
    const long table_pages = long(size_t{1} << granule_shift) / long(kshim::PAGE_SIZE);
    const long base_pages = pages_live();

    Model model(granule_shift);
    // Straddle an L0 boundary so the ops create and free top-level tables too.
    const u64 win_base = (1ull << 39) - mix.window / 2;
    const u64 win_end = win_base + mix.window;
    std::discrete_distribution<int> pick_size(mix.weights.begin(), mix.weights.end());
    const int prots[] = {IOMMU_READ | IOMMU_WRITE,
                         IOMMU_READ,
                         IOMMU_READ | IOMMU_WRITE | IOMMU_CACHE,
                         IOMMU_WRITE | IOMMU_NOEXEC,
                         IOMMU_READ | IOMMU_MMIO,
                         IOMMU_READ | IOMMU_PRIV};

    // An address near existing mappings half the time, so ops collide.
    auto pick_iova = [&](size_t size) -> u64 {
        u64 va = win_base + rnd(mix.window);
        if (rnd(2) && !model.leaves().empty()) {
            auto it = model.leaves().lower_bound(va);
            if (it == model.leaves().end())
                --it;
            va = it->first + rnd(3 * it->second.size) - it->second.size;
        }
        va &= ~(u64{size} - 1);
        return std::clamp(va, win_base, win_end - size);
    };
    auto pick_count = [&](size_t size, u64 iova) -> size_t {
        size_t per_table = size_t{1} << (granule_shift - 3);
        size_t n = rnd(100) < 3 ? 1 + rnd(2 * per_table + 5) : 1 + rnd(size == (size_t{1} << granule_shift) ? 16 : 3);
        return std::max<size_t>(1, std::min<u64>(n, (win_end - iova) / size));
    };

    auto check_lookup = [&](u64 va) {
        auto expect = model.lookup(va);
        Translation t = walk_fmt(mix.fmt, cfg, va);
        const u64 got = ops->iova_to_phys(va);
        if (!expect) {
            ASSERT_FALSE(t.ok) << std::hex << "va " << va << " should fault, walker got pa " << t.pa;
            ASSERT_EQ(got, 0u) << std::hex << "va " << va;
            return;
        }
        ASSERT_TRUE(t.ok) << std::hex << "va " << va << ": " << t.fault;
        ASSERT_EQ(t.pa, expect->first) << std::hex << "va " << va;
        ASSERT_EQ(t.block_size, expect->second->size) << std::hex << "va " << va;
        ASSERT_EQ(got, expect->first) << std::hex << "va " << va;
        expect_fmt_leaf_attrs(mix.fmt, t, expect->second->prot, "va " + std::to_string(va));
    };

    int maps_ok = 0, maps_eexist = 0, unmaps_partial = 0;
    for (int op = 0; op < kOps; op++) {
        SCOPED_TRACE("op " + std::to_string(op));
        const u64 kind = rnd(100);
        const size_t size = mix.sizes[pick_size(rng)];
        if (kind < 40) {
            const u64 iova = pick_iova(size);
            const size_t count = pick_count(size, iova);
            const u64 pa = rnd(1ull << (kOas - 1)) & ~(u64{size} - 1);
            const int prot = prots[rnd(std::size(prots))];
            size_t mapped = 0;
            const int expect = model.map(iova, size, count, pa, prot);
            const int got = ops->map_pages(iova, pa, size, count, prot, kshim::GFP_KERNEL, &mapped);
            ASSERT_EQ(got, expect) << std::hex << "map iova " << iova << " size " << size << " count " << count;
            ASSERT_EQ(mapped, got ? 0 : size * count);
            if (!got) {
                maps_ok++;
                check_lookup(iova);
                check_lookup(iova + size * count - 1);
            } else {
                maps_eexist++;
            }
        } else if (kind < 75) {
            const u64 iova = pick_iova(size);
            const size_t count = pick_count(size, iova);
            const size_t expect = model.unmap(iova, size, count);
            const size_t got = ops->unmap_pages(iova, size, count, nullptr);
            ASSERT_EQ(got, expect) << std::hex << "unmap iova " << iova << " size " << size << " count " << count;
            if (got && got < size * count)
                unmaps_partial++;
            if (got)
                check_lookup(iova);
        } else {
            check_lookup(pick_iova(1));
            if (HasFatalFailure())
                return;
        }
        if (HasFatalFailure())
            return;
        if (mali)
            drain_warns();
        if (op % 1000 == 999) {
            ASSERT_EQ(pages_live() - base_pages, long(model.table_count()) * table_pages) << "table pages";
        }
    }

    // Every translation the model holds, through both paths.
    for (const auto& [va, leaf] : model.leaves()) {
        check_lookup(va);
        check_lookup(va + leaf.size - 1);
        if (HasFatalFailure())
            return;
    }
    EXPECT_GT(maps_ok, kOps / 20);
    EXPECT_GT(maps_eexist, kOps / 100);
    EXPECT_GT(unmaps_partial, 0);
    ASSERT_EQ(pages_live() - base_pages, long(model.table_count()) * table_pages);

    free_io_pgtable_ops(ops);
    drain_warns();  // the once-per-boot partial-block WARN has no NO_WARN opt-out upstream either
    EXPECT_EQ(leaks.diff(), "");
}

INSTANTIATE_TEST_SUITE_P(PageSizeMixes, IoPgtableDifferential, ::testing::ValuesIn(kMixes),
                         [](const ::testing::TestParamInfo<Mix>& info) { return std::string(info.param.name); });

}  // namespace
