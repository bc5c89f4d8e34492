// drm_gpuvm: lookups, rejected input, vm_bo uniqueness and lifetime, extobj/evict tracking,
// the drm_exec helpers, the fence-signalling path, and a differential test against a model.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/report.h"
#include "testkit/gpuvm_harness.h"
#include "testkit/gpuvm_model.h"
#include "tests/support/kernel_test.h"

using namespace gpuvm_test;
using namespace kshim;

class Gpuvm : public kshim::testing::KernelTest {};

TEST_F(Gpuvm, LookupsByAddressAndRange) {
    drm_gem_object* bo = new_bo(64 * kPage);
    {
        TestVm vm;
        ASSERT_EQ(vm.map(0x10 * kPage, 4 * kPage, bo, 0), 0);
        ASSERT_EQ(vm.map(0x14 * kPage, 2 * kPage, bo, 8 * kPage), 0);
        ASSERT_EQ(vm.map(0x20 * kPage, 1 * kPage, bo, 0), 0);
        drm_gpuvm* v = vm.vm();

        drm_gpuva* a = drm_gpuva_find(v, 0x10 * kPage, 4 * kPage);
        ASSERT_NE(a, nullptr);
        EXPECT_EQ(drm_gpuva_find(v, 0x10 * kPage, 3 * kPage), nullptr);  // exact range only
        EXPECT_EQ(drm_gpuva_find_first(v, 0x12 * kPage, 0x10 * kPage), a);
        EXPECT_EQ(drm_gpuva_find_first(v, 0x13 * kPage + 0x800, 1), a);
        EXPECT_EQ(drm_gpuva_find_first(v, 0x16 * kPage, 0xa * kPage), nullptr);  // the gap
        drm_gpuva* b = drm_gpuva_find_first(v, 0x15 * kPage, kPage);
        ASSERT_NE(b, nullptr);
        EXPECT_EQ(b->va.addr, 0x14 * kPage);
        EXPECT_EQ(drm_gpuva_find_prev(v, 0x14 * kPage), a);
        EXPECT_EQ(drm_gpuva_find_next(v, 0x14 * kPage), b);
        EXPECT_EQ(drm_gpuva_find_next(v, 0x16 * kPage), nullptr);
        EXPECT_EQ(drm_gpuva_find_prev(v, 0x10 * kPage), nullptr);
        EXPECT_EQ(drm_gpuva_next(a), b);
        EXPECT_EQ(drm_gpuva_prev(b), a);
        EXPECT_TRUE(drm_gpuvm_interval_empty(v, 0x16 * kPage, 0xa * kPage));
        EXPECT_FALSE(drm_gpuvm_interval_empty(v, 0x16 * kPage, 0xb * kPage));

        std::vector<u64> seen;
        drm_gpuvm_for_each_va_range(v, 0x11 * kPage, 0x21 * kPage,
                                    [&](drm_gpuva* va) { seen.push_back(va->va.addr / kPage); });
        EXPECT_EQ(seen, (std::vector<u64>{0x10, 0x14, 0x20}));
        seen.clear();
        drm_gpuvm_for_each_va_range(v, 0x15 * kPage, 0x20 * kPage,
                                    [&](drm_gpuva* va) { seen.push_back(va->va.addr / kPage); });
        EXPECT_EQ(seen, (std::vector<u64>{0x14}));
    }
    drm_gem_object_put(bo);
}

