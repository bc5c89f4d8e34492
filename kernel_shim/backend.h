// Internal interface between the runtime's modes and the primitives built on them. Every
// blocking primitive reduces to park/unpark with a wake token, and every timed thing to a
// TimerEvent; this is what keeps the two modes' semantics the same.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "kernel_shim/cputime.h"
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
    // A signal is now pending on t (signal_wake_up): end its park if it sleeps TASK_INTERRUPTIBLE.
    // Real mode: async-signal-safe.
    virtual void signal_wake(Task* t) = 0;
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
    // Asked by an event callback: the earliest time at which anything but itself can happen (a
    // task runs, another event fires, a wait ends), KTIME_MAX if nothing ever will. Until then
    // nothing can change what the callback sees, so a poll may skip its rounds up to it. Real
    // mode cannot know (another thread may run at any moment): now().
    virtual ktime_t quiet_until() { return now(); }

    // A timed wait in real mode ends on the host's clock, but the hardware effects due before
    // its deadline run on the timer thread, which a loaded host can starve; real hardware does not
    // slow down when the CPU is busy. So a wait whose deadline passed first lets the hardware
    // catch up to the deadline (every kBandHardware event due by `until` has run), and then looks
    // at its condition once more: a completion the hardware had reached by then (an ack in shared
    // memory, an interrupt's raw status) is seen, and a timeout means it really had not finished.
    // Simulated mode never lags: nothing to do.
    virtual void catch_up_hardware(ktime_t until) { (void)until; }
    virtual bool advance_until_idle(ktime_t limit) = 0;
    virtual void advance(ktime_t d) = 0;
    virtual bool run_until(const std::function<bool()>& pred, ktime_t timeout) = 0;

    // CPU-time accounting (cputime.h). A CpuAccountScope begins: the running task's time goes to
    // `a` from now on; returns the account it went to until now. The scope's end passes that back.
    virtual CpuAccount cpu_scope_enter(CpuAccount a) = 0;
    virtual void cpu_scope_exit(CpuAccount prev) = 0;
    virtual CpuTimes cputime() = 0;
    virtual u64 task_cputime(const Task* t) = 0;
    virtual void set_task_cpu_account(Task* t, CpuAccount a) = 0;

    virtual std::vector<std::string> stuck_tasks() = 0;
    virtual u64 context_switches() const { return 0; }
    // Ends the tasks the runtime itself started; called from ~Runtime.
    virtual void shutdown() = 0;

    u32 next_task_id() { return ++last_task_id_; }

private:
    u32 last_task_id_ = 0;
};

// The account a task's time goes to by default.
inline CpuAccount default_cpu_account(TaskKind k) {
    switch (k) {
    case TaskKind::Main: return CpuAccount::Body;
    case TaskKind::Softirq: return CpuAccount::Runtime;
    default: return CpuAccount::Kernel;
    }
}
inline void init_task_cputime(Task* t) {
    t->cpu.account.store(default_cpu_account(t->kind), std::memory_order_relaxed);
    t->cpu.cur = default_cpu_account(t->kind);
}

// A cheap, steadily counting clock in arbitrary units (simulated mode's accounting shares a
// thread's CPU time out in proportion to it): the cycle counter where there is one.
inline u64 cpu_cycles() {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#elif defined(__aarch64__)
    u64 v;
    asm volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<u64>(ts.tv_sec) * 1000000000ull + static_cast<u64>(ts.tv_nsec);
#endif
}
inline u64 clock_ns(clockid_t c) {
    timespec ts{};
    clock_gettime(c, &ts);
    return static_cast<u64>(ts.tv_sec) * 1000000000ull + static_cast<u64>(ts.tv_nsec);
}
// The calling thread's CPU clock (readable from other threads while it lives).
clockid_t this_thread_cpu_clock();
// cpu_cycles() per ~50 us (measured once per process). An accounting interval at least this long
// is worth a read of the thread's CPU clock at its end (cputime.h: a long interval the OS
// preempted would otherwise take more than its share).
u64 cpu_long_interval_cycles();

Backend* make_sim_backend(const RuntimeOptions& opts, Task* main);
Backend* make_real_backend(const RuntimeOptions& opts, Task* main);

// The live runtime's backend (aborts if there is none).
Backend& backend();

}  // namespace kshim
