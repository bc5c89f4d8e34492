// Internal interface between the runtime's modes and the primitives built on them. Every
// blocking primitive reduces to park/unpark with a wake token, and every timed thing to a
// TimerEvent; this is what keeps the two modes' semantics the same.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "kernel_shim/runtime.h"

namespace kshim {

class Backend {
public:
    virtual ~Backend() = default;

    virtual ktime_t now() = 0;

    // Creates a task that runs fn; it is runnable at once.
    virtual Task* spawn(std::string name, TaskKind kind, std::function<void()> fn) = 0;
    // Waits until `t` has finished, frees it and returns its exit code.
    virtual int join(Task* t) = 0;

    // Blocks the current task until unpark() (or a token left by an earlier unpark) or until
    // `deadline` (KTIME_MAX: none). Returns false when the deadline passed.
    virtual bool park(ktime_t deadline) = 0;
    virtual void unpark(Task* t) = 0;
    virtual void yield() = 0;
    // One step of a busy-wait on another task (cpu_relax): a yield the simulated runtime can
    // tell from progress, to move the clock (or report a livelock) when only spinners can run.
    virtual void spin_yield(std::source_location) { yield(); }
    // Simulated mode with preemption on: maybe yield here.
    virtual void preempt_point() = 0;
    // cond_resched: a preemption point that, with preemption on, always lets another runnable
    // task run (the kernel yields there whenever a reschedule is due).
    virtual void cond_resched() { preempt_point(); }
    // Lets `d` pass without sleeping (udelay): other tasks run meanwhile.
    virtual void busy_wait(ktime_t d) = 0;

    virtual void timer_arm(TimerEvent* ev, ktime_t when) = 0;
    // Returns true if the event was armed (it will not fire for that arming).
    virtual bool timer_cancel(TimerEvent* ev) = 0;
    // Waits until the event's callback is not running (after a cancel: del_timer_sync).
    virtual void timer_wait_idle(TimerEvent* ev) = 0;

    virtual bool run_until_idle(ktime_t limit) = 0;
    virtual void advance(ktime_t d) = 0;
    virtual bool run_until(const std::function<bool()>& pred, ktime_t timeout) = 0;

    virtual std::vector<std::string> stuck_tasks() = 0;
    virtual u64 context_switches() const { return 0; }
    // Ends the tasks the runtime itself started; called from ~Runtime.
    virtual void shutdown() = 0;

    u32 next_task_id() { return ++last_task_id_; }

private:
    u32 last_task_id_ = 0;
};

Backend* make_sim_backend(const RuntimeOptions& opts, Task* main);
Backend* make_real_backend(const RuntimeOptions& opts, Task* main);

// The live runtime's backend (aborts if there is none).
Backend& backend();

}  // namespace kshim
