// Mirrors drivers/gpu/drm/drm_gpuvm.c: the VA tree (a B+tree index, gpuva_index.cpp, plus the
// address-ordered list), vm_bo tracking, extobj/evict lists and the drm_exec locking helpers.
// Split/merge and the op lists are in gpuvm_sm.cpp.
#include <iterator>

#include "drm/drm_gpuvm.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;
using gpuvm_detail::DeferList;
using gpuvm_detail::EvictList;
using gpuvm_detail::ExtobjList;
using gpuvm_detail::list_del_init;

namespace {

bool check_add_overflow(u64 a, u64 b) {
    u64 r;
    return __builtin_add_overflow(a, b, &r);
}

bool drm_gpuvm_in_mm_range(drm_gpuvm* gpuvm, u64 addr, u64 range) {
    u64 end = addr + range;
    return addr >= gpuvm->mm_start && end <= gpuvm->mm_start + gpuvm->mm_range;
}

bool drm_gpuvm_in_kernel_node(drm_gpuvm* gpuvm, u64 addr, u64 range) {
    u64 end = addr + range;
    u64 kstart = gpuvm->kernel_alloc_node.va.addr;
    u64 krange = gpuvm->kernel_alloc_node.va.range;
    return krange && addr < kstart + krange && kstart < end;
}

bool overlaps(const drm_gpuva& a, const drm_gpuva& b) {
    return a.va.addr <= b.va.addr + (b.va.range - 1) && b.va.addr <= a.va.addr + (a.va.range - 1);
}

// The index finds the neighbours (the mappings starting at or before / after va's start);
// only they can overlap va. The list entry goes right after the first or before the second.
int __drm_gpuva_insert(drm_gpuvm* gpuvm, drm_gpuva* va) {
    drm_gpuva* floor = nullptr;
    drm_gpuva* ceil = nullptr;
    gpuvm->rb.index.bounds(va->va.addr, &floor, &ceil);
    if ((floor && overlaps(*va, *floor)) || (ceil && overlaps(*va, *ceil)))
        return -EEXIST;
    int ret = gpuvm->rb.index.insert(va->va.addr, va);
    if (ret)
        return ret;
    auto& list = gpuvm->rb.list;
    if (floor)
        list.insert(std::next(list.iterator_to(*floor)), *va);
    else if (ceil)
        list.insert(list.iterator_to(*ceil), *va);
    else
        list.push_back(*va);
    va->vm = gpuvm;
    return 0;
}

void __drm_gpuva_remove(drm_gpuva* va) {
    drm_gpuvm* gpuvm = va->vm;
    WARN_ON(gpuvm->rb.index.erase(va->va.addr) != va);
    gpuvm->rb.list.erase(gpuvm->rb.list.iterator_to(*va));
}

// ---- the extobj / evict lists ----
//
// Without DRM_GPUVM_RESV_PROTECTED, the lists are walked without holding their spinlock across
// the per-element work (which sleeps): each element is moved to a local list while it is
// processed and everything is spliced back at the end, so concurrent add/remove stay safe.

template <class List>
bool on_list(drm_gpuvm_bo* vm_bo) {
    return List::value_traits::to_node_ptr(*vm_bo) &&
           !boost::intrusive::circular_list_algorithms<typename List::node_traits>::inited(
               List::value_traits::to_node_ptr(*vm_bo));
}

// Outside the thread-safety analysis (here and in vm_bo_list_del): `lock` is optional (null when
// the list is protected by the resv), and the analysis cannot follow conditional locking.
template <class List>
void vm_bo_list_add(SpinLock* lock, List* list, drm_gpuvm_bo* vm_bo) NO_THREAD_SAFETY_ANALYSIS {
    if (lock)
        spin_lock(lock);
    if (!on_list<List>(vm_bo))
        list->push_back(*vm_bo);
    if (lock)
        spin_unlock(lock);
}

template <class List>
void vm_bo_list_del(SpinLock* lock, drm_gpuvm_bo* vm_bo) NO_THREAD_SAFETY_ANALYSIS {
    if (lock)
        spin_lock(lock);
    list_del_init<List>(*vm_bo);
    if (lock)
        spin_unlock(lock);
}

template <class Holder, class List>
drm_gpuvm_bo* get_next_vm_bo_from_list(Holder* h, List* local, drm_gpuvm_bo* prev) {
    drm_gpuvm_bo_put(prev);
    drm_gpuvm_bo* vm_bo = nullptr;
    SpinGuard g(h->lock);
    if (!h->local_list)
        h->local_list = local;
    else
        WARN_ON(h->local_list != local);
    while (!h->list.empty()) {
        drm_gpuvm_bo& first = h->list.front();
        h->list.pop_front();
        if (kref_get_unless_zero(&first.kref)) {
            local->push_back(first);
            vm_bo = &first;
            break;
        }
        // A vm_bo on its way out: leave it off the list, its destroy finds it unlinked.
    }
    return vm_bo;
}

template <class Holder>
void restore_vm_bo_list(Holder* h) {
    SpinGuard g(h->lock);
    if (h->local_list) {
        h->list.splice(h->list.begin(), *h->local_list);
        h->local_list = nullptr;
    }
}

int exec_prepare_obj(drm_exec* exec, drm_gem_object* obj, unsigned num_fences) {
    return num_fences ? drm_exec_prepare_obj(exec, obj, num_fences) : drm_exec_lock_obj(exec, obj);
}

void drm_gpuvm_free(kref* kref) {
    drm_gpuvm* gpuvm = container_of(kref, drm_gpuvm, kref);
    if (gpuvm->kernel_alloc_node.va.range)
        __drm_gpuva_remove(&gpuvm->kernel_alloc_node);
    WARN(!gpuvm->rb.list.empty(), "GPUVA tree is not empty, potentially leaking memory.\n");
    gpuvm->rb.index.clear();
    WARN(!gpuvm->extobj.list.empty(), "Extobj list should be empty.\n");
    WARN(!gpuvm->evict.list.empty(), "Evict list should be empty.\n");
    WARN_ON(!gpuvm->bo_defer.empty());
    drm_gem_object_put(gpuvm->r_obj);
    gpuvm->name = nullptr;
    if (WARN_ON(!gpuvm->ops || !gpuvm->ops->vm_free))
        return;
    gpuvm->ops->vm_free(gpuvm);
}

void drm_gpuvm_bo_free(drm_gpuvm_bo* vm_bo) {
    drm_gpuvm* gpuvm = vm_bo->vm;
    drm_gem_object* obj = vm_bo->obj;
    const drm_gpuvm_ops* ops = gpuvm->ops;
    if (ops && ops->vm_bo_free)
        ops->vm_bo_free(vm_bo);
    else
        kdelete(vm_bo);
    drm_gpuvm_put(gpuvm);
    drm_gem_object_put(obj);
}

void drm_gpuvm_bo_destroy(kref* kref) {
    auto* vm_bo = container_of(kref, drm_gpuvm_bo, kref);
    drm_gpuvm* gpuvm = vm_bo->vm;
    drm_gem_object* obj = vm_bo->obj;
    const bool lock = !drm_gpuvm_resv_protected(gpuvm);
    if (!lock)
        drm_gpuvm_resv_assert_held(gpuvm);
    vm_bo_list_del<ExtobjList>(lock ? &gpuvm->extobj.lock : nullptr, vm_bo);
    vm_bo_list_del<EvictList>(lock ? &gpuvm->evict.lock : nullptr, vm_bo);
    if (vm_bo->DrmGemGpuvaEntry::is_linked()) {
        drm_gem_gpuva_assert_lock_held(gpuvm, obj);
        obj->gpuva.list.erase(obj->gpuva.list.iterator_to(*vm_bo));
    }
    drm_gpuvm_bo_free(vm_bo);
}

// The last reference went with the GEM gpuva lock held: leave the object's list now (so
// obtain() cannot find it), free later. Returns with the lock still held.
void drm_gpuvm_bo_into_zombie(drm_gpuvm_bo* vm_bo) {
    drm_gem_object* obj = vm_bo->obj;
    lockdep_assert_held(&obj->gpuva.lock);
    if (vm_bo->DrmGemGpuvaEntry::is_linked())
        obj->gpuva.list.erase(obj->gpuva.list.iterator_to(*vm_bo));
}

void drm_gpuvm_bo_defer_zombie_cleanup(drm_gpuvm_bo* vm_bo) {
    drm_gpuvm* gpuvm = vm_bo->vm;
    SpinGuard g(gpuvm->bo_defer_lock);
    gpuvm->bo_defer.push_back(*vm_bo);
}

}  // namespace

