// Mirrors drivers/gpu/drm/drm_gpuvm.c (split and merge, op lists, apply helpers).
//
// DOC: Split and merge. A map request [req_addr, req_end) meets the existing mappings that
// overlap it in address order. For each one (a = its start, e = its end):
//  - a == req_addr: fully covered (e <= req_end) -> UNMAP; sticks out at the end -> REMAP
//    keeping [req_end, e) as `next` (offset advanced by the request's range), then stop.
//  - a < req_addr: keeps [a, req_addr) as `prev`; if e > req_end also [req_end, e) as `next`
//    (one REMAP splitting it in three); else REMAP with prev only.
//  - a > req_addr: covered -> UNMAP; sticks out at the end -> REMAP with `next`, then stop.
// Then one MAP of the request. An UNMAP (or a REMAP's unmap part) carries keep = true when
// the old mapping uses the same BO at the offset the request implies for that address: the
// driver may leave those PTEs alone. There are at most two REMAPs (the ends) and one MAP.
// An unmap request yields UNMAP for covered mappings and REMAP (prev and/or next) for the
// ones crossing an end, never a MAP. The list-building variants record the same steps.
#include "drm/drm_gpuvm.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;

namespace {

// Upstream checks only overflow, bounds and the kernel node; we also reject empty and
// non-page-aligned requests here (drivers did it themselves upstream).
bool drm_gpuvm_req_valid(drm_gpuvm* gpuvm, u64 addr, u64 range) {
    if (!range || (addr & ~PAGE_MASK) || (range & ~PAGE_MASK))
        return false;
    return drm_gpuvm_range_valid(gpuvm, addr, range);
}

int op_map_cb(const drm_gpuvm_ops* fn, void* priv, const drm_gpuvm_map_req* req) {
    drm_gpuva_op op;
    op.op = DRM_GPUVA_OP_MAP;
    op.map = req->map;
    return fn->sm_step_map(&op, priv);
}

int op_remap_cb(const drm_gpuvm_ops* fn, void* priv, drm_gpuva_op_map* prev, drm_gpuva_op_map* next,
                drm_gpuva_op_unmap* unmap) {
    drm_gpuva_op op;
    op.op = DRM_GPUVA_OP_REMAP;
    op.remap = {prev, next, unmap};
    return fn->sm_step_remap(&op, priv);
}

int op_unmap_cb(const drm_gpuvm_ops* fn, void* priv, drm_gpuva* va, bool merge) {
    drm_gpuva_op op;
    op.op = DRM_GPUVA_OP_UNMAP;
    op.unmap = {va, merge};
    return fn->sm_step_unmap(&op, priv);
}

int __drm_gpuvm_sm_map(drm_gpuvm* gpuvm, const drm_gpuvm_ops* ops, void* priv, const drm_gpuvm_map_req* req) {
    drm_gem_object* req_obj = req->map.gem.obj;
    const u64 req_offset = req->map.gem.offset;
    const u64 req_range = req->map.va.range;
    const u64 req_addr = req->map.va.addr;
    const u64 req_end = req_addr + req_range;

    if (!drm_gpuvm_req_valid(gpuvm, req_addr, req_range) || (req_offset & ~PAGE_MASK))
        return -EINVAL;

    drm_gpuva* next_va = nullptr;
    for (drm_gpuva* va = drm_gpuva_find_first(gpuvm, req_addr, req_range); va && va->va.addr < req_end; va = next_va) {
        // The step may remove va (and insert the remainders after it): fetch the next first.
        next_va = drm_gpuva_next(va);
        drm_gem_object* obj = va->gem.obj;
        const u64 offset = va->gem.offset;
        const u64 addr = va->va.addr;
        const u64 range = va->va.range;
        const u64 end = addr + range;
        bool merge = obj != nullptr;
        int ret;

        if (addr == req_addr) {
            merge &= obj == req_obj && offset == req_offset;
            if (end <= req_end) {
                ret = op_unmap_cb(ops, priv, va, merge);
                if (ret)
                    return ret;
                if (end == req_end)
                    break;
                continue;
            }
            drm_gpuva_op_map n = {{req_end, range - req_range}, {offset + req_range, obj}};
            drm_gpuva_op_unmap u = {va, merge};
            ret = op_remap_cb(ops, priv, nullptr, &n, &u);
            if (ret)
                return ret;
            break;
        }
        if (addr < req_addr) {
            const u64 ls_range = req_addr - addr;
            drm_gpuva_op_map p = {{addr, ls_range}, {offset, obj}};
            merge &= obj == req_obj && offset + ls_range == req_offset;
            drm_gpuva_op_unmap u = {va, merge};
            if (end <= req_end) {
                ret = op_remap_cb(ops, priv, &p, nullptr, &u);
                if (ret)
                    return ret;
                if (end == req_end)
                    break;
                continue;
            }
            drm_gpuva_op_map n = {{req_end, end - req_end}, {offset + ls_range + req_range, obj}};
            ret = op_remap_cb(ops, priv, &p, &n, &u);
            if (ret)
                return ret;
            break;
        }
        // addr > req_addr
        merge &= obj == req_obj && offset == req_offset + (addr - req_addr);
        if (end <= req_end) {
            ret = op_unmap_cb(ops, priv, va, merge);
            if (ret)
                return ret;
            if (end == req_end)
                break;
            continue;
        }
        drm_gpuva_op_map n = {{req_end, end - req_end}, {offset + req_end - addr, obj}};
        drm_gpuva_op_unmap u = {va, merge};
        ret = op_remap_cb(ops, priv, nullptr, &n, &u);
        if (ret)
            return ret;
        break;
    }
    return op_map_cb(ops, priv, req);
}

int __drm_gpuvm_sm_unmap(drm_gpuvm* gpuvm, const drm_gpuvm_ops* ops, void* priv, u64 req_addr, u64 req_range) {
    const u64 req_end = req_addr + req_range;
    if (!drm_gpuvm_req_valid(gpuvm, req_addr, req_range))
        return -EINVAL;

    drm_gpuva* next_va = nullptr;
    for (drm_gpuva* va = drm_gpuva_find_first(gpuvm, req_addr, req_range); va && va->va.addr < req_end; va = next_va) {
        next_va = drm_gpuva_next(va);
        drm_gem_object* obj = va->gem.obj;
        const u64 offset = va->gem.offset;
        const u64 addr = va->va.addr;
        const u64 end = addr + va->va.range;
        drm_gpuva_op_map prev = {}, next = {};
        bool prev_split = false, next_split = false;
        if (addr < req_addr) {
            prev = {{addr, req_addr - addr}, {offset, obj}};
            prev_split = true;
        }
        if (end > req_end) {
            next = {{req_end, end - req_end}, {offset + (req_end - addr), obj}};
            next_split = true;
        }
        int ret;
        if (prev_split || next_split) {
            drm_gpuva_op_unmap unmap = {va, false};
            ret = op_remap_cb(ops, priv, prev_split ? &prev : nullptr, next_split ? &next : nullptr, &unmap);
        } else {
            ret = op_unmap_cb(ops, priv, va, false);
        }
        if (ret)
            return ret;
    }
    return 0;
}

int drm_gpuva_sm_step_lock(drm_gpuva_op* op, void* priv) {
    auto* exec = static_cast<drm_exec*>(priv);
    switch (op->op) {
    case DRM_GPUVA_OP_REMAP:
        return op->remap.unmap->va->gem.obj ? drm_exec_lock_obj(exec, op->remap.unmap->va->gem.obj) : 0;
    case DRM_GPUVA_OP_UNMAP: return op->unmap.va->gem.obj ? drm_exec_lock_obj(exec, op->unmap.va->gem.obj) : 0;
    default: return 0;
    }
}

const drm_gpuvm_ops lock_ops = {
    .sm_step_map = drm_gpuva_sm_step_lock,
    .sm_step_remap = drm_gpuva_sm_step_lock,
    .sm_step_unmap = drm_gpuva_sm_step_lock,
};

drm_gpuva_op* gpuva_op_alloc(drm_gpuvm* gpuvm) {
    const drm_gpuvm_ops* fn = gpuvm->ops;
    return fn && fn->op_alloc ? fn->op_alloc() : knew<drm_gpuva_op>(GFP_KERNEL);
}

void gpuva_op_free(drm_gpuvm* gpuvm, drm_gpuva_op* op) {
    const drm_gpuvm_ops* fn = gpuvm->ops;
    if (fn && fn->op_free)
        fn->op_free(op);
    else
        kdelete(op);
}

template <class T>
T* kmemdup_obj(const T* src) {
    return src ? knew<T>(GFP_KERNEL, *src) : nullptr;
}

struct ListArgs {
    drm_gpuvm* vm;
    drm_gpuva_ops* ops;
};

// Records a step (the remap parts are copied: the originals live on the walker's stack).
int drm_gpuva_sm_step(drm_gpuva_op* src, void* priv) {
    auto* args = static_cast<ListArgs*>(priv);
    drm_gpuva_op* op = gpuva_op_alloc(args->vm);
    if (!op)
        return -ENOMEM;
    op->op = src->op;
    if (src->op == DRM_GPUVA_OP_REMAP) {
        op->remap = {nullptr, nullptr, nullptr};
        op->remap.unmap = kmemdup_obj(src->remap.unmap);
        if (src->remap.prev)
            op->remap.prev = kmemdup_obj(src->remap.prev);
        if (src->remap.next)
            op->remap.next = kmemdup_obj(src->remap.next);
        if (!op->remap.unmap || (src->remap.prev && !op->remap.prev) || (src->remap.next && !op->remap.next)) {
            kdelete(op->remap.unmap);
            kdelete(op->remap.prev);
            kdelete(op->remap.next);
            gpuva_op_free(args->vm, op);
            return -ENOMEM;
        }
    } else if (src->op == DRM_GPUVA_OP_MAP) {
        op->map = src->map;
    } else if (src->op == DRM_GPUVA_OP_UNMAP) {
        op->unmap = src->unmap;
    } else {
        op->prefetch = src->prefetch;
    }
    args->ops->list.push_back(*op);
    return 0;
}

const drm_gpuvm_ops gpuvm_list_ops = {
    .sm_step_map = drm_gpuva_sm_step,
    .sm_step_remap = drm_gpuva_sm_step,
    .sm_step_unmap = drm_gpuva_sm_step,
};

template <class Walk>
int ops_create(drm_gpuvm* gpuvm, drm_gpuva_ops** out, Walk&& walk) {
    auto* ops = knew<drm_gpuva_ops>(GFP_KERNEL);
    if (!ops)
        return -ENOMEM;
    ListArgs args{gpuvm, ops};
    int ret = walk(&args);
    if (ret) {
        drm_gpuva_ops_free(gpuvm, ops);
        return ret;
    }
    *out = ops;
    return 0;
}

}  // namespace

