// A small driver on top of drm_gpuvm for the tests and the benchmark: panthor's VM_BIND flow.
// prepare (allocates: the VAs a step may need, the index nodes their inserts may need, the
// vm_bo) -> sm_map / sm_unmap whose step
// callbacks only touch the tree and the lists (fence-signalling safe) -> cleanup (frees what the
// steps returned, deferred vm_bo cleanup).
#pragma once
#include <string>
#include <vector>

#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_gpuvm.h"
#include "kernel_shim/slab.h"

namespace gpuvm_test {

using namespace drm;
using kshim::u64;

inline constexpr u64 kPage = 0x1000;

// Formats a step the way the table-driven tests spell them (addresses in pages).
inline std::string bo_name(drm_gem_object* obj, const std::vector<drm_gem_object*>& names) {
    for (size_t i = 0; i < names.size(); i++)
        if (names[i] == obj)
            return std::string(1, static_cast<char>('a' + i));
    return obj ? "?" : "-";
}
inline std::string fmt_map(const drm_gpuva_op_map* m, const std::vector<drm_gem_object*>& names) {
    return std::to_string(m->va.addr / kPage) + "+" + std::to_string(m->va.range / kPage) + " " +
           bo_name(m->gem.obj, names) + "@" + std::to_string(m->gem.offset / kPage);
}
inline std::string fmt_va(const drm_gpuva* va, const std::vector<drm_gem_object*>& names) {
    drm_gpuva_op_map m{{va->va.addr, va->va.range}, {va->gem.offset, va->gem.obj}};
    return fmt_map(&m, names);
}
inline std::string fmt_op(const drm_gpuva_op* op, const std::vector<drm_gem_object*>& names) {
    switch (op->op) {
    case DRM_GPUVA_OP_MAP: return "map " + fmt_map(&op->map, names);
    case DRM_GPUVA_OP_UNMAP: return "unmap " + fmt_va(op->unmap.va, names) + (op->unmap.keep ? " keep" : "");
    case DRM_GPUVA_OP_REMAP:
        return "remap " + fmt_va(op->remap.unmap->va, names) +
               " prev=" + (op->remap.prev ? fmt_map(op->remap.prev, names) : std::string("none")) +
               " next=" + (op->remap.next ? fmt_map(op->remap.next, names) : std::string("none")) +
               (op->remap.unmap->keep ? " keep" : "");
    case DRM_GPUVA_OP_PREFETCH: return "prefetch " + fmt_va(op->prefetch.va, names);
    default: return "driver";
    }
}

// One VM (immediate mode by default) with apply-in-the-callback steps.
class TestVm {
public:
    struct OpCtx {
        TestVm* vm = nullptr;
        drm_gpuvm_bo* vm_bo = nullptr;  // map only
        drm_gpuva* prealloc[3] = {};    // a map needs at most 1 (map) + 2 (remap prev/next at each end... see prepare)
        gpuvm_detail::VaList returned;  // unmapped VAs, freed in cleanup (their vm_bo hook is free)
        std::vector<std::string>* log = nullptr;  // reserved by the caller, if any
        int steps = 0;
    };

    explicit TestVm(u32 flags = DRM_GPUVM_IMMEDIATE_MODE, u64 start = 0, u64 range = u64{1} << 48, u64 kstart = 0,
                    u64 krange = 0) {
        r_obj_ = drm_gpuvm_resv_object_alloc();
        vm_ = kshim::knew<drm_gpuvm>(kshim::GFP_KERNEL);
        ops_.vm_free = [](drm_gpuvm* vm) { kshim::kdelete(vm); };
        ops_.sm_step_map = step_map;
        ops_.sm_step_remap = step_remap;
        ops_.sm_step_unmap = step_unmap;
        ops_.vm_bo_validate = validate;
        drm_gpuvm_init(vm_, "test-vm", flags, r_obj_, start, range, kstart, krange, &ops_);
        drm_gem_object_put(r_obj_);  // the VM holds it now
    }
    ~TestVm() {
        unmap_all();
        drm_gpuvm_put(vm_);
    }
    TestVm(const TestVm&) = delete;

