// Allocation accounting, failure injection, the physical arena, and the leak checker.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/task.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Memory : public kshim::testing::SweepableKernelTest {};

TEST_F(Memory, KmallocIsCountedAndKzallocZeroes) {
    long before = mem_counters().kmalloc_live;
    auto* p = static_cast<unsigned char*>(kzalloc(256, GFP_KERNEL));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 256; i++)
        ASSERT_EQ(p[i], 0);
    EXPECT_EQ(mem_counters().kmalloc_live, before + 1);
    kfree(p);
    EXPECT_EQ(mem_counters().kmalloc_live, before);
    kfree(nullptr);
}

struct alignas(64) CacheLineObj {
    int v;
    explicit CacheLineObj(int x) : v(x) {}
};

TEST_F(Memory, KnewOfAnOverAlignedTypeIsAlignedAndKdeleteFreesIt) {
    long before = mem_counters().kmalloc_live;
    // Several, so one 64-aligned by luck does not pass the test.
    CacheLineObj* objs[8];
    for (int i = 0; i < 8; i++) {
        objs[i] = knew<CacheLineObj>(GFP_KERNEL, i);
        ASSERT_NE(objs[i], nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(objs[i]) % 64, 0u);
        EXPECT_EQ(objs[i]->v, i);
    }
    EXPECT_EQ(mem_counters().kmalloc_live, before + 8);
    for (CacheLineObj* o : objs)
        kdelete(o);
    EXPECT_EQ(mem_counters().kmalloc_live, before);

    // kmalloc_aligned itself: zeroing, odd sizes, fault injection like kmalloc.
    auto* z = static_cast<unsigned char*>(kmalloc_aligned(100, 128, GFP_KERNEL | __GFP_ZERO));
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(z) % 128, 0u);
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(z[i], 0);
    kfree(z);
    fault_inject_arm({.fail_nth = 1});
    EXPECT_EQ(knew<CacheLineObj>(GFP_KERNEL, 1), nullptr);
    fault_inject_disarm();
    EXPECT_EQ(mem_counters().kmalloc_live, before);
}

TEST_F(Memory, KcallocRejectsOverflow) {
    EXPECT_EQ(kcalloc(SIZE_MAX / 2, 4, GFP_KERNEL), nullptr);
}

TEST_F(Memory, KmemCacheCountsLiveObjectsAndBulkIsAllOrNothing) {
    KmemCache* c = kmem_cache_create("test_objs", 48, 16, 0);
    void* objs[8];
    ASSERT_EQ(kmem_cache_alloc_bulk(c, GFP_KERNEL, 8, objs), 8);
    EXPECT_EQ(kmem_cache_live(c), 8u);
    for (void* o : objs)
        EXPECT_EQ(reinterpret_cast<uintptr_t>(o) % 16, 0u);
    kmem_cache_free_bulk(c, 8, objs);
    EXPECT_EQ(kmem_cache_live(c), 0u);

    fault_inject_arm({.fail_nth = 5, .only_cache = "test_objs"});
    EXPECT_EQ(kmem_cache_alloc_bulk(c, GFP_KERNEL, 8, objs), 0);
    EXPECT_EQ(kmem_cache_live(c), 0u);  // the four it got were given back
    fault_inject_disarm();
    kmem_cache_destroy(c);
}

TEST_F(Memory, DestroyingACacheWithLiveObjectsIsReported) {
    KmemCache* c = kmem_cache_create("leaky_cache", 32, 0, 0);
    void* o = kmem_cache_alloc(c, GFP_KERNEL);
    kmem_cache_destroy(c);
    EXPECT_TRUE(expect_report(ReportKind::Leak));
    ::operator delete(o, std::align_val_t(alignof(std::max_align_t)));  // the cache is gone; free by hand
}

TEST_F(Memory, FailureInjectionHitsExactlyTheNthAllocation) {
    fault_inject_arm({.fail_nth = 3});
    void* p[5];
    for (auto& x : p)
        x = kmalloc(16, GFP_KERNEL);
    EXPECT_NE(p[0], nullptr);
    EXPECT_NE(p[1], nullptr);
    EXPECT_EQ(p[2], nullptr);
    EXPECT_NE(p[3], nullptr);
    EXPECT_NE(p[4], nullptr);
    EXPECT_EQ(fault_inject_attempts(), 5u);
    EXPECT_EQ(fault_inject_failures(), 1u);
    fault_inject_disarm();
    for (void* x : p)
        kfree(x);
}

