// The runtime's clock events: what timers, hrtimers, delayed work, timed sleeps and the mock
// hardware's latencies are built on. Ordered by (time, band, sequence) so that simulated runs are
// deterministic: nothing depends on pointer values.
#pragma once
#include <boost/intrusive/set.hpp>

#include "kernel_shim/cputime.h"
#include "kernel_shim/types.h"

namespace kshim {

// Priority bands for events due at the same instant: hardware effects first, then timers, then
// wake-ups of timed sleeps.
inline constexpr u8 kBandHardware = 0;
inline constexpr u8 kBandTimer = 1;
inline constexpr u8 kBandWake = 2;

struct TimerEvent : boost::intrusive::set_base_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> {
    using FireFn = void (*)(TimerEvent* ev, u64 gen);

    TimerEvent() = default;
    TimerEvent(FireFn f, void* o, u8 b = kBandTimer, const char* n = "timer") : fire(f), owner(o), band(b), name(n) {}
    TimerEvent(const TimerEvent&) = delete;
    TimerEvent& operator=(const TimerEvent&) = delete;

    // Called in atomic (softirq) context, with the generation the event was armed with: an
    // owner that re-arms or cancels concurrently can tell a stale firing from the current one.
    FireFn fire = nullptr;
    void* owner = nullptr;
    u8 band = kBandTimer;
    const char* name = "timer";
    // Whose CPU time the callback is (cputime.h): a device model's events are Hardware.
    CpuAccount account = CpuAccount::Kernel;

    // Owned by the runtime (under its event lock in real mode).
    ktime_t when = 0;
    u64 seq = 0;
    u64 gen = 0;
    bool armed = false;
    bool running = false;
};

struct TimerEventOrder {
    bool operator()(const TimerEvent& a, const TimerEvent& b) const {
        if (a.when != b.when)
            return a.when < b.when;
        if (a.band != b.band)
            return a.band < b.band;
        return a.seq < b.seq;
    }
};

using TimerEventSet = boost::intrusive::set<TimerEvent, boost::intrusive::compare<TimerEventOrder>>;

}  // namespace kshim
