// Mirrors kernel/locking/lockdep.c, reduced to what finds bugs in tests: classes, held-lock
// stacks, a dependency graph with cycle detection, recursion and bad-unlock checks.
#include "kernel_shim/lockdep.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernel_shim/report.h"

namespace kshim {

struct LockClass {
    u32 id;
    std::string name;
    std::string site;
    unsigned flags;
    std::string given_name;  // the name the map was initialised with ("" for none)
};

// A lock site by its source_location's pointers: the cheap first lookup of a class. Distinct
// translation units may spell one file with distinct pointers; they meet in classes_by_site.
struct SitePtr {
    const char* file;
    u32 line;
    u32 column;
    bool operator==(const SitePtr&) const = default;
};
struct SitePtrHash {
    size_t operator()(const SitePtr& k) const {
        return std::hash<const void*>()(k.file) ^ (static_cast<size_t>(k.line) << 20) ^ k.column;
    }
};

namespace {
// How an edge was first seen: task, then the held lock (class, read mode, where taken), then the
// class taken and where. Kept as data and written out only for a report: a run's graph starts
// empty (lockdep_reset) and learns a few thousand edges, each formerly a dozen string allocations
// that only a report ever read.
struct Edge {
    LockClass* to;
    std::string task;
    LockClass* held;
    u8 held_read;
    std::source_location held_loc;
    std::source_location loc;
};

struct Graph {
    std::mutex lock;  // protects everything below
    std::map<std::string, LockClass*> classes_by_site;
    // Every lock initialisation looks its class up (objects with locks come and go all the time):
    // by pointers first, the name compared, before the string key is built.
    std::unordered_multimap<SitePtr, LockClass*, SitePtrHash> classes_by_ptr;
    std::vector<LockClass*> classes;
    std::vector<std::vector<Edge>> after;  // by class id
    // The edges seen, as a bit per (from, to) class pair: edge_bits[from] holds bit `to`. Asked on
    // every lock acquisition for each lock held (a hash set lookup cost a tenth of a sanitized
    // campaign's CPU).
    std::vector<std::vector<u64>> edge_bits;  // by class id
    std::unordered_set<u64> reported;
    std::vector<void (*)()> primers;
    // find_path's scratch, kept between calls (each new edge searches the graph). A class is seen
    // when its seen[] entry equals the search's generation.
    std::vector<const Edge*> via;
    std::vector<LockClass*> prev;
    std::vector<u64> seen;
    std::vector<LockClass*> queue;
    u64 generation = 0;
};

Graph& graph() {
    static Graph* g = new Graph();  // lives for the process: locks in static objects outlive exit
    return *g;
}

std::string loc_text(std::source_location loc) {
    return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

std::string held_text(const LockClass* cls, u8 read, std::source_location loc) {
    std::string s = cls->name;
    if (read)
        s += read == 2 ? " (read, recursive)" : " (read)";
    return s + " acquired at " + loc_text(loc);
}

std::string held_text(const HeldLock& h) {
    return held_text(h.map->cls, h.read, h.loc);
}

std::string evidence_text(const Edge& e) {
    return e.task + ": " + held_text(e.held, e.held_read, e.held_loc) + ", then " + e.to->name + " at " +
           loc_text(e.loc);
}

// Finds a path from `from` to `target` in the graph (breadth first); fills `path` with its edges.
bool find_path(Graph& g, LockClass* from, LockClass* target, std::vector<const Edge*>& path) {
    const size_t n = g.classes.size();
    if (g.seen.size() < n) {
        g.via.resize(n);
        g.prev.resize(n);
        g.seen.resize(n, 0);
    }
    const u64 gen = ++g.generation;
    g.queue.clear();
    g.queue.push_back(from);
    g.seen[from->id] = gen;
    for (size_t head = 0; head < g.queue.size(); head++) {
        LockClass* c = g.queue[head];
        if (c == target) {
            for (LockClass* at = target; at != from; at = g.prev[at->id])
                path.insert(path.begin(), g.via[at->id]);
            return true;
        }
        for (const Edge& e : g.after[c->id]) {
            if (g.seen[e.to->id] == gen)
                continue;
            g.seen[e.to->id] = gen;
            g.via[e.to->id] = &e;
            g.prev[e.to->id] = c;
            g.queue.push_back(e.to);
        }
    }
    return false;
}

bool has_edge(const Graph& g, const LockClass* from, const LockClass* to) {
    const std::vector<u64>& bits = g.edge_bits[from->id];
    return to->id / 64 < bits.size() && (bits[to->id / 64] >> (to->id % 64) & 1);
}

void set_edge(Graph& g, const LockClass* from, const LockClass* to) {
    std::vector<u64>& bits = g.edge_bits[from->id];
    if (to->id / 64 >= bits.size())
        bits.resize(g.classes.size() / 64 + 1, 0);
    bits[to->id / 64] |= u64{1} << (to->id % 64);
}

// Out of line, as report_assert_held below: the report's strings would give add_new_edge (and,
// were it inlined, lock_acquire) a large stack frame, which ASan poisons and clears on each call.
[[gnu::noinline, gnu::cold]] void report_cycle(const Task* t, const Edge& edge, LockClass* a, LockClass* next,
                                               const std::vector<const Edge*>& path) {
    bool signalling = (a->flags | next->flags) & LOCKDEP_SIGNALLING;
    std::string detail = "this task (" + t->name + ") takes " + next->name + " while holding " + a->name + ":\n  " +
                         evidence_text(edge) + "\nbut the opposite order was seen before:\n";
    for (const Edge* e : path)
        detail += "  " + evidence_text(*e) + "\n";
    detail += "locks held by " + t->name + ":\n" + lockdep_held_locks_text(t);
    report(signalling ? ReportKind::FenceSignalling : ReportKind::LockOrder,
           "possible circular locking dependency detected: " + a->name + " -> " + next->name, detail);
}

// An edge not seen since the last reset (has_edge said so): searched for a cycle, then recorded.
// Out of line: lock_acquire asks has_edge for each held lock, and nearly every answer is yes.
[[gnu::noinline]] void add_new_edge(Graph& g, Task* t, const HeldLock& prev, LockClass* next,
                                    std::source_location loc) {
    LockClass* a = prev.map->cls;
    u64 key = (u64{a->id} << 32) | next->id;
    std::vector<const Edge*> path;
    Edge edge{next, t->name, a, prev.read, prev.loc, loc};
    if (find_path(g, next, a, path) && !g.reported.count(key)) {
        g.reported.insert(key);
        report_cycle(t, edge, a, next, path);
    }
    set_edge(g, a, next);
    g.after[a->id].push_back(std::move(edge));
}
}  // namespace

LockdepMap fs_reclaim_map("fs_reclaim");

LockdepMap::LockdepMap(const char* n, std::source_location site, unsigned flags) : name(n) {
#if KSHIM_DEBUG_CHECKS
    Graph& g = graph();
    const char* given = n ? n : "";
    const SitePtr ptr{site.file_name(), site.line(), site.column()};
    std::lock_guard l(g.lock);
    size_t names_here = 0;
    for (auto [it, end] = g.classes_by_ptr.equal_range(ptr); it != end; ++it, ++names_here) {
        if (it->second->given_name == given) {
            cls = it->second;
            return;
        }
    }
    std::string key = std::string(site.file_name()) + ":" + std::to_string(site.line()) + ":" +
                      std::to_string(site.column()) + ":" + given;
    auto it = g.classes_by_site.find(key);
    if (it != g.classes_by_site.end()) {
        cls = it->second;
    } else {
        cls = new LockClass{static_cast<u32>(g.classes.size()), n ? n : loc_text(site), loc_text(site), flags, given};
        g.classes.push_back(cls);
        g.after.emplace_back();
        g.edge_bits.emplace_back();
        g.classes_by_site.emplace(std::move(key), cls);
    }
    // A site that names its locks at run time (one per object) stays on the string key alone.
    if (names_here < 8)
        g.classes_by_ptr.emplace(ptr, cls);
#else
    (void)site;
    (void)flags;
#endif
}

namespace {
// Out of line, as report_assert_held below: keeps lock_acquire's stack frame small.
[[gnu::noinline, gnu::cold]] void report_recursive(const Task* t, const LockdepMap* m, const HeldLock& h,
                                                   std::source_location loc) {
    bool signalling = m->cls->flags & LOCKDEP_SIGNALLING;
    report(signalling ? ReportKind::FenceSignalling : ReportKind::LockUsage,
           "possible recursive locking detected: " + m->cls->name,
           t->name + " is trying to acquire " + m->cls->name + " at " + loc_text(loc) + "\nbut already holds:\n  " +
               held_text(h) + "\nlocks held:\n" + lockdep_held_locks_text(t));
}
}  // namespace

void lock_acquire(LockdepMap* m, u32 subclass, bool trylock, u8 read, const void* nest, std::source_location loc) {
    Task* t = current();
    if (!t || !m->cls)
        return;
    // Pointer loops over the held stack, here and in lock_release: the sanitizer presets build at
    // -O1, which does not inline the vector's iterator calls, and this runs on every lock taken.
    const HeldLock* held = t->held.data();
    const size_t nheld = t->held.size();
    for (size_t i = 0; i < nheld; i++) {
        const HeldLock& h = held[i];
        if (h.map->cls != m->cls || h.subclass != subclass)
            continue;
        if (nest && h.nest == nest)
            continue;  // ww_mutexes of one class under one context
        if (read == 2 && h.read == 2)
            continue;  // recursive readers do not block each other
        if (trylock)
            continue;
        report_recursive(t, m, h, loc);
        break;
    }
    // Taking a recursive read lock never waits, so nothing held before it can deadlock on it.
    if (!trylock && read != 2 && nheld) {
        Graph& g = graph();
        std::lock_guard l(g.lock);
        for (size_t i = 0; i < nheld; i++) {
            if (held[i].map->cls == m->cls || has_edge(g, held[i].map->cls, m->cls))
                continue;
            add_new_edge(g, t, held[i], m->cls, loc);
        }
    }
    if (t->held.capacity() == 0)
        t->held.reserve(16);  // one allocation per task rather than a growth step at 1, 2, 4, 8
    t->held.push_back({m, nest, subclass, read, trylock, loc});
}

void lock_release(LockdepMap* m, std::source_location loc) {
    Task* t = current();
    if (!t || !m->cls)
        return;
    const HeldLock* held = t->held.data();
    const size_t nheld = t->held.size();
    for (size_t i = nheld; i--;) {
        if (held[i].map == m) {
            if (i + 1 == nheld)
                t->held.pop_back();  // the usual case: the lock taken last
            else
                t->held.erase(t->held.begin() + static_cast<std::ptrdiff_t>(i));
            return;
        }
    }
    report(ReportKind::LockUsage, "WARNING: bad unlock balance detected: " + m->cls->name,
           t->name + " is trying to release " + m->cls->name + " at " + loc_text(loc) +
               " but it holds no such lock\nlocks held:\n" + lockdep_held_locks_text(t));
}

namespace {
// Newest first: an assertion usually names the lock its caller took last.
bool task_holds(const Task* t, const LockdepMap* m) {
    const HeldLock* first = t->held.data();
    for (const HeldLock* h = first + t->held.size(); h != first;)
        if ((--h)->map == m)
            return true;
    return false;
}
}  // namespace

bool lock_is_held(const LockdepMap* m) {
    Task* t = current();
    return t && task_holds(t, m);
}

void lockdep_free_map(LockdepMap* m) {
    Task* t = current();
    if (!t || !m->cls)
        return;
    for (auto it = t->held.begin(); it != t->held.end(); ++it) {
        if (it->map != m)
            continue;
        std::string what = held_text(*it);
        t->held.erase(it);
        report(ReportKind::LockUsage, "BUG: held lock freed!: " + m->cls->name, t->name + " frees " + what);
        return;
    }
}

namespace {
// Out of line: the strings of the report would give every assertion a large stack frame, which
// ASan poisons and unpoisons on each call (a quarter of a sanitized campaign's CPU).
[[gnu::noinline, gnu::cold]] void report_assert_held(const Task* t, const LockdepMap* m, bool want_held,
                                                     std::source_location loc) {
    report(ReportKind::LockUsage,
           std::string(want_held ? "lockdep_assert_held" : "lockdep_assert_not_held") + "(" + m->cls->name + ") failed",
           "at " + loc_text(loc) + " in " + loc.function_name() + "\nlocks held by " + t->name + ":\n" +
               lockdep_held_locks_text(t));
}
}  // namespace

void lockdep_assert_held_impl(const LockdepMap* m, bool want_held, std::source_location loc) {
    if (!m->cls)
        return;
    const Task* t = current();
    if (t && task_holds(t, m) != want_held)
        report_assert_held(t, m, want_held, loc);
}

void fs_reclaim_acquire(gfp_t gfp) {
#if KSHIM_DEBUG_CHECKS
    if (gfpflags_allow_blocking(gfp))
        lock_acquire(&fs_reclaim_map, 0, false, 0, nullptr);
#endif
}

void fs_reclaim_release(gfp_t gfp) {
#if KSHIM_DEBUG_CHECKS
    if (gfpflags_allow_blocking(gfp))
        lock_release(&fs_reclaim_map);
#endif
}

void lockdep_register_primer(void (*primer)()) {
    Graph& g = graph();
    std::lock_guard l(g.lock);
    g.primers.push_back(primer);
}

void lockdep_reset() {
    Graph& g = graph();
    std::vector<void (*)()> primers;
    {
        std::lock_guard l(g.lock);
        for (auto& a : g.after)
            a.clear();
        for (auto& bits : g.edge_bits)
            std::fill(bits.begin(), bits.end(), 0);
        g.reported.clear();
        primers = g.primers;
    }
    for (auto* p : primers)
        p();
}

void lockdep_task_exit(Task* t) {
    if (t->held.empty())
        return;
    report(ReportKind::LockUsage, "task " + t->name + " exited with locks held", lockdep_held_locks_text(t));
    t->held.clear();
}

std::string lockdep_held_locks_text(const Task* t) {
    std::string s;
    for (const HeldLock& h : t->held)
        s += "  " + held_text(h) + "\n";
    return s.empty() ? "  (none)\n" : s;
}

}  // namespace kshim