TEST_F(Memory, FailureInjectionCanBeLimitedToOneCacheAndToNonBlockingAllocations) {
    KmemCache* c = kmem_cache_create("target_cache", 16, 0, 0);
    fault_inject_arm({.fail_nth = 1, .only_cache = "target_cache"});
    void* k = kmalloc(8, GFP_KERNEL);  // another cache: not counted
    EXPECT_NE(k, nullptr);
    EXPECT_EQ(kmem_cache_alloc(c, GFP_KERNEL), nullptr);
    fault_inject_arm({.fail_nth = 1, .ignore_blocking = true});
    void* blocking = kmalloc(8, GFP_KERNEL);
    EXPECT_NE(blocking, nullptr);
    EXPECT_EQ(kmalloc(8, GFP_NOWAIT), nullptr);
    fault_inject_arm({.fail_nth = 1});
    void* nofail = kmalloc(8, GFP_NOWAIT | __GFP_NOFAIL);  // never failed on purpose
    EXPECT_NE(nofail, nullptr);
    kfree(nofail);
    fault_inject_disarm();
    kfree(k);
    kfree(blocking);
    kmem_cache_destroy(c);
}

// A work item that allocates once and records whether it got memory.
struct AllocatingWork {
    work_struct work;
    bool got = false;
    static void fn(work_struct* w) {
        auto* self = container_of(w, AllocatingWork, work);
        void* p = kmalloc(8, GFP_KERNEL);
        self->got = p != nullptr;
        kfree(p);
    }
};

TEST_F(Memory, TaskFilterFailsOnlyTheMarkedTasksAllocations) {
    fault_inject_arm({.probability = 1.0, .only_cache = "kmalloc", .task_filter = true});
    void* unmarked = kmalloc(8, GFP_KERNEL);
    EXPECT_NE(unmarked, nullptr) << "the test's task is not marked yet";
    kfree(unmarked);
    current()->make_it_fail = true;
    EXPECT_EQ(kmalloc(8, GFP_KERNEL), nullptr);
    // What the marked task hands to a worker allocates normally.
    AllocatingWork w;
    INIT_WORK(&w.work, AllocatingWork::fn);
    schedule_work(&w.work);
    flush_work(&w.work);
    EXPECT_TRUE(w.got);
    // Without the filter the same plan fails everyone.
    fault_inject_arm({.probability = 1.0, .only_cache = "kmalloc"});
    schedule_work(&w.work);
    flush_work(&w.work);
    EXPECT_FALSE(w.got);
    fault_inject_disarm();
    current()->make_it_fail = false;
    EXPECT_EQ(fault_inject_failures(), 1u);
}

TEST_F(Memory, ProbabilisticInjectionIsReproducibleFromItsSeed) {
    auto pattern = [](u64 seed) {
        fault_inject_arm({.probability = 0.3, .seed = seed});
        std::string s;
        for (int i = 0; i < 64; i++) {
            void* p = kmalloc(8, GFP_KERNEL);
            s += p ? '.' : 'x';
            kfree(p);
        }
        fault_inject_disarm();
        return s;
    };
    std::string a = pattern(7), b = pattern(7), c = pattern(8);
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    EXPECT_NE(a.find('x'), std::string::npos);
    EXPECT_NE(a.find('.'), std::string::npos);
}

TEST_F(Memory, PagesTranslateBothWaysBelowTheFortyBitLimit) {
    Page* p = alloc_pages(GFP_KERNEL | __GFP_ZERO, 9);  // 2 MiB
    ASSERT_NE(p, nullptr);
    phys_addr_t pa = page_to_phys(p);
    EXPECT_EQ(pa % (2u << 20), 0u);
    EXPECT_LT(pa + (2u << 20), 1ull << 40);
    EXPECT_EQ(phys_to_virt(pa + 4096), static_cast<char*>(page_address(p)) + 4096);
    EXPECT_EQ(virt_to_phys(static_cast<char*>(page_address(p)) + 123), pa + 123);
    EXPECT_EQ(phys_to_page(pa + 5000), virt_to_page(static_cast<char*>(page_address(p)) + 4096));
    EXPECT_TRUE(phys_range_valid(pa, 2u << 20));
    EXPECT_FALSE(phys_range_valid(0x1000, 8));
    EXPECT_FALSE(phys_range_valid(kPhysBase + kArenaSize - 4, 8));
    EXPECT_EQ(mem_counters().pages_live % 512, 0);
    __free_pages(p, 9);
}

