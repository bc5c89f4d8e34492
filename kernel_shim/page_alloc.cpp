// Mirrors mm/page_alloc.c: order-based page allocation over the physical arena.
//
// Free blocks go to per-order free lists and are reused before the bump pointer moves; blocks
// are not coalesced (the arena's address space is far larger than any test uses). Large freed
// blocks are returned to the host with MADV_DONTNEED so multi-GiB tests do not pin memory.
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

struct Arena {
    char* base = nullptr;
    int memfd = -1;
    std::mutex lock;  // protects bump and free_lists
    u64 bump = 0;
    std::vector<void*> free_lists[MAX_PAGE_ORDER + 1];

    Arena() {
        g_arena_made.store(true);
        void* p;
        if (g_want_memfd.load()) {
            // A sparse file: pages exist once touched, as with the anonymous mapping.
            memfd = memfd_create("upanthor-phys", MFD_CLOEXEC);
            if (memfd < 0 || ftruncate(memfd, static_cast<off_t>(kArenaSize)) != 0) {
                std::perror("kshim: creating the arena memfd");
                std::abort();
            }
            p = mmap(nullptr, kArenaSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd, 0);
        } else {
            p = mmap(nullptr, kArenaSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        }
        if (p == MAP_FAILED) {
            std::perror("kshim: reserving the physical arena");
            std::abort();
        }
        base = static_cast<char*>(p);
    }
};

Arena& arena() {
    static Arena* a = new Arena();  // lives for the process: pages may outlive static destructors
    return *a;
}

// Takes a block from the free list or the bump pointer; nullptr when the arena is exhausted.
void* take_block(unsigned order) {
    Arena& a = arena();
    const u64 bytes = u64{PAGE_SIZE} << order;
    std::lock_guard g(a.lock);
    auto& list = a.free_lists[order];
    if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        return p;
    }
    u64 start = (a.bump + bytes - 1) & ~(bytes - 1);  // naturally aligned, as buddy blocks are
    if (start + bytes > kArenaSize) return nullptr;
    a.bump = start + bytes;
    return a.base + start;
}

void give_block(void* p, unsigned order) {
    Arena& a = arena();
    if (order >= 9) {
        // MADV_DONTNEED does not free a shared mapping's file pages: punch them out instead.
        if (a.memfd >= 0)
            fallocate(a.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<char*>(p) - a.base,
                      static_cast<off_t>(PAGE_SIZE << order));
        else
            madvise(p, PAGE_SIZE << order, MADV_DONTNEED);
    }
    std::lock_guard g(a.lock);
    a.free_lists[order].push_back(p);
}

}  // namespace

int page_arena_use_memfd() {
    if (g_arena_made.load()) return arena().memfd >= 0 ? 0 : -EBUSY;
    g_want_memfd.store(true);
    return arena().memfd >= 0 ? 0 : -EBUSY;
}

int page_arena_memfd() { return g_arena_made.load() ? arena().memfd : -1; }

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
    if (order > MAX_PAGE_ORDER || should_fail_alloc("pages", gfp)) return nullptr;
    void* p = take_block(order);
    if (!p) {
        if (!(gfp & __GFP_NOWARN)) std::fprintf(stderr, "kshim: page allocation failure: order:%u\n", order);
        return nullptr;
    }
    if (gfp & __GFP_ZERO) std::memset(p, 0, PAGE_SIZE << order);
    page_accounting::live_pages.fetch_add(long{1} << order, std::memory_order_relaxed);
    return static_cast<Page*>(p);
}

void __free_pages(Page* page, unsigned order) {
    if (!page) return;
    BUG_ON(!phys_range_valid(page_to_phys(page), PAGE_SIZE << order));
    page_accounting::live_pages.fetch_sub(long{1} << order, std::memory_order_relaxed);
    give_block(page, order);
}

namespace {
// Frees [pfn, pfn + count) as naturally aligned power-of-two blocks, largest first.
void free_pfn_range(u64 pfn, u64 count) {
    while (count) {
        unsigned order = std::min<unsigned>(std::bit_width(count) - 1, MAX_PAGE_ORDER);
        while (order && (pfn & ((u64{1} << order) - 1))) order--;
        __free_pages(phys_to_page(pfn << PAGE_SHIFT), order);
        pfn += u64{1} << order;
        count -= u64{1} << order;
    }
}
}  // namespace

void* alloc_pages_exact(size_t size, gfp_t gfp) {
    const u64 npages = (size + PAGE_SIZE - 1) >> PAGE_SHIFT;
    if (npages == 0 || npages > (u64{1} << MAX_PAGE_ORDER)) return nullptr;
    const unsigned order = static_cast<unsigned>(std::bit_width(npages - 1));  // ceil(log2)
    Page* block = alloc_pages(gfp & ~__GFP_ZERO, order);
    if (!block) return nullptr;
    free_pfn_range((page_to_phys(block) >> PAGE_SHIFT) + npages, (u64{1} << order) - npages);
    if (gfp & __GFP_ZERO) std::memset(block, 0, npages * PAGE_SIZE);
    return block;
}

void free_pages_exact(void* virt, size_t size) {
    if (!virt) return;
    free_pfn_range(virt_to_phys(virt) >> PAGE_SHIFT, (size + PAGE_SIZE - 1) >> PAGE_SHIFT);
}

phys_addr_t page_to_phys(const Page* page) { return virt_to_phys(page); }
Page* phys_to_page(phys_addr_t phys) { return static_cast<Page*>(phys_to_virt(phys & PAGE_MASK)); }

void* phys_to_virt(phys_addr_t phys) { return arena().base + (phys - kPhysBase); }

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
        if (!p) break;
        std::memset(p, 0, PAGE_SIZE);  // the first touch faults the page in, here and not later
        fresh.push_back(p);
    }
    PtPool& pool = pt_pool();
    std::lock_guard g(pool.lock);
    pool.pages.insert(pool.pages.end(), fresh.begin(), fresh.end());
}

Page* pt_pool_alloc(gfp_t gfp) {
    Page* page = pt_pool_alloc_raw(gfp);
    if (page) std::memset(page_address(page), 0, PAGE_SIZE);
    return page;
}

Page* pt_pool_alloc_raw(gfp_t gfp) {
    might_alloc(gfp);
    if (should_fail_alloc("pt_pages", gfp)) return nullptr;
    PtPool& pool = pt_pool();
    void* p = nullptr;
    {
        std::lock_guard g(pool.lock);
        if (!pool.pages.empty()) {
            p = pool.pages.back();
            pool.pages.pop_back();
        }
    }
    if (!p) p = take_block(0);
    if (!p) return nullptr;
    page_accounting::live_pages.fetch_add(1, std::memory_order_relaxed);
    return static_cast<Page*>(p);
}

void pt_pool_free(Page* page) {
    if (!page) return;
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
