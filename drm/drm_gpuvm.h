// Mirrors include/drm/drm_gpuvm.h: the GPU VA space manager.
//
// DOC: Overview. A drm_gpuvm tracks the mappings (drm_gpuva) of one GPU virtual address space:
// an address index (a B+tree keyed by start address, drm/drm_gpuva_index.h; upstream uses an
// rbtree) and an address-ordered list of the mappings (upstream's rb.list). Mappings never
// overlap, so "first mapping overlapping [a, b)" is the one starting at or before a, or the
// next one: one index descent, O(log n); iteration walks the list. A reserved kernel node
// blocks a part of the space. Each (VM, GEM object) pair that has
// mappings is represented by one drm_gpuvm_bo, found in the object's gpuva list; it holds the
// list of that object's mappings in this VM, and sits on the VM's extobj list when the object
// does not share the VM's resv, and on the evict list while evicted.
//
// Split and merge (DOC in gpuvm_sm.cpp): drm_gpuvm_sm_map()/sm_unmap() turn a request into
// map / remap / unmap steps delivered through drm_gpuvm_ops callbacks, or as a list
// (drm_gpuvm_sm_map_ops_create & co).
//
// Fence-signalling path: inserting into the index may split B+tree nodes; they come from a
// per-VM reserve that drm_gpuvm_prealloc_index() fills in the prepare step, next to the
// preallocated drm_gpuva (a short reserve falls back to GFP_NOWAIT with a WARN once). For VMs
// in DRM_GPUVM_IMMEDIATE_MODE drm_gpuva_link/drm_gpuva_unlink_defer and
// drm_gpuvm_bo_put_deferred only take the object's gpuva mutex and never free: a vm_bo whose
// last reference goes is parked on the VM's bo_defer list and freed later by
// drm_gpuvm_bo_deferred_cleanup(), outside the signalling section.
//
// Locking: the tree (index, list and node reserve) is the driver's to protect. A BO's gpuva
// list: its gpuva.lock in immediate mode, its resv otherwise. The extobj/evict lists: internal
// spinlocks, or the VM's resv when DRM_GPUVM_RESV_PROTECTED. Deviations from upstream are
// listed in docs/gpuvm.md.
#pragma once
#include <boost/intrusive/list.hpp>

#include "drm/drm_exec.h"
#include "drm/drm_gem.h"
#include "drm/drm_gpuva_index.h"

