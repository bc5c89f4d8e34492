// Mirrors lib/fault-inject.c: a plan that fails the Nth, or a random share, of allocations.
#include "kernel_shim/fault_inject.h"

#include <atomic>
#include <cstring>
#include <mutex>

#include "kernel_shim/task.h"

namespace kshim {
namespace {
std::atomic<bool> g_armed{false};  // fast check on every allocation
std::mutex g_lock;                 // protects the fields below
FaultPlan g_plan;
u64 g_attempts = 0;
u64 g_failures = 0;
u64 g_rng = 0;

u64 splitmix64(u64& state) {
    u64 z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
}  // namespace

void fault_inject_arm(const FaultPlan& plan) {
    std::lock_guard g(g_lock);
    g_plan = plan;
    g_attempts = g_failures = 0;
    g_rng = plan.seed;
    g_armed.store(true);
}

bool fault_inject_armed() {
    return g_armed.load(std::memory_order_relaxed);
}

void fault_inject_disarm() {
    std::lock_guard g(g_lock);
    g_armed.store(false);
}

u64 fault_inject_attempts() {
    std::lock_guard g(g_lock);
    return g_attempts;
}

u64 fault_inject_failures() {
    std::lock_guard g(g_lock);
    return g_failures;
}

bool should_fail_alloc(const char* cache, gfp_t gfp) {
    if (!g_armed.load(std::memory_order_relaxed) || (gfp & __GFP_NOFAIL))
        return false;
    std::lock_guard g(g_lock);
    if (!g_armed.load(std::memory_order_relaxed))
        return false;
    if (!g_plan.only_cache.empty() && g_plan.only_cache != cache)
        return false;
    if (g_plan.ignore_blocking && gfpflags_allow_blocking(gfp))
        return false;
    if (g_plan.task_filter) {
        const Task* t = current();
        if (!t || !t->make_it_fail || !in_task())
            return false;
    }
    u64 n = ++g_attempts;
    bool fail = false;
    if (g_plan.fail_nth && n == g_plan.fail_nth)
        fail = true;
    if (g_plan.probability > 0.0) {
        double r = static_cast<double>(splitmix64(g_rng) >> 11) * 0x1.0p-53;
        if (r < g_plan.probability)
            fail = true;
    }
    if (fail)
        g_failures++;
    return fail;
}

}  // namespace kshim
