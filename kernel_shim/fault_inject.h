// Mirrors lib/fault-inject.c (failslab / fail_page_alloc): make chosen allocations fail.
#pragma once
#include <string>

#include "kernel_shim/gfp.h"

namespace kshim {

struct FaultPlan {
    // Fail exactly the Nth matching allocation attempt after arming (1-based); 0: off.
    u64 fail_nth = 0;
    // Fail each matching attempt with this probability, from a PRNG seeded with `seed`.
    double probability = 0.0;
    u64 seed = 1;
    // Only allocations from the kmem_cache of this name ("kmalloc" for kmalloc, "pages" for the
    // page allocator); empty: every allocation.
    std::string only_cache;
    // Skip allocations that may sleep (the kernel's ignore-gfp-wait); NOWAIT/ATOMIC ones still fail.
    bool ignore_blocking = false;
    // The kernel's task-filter: only allocations made in task context by a task whose
    // `make_it_fail` is set (current()->make_it_fail = true) may fail, so that work the task
    // leaves to workers, timers and IRQ threads allocates normally.
    bool task_filter = false;
};

void fault_inject_arm(const FaultPlan& plan);
void fault_inject_disarm();
bool fault_inject_armed();
// How many allocation attempts matched the plan, and how many of them were failed.
u64 fault_inject_attempts();
u64 fault_inject_failures();

// The allocators ask this; `cache` is the cache name ("kmalloc", "pages", or a kmem_cache's).
bool should_fail_alloc(const char* cache, gfp_t gfp);

}  // namespace kshim