int drm_gpuvm_sm_map(drm_gpuvm* gpuvm, void* priv, const drm_gpuvm_map_req* req) {
    const drm_gpuvm_ops* ops = gpuvm->ops;
    if (!(ops && ops->sm_step_map && ops->sm_step_remap && ops->sm_step_unmap))
        return -EINVAL;
    return __drm_gpuvm_sm_map(gpuvm, ops, priv, req);
}

int drm_gpuvm_sm_unmap(drm_gpuvm* gpuvm, void* priv, u64 req_addr, u64 req_range) {
    const drm_gpuvm_ops* ops = gpuvm->ops;
    if (!(ops && ops->sm_step_remap && ops->sm_step_unmap))
        return -EINVAL;
    return __drm_gpuvm_sm_unmap(gpuvm, ops, priv, req_addr, req_range);
}

int drm_gpuvm_sm_map_exec_lock(drm_gpuvm* gpuvm, drm_exec* exec, unsigned num_fences, const drm_gpuvm_map_req* req) {
    if (drm_gem_object* req_obj = req->map.gem.obj) {
        int ret = drm_exec_prepare_obj(exec, req_obj, num_fences);
        if (ret)
            return ret;
    }
    return __drm_gpuvm_sm_map(gpuvm, &lock_ops, exec, req);
}

