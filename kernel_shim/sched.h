// Mirrors include/linux/sched.h, kthread.h, delay.h: sleeping, kthreads, and might_sleep.
#pragma once
#include <functional>
#include <source_location>

#include "kernel_shim/backend.h"
#include "kernel_shim/time.h"

namespace kshim {

// Reports "sleeping function called from invalid context" when the current task holds a
// spinlock, is in a hard-IRQ handler or runs a timer callback. Compiled out in release.
void might_sleep_impl(std::source_location loc);
#if KSHIM_DEBUG_CHECKS
inline void might_sleep(std::source_location loc = std::source_location::current()) {
    might_sleep_impl(loc);
}
#else
inline void might_sleep(std::source_location = std::source_location::current()) {}
#endif

// A preemption point (lock, unlock, queue_work, wake-up, fence signal): in simulated mode with
// preemption on, the runtime may switch tasks here.
inline void preempt_point() {
    backend().preempt_point();
}

// One step of a busy-wait for another task (the kernel's cpu_relax); `iteration` counts the
// steps of this wait. Simulated mode yields to the runtime (one runner: the other task only
// progresses if this one lets it); real threads pause, and give up the CPU from the 65th step
// on, since the task waited for may have been preempted on this very CPU.
// Simulated mode: when every runnable task is spinning here, nothing can change what they wait
// for until time passes, so the clock jumps to the next timer; with no timer pending, the
// livelock is reported with where each one spins.
void cpu_relax(unsigned iteration = 0, std::source_location loc = std::source_location::current());

// The host CPU's spin-wait hint: one step of a real thread's busy-wait, without yielding.
inline void host_cpu_pause() {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
}

// Atomic sections (preempt_disable / local_irq_save): might_sleep fires inside them. The count
// is kept in every build, debug checks or not, because the simulated scheduler reads it: a
// preemption point inside a spinlock must not yield.
inline void preempt_disable() {
    if (Task* t = current())
        t->preempt_count++;
}
void irq_work_run();
// Leaving the outermost atomic section delivers the irq_work raised inside it, as re-enabling
// interrupts delivers the kernel's self-IPI.
inline void preempt_enable() {
    if (Task* t = current()) {
        if (--t->preempt_count == 0 && t->irq_work_head && !t->hardirq) [[unlikely]]
            irq_work_run();
    }
}

inline void __set_current_state(u8 state) {
    if (Task* t = current())
        t->sleep_state.store(state, std::memory_order_relaxed);
}
// The kernel's version orders the state store before the condition test that follows; here the
// wake token already keeps a wake-up in between from being lost, so the store is all there is.
inline void set_current_state(u8 state) {
    if (Task* t = current())
        t->sleep_state.store(state, std::memory_order_seq_cst);
}

// Blocks the current task until woken (wake_up_process) or the timeout passes; returns the
// jiffies left (0 when it timed out). MAX_SCHEDULE_TIMEOUT waits without a deadline. The task
// is TASK_RUNNING again afterwards; a TASK_INTERRUPTIBLE one with a signal pending does not sleep.
long schedule_timeout(long timeout, std::source_location loc = std::source_location::current());
inline void schedule(std::source_location loc = std::source_location::current()) {
    schedule_timeout(MAX_SCHEDULE_TIMEOUT, loc);
}
bool wake_up_process(Task* t);
// A preemption point that, in simulated mode with preemption points on, always yields to
// another runnable task (not only with the preemption probability): the caller says a switch
// is fine here, which the kernel grants whenever a reschedule is pending. Without preemption
// points it never switches, like every other preemption point.
void cond_resched();

void msleep(unsigned msecs);
void usleep_range(unsigned long min_us, unsigned long max_us);
void fsleep(unsigned long usecs);
// Busy waits: no might_sleep, but other tasks run meanwhile.
void udelay(unsigned long usecs);
void ndelay(unsigned long nsecs);

// kthreads.
Task* kthread_run(std::function<int()> fn, const char* name);
bool kthread_should_stop();
// Asks the thread to stop, wakes it, waits for it to finish and returns its result.
int kthread_stop(Task* t);
// kthread_stop plus put_task_struct: tasks are not refcounted here (kthread_stop frees the
// task once it finished), so there is no reference to drop.
inline int kthread_stop_put(Task* t) {
    return kthread_stop(t);
}

// CPUs the code may spread work over. Simulated mode: a fixed 8 (the RK3588 that carries a
// Mali-G610 has 8 cores), so that sizes derived from it, and thus interleavings, are the same
// on every machine. Real mode: the host's hardware threads.
unsigned num_online_cpus();

}  // namespace kshim