namespace drm {

struct drm_gpuvm;
struct drm_gpuvm_bo;
struct drm_gpuva;
struct drm_gpuva_op;

namespace gpuvm_detail {
namespace bi = boost::intrusive;
using SafeLink = bi::link_mode<bi::safe_link>;
using ListHook = bi::list_member_hook<SafeLink>;
struct ExtobjTag;
struct EvictTag;
struct DeferTag;
using ExtobjHook = bi::list_base_hook<bi::tag<ExtobjTag>, SafeLink>;  // vm_bo->list.entry.extobj
using EvictHook = bi::list_base_hook<bi::tag<EvictTag>, SafeLink>;    // vm_bo->list.entry.evict
using DeferHook = bi::list_base_hook<bi::tag<DeferTag>, SafeLink>;    // vm_bo->list.entry.bo_defer

// The kernel's list_del_init on a node of whatever list it is on (the iteration helpers move
// vm_bos between a VM list and a local list, so the container is not always known).
template <class List>
void list_del_init(typename List::reference x) {
    using algo = bi::circular_list_algorithms<typename List::node_traits>;
    auto n = List::value_traits::to_node_ptr(x);
    if (!algo::inited(n)) {
        algo::unlink(n);
        algo::init(n);
    }
}
}  // namespace gpuvm_detail

enum drm_gpuva_flags : u32 {
    DRM_GPUVA_INVALIDATED = 1u << 0,  // the backing GEM was evicted
    DRM_GPUVA_SPARSE = 1u << 1,
    DRM_GPUVA_USERBITS = 1u << 2,
};

// The vm_bo list entry is gem.entry and the VM's address-ordered list entry rb.list, as
// upstream; there is no rb.node (the VM's index is a B+tree holding pointers to the drm_gpuva).
//
// Layout: find_first reads va of the mapping the index returns, and iteration follows
// rb.list, so both come first and share a cache line.
struct drm_gpuva {
    struct {
        u64 addr = 0;
        u64 range = 0;
    } va;
    struct {
        gpuvm_detail::ListHook list;  // on gpuvm->rb.list, in address order
    } rb;
    drm_gpuvm* vm = nullptr;
    drm_gpuvm_bo* vm_bo = nullptr;
    u32 flags = 0;
    struct {
        u64 offset = 0;
        drm_gem_object* obj = nullptr;
        gpuvm_detail::ListHook entry;  // on vm_bo->list.gpuva
    } gem;
};

namespace gpuvm_detail {
// Reaches a list hook inside one of drm_gpuva's nested structs (va->rb.list, va->gem.entry),
// which bi::member_hook cannot name: the hook sits `Offset` bytes into the VA.
template <size_t Offset>
struct VaListHookAt {
    using hook_type = ListHook;
    using hook_ptr = hook_type*;
    using const_hook_ptr = const hook_type*;
    using value_type = drm_gpuva;
    using pointer = drm_gpuva*;
    using const_pointer = const drm_gpuva*;
    static hook_ptr to_hook_ptr(value_type& va) {
        return reinterpret_cast<hook_ptr>(reinterpret_cast<char*>(&va) + Offset);
    }
    static const_hook_ptr to_hook_ptr(const value_type& va) { return to_hook_ptr(const_cast<value_type&>(va)); }
    static pointer to_value_ptr(hook_ptr h) { return reinterpret_cast<pointer>(reinterpret_cast<char*>(h) - Offset); }
    static const_pointer to_value_ptr(const_hook_ptr h) { return to_value_ptr(const_cast<hook_ptr>(h)); }
};
// Every VA of the VM in address order (upstream: rb.list).
using VaAddrList =
    bi::list<drm_gpuva, bi::function_hook<VaListHookAt<offsetof(drm_gpuva, rb.list)>>, bi::constant_time_size<false>>;
// The VAs of one vm_bo (upstream: gem.entry).
using VaList =
    bi::list<drm_gpuva, bi::function_hook<VaListHookAt<offsetof(drm_gpuva, gem.entry)>>, bi::constant_time_size<false>>;
}  // namespace gpuvm_detail

enum drm_gpuvm_flags : u32 {
    // The extobj/evict lists are protected by the VM's resv instead of internal spinlocks.
    DRM_GPUVM_RESV_PROTECTED = 1u << 0,
    // Map/unmap run right away (from the fence-signalling path): the GEM gpuva lists are
    // protected by gem->gpuva.lock, and vm_bo teardown can be deferred.
    DRM_GPUVM_IMMEDIATE_MODE = 1u << 1,
    DRM_GPUVM_USERBITS = 1u << 2,
};

// Bases: list.entry.gem (on obj->gpuva.list), list.entry.extobj / evict / bo_defer.
struct drm_gpuvm_bo : DrmGemGpuvaEntry, gpuvm_detail::ExtobjHook, gpuvm_detail::EvictHook, gpuvm_detail::DeferHook {
    drm_gpuvm* vm = nullptr;
    drm_gem_object* obj = nullptr;
    bool evicted = false;
    kshim::kref kref;
    struct {
        gpuvm_detail::VaList gpuva;  // mappings of obj in vm, under the GEM's gpuva lock
    } list;
};

namespace gpuvm_detail {
using ExtobjList = bi::list<drm_gpuvm_bo, bi::base_hook<ExtobjHook>, bi::constant_time_size<false>>;
using EvictList = bi::list<drm_gpuvm_bo, bi::base_hook<EvictHook>, bi::constant_time_size<false>>;
using DeferList = bi::list<drm_gpuvm_bo, bi::base_hook<DeferHook>, bi::constant_time_size<false>>;
}  // namespace gpuvm_detail

// ---- operations ----

enum drm_gpuva_op_type {
    DRM_GPUVA_OP_MAP,
    DRM_GPUVA_OP_REMAP,
    DRM_GPUVA_OP_UNMAP,
    DRM_GPUVA_OP_PREFETCH,
    DRM_GPUVA_OP_DRIVER,
};

struct drm_gpuva_op_map {
    struct {
        u64 addr;
        u64 range;
    } va;
    struct {
        u64 offset;
        drm_gem_object* obj;
    } gem;
};

struct drm_gpuva_op_unmap {
    drm_gpuva* va;
    // The new mapping overlaps this one with the same BO at a contiguous offset: the driver may
    // keep the page-table entries.
    bool keep;
};

// Unmap `unmap->va` and map what remains of it before (prev) and/or after (next) the request.
struct drm_gpuva_op_remap {
    drm_gpuva_op_map* prev;
    drm_gpuva_op_map* next;
    drm_gpuva_op_unmap* unmap;
};

struct drm_gpuva_op_prefetch {
    drm_gpuva* va;
};

struct drm_gpuva_op {
    gpuvm_detail::ListHook entry;
    drm_gpuva_op_type op = DRM_GPUVA_OP_MAP;
    union {
        drm_gpuva_op_map map;
        drm_gpuva_op_remap remap;
        drm_gpuva_op_unmap unmap;
        drm_gpuva_op_prefetch prefetch;
    };
    drm_gpuva_op() : map{} {}
};

struct drm_gpuva_ops {
    boost::intrusive::list<drm_gpuva_op,
                           boost::intrusive::member_hook<drm_gpuva_op, gpuvm_detail::ListHook, &drm_gpuva_op::entry>,
                           boost::intrusive::constant_time_size<false>>
        list;
};

struct drm_gpuvm_map_req {
    drm_gpuva_op_map map;
};

struct drm_gpuvm_ops {
    // Frees the VM when its last reference goes (required to drop the last reference).
    void (*vm_free)(drm_gpuvm* gpuvm) = nullptr;
    // Allocate/free the ops of the list-building functions (default: kzalloc/kfree).
    drm_gpuva_op* (*op_alloc)() = nullptr;
    void (*op_free)(drm_gpuva_op* op) = nullptr;
    // Allocate/free vm_bos, for drivers that embed drm_gpuvm_bo (default: kzalloc/kfree).
    drm_gpuvm_bo* (*vm_bo_alloc)() = nullptr;
    void (*vm_bo_free)(drm_gpuvm_bo* vm_bo) = nullptr;
    // Makes an evicted BO usable again; called by drm_gpuvm_validate with its resv held.
    int (*vm_bo_validate)(drm_gpuvm_bo* vm_bo, drm_exec* exec) = nullptr;
    // Split/merge steps (drm_gpuvm_sm_map / sm_unmap).
    int (*sm_step_map)(drm_gpuva_op* op, void* priv) = nullptr;
    int (*sm_step_remap)(drm_gpuva_op* op, void* priv) = nullptr;
    int (*sm_step_unmap)(drm_gpuva_op* op, void* priv) = nullptr;
};

struct drm_gpuvm {
    const char* name = nullptr;
    u32 flags = 0;
    u64 mm_start = 0;
    u64 mm_range = 0;
    struct {
        GpuvaIndex index;               // start address -> mapping, the kernel node included
        gpuvm_detail::VaAddrList list;  // the same mappings in address order
    } rb;
    drm_gpuva kernel_alloc_node;
    kshim::kref kref;
    drm_gem_object* r_obj = nullptr;  // carries the resv shared by the VM's private BOs
    struct {
        gpuvm_detail::ExtobjList list;
        gpuvm_detail::ExtobjList* local_list = nullptr;  // set while an iteration runs
        kshim::SpinLock lock{"drm_gpuvm.extobj.lock"};   // protects list, local_list (not RESV_PROTECTED)
    } extobj;
    struct {
        gpuvm_detail::EvictList list;
        gpuvm_detail::EvictList* local_list = nullptr;
        kshim::SpinLock lock{"drm_gpuvm.evict.lock"};  // protects list, local_list (not RESV_PROTECTED)
    } evict;
    // vm_bos whose last reference went in the signalling path, waiting for deferred cleanup.
    gpuvm_detail::DeferList bo_defer;
    kshim::SpinLock bo_defer_lock{"drm_gpuvm.bo_defer.lock"};  // protects bo_defer
    const drm_gpuvm_ops* ops = nullptr;

