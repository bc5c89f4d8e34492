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
// Walks the DMA ranges that back bytes [offset, offset + size) of what `sgt` describes, in order:
// fn(dma_addr, len) for each piece, stopping at the first non-zero return, which it returns.
// `*left` (when given) gets how much of the range lay past the table's end. Upstream open-codes
// this walk (for_each_sgtable_dma_sg, skipping to the offset) in each caller.
template <class Fn>
int sg_for_each_dma_range(const sg_table* sgt, u64 offset, u64 size, Fn&& fn, u64* left = nullptr) {
    int ret = 0;
    for (u32 i = 0; i < sgt->nents && size && !ret; i++) {
        const u64 len = sg_dma_len(&sgt->sgl[i]);
        if (len <= offset) {
            offset -= len;
            continue;
        }
        const u64 piece = len - offset < size ? len - offset : size;
        ret = fn(sg_dma_address(&sgt->sgl[i]) + offset, piece);
        size -= piece;
        offset = 0;
    }
    if (left)
        *left = ret ? 0 : size;
    return ret;
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
