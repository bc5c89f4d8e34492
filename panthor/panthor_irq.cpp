// Mirrors the PANTHOR_IRQ_HANDLER macro of drivers/gpu/drm/panthor/panthor_device.h, as functions.
#include "panthor/panthor_irq.h"

#include "kernel_shim/devres.h"

namespace panthor {

namespace {

// Offsets inside every *_INT_* block.
constexpr u32 INT_RAWSTAT = 0x0;
constexpr u32 INT_CLEAR = 0x4;
constexpr u32 INT_MASK = 0x8;
constexpr u32 INT_STAT = 0xC;

kshim::irqreturn_t panthor_irq_raw_handler(int, void* data) {
    auto* pirq = static_cast<panthor_irq*>(data);
    panthor_device* ptdev = pirq->ptdev;

    // The line may be shared, and a suspended block's registers must not be trusted.
    if (pirq->suspended.load())
        return kshim::IRQ_NONE;
    if (!gpu_read(ptdev, pirq->int_base + INT_STAT))
        return kshim::IRQ_NONE;

    // Keep the line quiet until the thread has drained RAWSTAT.
    gpu_write(ptdev, pirq->int_base + INT_MASK, 0);
    return kshim::IRQ_WAKE_THREAD;
}

kshim::irqreturn_t panthor_irq_threaded_handler(int, void* data) {
    auto* pirq = static_cast<panthor_irq*>(data);
    panthor_device* ptdev = pirq->ptdev;
    kshim::irqreturn_t ret = kshim::IRQ_NONE;

    for (;;) {
        // The handler may narrow pirq->mask (a faulty AS), so re-read it every round.
        const u32 status = gpu_read(ptdev, pirq->int_base + INT_RAWSTAT) & pirq->mask.load();
        if (!status)
            break;
        pirq->handler(ptdev, status);
        ret = kshim::IRQ_HANDLED;
    }

    // A suspend that ran meanwhile wants the mask to stay 0.
    if (!pirq->suspended.load())
        gpu_write(ptdev, pirq->int_base + INT_MASK, pirq->mask.load());
    return ret;
}

}  // namespace

void panthor_irq_suspend(panthor_irq* pirq) {
    pirq->mask = 0;
    gpu_write(pirq->ptdev, pirq->int_base + INT_MASK, 0);
    kshim::synchronize_irq(pirq->irq);
    pirq->suspended.store(true);
}

void panthor_irq_resume(panthor_irq* pirq, u32 mask) {
    pirq->suspended.store(false);
    pirq->mask = mask;
    gpu_write(pirq->ptdev, pirq->int_base + INT_CLEAR, mask);
    gpu_write(pirq->ptdev, pirq->int_base + INT_MASK, mask);
}

int panthor_request_irq(panthor_device* ptdev, panthor_irq* pirq, kshim::IrqLine* irq, u32 mask, u32 int_base,
                        const char* name, void (*handler)(panthor_device*, u32)) {
    pirq->ptdev = ptdev;
    pirq->irq = irq;
    pirq->int_base = int_base;
    pirq->name = name;
    pirq->handler = handler;
    panthor_irq_resume(pirq, mask);

    int ret = kshim::request_threaded_irq(irq, panthor_irq_raw_handler, panthor_irq_threaded_handler,
                                          kshim::IRQF_SHARED, name, pirq);
    if (ret)
        return ret;
    // devm_request_threaded_irq: freed when the device's resources go.
    return kshim::devm_add_action_or_reset(ptdev->dev, [irq, pirq] { kshim::free_irq(irq, pirq); });
}

}  // namespace panthor
