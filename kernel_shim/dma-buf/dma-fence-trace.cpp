// Mirrors include/trace/events/dma_fence.h: the event payload of the dma_fence tracepoints.
#include "kernel_shim/dma-buf/dma-fence-trace.h"

#include <string>

namespace kshim {

void trace_dma_fence_event(const char* name, dma_fence* fence) {
    std::string args = std::string("{\"driver\":\"") + dma_fence_driver_name(fence) + "\",\"timeline\":\"" +
                       dma_fence_timeline_name(fence) + "\",\"context\":" + std::to_string(fence->context) +
                       ",\"seqno\":" + std::to_string(fence->seqno) + "}";
    trace::instant(name, "dma_fence", args);
}

}  // namespace kshim
