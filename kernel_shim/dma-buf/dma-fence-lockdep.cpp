// Mirrors drivers/dma-buf/dma-fence.c (CONFIG_LOCKDEP part): the fence-signalling annotations.
//
// A signalling section holds dma_fence_map as a recursive reader; a wait takes it exclusively.
// Anything acquired inside a section gets an edge "dma_fence_map -> X"; anything held around a
// wait gets "X -> dma_fence_map". The primer (dma_resv_lockdep) records dma_resv -> fs_reclaim
// -> dma_fence_map once per runtime, so a section that takes a dma_resv lock, allocates with
// GFP_KERNEL or takes a mutex also held around a wait closes a cycle through the map, which
// lockdep-lite reports as ReportKind::FenceSignalling.
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/dma-buf/dma-resv.h"

namespace kshim {

LockdepMap dma_fence_lockdep_map("dma_fence_map", std::source_location::current(), LOCKDEP_SIGNALLING);

// Here rather than in dma-resv.cpp: this file is linked whenever fences are, so every binary
// that signals fences also gets the priming (a static library drops unreferenced objects).
[[maybe_unused]] static const bool g_primer_registered = (lockdep_register_primer(&dma_resv_lockdep), true);

#if KSHIM_DEBUG_CHECKS
bool dma_fence_begin_signalling(std::source_location loc) {
    // Atomic context cannot sleep anyway, and nested sections add nothing: the cookie says
    // "nothing to release".
    if (in_atomic())
        return true;
    if (lock_is_held(&dma_fence_lockdep_map))
        return true;
    lock_acquire(&dma_fence_lockdep_map, 0, false, 2, nullptr, loc);
    return false;
}

void dma_fence_end_signalling(bool cookie) {
    if (cookie)
        return;
    lock_release(&dma_fence_lockdep_map);
}

// Unlike upstream, which drops a held read side first, we keep it: a wait inside a signalling
// section then shows up as recursive locking of dma_fence_map, reported at once instead of
// only when some other lock happens to close a cycle.
void __dma_fence_might_wait(std::source_location loc) {
    lock_map_acquire(&dma_fence_lockdep_map, loc);
    lock_map_release(&dma_fence_lockdep_map, loc);
}
#endif

}  // namespace kshim
