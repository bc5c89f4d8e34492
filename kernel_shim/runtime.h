// The runtime that kernel code runs on, in one of two modes (docs/conventions.md, Runtime):
//  - Simulated: virtual clock, one runner, tasks are fibers; the next runnable task is chosen
//    by a seeded PRNG; when nothing can run the clock jumps to the next event. Same seed, same
//    interleaving.
//  - Real: OS threads, the monotonic clock, one timer thread for events.
// One runtime exists at a time in a process; the thread that constructs it becomes its "main"
// task and drives it (advance_until_idle, advance, run_until).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernel_shim/task.h"
#include "kernel_shim/timer_event.h"

namespace kshim {

enum class Mode { Simulated, Real };

inline constexpr ktime_t NSEC_PER_USEC = 1000;
inline constexpr ktime_t NSEC_PER_MSEC = 1000 * 1000;
inline constexpr ktime_t NSEC_PER_SEC = 1000 * 1000 * 1000;
inline constexpr ktime_t KTIME_MAX = INT64_MAX;

struct RuntimeOptions {
    Mode mode = Mode::Simulated;
    u64 seed = 1;
    // Simulated mode: chance that a preemption point (lock, unlock, queue_work, wake-up, fence
    // signal) yields to another runnable task, so seeded sweeps explore other interleavings.
    double preempt_probability = 0.0;
    // Record trace events; write them as Chrome trace JSON to trace_path at destruction when it
    // is set. KSHIM_TRACE=path turns both on.
    bool trace = false;
    std::string trace_path;
    // Split the CPU time by account (kernel_shim/cputime.h): off by default, as measuring costs
    // a cycle-counter read at every task switch and every mock MMIO access. KSHIM_CPUTIME=1
    // turns it on.
    bool cputime_split = false;
};

// KSHIM_SEED from the environment, or `fallback`.
u64 seed_from_env(u64 fallback);
// Applies KSHIM_SEED, KSHIM_TRACE, KSHIM_PREEMPT and KSHIM_CPUTIME to `opts`.
RuntimeOptions options_from_env(RuntimeOptions opts);

class Backend;

class Runtime {
public:
    explicit Runtime(RuntimeOptions opts = {});
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    static Runtime* get();

    Mode mode() const { return opts_.mode; }
    u64 seed() const { return opts_.seed; }
    const RuntimeOptions& options() const { return opts_; }
    Task* main_task() const { return main_; }

    // Driving, from the main task. The names say whether runtime time may pass.
    // advance_until_idle runs tasks and lets time pass, event by event, until no task is runnable
    // and no event is pending (false if that does not happen within `limit` of runtime time).
    bool advance_until_idle(ktime_t limit = 600 * NSEC_PER_SEC);
    // run_pending runs what can run now, without letting time pass (simulated mode: every
    // runnable task and every event due at the current instant); true if nothing is pending
    // afterwards, false if an event waits for a later time (or, in real mode, always).
    bool run_pending();
    // Lets `d` of runtime time pass while everything else runs.
    void advance(ktime_t d);
    // Runs until pred() holds (true) or `timeout` of runtime time passes (false). pred runs in
    // atomic context and must not block.
    bool run_until(const std::function<bool()>& pred, ktime_t timeout);

    // Tasks that are blocked on something other than waiting for work, with what they wait on.
    std::vector<std::string> stuck_tasks();
    // Simulated mode: task switches so far.
    u64 context_switches() const;

    Backend& backend() { return *backend_; }

private:
    RuntimeOptions opts_;
    std::unique_ptr<Backend> backend_;
    Task* main_ = nullptr;
};

// The runtime's clock: virtual in simulated mode, monotonic in real mode. Nanoseconds.
ktime_t ktime_get();

}  // namespace kshim