// drm_gpuva_find_first is one descent that keeps the last node on each side of the address;
// check it at the edges (empty tree, before the first and after the last mapping, a range
// ending where a mapping starts, the last byte of a mapping) and against a linear scan.
TEST_F(Gpuvm, FindFirstAtTheEdgesAndAgainstAScan) {
    drm_gem_object* bo = new_bo(16 * kPage);
    {
        TestVm vm;
        drm_gpuvm* v = vm.vm();
        EXPECT_EQ(drm_gpuva_find_first(v, 0, u64{1} << 40), nullptr);  // empty tree
        // Mappings of 1-3 pages with 0-2 page gaps from page 0x100.
        std::mt19937_64 rng(7);
        std::vector<std::pair<u64, u64>> maps;  // [start, end) in bytes
        u64 addr = 0x100 * kPage;
        for (int i = 0; i < 300; i++) {
            const u64 range = (1 + rng() % 3) * kPage;
            ASSERT_EQ(vm.map(addr, range, bo, 0), 0);
            maps.emplace_back(addr, addr + range);
            addr += range + (rng() % 3) * kPage;
        }
        const u64 first = maps.front().first, last_end = maps.back().second;
        EXPECT_EQ(drm_gpuva_find_first(v, 0, first), nullptr);  // ends where the first starts
        EXPECT_EQ(drm_gpuva_find_first(v, 0, first + 1)->va.addr, first);
        EXPECT_EQ(drm_gpuva_find_first(v, last_end, kPage), nullptr);                     // after the last
        EXPECT_EQ(drm_gpuva_find_first(v, last_end - 1, 1)->va.addr, maps.back().first);  // its last byte
        for (int i = 0; i < 5000; i++) {
            const u64 a = first - 4 * kPage + rng() % (last_end - first + 8 * kPage);
            const u64 r = 1 + rng() % (6 * kPage);
            const std::pair<u64, u64>* want = nullptr;
            for (auto& m : maps)
                if (m.first < a + r && a < m.second) {
                    want = &m;
                    break;
                }
            drm_gpuva* got = drm_gpuva_find_first(v, a, r);
            ASSERT_EQ(got ? got->va.addr : 0, want ? want->first : 0) << "addr " << a << " range " << r;
        }
    }
    drm_gem_object_put(bo);
}

TEST_F(Gpuvm, RejectedInputGetsEinval) {
    drm_gem_object* bo = new_bo(16 * kPage);
    {
        // VA space [1 MiB, 1 MiB + 1 GiB), kernel node [512 MiB, 513 MiB).
        const u64 start = 1 << 20, range = 1 << 30, kstart = 512 << 20, krange = 1 << 20;
        TestVm vm(DRM_GPUVM_IMMEDIATE_MODE, start, range, kstart, krange);
        drm_gpuvm* v = vm.vm();
        struct Bad {
            const char* what;
            u64 addr, range, offset;
        } bad[] = {
            {"unaligned addr", start + 0x800, kPage, 0},
            {"unaligned range", start, kPage + 1, 0},
            {"unaligned offset", start, kPage, 0x10},
            {"zero range", start, 0, 0},
            {"below the VA space", start - kPage, 2 * kPage, 0},
            {"beyond the VA space", start + range - kPage, 2 * kPage, 0},
            {"overflow", ~u64{0} & kshim::PAGE_MASK, 2 * kPage, 0},
            {"overlapping the kernel node", kstart - kPage, 2 * kPage, 0},
            {"inside the kernel node", kstart + kPage, kPage, 0},
        };
        for (const Bad& b : bad) {
            SCOPED_TRACE(b.what);
            drm_gpuvm_map_req req{{{b.addr, b.range}, {b.offset, bo}}};
            std::vector<std::string> log;
            EXPECT_EQ(vm.map(b.addr, b.range, bo, b.offset, &log), -EINVAL);
            EXPECT_TRUE(log.empty());
            drm_gpuva_ops* ops = nullptr;
            EXPECT_EQ(drm_gpuvm_sm_map_ops_create(v, &req, &ops), -EINVAL);
            if (b.offset == 0) {
                EXPECT_EQ(vm.unmap(b.addr, b.range), -EINVAL);
                EXPECT_EQ(drm_gpuvm_sm_unmap_ops_create(v, b.addr, b.range, &ops), -EINVAL);
                EXPECT_EQ(drm_gpuvm_prefetch_ops_create(v, b.addr, b.range, &ops), -EINVAL);
            }
        }
        EXPECT_EQ(vm.count(), 0u);

        // Direct inserts: invalid range, overlap.
        drm_gpuva va, va2;
        va.va = {kstart, kPage};
        EXPECT_EQ(drm_gpuva_insert(v, &va), -EINVAL);
        va.va = {start, 2 * kPage};
        ASSERT_EQ(drm_gpuva_insert(v, &va), 0);
        va2.va = {start + kPage, 2 * kPage};
        EXPECT_EQ(drm_gpuva_insert(v, &va2), -EEXIST);
        drm_gpuva_remove(&va);

        // The kernel node cannot be removed.
        drm_gpuva_remove(&v->kernel_alloc_node);
        EXPECT_TRUE(expect_report(ReportKind::Warn));
        EXPECT_EQ(drm_gpuva_find(v, kstart, krange), &v->kernel_alloc_node);

        // Without step callbacks sm_map/sm_unmap refuse to run.
        drm_gpuvm_ops saved = vm.ops();
        vm.ops().sm_step_map = nullptr;
        drm_gpuvm_map_req ok{{{start, kPage}, {0, bo}}};
        EXPECT_EQ(drm_gpuvm_sm_map(v, nullptr, &ok), -EINVAL);
        vm.ops().sm_step_unmap = nullptr;
        EXPECT_EQ(drm_gpuvm_sm_unmap(v, nullptr, start, kPage), -EINVAL);
        vm.ops() = saved;
    }
    drm_gem_object_put(bo);
}

