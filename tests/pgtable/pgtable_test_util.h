// Shared helpers for the io-pgtable tests: leak snapshots, the walker's view of a cfg, expected
// attributes per the architecture, and a TLB-callback recorder.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernel_shim/gfp.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "tests/pgtable/lpae_walker.h"

namespace pgtable_test {

// Snapshot of every allocator; diff() is empty when nothing created since is still live.
struct LeakCheck {
    kshim::MemCounters before = kshim::mem_counters();
    std::string diff() const { return kshim::mem_counters_diff(before, kshim::mem_counters()); }
};

inline long pages_live() {
    return kshim::mem_counters().pages_live;
}

inline WalkerRegs regs_of(const iommu::IoPgtableCfg& cfg) {
    return {cfg.arm_lpae_s1_cfg.ttbr, iommu::arm_lpae_s1_tcr_value(cfg), cfg.arm_lpae_s1_cfg.mair};
}

// The leaf attributes a mapping with `prot` must carry: AF and nG always; AP[2] for read-only,
// AP[1] unless privileged; MAIR byte 0x04 (Device-nGnRE) for MMIO, 0xff (Normal WB RWA) for
// cached, 0x44 (Normal NC) otherwise; inner-shareable when cached, outer otherwise; XN for noexec.
inline void expect_leaf_attrs(const Translation& t, int prot, const std::string& where) {
    using namespace iommu;
    ASSERT_TRUE(t.ok) << where << ": " << t.fault;
    EXPECT_TRUE(t.af) << where;
    EXPECT_TRUE(t.ng) << where;
    EXPECT_FALSE(t.contiguous) << where;
    EXPECT_EQ(t.ap_rdonly, (prot & IOMMU_READ) && !(prot & IOMMU_WRITE)) << where;
    EXPECT_EQ(t.ap_unpriv, !(prot & IOMMU_PRIV)) << where;
    unsigned mair = (prot & IOMMU_MMIO) ? 0x04 : (prot & IOMMU_CACHE) ? 0xff : 0x44;
    EXPECT_EQ(t.mair_attr, mair) << where;
    EXPECT_EQ(t.sh, (prot & IOMMU_CACHE) ? 3u : 2u) << where;
    EXPECT_EQ(t.pxn, bool(prot & IOMMU_NOEXEC)) << where;
    EXPECT_EQ(t.uxn, bool(prot & IOMMU_NOEXEC)) << where;
}

// The Mali walker's view: TRANSTAB and MEMATTR as the driver would program them, and the 40-bit
// PA of a Mali-G52's MMU_FEATURES.
inline MaliWalkerRegs mali_regs_of(const iommu::IoPgtableCfg& cfg) {
    return {cfg.arm_mali_lpae_cfg.transtab, cfg.arm_mali_lpae_cfg.memattr, 40};
}

// The leaf attributes a Mali LPAE mapping with `prot` must carry: read and write granted exactly
// as asked (PRIV means nothing), AttrIndx 2 for MMIO, 1 for cached, 0 otherwise, selecting the
// MEMATTR bytes 0x88 / 0x8D / 0x88; always outer shareable; both XN bits for noexec.
inline void expect_mali_leaf_attrs(const Translation& t, int prot, const std::string& where) {
    using namespace iommu;
    ASSERT_TRUE(t.ok) << where << ": " << t.fault;
    EXPECT_EQ(t.rd, bool(prot & IOMMU_READ)) << where;
    EXPECT_EQ(t.wr, bool(prot & IOMMU_WRITE)) << where;
    EXPECT_EQ(t.attr_index, (prot & IOMMU_MMIO) ? 2u : (prot & IOMMU_CACHE) ? 1u : 0u) << where;
    EXPECT_EQ(t.mair_attr, (prot & IOMMU_CACHE) && !(prot & IOMMU_MMIO) ? 0x8Du : 0x88u) << where;
    EXPECT_EQ(t.sh, 2u) << where;
    EXPECT_EQ(t.pxn, bool(prot & IOMMU_NOEXEC)) << where;
    EXPECT_EQ(t.uxn, bool(prot & IOMMU_NOEXEC)) << where;
}

// Format dispatch for tests that run against both formats.
inline Translation walk_fmt(iommu::IoPgtableFmt fmt, const iommu::IoPgtableCfg& cfg, u64 va) {
    return fmt == iommu::IoPgtableFmt::ARM_MALI_LPAE ? mali_lpae_walk(mali_regs_of(cfg), va)
                                                     : lpae_walk(regs_of(cfg), va);
}
inline void expect_fmt_leaf_attrs(iommu::IoPgtableFmt fmt, const Translation& t, int prot, const std::string& where) {
    if (fmt == iommu::IoPgtableFmt::ARM_MALI_LPAE)
        expect_mali_leaf_attrs(t, prot, where);
    else
        expect_leaf_attrs(t, prot, where);
}

// Records every TLB callback; pass a TlbLog* as the page-table cookie.
struct TlbLog {
    struct Range {
        unsigned long iova;
        size_t size;
        size_t granule;
    };
    int flush_all = 0;
    std::vector<Range> walks;
    std::vector<Range> pages;  // size unused (= granule)

    static void on_flush_all(void* cookie) { static_cast<TlbLog*>(cookie)->flush_all++; }
    static void on_flush_walk(unsigned long iova, size_t size, size_t granule, void* cookie) {
        static_cast<TlbLog*>(cookie)->walks.push_back({iova, size, granule});
    }
    static void on_add_page(iommu::IommuIotlbGather* gather, unsigned long iova, size_t granule, void* cookie) {
        static_cast<TlbLog*>(cookie)->pages.push_back({iova, granule, granule});
        iommu::iommu_iotlb_gather_add_range(gather, iova, granule);
    }
    static const iommu::IommuFlushOps* ops() {
        static const iommu::IommuFlushOps kOps{on_flush_all, on_flush_walk, on_add_page};
        return &kOps;
    }
};

// Drops WARN reports a test provoked on purpose; returns how many there were.
inline size_t drain_warns() {
    size_t n = 0;
    while (kshim::consume_report(kshim::ReportKind::Warn))
        n++;
    return n;
}

constexpr int kRW = iommu::IOMMU_READ | iommu::IOMMU_WRITE;  // the usual data mapping

// A panthor-style table cache: pages pre-allocated outside the signalling path, handed out by
// the alloc hook, returned to the cache by the free hook.
struct PtCache {
    std::vector<void*> pages;
    int allocs = 0, frees = 0;
    int fail_at = -1;  // the allocation count at which the cache claims to be empty
    static void* alloc(void* cookie, size_t size, kshim::gfp_t) {
        auto* c = static_cast<PtCache*>(cookie);
        if (c->allocs == c->fail_at || c->pages.empty() || size > iommu::SZ_4K)
            return nullptr;
        void* p = c->pages.back();
        c->pages.pop_back();
        std::memset(p, 0, iommu::SZ_4K);
        c->allocs++;
        return p;
    }
    static void free(void* cookie, void* pages, size_t) {
        auto* c = static_cast<PtCache*>(cookie);
        c->pages.push_back(pages);
        c->frees++;
    }
};

}  // namespace pgtable_test
