// Mirrors mm/page_alloc.c: a buddy allocator over the physical arena.
//
// As the kernel's: free blocks sit on per-order lists, a freed block merges with its free buddy
// as far up as it can, and a request splits the smallest free block that fits. Without the
// merging, memory freed in small blocks could never serve a larger request, and a long run (a
// fuzzing campaign frees and allocates millions of times) would touch ever more of the arena.
// The per-page metadata plays struct page: its own reservation, touched only for the pages that
// have headed a free block. Blocks of 16 MiB and more are returned to the host when freed
// (MADV_DONTNEED, or a hole punched in the memfd) so that multi-GiB tests do not pin memory;
// smaller ones stay resident for the next request, since faulting a BO's pages back in on every
// pin cost a third of a fuzzing run's time.
#include "kernel_shim/page_alloc.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/report.h"

namespace kshim {
namespace page_accounting {
std::atomic<long> live_pages{0};
}

namespace {
// Set by page_arena_use_memfd before the arena exists; read once by its constructor.
std::atomic<bool> g_want_memfd{false};
std::atomic<bool> g_arena_made{false};

// Freed blocks of this order and up go back to the host (16 MiB).
constexpr unsigned kReturnToHostOrder = 12;

using pfn_t = u32;  // page index inside the arena (2^24 pages)
constexpr pfn_t kNoPage = ~pfn_t{0};
constexpr u64 kArenaPages = kArenaSize >> PAGE_SHIFT;
static_assert(kArenaPages <= kNoPage, "page indices must fit the metadata's links");

// What struct page keeps for the buddy allocator: the free-list links and the order of a free
// block's first page. `buddy` is set only while the page heads a free block (PageBuddy).
struct PageMeta {
    pfn_t prev;
    pfn_t next;
    u8 order;
    bool buddy;
};

void* reserve(u64 bytes, int fd) {
    void* p = fd >= 0
                  ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0)
                  : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("kshim: reserving the physical arena");
        std::abort();
    }
    return p;
}

struct Arena {
    char* base = nullptr;
    int memfd = -1;
    std::mutex lock;  // protects meta and free_area
    PageMeta* meta = nullptr;
    pfn_t free_area[MAX_PAGE_ORDER + 1];  // list heads, kNoPage when empty
    u64 nr_free = 0;                      // pages in all free blocks (NR_FREE_PAGES)

    Arena() {
        g_arena_made.store(true);
        if (g_want_memfd.load()) {
            // A sparse file: pages exist once touched, as with the anonymous mapping.
            memfd = memfd_create("upanthor-phys", MFD_CLOEXEC);
            if (memfd < 0 || ftruncate(memfd, static_cast<off_t>(kArenaSize)) != 0) {
                std::perror("kshim: creating the arena memfd");
                std::abort();
            }
        }
        base = static_cast<char*>(reserve(kArenaSize, memfd));
        meta = static_cast<PageMeta*>(reserve(kArenaPages * sizeof(PageMeta), -1));
        std::fill(std::begin(free_area), std::end(free_area), kNoPage);
        // The whole arena starts as free top-order blocks, the lowest address at the list's head.
        for (u64 pfn = kArenaPages; pfn > 0;) {
            pfn -= u64{1} << MAX_PAGE_ORDER;
            add_to_free_list(static_cast<pfn_t>(pfn), MAX_PAGE_ORDER);
        }
    }

    void add_to_free_list(pfn_t pfn, unsigned order) {
        PageMeta& m = meta[pfn];
        m = {kNoPage, free_area[order], static_cast<u8>(order), true};
        if (m.next != kNoPage)
            meta[m.next].prev = pfn;
        free_area[order] = pfn;
        nr_free += u64{1} << order;
    }

    void del_from_free_list(pfn_t pfn, unsigned order) {
        PageMeta& m = meta[pfn];
        if (m.prev != kNoPage)
            meta[m.prev].next = m.next;
        else
            free_area[order] = m.next;
        if (m.next != kNoPage)
            meta[m.next].prev = m.prev;
        m.buddy = false;
        nr_free -= u64{1} << order;
    }

