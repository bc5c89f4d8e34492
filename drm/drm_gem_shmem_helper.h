// Mirrors include/drm/drm_gem_shmem_helper.h: GEM objects backed by pages of system memory.
//
// DOC: backing and CPU mappings. Pages come from the physical page arena
// (kernel_shim/page_alloc.h), on first need (get_pages, pin, get_pages_sgt, vmap), zeroed. The
// last put_pages makes the object non-resident but keeps its pages (upstream returns them to the
// object's shmem file, whose contents survive): the next get_pages takes the same pages back, and
// they are freed with the object. There is no swap: a non-resident object still holds memory.
//
// The kernel's vmap() builds a linear kernel view of scattered pages by editing page tables; in
// userspace we cannot alias the arena's pages at a second address (it is a private anonymous
// mapping). So instead the backing itself is made linear: an object of n pages is allocated as
// ONE naturally aligned block of order ceil(log2 n), and the unused tail is given back at once
// as smaller aligned blocks (the kernel's alloc_pages_exact()). Because a Page* is its kernel
// virtual address, the object's pages are then virtually contiguous and vmap is simply
// page_address(pages[0]): no copy, no shadow, writes through the vmap are what the GPU reads
// by physical address. Objects larger than the largest block (1 GiB) are backed by several
// blocks; vmap of such an object returns -ENOMEM unless the blocks happen to be adjacent (as a
// kernel vmap can fail for lack of vmalloc space). get_pages_sgt merges physically contiguous
// pages, so a normal object has a single segment.
//
// PRIME imports (drm_gem_shmem_prime_import_sg_table): an object over another device's pages has
// no pages of its own, only the sg table of its attachment (`sgt`, the exporter's pages, which is
// what get_pages_sgt gives and the GPU maps); its vmap is the exporter's (dma_buf_vmap), so a
// CPU mapping of the import is a mapping of the exporter's pages; pin/get_pages are refused
// (WARN, -EINVAL) as upstream, where the exporter pinned the pages at attach; the release
// unmaps and detaches the attachment and drops the dma_buf (drm_prime_gem_destroy).
//
// Locking: everything is under the object's resv (as upstream since 6.x); the `_locked`
// variants assert it.
#pragma once
#include "drm/drm_gem.h"
#include "kernel_shim/dma-buf/scatterlist.h"
#include "kernel_shim/page_alloc.h"

namespace drm {

struct drm_gem_object;
// drm_gem_shmem_object_status: resident once the pages exist.
unsigned drm_gem_shmem_object_status(drm_gem_object* obj);

// A DMA-mapped scatter list (kernel_shim/dma-buf/scatterlist.h): physically contiguous segments
// in object order.
using SgTable = kshim::sg_table;
using kshim::sg_dma_address;
using kshim::sg_dma_len;
using kshim::sg_free_table;

struct drm_gem_shmem_object {
    drm_gem_object base;