TEST_F(Memory, MultiGigabyteAllocationsAreLazy) {
    Page* big = alloc_pages(GFP_KERNEL, 18);  // 1 GiB: address space only until touched
    ASSERT_NE(big, nullptr);
    static_cast<char*>(page_address(big))[(1u << 30) - 1] = 1;
    __free_pages(big, 18);
}

TEST_F(Memory, PageTablePoolGivesZeroedPagesAndHonoursInjection) {
    pt_pool_prefault(4);
    EXPECT_GE(pt_pool_available(), 4u);
    Page* p = pt_pool_alloc(GFP_NOWAIT);
    ASSERT_NE(p, nullptr);
    std::memset(page_address(p), 0xab, PAGE_SIZE);
    pt_pool_free(p);
    Page* q = pt_pool_alloc(GFP_NOWAIT);  // the same page back, zeroed again
    auto* bytes = static_cast<unsigned char*>(page_address(q));
    for (size_t i = 0; i < PAGE_SIZE; i++)
        ASSERT_EQ(bytes[i], 0);
    fault_inject_arm({.fail_nth = 1, .only_cache = "pt_pages"});
    EXPECT_EQ(pt_pool_alloc(GFP_NOWAIT), nullptr);
    fault_inject_disarm();
    pt_pool_free(q);
}

// The checker of the checks: a world that leaks must fail.
static KmemCache* g_leak_cache;
static void* g_leaked;
static void world_that_leaks_a_cache_object() {
    kshim::testing::TestWorld w(RuntimeOptions{});
    g_leaked = kmem_cache_alloc(g_leak_cache, GFP_KERNEL);
}

TEST(MemoryChecks, ALeakedKmemCacheObjectFailsTheTest) {
    g_leak_cache = kmem_cache_create("leak_checked", 64, 0, 0);
    EXPECT_NONFATAL_FAILURE(world_that_leaks_a_cache_object(), "kmem_cache leak_checked: 1 more live");
    kmem_cache_free(g_leak_cache, g_leaked);
    kmem_cache_destroy(g_leak_cache);
}

static void world_that_leaks_kmalloc() {
    kshim::testing::TestWorld w(RuntimeOptions{});
    g_leaked = kmalloc(10, GFP_KERNEL);
}

TEST(MemoryChecks, ALeakedKmallocFailsTheTest) {
    EXPECT_NONFATAL_FAILURE(world_that_leaks_kmalloc(), "kmalloc objects: 1 more live");
    kfree(g_leaked);
}

static Page* g_leaked_page;
static void world_that_leaks_pages() {
    kshim::testing::TestWorld w(RuntimeOptions{});
    g_leaked_page = alloc_pages(GFP_KERNEL, 1);
}

TEST(MemoryChecks, LeakedPagesFailTheTest) {
    EXPECT_NONFATAL_FAILURE(world_that_leaks_pages(), "pages: 2 more live");
    __free_pages(g_leaked_page, 1);
}

static void world_that_warns() {
    kshim::testing::TestWorld w(RuntimeOptions{.seed = 4242});
    WARN_ON(1 + 1 == 2);
}

TEST(MemoryChecks, AWarnFailsTheTestAndTheSeedIsPrinted) {
    ::testing::internal::CaptureStderr();
    EXPECT_NONFATAL_FAILURE(world_that_warns(), "WARN_ON(1 + 1 == 2)");
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("replay with KSHIM_SEED=4242"), std::string::npos) << err;
}

TEST_F(Memory, AllocPagesExactKeepsOnlyWhatWasAskedFor) {
    long before = mem_counters().pages_live;
    void* p = alloc_pages_exact(5 * PAGE_SIZE, GFP_KERNEL | __GFP_ZERO);  // an 8-page block, 3 given back
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(mem_counters().pages_live, before + 5);
    auto* bytes = static_cast<unsigned char*>(p);
    for (size_t i = 0; i < 5 * PAGE_SIZE; i += 512)
        ASSERT_EQ(bytes[i], 0);
    EXPECT_EQ(virt_to_phys(bytes + 4 * PAGE_SIZE), virt_to_phys(p) + 4 * PAGE_SIZE);  // contiguous
    free_pages_exact(p, 5 * PAGE_SIZE);
    EXPECT_EQ(mem_counters().pages_live, before);
    EXPECT_EQ(alloc_pages_exact(0, GFP_KERNEL), nullptr);
}

