// The address index of drm_gpuvm: a B+tree from a mapping's start address to its drm_gpuva.
//
// Why not the rbtree upstream uses: a lookup in a VM with 100,000 mappings walks ~17 rbtree
// nodes, each a dependent cache miss once the tree no longer fits in the cache (see
// docs/gpuvm.md, "Benchmark figures"). A node here holds up to kGpuvaIndexFanout keys, so the same
// VM is 5-6 levels deep and the top levels stay cached.
//
// Mappings never overlap, so the index only needs ordered keys: bounds() gives the mapping
// with the greatest start <= addr and the one with the smallest start > addr, which is all
// drm_gpuva_find_first() needs. Ordered iteration is not the index's job: drm_gpuva keeps an
// address-ordered list (upstream's rb.list) next to it.
//
// Node memory. Upstream's tree needs no allocation (the node is embedded in the preallocated
// drm_gpuva), so insert may run in the fence-signalling path. A B+tree splits nodes on insert;
// to keep that path allocation-free the index keeps a reserve of free nodes, filled by
// reserve() from the prepare step (GFP_KERNEL, may sleep). An insert takes the nodes it needs
// from the reserve; only if the reserve runs short does it allocate with GFP_NOWAIT (allowed in
// a signalling section, as the kernel's maple tree does) and WARN once per index, since the
// caller forgot to prepare. An insert that cannot get its nodes changes nothing and returns
// -ENOMEM. Erase gives emptied nodes back to the reserve, up to a cap; beyond it they are
// freed (kmem_cache_free does not sleep).
//
// Locking: none; the index is protected by whatever protects the VM's tree (the driver's).
#pragma once
#include "kernel_shim/gfp.h"
#include "kernel_shim/types.h"

namespace drm {

struct drm_gpuva;

inline constexpr unsigned kGpuvaIndexFanout = 16;

// One node. Leaves: keys[i] -> vals (drm_gpuva*), leaves chained through prev/next in key order.
// Internal nodes: child[i] holds the keys k with sep[i] <= k < sep[i + 1]; sep[0] is not used
// for routing (everything below the first separator goes to child 0). A separator is a lower
// bound of its subtree, not necessarily its smallest key: erase does not fix separators up.
//
// Layout, for the cold descent of a lookup: the unused key slots hold kGpuvaIndexNoKey, so a
// search counts the keys <= addr over all slots without reading n first (no branch on the
// data, the key loads all independent); keys come first (two cache lines), then the
// pointers (two lines, prefetched together with the keys), then what a lookup rarely reads.
inline constexpr kshim::u64 kGpuvaIndexNoKey = ~kshim::u64{0};

struct alignas(64) GpuvaIndexNode {
    kshim::u64 keys[kGpuvaIndexFanout];
    void* ptrs[kGpuvaIndexFanout];   // GpuvaIndexNode* (internal) or drm_gpuva* (leaf)
    kshim::u32 n = 0;                // entries used
    kshim::u32 leaf = 0;             // 1 for a leaf
    GpuvaIndexNode* prev = nullptr;  // leaves: neighbours; free nodes: the reserve's link (next)
    GpuvaIndexNode* next = nullptr;
};

class GpuvaIndex {
public:
    // The most levels an index can have (fanout 16, half-full nodes, 2^64 keys: far below).
    static constexpr unsigned kMaxHeight = 24;
    // Nodes the reserve keeps when erase gives nodes back, unless reserve() asked for more.
    static constexpr unsigned kReserveCap = 64;

    GpuvaIndex() = default;
    ~GpuvaIndex();
    GpuvaIndex(const GpuvaIndex&) = delete;
    GpuvaIndex& operator=(const GpuvaIndex&) = delete;

    // Makes sure the reserve covers nr_inserts inserts (each may split every level and add a
    // root). 0 or -ENOMEM. Allocates with gfp: call it from the prepare step.
    int reserve(unsigned nr_inserts, kshim::gfp_t gfp = kshim::GFP_KERNEL);
    // Nodes an insert may need at the current height.
    unsigned nodes_per_insert() const { return height_ + 2; }

    // 0, -EEXIST if key is present, -EINVAL for kGpuvaIndexNoKey (no mapping can start
    // there: its range would overflow), -ENOMEM if a node was needed and none could be had (the
    // index is then unchanged).
    int insert(kshim::u64 key, drm_gpuva* va);
    // Removes key; returns its value, or nullptr if absent.
    drm_gpuva* erase(kshim::u64 key);
    // *floor: the value with the greatest key <= addr; *ceil: the smallest key > addr; nullptr
    // when there is none. One descent (plus a neighbour leaf at a leaf's edge).
    void bounds(kshim::u64 addr, drm_gpuva** floor, drm_gpuva** ceil) const;
    drm_gpuva* find(kshim::u64 key) const;
    // Frees every node, the reserve included (the values are not touched).
    void clear();

    bool empty() const { return size_ == 0; }
    kshim::u64 size() const { return size_; }
    unsigned height() const { return height_; }  // 0: no root; 1: a single leaf
    unsigned reserved() const { return reserve_count_; }
    kshim::u64 nodes() const { return nodes_; }  // nodes in the tree (not the reserve)
    bool warned() const { return warned_; }

    // For the tests: walks the whole tree and checks the structural invariants (key order,
    // separator bounds, fill, equal leaf depth, the leaf chain, counts). Empty string if sound.
    const char* check() const;
    // For the tests: the entries in key order through the leaf chain.
    template <class F>
    void for_each(F&& f) const {
        for (GpuvaIndexNode* l = first_leaf(); l; l = l->next)
            for (kshim::u32 i = 0; i < l->n; i++)
                f(l->keys[i], static_cast<drm_gpuva*>(l->ptrs[i]));
    }

private:
    GpuvaIndexNode* first_leaf() const;
    // The leaf for key: the cached one if key is in its range, else a descent from the root
    // (recording the path in path/idx when given) that caches the leaf it reaches.
    GpuvaIndexNode* leaf_for(kshim::u64 key) const;
    GpuvaIndexNode* descend(kshim::u64 key, GpuvaIndexNode** path, unsigned* idx) const;
    GpuvaIndexNode* take_node();          // from the reserve, or GFP_NOWAIT; nullptr if none
    void put_node(GpuvaIndexNode* node);  // to the reserve, or freed above the cap
    void free_node(GpuvaIndexNode* node);
    void clear_subtree(GpuvaIndexNode* node, unsigned level);
    void rebalance(GpuvaIndexNode** path, unsigned* idx, unsigned level);

    GpuvaIndexNode* root_ = nullptr;
    unsigned height_ = 0;
    kshim::u64 size_ = 0;
    kshim::u64 nodes_ = 0;
    GpuvaIndexNode* reserve_ = nullptr;  // free nodes, linked through next
    unsigned reserve_count_ = 0;
    unsigned reserve_cap_ = kReserveCap;
    bool warned_ = false;
    // The leaf the last descent reached and the key range [finger_lo_, finger_hi_) routed to
    // it. A bind looks the same address up several times (find_first, the overlap check and
    // insert of a map; find_first and erase of an unmap): only the first walks from the root.
    // Every change of the tree's shape (split, merge, refill, root change) drops it; inserts
    // and erases inside a leaf change no separator and keep it.
    mutable GpuvaIndexNode* finger_ = nullptr;
    mutable kshim::u64 finger_lo_ = 0;
    mutable kshim::u64 finger_hi_ = 0;
};

}  // namespace drm
