// Mirrors include/linux/iommu.h: mapping permission flags and the IOTLB gather the unmap path fills.
#pragma once
#include <cstddef>

namespace iommu {

// Mapping permissions and attributes (the IOMMU_* prot bits).
inline constexpr int IOMMU_READ = 1 << 0;
inline constexpr int IOMMU_WRITE = 1 << 1;
inline constexpr int IOMMU_CACHE = 1 << 2;  // DMA cache coherency
inline constexpr int IOMMU_NOEXEC = 1 << 3;
inline constexpr int IOMMU_MMIO = 1 << 4;  // device memory
inline constexpr int IOMMU_PRIV = 1 << 5;  // privileged-only access

// Collects leaf invalidations queued by tlb_add_page so the owner can issue one sync per range.
struct IommuIotlbGather {
    unsigned long start = ~0ul;
    unsigned long end = 0;
    size_t pgsize = 0;
    // Set when the caller defers invalidation wholesale (a flush queue): no per-page callbacks.
    bool queued = false;
};

inline bool iommu_iotlb_gather_queued(const IommuIotlbGather* gather) {
    return gather && gather->queued;
}

// Widens the gathered range to cover [iova, iova + size).
inline void iommu_iotlb_gather_add_range(IommuIotlbGather* gather, unsigned long iova, size_t size) {
    unsigned long end = iova + size - 1;
    if (gather->start > iova)
        gather->start = iova;
    if (gather->end < end)
        gather->end = end;
}

}  // namespace iommu
