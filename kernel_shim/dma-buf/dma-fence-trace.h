// Mirrors include/trace/events/dma_fence.h: the dma_fence tracepoints, on the kshim trace sink.
#pragma once
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/trace.h"

namespace kshim {

// Out of line: building the arguments costs far more than the check, and is only paid when on.
void trace_dma_fence_event(const char* name, dma_fence* fence);

inline void trace_dma_fence(const char* name, dma_fence* fence) {
    if (trace::enabled()) [[unlikely]]
        trace_dma_fence_event(name, fence);
}

}  // namespace kshim
