// The B+tree address index of drm_gpuvm (see gpuva_index.h for the why).
#include "drm/drm_gpuva_index.h"

#include <cerrno>
#include <new>

#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;

namespace {

constexpr unsigned F = kGpuvaIndexFanout;
// A split leaves F/2 entries on each side; a node below kMin is merged or refilled on erase.
// kMin is below F/2 so that a node just split or merged is not one erase or insert away from
// the opposite operation.
constexpr unsigned kMin = F / 2 - 2;
static_assert(kMin >= 2 && 2 * kMin < F, "fanout too small");

KmemCache* node_cache() {
    static KmemCache* cache =
        kmem_cache_create("drm_gpuva_index", sizeof(GpuvaIndexNode), alignof(GpuvaIndexNode), SLAB_HWCACHE_ALIGN);
    return cache;
}

GpuvaIndexNode* alloc_node(gfp_t gfp) {
    return kmem_cache_new<GpuvaIndexNode>(node_cache(), gfp);
}

GpuvaIndexNode* child(const GpuvaIndexNode* node, unsigned i) {
    return static_cast<GpuvaIndexNode*>(node->ptrs[i]);
}

// Internal node: the child whose range holds key (separator 0 is not consulted). The unused
// slots hold kGpuvaIndexNoKey, above every key, so they never count; key itself is below it.
unsigned route(const GpuvaIndexNode* node, u64 key) {
    unsigned c = 0;
    for (unsigned i = 1; i < F; i++)
        c += node->keys[i] <= key;
    return c;
}

// Leaf: the number of keys <= key (key below kGpuvaIndexNoKey).
unsigned leaf_upper(const GpuvaIndexNode* node, u64 key) {
    unsigned c = 0;
    for (unsigned i = 0; i < F; i++)
        c += node->keys[i] <= key;
    return c;
}

void insert_at(GpuvaIndexNode* node, unsigned pos, u64 key, void* ptr) {
    for (unsigned i = node->n; i > pos; i--) {
        node->keys[i] = node->keys[i - 1];
        node->ptrs[i] = node->ptrs[i - 1];
    }
    node->keys[pos] = key;
    node->ptrs[pos] = ptr;
    node->n++;
}

void remove_at(GpuvaIndexNode* node, unsigned pos) {
    for (unsigned i = pos + 1; i < node->n; i++) {
        node->keys[i - 1] = node->keys[i];
        node->ptrs[i - 1] = node->ptrs[i];
    }
    node->n--;
    node->keys[node->n] = kGpuvaIndexNoKey;
}

// Moves entries [F/2, F) of a full node to the empty `right`, then puts (key, ptr) at pos
// (a position in the full node before the move) on whichever side it belongs.
void split_insert(GpuvaIndexNode* node, GpuvaIndexNode* right, unsigned pos, u64 key, void* ptr) {
    constexpr unsigned h = F / 2;
    right->leaf = node->leaf;
    right->n = F - h;
    for (unsigned i = h; i < F; i++) {
        right->keys[i - h] = node->keys[i];
        right->ptrs[i - h] = node->ptrs[i];
        node->keys[i] = kGpuvaIndexNoKey;
    }
    node->n = h;
    if (pos <= h)
        insert_at(node, pos, key, ptr);
    else
        insert_at(right, pos - h, key, ptr);
}

}  // namespace

GpuvaIndex::~GpuvaIndex() {
    clear();
}

void GpuvaIndex::free_node(GpuvaIndexNode* node) {
    kmem_cache_delete(node_cache(), node);
}

GpuvaIndexNode* GpuvaIndex::take_node() {
    GpuvaIndexNode* node = reserve_;
    if (node) {
        reserve_ = node->next;
        reserve_count_--;
    } else {
        // The caller did not prepare enough (drm_gpuvm_prealloc_index): a non-sleeping
        // allocation is still allowed where this may run, but say so once.
        if (!warned_) {
            warned_ = true;
            WARN(true, "drm_gpuva index: node reserve empty, allocating with GFP_NOWAIT\n");
        }
        node = alloc_node(GFP_NOWAIT);
        if (!node)
            return nullptr;
    }
    for (u64& k : node->keys)
        k = kGpuvaIndexNoKey;
    node->n = 0;
    node->leaf = 0;
    node->prev = node->next = nullptr;
    return node;
}

void GpuvaIndex::put_node(GpuvaIndexNode* node) {
    if (reserve_count_ >= reserve_cap_) {
        free_node(node);
        return;
    }
    node->next = reserve_;
    reserve_ = node;
    reserve_count_++;
}

