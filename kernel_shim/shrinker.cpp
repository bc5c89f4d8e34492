// Mirrors mm/shrinker.c (allocation, registration) and the shrink_slab loop of mm/vmscan.c,
// driven by shrink_all() instead of reclaim (kernel_shim/shrinker.h).
#include "kernel_shim/shrinker.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "kernel_shim/report.h"
#include "kernel_shim/rwsem.h"
#include "kernel_shim/slab.h"

namespace kshim {
namespace {

struct Registry {
    RwSemaphore rwsem{"shrinker_rwsem"};
    std::vector<shrinker*> list;  // rwsem
};

// Never destroyed: shrinkers may be freed by static destructors of other modules.
Registry& registry() {
    static Registry* r = new Registry;
    return *r;
}

// do_shrink_slab: one shrinker, up to nr_to_scan objects in batches.
unsigned long do_shrink_slab(shrinker* s, unsigned long nr_to_scan, gfp_t gfp) {
    shrink_control sc;
    sc.gfp_mask = gfp;
    unsigned long count = s->count_objects(s, &sc);
    if (count == 0 || count == SHRINK_EMPTY)
        return 0;
    const unsigned long batch = s->batch > 0 ? static_cast<unsigned long>(s->batch) : SHRINK_BATCH;
    unsigned long total = std::min(count, nr_to_scan);
    unsigned long freed = 0;
    while (total > 0) {
        const unsigned long n = std::min(batch, total);
        sc.nr_to_scan = n;
        sc.nr_scanned = n;
        const unsigned long ret = s->scan_objects(s, &sc);
        if (ret == SHRINK_STOP)
            break;
        freed += ret;
        total -= std::min(total, sc.nr_scanned ? sc.nr_scanned : n);
    }
    return freed;
}

}  // namespace

shrinker* shrinker_alloc(unsigned flags, const char* fmt, ...) {
    auto* s = knew<shrinker>(GFP_KERNEL);
    if (!s)
        return nullptr;
    s->flags = flags;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(s->name, sizeof(s->name), fmt, ap);
    va_end(ap);
    return s;
}

void shrinker_register(shrinker* s) {
    if (WARN_ON(!s || !s->count_objects || !s->scan_objects || s->registered))
        return;
    Registry& r = registry();
    r.rwsem.down_write();
    r.list.push_back(s);
    s->registered = true;
    r.rwsem.up_write();
}

void shrinker_free(shrinker* s) {
    if (!s)
        return;
    if (s->registered) {
        Registry& r = registry();
        // Waits for a shrink_all in progress, as upstream's unregister waits for the scans.
        r.rwsem.down_write();
        r.list.erase(std::remove(r.list.begin(), r.list.end(), s), r.list.end());
        s->registered = false;
        r.rwsem.up_write();
    }
    kdelete(s);
}

unsigned long shrink_all(unsigned long nr_to_scan, gfp_t gfp) {
    Registry& r = registry();
    unsigned long freed = 0;
    r.rwsem.down_read();
    for (shrinker* s : r.list)
        freed += do_shrink_slab(s, nr_to_scan, gfp);
    r.rwsem.up_read();
    return freed;
}

size_t shrinker_count_registered() {
    Registry& r = registry();
    r.rwsem.down_read();
    const size_t n = r.list.size();
    r.rwsem.up_read();
    return n;
}

}  // namespace kshim