// ---- VM ----

void drm_gpuvm_init(drm_gpuvm* gpuvm, const char* name, u32 flags, drm_gem_object* r_obj, u64 start_offset, u64 range,
                    u64 reserve_offset, u64 reserve_range, const drm_gpuvm_ops* ops) {
    kref_init(&gpuvm->kref);
    gpuvm->name = name ? name : "unknown";
    gpuvm->flags = flags;
    gpuvm->ops = ops;
    gpuvm->r_obj = r_obj;
    drm_gem_object_get(r_obj);
    WARN(check_add_overflow(start_offset, range), "GPUVA address limited to %zu bytes.\n", sizeof(u64));
    gpuvm->mm_start = start_offset;
    gpuvm->mm_range = range;
    gpuvm->kernel_alloc_node.va.addr = 0;
    gpuvm->kernel_alloc_node.va.range = 0;
    // The index's first node (its root, on the first insert). Without it the first insert
    // would allocate; a failure here only moves that allocation there.
    gpuvm->rb.index.reserve(1, GFP_KERNEL);
    if (reserve_range) {
        gpuvm->kernel_alloc_node.va.addr = reserve_offset;
        gpuvm->kernel_alloc_node.va.range = reserve_range;
        if (!WARN(check_add_overflow(reserve_offset, reserve_range), "GPUVA address limited to %zu bytes.\n",
                  sizeof(u64)))
            WARN_ON(__drm_gpuva_insert(gpuvm, &gpuvm->kernel_alloc_node));
        else
            gpuvm->kernel_alloc_node.va.range = 0;
    }
}

