// Mirrors drivers/gpu/drm/drm_gem_shmem_helper.c (see gem_shmem.h for the backing design).
#include "drm/drm_gem_shmem_helper.h"

#include <bit>
#include <climits>
#include <cstring>

#include "drm/drm_device.h"
#include "drm/drm_prime.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;

namespace {

void shmem_free_obj(drm_gem_object* obj) {
    drm_gem_shmem_free(to_drm_gem_shmem_obj(obj));
}
int shmem_pin(drm_gem_object* obj) {
    return drm_gem_shmem_pin_locked(to_drm_gem_shmem_obj(obj));
}
void shmem_unpin(drm_gem_object* obj) {
    drm_gem_shmem_unpin_locked(to_drm_gem_shmem_obj(obj));
}
int shmem_vmap(drm_gem_object* obj, IosysMap* map) {
    return drm_gem_shmem_vmap_locked(to_drm_gem_shmem_obj(obj), map);
}
void shmem_vunmap(drm_gem_object* obj, IosysMap* map) {
    drm_gem_shmem_vunmap_locked(to_drm_gem_shmem_obj(obj), map);
}
sg_table* shmem_get_sg_table(drm_gem_object* obj) {
    return drm_gem_shmem_get_sg_table(to_drm_gem_shmem_obj(obj));
}

// The page at `index` of a contiguous block.
Page* page_at(void* base, u64 index) {
    return virt_to_page(static_cast<char*>(base) + index * PAGE_SIZE);
}

void free_blocks(drm_gem_shmem_object::Block* blocks, u32 n, Page** pages) {
    for (u32 i = 0; i < n; i++)
        free_pages_exact(page_address(pages[blocks[i].first]), u64{blocks[i].npages} * PAGE_SIZE);
}

// drm_prime_pages_to_sg: the pages as a table, physically contiguous runs merged. nullptr for
// -ENOMEM.
sg_table* pages_to_sg(Page** pages, u64 npages) {
    u32 nents = 1;
    for (u64 i = 1; i < npages; i++)
        if (page_to_phys(pages[i]) != page_to_phys(pages[i - 1]) + PAGE_SIZE)
            nents++;
    auto* sgt = knew<sg_table>(GFP_KERNEL);
    auto* sgl = static_cast<sg_table::Segment*>(kcalloc(nents, sizeof(sg_table::Segment), GFP_KERNEL));
    if (!sgt || !sgl) {
        kfree(sgt);
        kfree(sgl);
        return nullptr;
    }
    u32 n = 0;
    sgl[0] = {page_to_phys(pages[0]), PAGE_SIZE};
    for (u64 i = 1; i < npages; i++) {
        phys_addr_t p = page_to_phys(pages[i]);
        if (p == sgl[n].dma_address + sgl[n].length)
            sgl[n].length += PAGE_SIZE;
        else
            sgl[++n] = {p, PAGE_SIZE};
    }
    sgt->nents = nents;
    sgt->sgl = sgl;
    return sgt;
}

}  // namespace

unsigned drm_gem_shmem_object_status(drm_gem_object* obj) {
    // Read without the resv, as upstream: a statistic.
    return std::atomic_ref<Page**>(to_drm_gem_shmem_obj(obj)->pages).load(std::memory_order_relaxed)
               ? DRM_GEM_OBJECT_RESIDENT
               : 0;
}

const drm_gem_object_funcs drm_gem_shmem_funcs = {
    .free = shmem_free_obj,
    .pin = shmem_pin,
    .unpin = shmem_unpin,
    .vmap = shmem_vmap,
    .vunmap = shmem_vunmap,
    .status = drm_gem_shmem_object_status,
    .get_sg_table = shmem_get_sg_table,
};

int drm_gem_shmem_init(drm_vma_offset_manager* mgr, drm_gem_shmem_object* shmem, u64 size) {
    if (size == 0 || size > ~u64{0} - PAGE_SIZE)
        return -EINVAL;
    size = (size + PAGE_SIZE - 1) & PAGE_MASK;
    if ((size >> PAGE_SHIFT) > UINT32_MAX)
        return -EINVAL;
    if (!shmem->base.funcs)
        shmem->base.funcs = &drm_gem_shmem_funcs;
    return drm_gem_object_init(mgr, &shmem->base, size);
}

int drm_gem_shmem_create(drm_vma_offset_manager* mgr, u64 size, drm_gem_shmem_object** out) {
    if (size == 0 || size > ~u64{0} - PAGE_SIZE)
        return -EINVAL;
    drm_gem_shmem_object* shmem = knew<drm_gem_shmem_object>(GFP_KERNEL);
    if (!shmem)
        return -ENOMEM;
    shmem->base.funcs = &drm_gem_shmem_funcs;
    int ret = drm_gem_shmem_init(mgr, shmem, size);
    if (ret) {
        kdelete(shmem);
        return ret;
    }
    *out = shmem;
    return 0;
}

