// drm_gpuvm split and merge: every case of upstream's "Split and Merge" DOC (numbered as there)
// plus the unmap cases, each as a table row: the existing mappings, the request, the steps the
// callbacks receive (the list-building variants must produce the same) and the final VA space.
// Addresses, ranges and offsets are in pages; BOs are named a, b.
#include <gtest/gtest.h>

#include "testkit/gpuvm_harness.h"
#include "tests/support/kernel_test.h"

using namespace gpuvm_test;

namespace {

struct M {
    u64 addr, range;
    char bo;  // 'a', 'b', or 0 for no BO
    u64 offset;
};

struct SmCase {
    const char* name;
    std::vector<M> before;
    bool is_map;
    M req;  // for unmap: addr/range only
    std::vector<std::string> steps;
    std::vector<M> after;
};

void PrintTo(const SmCase& c, std::ostream* os) {
    *os << c.name;
}

const u64 n = 4, m = 9;  // two unrelated BO offsets

std::vector<SmCase> cases() {
    return {
        // 1) identical: replace, PTEs could be kept
        {"1_Identical",
         {{0, 2, 'a', n}},
         true,
         {0, 2, 'a', n},
         {"unmap 0+2 a@4 keep", "map 0+2 a@4"},
         {{0, 2, 'a', n}}},
        // 2) identical but another BO offset
        {"2_IdenticalOtherOffset",
         {{0, 2, 'a', n}},
         true,
         {0, 2, 'a', m},
         {"unmap 0+2 a@4", "map 0+2 a@9"},
         {{0, 2, 'a', m}}},
        // 3) identical but another BO
        {"3_IdenticalOtherBo",
         {{0, 2, 'a', n}},
         true,
         {0, 2, 'b', n},
         {"unmap 0+2 a@4", "map 0+2 b@4"},
         {{0, 2, 'b', n}}},
        // 4) old is a left-aligned subset of the request
        {"4_OldLeftAlignedSubset",
         {{0, 1, 'a', n}},
         true,
         {0, 2, 'a', n},
         {"unmap 0+1 a@4 keep", "map 0+2 a@4"},
         {{0, 2, 'a', n}}},
        {"4_OldLeftAlignedSubsetOtherBo",
         {{0, 1, 'a', n}},
         true,
         {0, 2, 'b', m},
         {"unmap 0+1 a@4", "map 0+2 b@9"},
         {{0, 2, 'b', m}}},
        // 5) request is a left-aligned subset, other BO: split, next keeps the adjusted offset
        {"5_ReqLeftAlignedOtherBo",
         {{0, 2, 'a', n}},
         true,
         {0, 1, 'b', n},
         {"remap 0+2 a@4 prev=none next=1+1 a@5", "map 0+1 b@4"},
         {{0, 1, 'b', n}, {1, 1, 'a', n + 1}}},
        // 6) request is a left-aligned subset, same BO and offset: split, keep
        {"6_ReqLeftAlignedSameBo",
         {{0, 2, 'a', n}},
         true,
         {0, 1, 'a', n},
         {"remap 0+2 a@4 prev=none next=1+1 a@5 keep", "map 0+1 a@4"},
         {{0, 1, 'a', n}, {1, 1, 'a', n + 1}}},
        // 7) request is a right-aligned subset, other BO
        {"7_ReqRightAlignedOtherBo",
         {{0, 2, 'a', n}},
         true,
         {1, 1, 'b', m},
         {"remap 0+2 a@4 prev=0+1 a@4 next=none", "map 1+1 b@9"},
         {{0, 1, 'a', n}, {1, 1, 'b', m}}},
        // 8) request is a right-aligned subset, same BO contiguous: keep
        {"8_ReqRightAlignedSameBo",
         {{0, 2, 'a', n}},
         true,
         {1, 1, 'a', n + 1},
         {"remap 0+2 a@4 prev=0+1 a@4 next=none keep", "map 1+1 a@5"},
         {{0, 1, 'a', n}, {1, 1, 'a', n + 1}}},
        // 9) request overlaps the end, other BO
        {"9_OverlapEndOtherBo",
         {{0, 2, 'a', n}},
         true,
         {1, 2, 'b', m},
         {"remap 0+2 a@4 prev=0+1 a@4 next=none", "map 1+2 b@9"},
         {{0, 1, 'a', n}, {1, 2, 'b', m}}},
        // 10) request overlaps the end, same BO contiguous: keep
        {"10_OverlapEndSameBo",
         {{0, 2, 'a', n}},
         true,
         {1, 2, 'a', n + 1},
         {"remap 0+2 a@4 prev=0+1 a@4 next=none keep", "map 1+2 a@5"},
         {{0, 1, 'a', n}, {1, 2, 'a', n + 1}}},
        {"10_OverlapEndSameBoNonContiguous",
         {{0, 2, 'a', n}},
         true,
         {1, 2, 'a', n + 5},
         {"remap 0+2 a@4 prev=0+1 a@4 next=none", "map 1+2 a@9"},
         {{0, 1, 'a', n}, {1, 2, 'a', n + 5}}},
        // 11) request centred in the old one, other BO: split in three
        {"11_CentredOtherBo",
         {{0, 3, 'a', n}},
         true,
         {1, 1, 'b', m},
         {"remap 0+3 a@4 prev=0+1 a@4 next=2+1 a@6", "map 1+1 b@9"},
         {{0, 1, 'a', n}, {1, 1, 'b', m}, {2, 1, 'a', n + 2}}},
        // 12) request centred, same BO contiguous: keep
        {"12_CentredSameBo",
         {{0, 3, 'a', n}},
         true,
         {1, 1, 'a', n + 1},
         {"remap 0+3 a@4 prev=0+1 a@4 next=2+1 a@6 keep", "map 1+1 a@5"},
         {{0, 1, 'a', n}, {1, 1, 'a', n + 1}, {2, 1, 'a', n + 2}}},
        // 13) old is a right-aligned subset of the request
        {"13_OldRightAlignedSubset",
         {{1, 1, 'a', n + 1}},
         true,
         {0, 2, 'a', n},
         {"unmap 1+1 a@5 keep", "map 0+2 a@4"},
         {{0, 2, 'a', n}}},
        {"13_OldRightAlignedSubsetOtherBo",
         {{1, 1, 'a', n + 1}},
         true,
         {0, 2, 'b', n},
         {"unmap 1+1 a@5", "map 0+2 b@4"},
         {{0, 2, 'b', n}}},
        // 14) old is centred in the request
        {"14_OldCentredSubset",
         {{1, 1, 'a', n + 1}},
         true,
         {0, 3, 'a', n},
         {"unmap 1+1 a@5 keep", "map 0+3 a@4"},
         {{0, 3, 'a', n}}},
        {"14_OldCentredSubsetOtherBo",
         {{1, 1, 'a', n + 1}},
         true,
         {0, 3, 'b', m},
         {"unmap 1+1 a@5", "map 0+3 b@9"},
         {{0, 3, 'b', m}}},
        // 15) request overlaps the start, other BO: split, adjusted offset
        {"15_OverlapStartOtherBo",
         {{1, 2, 'a', n}},
         true,
         {0, 2, 'b', m},
         {"remap 1+2 a@4 prev=none next=2+1 a@5", "map 0+2 b@9"},
         {{0, 2, 'b', m}, {2, 1, 'a', n + 1}}},
        {"15_OverlapStartSameBo",
         {{1, 2, 'a', n + 1}},
         true,
         {0, 2, 'a', n},
         {"remap 1+2 a@5 prev=none next=2+1 a@6 keep", "map 0+2 a@4"},
         {{0, 2, 'a', n}, {2, 1, 'a', n + 2}}},
        // Beyond the drawings.
        {"EmptySpace", {}, true, {4, 2, 'a', n}, {"map 4+2 a@4"}, {{4, 2, 'a', n}}},
        {"AdjacentNeighboursUntouched",
         {{0, 2, 'a', 0}, {4, 2, 'a', 4}},
         true,
         {2, 2, 'a', 2},
         {"map 2+2 a@2"},
         {{0, 2, 'a', 0}, {2, 2, 'a', 2}, {4, 2, 'a', 4}}},
        {"CoversSeveralAndSplitsBothEnds",
         {{0, 2, 'a', 0}, {2, 1, 'b', 0}, {3, 1, 'b', 7}, {4, 3, 'a', 10}},
         true,
         {1, 5, 'b', m},
         {"remap 0+2 a@0 prev=0+1 a@0 next=none", "unmap 2+1 b@0", "unmap 3+1 b@7",
          "remap 4+3 a@10 prev=none next=6+1 a@12", "map 1+5 b@9"},
         {{0, 1, 'a', 0}, {1, 5, 'b', m}, {6, 1, 'a', 12}}},
        {"SparseMappingNeverKept",
         {{0, 2, 0, 0}},
         true,
         {0, 2, 0, 0},
         {"unmap 0+2 -@0", "map 0+2 -@0"},
         {{0, 2, 0, 0}}},
        // Unmap requests.
        {"Unmap_Exact", {{0, 2, 'a', n}}, false, {0, 2, 0, 0}, {"unmap 0+2 a@4"}, {}},
        {"Unmap_Inside",
         {{0, 3, 'a', n}},
         false,
         {1, 1, 0, 0},
         {"remap 0+3 a@4 prev=0+1 a@4 next=2+1 a@6"},
         {{0, 1, 'a', n}, {2, 1, 'a', n + 2}}},
        {"Unmap_OverlapStart",
         {{1, 2, 'a', n}},
         false,
         {0, 2, 0, 0},
         {"remap 1+2 a@4 prev=none next=2+1 a@5"},
         {{2, 1, 'a', n + 1}}},
        {"Unmap_OverlapEnd",
         {{0, 2, 'a', n}},
         false,
         {1, 2, 0, 0},
         {"remap 0+2 a@4 prev=0+1 a@4 next=none"},
         {{0, 1, 'a', n}}},
        {"Unmap_SpansSeveral",
         {{0, 2, 'a', 0}, {2, 2, 'b', 0}, {4, 2, 'a', 4}},
         false,
         {1, 4, 0, 0},
         {"remap 0+2 a@0 prev=0+1 a@0 next=none", "unmap 2+2 b@0", "remap 4+2 a@4 prev=none next=5+1 a@5"},
         {{0, 1, 'a', 0}, {5, 1, 'a', 5}}},
        {"Unmap_Nothing", {{0, 1, 'a', 0}}, false, {1, 3, 0, 0}, {}, {{0, 1, 'a', 0}}},
    };
}

class GpuvmSplitMerge : public kshim::testing::KernelTest, public ::testing::WithParamInterface<SmCase> {};

std::vector<M> snapshot(TestVm& vm, const std::vector<drm_gem_object*>& bos) {
    std::vector<M> out;
    drm_gpuvm_for_each_va(vm.vm(), [&](drm_gpuva* va) {
        char name = 0;
        for (size_t i = 0; i < bos.size(); i++)
            if (bos[i] == va->gem.obj)
                name = static_cast<char>('a' + i);
        out.push_back({va->va.addr / kPage, va->va.range / kPage, name, va->gem.offset / kPage});
    });
    return out;
}

bool operator==(const M& x, const M& y) {
    return x.addr == y.addr && x.range == y.range && x.bo == y.bo && x.offset == y.offset;
}
std::ostream& operator<<(std::ostream& os, const M& x) {
    return os << x.addr << "+" << x.range << " " << (x.bo ? x.bo : '-') << "@" << x.offset;
}

TEST_P(GpuvmSplitMerge, StepsAndResult) {
    const SmCase& c = GetParam();
    std::vector<drm_gem_object*> bos = {new_bo(64 * kPage), new_bo(64 * kPage)};
    auto bo = [&](char name) { return name ? bos[name - 'a'] : nullptr; };
    {
        TestVm vm;
        for (const M& x : c.before)
            ASSERT_EQ(vm.map(x.addr * kPage, x.range * kPage, bo(x.bo), x.offset * kPage), 0);

        // The list-building variant first: it must not change anything.
        drm_gpuva_ops* ops = nullptr;
        int ret = c.is_map ? [&] {
            drm_gpuvm_map_req req{{{c.req.addr * kPage, c.req.range * kPage}, {c.req.offset * kPage, bo(c.req.bo)}}};
            return drm_gpuvm_sm_map_ops_create(vm.vm(), &req, &ops);
        }()
                           : drm_gpuvm_sm_unmap_ops_create(vm.vm(), c.req.addr * kPage, c.req.range * kPage, &ops);
        ASSERT_EQ(ret, 0);
        std::vector<std::string> listed;
        for (auto& op : ops->list)
            listed.push_back(fmt_op(&op, bos));
        drm_gpuva_ops_free(vm.vm(), ops);
        EXPECT_EQ(listed, c.steps);
        EXPECT_EQ(snapshot(vm, bos), c.before);

        std::vector<std::string> log;
        log.reserve(16);
        if (c.is_map)
            ASSERT_EQ(vm.map(c.req.addr * kPage, c.req.range * kPage, bo(c.req.bo), c.req.offset * kPage, &log, &bos),
                      0);
        else
            ASSERT_EQ(vm.unmap(c.req.addr * kPage, c.req.range * kPage, &log, &bos), 0);
        EXPECT_EQ(log, c.steps);
        EXPECT_EQ(snapshot(vm, bos), c.after);

        // Every mapping of a BO is on that BO's vm_bo list, and nothing else is.
        for (drm_gem_object* obj : bos) {
            size_t linked = 0, expected = 0;
            TestVm::lock_gpuva(obj);
            drm_gem_for_each_gpuvm_bo(obj, [&](drm_gpuvm_bo* vm_bo) {
                drm_gpuvm_bo_for_each_va(vm_bo, [&](drm_gpuva* va) {
                    EXPECT_EQ(va->gem.obj, obj);
                    EXPECT_EQ(va->vm_bo, vm_bo);
                    linked++;
                });
            });
            TestVm::unlock_gpuva(obj);
            for (const M& x : c.after)
                expected += bo(x.bo) == obj;
            EXPECT_EQ(linked, expected);
        }
    }
    for (drm_gem_object* obj : bos)
        drm_gem_object_put(obj);
}

INSTANTIATE_TEST_SUITE_P(Cases, GpuvmSplitMerge, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<SmCase>& info) { return std::string(info.param.name); });

}  // namespace
