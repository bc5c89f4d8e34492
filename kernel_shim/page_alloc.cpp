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
//
// __GFP_ZERO zeroes only the pages that may hold data. A page the host mapping has never had
// written (the arena is a fresh anonymous or memfd mapping) or got back with MADV_DONTNEED or a
// punched hole reads as zero already; the host would only fault it in to write zeroes over
// zeroes. A bitmap with one bit per page (set: "touched") records which pages have been handed
// out since the host last gave them to us zeroed: every allocation sets its pages' bits, and
// returning a block to the host clears them. A panthor tiler heap's 2 MiB chunks, which the
// GPU may never write, then cost no zeroing and no page faults (this was a third of the
// replay of a Mesa session). Nothing but an allocation's owner writes arena memory, so a
// page whose bit is clear reads as zero.
#include "kernel_shim/page_alloc.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
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
// A zeroing of this many touched pages in one 64-page word first asks the host which of them
// it has pages behind (one system call, against a memset that faults each untouched page in).
constexpr int kAskHostPages = 8;

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
    // One bit per page, set while the page may hold non-zero bytes (above). Atomic words: two
    // blocks sharing a word are claimed outside the lock.
    std::atomic<u64>* touched = nullptr;
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
        static_assert(sizeof(std::atomic<u64>) == sizeof(u64) && std::atomic<u64>::is_always_lock_free);
        // The fresh anonymous mapping reads as zero: every page starts untouched.
        touched = static_cast<std::atomic<u64>*>(reserve(kArenaPages / 64 * sizeof(u64), -1));
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

pfn_t pfn_of(const void* p) {
    return static_cast<pfn_t>(static_cast<u64>(static_cast<const char*>(p) - arena().base) >> PAGE_SHIFT);
}

// Which of the 64 pages from `word_pfn` (a multiple of 64) among `candidates` the host may
// have data behind. A page of the anonymous arena that is neither present nor swapped out
// (/proc/self/pagemap bits 63 and 62) is demand-zero; a memfd arena's page that lies in a hole
// of the file (SEEK_DATA/SEEK_HOLE; shmem counts swapped pages as data) reads as zero. On any
// doubt (no pagemap, a failed read) every candidate may hold data.
u64 materialized(u64 word_pfn, u64 candidates) {
    Arena& a = arena();
    const off_t begin = static_cast<off_t>(word_pfn << PAGE_SHIFT);
    const off_t end = begin + static_cast<off_t>(64 * PAGE_SIZE);
    if (a.memfd >= 0) {
        u64 data = 0;
        for (off_t at = begin; at < end;) {
            const off_t d = lseek(a.memfd, at, SEEK_DATA);
            if (d < 0)
                return errno == ENXIO ? 0 : candidates;  // ENXIO: no data past `at`
            if (d >= end)
                break;
            off_t h = lseek(a.memfd, d, SEEK_HOLE);
            if (h < 0)
                return candidates;
            h = std::min(h, end);
            for (off_t q = d & ~static_cast<off_t>(PAGE_SIZE - 1); q < h; q += PAGE_SIZE)
                data |= u64{1} << ((q - begin) >> PAGE_SHIFT);
            at = h;
        }
        return candidates & data;
    }
    // The descriptor is the process's own: a forked child opens its own (a parent's pagemap
    // says nothing of the child's copies).
    static std::atomic<int> fd{-1};
    static std::atomic<pid_t> fd_pid{0};
    const pid_t pid = getpid();
    int f = fd.load(std::memory_order_acquire);
    if (f < 0 || fd_pid.load(std::memory_order_acquire) != pid) {
        std::lock_guard g(a.lock);
        f = fd.load();
        if (f < 0 || fd_pid.load() != pid) {
            f = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);  // the parent's stays open: it is shared
            if (f < 0)
                return candidates;
            fd_pid.store(pid, std::memory_order_release);
            fd.store(f, std::memory_order_release);
        }
    }
    u64 entries[64];
    const uintptr_t vpn = reinterpret_cast<uintptr_t>(a.base) / PAGE_SIZE + word_pfn;
    if (pread(f, entries, sizeof(entries), static_cast<off_t>(vpn * sizeof(u64))) != sizeof(entries))
        return candidates;
    u64 data = 0;
    for (unsigned i = 0; i < 64; i++)
        if (entries[i] & (u64{3} << 62))  // present or swapped
            data |= u64{1} << i;
    return candidates & data;
}

