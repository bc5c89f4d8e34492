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
    u64 id = 0;  // creation order, from 1, never reused
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
    c->id = ++g_cache_seq;
    g_caches[c->id] = c;
    return c;
}

#if KSHIM_SLAB_FREELIST
// ---- per-thread magazines ----
//
// The kernel's slab keeps per-CPU free lists, so an alloc and a free on different CPUs do not
// share a lock. Here each thread keeps a small magazine of free objects per cache and moves
// them to or from the cache's shared list in batches: a producer thread freeing what a consumer
// thread allocates touches the shared lock once per half magazine, not once per object.
// A magazine names its cache by id, so one left in another thread after kmem_cache_destroy is
// recognised and its objects freed when that thread next uses the slot or exits.
namespace {
constexpr unsigned kMagazineObjs = 32;
constexpr unsigned kMagazineSlots = 8;  // caches a thread holds magazines for at once

struct Magazine {
    u64 cache_id = 0;  // 0: unused
    size_t align = 0;
    unsigned n = 0;
    void* objs[kMagazineObjs];
};

// Empties the magazine, its objects back to the allocator (their cache is gone).
void magazine_release(Magazine& m) {
    for (unsigned i = 0; i < m.n; i++) ::operator delete(m.objs[i], std::align_val_t(m.align));
    m.n = 0;
    m.cache_id = 0;
}

// Gives the magazine's objects back to its cache, or frees them if the cache is gone.
void magazine_drain(Magazine& m) {
    if (m.n) {
        std::lock_guard g(g_caches_lock);
        auto it = g_caches.find(m.cache_id);
        if (it != g_caches.end()) {
            std::lock_guard gc(it->second->lock);
            it->second->free_objs.insert(it->second->free_objs.end(), m.objs, m.objs + m.n);
            m.n = 0;
        }
    }
    magazine_release(m);
}

struct ThreadMagazines {
    Magazine slot[kMagazineSlots];
    ~ThreadMagazines() {
        for (Magazine& m : slot) magazine_drain(m);
    }
};
thread_local ThreadMagazines t_magazines;

Magazine& magazine_for(KmemCache* c) {
    Magazine& m = t_magazines.slot[c->id % kMagazineSlots];
    if (m.cache_id != c->id) {
        magazine_drain(m);
        m.cache_id = c->id;
        m.align = c->align;
    }
    return m;
}

void* magazine_alloc(KmemCache* c) {
    Magazine& m = magazine_for(c);
    if (!m.n) {
        std::lock_guard g(c->lock);
        while (m.n < kMagazineObjs / 2 && !c->free_objs.empty()) {
            m.objs[m.n++] = c->free_objs.back();
            c->free_objs.pop_back();
        }
    }
    return m.n ? m.objs[--m.n] : nullptr;
}

void magazine_free(KmemCache* c, void* obj) {
    Magazine& m = magazine_for(c);
    if (m.n == kMagazineObjs) {
        std::lock_guard g(c->lock);
        c->free_objs.insert(c->free_objs.end(), m.objs + kMagazineObjs / 2, m.objs + kMagazineObjs);
        m.n = kMagazineObjs / 2;
    }
    m.objs[m.n++] = obj;
}

// kmem_cache_destroy: this thread's magazine of the cache goes first (the others' later).
void magazine_forget(KmemCache* c) {
    Magazine& m = t_magazines.slot[c->id % kMagazineSlots];
    if (m.cache_id == c->id) magazine_release(m);
}
}  // namespace
#endif

void* kmem_cache_alloc(KmemCache* c, gfp_t gfp) {
    might_alloc(gfp);
    if (should_fail_alloc(c->name.c_str(), gfp)) return nullptr;
    void* p = nullptr;
#if KSHIM_SLAB_FREELIST
    p = magazine_alloc(c);
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
    magazine_free(c, obj);
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
        g_caches.erase(c->id);
    }
#if KSHIM_SLAB_FREELIST
    magazine_forget(c);
#endif
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