int drm_gpuvm_sm_unmap_exec_lock(drm_gpuvm* gpuvm, drm_exec* exec, u64 req_addr, u64 req_range) {
    return __drm_gpuvm_sm_unmap(gpuvm, &lock_ops, exec, req_addr, req_range);
}

int drm_gpuvm_sm_map_ops_create(drm_gpuvm* gpuvm, const drm_gpuvm_map_req* req, drm_gpuva_ops** out) {
    return ops_create(gpuvm, out,
                      [&](ListArgs* args) { return __drm_gpuvm_sm_map(gpuvm, &gpuvm_list_ops, args, req); });
}

int drm_gpuvm_sm_unmap_ops_create(drm_gpuvm* gpuvm, u64 req_addr, u64 req_range, drm_gpuva_ops** out) {
    return ops_create(gpuvm, out, [&](ListArgs* args) {
        return __drm_gpuvm_sm_unmap(gpuvm, &gpuvm_list_ops, args, req_addr, req_range);
    });
}

int drm_gpuvm_prefetch_ops_create(drm_gpuvm* gpuvm, u64 addr, u64 range, drm_gpuva_ops** out) {
    if (!drm_gpuvm_req_valid(gpuvm, addr, range))
        return -EINVAL;
    return ops_create(gpuvm, out, [&](ListArgs* args) {
        int ret = 0;
        drm_gpuvm_for_each_va_range(gpuvm, addr, addr + range, [&](drm_gpuva* va) {
            if (ret)
                return;
            drm_gpuva_op op;
            op.op = DRM_GPUVA_OP_PREFETCH;
            op.prefetch.va = va;
            ret = drm_gpuva_sm_step(&op, args);
        });
        return ret;
    });
}