TEST_F(Gpuvm, StepErrorStopsTheWalkAndIsReturned) {
    drm_gem_object* bo = new_bo(16 * kPage);
    {
        TestVm vm;
        ASSERT_EQ(vm.map(0, kPage, bo, 0), 0);
        ASSERT_EQ(vm.map(kPage, kPage, bo, 0), 0);
        drm_gpuvm_ops ops = vm.ops();
        int calls = 0;
        static int* calls_p;
        calls_p = &calls;
        ops.sm_step_unmap = [](drm_gpuva_op*, void*) {
            ++*calls_p;
            return -EIO;
        };
        drm_gpuvm* v = vm.vm();
        const drm_gpuvm_ops* orig = v->ops;
        v->ops = &ops;
        EXPECT_EQ(drm_gpuvm_sm_unmap(v, nullptr, 0, 2 * kPage), -EIO);
        v->ops = orig;
        EXPECT_EQ(calls, 1);
        EXPECT_EQ(vm.count(), 2u);
    }
    drm_gem_object_put(bo);
}

TEST_F(Gpuvm, OneVmBoPerVmAndObject) {
    drm_gem_object* bo = new_bo(16 * kPage);
    {
        TestVm vm1, vm2;
        TestVm::lock_gpuva(bo);
        drm_gpuvm_bo* a = drm_gpuvm_bo_obtain(vm1.vm(), bo);
        drm_gpuvm_bo* b = drm_gpuvm_bo_obtain(vm1.vm(), bo);
        drm_gpuvm_bo* c = drm_gpuvm_bo_obtain(vm2.vm(), bo);
        TestVm::unlock_gpuva(bo);
        EXPECT_EQ(a, b);
        EXPECT_NE(a, c);
        EXPECT_EQ(kref_read(&a->kref), 2u);

        // obtain_prealloc drops the preallocated one when the pair exists.
        drm_gpuvm_bo* pre = drm_gpuvm_bo_create(vm1.vm(), bo);
        TestVm::lock_gpuva(bo);
        EXPECT_EQ(drm_gpuvm_bo_obtain_prealloc(pre), a);
        EXPECT_EQ(drm_gpuvm_bo_find(vm2.vm(), bo), c);
        EXPECT_FALSE(drm_gpuvm_bo_put(c));
        EXPECT_FALSE(drm_gpuvm_bo_put(a));
        EXPECT_FALSE(drm_gpuvm_bo_put(a));
        EXPECT_TRUE(drm_gpuvm_bo_put(a));
        EXPECT_TRUE(drm_gpuvm_bo_put(c));
        EXPECT_TRUE(bo->gpuva.list.empty());
        TestVm::unlock_gpuva(bo);
    }
    drm_gem_object_put(bo);
}