int GpuvaIndex::reserve(unsigned nr_inserts, gfp_t gfp) {
    const unsigned need = nr_inserts * nodes_per_insert();
    if (need > reserve_cap_)
        reserve_cap_ = need;
    while (reserve_count_ < need) {
        GpuvaIndexNode* node = alloc_node(gfp);
        if (!node)
            return -ENOMEM;
        node->next = reserve_;
        reserve_ = node;
        reserve_count_++;
    }
    return 0;
}

GpuvaIndexNode* GpuvaIndex::descend(u64 key, GpuvaIndexNode** path, unsigned* idx) const {
    GpuvaIndexNode* node = root_;
    u64 lo = 0;
    u64 hi = kGpuvaIndexNoKey;
    for (unsigned l = 0;; l++) {
        // The pointer lines do not depend on the keys: fetch them alongside.
        __builtin_prefetch(&node->ptrs[0]);
        __builtin_prefetch(&node->ptrs[kGpuvaIndexFanout / 2]);
        if (l + 1 >= height_)
            break;
        const unsigned i = route(node, key);
        if (i > 0)
            lo = node->keys[i];
        if (i + 1 < node->n)
            hi = node->keys[i + 1];
        if (path) {
            path[l] = node;
            idx[l] = i;
        }
        node = child(node, i);
    }
    finger_ = node;
    finger_lo_ = lo;
    finger_hi_ = hi;
    return node;
}

GpuvaIndexNode* GpuvaIndex::leaf_for(u64 key) const {
    if (finger_ && key >= finger_lo_ && key < finger_hi_)
        return finger_;
    return descend(key, nullptr, nullptr);
}

int GpuvaIndex::insert(u64 key, drm_gpuva* va) {
    if (key == kGpuvaIndexNoKey)
        return -EINVAL;
    if (!root_) {
        GpuvaIndexNode* leaf = take_node();
        if (!leaf)
            return -ENOMEM;
        leaf->leaf = 1;
        root_ = leaf;
        height_ = 1;
        nodes_ = 1;
    }
    GpuvaIndexNode* node = leaf_for(key);
    if (node->n == F)
        node = nullptr;  // a split needs the path
    GpuvaIndexNode* path[kMaxHeight];
    unsigned idx[kMaxHeight];
    if (!node)
        node = descend(key, path, idx);
    const unsigned pos = leaf_upper(node, key);
    if (pos > 0 && node->keys[pos - 1] == key)
        return -EEXIST;
    if (node->n < F) {
        insert_at(node, pos, key, va);
        size_++;
        return 0;
    }

    // Every full node from the leaf up splits; if the root splits too, a new root is needed.
    // Take them all before touching the tree, so that -ENOMEM leaves it as it was.
    unsigned need = 1;
    for (int l = static_cast<int>(height_) - 2; l >= 0 && path[l]->n == F; l--)
        need++;
    if (need == height_)
        need++;
    GpuvaIndexNode* spare[kMaxHeight + 1];
    for (unsigned i = 0; i < need; i++) {
        spare[i] = take_node();
        if (!spare[i]) {
            while (i--) {
                spare[i]->next = reserve_;
                reserve_ = spare[i];
                reserve_count_++;
            }
            return -ENOMEM;
        }
    }
    unsigned used = 0;
    finger_ = nullptr;

    GpuvaIndexNode* right = spare[used++];
    split_insert(node, right, pos, key, va);
    right->prev = node;
    right->next = node->next;
    if (node->next)
        node->next->prev = right;
    node->next = right;
    u64 up_key = right->keys[0];
    GpuvaIndexNode* up = right;

    for (int l = static_cast<int>(height_) - 2; l >= 0 && up; l--) {
        GpuvaIndexNode* p = path[l];
        const unsigned at = idx[l] + 1;
        if (p->n < F) {
            insert_at(p, at, up_key, up);
            up = nullptr;
            break;
        }
        GpuvaIndexNode* r = spare[used++];
        split_insert(p, r, at, up_key, up);
        // r's first separator came from p: a lower bound of r's subtree above all of p's.
        up_key = r->keys[0];
        up = r;
    }
    if (up) {
        GpuvaIndexNode* r = spare[used++];
        r->leaf = 0;
        r->n = 2;
        r->keys[0] = 0;
        r->ptrs[0] = root_;
        r->keys[1] = up_key;
        r->ptrs[1] = up;
        root_ = r;
        height_++;
    }
    WARN_ON(used != need);
    nodes_ += used;
    size_++;
    return 0;
}