void drm_gpuvm_put(drm_gpuvm* gpuvm) {
    if (gpuvm)
        kref_put(&gpuvm->kref, drm_gpuvm_free);
}

drm_gem_object* drm_gpuvm_resv_object_alloc() {
    static const drm_gem_object_funcs funcs = {.free = [](drm_gem_object* obj) {
        drm_gem_object_release(obj);
        kdelete(obj);
    }};
    drm_gem_object* obj = knew<drm_gem_object>(GFP_KERNEL);
    if (!obj)
        return nullptr;
    obj->funcs = &funcs;
    drm_gem_private_object_init(nullptr, obj, 0);
    return obj;
}

bool drm_gpuvm_range_valid(drm_gpuvm* gpuvm, u64 addr, u64 range) {
    return !check_add_overflow(addr, range) && drm_gpuvm_in_mm_range(gpuvm, addr, range) &&
           !drm_gpuvm_in_kernel_node(gpuvm, addr, range);
}

bool drm_gpuvm_interval_empty(drm_gpuvm* gpuvm, u64 addr, u64 range) {
    return !drm_gpuva_find_first(gpuvm, addr, range);
}

void drm_gem_gpuva_assert_lock_held(drm_gpuvm* gpuvm, drm_gem_object* obj) {
    if (drm_gpuvm_immediate_mode(gpuvm))
        lockdep_assert_held(&obj->gpuva.lock);
    else
        dma_resv_assert_held(obj->resv);
}

// ---- mappings ----

int drm_gpuvm_prealloc_index(drm_gpuvm* gpuvm, unsigned nr_inserts) {
    might_alloc(GFP_KERNEL);
    return gpuvm->rb.index.reserve(nr_inserts, GFP_KERNEL);
}

int drm_gpuva_insert(drm_gpuvm* gpuvm, drm_gpuva* va) {
    if (!va->va.range || !drm_gpuvm_range_valid(gpuvm, va->va.addr, va->va.range))
        return -EINVAL;
    int ret = __drm_gpuva_insert(gpuvm, va);
    // The kernel node holds no reference; every other mapping does.
    if (!ret)
        drm_gpuvm_get(gpuvm);
    return ret;
}

void drm_gpuva_remove(drm_gpuva* va) {
    drm_gpuvm* gpuvm = va->vm;
    if (WARN(va == &gpuvm->kernel_alloc_node, "Can't destroy kernel reserved node.\n"))
        return;
    __drm_gpuva_remove(va);
    drm_gpuvm_put(gpuvm);
}

