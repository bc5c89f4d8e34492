// GEM objects: refcounting, handles, mmap offsets, shared resv, shmem backing (pages, sgt, pin,
// vmap) and the errno of every rejected input.
#include <gtest/gtest.h>

#include <cstring>

#include "drm/drm_gem_shmem_helper.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/report.h"
#include "tests/support/kernel_test.h"

using namespace drm;
using namespace kshim;

namespace {
constexpr u64 kPage = PAGE_SIZE;

drm_gem_shmem_object* create(u64 size, drm_vma_offset_manager* mgr = nullptr) {
    drm_gem_shmem_object* shmem = nullptr;
    EXPECT_EQ(drm_gem_shmem_create(mgr, size, &shmem), 0);
    return shmem;
}
}  // namespace

class Gem : public kshim::testing::KernelTest {};

TEST_F(Gem, SizeIsPageAlignedAndZeroIsRejected) {
    drm_gem_shmem_object* shmem = create(kPage + 1);
    EXPECT_EQ(shmem->base.size, 2 * kPage);
    drm_gem_object_put(&shmem->base);
    drm_gem_shmem_object* none = nullptr;
    EXPECT_EQ(drm_gem_shmem_create(nullptr, 0, &none), -EINVAL);
    EXPECT_EQ(drm_gem_shmem_create(nullptr, ~u64{0}, &none), -EINVAL);
    EXPECT_EQ(none, nullptr);
    drm_gem_object raw;
    EXPECT_EQ(drm_gem_object_init(nullptr, &raw, kPage + 8), -EINVAL);
}

// Upstream's private-object pair: init without backing storage, fini undoes only that (the
// error path of a driver whose own setup failed after init).
TEST_F(Gem, PrivateObjectInitAndFini) {
    drm_gem_object obj;
    drm_gem_private_object_init(nullptr, &obj, 2 * kPage);
    EXPECT_EQ(obj.dev, nullptr);
    EXPECT_EQ(obj.size, 2 * kPage);
    EXPECT_EQ(kref_read(&obj.refcount), 1u);
    EXPECT_EQ(obj.resv, &obj._resv);
    EXPECT_EQ(obj.vma_offset_manager, nullptr);
    // The resv works and its fences go with fini (the leak check at teardown sees them freed).
    dma_resv_lock(obj.resv, nullptr);
    ASSERT_EQ(dma_resv_reserve_fences(obj.resv, 1), 0);
    dma_resv_unlock(obj.resv);
    EXPECT_NE(obj._resv.fences, nullptr);
    drm_gem_private_object_fini(&obj);
    EXPECT_EQ(obj._resv.fences, nullptr);
    EXPECT_EQ(pending_report_count(), 0u);

    // Size 0 is fine (drm_gpuvm's resv object); a size that is not page-aligned is a caller
    // bug: upstream BUG()s, here it WARNs and leaves the object alone.
    drm_gem_object dummy;
    drm_gem_private_object_init(nullptr, &dummy, 0);
    drm_gem_private_object_fini(&dummy);
    drm_gem_object bad;
    drm_gem_private_object_init(nullptr, &bad, kPage + 8);
    EXPECT_TRUE(consume_report(ReportKind::Warn));
    EXPECT_EQ(bad.size, 0u);
    EXPECT_EQ(bad.resv, nullptr);
}

TEST_F(Gem, LastPutFreesTheObject) {
    drm_gem_shmem_object* shmem = create(4 * kPage);
    drm_gem_object_get(&shmem->base);
    EXPECT_EQ(kref_read(&shmem->base.refcount), 2u);
    drm_gem_object_put(&shmem->base);
    drm_gem_object_put(&shmem->base);  // the leak check at teardown sees it gone
}