// path[0..level] is the descent to the node at `level` that just lost an entry; idx[l] is the
// child taken at path[l].
void GpuvaIndex::rebalance(GpuvaIndexNode** path, unsigned* idx, unsigned level) {
    while (level > 0) {
        GpuvaIndexNode* node = path[level];
        if (node->n >= kMin)
            return;
        finger_ = nullptr;
        GpuvaIndexNode* p = path[level - 1];
        const unsigned ci = idx[level - 1];
        const unsigned ri = ci > 0 ? ci : 1;  // the right one of the pair (node and a sibling)
        GpuvaIndexNode* left = child(p, ri - 1);
        GpuvaIndexNode* right = child(p, ri);
        if (left->n + right->n <= F) {
            // Merge right into left. An internal right's first child gets the separator the
            // parent held for right (its own first separator is not maintained).
            if (!right->leaf)
                right->keys[0] = p->keys[ri];
            for (unsigned i = 0; i < right->n; i++) {
                left->keys[left->n + i] = right->keys[i];
                left->ptrs[left->n + i] = right->ptrs[i];
            }
            left->n += right->n;
            if (right->leaf) {
                left->next = right->next;
                if (right->next)
                    right->next->prev = left;
            }
            remove_at(p, ri);
            put_node(right);
            nodes_--;
            level--;
            continue;
        }
        // Refill node with one entry of its sibling (which has more than kMin).
        if (node == right) {
            const unsigned last = left->n - 1;
            insert_at(node, 0, left->keys[last], left->ptrs[last]);
            if (!node->leaf) {
                // The old first child moved to slot 1: its lower bound is the old separator.
                node->keys[1] = p->keys[ri];
            }
            p->keys[ri] = left->keys[last];
            left->keys[last] = kGpuvaIndexNoKey;
            left->n--;
        } else {
            if (node->leaf) {
                node->keys[node->n] = right->keys[0];
            } else {
                node->keys[node->n] = p->keys[ri];
            }
            node->ptrs[node->n] = right->ptrs[0];
            node->n++;
            // right's new first entry: its separator (internal) or its smallest key (leaf).
            p->keys[ri] = right->keys[1];
            remove_at(right, 0);
        }
        return;
    }
    if (!root_->leaf && root_->n == 1) {
        GpuvaIndexNode* old = root_;
        root_ = child(old, 0);
        height_--;
        put_node(old);
        nodes_--;
    }
}

drm_gpuva* GpuvaIndex::erase(u64 key) {
    if (!root_ || key == kGpuvaIndexNoKey)
        return nullptr;
    GpuvaIndexNode* path[kMaxHeight];
    unsigned idx[kMaxHeight];
    GpuvaIndexNode* node = leaf_for(key);
    // Only a leaf that would fall below kMin (and is not the root) needs the path.
    const bool need_path = height_ > 1 && node->n <= kMin;
    if (need_path)
        node = descend(key, path, idx);
    const unsigned pos = leaf_upper(node, key);
    if (pos == 0 || node->keys[pos - 1] != key)
        return nullptr;
    auto* va = static_cast<drm_gpuva*>(node->ptrs[pos - 1]);
    remove_at(node, pos - 1);
    size_--;
    if (need_path) {
        path[height_ - 1] = node;
        rebalance(path, idx, height_ - 1);
    }
    return va;
}

void GpuvaIndex::bounds(u64 addr, drm_gpuva** floor, drm_gpuva** ceil) const {
    *floor = *ceil = nullptr;
    const GpuvaIndexNode* node = root_;
    if (!node)
        return;
    // No key is kGpuvaIndexNoKey: addr - 1 has the same floor and ceil, and keeps the unused
    // slots out of the count.
    if (addr == kGpuvaIndexNoKey)
        addr--;
    node = leaf_for(addr);
    const unsigned pos = leaf_upper(node, addr);
    // Routing sent addr here, so the keys of the leaves before are all < addr and those of
    // the leaves after are all > addr: at an edge the answer is the neighbour's end entry.
    if (pos > 0)
        *floor = static_cast<drm_gpuva*>(node->ptrs[pos - 1]);
    else if (node->prev)
        *floor = static_cast<drm_gpuva*>(node->prev->ptrs[node->prev->n - 1]);
    if (pos < node->n)
        *ceil = static_cast<drm_gpuva*>(node->ptrs[pos]);
    else if (node->next)
        *ceil = static_cast<drm_gpuva*>(node->next->ptrs[0]);
}