    drm_gpuvm* vm() { return vm_; }
    drm_gpuvm_ops& ops() { return ops_; }
    int validated = 0;

    // ---- prepare (may allocate and sleep) ----
    int prepare_map(OpCtx* ctx, drm_gem_object* obj) {
        ctx->vm = this;
        // A map needs one new VA, plus a prev and a next remainder when it splits mappings at
        // its ends: at most three.
        for (auto*& va : ctx->prealloc) {
            va = kshim::knew<drm_gpuva>(kshim::GFP_KERNEL);
            if (!va)
                return -ENOMEM;
        }
        // The index nodes the three inserts may split.
        if (int ret = drm_gpuvm_prealloc_index(vm_, 3))
            return ret;
        if (obj) {
            drm_gpuvm_bo* vm_bo = drm_gpuvm_bo_create(vm_, obj);
            if (!vm_bo)
                return -ENOMEM;
            // A protected VM's lists (and the destroy of a redundant prealloc) need its resv.
            const bool prot = drm_gpuvm_resv_protected(vm_);
            if (prot)
                kshim::dma_resv_lock(drm_gpuvm_resv(vm_), nullptr);
            lock_gpuva(obj);
            ctx->vm_bo = drm_gpuvm_bo_obtain_prealloc(vm_bo);
            unlock_gpuva(obj);
            drm_gpuvm_bo_extobj_add(ctx->vm_bo);
            if (prot)
                kshim::dma_resv_unlock(drm_gpuvm_resv(vm_));
        }
        return 0;
    }
    int prepare_unmap(OpCtx* ctx) {
        ctx->vm = this;
        for (int i = 0; i < 2; i++) {
            ctx->prealloc[i] = kshim::knew<drm_gpuva>(kshim::GFP_KERNEL);
            if (!ctx->prealloc[i])
                return -ENOMEM;
        }
        // An unmap inserts the remainders of the mappings crossing its ends.
        return drm_gpuvm_prealloc_index(vm_, 2);
    }
    // ---- cleanup (may sleep, frees) ----
    void cleanup(OpCtx* ctx) {
        for (auto*& va : ctx->prealloc) {
            kshim::kdelete(va);
            va = nullptr;
        }
        while (!ctx->returned.empty()) {
            drm_gpuva& va = ctx->returned.front();
            ctx->returned.pop_front();
            kshim::kdelete(&va);
        }
        if (ctx->vm_bo)
            drm_gpuvm_bo_put_deferred(ctx->vm_bo);
        ctx->vm_bo = nullptr;
        drm_gpuvm_bo_deferred_cleanup(vm_);
    }

    // ---- the whole bind ----
    int map(u64 addr, u64 range, drm_gem_object* obj, u64 offset, std::vector<std::string>* log = nullptr,
            const std::vector<drm_gem_object*>* names = nullptr) {
        OpCtx ctx;
        ctx.log = log;
        names_ = names;
        int ret = prepare_map(&ctx, obj);
        if (!ret) {
            drm_gpuvm_map_req req{{{addr, range}, {offset, obj}}};
            ret = drm_gpuvm_sm_map(vm_, &ctx, &req);
        }
        cleanup(&ctx);
        return ret;
    }
    int unmap(u64 addr, u64 range, std::vector<std::string>* log = nullptr,
              const std::vector<drm_gem_object*>* names = nullptr) {
        OpCtx ctx;
        ctx.log = log;
        names_ = names;
        int ret = prepare_unmap(&ctx);
        if (!ret)
            ret = drm_gpuvm_sm_unmap(vm_, &ctx, addr, range);
        cleanup(&ctx);
        return ret;
    }
    void unmap_all() {
        // Everything but the kernel node.
        std::vector<std::pair<u64, u64>> ranges;
        drm_gpuvm_for_each_va(vm_, [&](drm_gpuva* va) {
            if (va != &vm_->kernel_alloc_node)
                ranges.emplace_back(va->va.addr, va->va.range);
        });
        for (auto [a, r] : ranges)
            unmap(a, r);
    }
    size_t count() {
        size_t n = 0;
        drm_gpuvm_for_each_va(vm_, [&](drm_gpuva* va) { n += va != &vm_->kernel_alloc_node; });
        return n;
    }

