// Mirrors include/linux/iopoll.h: register polling that lets time pass, so a poll in simulated
// mode advances the virtual clock instead of spinning forever.
#pragma once
#include "kernel_shim/sched.h"

namespace kshim {

// Returns 0 once cond() holds after a read, or -ETIMEDOUT (after one last read) when
// timeout_us passes; timeout_us 0 polls forever.
template <class Read, class Cond>
int poll_timeout(Read&& read, Cond&& cond, unsigned long sleep_us, u64 timeout_us, bool sleep_before_read,
                 bool atomic) {
    const ktime_t deadline = ktime_get() + static_cast<ktime_t>(timeout_us) * NSEC_PER_USEC;
    if (!atomic && sleep_us)
        might_sleep();
    auto pause = [&] {
        // A zero interval still lets 1 us pass: a register only changes when time moves.
        unsigned long us = sleep_us ? sleep_us : 1;
        if (atomic || !sleep_us)
            udelay(us);
        else
            usleep_range((us >> 2) + 1, us);
    };
    if (sleep_before_read && sleep_us)
        pause();
    for (;;) {
        read();
        if (cond())
            return 0;
        if (timeout_us && ktime_get() > deadline) {
            read();
            return cond() ? 0 : -ETIMEDOUT;
        }
        pause();
    }
}

}  // namespace kshim

#define read_poll_timeout(op, val, cond, sleep_us, timeout_us, sleep_before_read, ...)                    \
    ::kshim::poll_timeout([&] { (val) = op(__VA_ARGS__); }, [&]() -> bool { return (cond); }, (sleep_us), \
                          (timeout_us), (sleep_before_read), false)
#define read_poll_timeout_atomic(op, val, cond, delay_us, timeout_us, delay_before_read, ...)             \
    ::kshim::poll_timeout([&] { (val) = op(__VA_ARGS__); }, [&]() -> bool { return (cond); }, (delay_us), \
                          (timeout_us), (delay_before_read), true)
