// Mirrors include/linux/sched/signal.h and the wake-up half of kernel/signal.c: the signal state
// an interruptible sleep looks at.
//
// The shim has no signal queue: whoever stands for the syscall layer decides what a signal is.
// Tests call signal_wake_up() on a task; the preload library calls it from its handler trampoline
// when a real signal reaches a client thread, and turns the -ERESTARTSYS that comes back into
// EINTR or a restart of the ioctl, as the kernel's return to user space does (docs/kshim.md).
#pragma once
#include "kernel_shim/task.h"

namespace kshim {

inline bool signal_pending(const Task* t) {
    return t && t->sigpending.load(std::memory_order_acquire);
}
// No fatal signals are modelled (nothing kills a client from inside the shim).
inline bool fatal_signal_pending(const Task*) {
    return false;
}

// Marks a signal pending on `t` and ends its interruptible sleep, if it is in one (the kernel's
// signal_wake_up_state with TASK_INTERRUPTIBLE). In real mode this is async-signal-safe: no lock,
// only atomics and a futex wake, so a signal handler may call it.
void signal_wake_up(Task* t);

// The syscall layer's delivery: the signal has been handled, the next syscall starts clean.
inline void clear_signal_pending(Task* t) {
    t->sigpending.store(false, std::memory_order_release);
}

}  // namespace kshim