void drm_gem_shmem_release(drm_gem_shmem_object* shmem) {
    drm_gem_object* obj = &shmem->base;
    if (drm_gem_is_imported(obj)) {
        // The resv is the exporter's, and may go with the last dma_buf reference dropped here:
        // it is neither held across nor touched after.
        WARN_ON(shmem->vmap_use_count);
        drm_prime_gem_destroy(obj, shmem->sgt);
        shmem->sgt = nullptr;
        obj->import_attach = nullptr;
        obj->resv = &obj->_resv;
        drm_gem_object_release(obj);
        return;
    }
    // Nobody else can reach the object any more; the lock is for the _locked asserts (as
    // upstream, so a caller must not drop the last reference while holding a shared resv).
    dma_resv_lock(obj->resv, nullptr);
    WARN_ON(shmem->vmap_use_count);
    if (shmem->sgt) {
        sg_free_table(shmem->sgt);
        kfree(shmem->sgt);
        shmem->sgt = nullptr;
        drm_gem_shmem_put_pages_locked(shmem);
    }
    WARN_ON(shmem->pages_pin_count);
    WARN_ON(shmem->pages_use_count);
    if (shmem->kept_pages) {
        free_blocks(shmem->kept_blocks, shmem->kept_num_blocks, shmem->kept_pages);
        kfree(shmem->kept_pages);
        kfree(shmem->kept_blocks);
        shmem->kept_pages = nullptr;
        shmem->kept_blocks = nullptr;
    }
    dma_resv_unlock(obj->resv);
    drm_gem_object_release(obj);
}

void drm_gem_shmem_free(drm_gem_shmem_object* shmem) {
    drm_gem_shmem_release(shmem);
    kdelete(shmem);
}

int drm_gem_shmem_get_pages_locked(drm_gem_shmem_object* shmem) {
    drm_gem_object* obj = &shmem->base;
    dma_resv_assert_held(obj->resv);
    // An import's pages are the exporter's, pinned by its attachment.
    if (WARN_ON(drm_gem_is_imported(obj)))
        return -EINVAL;
    // Purged: the backing is gone for good.
    if (shmem->madv < 0)
        return -ENOMEM;
    if (shmem->pages_use_count++ > 0)
        return 0;
    if (shmem->kept_pages) {
        // The shmem file still holds them: same pages, same contents.
        shmem->pages = shmem->kept_pages;
        shmem->blocks = shmem->kept_blocks;
        shmem->num_blocks = shmem->kept_num_blocks;
        shmem->kept_pages = nullptr;
        shmem->kept_blocks = nullptr;
        shmem->kept_num_blocks = 0;
        return 0;
    }

    const u64 npages = obj->size >> PAGE_SHIFT;
    // Blocks: one for objects up to the largest order, else one per 1 GiB plus the rest.
    const u64 max_block = shmem->huge ? u64{1} << MAX_PAGE_ORDER : (u64{1} << MAX_PAGE_ORDER) - 1;
    const u64 nblocks = (npages + max_block - 1) / max_block;
    // drm_gem_get_pages' kvmalloc_array refuses more than INT_MAX bytes (the kernel also WARNs
    // once); the shim's kcalloc has no limit and would try (found by fuzz_ioctl: an 8 TiB BO).
    if (npages > INT_MAX / sizeof(Page*)) {
        shmem->pages_use_count = 0;
        return -ENOMEM;
    }
    auto** pages = static_cast<Page**>(kcalloc(npages, sizeof(Page*), GFP_KERNEL));
    auto* blocks = static_cast<drm_gem_shmem_object::Block*>(
        kcalloc(nblocks ? nblocks : 1, sizeof(drm_gem_shmem_object::Block), GFP_KERNEL));
    if (!pages || !blocks) {
        kfree(pages);
        kfree(blocks);
        shmem->pages_use_count = 0;
        return -ENOMEM;
    }
    u32 nb = 0;
    u64 done = 0;
    int ret = 0;
    while (done < npages) {
        const u64 want = std::min(npages - done, max_block);
        void* block;
        if (shmem->huge) {
            block = alloc_pages_exact(want * PAGE_SIZE, GFP_KERNEL | __GFP_ZERO);
        } else {
            // No huge folio: nothing of the object may be a naturally aligned 2 MiB run. The
            // run starts one page into a naturally aligned allocation (whose first page goes
            // back at once), which keeps the linear view the shim's CPU mappings need.
            char* raw = static_cast<char*>(alloc_pages_exact((want + 1) * PAGE_SIZE, GFP_KERNEL | __GFP_ZERO));
            block = raw ? raw + PAGE_SIZE : nullptr;
            if (raw)
                free_pages_exact(raw, PAGE_SIZE);
        }
        if (!block) {
            ret = -ENOMEM;
            break;
        }
        blocks[nb++] = {static_cast<u32>(done), static_cast<u32>(want)};
        for (u64 i = 0; i < want; i++)
            pages[done + i] = page_at(block, i);
        done += want;
    }
    if (ret) {
        free_blocks(blocks, nb, pages);
        kfree(pages);
        kfree(blocks);
        shmem->pages_use_count = 0;
        return ret;
    }
    shmem->pages = pages;
    shmem->blocks = blocks;
    shmem->num_blocks = nb;
    return 0;
}

