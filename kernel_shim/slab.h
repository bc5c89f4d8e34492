// Mirrors include/linux/slab.h: kmalloc and kmem_cache with live-object accounting.
#pragma once
#include <cstddef>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "kernel_shim/gfp.h"

namespace kshim {

void* kmalloc(size_t size, gfp_t gfp);
void* kzalloc(size_t size, gfp_t gfp);
void* kcalloc(size_t n, size_t size, gfp_t gfp);
// For alignments above alignof(std::max_align_t) (e.g. cache-line aligned objects); size and
// alignment as for aligned_alloc, the memory is freed with kfree like any kmalloc'ed block.
void* kmalloc_aligned(size_t size, size_t align, gfp_t gfp);
void kfree(const void* p);

struct KmemCache;

inline constexpr unsigned SLAB_HWCACHE_ALIGN = 1u << 0;

KmemCache* kmem_cache_create(const char* name, size_t size, size_t align, unsigned flags);
void* kmem_cache_alloc(KmemCache* cache, gfp_t gfp);
void* kmem_cache_zalloc(KmemCache* cache, gfp_t gfp);
void kmem_cache_free(KmemCache* cache, void* obj);
// Allocates `n` objects into `out`; returns n, or 0 (and allocates nothing) on failure.
int kmem_cache_alloc_bulk(KmemCache* cache, gfp_t gfp, size_t n, void** out);
void kmem_cache_free_bulk(KmemCache* cache, size_t n, void** objs);
// Reports a leak if objects are still live, as the kernel's "Objects remaining" splat.
void kmem_cache_destroy(KmemCache* cache);
size_t kmem_cache_live(const KmemCache* cache);
const char* kmem_cache_name(const KmemCache* cache);

// Typed helpers: construct a C++ object in kmalloc'ed memory (nullptr on failure).
template <class T, class... Args>
T* knew(gfp_t gfp, Args&&... args) {
    void* p;
    if constexpr (alignof(T) > alignof(std::max_align_t))
        p = kmalloc_aligned(sizeof(T), alignof(T), gfp);
    else
        p = kmalloc(sizeof(T), gfp);
    return p ? new (p) T(std::forward<Args>(args)...) : nullptr;
}
template <class T>
void kdelete(T* obj) {
    if (!obj)
        return;
    obj->~T();
    kfree(obj);
}
template <class T, class... Args>
T* kmem_cache_new(KmemCache* cache, gfp_t gfp, Args&&... args) {
    void* p = kmem_cache_alloc(cache, gfp);
    return p ? new (p) T(std::forward<Args>(args)...) : nullptr;
}
template <class T>
void kmem_cache_delete(KmemCache* cache, T* obj) {
    if (!obj)
        return;
    obj->~T();
    kmem_cache_free(cache, obj);
}

// Leak accounting: live counts of every allocator, snapshotted by the test fixture.
struct MemCounters {
    long kmalloc_live = 0;
    long pages_live = 0;                               // in 4 KiB pages, page-table pool pages included
    std::vector<std::pair<std::string, long>> caches;  // live objects per existing cache
};
MemCounters mem_counters();
// Human-readable differences between two snapshots; empty when nothing grew.
std::string mem_counters_diff(const MemCounters& before, const MemCounters& after);

}  // namespace kshim
