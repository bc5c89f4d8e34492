// Mirrors drivers/dma-buf/dma-buf.c: dma_buf_export, the release on the last put, mmap.
#include "kernel_shim/dma-buf/dma-buf.h"

#include <atomic>

#include "kernel_shim/err.h"
#include "kernel_shim/slab.h"

namespace kshim {

namespace {
std::atomic<long> g_dma_buf_live{0};
}

dma_buf* dma_buf_export(const dma_buf_export_info* exp_info) {
    if (!exp_info->ops || !exp_info->ops->release || !exp_info->priv || !exp_info->resv)
        return ERR_PTR<dma_buf>(-EINVAL);
    auto* dmabuf = knew<dma_buf>(GFP_KERNEL);
    if (!dmabuf) return ERR_PTR<dma_buf>(-ENOMEM);
    kref_init(&dmabuf->refcount);
    dmabuf->size = exp_info->size;
    dmabuf->ops = exp_info->ops;
    dmabuf->priv = exp_info->priv;
    dmabuf->resv = exp_info->resv;
    dmabuf->flags = exp_info->flags;
    dmabuf->exp_name = exp_info->exp_name;
    g_dma_buf_live.fetch_add(1, std::memory_order_relaxed);
    return dmabuf;
}

void dma_buf_put(dma_buf* dmabuf) {
    if (!dmabuf) return;
    kref_put(&dmabuf->refcount, [dmabuf](kref*) {
        // dma_buf_release: the exporter lets go of its buffer before the dma_buf goes.
        dmabuf->ops->release(dmabuf);
        kdelete(dmabuf);
        g_dma_buf_live.fetch_sub(1, std::memory_order_relaxed);
    });
}

int dma_buf_mmap(dma_buf* dmabuf, void* vma) {
    if (!dmabuf->ops->mmap) return -EINVAL;
    return dmabuf->ops->mmap(dmabuf, vma);
}

long dma_buf_live() { return g_dma_buf_live.load(std::memory_order_relaxed); }

}  // namespace kshim
