// Mirrors include/linux/scatterlist.h (struct sg_table, sg_dma_address/len, sg_free_table): the
// DMA-mapped part only, which is what importers and the GPU's page tables read.
//
// DOC: A table is a kmalloc'ed array of physically contiguous segments in buffer order. There is
// no IOMMU, so a segment's DMA address is its physical address: an exporter's pages as the GPU
// sees them, whichever device maps them.
#pragma once
#include "kernel_shim/slab.h"
#include "kernel_shim/types.h"

namespace kshim {

struct sg_table {
    struct Segment {
        dma_addr_t dma_address;
        u64 length;
    };
    u32 nents = 0;
    Segment* sgl = nullptr;  // kmalloc'ed array of nents
};
inline dma_addr_t sg_dma_address(const sg_table::Segment* s) {
    return s->dma_address;
}
inline u64 sg_dma_len(const sg_table::Segment* s) {
    return s->length;
}
// Frees the segments (not the table itself, as upstream).
inline void sg_free_table(sg_table* sgt) {
    if (!sgt)
        return;
    kfree(sgt->sgl);
    sgt->sgl = nullptr;
    sgt->nents = 0;
}

}  // namespace kshim