void drm_gpuva_link(drm_gpuva* va, drm_gpuvm_bo* vm_bo) {
    drm_gem_object* obj = va->gem.obj;
    if (!obj)
        return;
    WARN_ON(obj != vm_bo->obj);
    va->vm_bo = drm_gpuvm_bo_get(vm_bo);
    drm_gem_gpuva_assert_lock_held(vm_bo->vm, obj);
    vm_bo->list.gpuva.push_back(*va);
}

void drm_gpuva_unlink(drm_gpuva* va) {
    drm_gem_object* obj = va->gem.obj;
    drm_gpuvm_bo* vm_bo = va->vm_bo;
    if (!obj)
        return;
    drm_gem_gpuva_assert_lock_held(vm_bo->vm, obj);
    vm_bo->list.gpuva.erase(vm_bo->list.gpuva.iterator_to(*va));
    va->vm_bo = nullptr;
    drm_gpuvm_bo_put(vm_bo);
}

void drm_gpuva_unlink_defer(drm_gpuva* va) {
    drm_gem_object* obj = va->gem.obj;
    drm_gpuvm_bo* vm_bo = va->vm_bo;
    if (!obj)
        return;
    WARN_ON(!drm_gpuvm_immediate_mode(vm_bo->vm));
    mutex_lock(&obj->gpuva.lock);
    vm_bo->list.gpuva.erase(vm_bo->list.gpuva.iterator_to(*va));
    // drm_gpuvm_bo_put_deferred with the lock already held.
    bool zombie = kref_put(&vm_bo->kref, [](kref*) {});
    if (zombie)
        drm_gpuvm_bo_into_zombie(vm_bo);
    mutex_unlock(&obj->gpuva.lock);
    if (zombie)
        drm_gpuvm_bo_defer_zombie_cleanup(vm_bo);
    va->vm_bo = nullptr;
}

void drm_gpuva_init_from_op(drm_gpuva* va, const drm_gpuva_op_map* op) {
    va->va.addr = op->va.addr;
    va->va.range = op->va.range;
    va->gem.obj = op->gem.obj;
    va->gem.offset = op->gem.offset;
}

drm_gpuva* drm_gpuva_find_first(drm_gpuvm* gpuvm, u64 addr, u64 range) {
    if (!range)
        return nullptr;
    const u64 last = addr + (range - 1);
    drm_gpuva* floor;
    drm_gpuva* ceil;
    gpuvm->rb.index.bounds(addr, &floor, &ceil);
    // Mappings do not overlap: only the one starting at or before addr can cover addr, and
    // otherwise the first one starting after it is the first that can start inside the range.
    if (floor && floor->va.addr + (floor->va.range - 1) >= addr)
        return floor;
    if (ceil && ceil->va.addr <= last)
        return ceil;
    return nullptr;
}

drm_gpuva* drm_gpuva_find(drm_gpuvm* gpuvm, u64 addr, u64 range) {
    drm_gpuva* va = drm_gpuva_find_first(gpuvm, addr, range);
    return va && va->va.addr == addr && va->va.range == range ? va : nullptr;
}

drm_gpuva* drm_gpuva_find_prev(drm_gpuvm* gpuvm, u64 start) {
    if (!drm_gpuvm_range_valid(gpuvm, start - 1, 1))
        return nullptr;
    return drm_gpuva_find_first(gpuvm, start - 1, 1);
}

drm_gpuva* drm_gpuva_find_next(drm_gpuvm* gpuvm, u64 end) {
    if (!drm_gpuvm_range_valid(gpuvm, end, 1))
        return nullptr;
    return drm_gpuva_find_first(gpuvm, end, 1);
}

drm_gpuva* drm_gpuva_next(drm_gpuva* va) {
    auto& list = va->vm->rb.list;
    auto it = std::next(list.iterator_to(*va));
    return it == list.end() ? nullptr : &*it;
}

drm_gpuva* drm_gpuva_prev(drm_gpuva* va) {
    auto& list = va->vm->rb.list;
    auto it = list.iterator_to(*va);
    return it == list.begin() ? nullptr : &*std::prev(it);
}

// ---- vm_bo ----

