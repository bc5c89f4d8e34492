// Mirrors include/drm/drm_mm.h: the DRM range allocator.
//
// A drm_mm manages [start, start + size). Callers embed drm_mm_node objects and either let the
// allocator place them (drm_mm_insert_node_in_range: size, alignment, color, range, mode) or
// place them themselves (drm_mm_reserve_node). Free space is tracked as "holes": each hole
// follows a node in address order (the head node stands before the first hole), and lives in
// three indexes: by size (best fit), by address (lowest/highest fit) and in a most-recently-freed
// stack (eviction). As upstream, the address index is an rb-tree augmented with the largest hole
// in each subtree, so LOW/HIGH placement skips whole subtrees of small holes: every insertion
// mode finds its first candidate in O(log holes). An eviction roster (drm_mm_scan) finds which
// nodes to evict to make room.
//
// Not thread-safe, as upstream: the owner serialises all calls on one allocator.
#pragma once
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>
#include <utility>

#include "kernel_shim/types.h"

namespace drm {

using kshim::u64;

enum drm_mm_insert_mode : unsigned {
    DRM_MM_INSERT_BEST = 0,         // smallest hole that fits
    DRM_MM_INSERT_LOW,              // lowest-addressed hole that fits, placed at its bottom
    DRM_MM_INSERT_HIGH,             // highest-addressed hole that fits, placed at its top
    DRM_MM_INSERT_EVICT,            // most recently freed hole first (after an eviction scan)
    DRM_MM_INSERT_ONCE = 1u << 31,  // only try the first candidate hole
    DRM_MM_INSERT_HIGHEST = DRM_MM_INSERT_HIGH | DRM_MM_INSERT_ONCE,
    DRM_MM_INSERT_LOWEST = DRM_MM_INSERT_LOW | DRM_MM_INSERT_ONCE,
};

struct drm_mm;

namespace mm_detail {
namespace bi = boost::intrusive;
using SafeLink = bi::link_mode<bi::safe_link>;
struct NodeListTag;
struct NodeAddrTag;
struct HoleSizeTag;
struct HoleStackTag;
using NodeListHook = bi::list_base_hook<bi::tag<NodeListTag>, SafeLink>;
using NodeAddrHook = bi::set_base_hook<bi::tag<NodeAddrTag>, SafeLink>;
using HoleSizeHook = bi::set_base_hook<bi::tag<HoleSizeTag>, SafeLink>;
using HoleStackHook = bi::list_base_hook<bi::tag<HoleStackTag>, SafeLink>;

// Link in the address-ordered hole tree (upstream's rb_hole_addr + subtree_max_hole). Boost's
// rb-tree hooks cannot carry an augmented value, so this link is driven by
// bi::rbtree_algorithms (see drm/drm_mm.cpp), which rebalances and leaves the augmentation to us.
// Like a Boost hook, copying a node does not copy its place in the tree.
struct HoleAddrLink {
    HoleAddrLink() = default;
    HoleAddrLink(const HoleAddrLink&) noexcept {}
    // Deliberately copies nothing (a node's place in the tree is its own), so self-assignment is
    // trivially safe.
    // NOLINTNEXTLINE(bugprone-unhandled-self-assignment)
    HoleAddrLink& operator=(const HoleAddrLink&) noexcept { return *this; }

