// Mirrors kernel/sched/cputime.c: the CPU time each task has run (the kernel's task accounting,
// what /proc/<pid>/task/<tid>/stat reports), plus a classification of that time into accounts, so
// a benchmark can tell the driver's own work from the mock hardware's and from the test body's.
//
// Accounts. Every nanosecond a runtime's thread runs goes to exactly one account:
//  - Kernel: kernel tasks (kthreads, workqueue workers, threaded-IRQ threads) and the callbacks
//    of timers, hrtimers and delayed work;
//  - Hardware: the device model: HwEvent callbacks (a TimerEvent whose `account` is Hardware) and
//    regions wrapped in a CpuAccountScope(Hardware), such as an MMIO access the mock handles
//    inline in the calling driver task;
//  - Body: the main task (the test or benchmark body, a program's main);
//  - Runtime: the shim's own scheduling in simulated mode (the scheduler loop, fiber switches,
//    picking the next task). Real mode leaves that to the OS; its timer thread's bookkeeping goes
//    with the callbacks it runs.
// A task's time goes to its account (set_task_cpu_account, by default from its TaskKind: the main
// task Body, the others Kernel); a CpuAccountScope charges a region of it to another one.
// task_cputime_ns counts everything the task ran, whichever account it went to.
//
// Opt-in. Measuring costs a read of the cycle counter at every change of who runs (~30-80 ns on
// the VMs we run on, two per task switch and per MMIO access), so the split is off unless the
// runtime is made with RuntimeOptions::cputime_split (KSHIM_CPUTIME=1), as the benchmarks that
// report it do. Off, nothing is measured per interval: CpuAccountScopes do nothing,
// cputime_all() is all zeros and so is task_cputime_ns in simulated mode (real mode's is the
// thread's CPU clock, which costs nothing until it is read); a task's account is still kept.
//
// Measuring. The totals are the threads' CPU clocks (CLOCK_THREAD_CPUTIME_ID); reading one is a
// system call of ~0.6 us here, as long as ten simulated task switches. So a change of who runs
// (a task switch, an event callback, a scope's start and end, a real thread parking) only reads
// the cycle counter (a few ns) and adds the cycles to the task and account that ran; a query
// shares each thread's CPU time out in proportion to those cycles. Simulated mode runs every task
// on one thread and converts the cycles since the previous query; real mode splits each thread's
// CPU time by its own cycles per account (waiting time is not counted). The sums are the threads'
// CPU time; the split is exact unless the OS takes the CPU away in the middle of an interval,
// whose share then grows by what was taken. Preemption strikes intervals in proportion to their
// length, so over a benchmark's many intervals the split stays right under load.
#pragma once
#include <atomic>

#include "kernel_shim/types.h"

namespace kshim {

struct Task;

enum class CpuAccount : u8 { Kernel, Hardware, Body, Runtime };
inline constexpr int kCpuAccounts = 4;

const char* cpu_account_name(CpuAccount a);

namespace detail {
extern std::atomic<bool> g_cputime_split;  // the live runtime's RuntimeOptions::cputime_split
}
// Whether the live runtime splits CPU time by account (see "Opt-in" above).
inline bool cputime_split_enabled() {
    return detail::g_cputime_split.load(std::memory_order_relaxed);
}

// CPU time charged to each account since the runtime started, in ns. Monotonic; one consistent
// snapshot per call.
struct CpuTimes {
    u64 ns[kCpuAccounts] = {};
    u64 operator[](CpuAccount a) const { return ns[static_cast<int>(a)]; }
    u64 total() const { return ns[0] + ns[1] + ns[2] + ns[3]; }
};
CpuTimes cputime_all();
u64 cputime_ns(CpuAccount a);
// All accounts together: the CPU time the runtime's threads ran since it started.
u64 cputime_total_ns();

// CPU time `t` has run so far (all of it, whichever account it was charged to). In simulated mode
// a task that was joined is gone, and with it its count.
u64 task_cputime_ns(const Task* t);

// The process's CPU clock (CLOCK_PROCESS_CPUTIME_ID), in ns: what the accounts are checked
// against (every thread of the process, the runtime's or not).
u64 process_cputime_ns();

// The account a task's time goes to outside CpuAccountScopes (a device model's own tasks use
// Hardware); what it ran before stays where it was charged. Call it from the task itself (or, in
// simulated mode, from anywhere), outside any CpuAccountScope.
void set_task_cpu_account(Task* t, CpuAccount a);
CpuAccount task_cpu_account(const Task* t);

// Charges the current task's time to `a` until the scope ends (nests). Outside a runtime, or
// with the split off, it does nothing. A scope must end on the task it began on.
class CpuAccountScope {
public:
    explicit CpuAccountScope(CpuAccount a) {
        if (cputime_split_enabled())
            enter(a);
    }
    ~CpuAccountScope() {
        if (task_)
            exit();
    }
    CpuAccountScope(const CpuAccountScope&) = delete;
    CpuAccountScope& operator=(const CpuAccountScope&) = delete;

private:
    void enter(CpuAccount a);
    void exit();
    Task* task_ = nullptr;
    CpuAccount prev_ = CpuAccount::Kernel;
};

}  // namespace kshim