TEST_F(Gpuvm, ABoStaysAliveWhileMappedAfterItsHandleIsClosed) {
    GemHandleTable handles;
    drm_gem_object* bo = new_bo(16 * kPage);
    u32 handle = 0;
    ASSERT_EQ(handles.handle_create(bo, &handle), 0);
    drm_gem_object_put(bo);  // the handle's reference is the only one now
    EXPECT_EQ(handle, 1u);
    {
        TestVm vm;
        drm_gem_object* obj = handles.lookup(handle);
        ASSERT_EQ(obj, bo);
        ASSERT_EQ(vm.map(0, 4 * kPage, obj, 0), 0);
        drm_gem_object_put(obj);
        EXPECT_EQ(handles.handle_delete(handle), 0);
        EXPECT_EQ(handles.handle_delete(handle), -EINVAL);
        EXPECT_EQ(handles.lookup(handle), nullptr);
        // Still alive: the mapping's vm_bo holds it. Touch it to let ASan prove it.
        EXPECT_EQ(kref_read(&bo->refcount), 1u);
        EXPECT_EQ(bo->size, 16 * kPage);
        drm_gpuva* va = drm_gpuva_find(vm.vm(), 0, 4 * kPage);
        ASSERT_NE(va, nullptr);
        EXPECT_EQ(va->gem.obj, bo);
        // Unmapping drops the last reference: the leak check at teardown proves it was freed.
        ASSERT_EQ(vm.unmap(0, 4 * kPage), 0);
    }
}

TEST_F(Gpuvm, ExtobjListTracksBosNotSharingTheVmResv) {
    TestVm vm;
    drm_gem_object* priv = new_bo(16 * kPage, drm_gpuvm_resv(vm.vm()));
    drm_gem_object* ext = new_bo(16 * kPage);
    EXPECT_FALSE(drm_gpuvm_is_extobj(vm.vm(), priv));
    EXPECT_TRUE(drm_gpuvm_is_extobj(vm.vm(), ext));
    ASSERT_EQ(vm.map(0, kPage, priv, 0), 0);
    ASSERT_EQ(vm.map(kPage, kPage, ext, 0), 0);
    ASSERT_EQ(vm.map(2 * kPage, kPage, ext, kPage), 0);
    std::vector<drm_gem_object*> on_list;
    for (auto& vm_bo : vm.vm()->extobj.list)
        on_list.push_back(vm_bo.obj);
    EXPECT_EQ(on_list, std::vector<drm_gem_object*>{ext});

    // prepare_objects locks the VM resv (prepare_vm) and every extobj.
    drm_gpuvm_exec vm_exec;
    vm_exec.vm = vm.vm();
    vm_exec.num_fences = 1;
    ASSERT_EQ(drm_gpuvm_exec_lock(&vm_exec), 0);
    EXPECT_TRUE(dma_resv_is_locked(drm_gpuvm_resv(vm.vm())));
    EXPECT_TRUE(dma_resv_is_locked(ext->resv));
    EXPECT_EQ(vm_exec.exec.num_objects, 2u);
    // resv_add_fence: private usage on the VM resv, extobj usage on the others.
    dma_fence* f = dma_fence_allocate_private_stub(0);
    drm_gpuvm_exec_resv_add_fence(&vm_exec, f, DMA_RESV_USAGE_BOOKKEEP, DMA_RESV_USAGE_WRITE);
    drm_gpuvm_exec_unlock(&vm_exec);
    EXPECT_FALSE(dma_resv_is_locked(ext->resv));
    EXPECT_TRUE(dma_resv_test_signaled(ext->resv, DMA_RESV_USAGE_WRITE));
    dma_resv_iter cursor;
    dma_fence* it;
    int ext_write = 0, vm_bookkeep = 0;
    dma_resv_lock(ext->resv, nullptr);
    dma_resv_for_each_fence(&cursor, ext->resv, DMA_RESV_USAGE_BOOKKEEP, it) ext_write +=
        dma_resv_iter_usage(&cursor) == DMA_RESV_USAGE_WRITE;
    dma_resv_unlock(ext->resv);
    dma_resv_lock(drm_gpuvm_resv(vm.vm()), nullptr);
    dma_resv_for_each_fence(&cursor, drm_gpuvm_resv(vm.vm()), DMA_RESV_USAGE_BOOKKEEP, it) vm_bookkeep +=
        dma_resv_iter_usage(&cursor) == DMA_RESV_USAGE_BOOKKEEP;
    dma_resv_unlock(drm_gpuvm_resv(vm.vm()));
    EXPECT_EQ(ext_write, 1);
    EXPECT_EQ(vm_bookkeep, 1);
    dma_fence_put(f);

    // prepare_range locks only what is mapped in the range; ext is mapped twice there, which
    // is -EALREADY unless duplicates are ignored (as upstream).
    drm_gpuvm_exec range_exec;
    range_exec.vm = vm.vm();
    EXPECT_EQ(drm_gpuvm_exec_lock_range(&range_exec, kPage, 2 * kPage), -EALREADY);
    range_exec.flags = DRM_EXEC_IGNORE_DUPLICATES;
    ASSERT_EQ(drm_gpuvm_exec_lock_range(&range_exec, kPage, 2 * kPage), 0);
    EXPECT_EQ(range_exec.exec.num_objects, 1u);
    EXPECT_EQ(range_exec.exec.objects[0], ext);
    drm_gpuvm_exec_unlock(&range_exec);

    // The extobj leaves the list with its last mapping.
    vm.unmap(kPage, 2 * kPage);
    EXPECT_TRUE(vm.vm()->extobj.list.empty());
    vm.unmap_all();
    drm_gem_object_put(priv);
    drm_gem_object_put(ext);
}