    bool page_is_buddy(pfn_t pfn, unsigned order) const { return meta[pfn].buddy && meta[pfn].order == order; }
};

Arena& arena() {
    static Arena* a = new Arena();  // lives for the process: pages may outlive static destructors
    return *a;
}

// Takes the first block of the smallest non-empty order that fits and splits it down, as
// __rmqueue_smallest and expand do: each split leaves the upper half free one order lower.
// nullptr when no block is large enough.
void* take_block(unsigned order) {
    Arena& a = arena();
    std::lock_guard g(a.lock);
    unsigned current = order;
    while (current <= MAX_PAGE_ORDER && a.free_area[current] == kNoPage)
        current++;
    if (current > MAX_PAGE_ORDER)
        return nullptr;
    const pfn_t pfn = a.free_area[current];
    a.del_from_free_list(pfn, current);
    while (current > order) {
        current--;
        a.add_to_free_list(pfn + (pfn_t{1} << current), current);
    }
    return a.base + (u64{pfn} << PAGE_SHIFT);
}

// Gives a block back and merges it with its buddy for as long as the buddy is free and whole,
// as __free_one_page does.
void give_block(void* p, unsigned order) {
    Arena& a = arena();
    if (order >= kReturnToHostOrder) {
        // MADV_DONTNEED does not free a shared mapping's file pages: punch them out instead.
        if (a.memfd >= 0)
            fallocate(a.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<char*>(p) - a.base,
                      static_cast<off_t>(PAGE_SIZE << order));
        else
            madvise(p, PAGE_SIZE << order, MADV_DONTNEED);
    }
    pfn_t pfn = static_cast<pfn_t>(static_cast<u64>(static_cast<char*>(p) - a.base) >> PAGE_SHIFT);
    std::lock_guard g(a.lock);
    // Freeing a block that is free already is the kernel's "Bad page state".
    BUG_ON(a.meta[pfn].buddy);
    BUG_ON(pfn & ((pfn_t{1} << order) - 1));
    while (order < MAX_PAGE_ORDER) {
        const pfn_t buddy = pfn ^ (pfn_t{1} << order);
        if (!a.page_is_buddy(buddy, order))
            break;
        a.del_from_free_list(buddy, order);
        pfn = std::min(pfn, buddy);
        order++;
    }
    a.add_to_free_list(pfn, order);
}

}  // namespace

int page_arena_use_memfd() {
    if (g_arena_made.load())
        return arena().memfd >= 0 ? 0 : -EBUSY;
    g_want_memfd.store(true);
    return arena().memfd >= 0 ? 0 : -EBUSY;
}

unsigned long nr_free_pages() {
    Arena& a = arena();
    std::lock_guard g(a.lock);
    return a.nr_free;
}

int page_arena_memfd() {
    return g_arena_made.load() ? arena().memfd : -1;
}

namespace {
struct PtPool {
    std::mutex lock;  // protects pages
    std::vector<void*> pages;
};
PtPool& pt_pool() {
    static PtPool* p = new PtPool();
    return *p;
}
}  // namespace

Page* alloc_pages(gfp_t gfp, unsigned order) {
    might_alloc(gfp);
    if (order > MAX_PAGE_ORDER || should_fail_alloc("pages", gfp))
        return nullptr;
    void* p = take_block(order);
    if (!p) {
        if (!(gfp & __GFP_NOWARN))
            std::fprintf(stderr, "kshim: page allocation failure: order:%u\n", order);
        return nullptr;
    }
    if (gfp & __GFP_ZERO)
        std::memset(p, 0, PAGE_SIZE << order);
    page_accounting::live_pages.fetch_add(long{1} << order, std::memory_order_relaxed);
    return static_cast<Page*>(p);
}

void __free_pages(Page* page, unsigned order) {
    if (!page)
        return;
    BUG_ON(!phys_range_valid(page_to_phys(page), PAGE_SIZE << order));
    page_accounting::live_pages.fetch_sub(long{1} << order, std::memory_order_relaxed);
    give_block(page, order);
}