void drm_gem_shmem_put_pages_locked(drm_gem_shmem_object* shmem) {
    dma_resv_assert_held(shmem->base.resv);
    if (WARN_ON(shmem->pages_use_count == 0))
        return;
    if (--shmem->pages_use_count > 0)
        return;
    shmem->kept_pages = shmem->pages;
    shmem->kept_blocks = shmem->blocks;
    shmem->kept_num_blocks = shmem->num_blocks;
    shmem->pages = nullptr;
    shmem->blocks = nullptr;
    shmem->num_blocks = 0;
}

bool drm_gem_shmem_madvise_locked(drm_gem_shmem_object* shmem, int madv) {
    dma_resv_assert_held(shmem->base.resv);
    if (shmem->madv >= 0)
        shmem->madv = madv;
    return shmem->madv >= 0;
}

bool drm_gem_shmem_is_purgeable(drm_gem_shmem_object* shmem) {
    return shmem->madv > 0 && !shmem->pages_pin_count && shmem->sgt && !shmem->base.dma_buf &&
           !drm_gem_is_imported(&shmem->base);
}

void drm_gem_shmem_purge_locked(drm_gem_shmem_object* shmem) {
    drm_gem_object* obj = &shmem->base;
    dma_resv_assert_held(obj->resv);
    WARN_ON(!drm_gem_shmem_is_purgeable(shmem));
    if (shmem->sgt) {
        sg_free_table(shmem->sgt);
        kfree(shmem->sgt);
        shmem->sgt = nullptr;
        drm_gem_shmem_put_pages_locked(shmem);
    }
    shmem->madv = -1;
    drm_gem_free_mmap_offset(obj);
    // Give the memory back now (upstream's shmem_truncate_range): the kept pages too.
    if (!WARN_ON(shmem->pages) && shmem->kept_pages) {
        free_blocks(shmem->kept_blocks, shmem->kept_num_blocks, shmem->kept_pages);
        kfree(shmem->kept_pages);
        kfree(shmem->kept_blocks);
        shmem->kept_pages = nullptr;
        shmem->kept_blocks = nullptr;
        shmem->kept_num_blocks = 0;
    }
}

int drm_gem_shmem_pin_locked(drm_gem_shmem_object* shmem) {
    dma_resv_assert_held(shmem->base.resv);
    int ret = drm_gem_shmem_get_pages_locked(shmem);
    if (ret)
        return ret;
    shmem->pages_pin_count++;
    return 0;
}

void drm_gem_shmem_unpin_locked(drm_gem_shmem_object* shmem) {
    dma_resv_assert_held(shmem->base.resv);
    if (WARN_ON(shmem->pages_pin_count == 0))
        return;
    shmem->pages_pin_count--;
    drm_gem_shmem_put_pages_locked(shmem);
}

int drm_gem_shmem_pin(drm_gem_shmem_object* shmem) {
    dma_resv_lock(shmem->base.resv, nullptr);
    int ret = drm_gem_shmem_pin_locked(shmem);
    dma_resv_unlock(shmem->base.resv);
    return ret;
}

void drm_gem_shmem_unpin(drm_gem_shmem_object* shmem) {
    dma_resv_lock(shmem->base.resv, nullptr);
    drm_gem_shmem_unpin_locked(shmem);
    dma_resv_unlock(shmem->base.resv);
}

int drm_gem_shmem_get_pages_sgt(drm_gem_shmem_object* shmem, SgTable** out) {
    drm_gem_object* obj = &shmem->base;
    dma_resv_lock(obj->resv, nullptr);
    int ret = 0;
    if (!shmem->sgt) {
        ret = drm_gem_shmem_get_pages_locked(shmem);
        if (!ret) {
            shmem->sgt = pages_to_sg(shmem->pages, obj->size >> PAGE_SHIFT);
            if (!shmem->sgt) {
                drm_gem_shmem_put_pages_locked(shmem);
                ret = -ENOMEM;
            }
        }
    }
    if (!ret)
        *out = shmem->sgt;
    dma_resv_unlock(obj->resv);
    return ret;
}

