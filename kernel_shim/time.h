// Mirrors include/linux/jiffies.h, ktime.h, timer.h, hrtimer.h on the runtime's clock.
#pragma once
#include <climits>
#include <functional>

#include "kernel_shim/runtime.h"
#include "kernel_shim/timer_event.h"

namespace kshim {

inline constexpr unsigned long HZ = 250;  // Debian's CONFIG_HZ
inline constexpr long MAX_SCHEDULE_TIMEOUT = LONG_MAX;
// jiffies start 5 minutes before their 32-bit wrap, as in the kernel, so wrap bugs show early.
inline constexpr unsigned long INITIAL_JIFFIES =
    static_cast<unsigned long>(static_cast<unsigned int>(-300 * static_cast<int>(HZ)));
inline constexpr ktime_t TICK_NSEC = NSEC_PER_SEC / HZ;

inline unsigned long jiffies_now() {
    return INITIAL_JIFFIES + static_cast<unsigned long>(ktime_get() / TICK_NSEC);
}
#define jiffies (::kshim::jiffies_now())

// Round up, as the kernel does: a non-zero duration is at least one jiffy.
inline constexpr unsigned long msecs_to_jiffies(unsigned int m) {
    return (static_cast<unsigned long>(m) * HZ + 999) / 1000;
}
inline constexpr unsigned long usecs_to_jiffies(unsigned int u) {
    return (static_cast<unsigned long>(u) * HZ + 999999) / 1000000;
}
inline constexpr unsigned long nsecs_to_jiffies(u64 n) {
    return static_cast<unsigned long>(n / TICK_NSEC);
}
inline constexpr unsigned int jiffies_to_msecs(unsigned long j) {
    return static_cast<unsigned int>(j * 1000 / HZ);
}
inline constexpr u64 jiffies_to_nsecs(unsigned long j) {
    return static_cast<u64>(j) * TICK_NSEC;
}
inline constexpr ktime_t ms_to_ktime(u64 ms) {
    return static_cast<ktime_t>(ms) * NSEC_PER_MSEC;
}
inline constexpr ktime_t us_to_ktime(u64 us) {
    return static_cast<ktime_t>(us) * NSEC_PER_USEC;
}
inline constexpr s64 ktime_to_ns(ktime_t t) {
    return t;
}
inline constexpr s64 ktime_to_us(ktime_t t) {
    return t / NSEC_PER_USEC;
}
inline constexpr s64 ktime_to_ms(ktime_t t) {
    return t / NSEC_PER_MSEC;
}
inline ktime_t ktime_add_ns(ktime_t t, u64 ns) {
    return t + static_cast<ktime_t>(ns);
}
inline ktime_t ktime_sub(ktime_t a, ktime_t b) {
    return a - b;
}
inline ktime_t ktime_get_raw() {
    return ktime_get();
}
inline u64 ktime_get_ns() {
    return static_cast<u64>(ktime_get());
}
// The host's monotonic clock, whatever the runtime's mode: for a program reporting its own speed
// against virtual time (the simulator's summary). Kernel code uses ktime_get().
u64 host_monotonic_ns();

// When a timeout of `timeout` jiffies from now expires: at a tick boundary, as the kernel's
// timer wheel. KTIME_MAX for MAX_SCHEDULE_TIMEOUT or anything beyond the clock's range.
inline ktime_t jiffies_timeout_deadline(long timeout) {
    if (timeout == MAX_SCHEDULE_TIMEOUT)
        return KTIME_MAX;
    if (timeout < 0)
        timeout = 0;
    const ktime_t tick = ktime_get() / TICK_NSEC;
    if (timeout > KTIME_MAX / TICK_NSEC - tick)
        return KTIME_MAX;
    return (tick + timeout) * TICK_NSEC;
}
// Jiffies left until `deadline`, rounded up; 0 once it has passed.
inline long jiffies_until(ktime_t deadline) {
    const ktime_t left = deadline - ktime_get();
    return left <= 0 ? 0 : static_cast<long>((left + TICK_NSEC - 1) / TICK_NSEC);
}

inline constexpr bool time_after(unsigned long a, unsigned long b) {
    return static_cast<long>(b - a) < 0;
}
inline constexpr bool time_before(unsigned long a, unsigned long b) {
    return time_after(b, a);
}
inline constexpr bool time_after_eq(unsigned long a, unsigned long b) {
    return static_cast<long>(a - b) >= 0;
}
inline constexpr bool time_before_eq(unsigned long a, unsigned long b) {
    return time_after_eq(b, a);
}

// ---- timer_list (jiffies resolution; the callback runs in softirq context) ----
struct timer_list {
    TimerEvent ev;
    std::function<void(timer_list*)> function;
    unsigned long expires = 0;
};
void timer_setup(timer_list* t, std::function<void(timer_list*)> fn, unsigned flags = 0);
// Returns 1 if the timer was pending, 0 otherwise.
int mod_timer(timer_list* t, unsigned long expires);
void add_timer(timer_list* t);
bool timer_pending(const timer_list* t);
int del_timer(timer_list* t);       // timer_delete
int del_timer_sync(timer_list* t);  // also waits for a running callback
inline int timer_delete(timer_list* t) {
    return del_timer(t);
}
inline int timer_delete_sync(timer_list* t) {
    return del_timer_sync(t);
}
// On-stack timers are plain timers here. Destroying one still armed (or whose callback still
// runs) is reported as the kernel's debugobjects would: the memory is about to go.
inline void timer_setup_on_stack(timer_list* t, std::function<void(timer_list*)> fn, unsigned flags = 0) {
    timer_setup(t, std::move(fn), flags);
}
void destroy_timer_on_stack(timer_list* t);
inline void timer_destroy_on_stack(timer_list* t) {
    destroy_timer_on_stack(t);
}

// ---- hrtimer (nanosecond resolution; the callback runs in hard-IRQ-like atomic context) ----
enum hrtimer_restart { HRTIMER_NORESTART, HRTIMER_RESTART };
enum hrtimer_mode { HRTIMER_MODE_ABS = 0, HRTIMER_MODE_REL = 1 };
enum clockid_t_ { CLOCK_MONOTONIC_ = 1 };

struct hrtimer {
    TimerEvent ev;
    std::function<hrtimer_restart(hrtimer*)> function;
    ktime_t expires = 0;
};
void hrtimer_setup(hrtimer* t, std::function<hrtimer_restart(hrtimer*)> fn, int clock = CLOCK_MONOTONIC_,
                   hrtimer_mode mode = HRTIMER_MODE_REL);
void hrtimer_start(hrtimer* t, ktime_t tim, hrtimer_mode mode);
// Returns 1 if the timer was active; waits for a running callback.
int hrtimer_cancel(hrtimer* t);
// Returns 1 if it was active and is now cancelled, 0 if it was not active.
int hrtimer_try_to_cancel(hrtimer* t);
bool hrtimer_active(const hrtimer* t);
// Moves the expiry forward by whole intervals until it is after now; returns the overruns.
u64 hrtimer_forward_now(hrtimer* t, ktime_t interval);
inline ktime_t hrtimer_get_expires(const hrtimer* t) {
    return t->expires;
}

}  // namespace kshim