drm_gpuvm_bo* drm_gpuvm_bo_create(drm_gpuvm* gpuvm, drm_gem_object* obj) {
    const drm_gpuvm_ops* ops = gpuvm->ops;
    drm_gpuvm_bo* vm_bo = ops && ops->vm_bo_alloc ? ops->vm_bo_alloc() : knew<drm_gpuvm_bo>(GFP_KERNEL);
    if (!vm_bo)
        return nullptr;
    vm_bo->vm = drm_gpuvm_get(gpuvm);
    vm_bo->obj = obj;
    drm_gem_object_get(obj);
    kref_init(&vm_bo->kref);
    vm_bo->evicted = false;
    return vm_bo;
}

drm_gpuvm_bo* drm_gpuvm_bo_find(drm_gpuvm* gpuvm, drm_gem_object* obj) {
    drm_gem_gpuva_assert_lock_held(gpuvm, obj);
    drm_gpuvm_bo* found = nullptr;
    for (auto& e : obj->gpuva.list) {
        auto* vm_bo = static_cast<drm_gpuvm_bo*>(&e);
        if (vm_bo->vm == gpuvm) {
            found = vm_bo;
            break;
        }
    }
    return found ? drm_gpuvm_bo_get(found) : nullptr;
}

drm_gpuvm_bo* drm_gpuvm_bo_obtain(drm_gpuvm* gpuvm, drm_gem_object* obj) {
    drm_gpuvm_bo* vm_bo = drm_gpuvm_bo_find(gpuvm, obj);
    if (vm_bo)
        return vm_bo;
    vm_bo = drm_gpuvm_bo_create(gpuvm, obj);
    if (!vm_bo)
        return nullptr;
    obj->gpuva.list.push_back(*vm_bo);
    return vm_bo;
}

drm_gpuvm_bo* drm_gpuvm_bo_obtain_prealloc(drm_gpuvm_bo* prealloc) {
    drm_gpuvm* gpuvm = prealloc->vm;
    drm_gem_object* obj = prealloc->obj;
    drm_gpuvm_bo* vm_bo = drm_gpuvm_bo_find(gpuvm, obj);
    if (vm_bo) {
        drm_gpuvm_bo_put(prealloc);
        return vm_bo;
    }
    obj->gpuva.list.push_back(*prealloc);
    return prealloc;
}

bool drm_gpuvm_bo_put(drm_gpuvm_bo* vm_bo) {
    might_sleep();
    return vm_bo && kref_put(&vm_bo->kref, drm_gpuvm_bo_destroy);
}

bool drm_gpuvm_bo_put_deferred(drm_gpuvm_bo* vm_bo) {
    if (!vm_bo)
        return false;
    WARN_ON(!drm_gpuvm_immediate_mode(vm_bo->vm));
    Mutex* lock = &vm_bo->obj->gpuva.lock;
    return kref_put_mutex(
        &vm_bo->kref,
        // Outside the analysis: it drops the lock kref_put_mutex took for it.
        [&](kref*) NO_THREAD_SAFETY_ANALYSIS {
            drm_gpuvm_bo_into_zombie(vm_bo);
            mutex_unlock(lock);
            drm_gpuvm_bo_defer_zombie_cleanup(vm_bo);
        },
        lock);
}

bool drm_gpuvm_bo_is_zombie(drm_gpuvm_bo* vm_bo) {
    return kref_read(&vm_bo->kref) == 0;
}

void drm_gpuvm_bo_deferred_cleanup(drm_gpuvm* gpuvm) {
    DeferList local;
    {
        SpinGuard g(gpuvm->bo_defer_lock);
        local.splice(local.end(), gpuvm->bo_defer);
    }
    if (local.empty())
        return;
    const bool lock = !drm_gpuvm_resv_protected(gpuvm);
    // The zombies hold VM references: gpuvm stays valid until the last one is freed.
    if (!lock)
        dma_resv_lock(drm_gpuvm_resv(gpuvm), nullptr);
    for (auto& vm_bo : local) {
        vm_bo_list_del<ExtobjList>(lock ? &gpuvm->extobj.lock : nullptr, &vm_bo);
        vm_bo_list_del<EvictList>(lock ? &gpuvm->evict.lock : nullptr, &vm_bo);
    }
    if (!lock)
        dma_resv_unlock(drm_gpuvm_resv(gpuvm));
    while (!local.empty()) {
        drm_gpuvm_bo& vm_bo = local.front();
        local.pop_front();
        drm_gpuvm_bo_free(&vm_bo);
    }
}

