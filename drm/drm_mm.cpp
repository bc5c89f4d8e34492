// Mirrors drivers/gpu/drm/drm_mm.c: the DRM range allocator.
//
// Hole indexes, as upstream: by size (a Boost.Intrusive multiset, BEST), by address (LOW/HIGH)
// and a stack (EVICT). The address index needs each subtree's largest hole, which Boost's
// containers cannot maintain, so it is a bare rb-tree run by bi::rbtree_algorithms; after each
// link or unlink, refresh_subtree_max() recomputes the augmentation along the rebalanced path.
// LOW/HIGH then find the nearest hole big enough by descending only into subtrees whose
// largest hole fits: O(log holes) per candidate, however fragmented the range.
#include "drm/drm_mm.h"

#include <algorithm>
#include <bit>
#include <boost/intrusive/rbtree_algorithms.hpp>

#include "kernel_shim/report.h"

namespace drm {

namespace {

using mm_detail::HoleAddrLink;

struct HoleAddrTraits {
    using node = HoleAddrLink;
    using node_ptr = HoleAddrLink*;
    using const_node_ptr = const HoleAddrLink*;
    using color = bool;
    static node_ptr get_parent(const_node_ptr n) { return n->hole_parent_; }
    static void set_parent(node_ptr n, node_ptr p) { n->hole_parent_ = p; }
    static node_ptr get_left(const_node_ptr n) { return n->hole_left_; }
    static void set_left(node_ptr n, node_ptr l) { n->hole_left_ = l; }
    static node_ptr get_right(const_node_ptr n) { return n->hole_right_; }
    static void set_right(node_ptr n, node_ptr r) { n->hole_right_ = r; }
    static color get_color(const_node_ptr n) { return n->hole_red_; }
    static void set_color(node_ptr n, color c) { n->hole_red_ = c; }
    static color black() { return false; }
    static color red() { return true; }
};
using HoleAddrAlgo = boost::intrusive::rbtree_algorithms<HoleAddrTraits>;

// Only ever applied to tree members, never to the header (which is not a drm_mm_node).
drm_mm_node* hole_node(HoleAddrLink* link) {
    return static_cast<drm_mm_node*>(link);
}
u64 hole_start(HoleAddrLink* link) {
    return __drm_mm_hole_node_start(hole_node(link));
}
u64 hole_size(HoleAddrLink* link) {
    return hole_node(link)->hole_size_;
}
u64 subtree_max(const HoleAddrLink* link) {
    return link ? link->subtree_max_hole_ : 0;
}
HoleAddrLink* hole_root(drm_mm* mm) {
    return mm->holes_addr_.hole_parent_;
}

void recompute_subtree_max(HoleAddrLink* link) {
    link->subtree_max_hole_ =
        std::max({hole_size(link), subtree_max(link->hole_left_), subtree_max(link->hole_right_)});
}

// Rebalancing only rotates nodes on the path from `bottom` (the lowest node whose children
// changed) to the root and their immediate children, and a node rotated off the path keeps
// unchanged subtrees under it. So recomputing, bottom-up, each path node after its off-path
// children restores every subtree_max_hole_ (tests/drm_mm checks the whole tree after churn).
void refresh_subtree_max(drm_mm* mm, HoleAddrLink* bottom) {
    HoleAddrLink* header = &mm->holes_addr_;
    HoleAddrLink* below = nullptr;
    for (HoleAddrLink* n = bottom; n != header; below = n, n = n->hole_parent_) {
        if (n->hole_left_ && n->hole_left_ != below)
            recompute_subtree_max(n->hole_left_);
        if (n->hole_right_ && n->hole_right_ != below)
            recompute_subtree_max(n->hole_right_);
        recompute_subtree_max(n);
    }
}

void hole_addr_insert(drm_mm* mm, drm_mm_node* node) {
    HoleAddrLink* link = node;
    link->subtree_max_hole_ = node->hole_size_;
    HoleAddrAlgo::insert_equal_upper_bound(
        &mm->holes_addr_, link, [](HoleAddrLink* a, HoleAddrLink* b) { return hole_start(a) < hole_start(b); });
    refresh_subtree_max(mm, link);
}

void hole_addr_erase(drm_mm* mm, drm_mm_node* node) {
    HoleAddrLink* z = node;
    // The node whose child changes when z goes: its in-order successor's parent (or the
    // successor itself when it is z's right child) if z has two children, else z's parent.
    HoleAddrLink* bottom = z->hole_parent_;
    if (z->hole_left_ && z->hole_right_) {
        HoleAddrLink* y = z->hole_right_;
        while (y->hole_left_)
            y = y->hole_left_;
        bottom = y->hole_parent_ == z ? y : y->hole_parent_;
    }
    HoleAddrAlgo::erase(&mm->holes_addr_, z);
    HoleAddrAlgo::init(z);
    z->subtree_max_hole_ = 0;
    refresh_subtree_max(mm, bottom);
}

// The leftmost hole of at least `size` in the subtree at `t`, which must hold one.
HoleAddrLink* leftmost_fit(HoleAddrLink* t, u64 size) {
    for (;;) {
        if (subtree_max(t->hole_left_) >= size)
            t = t->hole_left_;
        else if (hole_size(t) >= size)
            return t;
        else
            t = t->hole_right_;
    }
}

HoleAddrLink* rightmost_fit(HoleAddrLink* t, u64 size) {
    for (;;) {
        if (subtree_max(t->hole_right_) >= size)
            t = t->hole_right_;
        else if (hole_size(t) >= size)
            return t;
        else
            t = t->hole_left_;
    }
}

// The next hole above `link` in address order that has at least `size` (upstream's
// next_hole_low_addr), or nullptr.
drm_mm_node* next_hole_low_addr(drm_mm* mm, HoleAddrLink* link, u64 size) {
    if (subtree_max(link->hole_right_) >= size)
        return hole_node(leftmost_fit(link->hole_right_, size));
    for (HoleAddrLink* p = link->hole_parent_; p != &mm->holes_addr_; link = p, p = p->hole_parent_) {
        if (p->hole_left_ != link)
            continue;
        if (hole_size(p) >= size)
            return hole_node(p);
        if (subtree_max(p->hole_right_) >= size)
            return hole_node(leftmost_fit(p->hole_right_, size));
    }
    return nullptr;
}

// The next hole below `link` that has at least `size` (next_hole_high_addr), or nullptr.
drm_mm_node* next_hole_high_addr(drm_mm* mm, HoleAddrLink* link, u64 size) {
    if (subtree_max(link->hole_left_) >= size)
        return hole_node(rightmost_fit(link->hole_left_, size));
    for (HoleAddrLink* p = link->hole_parent_; p != &mm->holes_addr_; link = p, p = p->hole_parent_) {
        if (p->hole_right_ != link)
            continue;
        if (hole_size(p) >= size)
            return hole_node(p);
        if (subtree_max(p->hole_left_) >= size)
            return hole_node(rightmost_fit(p->hole_left_, size));
    }
    return nullptr;
}

const drm_mm_node* next_in_list(const drm_mm* mm, const drm_mm_node* node) {
    auto it = mm->node_list_.iterator_to(*node);
    ++it;
    return it == mm->node_list_.end() ? &*mm->node_list_.begin() : &*it;
}

void add_hole(drm_mm_node* node) {
    drm_mm* mm = node->mm;
    node->hole_size_ = __drm_mm_hole_node_end(node) - __drm_mm_hole_node_start(node);
    node->hole_seq_ = ++mm->hole_seq_;
    BUG_ON(!drm_mm_hole_follows(node));
    mm->holes_size_.insert(*node);
    hole_addr_insert(mm, node);
    mm->hole_stack_.push_front(*node);
}

void rm_hole(drm_mm_node* node) {
    drm_mm* mm = node->mm;
    BUG_ON(!drm_mm_hole_follows(node));
    mm->hole_stack_.erase(mm->hole_stack_.iterator_to(*node));
    mm->holes_size_.erase(mm->holes_size_.iterator_to(*node));
    hole_addr_erase(mm, node);
    node->hole_size_ = 0;
}

// The hole containing addr (either end inclusive, as upstream), or nullptr.
drm_mm_node* find_hole(drm_mm* mm, u64 addr) {
    HoleAddrLink* best = nullptr;  // the last hole starting at or below addr
    for (HoleAddrLink* n = hole_root(mm); n;) {
        if (hole_start(n) <= addr) {
            best = n;
            n = n->hole_right_;
        } else {
            n = n->hole_left_;
        }
    }
    if (!best || addr > hole_start(best) + hole_size(best))
        return nullptr;
    return hole_node(best);
}

// The smallest hole of at least `size`; the newest among equals (upstream: best_hole).
drm_mm_node* best_hole(drm_mm* mm, u64 size) {
    auto it = mm->holes_size_.lower_bound(std::pair<u64, u64>{size, 0});
    return it == mm->holes_size_.end() ? nullptr : &*it;
}

// LOW: the lowest hole of at least `size` among those containing or above `start`.
drm_mm_node* first_hole_low(drm_mm* mm, u64 start, u64 size) {
    HoleAddrLink* first = nullptr;  // the lowest hole ending above start (holes never overlap)
    for (HoleAddrLink* n = hole_root(mm); n;) {
        if (hole_start(n) + hole_size(n) > start) {
            first = n;
            n = n->hole_left_;
        } else {
            n = n->hole_right_;
        }
    }
    if (!first || hole_size(first) >= size)
        return first ? hole_node(first) : nullptr;
    return next_hole_low_addr(mm, first, size);
}

// HIGH: the highest hole of at least `size` among those starting below `end`.
drm_mm_node* first_hole_high(drm_mm* mm, u64 end, u64 size) {
    HoleAddrLink* last = nullptr;
    for (HoleAddrLink* n = hole_root(mm); n;) {
        if (hole_start(n) < end) {
            last = n;
            n = n->hole_right_;
        } else {
            n = n->hole_left_;
        }
    }
    if (!last || hole_size(last) >= size)
        return last ? hole_node(last) : nullptr;
    return next_hole_high_addr(mm, last, size);
}

drm_mm_node* first_hole(drm_mm* mm, u64 start, u64 end, u64 size, unsigned mode) {
    switch (mode) {
    default:
    case DRM_MM_INSERT_BEST: return best_hole(mm, size);
    case DRM_MM_INSERT_LOW: return first_hole_low(mm, start, size);
    case DRM_MM_INSERT_HIGH: return first_hole_high(mm, end, size);
    case DRM_MM_INSERT_EVICT: return mm->hole_stack_.empty() ? nullptr : &mm->hole_stack_.front();
    }
}

// The candidate after `node` in the mode's order. BEST and EVICT walk their index one by one
// (a hole there is skipped only for alignment, color or range, as upstream).
drm_mm_node* next_hole(drm_mm* mm, drm_mm_node* node, u64 size, unsigned mode) {
    switch (mode) {
    default:
    case DRM_MM_INSERT_BEST: {
        auto it = std::next(mm->holes_size_.iterator_to(*node));
        return it == mm->holes_size_.end() ? nullptr : &*it;
    }
    case DRM_MM_INSERT_LOW: return next_hole_low_addr(mm, node, size);
    case DRM_MM_INSERT_HIGH: return next_hole_high_addr(mm, node, size);
    case DRM_MM_INSERT_EVICT: {
        auto it = std::next(mm->hole_stack_.iterator_to(*node));
        return it == mm->hole_stack_.end() ? nullptr : &*it;
    }
    }
}

// Where a node of `size` would go in [col_start, col_end) ∩ [range_start, range_end), or false.
bool place_in_hole(u64 col_start, u64 col_end, u64 range_start, u64 range_end, u64 size, u64 alignment,
                   u64 remainder_mask, unsigned mode, u64* out_start) {
    u64 adj_start = std::max(col_start, range_start);
    u64 adj_end = std::min(col_end, range_end);
    if (adj_end <= adj_start || adj_end - adj_start < size)
        return false;

    if (mode == DRM_MM_INSERT_HIGH)
        adj_start = adj_end - size;

    if (alignment) {
        u64 rem = remainder_mask ? adj_start & remainder_mask : adj_start % alignment;
        if (rem) {
            adj_start -= rem;
            if (mode != DRM_MM_INSERT_HIGH)
                adj_start += alignment;
            if (adj_start < std::max(col_start, range_start) || std::min(col_end, range_end) - adj_start < size)
                return false;
            if (adj_end <= adj_start || adj_end - adj_start < size)
                return false;
        }
    }
    *out_start = adj_start;
    return true;
}

// Links an already-placed node in after `hole`, splitting the hole around it.
void insert_into_hole(drm_mm* mm, drm_mm_node* hole, drm_mm_node* node) {
    u64 hole_start = __drm_mm_hole_node_start(hole);
    u64 hole_end = hole_start + hole->hole_size_;

    node->mm = mm;
    node->hole_size_ = 0;
    mm->node_list_.insert(std::next(mm->node_list_.iterator_to(*hole)), *node);
    mm->nodes_.insert(*node);
    node->allocated_ = true;

    rm_hole(hole);
    if (node->start > hole_start)
        add_hole(hole);
    if (node->start + node->size < hole_end)
        add_hole(node);
}

}  // namespace

drm_mm::~drm_mm() {
    // Boost's safe-mode hooks insist on being unlinked before the nodes that own them go away.
    hole_stack_.clear();
    HoleAddrAlgo::init_header(&holes_addr_);
    holes_size_.clear();
    nodes_.clear();
    node_list_.clear();
}

u64 __drm_mm_hole_node_end(const drm_mm_node* node) {
    return next_in_list(node->mm, node)->start;
}

const drm_mm_node* drm_mm_next_node(const drm_mm_node* node) {
    return next_in_list(node->mm, node);
}

const drm_mm_node* drm_mm_prev_node(const drm_mm_node* node) {
    const drm_mm* mm = node->mm;
    auto it = mm->node_list_.iterator_to(*node);
    if (it == mm->node_list_.begin())
        return &mm->node_list_.back();
    return &*std::prev(it);
}

void drm_mm_init(drm_mm* mm, u64 start, u64 size) {
    if (WARN_ON(start + size <= start))
        return;
    if (WARN_ON(mm->initialized_ && !drm_mm_clean(mm)))
        return;

    mm->hole_stack_.clear();
    HoleAddrAlgo::init_header(&mm->holes_addr_);
    mm->holes_size_.clear();
    mm->nodes_.clear();
    mm->node_list_.clear();
    mm->hole_seq_ = 0;
    mm->scan_active_ = 0;

    // The head node sits at the end of the range with a wrapped negative size, so the hole that
    // "follows" it is the free space at the start: no special case for the first hole.
    drm_mm_node& head = mm->head_node_;
    head = drm_mm_node{};
    head.mm = mm;
    head.start = start + size;
    head.size = u64{0} - size;
    mm->node_list_.push_back(head);
    add_hole(&head);
    mm->initialized_ = true;
}

bool drm_mm_clean(const drm_mm* mm) {
    auto it = mm->node_list_.begin();
    return it == mm->node_list_.end() || ++it == mm->node_list_.end();
}

void drm_mm_takedown(drm_mm* mm) {
    if (WARN(!drm_mm_clean(mm), "Memory manager not clean during takedown.\n")) {
        drm_mm_for_each_node(mm, [](const drm_mm_node* n) {
            WARN(true, "node [%08llx + %08llx]: leaked\n", (unsigned long long)n->start, (unsigned long long)n->size);
        });
    }
}

int drm_mm_reserve_node(drm_mm* mm, drm_mm_node* node) {
    if (WARN_ON(mm->scan_active_))
        return -EBUSY;
    // An allocated node occupies its own range, so the kernel answers -ENOSPC here too.
    if (node->allocated_)
        return -ENOSPC;

    u64 end = node->start + node->size;
    if (end <= node->start)
        return -ENOSPC;  // zero size or wrap-around

    drm_mm_node* hole = find_hole(mm, node->start);
    if (!hole)
        return -ENOSPC;

    u64 adj_start = __drm_mm_hole_node_start(hole);
    u64 adj_end = adj_start + hole->hole_size_;
    if (mm->color_adjust)
        mm->color_adjust(hole, node->color, &adj_start, &adj_end);
    if (adj_start > node->start || adj_end < end)
        return -ENOSPC;

    insert_into_hole(mm, hole, node);
    return 0;
}

int drm_mm_insert_node_in_range(drm_mm* mm, drm_mm_node* node, u64 size, u64 alignment, unsigned long color,
                                u64 range_start, u64 range_end, unsigned mode) {
    if (WARN_ON(node->allocated_))
        return -EINVAL;
    if (WARN_ON(mm->scan_active_))
        return -EBUSY;
    if (size == 0 || range_start >= range_end || range_end - range_start < size)
        return -ENOSPC;
    if (subtree_max(hole_root(mm)) < size)
        return -ENOSPC;

    if (alignment <= 1)
        alignment = 0;
    const bool once = mode & DRM_MM_INSERT_ONCE;
    mode &= ~unsigned{DRM_MM_INSERT_ONCE};
    const u64 remainder_mask = std::has_single_bit(alignment) ? alignment - 1 : 0;

    for (drm_mm_node* hole = first_hole(mm, range_start, range_end, size, mode); hole;
         hole = once ? nullptr : next_hole(mm, hole, size, mode)) {
        u64 hole_start = __drm_mm_hole_node_start(hole);
        u64 hole_end = hole_start + hole->hole_size_;

        if (mode == DRM_MM_INSERT_LOW && hole_start >= range_end)
            break;
        if (mode == DRM_MM_INSERT_HIGH && hole_end <= range_start)
            break;

        u64 col_start = hole_start, col_end = hole_end;
        if (mm->color_adjust)
            mm->color_adjust(hole, color, &col_start, &col_end);

        u64 adj_start;
        if (place_in_hole(col_start, col_end, range_start, range_end, size, alignment, remainder_mask, mode,
                          &adj_start)) {
            node->size = size;
            node->start = adj_start;
            node->color = color;
            insert_into_hole(mm, hole, node);
            return 0;
        }
    }
    return -ENOSPC;
}

void drm_mm_remove_node(drm_mm_node* node) {
    if (WARN_ON(!node->allocated_))
        return;
    drm_mm* mm = node->mm;
    if (WARN_ON(node->scanned_block_ || mm->scan_active_))
        return;

    drm_mm_node* prev = const_cast<drm_mm_node*>(drm_mm_prev_node(node));
    if (drm_mm_hole_follows(node))
        rm_hole(node);
    mm->nodes_.erase(mm->nodes_.iterator_to(*node));
    mm->node_list_.erase(mm->node_list_.iterator_to(*node));
    node->allocated_ = false;

    if (drm_mm_hole_follows(prev))
        rm_hole(prev);
    add_hole(prev);
}

void drm_mm_replace_node(drm_mm_node* old_node, drm_mm_node* new_node) {
    if (WARN_ON(!old_node->allocated_) || WARN_ON(new_node->allocated_))
        return;

    new_node->color = old_node->color;
    new_node->start = old_node->start;
    new_node->size = old_node->size;
    new_node->mm = old_node->mm;
    new_node->hole_size_ = old_node->hole_size_;
    new_node->hole_seq_ = old_node->hole_seq_;
    new_node->scanned_block_ = false;

    using namespace mm_detail;
    static_cast<NodeListHook*>(old_node)->swap_nodes(*static_cast<NodeListHook*>(new_node));
    static_cast<NodeAddrHook*>(old_node)->swap_nodes(*static_cast<NodeAddrHook*>(new_node));
    if (drm_mm_hole_follows(old_node)) {
        static_cast<HoleSizeHook*>(old_node)->swap_nodes(*static_cast<HoleSizeHook*>(new_node));
        HoleAddrAlgo::replace_node(old_node, &old_node->mm->holes_addr_, new_node);
        new_node->subtree_max_hole_ = old_node->subtree_max_hole_;
        HoleAddrAlgo::init(old_node);
        static_cast<HoleStackHook*>(old_node)->swap_nodes(*static_cast<HoleStackHook*>(new_node));
    }
    old_node->allocated_ = false;
    old_node->hole_size_ = 0;
    new_node->allocated_ = true;
}

drm_mm_node* __drm_mm_interval_first(const drm_mm* mm, u64 start, u64 last) {
    // Nodes never overlap, so the only candidate below `start` is its immediate predecessor.
    auto it = mm->nodes_.upper_bound(start);
    if (it != mm->nodes_.begin()) {
        auto prev = std::prev(it);
        if (prev->start + prev->size - 1 >= start)
            it = prev;
    }
    if (it == mm->nodes_.end() || it->start > last)
        return const_cast<drm_mm_node*>(&mm->head_node_);
    return const_cast<drm_mm_node*>(&*it);
}

void drm_mm_scan_init_with_range(drm_mm_scan* scan, drm_mm* mm, u64 size, u64 alignment, unsigned long color, u64 start,
                                 u64 end, unsigned mode) {
    WARN_ON(start >= end || !size || size > end - start || mm->scan_active_);
    *scan = drm_mm_scan{};
    scan->mm = mm;
    if (alignment <= 1)
        alignment = 0;
    scan->color = color;
    scan->alignment = alignment;
    scan->remainder_mask = std::has_single_bit(alignment) ? alignment - 1 : 0;
    scan->size = size;
    scan->mode = mode & ~unsigned{DRM_MM_INSERT_ONCE};
    scan->range_start = start;
    scan->range_end = end;
    scan->hit_start = ~u64{0};
    scan->hit_end = 0;
}

bool drm_mm_scan_add_block(drm_mm_scan* scan, drm_mm_node* node) {
    drm_mm* mm = scan->mm;
    BUG_ON(node->mm != mm || !node->allocated_ || node->scanned_block_);
    node->scanned_block_ = true;
    mm->scan_active_++;

    // Take the node out of the address list so the hole before it grows over it; its old
    // neighbour is remembered so drm_mm_scan_remove_block can put it back.
    drm_mm_node* hole = const_cast<drm_mm_node*>(drm_mm_prev_node(node));
    node->scan_prev_ = hole;
    mm->node_list_.erase(mm->node_list_.iterator_to(*node));

    u64 hole_start = __drm_mm_hole_node_start(hole);
    u64 hole_end = __drm_mm_hole_node_end(hole);
    u64 col_start = hole_start, col_end = hole_end;
    if (mm->color_adjust)
        mm->color_adjust(hole, scan->color, &col_start, &col_end);

    u64 adj_start;
    if (!place_in_hole(col_start, col_end, scan->range_start, scan->range_end, scan->size, scan->alignment,
                       scan->remainder_mask, scan->mode, &adj_start))
        return false;

    scan->hit_start = adj_start;
    scan->hit_end = adj_start + scan->size;
    BUG_ON(scan->hit_start < hole_start || scan->hit_end > hole_end);
    return true;
}

bool drm_mm_scan_remove_block(drm_mm_scan* scan, drm_mm_node* node) {
    drm_mm* mm = scan->mm;
    BUG_ON(node->mm != mm || !node->scanned_block_ || !mm->scan_active_);
    node->scanned_block_ = false;
    mm->scan_active_--;

    // Reverse order guarantees the remembered neighbour is back in the list and that the node
    // belongs right after it.
    drm_mm_node* prev = node->scan_prev_;
    BUG_ON(!static_cast<mm_detail::NodeListHook*>(prev)->is_linked());
    mm->node_list_.insert(std::next(mm->node_list_.iterator_to(*prev)), *node);
    node->scan_prev_ = nullptr;

    return node->start + node->size > scan->hit_start && node->start < scan->hit_end;
}

drm_mm_node* drm_mm_scan_color_evict(drm_mm_scan* scan) {
    drm_mm* mm = scan->mm;
    if (WARN_ON(mm->hole_stack_.empty()))
        return nullptr;
    if (!mm->color_adjust)
        return nullptr;

    drm_mm_node* hole = &mm->hole_stack_.front();
    u64 hole_start = __drm_mm_hole_node_start(hole);
    u64 hole_end = hole_start + hole->hole_size_;
    WARN_ON(hole_start > scan->hit_start || hole_end < scan->hit_end);

    mm->color_adjust(hole, scan->color, &hole_start, &hole_end);
    if (hole_start > scan->hit_start)
        return hole;
    if (hole_end < scan->hit_end)
        return const_cast<drm_mm_node*>(drm_mm_next_node(hole));
    return nullptr;
}

}  // namespace drm
