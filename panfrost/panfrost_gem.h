// Mirrors drivers/gpu/drm/panfrost/panfrost_gem.{h,c}: BOs on shmem GEM and their per-file GPU
// mappings.
//
// DOC: A BO is mapped into the VM of every file that holds a handle to it (the GEM open hook):
// each such mapping owns a drm_mm node of that VM, a reference on the BO and one on the VM, and
// lives on the BO's mappings list until the handle goes (the close hook). A HEAP BO gets its VA
// at open but no pages: the MMU fault handler backs it 2 MiB at a time. Heap chunks are blocks of
// their own here (upstream reads them from the object's shmem file), freed with the BO.
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
    size_t heap_rss_size = 0;  // populated heap bytes; resv

    struct {
        const char* str = nullptr;  // kmalloc'ed or static; lock
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

extern const drm::drm_gem_object_funcs panfrost_gem_funcs;

}  // namespace panfrost
