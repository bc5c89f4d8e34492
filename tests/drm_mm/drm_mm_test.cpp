// Tests for drm/drm_mm.cpp, covering the behaviours of upstream's drm_mm KUnit suite
// (drivers/gpu/drm/tests/drm_mm_test.c) with smaller counts, plus bad-input errnos.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "drm/drm_mm.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

using namespace drm;

namespace {

constexpr u64 U64_MAX = ~u64{0};

struct InsertMode {
    const char* name;
    unsigned mode;
};
const InsertMode kInsertModes[] = {{"best", DRM_MM_INSERT_BEST},
                                   {"bottom-up", DRM_MM_INSERT_LOW},
                                   {"top-down", DRM_MM_INSERT_HIGH},
                                   {"evict", DRM_MM_INSERT_EVICT}};
const InsertMode kEvictModes[] = {{"bottom-up", DRM_MM_INSERT_LOW}, {"top-down", DRM_MM_INSERT_HIGH}};

struct LeakCheck {
    kshim::MemCounters before = kshim::mem_counters();
    std::string diff() const { return kshim::mem_counters_diff(before, kshim::mem_counters()); }
};

size_t drain_warns() {
    size_t n = 0;
    while (kshim::consume_report(kshim::ReportKind::Warn))
        n++;
    return n;
}

std::vector<unsigned> random_order(unsigned n, std::mt19937& rng) {
    std::vector<unsigned> v(n);
    std::iota(v.begin(), v.end(), 0u);
    std::shuffle(v.begin(), v.end(), rng);
    return v;
}

std::vector<unsigned> primes_upto(unsigned max) {
    std::vector<unsigned> out;
    for (unsigned n = 2; n <= max; n++) {
        bool prime = true;
        for (unsigned d = 2; d * d <= n; d++)
            prime &= n % d != 0;
        if (prime)
            out.push_back(n);
    }
    return out;
}

size_t count_holes(const drm_mm& mm) {
    size_t n = 0;
    drm_mm_for_each_hole(&mm, [&](const drm_mm_node*, u64, u64) { n++; });
    return n;
}

void remove_all(drm_mm& mm) {
    drm_mm_for_each_node_safe(&mm, [](drm_mm_node* n) { drm_mm_remove_node(n); });
}

// Nodes and holes tile the managed range exactly, in address order.
void check_invariants(const drm_mm& mm, u64 start, u64 end) {
    u64 addr = start;
    size_t gaps = 0;
    const drm_mm_node* prev = &mm.head_node_;
    bool ok = true;
    drm_mm_for_each_node(&mm, [&](const drm_mm_node* n) {
        if (!ok)
            return;
        ok = n->start >= addr && drm_mm_node_allocated(n) && n->mm == &mm;
        EXPECT_TRUE(ok) << "node " << n->start << " overlaps or is out of order at " << addr;
        EXPECT_EQ(drm_mm_hole_follows(prev), n->start > addr);
        if (n->start > addr)
            gaps++;
        addr = n->start + n->size;
        prev = n;
    });
    EXPECT_LE(addr, end);
    EXPECT_EQ(drm_mm_hole_follows(prev), addr < end);
    if (addr < end)
        gaps++;
    EXPECT_EQ(count_holes(mm), gaps);
    u64 hole_bytes = 0, node_bytes = 0;
    drm_mm_for_each_hole(&mm, [&](const drm_mm_node*, u64 s, u64 e) { hole_bytes += e - s; });
    drm_mm_for_each_node(&mm, [&](const drm_mm_node* n) { node_bytes += n->size; });
    EXPECT_EQ(hole_bytes + node_bytes, end - start);
}

// Back-to-back nodes of `size` from 0, no holes, each found by a range lookup.
void assert_continuous(drm_mm& mm, u64 size) {
    EXPECT_EQ(count_holes(mm), 0u);
    u64 addr = 0;
    drm_mm_for_each_node(&mm, [&](const drm_mm_node* node) {
        EXPECT_EQ(node->start, addr);
        EXPECT_EQ(node->size, size);
        EXPECT_FALSE(drm_mm_hole_follows(node));
        int found = 0;
        drm_mm_for_each_node_in_range(&mm, addr, addr + size, [&](drm_mm_node* check) {
            EXPECT_EQ(check, node);
            found++;
        });
        EXPECT_EQ(found, 1);
        addr += size;
    });
}

void expect_node(const drm_mm_node& node, const drm_mm& mm, u64 size, u64 alignment, unsigned long color) {
    EXPECT_TRUE(drm_mm_node_allocated(&node));
    EXPECT_EQ(node.mm, &mm);
    EXPECT_EQ(node.size, size);
    if (alignment) {
        EXPECT_EQ(node.start % alignment, 0u) << "start " << node.start << " align " << alignment;
    }
    EXPECT_EQ(node.color, color);
}

TEST(DrmMm, Init) {
    LeakCheck leaks;
    const u64 size = 4096;
    drm_mm mm;
    EXPECT_FALSE(drm_mm_initialized(&mm));
    drm_mm_init(&mm, 0, size);
    ASSERT_TRUE(drm_mm_initialized(&mm));
    EXPECT_TRUE(drm_mm_clean(&mm));
    std::vector<std::pair<u64, u64>> holes;
    drm_mm_for_each_hole(&mm, [&](const drm_mm_node*, u64 s, u64 e) { holes.push_back({s, e}); });
    ASSERT_EQ(holes.size(), 1u);
    EXPECT_EQ(holes[0], std::make_pair(u64{0}, size));

    drm_mm_node tmp;
    tmp.start = 0;
    tmp.size = size;
    ASSERT_EQ(drm_mm_reserve_node(&mm, &tmp), 0);
    EXPECT_EQ(count_holes(mm), 0u);
    EXPECT_FALSE(drm_mm_clean(&mm));
    drm_mm_remove_node(&tmp);
    EXPECT_EQ(count_holes(mm), 1u);
    EXPECT_TRUE(drm_mm_clean(&mm));
    drm_mm_takedown(&mm);
    EXPECT_EQ(kshim::pending_report_count(), 0u);
    EXPECT_EQ(leaks.diff(), "");
}

TEST(DrmMm, Debug) {
    drm_mm mm;
    drm_mm_init(&mm, 0, 4096);
    drm_mm_node nodes[2];
    nodes[0].start = 512;
    nodes[0].size = 1024;
    ASSERT_EQ(drm_mm_reserve_node(&mm, &nodes[0]), 0);
    nodes[1].size = 1024;
    nodes[1].start = 4096 - 512 - nodes[1].size;
    ASSERT_EQ(drm_mm_reserve_node(&mm, &nodes[1]), 0);
    EXPECT_EQ(count_holes(mm), 3u);
    check_invariants(mm, 0, 4096);
    remove_all(mm);
    drm_mm_takedown(&mm);
}

void expect_reserve_fail(drm_mm& mm, drm_mm_node& node) {
    int err = drm_mm_reserve_node(&mm, &node);
    EXPECT_EQ(err, -ENOSPC) << "reserve " << node.start << " + " << node.size;
    if (!err)
        drm_mm_remove_node(&node);
}

void check_reserve_boundaries(drm_mm& mm, u64 count, u64 size) {
    const std::pair<u64, u64> boundaries[] = {
        {0, 0},
        {-size, 0},
        {size, 0},
        {size * count, 0},
        {-size, size},
        {-size, -size},
        {-size, 2 * size},
        {0, -size},
        {size, -size},
        {count * size, size},
        {count * size, -size},
        {count * size, count * size},
        {count * size, -count * size},
        {count * size, -(count + 1) * size},
        {(count + 1) * size, size},
        {(count + 1) * size, -size},
        {(count + 1) * size, -2 * size},
    };
    for (auto [start, sz] : boundaries) {
        drm_mm_node tmp;
        tmp.start = start;
        tmp.size = sz;
        expect_reserve_fail(mm, tmp);
    }
}

void do_reserve(unsigned count, u64 size, std::mt19937& rng) {
    SCOPED_TRACE("reserve count " + std::to_string(count) + " size " + std::to_string(size));
    std::vector<unsigned> order = random_order(count, rng);
    auto nodes = std::make_unique<drm_mm_node[]>(count);
    drm_mm mm;
    drm_mm_init(&mm, 0, count * size);
    check_reserve_boundaries(mm, count, size);

    for (unsigned n = 0; n < count; n++) {
        nodes[n].start = order[n] * size;
        nodes[n].size = size;
        ASSERT_EQ(drm_mm_reserve_node(&mm, &nodes[n]), 0);
        ASSERT_TRUE(drm_mm_node_allocated(&nodes[n]));
        expect_reserve_fail(mm, nodes[n]);  // reserving it again finds its own range occupied
    }
    assert_continuous(mm, size);

    std::shuffle(order.begin(), order.end(), rng);
    for (unsigned n = 0; n < count; n++) {
        drm_mm_node tmp;
        tmp.start = order[n] * size;
        tmp.size = 1;
        expect_reserve_fail(mm, tmp);
        drm_mm_remove_node(&nodes[order[n]]);
        ASSERT_EQ(drm_mm_reserve_node(&mm, &nodes[order[n]]), 0);
    }
    assert_continuous(mm, size);

    for (unsigned n = 0; n < count; n++) {
        drm_mm_node tmp;
        tmp.start = size * n;
        tmp.size = size * (count - n);
        expect_reserve_fail(mm, tmp);
    }

    unsigned o = 0;
    for (unsigned p : primes_upto(std::min(count, 31u))) {
        for (unsigned m = 0; m < p; m++)
            drm_mm_remove_node(&nodes[order[(o + m) % count]]);
        for (unsigned m = 0; m < p; m++)
            ASSERT_EQ(drm_mm_reserve_node(&mm, &nodes[order[(o + m) % count]]), 0);
        o += p;
        assert_continuous(mm, size);
    }
    remove_all(mm);
    drm_mm_takedown(&mm);
}

TEST(DrmMm, Reserve) {
    std::mt19937 rng(1);
    for (unsigned n : {1u, 2u, 3u, 5u, 7u, 11u, 13u, 17u, 31u, 47u, 53u}) {
        const u64 size = u64{1} << n;
        do_reserve(64, size - 1 ? size - 1 : 1, rng);
        do_reserve(64, size, rng);
        do_reserve(64, size + 1, rng);
        if (HasFatalFailure())
            return;
    }
}

void do_insert(unsigned count, u64 size, bool replace, std::mt19937& rng) {
    SCOPED_TRACE("insert count " + std::to_string(count) + " size " + std::to_string(size));
    std::vector<unsigned> order = random_order(count, rng);
    auto nodes = std::make_unique<drm_mm_node[]>(count);
    drm_mm mm;
    drm_mm_init(&mm, 0, count * size);

    for (const InsertMode& mode : kInsertModes) {
        SCOPED_TRACE(mode.name);
        for (unsigned n = 0; n < count; n++) {
            drm_mm_node tmp;
            drm_mm_node* node = replace ? &tmp : &nodes[n];
            ASSERT_EQ(drm_mm_insert_node_generic(&mm, node, size, 0, n, mode.mode), 0) << n;
            expect_node(*node, mm, size, 0, n);
            if (replace) {
                drm_mm_replace_node(&tmp, &nodes[n]);
                EXPECT_FALSE(drm_mm_node_allocated(&tmp));
                expect_node(nodes[n], mm, size, 0, n);
                EXPECT_EQ(tmp.start, nodes[n].start);
            }
        }
        assert_continuous(mm, size);
        drm_mm_node extra;
        EXPECT_EQ(drm_mm_insert_node(&mm, &extra, size), -ENOSPC);

        // As the only hole, a removed node's place must be refilled exactly.
        for (unsigned n = 0; n < count; n++) {
            u64 addr = nodes[n].start;
            drm_mm_remove_node(&nodes[n]);
            ASSERT_EQ(drm_mm_insert_node_generic(&mm, &nodes[n], size, 0, n, mode.mode), 0);
            EXPECT_EQ(nodes[n].start, addr);
        }
        assert_continuous(mm, size);

        unsigned o = 0;
        for (unsigned p : primes_upto(std::min(count, 31u))) {
            for (unsigned m = 0; m < p; m++)
                drm_mm_remove_node(&nodes[order[(o + m) % count]]);
            for (unsigned m = 0; m < p; m++)
                ASSERT_EQ(drm_mm_insert_node_generic(&mm, &nodes[order[(o + m) % count]], size, 0, p, mode.mode), 0);
            o += p;
            assert_continuous(mm, size);
            EXPECT_EQ(drm_mm_insert_node(&mm, &extra, size), -ENOSPC);
        }
        remove_all(mm);
        EXPECT_TRUE(drm_mm_clean(&mm));
    }
    drm_mm_takedown(&mm);
}

TEST(DrmMm, Insert) {
    std::mt19937 rng(2);
    for (unsigned n : {1u, 5u, 13u, 31u, 53u}) {
        do_insert(64, (u64{1} << n) - 1 ? (u64{1} << n) - 1 : 1, false, rng);
        do_insert(64, u64{1} << n, false, rng);
        do_insert(64, (u64{1} << n) + 1, false, rng);
        if (HasFatalFailure())
            return;
    }
}

TEST(DrmMm, Replace) {
    std::mt19937 rng(3);
    for (unsigned n : {1u, 12u, 40u})
        do_insert(64, u64{1} << n, true, rng);
}

// Nodes land inside [start, end); an empty or too small range is refused.
void do_insert_range(unsigned count, u64 size, u64 start, u64 end) {
    SCOPED_TRACE("range [" + std::to_string(start) + ", " + std::to_string(end) + ") size " + std::to_string(size));
    const u64 start_n = (start + size - 1) / size;
    const u64 end_n = (end - size) / size;
    auto nodes = std::make_unique<drm_mm_node[]>(count);
    drm_mm mm;
    drm_mm_init(&mm, 0, count * size);

    for (const InsertMode& mode : kInsertModes) {
        SCOPED_TRACE(mode.name);
        for (u64 n = start_n; n <= end_n; n++) {
            ASSERT_EQ(drm_mm_insert_node_in_range(&mm, &nodes[n], size, size, n, start, end, mode.mode), 0) << n;
            EXPECT_GE(nodes[n].start, start);
            EXPECT_LE(nodes[n].start + size, end);
        }
        drm_mm_node extra;
        EXPECT_EQ(drm_mm_insert_node_in_range(&mm, &extra, size, 0, 0, start, end, mode.mode), -ENOSPC);

        // Every slot in range is used exactly once, and nothing outside it.
        u64 expect_addr = start_n * size;
        drm_mm_for_each_node(&mm, [&](const drm_mm_node* node) {
            EXPECT_EQ(node->start, expect_addr);
            expect_addr += size;
        });
        EXPECT_EQ(expect_addr, (end_n + 1) * size);

        // Removing one and reinserting puts it back in the same place.
        for (u64 n = start_n; n <= end_n; n++) {
            u64 addr = nodes[n].start;
            drm_mm_remove_node(&nodes[n]);
            ASSERT_EQ(drm_mm_insert_node_in_range(&mm, &nodes[n], size, size, n, start, end, mode.mode), 0);
            EXPECT_EQ(nodes[n].start, addr);
        }
        remove_all(mm);
    }
    drm_mm_takedown(&mm);
}

TEST(DrmMm, InsertRange) {
    const unsigned count = 64;
    for (u64 size : {u64{1}, u64{4096}, u64{1} << 30}) {
        const u64 max = count * size;
        do_insert_range(count, size, 0, max);
        do_insert_range(count, size, 1, max);
        do_insert_range(count, size, 0, max - 1);
        do_insert_range(count, size, 0, max / 2);
        do_insert_range(count, size, max / 2, max);
        do_insert_range(count, size, max / 4 + 1, 3 * max / 4 - 1);
        if (HasFatalFailure())
            return;
    }
    // Ranges that cannot hold the node.
    drm_mm mm;
    drm_mm_init(&mm, 0, 4096);
    drm_mm_node node;
    EXPECT_EQ(drm_mm_insert_node_in_range(&mm, &node, 16, 0, 0, 100, 100, DRM_MM_INSERT_BEST), -ENOSPC);
    EXPECT_EQ(drm_mm_insert_node_in_range(&mm, &node, 16, 0, 0, 100, 115, DRM_MM_INSERT_BEST), -ENOSPC);
    EXPECT_EQ(drm_mm_insert_node_in_range(&mm, &node, 16, 0, 0, 200, 100, DRM_MM_INSERT_BEST), -ENOSPC);
    EXPECT_EQ(drm_mm_insert_node_in_range(&mm, &node, 16, 0, 0, 4090, 8192, DRM_MM_INSERT_BEST), -ENOSPC);
    EXPECT_EQ(drm_mm_insert_node_in_range(&mm, &node, 16, 0, 0, 100, 116, DRM_MM_INSERT_HIGH), 0);
    EXPECT_EQ(node.start, 100u);
    drm_mm_remove_node(&node);
    drm_mm_takedown(&mm);
}

TEST(DrmMm, AlignPrimes) {
    const unsigned max_count = 128;
    auto nodes = std::make_unique<drm_mm_node[]>(max_count);
    for (const InsertMode& mode : kInsertModes) {
        SCOPED_TRACE(mode.name);
        drm_mm mm;
        drm_mm_init(&mm, 1, U64_MAX - 2);
        unsigned i = 0;
        for (unsigned prime : primes_upto(max_count * 4)) {
            if (i == max_count)
                break;
            u64 size = (prime % 7) + 1;  // irregular sizes keep the alignment work honest
            ASSERT_EQ(drm_mm_insert_node_generic(&mm, &nodes[i], size, prime, i, mode.mode), 0) << prime;
            expect_node(nodes[i], mm, size, prime, i);
            i++;
        }
        check_invariants(mm, 1, U64_MAX - 1);
        remove_all(mm);
        drm_mm_takedown(&mm);
    }
}

void align_pot(int max) {
    auto nodes = std::make_unique<drm_mm_node[]>(max);
    drm_mm mm;
    drm_mm_init(&mm, 1, U64_MAX - 2);
    for (int bit = max - 1; bit; bit--) {
        u64 align = u64{1} << bit;
        ASSERT_EQ(drm_mm_insert_node_generic(&mm, &nodes[bit], 1, align, bit, DRM_MM_INSERT_BEST), 0) << bit;
        expect_node(nodes[bit], mm, 1, align, bit);
    }
    remove_all(mm);
    drm_mm_takedown(&mm);
}

TEST(DrmMm, Align32) {
    align_pot(32);
}
TEST(DrmMm, Align64) {
    align_pot(64);
}

// Holes at [0,1), [2,5), [6,7): a 2-sized node fits only the middle one, whichever end we start.
void insert_once(unsigned mode) {
    drm_mm mm;
    drm_mm_init(&mm, 0, 7);
    drm_mm_node rsvd_lo, rsvd_hi, node;
    rsvd_lo.start = 1;
    rsvd_lo.size = 1;
    ASSERT_EQ(drm_mm_reserve_node(&mm, &rsvd_lo), 0);
    rsvd_hi.start = 5;
    rsvd_hi.size = 1;
    ASSERT_EQ(drm_mm_reserve_node(&mm, &rsvd_hi), 0);
    EXPECT_TRUE(drm_mm_hole_follows(&rsvd_lo));
    EXPECT_TRUE(drm_mm_hole_follows(&rsvd_hi));
    ASSERT_EQ(drm_mm_insert_node_generic(&mm, &node, 2, 0, 0, mode), 0);
    EXPECT_EQ(node.start, (mode & ~DRM_MM_INSERT_ONCE) == DRM_MM_INSERT_HIGH ? 3u : 2u);
    remove_all(mm);
    drm_mm_takedown(&mm);
}

TEST(DrmMm, Lowest) {
    insert_once(DRM_MM_INSERT_LOW);
}
TEST(DrmMm, Highest) {
    insert_once(DRM_MM_INSERT_HIGH);
}
TEST(DrmMm, LowestOnce) {
    insert_once(DRM_MM_INSERT_LOWEST);
}
TEST(DrmMm, HighestOnce) {
    insert_once(DRM_MM_INSERT_HIGHEST);
}

// Free random subsets; top-down reinsertion always takes the highest free slot, bottom-up the lowest.
void do_updown(unsigned mode, bool highest_first) {
    const unsigned count = 256;
    const u64 size = 8;
    std::mt19937 rng(mode + 7);
    auto nodes = std::make_unique<drm_mm_node[]>(count);
    drm_mm mm;
    drm_mm_init(&mm, 0, count * size);
    for (unsigned n = 0; n < count; n++) {
        ASSERT_EQ(drm_mm_insert_node_generic(&mm, &nodes[n], size, 0, 0, mode), 0);
        EXPECT_EQ(nodes[n].start, highest_first ? (count - 1 - n) * size : n * size);
    }
    std::vector<unsigned> order = random_order(count, rng);
    unsigned o = 0;
    for (unsigned p : primes_upto(31)) {
        std::vector<bool> freed(count);
        for (unsigned m = 0; m < p; m++) {
            drm_mm_node* node = &nodes[order[(o + m) % count]];
            freed[node->start / size] = true;
            drm_mm_remove_node(node);
        }
        for (unsigned m = 0; m < p; m++) {
            drm_mm_node* node = &nodes[order[(o + m) % count]];
            ASSERT_EQ(drm_mm_insert_node_generic(&mm, node, size, 0, 0, mode), 0);
            unsigned slot = unsigned(node->start / size);
            unsigned want = 0;
            if (highest_first) {
                for (unsigned s = count; s--;)
                    if (freed[s]) {
                        want = s;
                        break;
                    }
            } else {
                for (unsigned s = 0; s < count; s++)
                    if (freed[s]) {
                        want = s;
                        break;
                    }
            }
            EXPECT_EQ(slot, want);
            freed[slot] = false;
        }
        o += p;
    }
    remove_all(mm);
    drm_mm_takedown(&mm);
}

TEST(DrmMm, Topdown) {
    do_updown(DRM_MM_INSERT_HIGH, true);
}
TEST(DrmMm, Bottomup) {
    do_updown(DRM_MM_INSERT_LOW, false);
}

// --- eviction roster ---

struct EvictNode {
    drm_mm_node node;
    bool listed = false;
};

// Adds nodes in `order` until a hole is found, removes them again in reverse, evicts the chosen.
bool evict_nodes(drm_mm_scan* scan, std::vector<EvictNode>& nodes, const std::vector<unsigned>& order,
                 std::vector<EvictNode*>* evicted, bool use_color) {
    std::vector<EvictNode*> roster;
    bool found = false;
    for (unsigned idx : order) {
        EvictNode* e = &nodes[idx];
        roster.push_back(e);
        if (drm_mm_scan_add_block(scan, &e->node)) {
            found = true;
            break;
        }
    }
    for (auto it = roster.rbegin(); it != roster.rend(); ++it)
        if (drm_mm_scan_remove_block(scan, &(*it)->node))
            evicted->push_back(*it);
    if (!found) {
        EXPECT_TRUE(evicted->empty());
        return false;
    }
    for (EvictNode* e : *evicted)
        drm_mm_remove_node(&e->node);
    if (use_color) {
        while (drm_mm_node* extra = drm_mm_scan_color_evict(scan)) {
            EvictNode* e = nullptr;
            for (EvictNode& cand : nodes)
                if (&cand.node == extra)
                    e = &cand;
            EXPECT_NE(e, nullptr);
            drm_mm_remove_node(extra);
            evicted->push_back(e);
        }
    }
    return true;
}

void evict_something(drm_mm& mm, std::vector<EvictNode>& nodes, const std::vector<unsigned>& order, u64 range_start,
                     u64 range_end, u64 size, u64 alignment, unsigned long color, unsigned mode, bool use_color) {
    SCOPED_TRACE("evict size " + std::to_string(size) + " align " + std::to_string(alignment));
    drm_mm_scan scan;
    drm_mm_scan_init_with_range(&scan, &mm, size, alignment, color, range_start, range_end, mode);
    std::vector<EvictNode*> evicted;
    ASSERT_TRUE(evict_nodes(&scan, nodes, order, &evicted, use_color));

    drm_mm_node tmp;
    ASSERT_EQ(drm_mm_insert_node_generic(&mm, &tmp, size, alignment, color, DRM_MM_INSERT_EVICT), 0);
    EXPECT_GE(tmp.start, range_start);
    EXPECT_LE(tmp.start + tmp.size, range_end);
    expect_node(tmp, mm, size, alignment, color);
    if (use_color) {
        const drm_mm_node* next = drm_mm_next_node(&tmp);
        EXPECT_TRUE(drm_mm_hole_follows(&tmp) || !drm_mm_node_allocated(next)) << "colors abutt";
    }
    drm_mm_remove_node(&tmp);
    for (EvictNode* e : evicted)
        ASSERT_EQ(drm_mm_reserve_node(&mm, &e->node), 0);
}

void do_evict(u64 range_start, u64 range_end) {
    const unsigned size = 1024;
    std::mt19937 rng(11);
    std::vector<EvictNode> nodes(size);
    drm_mm mm;
    drm_mm_init(&mm, 0, size);
    for (unsigned n = 0; n < size; n++)
        ASSERT_EQ(drm_mm_insert_node(&mm, &nodes[n].node, 1), 0);

    // Nothing fits without eviction.
    drm_mm_node tmp;
    EXPECT_EQ(drm_mm_insert_node(&mm, &tmp, 1), -ENOSPC);

    const u64 range = range_end - range_start;
    for (const InsertMode& mode : kEvictModes) {
        SCOPED_TRACE(mode.name);
        for (u64 n = 1; n <= range; n <<= 1) {
            evict_something(mm, nodes, random_order(size, rng), range_start, range_end, n, 1, 0, mode.mode, false);
            if (::testing::Test::HasFatalFailure())
                return;
        }
        for (u64 n = 1; n < range; n <<= 1) {
            evict_something(mm, nodes, random_order(size, rng), range_start, range_end, range / 2, n, 0, mode.mode,
                            false);
            if (::testing::Test::HasFatalFailure())
                return;
        }
        for (unsigned p : primes_upto(std::min<u64>(range, 61))) {
            u64 nsize = (range - p + 1) / 2;
            evict_something(mm, nodes, random_order(size, rng), range_start, range_end, nsize, p, 0, mode.mode, false);
            if (::testing::Test::HasFatalFailure())
                return;
        }
    }
    check_invariants(mm, 0, size);
    remove_all(mm);
    drm_mm_takedown(&mm);
}

TEST(DrmMmEvict, WholeRange) {
    do_evict(0, 1024);
}
TEST(DrmMmEvict, SubRange) {
    do_evict(256, 768);
}

TEST(DrmMmEvict, ScanWithoutHitEvictsNothing) {
    std::vector<EvictNode> nodes(16);
    drm_mm mm;
    drm_mm_init(&mm, 0, 16);
    for (auto& e : nodes)
        ASSERT_EQ(drm_mm_insert_node(&mm, &e.node, 1), 0);
    drm_mm_scan scan;
    drm_mm_scan_init(&scan, &mm, 32, 0, 0, DRM_MM_INSERT_LOW);  // bigger than the whole mm
    std::vector<unsigned> order(16);
    std::iota(order.begin(), order.end(), 0u);
    std::vector<EvictNode*> evicted;
    EXPECT_FALSE(evict_nodes(&scan, nodes, order, &evicted, false));
    assert_continuous(mm, 1);
    remove_all(mm);
    drm_mm_takedown(&mm);
}

// --- color ---

void separate_adjacent_colors(const drm_mm_node* node, unsigned long color, u64* start, u64* end) {
    if (drm_mm_node_allocated(node) && node->color != color)
        ++*start;
    node = drm_mm_next_node(node);
    if (drm_mm_node_allocated(node) && node->color != color)
        --*end;
}

bool colors_abutt(const drm_mm_node* node) {
    return !drm_mm_hole_follows(node) && drm_mm_node_allocated(drm_mm_next_node(node));
}

TEST(DrmMm, Color) {
    LeakCheck leaks;
    const unsigned count = 256;
    drm_mm mm;
    drm_mm_init(&mm, 0, U64_MAX);
    std::vector<std::unique_ptr<drm_mm_node>> owned;
    for (unsigned n = 1; n <= count; n++) {
        owned.push_back(std::make_unique<drm_mm_node>());
        ASSERT_EQ(drm_mm_insert_node_generic(&mm, owned.back().get(), n, 0, n, DRM_MM_INSERT_BEST), 0);
    }
    drm_mm_for_each_node(&mm, [](const drm_mm_node* n) { EXPECT_EQ(n->color, n->size); });
    remove_all(mm);
    owned.clear();

    mm.color_adjust = separate_adjacent_colors;
    for (const InsertMode& mode : kInsertModes) {
        SCOPED_TRACE(mode.name);
        owned.push_back(std::make_unique<drm_mm_node>());
        drm_mm_node* node = owned.back().get();
        node->size = 1 + 2 * count;
        node->color = node->size;
        ASSERT_EQ(drm_mm_reserve_node(&mm, node), 0);
        u64 last = node->start + node->size;

        for (unsigned n = 1; n <= count; n++) {
            owned.push_back(std::make_unique<drm_mm_node>());
            node = owned.back().get();
            node->start = last;
            node->size = n + count;
            node->color = node->size;
            ASSERT_EQ(drm_mm_reserve_node(&mm, node), -ENOSPC) << "reserve " << n << " missed the color overlap";
            node->start += n + 1;
            node->start += (n + count) - node->start % (n + count);
            ASSERT_EQ(drm_mm_reserve_node(&mm, node), 0) << n;
            last = node->start + node->size;
        }
        for (unsigned n = 1; n <= count; n++) {
            owned.push_back(std::make_unique<drm_mm_node>());
            ASSERT_EQ(drm_mm_insert_node_generic(&mm, owned.back().get(), n, n, n, mode.mode), 0) << n;
        }
        drm_mm_for_each_node(&mm, [](const drm_mm_node* n) {
            EXPECT_EQ(n->color, n->size);
            EXPECT_FALSE(colors_abutt(n)) << n->start;
            EXPECT_EQ(n->start % n->size, 0u);
        });
        remove_all(mm);
        owned.clear();
    }
    drm_mm_takedown(&mm);
    EXPECT_EQ(leaks.diff(), "");
}

void do_color_evict(u64 range_start, u64 range_end) {
    const unsigned total = 1024;
    std::mt19937 rng(23);
    std::vector<EvictNode> nodes(total);
    drm_mm mm;
    drm_mm_init(&mm, 0, 2 * total - 1);
    mm.color_adjust = separate_adjacent_colors;
    unsigned long color = 0;
    for (unsigned n = 0; n < total; n++)
        ASSERT_EQ(drm_mm_insert_node_generic(&mm, &nodes[n].node, 1, 0, color++, DRM_MM_INSERT_BEST), 0);

    const u64 range = range_end - range_start;
    for (const InsertMode& mode : kEvictModes) {
        SCOPED_TRACE(mode.name);
        for (u64 n = 1; n <= range / 2; n <<= 1) {
            evict_something(mm, nodes, random_order(total, rng), range_start, range_end, n, 1, color++, mode.mode,
                            true);
            if (::testing::Test::HasFatalFailure())
                return;
        }
        for (u64 n = 1; n < range / 2; n <<= 1) {
            evict_something(mm, nodes, random_order(total, rng), range_start, range_end, range / 4, n, color++,
                            mode.mode, true);
            if (::testing::Test::HasFatalFailure())
                return;
        }
    }
    remove_all(mm);
    drm_mm_takedown(&mm);
}

TEST(DrmMmEvict, Color) {
    do_color_evict(0, 2 * 1024 - 1);
}
TEST(DrmMmEvict, ColorRange) {
    do_color_evict(512, 1536);
}

// --- iteration and lookup ---

TEST(DrmMm, NodesInRange) {
    drm_mm mm;
    drm_mm_init(&mm, 0, 1000);
    drm_mm_node a, b, c;
    a.start = 100, a.size = 50;
    b.start = 150, b.size = 50;
    c.start = 400, c.size = 100;
    ASSERT_EQ(drm_mm_reserve_node(&mm, &a), 0);
    ASSERT_EQ(drm_mm_reserve_node(&mm, &c), 0);
    ASSERT_EQ(drm_mm_reserve_node(&mm, &b), 0);
    auto in = [&](u64 s, u64 e) {
        std::vector<drm_mm_node*> got;
        drm_mm_for_each_node_in_range(&mm, s, e, [&](drm_mm_node* n) { got.push_back(n); });
        return got;
    };
    EXPECT_EQ(in(0, 100), std::vector<drm_mm_node*>{});
    EXPECT_EQ(in(0, 101), std::vector<drm_mm_node*>{&a});
    EXPECT_EQ(in(149, 151), (std::vector<drm_mm_node*>{&a, &b}));
    EXPECT_EQ(in(199, 401), (std::vector<drm_mm_node*>{&b, &c}));
    EXPECT_EQ(in(200, 400), std::vector<drm_mm_node*>{});
    EXPECT_EQ(in(450, 1000), std::vector<drm_mm_node*>{&c});
    EXPECT_EQ(__drm_mm_interval_first(&mm, 120, 120), &a);
    // Removing inside the walk is allowed.
    drm_mm_for_each_node_in_range(&mm, 0, 1000, [](drm_mm_node* n) { drm_mm_remove_node(n); });
    EXPECT_TRUE(drm_mm_clean(&mm));
    drm_mm_takedown(&mm);
}

TEST(DrmMm, HolesMostRecentFirstAndEvictModeUsesThem) {
    drm_mm mm;
    drm_mm_init(&mm, 0, 100);
    drm_mm_node n[10];
    for (auto& x : n)
        ASSERT_EQ(drm_mm_insert_node(&mm, &x, 10), 0);
    drm_mm_remove_node(&n[2]);
    drm_mm_remove_node(&n[7]);
    std::vector<u64> starts;
    drm_mm_for_each_hole(&mm, [&](const drm_mm_node*, u64 s, u64) { starts.push_back(s); });
    EXPECT_EQ(starts, (std::vector<u64>{70, 20}));
    ASSERT_EQ(drm_mm_insert_node_generic(&mm, &n[2], 10, 0, 0, DRM_MM_INSERT_EVICT), 0);
    EXPECT_EQ(n[2].start, 70u);
    remove_all(mm);
    drm_mm_takedown(&mm);
}

TEST(DrmMm, BestFitPrefersTheSmallestHole) {
    drm_mm mm;
    drm_mm_init(&mm, 0, 1000);
    drm_mm_node r[3], node;
    r[0].start = 10, r[0].size = 90;    // hole [0,10)
    r[1].start = 130, r[1].size = 370;  // hole [100,130)
    r[2].start = 520, r[2].size = 480;  // hole [500,520)
    for (auto& x : r)
        ASSERT_EQ(drm_mm_reserve_node(&mm, &x), 0);
    ASSERT_EQ(drm_mm_insert_node(&mm, &node, 15), 0);
    EXPECT_EQ(node.start, 500u);
    drm_mm_remove_node(&node);
    ASSERT_EQ(drm_mm_insert_node_generic(&mm, &node, 15, 0, 0, DRM_MM_INSERT_LOW), 0);
    EXPECT_EQ(node.start, 100u);
    remove_all(mm);
    drm_mm_takedown(&mm);
}

// --- bad input ---

TEST(DrmMm, BadInputIsRejectedWithTheKernelErrno) {
    drm_mm mm;
    drm_mm_init(&mm, 0x1000, 0x1000);
    drm_mm_node node;
    EXPECT_EQ(drm_mm_insert_node(&mm, &node, 0), -ENOSPC);
    EXPECT_EQ(drm_mm_insert_node(&mm, &node, 0x1001), -ENOSPC);
    EXPECT_EQ(drm_mm_insert_node_in_range(&mm, &node, 0x10, 0, 0, 0x1800, 0x1808, DRM_MM_INSERT_BEST), -ENOSPC);
    EXPECT_FALSE(drm_mm_node_allocated(&node));

    // Reserve: zero size, wrapping end, outside the managed range.
    node.start = 0x1100, node.size = 0;
    EXPECT_EQ(drm_mm_reserve_node(&mm, &node), -ENOSPC);
    node.start = 0x1100, node.size = U64_MAX;
    EXPECT_EQ(drm_mm_reserve_node(&mm, &node), -ENOSPC);
    node.start = 0x800, node.size = 0x1000;
    EXPECT_EQ(drm_mm_reserve_node(&mm, &node), -ENOSPC);
    node.start = 0x1f00, node.size = 0x200;
    EXPECT_EQ(drm_mm_reserve_node(&mm, &node), -ENOSPC);
    EXPECT_EQ(kshim::pending_report_count(), 0u);

    // Double insert / reserve of a live node.
    ASSERT_EQ(drm_mm_insert_node(&mm, &node, 0x100), 0);
    EXPECT_EQ(drm_mm_reserve_node(&mm, &node), -ENOSPC);
    EXPECT_EQ(drm_mm_insert_node(&mm, &node, 0x100), -EINVAL);
    EXPECT_EQ(drm_mm_hole_node_start(&node), node.start + 0x100);
    check_invariants(mm, 0x1000, 0x2000);
    EXPECT_EQ(drain_warns(), 1u);

    // Takedown with a node left is reported, and removing twice WARNs.
    drm_mm_takedown(&mm);
    EXPECT_GE(drain_warns(), 1u);
    drm_mm_remove_node(&node);
    drm_mm_remove_node(&node);
    EXPECT_EQ(drain_warns(), 1u);
    drm_mm_takedown(&mm);
    EXPECT_EQ(kshim::pending_report_count(), 0u);

    // An init whose range wraps is refused.
    drm_mm bad;
    drm_mm_init(&bad, 0x1000, U64_MAX);
    EXPECT_FALSE(drm_mm_initialized(&bad));
    EXPECT_EQ(drain_warns(), 1u);
}

// Random churn with every mode, alignment and range, checking the tiling invariant throughout.
TEST(DrmMm, RandomChurnKeepsNodesAndHolesConsistent) {
    std::mt19937_64 rng(99);
    const u64 start = 0x10000, size = 1 << 20;
    const unsigned kNodes = 256;
    std::vector<drm_mm_node> nodes(kNodes);
    drm_mm mm;
    drm_mm_init(&mm, start, size);
    const unsigned modes[] = {DRM_MM_INSERT_BEST,  DRM_MM_INSERT_LOW,    DRM_MM_INSERT_HIGH,
                              DRM_MM_INSERT_EVICT, DRM_MM_INSERT_LOWEST, DRM_MM_INSERT_HIGHEST};
    for (int op = 0; op < 20000; op++) {
        drm_mm_node& n = nodes[rng() % kNodes];
        if (drm_mm_node_allocated(&n)) {
            drm_mm_remove_node(&n);
        } else {
            u64 sz = 1 + rng() % 4096;
            u64 align = rng() % 3 ? 0 : u64{1} << (rng() % 12);
            u64 rs = start + rng() % size, re = rs + rng() % size;
            int ret = drm_mm_insert_node_in_range(&mm, &n, sz, align, 0, rs, re, modes[rng() % std::size(modes)]);
            ASSERT_TRUE(ret == 0 || ret == -ENOSPC);
            if (!ret) {
                EXPECT_GE(n.start, rs);
                EXPECT_LE(n.start + sz, re);
                if (align) {
                    EXPECT_EQ(n.start % align, 0u);
                }
            }
        }
        if (op % 500 == 0)
            check_invariants(mm, start, start + size);
        if (HasFailure())
            return;
    }
    check_invariants(mm, start, start + size);
    remove_all(mm);
    drm_mm_takedown(&mm);
    EXPECT_EQ(kshim::pending_report_count(), 0u);
}

// --- the address-ordered hole index (augmented rb-tree) ---

struct HoleTreeStats {
    size_t holes = 0;
    int black_height = 0;
};

// Checks one subtree: address order, red-black shape and every subtree_max_hole_.
HoleTreeStats check_hole_subtree(const mm_detail::HoleAddrLink* link, const mm_detail::HoleAddrLink* parent,
                                 u64* prev_start, bool* first) {
    if (!link)
        return {0, 1};
    EXPECT_EQ(link->hole_parent_, parent);
    const auto* node = static_cast<const drm_mm_node*>(link);
    HoleTreeStats l = check_hole_subtree(link->hole_left_, link, prev_start, first);
    u64 start = __drm_mm_hole_node_start(node);
    if (!*first) {
        EXPECT_LT(*prev_start, start);
    }
    *first = false;
    *prev_start = start;
    EXPECT_TRUE(drm_mm_hole_follows(node));
    EXPECT_EQ(node->hole_size_, __drm_mm_hole_node_end(node) - start);
    HoleTreeStats r = check_hole_subtree(link->hole_right_, link, prev_start, first);
    u64 max = node->hole_size_;
    if (link->hole_left_)
        max = std::max(max, link->hole_left_->subtree_max_hole_);
    if (link->hole_right_)
        max = std::max(max, link->hole_right_->subtree_max_hole_);
    EXPECT_EQ(link->subtree_max_hole_, max) << "hole at " << start;
    if (link->hole_red_) {
        EXPECT_FALSE(link->hole_left_ && link->hole_left_->hole_red_);
        EXPECT_FALSE(link->hole_right_ && link->hole_right_->hole_red_);
    }
    EXPECT_EQ(l.black_height, r.black_height);
    return {l.holes + r.holes + 1, l.black_height + (link->hole_red_ ? 0 : 1)};
}

void check_hole_tree(const drm_mm& mm) {
    u64 prev = 0;
    bool first = true;
    const mm_detail::HoleAddrLink* root = mm.holes_addr_.hole_parent_;
    if (root) {
        EXPECT_FALSE(root->hole_red_);
    }
    HoleTreeStats st = check_hole_subtree(root, &mm.holes_addr_, &prev, &first);
    EXPECT_EQ(st.holes, count_holes(mm));
}

TEST(DrmMmHoleIndex, AugmentationSurvivesChurnAndReplace) {
    std::mt19937_64 rng(7);
    const u64 size = 1 << 16;
    std::vector<drm_mm_node> nodes(512), spare(1);
    drm_mm mm;
    drm_mm_init(&mm, 0, size);
    check_hole_tree(mm);
    for (int op = 0; op < 6000 && !HasFailure(); op++) {
        drm_mm_node& n = nodes[rng() % nodes.size()];
        if (drm_mm_node_allocated(&n)) {
            if (rng() % 8 == 0) {
                // replace moves the node's hole link to another object
                drm_mm_replace_node(&n, &spare[0]);
                drm_mm_replace_node(&spare[0], &n);
            } else {
                drm_mm_remove_node(&n);
            }
        } else if (rng() % 2) {
            n.start = rng() % size;
            n.size = 1 + rng() % 256;
            (void)drm_mm_reserve_node(&mm, &n);
        } else {
            (void)drm_mm_insert_node_generic(&mm, &n, 1 + rng() % 512, 0, 0, rng() % 4);
        }
        check_hole_tree(mm);
    }
    remove_all(mm);
    check_hole_tree(mm);
    drm_mm_takedown(&mm);
}

struct ModelHole {
    u64 start, end;
};

std::vector<ModelHole> holes_by_address(const drm_mm& mm) {
    std::vector<ModelHole> holes;
    drm_mm_for_each_hole(&mm, [&](const drm_mm_node*, u64 s, u64 e) { holes.push_back({s, e}); });
    std::sort(holes.begin(), holes.end(), [](const ModelHole& a, const ModelHole& b) { return a.start < b.start; });
    return holes;
}

// Where the reference model puts `size` in hole h, or false (no color: plain alignment).
bool model_place(const ModelHole& h, u64 rs, u64 re, u64 size, u64 align, bool high, u64* out) {
    u64 lo = std::max(h.start, rs), hi = std::min(h.end, re);
    if (hi <= lo || hi - lo < size)
        return false;
    u64 at;
    if (high) {
        at = hi - size;
        if (align)
            at -= at % align;
        if (at < lo)
            return false;
    } else {
        at = lo;
        if (align && at % align)
            at += align - at % align;
        if (at + size > hi || at + size < at)
            return false;
    }
    *out = at;
    return true;
}

// Every insertion mode against a brute-force model over random fragmented layouts: LOW takes
// the lowest fitting hole, HIGH the highest (placed at its top), BEST a smallest fitting hole,
// EVICT the most recent fitting hole; -ENOSPC exactly when no hole fits.
TEST(DrmMmHoleIndex, EveryModeMatchesAReferenceModel) {
    std::mt19937_64 rng(2024);
    for (int layout = 0; layout < 12 && !HasFailure(); layout++) {
        const u64 size = u64{1} << 20;
        const unsigned kFill = 600;
        std::vector<drm_mm_node> fill(kFill), probe(400);
        drm_mm mm;
        drm_mm_init(&mm, 0, size);
        // Fragment: reserve random blocks, leaving holes of many sizes.
        for (auto& f : fill) {
            f.start = rng() % size;
            f.size = 1 + rng() % (layout % 2 ? 64 : 2048);
            if (drm_mm_reserve_node(&mm, &f))
                f = drm_mm_node{};
        }
        for (auto& p : probe) {
            const unsigned mode = rng() % 4;
            const u64 sz = 1 + rng() % (rng() % 4 ? 64 : 4096);
            const u64 align = rng() % 3 ? 0 : u64{1} << (rng() % 10);
            u64 rs = 0, re = size;
            if (rng() % 2) {
                rs = rng() % size;
                re = rs + 1 + rng() % (size - rs);
            }
            std::vector<ModelHole> holes = holes_by_address(mm);
            std::vector<ModelHole> stack;  // most recent first, the EVICT order
            drm_mm_for_each_hole(&mm, [&](const drm_mm_node*, u64 s, u64 e) { stack.push_back({s, e}); });

            bool want_fit = false;
            u64 want_start = 0, best_size = ~u64{0};
            auto consider = [&](const ModelHole& h, bool high) {
                u64 at;
                if (!model_place(h, rs, re, sz, align, high, &at))
                    return false;
                want_fit = true;
                want_start = at;
                return true;
            };
            switch (mode) {
            case DRM_MM_INSERT_LOW:
                for (const auto& h : holes)
                    if (consider(h, false))
                        break;
                break;
            case DRM_MM_INSERT_HIGH:
                for (auto it = holes.rbegin(); it != holes.rend(); ++it)
                    if (consider(*it, true))
                        break;
                break;
            case DRM_MM_INSERT_EVICT:
                for (const auto& h : stack)
                    if (consider(h, false))
                        break;
                break;
            default:
                for (const auto& h : holes) {
                    u64 at;
                    if (model_place(h, rs, re, sz, align, false, &at)) {
                        want_fit = true;
                        best_size = std::min(best_size, h.end - h.start);
                    }
                }
                break;
            }

            int ret = drm_mm_insert_node_in_range(&mm, &p, sz, align, 0, rs, re, mode);
            SCOPED_TRACE(testing::Message() << "layout " << layout << " mode " << mode << " size " << sz << " align "
                                            << align << " range [" << rs << ", " << re << ")");
            if (!want_fit) {
                EXPECT_EQ(ret, -ENOSPC);
                continue;
            }
            ASSERT_EQ(ret, 0);
            if (mode == DRM_MM_INSERT_BEST) {
                // The chosen hole: the one the node now sits in, reconstructed from the model.
                auto h = std::find_if(holes.begin(), holes.end(),
                                      [&](const ModelHole& m) { return m.start <= p.start && p.start + sz <= m.end; });
                ASSERT_NE(h, holes.end());
                EXPECT_EQ(h->end - h->start, best_size);
                u64 at;
                ASSERT_TRUE(model_place(*h, rs, re, sz, align, false, &at));
                EXPECT_EQ(p.start, at);
            } else {
                EXPECT_EQ(p.start, want_start);
            }
            if (HasFailure())
                break;
        }
        check_hole_tree(mm);
        check_invariants(mm, 0, size);
        remove_all(mm);
        drm_mm_takedown(&mm);
    }
}

// --- upstream's interval sentinel ---

TEST(DrmMm, IntervalFirstReturnsTheHeadNodeWhenNothingMatches) {
    drm_mm mm;
    drm_mm_init(&mm, 0x1000, 0x1000);
    drm_mm_node* none = __drm_mm_interval_first(&mm, 0x1000, 0x1fff);
    EXPECT_EQ(none, &mm.head_node_);
    EXPECT_FALSE(drm_mm_node_allocated(none));
    EXPECT_EQ(none->start, 0x2000u);  // the end of the range, so "node->start < end" loops stop

    drm_mm_node a;
    a.start = 0x1400, a.size = 0x100;
    ASSERT_EQ(drm_mm_reserve_node(&mm, &a), 0);
    EXPECT_EQ(__drm_mm_interval_first(&mm, 0x1000, 0x13ff), &mm.head_node_);
    EXPECT_EQ(__drm_mm_interval_first(&mm, 0x1500, 0x1fff), &mm.head_node_);
    EXPECT_EQ(__drm_mm_interval_first(&mm, 0, 0xfff), &mm.head_node_);
    EXPECT_EQ(__drm_mm_interval_first(&mm, 0x13ff, 0x1400), &a);

    // A range past the managed one visits the real nodes once and stops at the head.
    int visited = 0;
    drm_mm_for_each_node_in_range(&mm, 0, ~u64{0}, [&](drm_mm_node* n) {
        EXPECT_EQ(n, &a);
        visited++;
    });
    EXPECT_EQ(visited, 1);
    drm_mm_for_each_node_in_range(&mm, 0x1500, 0x1800, [&](drm_mm_node*) { ADD_FAILURE(); });
    drm_mm_remove_node(&a);
    drm_mm_takedown(&mm);
}

}  // namespace