    static void lock_gpuva(drm_gem_object* obj) ACQUIRE(obj->gpuva.lock) { kshim::mutex_lock(&obj->gpuva.lock); }
    static void unlock_gpuva(drm_gem_object* obj) RELEASE(obj->gpuva.lock) { kshim::mutex_unlock(&obj->gpuva.lock); }

private:
    static drm_gpuva* take(OpCtx* ctx) {
        for (auto*& va : ctx->prealloc)
            if (va) {
                drm_gpuva* r = va;
                va = nullptr;
                return r;
            }
        return nullptr;
    }
    static void record(OpCtx* ctx, drm_gpuva_op* op) {
        ctx->steps++;
        if (ctx->log)
            ctx->log->push_back(fmt_op(op, ctx->vm->names_ ? *ctx->vm->names_ : std::vector<drm_gem_object*>{}));
    }
    static int step_map(drm_gpuva_op* op, void* priv) {
        auto* ctx = static_cast<OpCtx*>(priv);
        record(ctx, op);
        drm_gpuva* va = take(ctx);
        if (!va)
            return -ENOMEM;
        drm_gpuva_map(ctx->vm->vm_, va, &op->map);
        if (op->map.gem.obj) {
            lock_gpuva(op->map.gem.obj);
            drm_gpuva_link(va, ctx->vm_bo);
            unlock_gpuva(op->map.gem.obj);
        }
        return 0;
    }
    static int step_remap(drm_gpuva_op* op, void* priv) {
        auto* ctx = static_cast<OpCtx*>(priv);
        record(ctx, op);
        drm_gpuva* old = op->remap.unmap->va;
        drm_gpuva* prev = op->remap.prev ? take(ctx) : nullptr;
        drm_gpuva* next = op->remap.next ? take(ctx) : nullptr;
        if ((op->remap.prev && !prev) || (op->remap.next && !next))
            return -ENOMEM;
        drm_gpuvm_bo* vm_bo = old->vm_bo;
        drm_gpuva_remap(prev, next, &op->remap);
        if (drm_gem_object* obj = old->gem.obj) {
            lock_gpuva(obj);
            if (prev)
                drm_gpuva_link(prev, vm_bo);
            if (next)
                drm_gpuva_link(next, vm_bo);
            unlock_gpuva(obj);
        }
        drm_gpuva_unlink_defer(old);
        ctx->returned.push_back(*old);
        return 0;
    }
    static int step_unmap(drm_gpuva_op* op, void* priv) {
        auto* ctx = static_cast<OpCtx*>(priv);
        record(ctx, op);
        drm_gpuva* va = op->unmap.va;
        drm_gpuva_unmap(&op->unmap);
        drm_gpuva_unlink_defer(va);
        ctx->returned.push_back(*va);
        return 0;
    }
    static int validate(drm_gpuvm_bo* vm_bo, drm_exec*) {
        // "Bring the pages back": the BO is no longer evicted.
        drm_gpuvm_bo_evict(vm_bo, false);
        return 0;
    }

    drm_gpuvm_ops ops_;
    drm_gem_object* r_obj_ = nullptr;
    drm_gpuvm* vm_ = nullptr;
    const std::vector<drm_gem_object*>* names_ = nullptr;
};

// A shmem BO with a reference the holder owns.
inline drm_gem_object* new_bo(u64 size, kshim::dma_resv* shared_resv = nullptr) {
    drm_gem_shmem_object* shmem = nullptr;
    if (drm_gem_shmem_create(nullptr, size, &shmem))
        return nullptr;
    if (shared_resv)
        shmem->base.resv = shared_resv;
    return &shmem->base;
}

}  // namespace gpuvm_test
