// Mirrors include/linux/shrinker.h and mm/shrinker.c: caches that give memory back under
// pressure.
//
// DOC: A subsystem that holds reclaimable memory (a GPU driver's purgeable BOs) allocates a
// shrinker (shrinker_alloc), sets count_objects/scan_objects and private_data, and registers it;
// shrinker_free unregisters it (waiting for a scan in progress) and frees it. There is no memory
// reclaim in the shim: nothing calls the shrinkers by itself. shrink_all() is the memory pressure
// of a test or the simulator (upstream's drop_slab(), `echo 2 > /proc/sys/vm/drop_caches`, or
// kswapd): for every registered shrinker, count_objects, then scan_objects in batches of
// `batch` (SHRINK_BATCH if 0) until nr_to_scan objects were scanned, the count is exhausted or
// scan_objects answers SHRINK_STOP. No per-NUMA-node or memcg state, no `seeks`-based pacing:
// one pass scans min(count, nr_to_scan).
//
// Locking: shrink_all holds the registry (shrinker_rwsem, as upstream before 6.7) shared across
// the callbacks, register/free take it exclusively; callbacks may sleep, but must not register
// or free a shrinker.
#pragma once
#include "kernel_shim/gfp.h"
#include "kernel_shim/types.h"

namespace kshim {

// What scan_objects is asked to do.
struct shrink_control {
    gfp_t gfp_mask = 0;
    int nid = 0;
    // Objects to scan in this call (set by the caller); scan_objects may scan fewer.
    unsigned long nr_to_scan = 0;
    // Objects scanned (set by the caller before the call, like upstream: nr_to_scan).
    unsigned long nr_scanned = 0;
};

// scan_objects: nothing can be done now (a lock was contended); count_objects: nothing to free.
inline constexpr unsigned long SHRINK_STOP = ~0UL;
inline constexpr unsigned long SHRINK_EMPTY = ~0UL - 1;
inline constexpr long SHRINK_BATCH = 128;
inline constexpr int DEFAULT_SEEKS = 2;

struct shrinker {
    // How many objects could be freed (0 or SHRINK_EMPTY: none).
    unsigned long (*count_objects)(shrinker* s, shrink_control* sc) = nullptr;
    // Free up to sc->nr_to_scan objects; the number freed, or SHRINK_STOP.
    unsigned long (*scan_objects)(shrinker* s, shrink_control* sc) = nullptr;
    long batch = 0;  // objects per scan_objects call; 0: SHRINK_BATCH
    int seeks = DEFAULT_SEEKS;
    unsigned flags = 0;
    void* private_data = nullptr;

    // Internal.
    char name[64] = {};
    bool registered = false;
};

// A shrinker named by the printf format (flags: upstream's SHRINKER_*, kept, unused), not yet
// registered; nullptr on allocation failure.
shrinker* shrinker_alloc(unsigned flags, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void shrinker_register(shrinker* s);
// Unregisters (if registered) and frees; nullptr is fine.
void shrinker_free(shrinker* s);

// Simulated memory pressure: asks every registered shrinker to scan up to nr_to_scan objects
// (see the DOC above). Returns the objects freed.
unsigned long shrink_all(unsigned long nr_to_scan, gfp_t gfp = GFP_KERNEL);
// How many shrinkers are registered (tests).
size_t shrinker_count_registered();

}  // namespace kshim