int drm_gem_shmem_vmap_locked(drm_gem_shmem_object* shmem, IosysMap* map) {
    dma_resv_assert_held(shmem->base.resv);
    if (drm_gem_is_imported(&shmem->base)) {
        // The exporter's mapping (its own count): the same pages the GPU maps here.
        void* vaddr = nullptr;
        const int ret = dma_buf_vmap(shmem->base.import_attach->dmabuf, &vaddr);
        if (ret)
            return ret;
        shmem->vmap_use_count++;
        map->vaddr = vaddr;
        return 0;
    }
    if (shmem->vmap_use_count++ > 0) {
        map->vaddr = shmem->vaddr;
        return 0;
    }
    int ret = drm_gem_shmem_pin_locked(shmem);
    if (ret) {
        shmem->vmap_use_count = 0;
        return ret;
    }
    const u64 npages = shmem->base.size >> PAGE_SHIFT;
    char* base = static_cast<char*>(page_address(shmem->pages[0]));
    for (u64 i = 1; i < npages; i++) {
        if (page_address(shmem->pages[i]) != base + i * PAGE_SIZE) {
            // Backed by separate blocks that are not adjacent: no linear view is possible.
            drm_gem_shmem_unpin_locked(shmem);
            shmem->vmap_use_count = 0;
            return -ENOMEM;
        }
    }
    shmem->vaddr = base;
    map->vaddr = base;
    return 0;
}

void drm_gem_shmem_vunmap_locked(drm_gem_shmem_object* shmem, IosysMap* map) {
    dma_resv_assert_held(shmem->base.resv);
    if (drm_gem_is_imported(&shmem->base)) {
        if (WARN_ON(shmem->vmap_use_count == 0))
            return;
        shmem->vmap_use_count--;
        dma_buf_vunmap(shmem->base.import_attach->dmabuf, map->vaddr);
        return;
    }
    if (WARN_ON(shmem->vmap_use_count == 0))
        return;
    if (--shmem->vmap_use_count > 0)
        return;
    drm_gem_shmem_unpin_locked(shmem);
    shmem->vaddr = nullptr;
}

}  // namespace drm

namespace drm {

// drm_prime.c's, defined here: the shmem release (library drm_gem) is its caller, and drm_core,
// where the rest of PRIME lives, links drm_gem rather than the other way round.
void drm_prime_gem_destroy(drm_gem_object* obj, sg_table* sg) {
    dma_buf_attachment* attach = obj->import_attach;
    dma_buf* dmabuf = attach->dmabuf;
    if (sg)
        dma_buf_unmap_attachment_unlocked(attach, sg, DMA_BIDIRECTIONAL);
    dma_buf_detach(dmabuf, attach);
    dma_buf_put(dmabuf);
}

sg_table* drm_gem_shmem_get_sg_table(drm_gem_shmem_object* shmem) {
    drm_gem_object* obj = &shmem->base;
    if (WARN_ON(drm_gem_is_imported(obj)))
        return ERR_PTR<sg_table>(-EINVAL);
    // Read without the resv, as upstream: the caller's pin keeps the pages.
    if (WARN_ON(!shmem->pages))
        return ERR_PTR<sg_table>(-EINVAL);
    sg_table* sgt = pages_to_sg(shmem->pages, obj->size >> PAGE_SHIFT);
    return sgt ? sgt : ERR_PTR<sg_table>(-ENOMEM);
}

drm_gem_object* drm_gem_shmem_prime_import_sg_table(drm_device* dev, dma_buf_attachment* attach, SgTable* sgt) {
    const size_t size = attach->dmabuf->size;
    if (size == 0 || (size & ~PAGE_MASK))
        return ERR_PTR<drm_gem_object>(-EINVAL);
    drm_gem_shmem_object* shmem;
    if (dev->driver().gem_create_object) {
        drm_gem_object* obj = dev->driver().gem_create_object(dev, size);
        if (IS_ERR(obj))
            return obj;
        shmem = to_drm_gem_shmem_obj(obj);
    } else {
        shmem = knew<drm_gem_shmem_object>(GFP_KERNEL);
        if (!shmem)
            return ERR_PTR<drm_gem_object>(-ENOMEM);
        shmem->base.funcs = &drm_gem_shmem_funcs;
    }
    // Cannot fail for a page-multiple size: a private object (no pages of its own).
    WARN_ON(drm_gem_shmem_init(dev->vma_offset_manager, shmem, size));
    shmem->base.dev = dev;
    shmem->sgt = sgt;
    return &shmem->base;
}

}  // namespace drm
