// Mirrors include/linux/irq_work.h: a callback raised from atomic context (typically a fence
// signal with its lock held) that runs as soon as that context ends.
//
// The kernel raises a self-IPI; the work runs in hard-IRQ context right after the raising CPU
// re-enables interrupts, before any other task gets that CPU. Here each task keeps a FIFO of the
// items it raised and runs them when it leaves its outermost atomic section (the last
// preempt_enable, the end of a hard-IRQ handler or hrtimer callback), or at once when raised
// outside one. Items run in hard-IRQ context (might_sleep fires), one after another: an item
// raised while the list runs joins the list instead of nesting, so a cascade of signals (a long
// dma_fence_chain) runs iteratively at constant stack depth. The list belongs to its task
// (never thread_local): simulated and real mode behave the same, and only the owner touches it.
#pragma once
#include <atomic>

#include "kernel_shim/types.h"

namespace kshim {

struct Task;

// Unlike upstream, BUSY drops with PENDING when the function starts, because the function may
// free its item; irq_work_sync waits for running items another way.
enum : unsigned {
    IRQ_WORK_PENDING = 1u << 0,  // queued and not yet started
    IRQ_WORK_BUSY = 1u << 1,     // queued
    IRQ_WORK_CLAIMED = IRQ_WORK_PENDING | IRQ_WORK_BUSY,
};

struct irq_work {
    void (*func)(irq_work* work) = nullptr;
    std::atomic<unsigned> flags{0};
    irq_work* next = nullptr;  // link in the raising task's list; only that task touches it
};

inline void init_irq_work(irq_work* work, void (*func)(irq_work*)) {
    work->func = func;
    work->flags.store(0, std::memory_order_relaxed);
    work->next = nullptr;
}

inline bool irq_work_is_pending(const irq_work* work) {
    return work->flags.load(std::memory_order_acquire) & IRQ_WORK_PENDING;
}
inline bool irq_work_is_busy(const irq_work* work) {
    return work->flags.load(std::memory_order_acquire) & IRQ_WORK_BUSY;
}

// Queues `work` on the current task; false when it was already pending (it will run once).
bool irq_work_queue(irq_work* work);
// Waits until `work` is neither queued nor running. May sleep.
void irq_work_sync(irq_work* work);
// Runs the current task's queued items now (the kernel's irq_work_run on this CPU).
void irq_work_run();

// How many items ran since the process started: a statistic for tests and benchmarks.
u64 irq_work_run_count();

}  // namespace kshim
