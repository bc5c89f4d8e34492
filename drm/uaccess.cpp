// Mirrors the checked user copies of include/linux/uaccess.h (see uaccess.h for the model).
#include "drm/uaccess.h"

#include <atomic>
#include <cstring>
#include <map>

#include "kernel_shim/report.h"
#include "kernel_shim/spinlock.h"

namespace drm {
namespace {

struct Registry {
    // Protects ranges; held only around the lookup and the memcpy (never sleeps).
    kshim::SpinLock lock{"drm_uaccess.lock"};
    // start -> (end, registration count): the ranges as registered, possibly overlapping.
    std::multimap<u64, u64> ranges;
    std::atomic<bool> trust_all{false};
};

Registry& registry() {
    static Registry* r = new Registry();  // never destroyed: user copies may run at exit
    return *r;
}

// Caller holds the lock. Ranges may overlap, so a span is covered when it can be walked through
// a chain of registered ranges.
bool covered_locked(Registry& r, u64 a, u64 end) {
    while (a < end) {
        u64 best = a;
        for (auto it = r.ranges.begin(); it != r.ranges.end() && it->first <= a; ++it)
            if (it->second > best) best = it->second;
        if (best == a) return false;
        a = best;
    }
    return true;
}

}  // namespace

void uaccess_register(const void* addr, size_t len) {
    Registry& r = registry();
    u64 a = reinterpret_cast<u64>(addr);
    kshim::SpinGuard g(r.lock);
    r.ranges.emplace(a, a + len);
}

void uaccess_unregister(const void* addr, size_t len) {
    Registry& r = registry();
    u64 a = reinterpret_cast<u64>(addr);
    kshim::SpinGuard g(r.lock);
    auto [lo, hi] = r.ranges.equal_range(a);
    for (auto it = lo; it != hi; ++it) {
        if (it->second == a + len) {
            r.ranges.erase(it);
            return;
        }
    }
    WARN_ON(true);  // unregistering a range that was never registered
}

void uaccess_set_trust_all(bool trust) { registry().trust_all.store(trust, std::memory_order_relaxed); }

static bool ok_locked(Registry& r, u64 uaddr, size_t n) {
    if (n == 0) return true;
    if (uaddr == 0 || uaddr + n < uaddr) return false;  // NULL page, or wraps (access_ok)
    if (r.trust_all.load(std::memory_order_relaxed)) return true;
    return covered_locked(r, uaddr, uaddr + n);
}

bool uaccess_ok(u64 uaddr, size_t n) {
    Registry& r = registry();
    kshim::SpinGuard g(r.lock);
    return ok_locked(r, uaddr, n);
}

size_t copy_from_user(void* to, u64 from, size_t n) {
    if (n == 0) return 0;
    Registry& r = registry();
    kshim::SpinGuard g(r.lock);
    if (!ok_locked(r, from, n)) return n;
    std::memcpy(to, reinterpret_cast<const void*>(from), n);
    return 0;
}

size_t copy_to_user(u64 to, const void* from, size_t n) {
    if (n == 0) return 0;
    Registry& r = registry();
    kshim::SpinGuard g(r.lock);
    if (!ok_locked(r, to, n)) return n;
    std::memcpy(reinterpret_cast<void*>(to), from, n);
    return 0;
}

}  // namespace drm
