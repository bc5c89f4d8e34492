// Mirrors mm/slab_common.c: kmalloc and kmem_cache with live-object counters.
//
// Caches keep a free list of objects for speed, except under AddressSanitizer, where every
// free goes back to the heap so use-after-free is still caught.
#include "kernel_shim/slab.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/report.h"

#if defined(__SANITIZE_ADDRESS__)
#define KSHIM_SLAB_FREELIST 0
#else
#define KSHIM_SLAB_FREELIST 1
#endif

namespace kshim {
namespace page_accounting {
extern std::atomic<long> live_pages;
}

struct KmemCache {
    std::string name;
    size_t size;
    size_t align;
    std::atomic<long> live{0};
    std::mutex lock;  // protects free_objs
    std::vector<void*> free_objs;
};

namespace {
std::atomic<long> g_kmalloc_live{0};
std::mutex g_caches_lock;  // protects g_caches
std::map<u64, KmemCache*> g_caches;  // by creation order, so reports are deterministic
u64 g_cache_seq = 0;
}  // namespace

void* kmalloc(size_t size, gfp_t gfp) {
    might_alloc(gfp);
    if (should_fail_alloc("kmalloc", gfp)) return nullptr;
    // A zero-size request gets a real, distinct allocation here (the kernel returns
    // ZERO_SIZE_PTR); either way kfree accepts it.
    void* p = std::malloc(size ? size : 1);
    if (!p) return nullptr;
    if (gfp & __GFP_ZERO) std::memset(p, 0, size);
    g_kmalloc_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}

void* kzalloc(size_t size, gfp_t gfp) { return kmalloc(size, gfp | __GFP_ZERO); }

void* kcalloc(size_t n, size_t size, gfp_t gfp) {
    if (size && n > SIZE_MAX / size) return nullptr;
    return kzalloc(n * size, gfp);
}

void kfree(const void* p) {
    if (!p) return;
    g_kmalloc_live.fetch_sub(1, std::memory_order_relaxed);
    std::free(const_cast<void*>(p));
}

KmemCache* kmem_cache_create(const char* name, size_t size, size_t align, unsigned flags) {
    auto* c = new KmemCache();
    c->name = name;
    c->align = align ? align : alignof(std::max_align_t);
    if (flags & SLAB_HWCACHE_ALIGN) c->align = std::max<size_t>(c->align, 64);
    c->size = (std::max<size_t>(size, 1) + c->align - 1) & ~(c->align - 1);
    std::lock_guard g(g_caches_lock);
    g_caches[g_cache_seq++] = c;
    return c;
}

void* kmem_cache_alloc(KmemCache* c, gfp_t gfp) {
    might_alloc(gfp);
    if (should_fail_alloc(c->name.c_str(), gfp)) return nullptr;
    void* p = nullptr;
#if KSHIM_SLAB_FREELIST
    {
        std::lock_guard g(c->lock);
        if (!c->free_objs.empty()) {
            p = c->free_objs.back();
            c->free_objs.pop_back();
        }
    }
#endif
    if (!p) p = ::operator new(c->size, std::align_val_t(c->align), std::nothrow);
    if (!p) return nullptr;
    if (gfp & __GFP_ZERO) std::memset(p, 0, c->size);
    c->live.fetch_add(1, std::memory_order_relaxed);
    return p;
}

void* kmem_cache_zalloc(KmemCache* c, gfp_t gfp) { return kmem_cache_alloc(c, gfp | __GFP_ZERO); }

void kmem_cache_free(KmemCache* c, void* obj) {
    if (!obj) return;
    c->live.fetch_sub(1, std::memory_order_relaxed);
#if KSHIM_SLAB_FREELIST
    std::lock_guard g(c->lock);
    c->free_objs.push_back(obj);
#else
    ::operator delete(obj, std::align_val_t(c->align));
#endif
}

int kmem_cache_alloc_bulk(KmemCache* c, gfp_t gfp, size_t n, void** out) {
    for (size_t i = 0; i < n; i++) {
        out[i] = kmem_cache_alloc(c, gfp);
        if (!out[i]) {
            kmem_cache_free_bulk(c, i, out);
            return 0;
        }
    }
    return static_cast<int>(n);
}

void kmem_cache_free_bulk(KmemCache* c, size_t n, void** objs) {
    for (size_t i = 0; i < n; i++) kmem_cache_free(c, objs[i]);
}

void kmem_cache_destroy(KmemCache* c) {
    if (!c) return;
    long live = c->live.load();
    if (live)
        report(ReportKind::Leak, "kmem_cache_destroy " + c->name + ": Slab cache still has objects",
               std::to_string(live) + " object(s) remaining");
    {
        std::lock_guard g(g_caches_lock);
        for (auto it = g_caches.begin(); it != g_caches.end(); ++it)
            if (it->second == c) {
                g_caches.erase(it);
                break;
            }
    }
    for (void* p : c->free_objs) ::operator delete(p, std::align_val_t(c->align));
    delete c;
}

size_t kmem_cache_live(const KmemCache* c) { return static_cast<size_t>(c->live.load()); }
const char* kmem_cache_name(const KmemCache* c) { return c->name.c_str(); }

MemCounters mem_counters() {
    MemCounters m;
    m.kmalloc_live = g_kmalloc_live.load();
    m.pages_live = page_accounting::live_pages.load();
    std::lock_guard g(g_caches_lock);
    for (auto& [seq, c] : g_caches) m.caches.emplace_back(c->name, c->live.load());
    return m;
}

std::string mem_counters_diff(const MemCounters& before, const MemCounters& after) {
    std::string out;
    auto line = [&](const std::string& what, long b, long a) {
        if (a > b) out += what + ": " + std::to_string(a - b) + " more live than at start (" + std::to_string(b) +
                          " -> " + std::to_string(a) + ")\n";
    };
    line("kmalloc objects", before.kmalloc_live, after.kmalloc_live);
    line("pages", before.pages_live, after.pages_live);
    for (auto& [name, live] : after.caches) {
        long b = 0;
        for (auto& [bn, bl] : before.caches)
            if (bn == name) b = bl;
        line("kmem_cache " + name, b, live);
    }
    return out;
}

}  // namespace kshim