    HoleAddrLink* hole_parent_ = nullptr;  // null while not in the tree
    HoleAddrLink* hole_left_ = nullptr;
    HoleAddrLink* hole_right_ = nullptr;
    u64 subtree_max_hole_ = 0;  // largest hole_size_ in this subtree
    bool hole_red_ = false;
};
}  // namespace mm_detail

// One allocation. Embed it, zero-initialise it, and fill start/size/color only for reserve.
struct drm_mm_node : mm_detail::NodeListHook,
                     mm_detail::NodeAddrHook,
                     mm_detail::HoleSizeHook,
                     mm_detail::HoleAddrLink,
                     mm_detail::HoleStackHook {
    unsigned long color = 0;
    u64 start = 0;
    u64 size = 0;
    drm_mm* mm = nullptr;

    // Allocator-private.
    u64 hole_size_ = 0;                 // size of the hole that follows this node, 0 if none
    u64 hole_seq_ = 0;                  // when that hole appeared: the best-fit tie-break
    drm_mm_node* scan_prev_ = nullptr;  // list predecessor while held by an eviction scan
    bool allocated_ = false;
    bool scanned_block_ = false;
};

namespace mm_detail {
struct NodeStartKey {
    using type = u64;
    u64 operator()(const drm_mm_node& n) const { return n.start; }
};
// Ascending size; among equal sizes the newest hole first.
struct HoleSizeKey {
    using type = std::pair<u64, u64>;
    type operator()(const drm_mm_node& n) const { return {n.hole_size_, ~n.hole_seq_}; }
};
using NodeList = bi::list<drm_mm_node, bi::base_hook<NodeListHook>, bi::constant_time_size<false>>;
using NodeTree =
    bi::set<drm_mm_node, bi::base_hook<NodeAddrHook>, bi::key_of_value<NodeStartKey>, bi::constant_time_size<false>>;
using HoleSizeTree =
    bi::set<drm_mm_node, bi::base_hook<HoleSizeHook>, bi::key_of_value<HoleSizeKey>, bi::constant_time_size<false>>;
using HoleStack = bi::list<drm_mm_node, bi::base_hook<HoleStackHook>, bi::constant_time_size<false>>;
}  // namespace mm_detail

struct drm_mm {
    drm_mm() = default;
    drm_mm(const drm_mm&) = delete;
    drm_mm& operator=(const drm_mm&) = delete;
    ~drm_mm();

    // Optional placement policy: shrink [*start, *end) of the hole after `node` for `color`.
    void (*color_adjust)(const drm_mm_node* node, unsigned long color, u64* start, u64* end) = nullptr;

