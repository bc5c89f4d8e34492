// Mirrors drivers/gpu/drm/drm_vma_manager.c.
#include "drm/drm_vma_manager.h"

namespace drm {

void drm_vma_offset_manager_init(drm_vma_offset_manager* mgr, u64 page_offset, u64 size) {
    drm_mm_init(&mgr->vm_addr_space_mm, page_offset, size);
}

void drm_vma_offset_manager_destroy(drm_vma_offset_manager* mgr) {
    drm_mm_takedown(&mgr->vm_addr_space_mm);
}

int drm_vma_offset_add(drm_vma_offset_manager* mgr, drm_vma_offset_node* node, u64 pages) {
    if (pages == 0)
        return -EINVAL;
    kshim::SpinGuard g(mgr->vm_lock);
    if (drm_mm_node_allocated(&node->vm_node))
        return 0;
    return drm_mm_insert_node(&mgr->vm_addr_space_mm, &node->vm_node, pages);
}

void drm_vma_offset_remove(drm_vma_offset_manager* mgr, drm_vma_offset_node* node) {
    kshim::SpinGuard g(mgr->vm_lock);
    if (drm_mm_node_allocated(&node->vm_node))
        drm_mm_remove_node(&node->vm_node);
}

drm_vma_offset_node* drm_vma_offset_lookup_locked(drm_vma_offset_manager* mgr, u64 start, u64 pages) {
    lockdep_assert_held(&mgr->vm_lock);
    if (pages == 0)
        return nullptr;
    drm_mm_node* n = __drm_mm_interval_first(&mgr->vm_addr_space_mm, start, start);
    if (!drm_mm_node_allocated(n) || n->start > start)
        return nullptr;  // the head: nothing there
    if (start + pages > n->start + n->size)
        return nullptr;
    return container_of(n, drm_vma_offset_node, vm_node);
}

drm_vma_offset_node* drm_vma_offset_exact_lookup_locked(drm_vma_offset_manager* mgr, u64 start, u64 pages) {
    lockdep_assert_held(&mgr->vm_lock);
    drm_vma_offset_node* node = drm_vma_offset_lookup_locked(mgr, start, pages);
    return node && drm_vma_node_start(node) == start ? node : nullptr;
}

}  // namespace drm