namespace {
// Frees [pfn, pfn + count) as naturally aligned power-of-two blocks, largest first.
void free_pfn_range(u64 pfn, u64 count) {
    while (count) {
        unsigned order = std::min<unsigned>(std::bit_width(count) - 1, MAX_PAGE_ORDER);
        while (order && (pfn & ((u64{1} << order) - 1)))
            order--;
        __free_pages(phys_to_page(pfn << PAGE_SHIFT), order);
        pfn += u64{1} << order;
        count -= u64{1} << order;
    }
}
}  // namespace

void* alloc_pages_exact(size_t size, gfp_t gfp) {
    const u64 npages = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
    if (npages == 0 || npages > (u64{1} << MAX_PAGE_ORDER))
        return nullptr;
    const unsigned order = static_cast<unsigned>(std::bit_width(npages - 1));  // ceil(log2)
    Page* block = alloc_pages(gfp & ~__GFP_ZERO, order);
    if (!block)
        return nullptr;
    free_pfn_range((page_to_phys(block) >> PAGE_SHIFT) + npages, (u64{1} << order) - npages);
    if (gfp & __GFP_ZERO)
        std::memset(block, 0, npages * PAGE_SIZE);
    return block;
}

void free_pages_exact(void* virt, size_t size) {
    if (!virt)
        return;
    free_pfn_range(virt_to_phys(virt) >> PAGE_SHIFT, (size + PAGE_SIZE - 1) >> PAGE_SHIFT);
}

phys_addr_t page_to_phys(const Page* page) {
    return virt_to_phys(page);
}
Page* phys_to_page(phys_addr_t phys) {
    return static_cast<Page*>(phys_to_virt(phys & PAGE_MASK));
}

void* phys_to_virt(phys_addr_t phys) {
    return arena().base + (phys - kPhysBase);
}

phys_addr_t virt_to_phys(const void* addr) {
    return kPhysBase + static_cast<u64>(static_cast<const char*>(addr) - arena().base);
}

bool phys_range_valid(phys_addr_t phys, u64 len) {
    return phys >= kPhysBase && len <= kArenaSize && phys - kPhysBase <= kArenaSize - len;
}

void pt_pool_prefault(size_t n) {
    std::vector<void*> fresh;
    fresh.reserve(n);
    for (size_t i = 0; i < n; i++) {
        void* p = take_block(0);
        if (!p)
            break;
        std::memset(p, 0, PAGE_SIZE);  // the first touch faults the page in, here and not later
        fresh.push_back(p);
    }
    PtPool& pool = pt_pool();
    std::lock_guard g(pool.lock);
    pool.pages.insert(pool.pages.end(), fresh.begin(), fresh.end());
}

Page* pt_pool_alloc(gfp_t gfp) {
    Page* page = pt_pool_alloc_raw(gfp);
    if (page)
        std::memset(page_address(page), 0, PAGE_SIZE);
    return page;
}

Page* pt_pool_alloc_raw(gfp_t gfp) {
    might_alloc(gfp);
    if (should_fail_alloc("pt_pages", gfp))
        return nullptr;
    PtPool& pool = pt_pool();
    void* p = nullptr;
    {
        std::lock_guard g(pool.lock);
        if (!pool.pages.empty()) {
            p = pool.pages.back();
            pool.pages.pop_back();
        }
    }
    if (!p)
        p = take_block(0);
    if (!p)
        return nullptr;
    page_accounting::live_pages.fetch_add(1, std::memory_order_relaxed);
    return static_cast<Page*>(p);
}

void pt_pool_free(Page* page) {
    if (!page)
        return;
    page_accounting::live_pages.fetch_sub(1, std::memory_order_relaxed);
    PtPool& pool = pt_pool();
    std::lock_guard g(pool.lock);
    pool.pages.push_back(page);
}

size_t pt_pool_available() {
    PtPool& pool = pt_pool();
    std::lock_guard g(pool.lock);
    return pool.pages.size();
}

}  // namespace kshim