TEST_F(Gem, HandlesStartAtOneAndHoldAReference) {
    GemHandleTable table;
    drm_gem_shmem_object* a = create(kPage);
    drm_gem_shmem_object* b = create(kPage);
    u32 ha = 0, hb = 0, ha2 = 0;
    ASSERT_EQ(table.handle_create(&a->base, &ha), 0);
    ASSERT_EQ(table.handle_create(&b->base, &hb), 0);
    ASSERT_EQ(table.handle_create(&a->base, &ha2), 0);  // a second handle to the same object
    EXPECT_EQ(ha, 1u);
    EXPECT_EQ(hb, 2u);
    EXPECT_EQ(ha2, 3u);
    EXPECT_EQ(a->base.handle_count.load(), 2u);
    drm_gem_object_put(&a->base);
    drm_gem_object_put(&b->base);

    drm_gem_object* obj = table.lookup(ha);
    ASSERT_EQ(obj, &a->base);
    EXPECT_EQ(kref_read(&obj->refcount), 3u);  // two handles + the lookup
    drm_gem_object_put(obj);
    EXPECT_EQ(table.lookup(0), nullptr);
    EXPECT_EQ(table.lookup(99), nullptr);

    // GEM_CLOSE: unknown handles are -EINVAL, a closed one too.
    EXPECT_EQ(table.handle_delete(0), -EINVAL);
    EXPECT_EQ(table.handle_delete(77), -EINVAL);
    EXPECT_EQ(table.handle_delete(hb), 0);
    EXPECT_EQ(table.handle_delete(hb), -EINVAL);
    // The freed id is reused (lowest free, as idr_alloc).
    drm_gem_shmem_object* c = create(kPage);
    u32 hc = 0;
    ASSERT_EQ(table.handle_create(&c->base, &hc), 0);
    EXPECT_EQ(hc, 2u);
    drm_gem_object_put(&c->base);
    EXPECT_EQ(table.count(), 3u);
    table.release();  // file close drops the rest; teardown proves the objects were freed
    EXPECT_EQ(table.count(), 0u);
}

