// Mirrors mm/slab_common.c: kmalloc and kmem_cache with live-object counters.
//
// Caches keep a free list of objects for speed, except under AddressSanitizer, where every
// free goes back to the heap so use-after-free is still caught.
#include "kernel_shim/slab.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sanitizers.h"

// Under ASan a freed object goes back to malloc, so that a use after free is caught.
#if KSHIM_ASAN
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
std::mutex g_caches_lock;            // protects g_caches
std::map<u64, KmemCache*> g_caches;  // by creation order, so reports are deterministic
u64 g_cache_seq = 0;
}  // namespace

void* kmalloc(size_t size, gfp_t gfp) {
    might_alloc(gfp);
    if (should_fail_alloc("kmalloc", gfp))
        return nullptr;
    // A zero-size request gets a real, distinct allocation here (the kernel returns
    // ZERO_SIZE_PTR); either way kfree accepts it.
    void* p = std::malloc(size ? size : 1);
    if (!p)
        return nullptr;
    if (gfp & __GFP_ZERO)
        std::memset(p, 0, size);
    g_kmalloc_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}

void* kmalloc_aligned(size_t size, size_t align, gfp_t gfp) {
    // Smaller alignments are what malloc gives anyway; kfree frees either kind with free().
    if (align <= alignof(std::max_align_t))
        return kmalloc(size, gfp);
    if (align & (align - 1))
        return nullptr;  // not a power of two
    might_alloc(gfp);
    if (should_fail_alloc("kmalloc", gfp))
        return nullptr;
    // aligned_alloc wants a non-zero multiple of the alignment.
    size_t rounded = std::max<size_t>(size, 1);
    if (rounded > SIZE_MAX - (align - 1))
        return nullptr;
    rounded = (rounded + align - 1) & ~(align - 1);
    void* p = std::aligned_alloc(align, rounded);
    if (!p)
        return nullptr;
    if (gfp & __GFP_ZERO)
        std::memset(p, 0, size);
    g_kmalloc_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}

void* kzalloc(size_t size, gfp_t gfp) {
    return kmalloc(size, gfp | __GFP_ZERO);
}

void* kcalloc(size_t n, size_t size, gfp_t gfp) {
    if (size && n > SIZE_MAX / size)
        return nullptr;
    return kzalloc(n * size, gfp);
}

void kfree(const void* p) {
    if (!p)
        return;
    g_kmalloc_live.fetch_sub(1, std::memory_order_relaxed);
    std::free(const_cast<void*>(p));
}