void drm_gpuvm_bo_extobj_add(drm_gpuvm_bo* vm_bo) {
    drm_gpuvm* gpuvm = vm_bo->vm;
    const bool lock = !drm_gpuvm_resv_protected(gpuvm);
    if (!lock)
        drm_gpuvm_resv_assert_held(gpuvm);
    if (drm_gpuvm_is_extobj(gpuvm, vm_bo->obj))
        vm_bo_list_add(lock ? &gpuvm->extobj.lock : nullptr, &gpuvm->extobj.list, vm_bo);
}

void drm_gpuvm_bo_evict(drm_gpuvm_bo* vm_bo, bool evict) {
    drm_gpuvm* gpuvm = vm_bo->vm;
    drm_gem_object* obj = vm_bo->obj;
    const bool lock = !drm_gpuvm_resv_protected(gpuvm);
    dma_resv_assert_held(obj->resv);
    vm_bo->evicted = evict;
    // With the lists under the VM's resv, an external object (another resv) cannot touch them
    // here: drm_gpuvm_prepare_objects() picks evicted extobjs up once the VM resv is held.
    if (drm_gpuvm_is_extobj(gpuvm, obj) && !lock)
        return;
    if (evict)
        vm_bo_list_add(lock ? &gpuvm->evict.lock : nullptr, &gpuvm->evict.list, vm_bo);
    else
        vm_bo_list_del<EvictList>(lock ? &gpuvm->evict.lock : nullptr, vm_bo);
}

void drm_gpuvm_bo_gem_evict(drm_gem_object* obj, bool evict) {
    dma_resv_assert_held(obj->resv);
    drm_gem_for_each_gpuvm_bo(obj, [&](drm_gpuvm_bo* vm_bo) {
        drm_gpuvm_bo_for_each_va(vm_bo, [&](drm_gpuva* va) { drm_gpuva_invalidate(va, evict); });
        drm_gpuvm_bo_evict(vm_bo, evict);
    });
}

// ---- locking helpers ----

int drm_gpuvm_prepare_vm(drm_gpuvm* gpuvm, drm_exec* exec, unsigned num_fences) {
    return exec_prepare_obj(exec, gpuvm->r_obj, num_fences);
}

int drm_gpuvm_prepare_objects(drm_gpuvm* gpuvm, drm_exec* exec, unsigned num_fences) {
    int ret = 0;
    if (drm_gpuvm_resv_protected(gpuvm)) {
        drm_gpuvm_resv_assert_held(gpuvm);
        for (auto& vm_bo : gpuvm->extobj.list) {
            ret = exec_prepare_obj(exec, vm_bo.obj, num_fences);
            if (ret)
                break;
            if (vm_bo.evicted)
                vm_bo_list_add(nullptr, &gpuvm->evict.list, &vm_bo);
        }
        return ret;
    }
    ExtobjList extobjs;
    drm_gpuvm_bo* vm_bo = nullptr;
    while ((vm_bo = get_next_vm_bo_from_list(&gpuvm->extobj, &extobjs, vm_bo))) {
        ret = exec_prepare_obj(exec, vm_bo->obj, num_fences);
        if (ret)
            break;
    }
    drm_gpuvm_bo_put(vm_bo);  // the reference of the element we broke out on
    restore_vm_bo_list(&gpuvm->extobj);
    return ret;
}

int drm_gpuvm_prepare_range(drm_gpuvm* gpuvm, drm_exec* exec, u64 addr, u64 range, unsigned num_fences) {
    int ret = 0;
    u64 end = addr + range;
    for (drm_gpuva* va = drm_gpuva_find_first(gpuvm, addr, range); va && va->va.addr < end; va = drm_gpuva_next(va)) {
        if (!va->gem.obj)
            continue;
        ret = exec_prepare_obj(exec, va->gem.obj, num_fences);
        if (ret)
            return ret;
    }
    return 0;
}