// __GFP_ZERO holds for blocks handed out before and dirtied, through both alloc_pages and
// alloc_pages_exact (a tiler heap's chunks are such blocks when a process creates a second device).
TEST_F(Memory, GfpZeroHoldsForReusedAndFreshBlocks) {
    auto all_zero = [](const void* p, size_t len) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < len; i++)
            if (b[i])
                return false;
        return true;
    };
    for (int round = 0; round < 2; round++) {
        SCOPED_TRACE(round);
        Page* dirty = alloc_pages(GFP_KERNEL, 4);
        ASSERT_NE(dirty, nullptr);
        std::memset(page_address(dirty), 0xA5, 16 * PAGE_SIZE);
        __free_pages(dirty, 4);
        Page* again = alloc_pages(GFP_KERNEL | __GFP_ZERO, 4);  // the same block, reused
        ASSERT_NE(again, nullptr);
        EXPECT_TRUE(all_zero(page_address(again), 16 * PAGE_SIZE));
        std::memset(page_address(again), 0x5A, 16 * PAGE_SIZE);
        __free_pages(again, 4);
        void* exact = alloc_pages_exact(9 * PAGE_SIZE, GFP_KERNEL | __GFP_ZERO);
        ASSERT_NE(exact, nullptr);
        EXPECT_TRUE(all_zero(exact, 9 * PAGE_SIZE));
        free_pages_exact(exact, 9 * PAGE_SIZE);
        // A 4 MiB block: fresh in the first round, the first round's dirtied one in the second.
        Page* fresh = alloc_pages(GFP_KERNEL | __GFP_ZERO, 10);
        ASSERT_NE(fresh, nullptr);
        EXPECT_TRUE(all_zero(page_address(fresh), 1024 * PAGE_SIZE));
        std::memset(page_address(fresh), 0x33, 1024 * PAGE_SIZE);
        __free_pages(fresh, 10);
    }
}

// __GFP_ZERO clears only the pages that may hold data (kernel_shim/page_alloc.cpp): pages never
// handed out, or returned to the host, are skipped; of a block with many touched pages, those the
// host has no page behind too. Whatever the mix, every byte of a zeroed allocation reads zero:
// here some pages of a block are dirtied in patterns across and inside the 64-page words the
// allocator tracks (a few pages, many, runs, the last page of a word), and the block or parts of
// it are allocated again with __GFP_ZERO.
TEST_F(Memory, GfpZeroClearsEveryDirtiedPageWhateverTheMix) {
    auto first_nonzero = [](const void* p, size_t len) -> long {
        const auto* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < len; i++)
            if (b[i])
                return static_cast<long>(i / PAGE_SIZE);
        return -1;
    };
    constexpr unsigned kOrder = 8;  // 256 pages: four words of the allocator's bitmap
    constexpr size_t kPages = size_t{1} << kOrder;
    const std::vector<std::vector<size_t>> patterns = {
        {0},
        {63, 64},                                             // both sides of a word boundary
        {1, 5, 9},                                            // fewer than the host is asked about
        {0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 62, 63},  // many, scattered
        {},                                                   // claimed before but never written
    };
    for (size_t pi = 0; pi < patterns.size(); pi++) {
        SCOPED_TRACE(pi);
        Page* block = alloc_pages(GFP_KERNEL, kOrder);
        ASSERT_NE(block, nullptr);
        auto* bytes = static_cast<unsigned char*>(page_address(block));
        for (size_t page : patterns[pi]) {
            for (size_t w = 0; w < 4; w++) {  // the same pattern in each word, the last byte too
                bytes[(page + 64 * w) * PAGE_SIZE + (pi * 517) % PAGE_SIZE] = 0xC3;
                bytes[(page + 64 * w + 1) * PAGE_SIZE - 1] = 1;
            }
        }
        for (size_t run = 100; run < 140; run++)  // a run across the second word boundary
            std::memset(bytes + run * PAGE_SIZE, 0x7E, PAGE_SIZE);
        __free_pages(block, kOrder);
        Page* again = alloc_pages(GFP_KERNEL | __GFP_ZERO, kOrder);  // the same block
        ASSERT_EQ(again, block);
        EXPECT_EQ(first_nonzero(page_address(again), kPages * PAGE_SIZE), -1);
        // Dirty it all, and take part of it back through alloc_pages_exact at an odd size.
        std::memset(page_address(again), 0x11, kPages * PAGE_SIZE);
        __free_pages(again, kOrder);
        void* exact = alloc_pages_exact(77 * PAGE_SIZE, GFP_KERNEL | __GFP_ZERO);
        ASSERT_NE(exact, nullptr);
        EXPECT_EQ(first_nonzero(exact, 77 * PAGE_SIZE), -1);
        free_pages_exact(exact, 77 * PAGE_SIZE);
    }
    // A block given back to the host (16 MiB and up) comes back zeroed by it.
    Page* big = alloc_pages(GFP_KERNEL, 12);
    ASSERT_NE(big, nullptr);
    auto* big_bytes = static_cast<unsigned char*>(page_address(big));
    for (size_t page = 0; page < 4096; page += 97)
        big_bytes[page * PAGE_SIZE + 3] = 0x42;
    __free_pages(big, 12);
    Page* big_again = alloc_pages(GFP_KERNEL | __GFP_ZERO, 12);
    ASSERT_NE(big_again, nullptr);
    EXPECT_EQ(first_nonzero(page_address(big_again), 4096 * PAGE_SIZE), -1);
    __free_pages(big_again, 12);
}