TEST_F(Gem, HandleCreationFailureLeavesNoReference) {
    GemHandleTable table;
    drm_gem_shmem_object* a = create(kPage);
    fault_inject_arm({.fail_nth = 1, .only_cache = "xarray"});
    u32 h = 0;
    EXPECT_EQ(table.handle_create(&a->base, &h), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(kref_read(&a->base.refcount), 1u);
    EXPECT_EQ(a->base.handle_count.load(), 0u);
    drm_gem_object_put(&a->base);
}

TEST_F(Gem, FakeMmapOffsetsAreUniqueAbove4GiBAndFoundByLookup) {
    drm_vma_offset_manager mgr;
    drm_vma_offset_manager_init(&mgr, DRM_FILE_PAGE_OFFSET_START, DRM_FILE_PAGE_OFFSET_SIZE);
    drm_gem_shmem_object* a = create(3 * kPage, &mgr);
    drm_gem_shmem_object* b = create(kPage, &mgr);
    EXPECT_EQ(drm_vma_node_offset_addr(&a->base.vma_node), 0u);
    ASSERT_EQ(drm_gem_create_mmap_offset(&a->base), 0);
    ASSERT_EQ(drm_gem_create_mmap_offset(&a->base), 0);  // idempotent
    ASSERT_EQ(drm_gem_create_mmap_offset(&b->base), 0);
    u64 oa = drm_vma_node_offset_addr(&a->base.vma_node);
    u64 ob = drm_vma_node_offset_addr(&b->base.vma_node);
    EXPECT_GE(oa, u64{1} << 32);
    EXPECT_GE(ob, u64{1} << 32);
    EXPECT_LT(oa, (u64{1} << 32) + (u64{1} << 40));
    EXPECT_TRUE(ob >= oa + 3 * kPage || ob + kPage <= oa);
    EXPECT_EQ(drm_vma_node_size(&a->base.vma_node), 3u);

    drm_gem_object* found = drm_gem_object_lookup_at_offset(&mgr, oa + kPage, kPage);
    EXPECT_EQ(found, &a->base);
    drm_gem_object_put(found);
    EXPECT_EQ(drm_gem_object_lookup_at_offset(&mgr, oa + 2 * kPage, 2 * kPage), nullptr);  // runs past a
    EXPECT_EQ(drm_gem_object_lookup_at_offset(&mgr, u64{1} << 20, kPage), nullptr);

    drm_gem_object_put(&a->base);  // frees its offset
    EXPECT_EQ(drm_gem_object_lookup_at_offset(&mgr, oa, kPage), nullptr);
    drm_gem_object_put(&b->base);
    drm_vma_offset_manager_destroy(&mgr);

    drm_gem_shmem_object* c = create(kPage);
    EXPECT_EQ(drm_gem_create_mmap_offset(&c->base), -ENODEV);  // no manager
    drm_gem_object_put(&c->base);
}

TEST_F(Gem, SharedResvLocksTogether) {
    drm_gem_shmem_object* owner = create(kPage);
    drm_gem_shmem_object* priv = create(kPage);
    priv->base.resv = owner->base.resv;  // what panthor does for a VM-private BO
    dma_resv_lock(owner->base.resv, nullptr);
    EXPECT_TRUE(dma_resv_is_locked(priv->base.resv));
    dma_resv_unlock(owner->base.resv);
    drm_gem_object_put(&priv->base);
    drm_gem_object_put(&owner->base);
}

TEST_F(Gem, PagesAreAllocatedOnFirstNeedZeroedAndCounted) {
    const MemCounters before = mem_counters();
    drm_gem_shmem_object* shmem = create(5 * kPage);
    EXPECT_EQ(shmem->pages, nullptr);
    EXPECT_EQ(mem_counters().pages_live, before.pages_live);
    ASSERT_EQ(drm_gem_shmem_pin(shmem), 0);
    EXPECT_EQ(mem_counters().pages_live, before.pages_live + 5);  // the tail of the 8-page block went back
    EXPECT_EQ(shmem->pages_pin_count, 1u);
    EXPECT_EQ(shmem->pages_use_count, 1u);
    for (u64 i = 0; i < 5; i++) {
        const unsigned char* p = static_cast<const unsigned char*>(page_address(shmem->pages[i]));
        for (u64 j = 0; j < kPage; j += 64)
            ASSERT_EQ(p[j], 0) << "page " << i;
    }
    ASSERT_EQ(drm_gem_shmem_pin(shmem), 0);
    EXPECT_EQ(shmem->pages_pin_count, 2u);
    drm_gem_shmem_unpin(shmem);
    drm_gem_shmem_unpin(shmem);
    EXPECT_EQ(shmem->pages, nullptr);  // the last unpin releases them: no longer resident
    EXPECT_EQ(drm_gem_shmem_object_status(&shmem->base), 0u);
    // ... but, as pages back in the object's shmem file, still in memory until the object goes.
    EXPECT_EQ(mem_counters().pages_live, before.pages_live + 5);
    drm_gem_shmem_unpin(shmem);  // unbalanced
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    drm_gem_object_put(&shmem->base);
    EXPECT_EQ(mem_counters().pages_live, before.pages_live);
}

// Upstream's put_pages hands the pages back to the shmem file, not to the allocator: what was
// written stays, and the next get_pages (a new pin, a new mmap) finds it.
TEST_F(Gem, ContentsSurviveTheLastUnpinAndComeBackWithTheNextPin) {
    drm_gem_shmem_object* shmem = create(3 * kPage);
    ASSERT_EQ(drm_gem_shmem_pin(shmem), 0);
    const phys_addr_t phys = page_to_phys(shmem->pages[2]);
    static_cast<unsigned char*>(page_address(shmem->pages[2]))[7] = 0xA5;
    drm_gem_shmem_unpin(shmem);
    ASSERT_EQ(shmem->pages, nullptr);
    ASSERT_EQ(drm_gem_shmem_pin(shmem), 0);
    EXPECT_EQ(page_to_phys(shmem->pages[2]), phys);
    EXPECT_EQ(static_cast<unsigned char*>(page_address(shmem->pages[2]))[7], 0xA5);
    EXPECT_EQ(drm_gem_shmem_object_status(&shmem->base), static_cast<unsigned>(DRM_GEM_OBJECT_RESIDENT));
    drm_gem_shmem_unpin(shmem);
    drm_gem_object_put(&shmem->base);
}

TEST_F(Gem, SgtIsOneSegmentAndVmapIsTheMemoryTheGpuSees) {
    drm_gem_shmem_object* shmem = create(7 * kPage);
    SgTable* sgt = nullptr;
    ASSERT_EQ(drm_gem_shmem_get_pages_sgt(shmem, &sgt), 0);
    ASSERT_NE(sgt, nullptr);
    ASSERT_EQ(sgt->nents, 1u);
    EXPECT_EQ(sg_dma_len(&sgt->sgl[0]), 7 * kPage);
    EXPECT_EQ(sg_dma_address(&sgt->sgl[0]), page_to_phys(shmem->pages[0]));
    SgTable* again = nullptr;
    ASSERT_EQ(drm_gem_shmem_get_pages_sgt(shmem, &again), 0);
    EXPECT_EQ(again, sgt);  // cached

    IosysMap map;
    ASSERT_EQ(drm_gem_vmap(&shmem->base, &map), 0);
    ASSERT_NE(map.vaddr, nullptr);
    // Write across a page boundary through the CPU view and read it back by physical address,
    // the way the mock GPU does.
    char* cpu = static_cast<char*>(map.vaddr);
    std::memcpy(cpu + kPage - 3, "abcdef", 6);
    const char* phys_view = static_cast<const char*>(phys_to_virt(sg_dma_address(&sgt->sgl[0]) + kPage - 3));
    EXPECT_EQ(std::memcmp(phys_view, "abcdef", 6), 0);
    std::memcpy(static_cast<char*>(phys_to_virt(sg_dma_address(&sgt->sgl[0]) + 6 * kPage)), "gpu", 3);
    EXPECT_EQ(std::memcmp(cpu + 6 * kPage, "gpu", 3), 0);

    IosysMap map2;
    ASSERT_EQ(drm_gem_vmap(&shmem->base, &map2), 0);
    EXPECT_EQ(map2.vaddr, map.vaddr);
    EXPECT_EQ(shmem->vmap_use_count, 2u);
    drm_gem_vunmap(&shmem->base, &map2);
    drm_gem_vunmap(&shmem->base, &map);
    EXPECT_EQ(shmem->vmap_use_count, 0u);
    EXPECT_EQ(shmem->vaddr, nullptr);
    EXPECT_NE(shmem->pages, nullptr);  // the sgt keeps its pages until the object goes
    drm_gem_object_put(&shmem->base);
}

TEST_F(Gem, SgtMergesOnlyContiguousPages) {
    // Hand-build a backing whose blocks are not adjacent, as an object larger than the largest
    // block gets: [p0 p1] [q0]. The sgt has two segments and vmap refuses (no linear view).
    drm_gem_shmem_object* shmem = create(3 * kPage);
    dma_resv_lock(shmem->base.resv, nullptr);
    ASSERT_EQ(drm_gem_shmem_get_pages_locked(shmem), 0);
    Page* extra = alloc_pages(GFP_KERNEL | __GFP_ZERO, 0);
    Page* saved = shmem->pages[2];
    shmem->pages[2] = extra;
    dma_resv_unlock(shmem->base.resv);

    SgTable* sgt = nullptr;
    ASSERT_EQ(drm_gem_shmem_get_pages_sgt(shmem, &sgt), 0);
    ASSERT_EQ(sgt->nents, 2u);
    EXPECT_EQ(sg_dma_len(&sgt->sgl[0]), 2 * kPage);
    EXPECT_EQ(sg_dma_address(&sgt->sgl[1]), page_to_phys(extra));
    IosysMap map;
    EXPECT_EQ(drm_gem_vmap(&shmem->base, &map), -ENOMEM);
    EXPECT_EQ(shmem->vmap_use_count, 0u);

    dma_resv_lock(shmem->base.resv, nullptr);
    shmem->pages[2] = saved;
    dma_resv_unlock(shmem->base.resv);
    __free_pages(extra, 0);
    dma_resv_lock(shmem->base.resv, nullptr);
    drm_gem_shmem_put_pages_locked(shmem);
    dma_resv_unlock(shmem->base.resv);
    drm_gem_object_put(&shmem->base);
}

TEST_F(Gem, PageAllocationFailureIsEnomemAndLeavesNothing) {
    drm_gem_shmem_object* shmem = create(4 * kPage);
    fault_inject_arm({.fail_nth = 1, .only_cache = "pages"});
    EXPECT_EQ(drm_gem_shmem_pin(shmem), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(shmem->pages, nullptr);
    EXPECT_EQ(shmem->pages_use_count, 0u);
    EXPECT_EQ(shmem->pages_pin_count, 0u);
    SgTable* sgt = nullptr;
    fault_inject_arm({.fail_nth = 2, .only_cache = "kmalloc"});  // a later allocation of the path
    int ret = drm_gem_shmem_get_pages_sgt(shmem, &sgt);
    fault_inject_disarm();
    EXPECT_EQ(ret, -ENOMEM);
    EXPECT_EQ(shmem->pages, nullptr);
    ASSERT_EQ(drm_gem_shmem_get_pages_sgt(shmem, &sgt), 0);
    drm_gem_object_put(&shmem->base);
}

TEST_F(Gem, PagesOfOddSizesComeBackWhole) {
    const MemCounters before = mem_counters();
    for (u64 pages : {1u, 2u, 3u, 17u, 100u, 513u}) {
        drm_gem_shmem_object* shmem = create(pages * kPage);
        ASSERT_EQ(drm_gem_shmem_pin(shmem), 0);
        EXPECT_EQ(mem_counters().pages_live, before.pages_live + static_cast<long>(pages));
        for (u64 i = 1; i < pages; i++)
            ASSERT_EQ(page_to_phys(shmem->pages[i]), page_to_phys(shmem->pages[0]) + i * kPage);
        drm_gem_shmem_unpin(shmem);
        drm_gem_object_put(&shmem->base);
        EXPECT_EQ(mem_counters().pages_live, before.pages_live);
    }
}