    // Allocator-private. node_list_ is in address order and starts with head_node_.
    mm_detail::NodeList node_list_;
    mm_detail::NodeTree nodes_;
    mm_detail::HoleSizeTree holes_size_;
    mm_detail::HoleAddrLink holes_addr_;  // the tree's header (rbtree_algorithms' convention)
    mm_detail::HoleStack hole_stack_;
    drm_mm_node head_node_;
    u64 hole_seq_ = 0;
    unsigned scan_active_ = 0;
    bool initialized_ = false;
};

// Eviction roster state (drm_mm_scan).
struct drm_mm_scan {
    drm_mm* mm = nullptr;
    u64 size = 0;
    u64 alignment = 0;
    u64 remainder_mask = 0;
    u64 range_start = 0;
    u64 range_end = 0;
    u64 hit_start = 0;
    u64 hit_end = 0;
    unsigned long color = 0;
    unsigned mode = DRM_MM_INSERT_BEST;
};

void drm_mm_init(drm_mm* mm, u64 start, u64 size);
// WARNs ("Memory manager not clean during takedown.") if nodes are still allocated.
void drm_mm_takedown(drm_mm* mm);
bool drm_mm_clean(const drm_mm* mm);
inline bool drm_mm_initialized(const drm_mm* mm) {
    return mm->initialized_;
}

// 0, or -ENOSPC when no hole satisfies the request (zero size and impossible ranges included).
// -EINVAL (with a WARN) for a node that is already allocated; -EBUSY while a scan is active.
int drm_mm_insert_node_in_range(drm_mm* mm, drm_mm_node* node, u64 size, u64 alignment, unsigned long color,
                                u64 range_start, u64 range_end, unsigned mode);
inline int drm_mm_insert_node_generic(drm_mm* mm, drm_mm_node* node, u64 size, u64 alignment, unsigned long color,
                                      unsigned mode) {
    return drm_mm_insert_node_in_range(mm, node, size, alignment, color, 0, ~u64{0}, mode);
}
inline int drm_mm_insert_node(drm_mm* mm, drm_mm_node* node, u64 size) {
    return drm_mm_insert_node_generic(mm, node, size, 0, 0, DRM_MM_INSERT_BEST);
}
// Inserts node at its preset start/size/color; -ENOSPC if that range is not entirely free.
int drm_mm_reserve_node(drm_mm* mm, drm_mm_node* node);
void drm_mm_remove_node(drm_mm_node* node);
// new_node takes over old_node's place and parameters; old_node ends up unallocated.
void drm_mm_replace_node(drm_mm_node* old_node, drm_mm_node* new_node);

inline bool drm_mm_node_allocated(const drm_mm_node* node) {
    return node->allocated_;
}
inline bool drm_mm_hole_follows(const drm_mm_node* node) {
    return node->hole_size_ != 0;
}
inline u64 __drm_mm_hole_node_start(const drm_mm_node* node) {
    return node->start + node->size;
}
u64 __drm_mm_hole_node_end(const drm_mm_node* node);
inline u64 drm_mm_hole_node_start(const drm_mm_node* node) {
    return __drm_mm_hole_node_start(node);
}
inline u64 drm_mm_hole_node_end(const drm_mm_node* node) {
    return __drm_mm_hole_node_end(node);
}
// Neighbours in address order; the list is circular through the head node (not allocated).
const drm_mm_node* drm_mm_next_node(const drm_mm_node* node);
const drm_mm_node* drm_mm_prev_node(const drm_mm_node* node);

// Iteration (the drm_mm_for_each_* macros). The node callbacks may remove the node they get.
template <class F>
void drm_mm_for_each_node_safe(drm_mm* mm, F&& f) {
    auto it = mm->node_list_.begin();
    if (it == mm->node_list_.end())
        return;
    for (++it; it != mm->node_list_.end();)
        f(&*it++);
}
template <class F>
void drm_mm_for_each_node(const drm_mm* mm, F&& f) {
    drm_mm_for_each_node_safe(const_cast<drm_mm*>(mm), [&](drm_mm_node* n) { f(static_cast<const drm_mm_node*>(n)); });
}
// f(node, hole_start, hole_end) for each hole, most recently created first.
template <class F>
void drm_mm_for_each_hole(const drm_mm* mm, F&& f) {
    for (const drm_mm_node& n : mm->hole_stack_)
        f(&n, __drm_mm_hole_node_start(&n), __drm_mm_hole_node_end(&n));
}
// The first allocated node overlapping [start, last]; when none does, upstream's sentinel: the
// head node (&mm->head_node_, not allocated, its start the end of the managed range).
drm_mm_node* __drm_mm_interval_first(const drm_mm* mm, u64 start, u64 last);
// f(node) for every node overlapping [start, end), in address order; f may remove its node.
// Deviation: the walk also stops at the head node. Upstream's macro stops only on
// node->start >= end, so a range reaching past the managed range would visit the head and wrap.
template <class F>
void drm_mm_for_each_node_in_range(drm_mm* mm, u64 start, u64 end, F&& f) {
    if (end <= start)
        return;
    drm_mm_node* node = __drm_mm_interval_first(mm, start, end - 1);
    while (node != &mm->head_node_ && node->start < end) {
        auto it = mm->node_list_.iterator_to(*node);
        ++it;
        drm_mm_node* next = it == mm->node_list_.end() ? &mm->head_node_ : &*it;
        f(node);
        node = next;
    }
}

// Eviction roster. Add candidates until drm_mm_scan_add_block() returns true, then remove every
// added node again in reverse order; drm_mm_scan_remove_block() says which ones to evict.
void drm_mm_scan_init_with_range(drm_mm_scan* scan, drm_mm* mm, u64 size, u64 alignment, unsigned long color, u64 start,
                                 u64 end, unsigned mode);
inline void drm_mm_scan_init(drm_mm_scan* scan, drm_mm* mm, u64 size, u64 alignment, unsigned long color,
                             unsigned mode) {
    drm_mm_scan_init_with_range(scan, mm, size, alignment, color, 0, ~u64{0}, mode);
}
bool drm_mm_scan_add_block(drm_mm_scan* scan, drm_mm_node* node);
bool drm_mm_scan_remove_block(drm_mm_scan* scan, drm_mm_node* node);
// After evicting, a node next to the hole that color_adjust still forbids, or nullptr.
drm_mm_node* drm_mm_scan_color_evict(drm_mm_scan* scan);

}  // namespace drm
