// Mirrors include/drm/drm_vma_manager.h: fake mmap offsets for GEM objects.
//
// Every GEM object that userspace may mmap gets a unique range in a fake offset space (the
// "mmap offset" the DRM_IOCTL_*_MMAP_OFFSET ioctls return). The space is counted in pages and
// managed by a drm_mm; nodes are embedded in the objects. Lookups by offset are how the mmap()
// path (drm_gem_object_lookup_at_offset) finds the object behind an offset.
#pragma once
#include "drm/drm_mm.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/spinlock.h"

namespace drm {

// As upstream (drm_gem.h): the fake offsets start at 4 GiB and span 1 TiB, in pages.
inline constexpr u64 DRM_FILE_PAGE_OFFSET_START = (u64{0xFFFFFFFF} >> kshim::PAGE_SHIFT) + 1;
inline constexpr u64 DRM_FILE_PAGE_OFFSET_SIZE = (u64{0xFFFFFFFF} >> kshim::PAGE_SHIFT) * 256;

struct drm_vma_offset_node {
    drm_mm_node vm_node;  // start and size in pages
};

struct drm_vma_offset_manager {
    kshim::SpinLock vm_lock{"drm_vma_offset_manager.vm_lock"};  // protects vm_addr_space_mm
    drm_mm vm_addr_space_mm;
};

// page_offset and size are in pages.
void drm_vma_offset_manager_init(drm_vma_offset_manager* mgr, u64 page_offset, u64 size);
void drm_vma_offset_manager_destroy(drm_vma_offset_manager* mgr);

// Gives node a free range of `pages` pages; 0 if it already has one, -ENOSPC when full.
int drm_vma_offset_add(drm_vma_offset_manager* mgr, drm_vma_offset_node* node, u64 pages);
void drm_vma_offset_remove(drm_vma_offset_manager* mgr, drm_vma_offset_node* node);
// The node whose range contains [start, start + pages) (in pages), or nullptr.
drm_vma_offset_node* drm_vma_offset_lookup_locked(drm_vma_offset_manager* mgr, u64 start, u64 pages);
inline void drm_vma_offset_lock_lookup(drm_vma_offset_manager* mgr) ACQUIRE(mgr->vm_lock) {
    kshim::spin_lock(&mgr->vm_lock);
}
inline void drm_vma_offset_unlock_lookup(drm_vma_offset_manager* mgr) RELEASE(mgr->vm_lock) {
    kshim::spin_unlock(&mgr->vm_lock);
}
drm_vma_offset_node* drm_vma_offset_exact_lookup_locked(drm_vma_offset_manager* mgr, u64 start, u64 pages);

inline bool drm_vma_node_has_offset(const drm_vma_offset_node* node) {
    return drm_mm_node_allocated(&node->vm_node);
}
inline u64 drm_vma_node_start(const drm_vma_offset_node* node) {
    return node->vm_node.start;
}
inline u64 drm_vma_node_size(const drm_vma_offset_node* node) {
    return node->vm_node.size;
}
// The byte offset userspace passes to mmap(), 0 if the node has none.
inline u64 drm_vma_node_offset_addr(const drm_vma_offset_node* node) {
    return drm_vma_node_has_offset(node) ? node->vm_node.start << kshim::PAGE_SHIFT : 0;
}

}  // namespace drm
