// Mirrors mm/page_alloc.c and asm/page.h: one arena of host memory that plays physical RAM.
//
// The arena is reserved once per process (address space only; pages are touched lazily) and
// is mapped at physical addresses [kPhysBase, kPhysBase + kArenaSize), below 2^40 so that the
// GPU's 40-bit output addresses reach it. A `Page*` is the page's kernel virtual address, so
// page_address/virt_to_phys/phys_to_virt are additions, fast in both directions. The mock GPU
// reads and writes the same memory by physical address.
#pragma once
#include "kernel_shim/gfp.h"

namespace kshim {

inline constexpr unsigned PAGE_SHIFT = 12;
inline constexpr size_t PAGE_SIZE = size_t{1} << PAGE_SHIFT;
inline constexpr u64 PAGE_MASK = ~u64{PAGE_SIZE - 1};
inline constexpr unsigned MAX_PAGE_ORDER = 18;  // 1 GiB blocks

inline constexpr phys_addr_t kPhysBase = 0x80000000ull;
inline constexpr u64 kArenaSize = u64{64} << 30;

struct Page;  // opaque: a Page* is the page's kernel virtual address

Page* alloc_pages(gfp_t gfp, unsigned order);
inline Page* alloc_page(gfp_t gfp) {
    return alloc_pages(gfp, 0);
}
void __free_pages(Page* page, unsigned order);
inline void __free_page(Page* page) {
    __free_pages(page, 0);
}

// A physically contiguous run of `size` bytes (rounded up to whole pages, at most
// 2^MAX_PAGE_ORDER pages), as the kernel's alloc_pages_exact: the next power-of-two block is
// allocated and its tail given back. __GFP_ZERO zeroes what is kept. Free with
// free_pages_exact and the same size (or any page-aligned part of it, with its own size).
void* alloc_pages_exact(size_t size, gfp_t gfp);
void free_pages_exact(void* virt, size_t size);

// Pages in the free blocks of the arena, as the kernel's nr_free_pages(). The pool of page-table
// pages (below) counts as allocated.
unsigned long nr_free_pages();

phys_addr_t page_to_phys(const Page* page);
Page* phys_to_page(phys_addr_t phys);
inline void* page_address(const Page* page) {
    return const_cast<Page*>(page);
}
inline Page* virt_to_page(const void* addr) {
    return const_cast<Page*>(static_cast<const Page*>(addr));
}
void* phys_to_virt(phys_addr_t phys);
phys_addr_t virt_to_phys(const void* addr);
// True when [phys, phys + len) lies inside the arena (what a bus access may touch).
bool phys_range_valid(phys_addr_t phys, u64 len);

// Backs the arena with a memfd (MAP_SHARED) instead of private anonymous memory, so that a run of
// pages can be mapped a second time at another address, as a process maps a BO (the preload
// library maps BOs into its client). Opt-in, before the first allocation: 0, -EBUSY once the
// arena exists, or -errno. Freed large blocks are then punched out of the file.
int page_arena_use_memfd();
// The memfd backing the arena (byte offset = phys - kPhysBase), or -1 without one.
int page_arena_memfd();

// Page-table pages: a pool pre-faulted outside hot paths, so that table allocation inside a
// timed or fence-signalling region costs a pop and a zeroing, not a page fault.
void pt_pool_prefault(size_t pages);
// A zeroed page from the pool (falls back to the page allocator when the pool is empty).
// Honours fault injection under the cache name "pt_pages".
Page* pt_pool_alloc(gfp_t gfp);
// The same page without the zeroing, for callers that reserve tables ahead and zero each one
// when they hand it out (panthor's alloc_pt, like upstream's pt_cache objects).
Page* pt_pool_alloc_raw(gfp_t gfp);
void pt_pool_free(Page* page);
size_t pt_pool_available();

}  // namespace kshim