TEST_F(Gpuvm, EvictListAndValidate) {
    TestVm vm;
    drm_gem_object* priv = new_bo(16 * kPage, drm_gpuvm_resv(vm.vm()));
    drm_gem_object* ext = new_bo(16 * kPage);
    ASSERT_EQ(vm.map(0, kPage, priv, 0), 0);
    ASSERT_EQ(vm.map(kPage, kPage, ext, 0), 0);

    dma_resv_lock(priv->resv, nullptr);
    drm_gpuvm_bo_gem_evict(priv, true);
    dma_resv_unlock(priv->resv);
    dma_resv_lock(ext->resv, nullptr);
    drm_gpuvm_bo_gem_evict(ext, true);
    dma_resv_unlock(ext->resv);
    EXPECT_TRUE(drm_gpuva_invalidated(drm_gpuva_find(vm.vm(), 0, kPage)));
    size_t evicted = 0;
    for (auto& vm_bo : vm.vm()->evict.list)
        evicted += vm_bo.evicted;
    EXPECT_EQ(evicted, 2u);

    drm_gpuvm_exec vm_exec;
    vm_exec.vm = vm.vm();
    ASSERT_EQ(drm_gpuvm_exec_lock(&vm_exec), 0);
    EXPECT_EQ(drm_gpuvm_exec_validate(&vm_exec), 0);
    drm_gpuvm_exec_unlock(&vm_exec);
    EXPECT_TRUE(vm.vm()->evict.list.empty());

    // No validate op: -EOPNOTSUPP.
    drm_gpuvm_ops saved = vm.ops();
    vm.ops().vm_bo_validate = nullptr;
    drm_exec exec;
    EXPECT_EQ(drm_gpuvm_validate(vm.vm(), &exec), -EOPNOTSUPP);
    vm.ops() = saved;

    // An evicted BO that gets unmapped leaves the evict list with its vm_bo.
    dma_resv_lock(ext->resv, nullptr);
    drm_gpuvm_bo_gem_evict(ext, true);
    dma_resv_unlock(ext->resv);
    EXPECT_FALSE(vm.vm()->evict.list.empty());
    vm.unmap(kPage, kPage);
    EXPECT_TRUE(vm.vm()->evict.list.empty());
    vm.unmap_all();
    drm_gem_object_put(priv);
    drm_gem_object_put(ext);
}

TEST_F(Gpuvm, ResvProtectedVmTracksEvictedExtobjsWhenPreparing) {
    TestVm vm(DRM_GPUVM_RESV_PROTECTED | DRM_GPUVM_IMMEDIATE_MODE);
    drm_gem_object* ext = new_bo(16 * kPage);
    // Protected lists: the VM resv is held while adding the extobj.
    dma_resv_lock(drm_gpuvm_resv(vm.vm()), nullptr);
    drm_gpuvm_bo* pre = drm_gpuvm_bo_create(vm.vm(), ext);
    TestVm::lock_gpuva(ext);
    drm_gpuvm_bo* vm_bo = drm_gpuvm_bo_obtain_prealloc(pre);
    TestVm::unlock_gpuva(ext);
    drm_gpuvm_bo_extobj_add(vm_bo);
    dma_resv_unlock(drm_gpuvm_resv(vm.vm()));
    ASSERT_EQ(vm.map(0, kPage, ext, 0), 0);

    dma_resv_lock(ext->resv, nullptr);
    drm_gpuvm_bo_evict(vm_bo, true);  // extobj of a protected VM: not listed yet
    dma_resv_unlock(ext->resv);
    EXPECT_TRUE(vm.vm()->evict.list.empty());

    drm_gpuvm_exec vm_exec;
    vm_exec.vm = vm.vm();
    ASSERT_EQ(drm_gpuvm_exec_lock(&vm_exec), 0);
    EXPECT_FALSE(vm.vm()->evict.list.empty());
    EXPECT_EQ(drm_gpuvm_exec_validate(&vm_exec), 0);
    EXPECT_TRUE(vm.vm()->evict.list.empty());
    drm_gpuvm_exec_unlock(&vm_exec);

    vm.unmap_all();
    dma_resv_lock(drm_gpuvm_resv(vm.vm()), nullptr);
    TestVm::lock_gpuva(ext);
    EXPECT_TRUE(drm_gpuvm_bo_put(vm_bo));
    TestVm::unlock_gpuva(ext);
    dma_resv_unlock(drm_gpuvm_resv(vm.vm()));
    drm_gem_object_put(ext);
}

