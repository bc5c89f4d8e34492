// Mirrors include/linux/wait_bit.h's variable waits: wait_var_event* sleep until a condition
// on some variable holds, woken by wake_up_var(&that variable).
//
// The kernel hashes the address into a shared table of wait queues, so a wake-up may also
// wake waiters of other variables (they recheck and sleep again). Here a wake-up wakes only
// the waiters of that exact address: a spurious wake-up would make a task runnable, and which
// ones did would depend on heap addresses, which the simulated scheduler must never see.
#pragma once
#include <source_location>

#include "kernel_shim/sched.h"
#include "kernel_shim/wait.h"

namespace kshim {

struct VarWaiter {
    const void* var;
    Task* task;
};
void var_waiter_add(VarWaiter* w);
void var_waiter_remove(VarWaiter* w);
// Wakes every task waiting on `var`. The condition's store must come before (as upstream asks
// for a barrier there; the waiters' list lock orders the two here).
void wake_up_var(const void* var);

// As wait_event_timeout: 0 if cond() still fails after `timeout` jiffies, else the jiffies
// left (at least 1); MAX_SCHEDULE_TIMEOUT waits for ever.
template <class Cond>
long wait_var_event_timeout_impl(const void* var, Cond&& cond, long timeout, std::source_location loc,
                                 bool interruptible = false) {
    VarWaiter w{var, nullptr};
    return wait_cond_timeout(
        cond, timeout, loc, "wait_var_event",
        [&](Task* t) {
            w.task = t;
            var_waiter_add(&w);
        },
        [&] { var_waiter_remove(&w); }, interruptible);
}

}  // namespace kshim

#define wait_var_event(var, cond)                                                        \
    ((void)::kshim::wait_var_event_timeout_impl((var), [&]() -> bool { return (cond); }, \
                                                ::kshim::MAX_SCHEDULE_TIMEOUT, std::source_location::current()))
#define wait_var_event_timeout(var, cond, timeout)                                           \
    ::kshim::wait_var_event_timeout_impl((var), [&]() -> bool { return (cond); }, (timeout), \
                                         std::source_location::current())
// No fatal signals are modelled: never interrupted.
#define wait_var_event_killable(var, cond) (wait_var_event(var, cond), 0)
// 0, or -ERESTARTSYS when a signal is pending (kernel_shim/signal.h) before cond() holds.
#define wait_var_event_interruptible(var, cond)                                                                      \
    ::kshim::interruptible_wait_result(::kshim::wait_var_event_timeout_impl((var), [&]() -> bool { return (cond); }, \
                                                                            ::kshim::MAX_SCHEDULE_TIMEOUT,           \
                                                                            std::source_location::current(), true))