    drm_gpuvm() = default;
    drm_gpuvm(const drm_gpuvm&) = delete;
    drm_gpuvm& operator=(const drm_gpuvm&) = delete;
};

// ---- VM ----

void drm_gpuvm_init(drm_gpuvm* gpuvm, const char* name, u32 flags, drm_gem_object* r_obj, u64 start_offset, u64 range,
                    u64 reserve_offset, u64 reserve_range, const drm_gpuvm_ops* ops);
inline drm_gpuvm* drm_gpuvm_get(drm_gpuvm* gpuvm) {
    if (gpuvm)
        kshim::kref_get(&gpuvm->kref);
    return gpuvm;
}
void drm_gpuvm_put(drm_gpuvm* gpuvm);
// A private GEM object to serve as r_obj (drm_gpuvm_resv_object_alloc); nullptr on -ENOMEM.
drm_gem_object* drm_gpuvm_resv_object_alloc();

bool drm_gpuvm_range_valid(drm_gpuvm* gpuvm, u64 addr, u64 range);
bool drm_gpuvm_interval_empty(drm_gpuvm* gpuvm, u64 addr, u64 range);
inline bool drm_gpuvm_resv_protected(const drm_gpuvm* gpuvm) {
    return gpuvm->flags & DRM_GPUVM_RESV_PROTECTED;
}
inline bool drm_gpuvm_immediate_mode(const drm_gpuvm* gpuvm) {
    return gpuvm->flags & DRM_GPUVM_IMMEDIATE_MODE;
}
inline kshim::dma_resv* drm_gpuvm_resv(drm_gpuvm* gpuvm) {
    return gpuvm->r_obj->resv;
}
inline drm_gem_object* drm_gpuvm_resv_obj(drm_gpuvm* gpuvm) {
    return gpuvm->r_obj;
}
#define drm_gpuvm_resv_assert_held(gpuvm) dma_resv_assert_held(::drm::drm_gpuvm_resv(gpuvm))
inline bool drm_gpuvm_is_extobj(drm_gpuvm* gpuvm, drm_gem_object* obj) {
    return obj && obj->resv != drm_gpuvm_resv(gpuvm);
}
// The lock that protects obj->gpuva.list for this VM (see the flags).
void drm_gem_gpuva_assert_lock_held(drm_gpuvm* gpuvm, drm_gem_object* obj);

// ---- mappings ----

// Makes sure the VM's index can take nr_inserts inserts (drm_gpuva_insert, drm_gpuva_map,
// drm_gpuva_remap) without allocating: call it in the prepare step, with the VAs' allocation
// (a map needs 3: the mapping and two remainders; an unmap 2). 0 or -ENOMEM. May sleep.
// Same locking as the tree.
int drm_gpuvm_prealloc_index(drm_gpuvm* gpuvm, unsigned nr_inserts);

// Inserts va (va->va set) into the tree: 0, -EINVAL for an invalid range, -EEXIST if it
// overlaps a mapping, -ENOMEM if the index needed a node, the reserve had none (see
// drm_gpuvm_prealloc_index) and GFP_NOWAIT failed. Takes a VM reference.
int drm_gpuva_insert(drm_gpuvm* gpuvm, drm_gpuva* va);
void drm_gpuva_remove(drm_gpuva* va);
void drm_gpuva_link(drm_gpuva* va, drm_gpuvm_bo* vm_bo);
void drm_gpuva_unlink(drm_gpuva* va);
// Unlink for the fence-signalling path (immediate-mode VMs): drops the vm_bo reference with
// drm_gpuvm_bo_put_deferred, so nothing is freed here.
void drm_gpuva_unlink_defer(drm_gpuva* va);
void drm_gpuva_init_from_op(drm_gpuva* va, const drm_gpuva_op_map* op);

drm_gpuva* drm_gpuva_find(drm_gpuvm* gpuvm, u64 addr, u64 range);
drm_gpuva* drm_gpuva_find_first(drm_gpuvm* gpuvm, u64 addr, u64 range);
// The mapping containing start - 1 / containing end (the neighbours of a mapping [start,
// end) when there is no gap), or nullptr.
drm_gpuva* drm_gpuva_find_prev(drm_gpuvm* gpuvm, u64 start);
drm_gpuva* drm_gpuva_find_next(drm_gpuvm* gpuvm, u64 end);
// Address-order neighbours (rb.list; nullptr at either end).
drm_gpuva* drm_gpuva_next(drm_gpuva* va);
drm_gpuva* drm_gpuva_prev(drm_gpuva* va);

inline void drm_gpuva_invalidate(drm_gpuva* va, bool invalidate) {
    if (invalidate)
        va->flags |= DRM_GPUVA_INVALIDATED;
    else
        va->flags &= ~DRM_GPUVA_INVALIDATED;
}
inline bool drm_gpuva_invalidated(const drm_gpuva* va) {
    return va->flags & DRM_GPUVA_INVALIDATED;
}

// drm_gpuvm_for_each_va(_safe) / drm_gpuvm_for_each_va_range(_safe): f(va) in address order.
// The _safe variants allow f to remove its va. The kernel node is visited, as upstream.
template <class F>
void drm_gpuvm_for_each_va_range_safe(drm_gpuvm* gpuvm, u64 start, u64 end, F&& f) {
    if (end <= start)
        return;
    drm_gpuva* va = drm_gpuva_find_first(gpuvm, start, end - start);
    while (va && va->va.addr < end) {
        drm_gpuva* next = drm_gpuva_next(va);
        f(va);
        va = next;
    }
}
template <class F>
void drm_gpuvm_for_each_va_range(drm_gpuvm* gpuvm, u64 start, u64 end, F&& f) {
    drm_gpuvm_for_each_va_range_safe(gpuvm, start, end, std::forward<F>(f));
}
template <class F>
void drm_gpuvm_for_each_va_safe(drm_gpuvm* gpuvm, F&& f) {
    for (auto it = gpuvm->rb.list.begin(); it != gpuvm->rb.list.end();)
        f(&*it++);
}
template <class F>
void drm_gpuvm_for_each_va(drm_gpuvm* gpuvm, F&& f) {
    for (auto& va : gpuvm->rb.list)
        f(&va);
}

// ---- vm_bo ----

// A new, unlinked vm_bo (holds a VM and a GEM reference); nullptr on -ENOMEM. May sleep.
drm_gpuvm_bo* drm_gpuvm_bo_create(drm_gpuvm* gpuvm, drm_gem_object* obj);
// The existing vm_bo of (gpuvm, obj), referenced, or nullptr. GEM gpuva lock held.
drm_gpuvm_bo* drm_gpuvm_bo_find(drm_gpuvm* gpuvm, drm_gem_object* obj);
// find, or create and link; nullptr on -ENOMEM. GEM gpuva lock held (allocates!).
drm_gpuvm_bo* drm_gpuvm_bo_obtain(drm_gpuvm* gpuvm, drm_gem_object* obj);
// find (dropping the preallocated one), or link the preallocated one. GEM gpuva lock held.
drm_gpuvm_bo* drm_gpuvm_bo_obtain_prealloc(drm_gpuvm_bo* vm_bo);
inline drm_gpuvm_bo* drm_gpuvm_bo_get(drm_gpuvm_bo* vm_bo) {
    kshim::kref_get(&vm_bo->kref);
    return vm_bo;
}
// Drops a reference; the last one destroys the vm_bo (GEM gpuva lock taken or asserted as
// the mode requires). True if destroyed. May sleep.
bool drm_gpuvm_bo_put(drm_gpuvm_bo* vm_bo);
// Like put, but the last reference only parks the vm_bo on gpuvm->bo_defer (immediate mode).
bool drm_gpuvm_bo_put_deferred(drm_gpuvm_bo* vm_bo);
// Frees the vm_bos parked by put_deferred / unlink_defer. Not in the signalling path.
void drm_gpuvm_bo_deferred_cleanup(drm_gpuvm* gpuvm);
void drm_gpuvm_bo_extobj_add(drm_gpuvm_bo* vm_bo);
void drm_gpuvm_bo_evict(drm_gpuvm_bo* vm_bo, bool evict);
// drm_gpuvm_bo_evict for every VM the object is mapped in (resv held).
void drm_gpuvm_bo_gem_evict(drm_gem_object* obj, bool evict);
// True if the vm_bo's last reference went and it waits for deferred cleanup.
bool drm_gpuvm_bo_is_zombie(drm_gpuvm_bo* vm_bo);

template <class F>
void drm_gpuvm_bo_for_each_va(drm_gpuvm_bo* vm_bo, F&& f) {
    for (auto it = vm_bo->list.gpuva.begin(); it != vm_bo->list.gpuva.end();)
        f(&*it++);
}
// drm_gem_for_each_gpuvm_bo: f(vm_bo) for each VM connection of obj (its gpuva lock held).
template <class F>
void drm_gem_for_each_gpuvm_bo(drm_gem_object* obj, F&& f) {
    for (auto it = obj->gpuva.list.begin(); it != obj->gpuva.list.end();)
        f(static_cast<drm_gpuvm_bo*>(&*it++));
}

// ---- locking helpers ----

int drm_gpuvm_prepare_vm(drm_gpuvm* gpuvm, drm_exec* exec, unsigned num_fences);
int drm_gpuvm_prepare_objects(drm_gpuvm* gpuvm, drm_exec* exec, unsigned num_fences);
int drm_gpuvm_prepare_range(drm_gpuvm* gpuvm, drm_exec* exec, u64 addr, u64 range, unsigned num_fences);

struct drm_gpuvm_exec {
    drm_exec exec;
    u32 flags = 0;  // DRM_EXEC_*
    drm_gpuvm* vm = nullptr;
    unsigned num_fences = 0;
    struct {
        int (*fn)(drm_gpuvm_exec* vm_exec) = nullptr;  // locks more objects inside the loop
        void* priv = nullptr;
    } extra;
};

int drm_gpuvm_exec_lock(drm_gpuvm_exec* vm_exec);
int drm_gpuvm_exec_lock_array(drm_gpuvm_exec* vm_exec, drm_gem_object** objs, unsigned num_objs);
int drm_gpuvm_exec_lock_range(drm_gpuvm_exec* vm_exec, u64 addr, u64 range);
inline void drm_gpuvm_exec_unlock(drm_gpuvm_exec* vm_exec) {
    drm_exec_fini(&vm_exec->exec);
}
// Calls ops->vm_bo_validate for each evicted BO: 0, its error, or -EOPNOTSUPP without the op.
int drm_gpuvm_validate(drm_gpuvm* gpuvm, drm_exec* exec);
inline int drm_gpuvm_exec_validate(drm_gpuvm_exec* vm_exec) {
    return drm_gpuvm_validate(vm_exec->vm, &vm_exec->exec);
}
// Adds fence to every locked object: private_usage for the VM's resv, extobj_usage else.
void drm_gpuvm_resv_add_fence(drm_gpuvm* gpuvm, drm_exec* exec, kshim::dma_fence* fence,
                              kshim::dma_resv_usage private_usage, kshim::dma_resv_usage extobj_usage);
inline void drm_gpuvm_exec_resv_add_fence(drm_gpuvm_exec* vm_exec, kshim::dma_fence* fence,
                                          kshim::dma_resv_usage private_usage, kshim::dma_resv_usage extobj_usage) {
    drm_gpuvm_resv_add_fence(vm_exec->vm, &vm_exec->exec, fence, private_usage, extobj_usage);
}

// ---- split / merge (gpuvm_sm.cpp) ----

// 0, the first error a step returned, or -EINVAL (bad range, missing step callbacks).
int drm_gpuvm_sm_map(drm_gpuvm* gpuvm, void* priv, const drm_gpuvm_map_req* req);
int drm_gpuvm_sm_unmap(drm_gpuvm* gpuvm, void* priv, u64 req_addr, u64 req_range);
// Lock (drm_exec) every object a sm_map / sm_unmap of the same request would touch.
int drm_gpuvm_sm_map_exec_lock(drm_gpuvm* gpuvm, drm_exec* exec, unsigned num_fences, const drm_gpuvm_map_req* req);
int drm_gpuvm_sm_unmap_exec_lock(drm_gpuvm* gpuvm, drm_exec* exec, u64 req_addr, u64 req_range);

// List-building variants. Upstream returns an ERR_PTR; here the errno is the return value and
// the list comes back through *out (free it with drm_gpuva_ops_free).
int drm_gpuvm_sm_map_ops_create(drm_gpuvm* gpuvm, const drm_gpuvm_map_req* req, drm_gpuva_ops** out);
int drm_gpuvm_sm_unmap_ops_create(drm_gpuvm* gpuvm, u64 req_addr, u64 req_range, drm_gpuva_ops** out);
int drm_gpuvm_prefetch_ops_create(drm_gpuvm* gpuvm, u64 addr, u64 range, drm_gpuva_ops** out);
int drm_gpuvm_bo_unmap_ops_create(drm_gpuvm_bo* vm_bo, drm_gpuva_ops** out);
void drm_gpuva_ops_free(drm_gpuvm* gpuvm, drm_gpuva_ops* ops);

// Apply helpers for step callbacks: update the tree from an op. They allocate nothing when
// drm_gpuvm_prealloc_index() covered their inserts (else see drm_gpuva_insert; a failed
// insert WARNs).
void drm_gpuva_map(drm_gpuvm* gpuvm, drm_gpuva* va, const drm_gpuva_op_map* op);
void drm_gpuva_remap(drm_gpuva* prev, drm_gpuva* next, const drm_gpuva_op_remap* op);
void drm_gpuva_unmap(const drm_gpuva_op_unmap* op);
// The range a remap leaves unmapped (between prev and next).
void drm_gpuva_op_remap_to_unmap_range(const drm_gpuva_op_remap* op, u64* start_addr, u64* range);

}  // namespace drm