// The steps run inside a fence-signalling section (as panthor's VM_BIND job does); nothing may be
// reported: no allocation, no resv, no sleeping lock that is held around an allocation or wait.
TEST_F(Gpuvm, StepsRunInsideAFenceSignallingSectionWithoutReports) {
    TestVm vm;
    drm_gem_object* a = new_bo(64 * kPage);
    drm_gem_object* b = new_bo(64 * kPage);
    ASSERT_EQ(vm.map(0, 8 * kPage, a, 0), 0);
    ASSERT_EQ(vm.map(8 * kPage, 8 * kPage, b, 0), 0);

    TestVm::OpCtx ctx;
    ASSERT_EQ(vm.prepare_map(&ctx, b), 0);
    bool cookie = dma_fence_begin_signalling();
    drm_gpuvm_map_req req{{{4 * kPage, 6 * kPage}, {0, b}}};  // splits a, eats part of b
    EXPECT_EQ(drm_gpuvm_sm_map(vm.vm(), &ctx, &req), 0);
    dma_fence_end_signalling(cookie);
    vm.cleanup(&ctx);

    TestVm::OpCtx uctx;
    ASSERT_EQ(vm.prepare_unmap(&uctx), 0);
    cookie = dma_fence_begin_signalling();
    // Unmaps every mapping of `a`: its vm_bo's last reference goes in the section (deferred).
    EXPECT_EQ(drm_gpuvm_sm_unmap(vm.vm(), &uctx, 0, 5 * kPage), 0);
    dma_fence_end_signalling(cookie);
    EXPECT_FALSE(vm.vm()->bo_defer.empty());
    EXPECT_TRUE(a->gpuva.list.empty());  // already unreachable for obtain()
    vm.cleanup(&uctx);
    EXPECT_TRUE(vm.vm()->bo_defer.empty());
    EXPECT_EQ(pending_report_count(), 0u);

    vm.unmap_all();
    drm_gem_object_put(a);
    drm_gem_object_put(b);
}

// The control for the test above: the same section does report an allocation that may sleep.
TEST_F(Gpuvm, AllocatingStepInsideASignallingSectionIsReported) {
    TestVm vm;
    drm_gem_object* a = new_bo(16 * kPage);
    ASSERT_EQ(vm.map(0, 8 * kPage, a, 0), 0);
    bool cookie = dma_fence_begin_signalling();
    drm_gpuva_ops* ops = nullptr;  // the list variant allocates: it belongs in the prepare step
    EXPECT_EQ(drm_gpuvm_sm_unmap_ops_create(vm.vm(), 0, 4 * kPage, &ops), 0);
    dma_fence_end_signalling(cookie);
    EXPECT_TRUE(expect_report(ReportKind::FenceSignalling));
    take_reports();
    drm_gpuva_ops_free(vm.vm(), ops);
    vm.unmap_all();
    drm_gem_object_put(a);
}