// How many top-order (1 GiB) blocks the arena can hand out right now; address space only.
static int count_top_order_blocks() {
    std::vector<Page*> blocks;
    while (Page* p = alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER))
        blocks.push_back(p);
    for (Page* p : blocks)
        __free_pages(p, MAX_PAGE_ORDER);
    return static_cast<int>(blocks.size());
}

TEST_F(Memory, FreedBlocksMergeWithTheirBuddiesSoFragmentationIsUndone) {
    const unsigned long free_before = nr_free_pages();
    const int top_before = count_top_order_blocks();
    ASSERT_GT(top_before, 0);

    // Blocks of mixed orders and odd exact sizes, freed in an order unrelated to the allocation.
    struct Block {
        void* p;
        unsigned order;  // for alloc_pages
        size_t exact;    // for alloc_pages_exact, 0 otherwise
    };
    std::vector<Block> blocks;
    for (unsigned i = 0; i < 600; i++) {
        if (i % 3 == 0) {
            const size_t bytes = (1 + (i * 7) % 13) * PAGE_SIZE;
            blocks.push_back({alloc_pages_exact(bytes, GFP_KERNEL), 0, bytes});
        } else {
            const unsigned order = (i * 5) % 6;
            blocks.push_back({page_address(alloc_pages(GFP_KERNEL, order)), order, 0});
        }
        ASSERT_NE(blocks.back().p, nullptr);
    }
    EXPECT_LT(nr_free_pages(), free_before);
    for (size_t i = 0; i < blocks.size(); i++)
        std::swap(blocks[i], blocks[(i * 389) % blocks.size()]);
    for (const Block& b : blocks) {
        if (b.exact) {
            // Given back one page at a time, as a caller may free parts of an exact run.
            for (size_t off = 0; off < b.exact; off += PAGE_SIZE)
                free_pages_exact(static_cast<char*>(b.p) + off, PAGE_SIZE);
        } else {
            __free_pages(virt_to_page(b.p), b.order);
        }
    }

    EXPECT_EQ(nr_free_pages(), free_before);
    // Every small block merged back: the arena holds as many 1 GiB blocks as before.
    EXPECT_EQ(count_top_order_blocks(), top_before);
}

TEST_F(Memory, AFreedPageIsReusedBeforeTheArenaGrows) {
    // Repeated allocate-and-free of every small order keeps to the same few blocks: the free
    // page count does not drift, and the first page comes back for the same request.
    Page* first = alloc_page(GFP_KERNEL);
    ASSERT_NE(first, nullptr);
    __free_page(first);
    const unsigned long free_before = nr_free_pages();
    for (int round = 0; round < 1000; round++) {
        Page* p = alloc_pages(GFP_KERNEL, round % 7);
        ASSERT_NE(p, nullptr);
        __free_pages(p, round % 7);
    }
    EXPECT_EQ(nr_free_pages(), free_before);
    Page* again = alloc_page(GFP_KERNEL);
    EXPECT_EQ(again, first);
    __free_page(again);
}

TEST_F(Memory, KrefPutMutexReleasesUnderTheLock) {
    Mutex m("kref.put.lock");
    kref k;
    kref_init(&k);
    kref_get(&k);
    bool held_in_release = false;
    auto release = [&](kref*) {
        held_in_release = m.is_locked();
        m.unlock();
    };
    EXPECT_EQ(kref_put_mutex(&k, release, &m), 0);
    EXPECT_FALSE(m.is_locked());
    EXPECT_EQ(kref_put_mutex(&k, release, &m), 1);
    EXPECT_TRUE(held_in_release);
}
