// Mirrors kernel/irq_work.c: claim, queue on the raising task, run at the end of atomic context.
#include "kernel_shim/irq_work.h"

#include "kernel_shim/report.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/task.h"

namespace kshim {
namespace {
std::atomic<u64> g_runs{0};
// Items running right now, on any task. The function may free its own item (a fence array or
// chain dropping its last reference), so nothing touches the item once it started; upstream can
// clear BUSY afterwards only because such frees wait for an RCU grace period.
std::atomic<int> g_in_flight{0};

void irq_work_single(irq_work* work) {
    // Counted before the flags drop, so irq_work_sync cannot see it idle and not in flight.
    g_in_flight.fetch_add(1, std::memory_order_seq_cst);
    // Cleared before the call, so the function may queue its item again.
    work->flags.fetch_and(~IRQ_WORK_CLAIMED, std::memory_order_seq_cst);
    work->func(work);
    g_runs.fetch_add(1, std::memory_order_relaxed);
    g_in_flight.fetch_sub(1, std::memory_order_seq_cst);
}
}  // namespace

bool irq_work_queue(irq_work* work) {
    unsigned old = work->flags.fetch_or(IRQ_WORK_CLAIMED, std::memory_order_acq_rel);
    if (old & IRQ_WORK_PENDING)
        return false;
    Task* t = current();
    if (!t) {
        // A thread outside any runtime has no task, hence no atomic-context accounting: run at
        // once, but still one item at a time (thread_local only because there is no task).
        thread_local irq_work* head = nullptr;
        thread_local irq_work** tail = &head;
        thread_local bool running = false;
        work->next = nullptr;
        *tail = work;
        tail = &work->next;
        if (running)
            return true;
        running = true;
        while (irq_work* w = head) {
            head = w->next;
            if (!head)
                tail = &head;
            irq_work_single(w);
        }
        running = false;
        return true;
    }
    work->next = nullptr;
    if (t->irq_work_tail)
        t->irq_work_tail->next = work;
    else
        t->irq_work_head = work;
    t->irq_work_tail = work;
    // Raised from task context: the "interrupt" arrives at once.
    if (t->preempt_count == 0 && !t->hardirq)
        irq_work_run();
    return true;
}

void irq_work_run() {
    Task* t = current();
    if (!t || t->hardirq)
        return;  // inside a run (or a handler): the outer level drains the list
    t->hardirq = true;
    while (irq_work* work = t->irq_work_head) {
        t->irq_work_head = work->next;
        if (!t->irq_work_head)
            t->irq_work_tail = nullptr;
        work->next = nullptr;
        irq_work_single(work);
    }
    t->hardirq = false;
}

void irq_work_sync(irq_work* work) {
    might_sleep();
    Task* t = current();
    // Queued on this very task and not run yet: it can only run once we return to it.
    if (t && t->irq_work_head && irq_work_is_busy(work))
        irq_work_run();
    for (unsigned i = 0; irq_work_is_busy(work); i++)
        cpu_relax(i);
    // It may still be running on another thread (real mode); we cannot tell which item runs
    // without touching it, so wait until nothing runs. A task runs its items without switching,
    // so in simulated mode this never waits.
    for (unsigned i = 0; g_in_flight.load(std::memory_order_seq_cst) != 0; i++)
        cpu_relax(i);
}

u64 irq_work_run_count() {
    return g_runs.load(std::memory_order_relaxed);
}

}  // namespace kshim