TEST_F(Gpuvm, PrefetchAndBoUnmapOpLists) {
    TestVm vm;
    drm_gem_object* a = new_bo(16 * kPage);
    drm_gem_object* b = new_bo(16 * kPage);
    std::vector<drm_gem_object*> names = {a, b};
    ASSERT_EQ(vm.map(0, 2 * kPage, a, 0), 0);
    ASSERT_EQ(vm.map(2 * kPage, 2 * kPage, b, 0), 0);
    ASSERT_EQ(vm.map(6 * kPage, 2 * kPage, a, 4 * kPage), 0);
    drm_gpuva_ops* ops = nullptr;
    ASSERT_EQ(drm_gpuvm_prefetch_ops_create(vm.vm(), kPage, 6 * kPage, &ops), 0);
    std::vector<std::string> got;
    for (auto& op : ops->list)
        got.push_back(fmt_op(&op, names));
    drm_gpuva_ops_free(vm.vm(), ops);
    EXPECT_EQ(got, (std::vector<std::string>{"prefetch 0+2 a@0", "prefetch 2+2 b@0", "prefetch 6+2 a@4"}));

    TestVm::lock_gpuva(a);
    drm_gpuvm_bo* vm_bo = drm_gpuvm_bo_find(vm.vm(), a);
    ASSERT_NE(vm_bo, nullptr);
    ASSERT_EQ(drm_gpuvm_bo_unmap_ops_create(vm_bo, &ops), 0);
    EXPECT_FALSE(drm_gpuvm_bo_put(vm_bo));
    TestVm::unlock_gpuva(a);
    got.clear();
    for (auto& op : ops->list)
        got.push_back(fmt_op(&op, names));
    drm_gpuva_ops_free(vm.vm(), ops);
    EXPECT_EQ(got, (std::vector<std::string>{"unmap 0+2 a@0", "unmap 6+2 a@4"}));
    vm.unmap_all();
    drm_gem_object_put(a);
    drm_gem_object_put(b);
}

TEST_F(Gpuvm, OpListCreationFailsCleanlyUnderAllocationFailure) {
    TestVm vm;
    drm_gem_object* a = new_bo(16 * kPage);
    drm_gem_object* b = new_bo(16 * kPage);
    ASSERT_EQ(vm.map(0, 4 * kPage, a, 0), 0);
    ASSERT_EQ(vm.map(8 * kPage, 4 * kPage, a, 0), 0);
    drm_gpuvm_map_req req{{{2 * kPage, 8 * kPage}, {0, b}}};  // remap, remap, map: 1 + 2*(1+2) + 1 allocs
    int failures = 0;
    for (u64 nth = 1; nth <= 12; nth++) {
        fault_inject_arm({.fail_nth = nth, .only_cache = "kmalloc"});
        drm_gpuva_ops* ops = nullptr;
        int ret = drm_gpuvm_sm_map_ops_create(vm.vm(), &req, &ops);
        fault_inject_disarm();
        if (ret == 0) {
            drm_gpuva_ops_free(vm.vm(), ops);
        } else {
            EXPECT_EQ(ret, -ENOMEM);
            failures++;
        }
    }
    EXPECT_GE(failures, 5);
    vm.unmap_all();
    drm_gem_object_put(a);
    drm_gem_object_put(b);
}

// ---- differential test ----

namespace {
struct Checker {
    Model* model;
    const std::vector<drm_gem_object*>* bos;
    u64 req_addr;
    drm_gem_object* req_obj;
    u64 req_offset;
    bool is_map;
    int maps = 0, remaps = 0, errors = 0;
};
}  // namespace

