// The PANTHOR_IRQ_HANDLER pattern of panthor_device.h, written once (upstream generates it with a
// macro per line). The raw handler returns IRQ_NONE when *_INT_STAT is 0 (spurious or
// suspended), else masks every source and wakes the thread; the threaded handler loops on
// RAWSTAT & mask, calling the block's handler (which clears what it handles), until nothing is
// left, then restores the mask unless the line was suspended meanwhile.
#pragma once
#include "panthor/panthor_device.h"

namespace panthor {

// Requests the threaded IRQ for `pirq` (sources `mask`, handled by `handler`). 0 or -errno.
// The free is registered as a devres action of ptdev->dev.
int panthor_request_irq(panthor_device* ptdev, panthor_irq* pirq, kshim::IrqLine* irq, u32 mask, u32 int_base,
                        const char* name, void (*handler)(panthor_device*, u32));
// Masks every source and waits for a running handler.
void panthor_irq_suspend(panthor_irq* pirq);
// Clears pending sources and unmasks `mask`.
void panthor_irq_resume(panthor_irq* pirq, u32 mask);

}  // namespace panthor

// The per-line names of upstream (panthor_request_gpu_irq, panthor_gpu_irq_suspend, ...).
#define PANTHOR_IRQ_HANDLER(__name, __reg_prefix, __handler)                                                         \
    static inline int panthor_request_##__name##_irq(::panthor::panthor_device* ptdev, ::panthor::panthor_irq* pirq, \
                                                     ::kshim::IrqLine* irq, ::panthor::u32 mask) {                   \
        return ::panthor::panthor_request_irq(ptdev, pirq, irq, mask, __reg_prefix##_INT_BASE, #__name, __handler);  \
    }                                                                                                                \
    static inline void panthor_##__name##_irq_suspend(::panthor::panthor_irq* pirq) {                                \
        ::panthor::panthor_irq_suspend(pirq);                                                                        \
    }                                                                                                                \
    static inline void panthor_##__name##_irq_resume(::panthor::panthor_irq* pirq, ::panthor::u32 mask) {            \
        ::panthor::panthor_irq_resume(pirq, mask);                                                                   \
    }