// Calls fn(word, mask) for each word of the touched-page bitmap that [p, p + npages pages)
// covers, with the mask of its pages in that word.
template <class Fn>
void for_each_touched_word(void* p, u64 npages, Fn&& fn) {
    const u64 first = pfn_of(p);
    for (u64 pfn = first; pfn < first + npages;) {
        const unsigned bit = pfn & 63;
        const u64 n = std::min<u64>(64 - bit, first + npages - pfn);
        fn(pfn >> 6, (n == 64 ? ~u64{0} : ((u64{1} << n) - 1)) << bit);
        pfn += n;
    }
}

// Marks [p, p + npages pages) as handed out and, when `zero`, clears the pages among them that
// may hold data: the touched ones (the others read as zero already) and, of a word with many
// touched pages, only those the host has a page behind (a 2 MiB heap chunk freed and allocated
// again is touched but, when nobody wrote it, still not faulted in).
void claim_pages(void* p, u64 npages, bool zero) {
    Arena& a = arena();
    for_each_touched_word(p, npages, [&](u64 word, u64 mask) {
        u64 was = a.touched[word].fetch_or(mask, std::memory_order_relaxed) & mask;
        if (zero && std::popcount(was) >= kAskHostPages)
            was = materialized(word << 6, was);
        if (zero) {
            // Runs of such pages are cleared with one memset each.
            while (was) {
                const unsigned lo = std::countr_zero(was);
                const unsigned len = std::countr_one(was >> lo);
                std::memset(a.base + (((word << 6) + lo) << PAGE_SHIFT), 0, PAGE_SIZE * len);
                was &= len + lo >= 64 ? 0 : ~u64{0} << (lo + len);
            }
        }
    });
}

// The host has the pages back and will give them zeroed: they are untouched again.
void untouch_pages(void* p, u64 npages) {
    Arena& a = arena();
    for_each_touched_word(p, npages,
                          [&](u64 word, u64 mask) { a.touched[word].fetch_and(~mask, std::memory_order_relaxed); });
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
        untouch_pages(p, u64{1} << order);
    }
    pfn_t pfn = pfn_of(p);
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

namespace {
// A block of 2^order pages of which the first `claimed` are handed out (claim_pages): all of
// them for alloc_pages, the kept head for alloc_pages_exact, whose tail goes back as untouched
// as it came.
Page* take_claimed_block(gfp_t gfp, unsigned order, u64 claimed) {
    might_alloc(gfp);
    if (order > MAX_PAGE_ORDER || should_fail_alloc("pages", gfp))
        return nullptr;
    void* p = take_block(order);
    if (!p) {
        if (!(gfp & __GFP_NOWARN))
            std::fprintf(stderr, "kshim: page allocation failure: order:%u\n", order);
        return nullptr;
    }
    claim_pages(p, claimed, gfp & __GFP_ZERO);
    page_accounting::live_pages.fetch_add(long{1} << order, std::memory_order_relaxed);
    return static_cast<Page*>(p);
}
}  // namespace

Page* alloc_pages(gfp_t gfp, unsigned order) {
    return take_claimed_block(gfp, order, u64{1} << order);
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
    Page* block = take_claimed_block(gfp, order, npages);
    if (!block)
        return nullptr;
    free_pfn_range((page_to_phys(block) >> PAGE_SHIFT) + npages, (u64{1} << order) - npages);
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
        claim_pages(p, 1, false);
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
    if (!p) {
        p = take_block(0);
        if (p)
            claim_pages(p, 1, false);
    }
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