TEST_F(Gpuvm, DifferentialAgainstIntervalModel_100kRandomOps) {
    constexpr u64 kSpacePages = 2048;
    constexpr int kOps = 100000;
    const u64 seed = seed_from_env(20240611);
    std::mt19937_64 rng(seed);
    std::vector<drm_gem_object*> bos;
    for (int i = 0; i < 4; i++)
        bos.push_back(new_bo(256 * kPage));
    Model model;
    {
        // Declared before the VM so they outlive it, whatever way the test leaves.
        Checker c{};
        drm_gpuvm_ops wrapped;
        TestVm vm(DRM_GPUVM_IMMEDIATE_MODE, 0, kSpacePages * kPage);
        // Wrap the harness steps with a checker of the "keep" flag and the step-count rules.
        static Checker* chk;
        static const drm_gpuvm_ops* inner;
        wrapped = vm.ops();
        inner = &vm.ops();
        auto check_keep = [](drm_gpuva* old, bool keep) {
            if (!chk->is_map) {
                if (keep)
                    chk->errors++;
                return;
            }
            u64 x = std::max(old->va.addr, chk->req_addr);
            bool expect = old->gem.obj && old->gem.obj == chk->req_obj &&
                          old->gem.offset + (x - old->va.addr) == chk->req_offset + (x - chk->req_addr);
            if (keep != expect)
                chk->errors++;
        };
        static decltype(check_keep)* ck;
        ck = &check_keep;
        wrapped.sm_step_map = [](drm_gpuva_op* op, void* priv) {
            chk->maps++;
            return inner->sm_step_map(op, priv);
        };
        wrapped.sm_step_remap = [](drm_gpuva_op* op, void* priv) {
            chk->remaps++;
            (*ck)(op->remap.unmap->va, op->remap.unmap->keep);
            return inner->sm_step_remap(op, priv);
        };
        wrapped.sm_step_unmap = [](drm_gpuva_op* op, void* priv) {
            (*ck)(op->unmap.va, op->unmap.keep);
            return inner->sm_step_unmap(op, priv);
        };
        vm.vm()->ops = &wrapped;

        auto full_compare = [&](int step) {
            Model seen;
            drm_gpuvm_for_each_va(vm.vm(), [&](drm_gpuva* va) {
                int bo = -1;
                for (int i = 0; i < 4; i++)
                    if (bos[i] == va->gem.obj)
                        bo = i;
                seen[va->va.addr / kPage] = {(va->va.addr + va->va.range) / kPage, bo, va->gem.offset / kPage};
            });
            ASSERT_EQ(seen.size(), model.size()) << "op " << step << " seed " << seed;
            for (auto& [s, mm] : model) {
                auto it = seen.find(s);
                ASSERT_NE(it, seen.end()) << "op " << step << " missing mapping at page " << s << " seed " << seed;
                ASSERT_EQ(it->second.end, mm.end) << "op " << step << " at " << s;
                ASSERT_EQ(it->second.bo, mm.bo) << "op " << step << " at " << s;
                ASSERT_EQ(it->second.offset, mm.offset) << "op " << step << " at " << s;
            }
            // Each BO's vm_bo lists hold exactly its mappings.
            for (int i = 0; i < 4; i++) {
                size_t linked = 0, expected = 0;
                TestVm::lock_gpuva(bos[i]);
                drm_gem_for_each_gpuvm_bo(bos[i], [&](drm_gpuvm_bo* vm_bo) {
                    drm_gpuvm_bo_for_each_va(vm_bo, [&](drm_gpuva*) { linked++; });
                });
                TestVm::unlock_gpuva(bos[i]);
                for (auto& [s, mm] : model)
                    expected += mm.bo == i;
                ASSERT_EQ(linked, expected) << "op " << step;
            }
        };

        for (int step = 0; step < kOps; step++) {
            const u64 len = 1 + rng() % 48;
            const u64 s = rng() % (kSpacePages - len + 1);
            c = Checker{&model, &bos, s * kPage, nullptr, 0, false};
            chk = &c;
            if (rng() % 100 < 60) {
                int bo = static_cast<int>(rng() % 4);
                // Small offsets so that contiguous (mergeable) requests are frequent.
                u64 off = rng() % 4 == 0 ? (s % 64) : rng() % 128;
                c.is_map = true;
                c.req_obj = bos[bo];
                c.req_offset = off * kPage;
                ASSERT_EQ(vm.map(s * kPage, len * kPage, bos[bo], off * kPage), 0);
                model_carve(model, s, s + len);
                model[s] = {s + len, bo, off};
                ASSERT_EQ(c.maps, 1);
            } else {
                ASSERT_EQ(vm.unmap(s * kPage, len * kPage), 0);
                model_carve(model, s, s + len);
                ASSERT_EQ(c.maps, 0);
            }
            ASSERT_LE(c.remaps, 2) << "op " << step;
            ASSERT_EQ(c.errors, 0) << "wrong keep flag at op " << step << " seed " << seed;
            if (step % 2000 == 0 || step == kOps - 1) {
                full_compare(step);
                if (HasFatalFailure())
                    return;
            }
        }
        vm.vm()->ops = inner;
    }
    for (drm_gem_object* bo : bos)
        drm_gem_object_put(bo);
}
