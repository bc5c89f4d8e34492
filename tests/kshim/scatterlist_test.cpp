// sg_for_each_dma_range: the DMA pieces behind a byte range of a scatter list, which BO_SYNC and
// the page-table map walk in both drivers.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "kernel_shim/dma-buf/scatterlist.h"

using namespace kshim;

namespace {

// Three segments: 0x1000 bytes at 0x10000, 0x3000 at 0x40000, 0x2000 at 0x80000 (0x6000 in all).
struct Table {
    sg_table::Segment segs[3] = {{0x10000, 0x1000}, {0x40000, 0x3000}, {0x80000, 0x2000}};
    sg_table sgt{3, segs};
};

using Pieces = std::vector<std::pair<u64, u64>>;

Pieces walk(const sg_table& sgt, u64 offset, u64 size, u64* left) {
    Pieces p;
    EXPECT_EQ(sg_for_each_dma_range(
                  &sgt, offset, size,
                  [&](u64 addr, u64 len) {
                      p.emplace_back(addr, len);
                      return 0;
                  },
                  left),
              0);
    return p;
}

}  // namespace

TEST(Scatterlist, RangeInsideOneSegment) {
    Table t;
    u64 left = 1;
    EXPECT_EQ(walk(t.sgt, 0x1800, 0x800, &left), (Pieces{{0x40800, 0x800}}));
    EXPECT_EQ(left, 0u);
}

TEST(Scatterlist, RangeAcrossSegmentsStartsAtTheOffsetAndStopsAtTheSize) {
    Table t;
    u64 left = 1;
    EXPECT_EQ(walk(t.sgt, 0x800, 0x4000, &left), (Pieces{{0x10800, 0x800}, {0x40000, 0x3000}, {0x80000, 0x800}}));
    EXPECT_EQ(left, 0u);
}

TEST(Scatterlist, OffsetOnASegmentBoundarySkipsTheWholeSegment) {
    Table t;
    EXPECT_EQ(walk(t.sgt, 0x1000, 0x1000, nullptr), (Pieces{{0x40000, 0x1000}}));
    EXPECT_EQ(walk(t.sgt, 0x4000, 0x2000, nullptr), (Pieces{{0x80000, 0x2000}}));
}

TEST(Scatterlist, WhatLiesPastTheTableIsLeft) {
    Table t;
    u64 left = 0;
    EXPECT_EQ(walk(t.sgt, 0x5000, 0x3000, &left), (Pieces{{0x81000, 0x1000}}));
    EXPECT_EQ(left, 0x2000u);
    EXPECT_TRUE(walk(t.sgt, 0x7000, 0x1000, &left).empty());
    EXPECT_EQ(left, 0x1000u);
}

TEST(Scatterlist, ANonZeroReturnStopsTheWalkAndIsReturned) {
    Table t;
    int calls = 0;
    u64 left = 1;
    EXPECT_EQ(sg_for_each_dma_range(
                  &t.sgt, 0, 0x6000,
                  [&](u64, u64) {
                      calls++;
                      return calls == 2 ? -EIO : 0;
                  },
                  &left),
              -EIO);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(left, 0u);
}

TEST(Scatterlist, AnEmptyRangeCallsNothing) {
    Table t;
    u64 left = 1;
    EXPECT_TRUE(walk(t.sgt, 0x800, 0, &left).empty());
    EXPECT_EQ(left, 0u);
}
