// The B+tree address index of drm_gpuvm (drm/drm_gpuva_index.h): a seeded differential test
// against std::map (insert, erase, find, floor/ceil, order), splits and merges through every
// level, the node reserve (its bound, the GFP_NOWAIT fallback with its WARN, -ENOMEM leaving
// the index unchanged), and a VM big enough to split nodes mapping inside a fence-signalling
// section. The fixture checks that no node leaks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <vector>

#include "drm/drm_gpuva_index.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/report.h"
#include "testkit/gpuvm_harness.h"
#include "tests/support/kernel_test.h"

using namespace drm;
using namespace kshim;

namespace {

class GpuvaIndexTest : public kshim::testing::KernelTest {};

// The index never dereferences its values: a distinct fake pointer per key is enough.
drm_gpuva* val(u64 key) {
    return reinterpret_cast<drm_gpuva*>(static_cast<uintptr_t>(key) * 16 + 16);
}

u64 seed_from_env(u64 dflt) {
    const char* s = std::getenv("KSHIM_SEED");
    return s ? std::strtoull(s, nullptr, 0) : dflt;
}

// Compares everything the index answers with the model.
void expect_same(const GpuvaIndex& idx, const std::map<u64, drm_gpuva*>& model) {
    ASSERT_STREQ(idx.check(), "");
    ASSERT_EQ(idx.size(), model.size());
    auto it = model.begin();
    bool same = true;
    idx.for_each([&](u64 k, drm_gpuva* v) {
        if (it == model.end() || it->first != k || it->second != v)
            same = false;
        if (it != model.end())
            ++it;
    });
    EXPECT_TRUE(same && it == model.end()) << "order differs";
}

void expect_bounds(const GpuvaIndex& idx, const std::map<u64, drm_gpuva*>& model, u64 addr) {
    drm_gpuva* floor = val(12345);
    drm_gpuva* ceil = val(12345);
    idx.bounds(addr, &floor, &ceil);
    auto up = model.upper_bound(addr);
    drm_gpuva* want_ceil = up == model.end() ? nullptr : up->second;
    drm_gpuva* want_floor = up == model.begin() ? nullptr : std::prev(up)->second;
    EXPECT_EQ(floor, want_floor) << "floor of " << addr;
    EXPECT_EQ(ceil, want_ceil) << "ceil of " << addr;
    auto f = model.find(addr);
    EXPECT_EQ(idx.find(addr), f == model.end() ? nullptr : f->second);
}

// Seeded random inserts and erases against std::map, in phases that grow the index to a few
// levels and shrink it back to nothing (so merges run at every level, and the height drops).
TEST_F(GpuvaIndexTest, RandomOpsMatchStdMap) {
    for (u64 round = 0; round < 4; round++) {
        const u64 seed = seed_from_env(1) + round;
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::mt19937_64 rng(seed);
        GpuvaIndex idx;
        std::map<u64, drm_gpuva*> model;
        // Keys from a small space so that inserts collide and erases hit; one round with
        // keys near the top of the u64 range.
        const u64 space = round == 3 ? 20000 : 6000;
        const u64 base = round == 3 ? ~u64{0} - space : 0;
        unsigned max_height = 0;
        for (int op = 0; op < 60000; op++) {
            // Phases of 15,000 ops: grow (75% inserts), shrink (25%), grow, shrink.
            const bool grow = (op / 15000) % 2 == 0;
            const u64 key = base + rng() % space;
            const u64 pick = rng() % 100;
            if (pick < (grow ? 60u : 20u)) {
                ASSERT_EQ(idx.reserve(1), 0);
                const int ret = idx.insert(key, val(key));
                const bool fresh = model.emplace(key, val(key)).second;
                ASSERT_EQ(ret, fresh ? 0 : -EEXIST);
            } else if (pick < 80) {
                auto it = model.find(key);
                drm_gpuva* got = idx.erase(key);
                if (it == model.end()) {
                    ASSERT_EQ(got, nullptr);
                } else {
                    ASSERT_EQ(got, it->second);
                    model.erase(it);
                }
            } else {
                expect_bounds(idx, model, key);
                // Addresses between the keys too, and the ends of the space.
                expect_bounds(idx, model, key + 1);
                expect_bounds(idx, model, base);
                expect_bounds(idx, model, ~u64{0});
            }
            max_height = std::max(max_height, idx.height());
            if (op % 2500 == 0)
                expect_same(idx, model);
        }
        // Drain: erase everything left, in random order.
        std::vector<u64> keys;
        for (auto& [k, v] : model)
            keys.push_back(k);
        std::shuffle(keys.begin(), keys.end(), rng);
        for (size_t i = 0; i < keys.size(); i++) {
            ASSERT_EQ(idx.erase(keys[i]), val(keys[i]));
            model.erase(keys[i]);
            if (i % 500 == 0)
                expect_same(idx, model);
        }
        expect_same(idx, model);
        EXPECT_GE(max_height, 3u);
        EXPECT_EQ(idx.height(), 1u);  // the root leaf stays, empty
        EXPECT_EQ(idx.nodes(), 1u);
        EXPECT_LE(idx.reserved(), GpuvaIndex::kReserveCap);
        EXPECT_FALSE(idx.warned());
    }
}

// Ascending, descending and interleaved fills split at every level (the last node, the first
// node, the middle); erasing in each order merges and refills from both sides at every level.
TEST_F(GpuvaIndexTest, SplitsAndMergesAtEveryLevel) {
    const u64 n = 40000;  // > 16 * 12^3: at least 5 levels
    struct Order {
        const char* name;
        u64 (*key)(u64 i, u64 n);
    };
    const Order orders[] = {
        {"ascending", [](u64 i, u64) { return i * 4096; }},
        {"descending", [](u64 i, u64 n) { return (n - 1 - i) * 4096; }},
        {"interleaved", [](u64 i, u64 n) { return (i % 2 ? i / 2 : n - 1 - i / 2) * 4096; }},
        {"strided", [](u64 i, u64 n) { return (i * 7919 % n) * 4096; }},
    };
    for (const Order& ins : orders) {
        for (const Order& del : orders) {
            SCOPED_TRACE(std::string("insert ") + ins.name + ", erase " + del.name);
            GpuvaIndex idx;
            std::vector<unsigned> heights_seen(GpuvaIndex::kMaxHeight + 1, 0);
            for (u64 i = 0; i < n; i++) {
                ASSERT_EQ(idx.reserve(1), 0);
                const u64 k = ins.key(i, n);
                ASSERT_EQ(idx.insert(k, val(k)), 0);
                heights_seen[idx.height()]++;
            }
            ASSERT_STREQ(idx.check(), "");
            const unsigned top = idx.height();
            EXPECT_GE(top, 5u);
            for (unsigned h = 1; h <= top; h++)
                EXPECT_GT(heights_seen[h], 0u) << "height " << h << " skipped";
            unsigned last_height = top;
            std::vector<bool> heights_down(top + 1, false);
            for (u64 i = 0; i < n; i++) {
                const u64 k = del.key(i, n);
                ASSERT_EQ(idx.erase(k), val(k));
                ASSERT_EQ(idx.erase(k), nullptr);
                if (idx.height() != last_height) {
                    ASSERT_EQ(idx.height() + 1, last_height);  // one level at a time
                    heights_down[idx.height()] = true;
                    last_height = idx.height();
                }
                if (i % 4999 == 0) {
                    ASSERT_STREQ(idx.check(), "");
                }
            }
            for (unsigned h = 1; h < top; h++)
                EXPECT_TRUE(heights_down[h]) << "never shrank to " << h;
            ASSERT_STREQ(idx.check(), "");
            EXPECT_TRUE(idx.empty());
        }
    }
}

// reserve(k) covers any k inserts: with every node allocation failing, they still succeed.
TEST_F(GpuvaIndexTest, ReserveCoversItsInserts) {
    std::mt19937_64 rng(seed_from_env(7));
    GpuvaIndex idx;
    std::map<u64, drm_gpuva*> model;
    for (int round = 0; round < 3000; round++) {
        const unsigned k = 1 + rng() % 4;
        ASSERT_EQ(idx.reserve(k), 0);
        fault_inject_arm({.probability = 1.0, .only_cache = "drm_gpuva_index"});
        for (unsigned i = 0; i < k; i++) {
            // Clustered keys: consecutive inserts split the same path.
            const u64 key = (rng() % 64) * 100000 + rng() % 100000;
            const int ret = idx.insert(key, val(key));
            ASSERT_EQ(ret, model.emplace(key, val(key)).second ? 0 : -EEXIST);
        }
        fault_inject_disarm();
        if (round % 3 == 2) {
            // Erase some, so merges hand nodes back to the reserve.
            for (int i = 0; i < 3 && !model.empty(); i++) {
                auto it = model.lower_bound(rng() % 6400000);
                if (it == model.end())
                    it = model.begin();
                ASSERT_EQ(idx.erase(it->first), it->second);
                model.erase(it);
            }
        }
    }
    EXPECT_EQ(fault_inject_failures(), 0u);  // nothing had to be allocated
    EXPECT_FALSE(idx.warned());
    expect_same(idx, model);
    EXPECT_GE(idx.height(), 3u);
}

// An insert that finds the reserve empty allocates with GFP_NOWAIT and WARNs, once per index.
TEST_F(GpuvaIndexTest, EmptyReserveFallsBackToNowaitAndWarnsOnce) {
    GpuvaIndex idx;
    EXPECT_EQ(idx.reserved(), 0u);
    for (u64 k = 0; k < 1000; k++)
        ASSERT_EQ(idx.insert(k, val(k)), 0);
    EXPECT_TRUE(idx.warned());
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    EXPECT_EQ(pending_report_count(), 0u);  // once
    ASSERT_STREQ(idx.check(), "");
    // The fallback is allowed inside a signalling section (it cannot sleep): no report there.
    bool cookie = dma_fence_begin_signalling();
    for (u64 k = 1000; k < 2000; k++)
        ASSERT_EQ(idx.insert(k, val(k)), 0);
    dma_fence_end_signalling(cookie);
    EXPECT_EQ(pending_report_count(), 0u);
    idx.clear();
}

// The fallback failing: -ENOMEM and the index exactly as before; reserve() failing: -ENOMEM.
TEST_F(GpuvaIndexTest, ExhaustedReserveAndFailedAllocationGiveEnomem) {
    GpuvaIndex idx;
    std::map<u64, drm_gpuva*> model;
    for (u64 k = 0; k < 3000; k++) {
        ASSERT_EQ(idx.reserve(1), 0);
        ASSERT_EQ(idx.insert(k * 4, val(k * 4)), 0);
        model.emplace(k * 4, val(k * 4));
    }
    // No more reserve(): the inserts below use up what is left, then need the fallback.
    fault_inject_arm({.probability = 1.0, .only_cache = "drm_gpuva_index"});
    int enomem = 0;
    // Two keys per gap: more than the half-full leaves of an ascending fill can take.
    for (u64 k = 0; k < 6000; k++) {
        const u64 key = k / 2 * 4 + 1 + k % 2;
        const int ret = idx.insert(key, val(key));
        if (ret == 0) {
            model.emplace(key, val(key));
        } else {
            ASSERT_EQ(ret, -ENOMEM);
            enomem++;
        }
        if (k % 97 == 0)
            expect_same(idx, model);  // a failed insert changed nothing
    }
    EXPECT_EQ(idx.reserve(4), -ENOMEM);
    fault_inject_disarm();
    EXPECT_GT(enomem, 0);
    EXPECT_TRUE(idx.warned());
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    expect_same(idx, model);
    // Inserts into leaves with room need no node and still work with allocation failing.
    fault_inject_arm({.probability = 1.0, .only_cache = "drm_gpuva_index"});
    for (auto& [k, v] : model) {
        if (idx.erase(k) != v)
            ADD_FAILURE() << "erase " << k;
        break;
    }
    fault_inject_disarm();
    // And once allocation works again, so does everything.
    ASSERT_EQ(idx.reserve(3), 0);
    idx.clear();
}

// A VM large enough that the index splits and merges nodes while mappings come and go inside
// a fence-signalling section: the reserve filled in the prepare step covers it (no report, no
// WARN), and the index stays consistent with the address-ordered list.
TEST_F(GpuvaIndexTest, VmMapsAndUnmapsInSignallingSectionWithoutReports) {
    using namespace gpuvm_test;
    drm_gem_object* bo = new_bo(16 * kPage);
    {
        TestVm vm;
        std::mt19937_64 rng(seed_from_env(3));
        for (u64 i = 0; i < 3000; i++)
            ASSERT_EQ(vm.map(4 * i * kPage, kPage, bo, 0), 0);
        for (int op = 0; op < 3000; op++) {
            const u64 slot = rng() % 3000;
            const u64 addr = (4 * slot + 1 + rng() % 3) * kPage;
            TestVm::OpCtx ctx;
            const bool unmap = rng() % 2;
            ASSERT_EQ(unmap ? vm.prepare_unmap(&ctx) : vm.prepare_map(&ctx, bo), 0);
            bool cookie = dma_fence_begin_signalling();
            int ret;
            if (unmap) {
                ret = drm_gpuvm_sm_unmap(vm.vm(), &ctx, 4 * slot * kPage, 2 * kPage);
            } else {
                drm_gpuvm_map_req req{{{addr, kPage}, {0, bo}}};
                ret = drm_gpuvm_sm_map(vm.vm(), &ctx, &req);
            }
            dma_fence_end_signalling(cookie);
            ASSERT_EQ(ret, 0);
            vm.cleanup(&ctx);
        }
        EXPECT_EQ(pending_report_count(), 0u);
        const GpuvaIndex& idx = vm.vm()->rb.index;
        ASSERT_STREQ(idx.check(), "");
        EXPECT_FALSE(idx.warned());
        EXPECT_GE(idx.height(), 3u);
        // The index and the list hold the same mappings in the same order.
        std::vector<drm_gpuva*> from_list, from_index;
        drm_gpuvm_for_each_va(vm.vm(), [&](drm_gpuva* va) { from_list.push_back(va); });
        idx.for_each([&](u64 k, drm_gpuva* va) {
            EXPECT_EQ(k, va->va.addr);
            from_index.push_back(va);
        });
        EXPECT_EQ(from_list, from_index);
        EXPECT_EQ(from_list.size(), vm.count());
    }
    drm_gem_object_put(bo);
}

}  // namespace