int drm_gpuvm_exec_lock(drm_gpuvm_exec* vm_exec) {
    drm_gpuvm* gpuvm = vm_exec->vm;
    drm_exec* exec = &vm_exec->exec;
    unsigned num_fences = vm_exec->num_fences;
    int ret = 0;
    drm_exec_init(exec, vm_exec->flags, 0);
    drm_exec_until_all_locked(exec) {
        ret = drm_gpuvm_prepare_vm(gpuvm, exec, num_fences);
        drm_exec_retry_on_contention(exec);
        if (ret)
            goto err;
        ret = drm_gpuvm_prepare_objects(gpuvm, exec, num_fences);
        drm_exec_retry_on_contention(exec);
        if (ret)
            goto err;
        if (vm_exec->extra.fn) {
            ret = vm_exec->extra.fn(vm_exec);
            drm_exec_retry_on_contention(exec);
            if (ret)
                goto err;
        }
    }
    return 0;
err:
    drm_exec_fini(exec);
    return ret;
}

namespace {
struct LockArrayArgs {
    drm_gem_object** objs;
    unsigned num_objs;
};
int fn_lock_array(drm_gpuvm_exec* vm_exec) {
    auto* args = static_cast<LockArrayArgs*>(vm_exec->extra.priv);
    return drm_exec_prepare_array(&vm_exec->exec, args->objs, args->num_objs, vm_exec->num_fences);
}
}  // namespace

int drm_gpuvm_exec_lock_array(drm_gpuvm_exec* vm_exec, drm_gem_object** objs, unsigned num_objs) {
    LockArrayArgs args{objs, num_objs};
    vm_exec->extra.fn = fn_lock_array;
    vm_exec->extra.priv = &args;
    int ret = drm_gpuvm_exec_lock(vm_exec);
    vm_exec->extra.fn = nullptr;
    vm_exec->extra.priv = nullptr;
    return ret;
}

int drm_gpuvm_exec_lock_range(drm_gpuvm_exec* vm_exec, u64 addr, u64 range) {
    drm_exec* exec = &vm_exec->exec;
    int ret = 0;
    drm_exec_init(exec, vm_exec->flags, 0);
    drm_exec_until_all_locked(exec) {
        ret = drm_gpuvm_prepare_range(vm_exec->vm, exec, addr, range, vm_exec->num_fences);
        drm_exec_retry_on_contention(exec);
        if (ret) {
            drm_exec_fini(exec);
            return ret;
        }
    }
    return 0;
}

int drm_gpuvm_validate(drm_gpuvm* gpuvm, drm_exec* exec) {
    const drm_gpuvm_ops* ops = gpuvm->ops;
    if (!ops || !ops->vm_bo_validate)
        return -EOPNOTSUPP;
    int ret = 0;
    if (drm_gpuvm_resv_protected(gpuvm)) {
        drm_gpuvm_resv_assert_held(gpuvm);
        for (auto it = gpuvm->evict.list.begin(); it != gpuvm->evict.list.end();) {
            drm_gpuvm_bo& vm_bo = *it++;
            ret = ops->vm_bo_validate(&vm_bo, exec);
            if (ret)
                break;
            dma_resv_assert_held(vm_bo.obj->resv);
            if (!vm_bo.evicted)
                vm_bo_list_del<EvictList>(nullptr, &vm_bo);
        }
        return ret;
    }
    EvictList evict;
    drm_gpuvm_bo* vm_bo = nullptr;
    while ((vm_bo = get_next_vm_bo_from_list(&gpuvm->evict, &evict, vm_bo))) {
        ret = ops->vm_bo_validate(vm_bo, exec);
        if (ret)
            break;
    }
    drm_gpuvm_bo_put(vm_bo);
    restore_vm_bo_list(&gpuvm->evict);
    return ret;
}

void drm_gpuvm_resv_add_fence(drm_gpuvm* gpuvm, drm_exec* exec, dma_fence* fence, dma_resv_usage private_usage,
                              dma_resv_usage extobj_usage) {
    drm_exec_for_each_locked_object(exec, [&](unsigned, drm_gem_object* obj) {
        dma_resv_assert_held(obj->resv);
        dma_resv_add_fence(obj->resv, fence, drm_gpuvm_is_extobj(gpuvm, obj) ? extobj_usage : private_usage);
    });
}

}  // namespace drm