    kshim::Page** pages = nullptr;  // one per page, null until get_pages; kmalloc'ed
    u32 pages_use_count = 0;        // get_pages users (pins included); resv
    u32 pages_pin_count = 0;        // pins; resv
    SgTable* sgt = nullptr;         // cached by get_pages_sgt, freed with the pages; resv
                                    // (an import's: its attachment's mapping, set at import)
    void* vaddr = nullptr;          // CPU mapping while vmap_use_count > 0; resv
    u32 vmap_use_count = 0;
    bool map_wc = false;
    // How the backing is allocated (the shim's stand-in for the object's shmem mount). true: in
    // naturally aligned, physically contiguous blocks of up to 2^MAX_PAGE_ORDER pages, as huge
    // folios of a tmpfs mounted huge=within_size would give (so any 2 MiB-aligned 2 MiB of a BO
    // of 2 MiB or more is one contiguous 2 MiB-aligned range); the default. false: as a plain
    // shmem mount (order-0 folios), no 2 MiB-aligned run starts at a 2 MiB offset of the object
    // (the shim still backs it contiguously, one page off alignment, so the CPU can map it
    // linearly). Set before get_pages.
    bool huge = true;
    // Backing blocks as allocated by alloc_pages_exact: (first page index, page count) pairs,
    // kmalloc'ed, for freeing.
    struct Block {
        u32 first;
        u32 npages;
    };
    Block* blocks = nullptr;
    u32 num_blocks = 0;
    // What the last put_pages gave back, kept for the next get_pages: upstream's pages return to
    // the object's shmem file (the page cache), so its contents survive an unpin/unmap and the
    // next get_pages finds them again. Not resident meanwhile (status), freed with the object.
    kshim::Page** kept_pages = nullptr;
    Block* kept_blocks = nullptr;
    u32 kept_num_blocks = 0;
    // drm_gem_shmem_object.madv: the driver's madvise state (0 WILLNEED, > 0 DONTNEED), -1 once
    // purged. resv. (Upstream's madv_list, the node on a driver's shrinker list, lives in the
    // driver's object here: the shim's DRM core has no list type.)
    int madv = 0;
};

inline drm_gem_shmem_object* to_drm_gem_shmem_obj(drm_gem_object* obj) {
    return container_of(obj, drm_gem_shmem_object, base);
}

// Allocates a shmem object of `size` bytes (rounded up to pages); no pages yet. -EINVAL for
// size 0 or overflow, -ENOMEM. The object has a reference the caller owns.
int drm_gem_shmem_create(drm_vma_offset_manager* mgr, u64 size, drm_gem_shmem_object** out);
// Initialises an embedded shmem object (drivers that wrap it: panthor_gem_object). The
// object's funcs must be set by the caller to something whose free calls drm_gem_shmem_free.
int drm_gem_shmem_init(drm_vma_offset_manager* mgr, drm_gem_shmem_object* shmem, u64 size);
// Releases pages, sgt, mapping state and the GEM part; does not free `shmem` itself.
void drm_gem_shmem_release(drm_gem_shmem_object* shmem);
// release + kfree: the free callback of objects made by drm_gem_shmem_create.
void drm_gem_shmem_free(drm_gem_shmem_object* shmem);

int drm_gem_shmem_get_pages_locked(drm_gem_shmem_object* shmem);
void drm_gem_shmem_put_pages_locked(drm_gem_shmem_object* shmem);
int drm_gem_shmem_pin_locked(drm_gem_shmem_object* shmem);
void drm_gem_shmem_unpin_locked(drm_gem_shmem_object* shmem);
int drm_gem_shmem_pin(drm_gem_shmem_object* shmem);
void drm_gem_shmem_unpin(drm_gem_shmem_object* shmem);
// Pins the pages (until the object is freed, as upstream) and returns the cached sg table.
int drm_gem_shmem_get_pages_sgt(drm_gem_shmem_object* shmem, SgTable** out);
int drm_gem_shmem_vmap_locked(drm_gem_shmem_object* shmem, IosysMap* map);
void drm_gem_shmem_vunmap_locked(drm_gem_shmem_object* shmem, IosysMap* map);

// madvise and purge (upstream's drm_gem_shmem_madvise_locked / _is_purgeable / _purge_locked).
// madvise records `madv` unless the object is already purged; returns whether the pages are
// still there (madv >= 0). resv held.
bool drm_gem_shmem_madvise_locked(drm_gem_shmem_object* shmem, int madv);
// DONTNEED, mapped for a device (sgt), not pinned (the shim's CPU mappings pin: a CPU-mapped
// object is not purgeable, where upstream would zap the mapping), not exported, not imported.
bool drm_gem_shmem_is_purgeable(drm_gem_shmem_object* shmem);
// Drops the sg table and the pages for good (the kept ones too: upstream truncates the shmem
// file) and the mmap offset; madv becomes -1, and get_pages fails with -ENOMEM from then on
// (upstream's CPU faults get SIGBUS). resv held; WARNs unless purgeable.
void drm_gem_shmem_purge_locked(drm_gem_shmem_object* shmem);

// drm_gem_shmem_get_sg_table: a new table of the object's pages (which must be pinned: PRIME
// export to another device pins at attach), for the caller to free (sg_free_table + kfree).
// ERR_PTR(-EINVAL) for an import or an object without pages, -ENOMEM.
kshim::sg_table* drm_gem_shmem_get_sg_table(drm_gem_shmem_object* shmem);
// drm_driver.gem_prime_import_sg_table: an object of `dev` (the driver's gem_create_object, else
// a plain shmem object) of the dma_buf's size over `sgt`. ERR_PTR(-EINVAL) for a size that is
// not a page multiple, -ENOMEM. The caller sets import_attach and resv (drm_gem_prime_import_dev).
drm_gem_object* drm_gem_shmem_prime_import_sg_table(drm_device* dev, kshim::dma_buf_attachment* attach, SgTable* sgt);

extern const drm_gem_object_funcs drm_gem_shmem_funcs;

}  // namespace drm