KmemCache* kmem_cache_create(const char* name, size_t size, size_t align, unsigned flags) {
    auto* c = new KmemCache();
    c->name = name;
    c->align = align ? align : alignof(std::max_align_t);
    if (flags & SLAB_HWCACHE_ALIGN)
        c->align = std::max<size_t>(c->align, 64);
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
//
// Live counts follow the percpu_counter idea: each magazine counts its owner thread's allocs
// minus frees for its cache in `delta`, so the per-object path writes only thread-private cache
// lines (a shared atomic would bounce between the producer's and the consumer's cores on every
// object). The exact count is the cache's `live` plus the deltas of all magazines bound to it;
// deltas are folded into `live` and `cache_id` is changed only under g_caches_lock, so a reader
// holding that lock never counts a delta twice or misses one.
namespace {
constexpr unsigned kMagazineObjs = 32;
constexpr unsigned kMagazineSlots = 8;  // caches a thread holds magazines for at once

struct Magazine {
    u64 cache_id = 0;  // 0: unused. Written under g_caches_lock; its owner reads it freely.
    size_t align = 0;
    unsigned n = 0;
    // Owner's allocs minus frees for cache_id not yet in that cache's `live`. Only the owner
    // writes it (load + store: no locked instruction); readers hold g_caches_lock.
    std::atomic<long> delta{0};
    void* objs[kMagazineObjs];
};

struct ThreadMagazines;
// Magazines of live threads, for the readers of live counts. Guarded by g_caches_lock.
std::vector<ThreadMagazines*> g_thread_magazines;

// Caller holds g_caches_lock and owns `m`. Folds the delta into the cache and gives the
// objects back to it; if the cache is gone both are dropped, and the objects stay in `m` for
// magazine_release_objs (freeing them needs no lock).
void magazine_unbind_locked(Magazine& m) {
    auto it = g_caches.find(m.cache_id);
    KmemCache* c = it != g_caches.end() ? it->second : nullptr;
    if (long d = m.delta.load(std::memory_order_relaxed)) {
        if (c)
            c->live.fetch_add(d, std::memory_order_relaxed);
        m.delta.store(0, std::memory_order_relaxed);
    }
    if (c && m.n) {
        std::lock_guard gc(c->lock);
        c->free_objs.insert(c->free_objs.end(), m.objs, m.objs + m.n);
        m.n = 0;
    }
    m.cache_id = 0;
}

// Frees the objects an unbound magazine still holds (their cache is gone).
void magazine_release_objs(Magazine& m) {
    for (unsigned i = 0; i < m.n; i++)
        ::operator delete(m.objs[i], std::align_val_t(m.align));
    m.n = 0;
}

struct ThreadMagazines {
    Magazine slot[kMagazineSlots];
    ThreadMagazines() {
        std::lock_guard g(g_caches_lock);
        g_thread_magazines.push_back(this);
    }
    ~ThreadMagazines() {
        {
            std::lock_guard g(g_caches_lock);
            for (Magazine& m : slot)
                magazine_unbind_locked(m);
            std::erase(g_thread_magazines, this);
        }
        for (Magazine& m : slot)
            magazine_release_objs(m);
    }
};
thread_local ThreadMagazines t_magazines;

Magazine& magazine_for(KmemCache* c) {
    Magazine& m = t_magazines.slot[c->id % kMagazineSlots];
    if (m.cache_id != c->id) {
        {
            std::lock_guard g(g_caches_lock);
            magazine_unbind_locked(m);
            m.cache_id = c->id;
        }
        magazine_release_objs(m);
        m.align = c->align;
    }
    return m;
}

// Owner only: a plain load and store, since nobody else writes the delta.
void magazine_count(Magazine& m, long d) {
    m.delta.store(m.delta.load(std::memory_order_relaxed) + d, std::memory_order_relaxed);
}

void* magazine_pop(KmemCache* c, Magazine& m) {
    if (!m.n) {
        std::lock_guard g(c->lock);
        while (m.n < kMagazineObjs / 2 && !c->free_objs.empty()) {
            m.objs[m.n++] = c->free_objs.back();
            c->free_objs.pop_back();
        }
    }
    if (!m.n)
        return nullptr;
    void* obj = m.objs[--m.n];
    // As SLUB prefetches the next free object: objects often come back freed (written) by
    // another CPU, and starting that transfer now overlaps it with the caller's use of this one.
    if (m.n) {
        const char* next = static_cast<const char*>(m.objs[m.n - 1]);
        const size_t bytes = std::min<size_t>(c->size, 4 * SMP_CACHE_BYTES);
        for (size_t off = 0; off < bytes; off += SMP_CACHE_BYTES)
            __builtin_prefetch(next + off, 1);
    }
    return obj;
}

void magazine_free(KmemCache* c, void* obj) {
    Magazine& m = magazine_for(c);
    if (m.n == kMagazineObjs) {
        std::lock_guard g(c->lock);
        c->free_objs.insert(c->free_objs.end(), m.objs + kMagazineObjs / 2, m.objs + kMagazineObjs);
        m.n = kMagazineObjs / 2;
    }
    m.objs[m.n++] = obj;
    magazine_count(m, -1);
}

// Caller holds g_caches_lock. The live count: what has been folded plus every thread's
// unfolded delta (a cache is only ever in slot id % kMagazineSlots).
long cache_live_locked(const KmemCache* c) {
    long live = c->live.load(std::memory_order_relaxed);
    for (ThreadMagazines* tm : g_thread_magazines) {
        const Magazine& m = tm->slot[c->id % kMagazineSlots];
        if (m.cache_id == c->id)
            live += m.delta.load(std::memory_order_relaxed);
    }
    return live;
}
}  // namespace
#else
namespace {
long cache_live_locked(const KmemCache* c) {
    return c->live.load();
}
}  // namespace
#endif

void* kmem_cache_alloc(KmemCache* c, gfp_t gfp) {
    might_alloc(gfp);
    if (should_fail_alloc(c->name.c_str(), gfp))
        return nullptr;
#if KSHIM_SLAB_FREELIST
    Magazine& m = magazine_for(c);
    void* p = magazine_pop(c, m);
#else
    void* p = nullptr;
#endif
    if (!p)
        p = ::operator new(c->size, std::align_val_t(c->align), std::nothrow);
    if (!p)
        return nullptr;
    if (gfp & __GFP_ZERO)
        std::memset(p, 0, c->size);
#if KSHIM_SLAB_FREELIST
    magazine_count(m, +1);
#else
    c->live.fetch_add(1, std::memory_order_relaxed);
#endif
    return p;
}

void* kmem_cache_zalloc(KmemCache* c, gfp_t gfp) {
    return kmem_cache_alloc(c, gfp | __GFP_ZERO);
}

void kmem_cache_free(KmemCache* c, void* obj) {
    if (!obj)
        return;
#if KSHIM_SLAB_FREELIST
    magazine_free(c, obj);
#else
    c->live.fetch_sub(1, std::memory_order_relaxed);
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
    for (size_t i = 0; i < n; i++)
        kmem_cache_free(c, objs[i]);
}

void kmem_cache_destroy(KmemCache* c) {
    if (!c)
        return;
    long live;
    {
        std::lock_guard g(g_caches_lock);
        live = cache_live_locked(c);
    }
    if (live)
        report(ReportKind::Leak, "kmem_cache_destroy " + c->name + ": Slab cache still has objects",
               std::to_string(live) + " object(s) remaining");
#if KSHIM_SLAB_FREELIST
    // This thread's magazine of the cache goes now; other threads' when they next use the slot
    // or exit (their deltas are then dropped, the cache being gone). Touched before taking the
    // lock: a thread's first touch registers its magazines, which takes the lock.
    Magazine& mine = t_magazines.slot[c->id % kMagazineSlots];
#endif
    {
        std::lock_guard g(g_caches_lock);
        g_caches.erase(c->id);
#if KSHIM_SLAB_FREELIST
        if (mine.cache_id == c->id)
            magazine_unbind_locked(mine);  // cache not found: drops delta
#endif
    }
#if KSHIM_SLAB_FREELIST
    magazine_release_objs(mine);
#endif
    for (void* p : c->free_objs)
        ::operator delete(p, std::align_val_t(c->align));
    delete c;
}

size_t kmem_cache_live(const KmemCache* c) {
#if KSHIM_SLAB_FREELIST
    std::lock_guard g(g_caches_lock);
    // Racing with an alloc on one thread and its free on another, the sum can briefly see the
    // free's delta but not the alloc's; never report that as a huge unsigned count.
    return static_cast<size_t>(std::max<long>(cache_live_locked(c), 0));
#else
    return static_cast<size_t>(c->live.load());
#endif
}
const char* kmem_cache_name(const KmemCache* c) {
    return c->name.c_str();
}

MemCounters mem_counters() {
    MemCounters m;
    m.kmalloc_live = g_kmalloc_live.load();
    m.pages_live = page_accounting::live_pages.load();
    std::lock_guard g(g_caches_lock);
    for (auto& [seq, c] : g_caches)
        m.caches.emplace_back(c->name, cache_live_locked(c));
    return m;
}

std::string mem_counters_diff(const MemCounters& before, const MemCounters& after) {
    std::string out;
    auto line = [&](const std::string& what, long b, long a) {
        if (a > b)
            out += what + ": " + std::to_string(a - b) + " more live than at start (" + std::to_string(b) + " -> " +
                   std::to_string(a) + ")\n";
    };
    line("kmalloc objects", before.kmalloc_live, after.kmalloc_live);
    line("pages", before.pages_live, after.pages_live);
    for (auto& [name, live] : after.caches) {
        long b = 0;
        for (auto& [bn, bl] : before.caches)
            if (bn == name)
                b = bl;
        line("kmem_cache " + name, b, live);
    }
    return out;
}

}  // namespace kshim