drm_gpuva* GpuvaIndex::find(u64 key) const {
    const GpuvaIndexNode* node = root_;
    if (!node || key == kGpuvaIndexNoKey)
        return nullptr;
    node = leaf_for(key);
    const unsigned pos = leaf_upper(node, key);
    return pos > 0 && node->keys[pos - 1] == key ? static_cast<drm_gpuva*>(node->ptrs[pos - 1]) : nullptr;
}

void GpuvaIndex::clear_subtree(GpuvaIndexNode* node, unsigned level) {
    if (level + 1 < height_)
        for (unsigned i = 0; i < node->n; i++)
            clear_subtree(child(node, i), level + 1);
    free_node(node);
}

void GpuvaIndex::clear() {
    finger_ = nullptr;
    if (root_)
        clear_subtree(root_, 0);
    root_ = nullptr;
    height_ = 0;
    size_ = 0;
    nodes_ = 0;
    while (reserve_) {
        GpuvaIndexNode* node = reserve_;
        reserve_ = node->next;
        free_node(node);
    }
    reserve_count_ = 0;
    reserve_cap_ = kReserveCap;
}

GpuvaIndexNode* GpuvaIndex::first_leaf() const {
    GpuvaIndexNode* node = root_;
    if (!node)
        return nullptr;
    for (unsigned l = 0; l + 1 < height_; l++)
        node = child(node, 0);
    return node;
}

namespace {
struct Checker {
    unsigned height;
    u64 entries = 0;
    u64 nodes = 0;
    const GpuvaIndexNode* last_leaf = nullptr;
    const char* err = "";

    // Keys of this subtree must lie in [lo, hi) (has_hi false: no upper bound).
    void walk(const GpuvaIndexNode* node, unsigned level, bool is_root, u64 lo, bool has_lo, u64 hi, bool has_hi) {
        if (*err)
            return;
        nodes++;
        const bool leaf = level + 1 == height;
        if (leaf != static_cast<bool>(node->leaf)) {
            err = "leaf flag does not match the depth";
            return;
        }
        if (node->n > F) {
            err = "node overfull";
            return;
        }
        if (!is_root && node->n < kMin) {
            err = "node underfull";
            return;
        }
        for (unsigned i = node->n; i < F; i++)
            if (node->keys[i] != kGpuvaIndexNoKey) {
                err = "unused key slot not kGpuvaIndexNoKey";
                return;
            }
        if (leaf) {
            for (unsigned i = 0; i < node->n; i++) {
                const u64 k = node->keys[i];
                if ((i > 0 && node->keys[i - 1] >= k) || (has_lo && k < lo) || (has_hi && k >= hi)) {
                    err = "leaf key out of order or outside its separators";
                    return;
                }
            }
            if (node->prev != last_leaf || (last_leaf && last_leaf->next != node)) {
                err = "leaf chain broken";
                return;
            }
            last_leaf = node;
            entries += node->n;
            return;
        }
        if (node->n < 2) {
            err = "internal node with fewer than two children";
            return;
        }
        for (unsigned i = 1; i < node->n; i++) {
            const u64 k = node->keys[i];
            if ((i > 1 && node->keys[i - 1] >= k) || (has_lo && k <= lo) || (has_hi && k >= hi)) {
                err = "separator out of order or outside its parent's range";
                return;
            }
        }
        for (unsigned i = 0; i < node->n; i++) {
            const bool clo = i > 0 || has_lo;
            const u64 l = i > 0 ? node->keys[i] : lo;
            const bool chi = i + 1 < node->n || has_hi;
            const u64 h = i + 1 < node->n ? node->keys[i + 1] : hi;
            walk(child(node, i), level + 1, false, l, clo, h, chi);
        }
    }
};
}  // namespace

const char* GpuvaIndex::check() const {
    if (!root_)
        return height_ || size_ || nodes_ ? "no root but counts are set" : "";
    Checker c{height_};
    c.walk(root_, 0, true, 0, false, 0, false);
    if (*c.err)
        return c.err;
    if (c.last_leaf && c.last_leaf->next)
        return "last leaf has a next";
    if (c.entries != size_)
        return "entry count mismatch";
    if (c.nodes != nodes_)
        return "node count mismatch";
    u64 r = 0;
    for (const GpuvaIndexNode* n = reserve_; n; n = n->next)
        r++;
    if (r != reserve_count_)
        return "reserve count mismatch";
    return "";
}

}  // namespace drm
