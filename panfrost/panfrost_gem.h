// Mirrors drivers/gpu/drm/panfrost/panfrost_gem.{h,c}: BOs on shmem GEM and their per-file GPU
// mappings.
//
// DOC: A BO is mapped into the VM of every file that holds a handle to it (the GEM open hook):
// each such mapping owns a drm_mm node of that VM, a reference on the BO and one on the VM, and
// lives on the BO's mappings list until the handle goes (the close hook). A HEAP BO gets its VA
// at open but no pages: the MMU fault handler backs it 2 MiB at a time. Heap chunks are blocks of
// their own here (upstream reads them from the object's shmem file), freed with the BO.
//
// MADVISE DONTNEED puts a BO on the device's shrinker list (madv_list, which upstream keeps in
// the shmem object); the shrinker (panfrost_gem_shrinker.cpp) purges the listed BOs the GPU does
// not use: their mappings are torn down in every VM and their pages dropped for good. A label is
// a kmalloc'ed string (SET_LABEL_BO, or "GEM PRIME buffer" for foreign imports).
#pragma once
#include <atomic>

#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_mm.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/mutex.h"
#include "panfrost/panfrost_device.h"

namespace panfrost {

struct panfrost_mmu;

struct panfrost_gem_object {
    drm::drm_gem_shmem_object base;
    // HEAP BOs: one sg table per 2 MiB chunk (nents 0 until the chunk is faulted in) and the
    // chunk's pages (an order-9 block). resv.
    kshim::sg_table* sgts = nullptr;
    kshim::Page** heap_chunks = nullptr;

    struct {
        list_head list;  // panfrost_gem_mapping.node
        kshim::Mutex lock{"panfrost_gem.mappings.lock"};
    } mappings;

    // Jobs using the BO (the shrinker may not purge it meanwhile).
    std::atomic<int> gpu_usecount{0};
    // On pfdev->shrinker_list while DONTNEED and not purged (upstream: base.madv_list).
    // pfdev->shrinker_lock.
    list_head madv_list;
    size_t heap_rss_size = 0;  // populated heap bytes; resv

    struct {
        const char* str = nullptr;  // kmalloc'ed; lock
        kshim::Mutex lock{"panfrost_gem.label.lock"};
    } label;

    bool noexec = false;
    bool is_heap = false;
    bool wb_mmap = false;
};

struct panfrost_gem_mapping {
    list_head node;  // panfrost_gem_object.mappings.list
    kshim::kref refcount;
    panfrost_gem_object* obj = nullptr;  // a reference
    drm::drm_mm_node mmnode;             // VA in pages, in mmu->mm
    panfrost_mmu* mmu = nullptr;         // a reference
    bool active = false;                 // page tables populated
};

inline panfrost_gem_object* to_panfrost_bo(drm::drm_gem_object* obj) {
    return container_of(to_drm_gem_shmem_obj(obj), panfrost_gem_object, base);
}
inline panfrost_gem_mapping* drm_mm_node_to_panfrost_mapping(drm::drm_mm_node* node) {
    return container_of(node, panfrost_gem_mapping, mmnode);
}

// A BO of `size` bytes (HEAP: rounded up to 2 MiB; else to pages) with PANFROST_BO_* `flags`;
// one reference for the caller. ERR_PTR(-EINVAL) for HEAP with WB_MMAP or size 0, -ENOMEM.
panfrost_gem_object* panfrost_gem_create(drm::drm_device* dev, size_t size, u32 flags);

// drm_gem_object_funcs.open/close: map the BO into the file's VM / drop that mapping.
int panfrost_gem_open(drm::drm_gem_object* obj, drm::drm_file* file);
void panfrost_gem_close(drm::drm_gem_object* obj, drm::drm_file* file);

// The BO's mapping in the file's VM with a reference, or nullptr.
panfrost_gem_mapping* panfrost_gem_mapping_get(panfrost_gem_object* bo, panfrost_file_priv* priv);
void panfrost_gem_mapping_put(panfrost_gem_mapping* mapping);

// drm_driver.gem_create_object.
drm::drm_gem_object* panfrost_gem_create_object(drm::drm_device* dev, size_t size);
// drm_driver.gem_prime_import_sg_table: a foreign dma_buf as a NOEXEC BO labelled
// "GEM PRIME buffer" (a dma_buf of this device gives back its own BO, in the DRM core).
drm::drm_gem_object* panfrost_gem_prime_import_sg_table(drm::drm_device* dev, kshim::dma_buf_attachment* attach,
                                                        kshim::sg_table* sgt);

// Unmaps the BO from every VM holding it and frees their VA (the mappings stay on the list until
// their handles go). bo->mappings.lock held.
void panfrost_gem_teardown_mappings_locked(panfrost_gem_object* bo);

// The longest label SET_LABEL_BO takes, NUL included.
inline constexpr size_t PANFROST_BO_LABEL_MAXLEN = 4096;
// Replaces the label with `label` (kmalloc'ed, owned by the BO from now on; nullptr clears).
void panfrost_gem_set_label(drm::drm_gem_object* obj, const char* label);
// A label of the kernel's own (copied) for a BO no user holds a handle to yet.
void panfrost_gem_internal_set_label(drm::drm_gem_object* obj, const char* label);
// SYNC_BO's work for one op: PANFROST_BO_SYNC_CPU_CACHE_FLUSH(_AND_INVALIDATE) of
// [offset, offset + size). -EINVAL: range out of the BO (or overflowing), an import, an unknown
// type; nothing to do for a write-combined BO or size 0; else the pages' errno.
int panfrost_gem_sync(drm::drm_gem_object* obj, u32 type, u32 offset, u32 size);

// panfrost_gem_shrinker.cpp: registers / frees the device's shrinker.
int panfrost_gem_shrinker_init(drm::drm_device* dev);
void panfrost_gem_shrinker_cleanup(drm::drm_device* dev);

extern const drm::drm_gem_object_funcs panfrost_gem_funcs;

}  // namespace panfrost