int drm_gpuvm_bo_unmap_ops_create(drm_gpuvm_bo* vm_bo, drm_gpuva_ops** out) {
    drm_gem_gpuva_assert_lock_held(vm_bo->vm, vm_bo->obj);
    return ops_create(vm_bo->vm, out, [&](ListArgs* args) {
        int ret = 0;
        drm_gpuvm_bo_for_each_va(vm_bo, [&](drm_gpuva* va) {
            if (ret)
                return;
            drm_gpuva_op op;
            op.op = DRM_GPUVA_OP_UNMAP;
            op.unmap = {va, false};
            ret = drm_gpuva_sm_step(&op, args);
        });
        return ret;
    });
}

void drm_gpuva_ops_free(drm_gpuvm* gpuvm, drm_gpuva_ops* ops) {
    while (!ops->list.empty()) {
        drm_gpuva_op& op = ops->list.front();
        ops->list.pop_front();
        if (op.op == DRM_GPUVA_OP_REMAP) {
            kdelete(op.remap.prev);
            kdelete(op.remap.next);
            kdelete(op.remap.unmap);
        }
        gpuva_op_free(gpuvm, &op);
    }
    kdelete(ops);
}

void drm_gpuva_map(drm_gpuvm* gpuvm, drm_gpuva* va, const drm_gpuva_op_map* op) {
    drm_gpuva_init_from_op(va, op);
    WARN_ON(drm_gpuva_insert(gpuvm, va));
}

void drm_gpuva_remap(drm_gpuva* prev, drm_gpuva* next, const drm_gpuva_op_remap* op) {
    drm_gpuva* va = op->unmap->va;
    drm_gpuvm* gpuvm = va->vm;
    // Keep the VM alive across the remove: the old mapping may hold its last reference.
    drm_gpuvm_get(gpuvm);
    drm_gpuva_remove(va);
    if (op->prev) {
        drm_gpuva_init_from_op(prev, op->prev);
        WARN_ON(drm_gpuva_insert(gpuvm, prev));
    }
    if (op->next) {
        drm_gpuva_init_from_op(next, op->next);
        WARN_ON(drm_gpuva_insert(gpuvm, next));
    }
    drm_gpuvm_put(gpuvm);
}

void drm_gpuva_unmap(const drm_gpuva_op_unmap* op) {
    drm_gpuva_remove(op->va);
}

void drm_gpuva_op_remap_to_unmap_range(const drm_gpuva_op_remap* op, u64* start_addr, u64* range) {
    const u64 va_start = op->prev ? op->prev->va.addr + op->prev->va.range : op->unmap->va->va.addr;
    const u64 va_end = op->next ? op->next->va.addr : op->unmap->va->va.addr + op->unmap->va->va.range;
    if (start_addr)
        *start_addr = va_start;
    if (range)
        *range = va_end - va_start;
}

}  // namespace drm
