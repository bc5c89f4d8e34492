// Mirrors include/linux/sched.h: the kernel thread ("task") that runs kernel code.
//
// In simulated mode a task is a fiber on the one runner thread; in real mode it is an OS
// thread. Per-kernel-thread state (lockdep's held locks, the atomic-context counters, the
// running work item) lives here, never in thread_local storage, because fibers share a thread.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <source_location>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include "kernel_shim/cputime.h"
#include "kernel_shim/fiber.h"
#include "kernel_shim/types.h"

namespace kshim {

struct LockdepMap;
struct work_struct;
struct irq_work;
struct files_struct;
struct cred;

enum class TaskKind : u8 {
    Main,     // the thread that created the runtime (the test body, a program's main)
    Kthread,  // kthread_run
    Worker,   // workqueue worker
    Irq,      // threaded-IRQ thread
    Softirq,  // pseudo-task that runs timer callbacks (atomic context)
};

enum class TaskState : u8 { Runnable, Running, Blocked, Exited };

struct HeldLock {
    LockdepMap* map;
    const void* nest;  // ww_acquire_ctx for ww_mutexes taken under a context
    u32 subclass;
    u8 read;  // 0: exclusive, 1: shared, 2: recursive shared
    bool trylock;
    std::source_location loc;
};

// A task's CPU-time accounting (kernel_shim/cputime.h).
struct TaskCputime {
    // Where the task's time goes outside CpuAccountScopes (written by the task itself or before it
    // runs; read by queries from any thread in real mode).
    std::atomic<CpuAccount> account{CpuAccount::Kernel};
    CpuAccount cur = CpuAccount::Kernel;  // where it goes now (the innermost scope's account)
    // Simulated mode: cycles run since the last query, and the CPU time counted until then.
    u64 ticks = 0;
    double ns = 0;
    // Real mode: the thread's CPU clock and its reading when the task started; live/final_ns are
    // under the backend's task lock (the clock is readable while live, final_ns after). The
    // thread's CPU time up to its last checkpoint (`ckpt_ns`, since the start) is split in
    // `exact_ns`; the time since then is shared out in proportion to the cycles run for each
    // account: `cycles` holds the closed intervals, `running` the account of the open one since
    // `mark` (kCpuOff while the thread waits). A long interval ends with a checkpoint. Written by
    // the thread under the seqlock `seq`, read by queries.
    static constexpr u8 kCpuOff = 0xFF;
    clockid_t clock{};
    u64 start_ns = 0;
    bool live = false;
    u64 final_ns = 0;
    std::atomic<u32> seq{0};
    std::atomic<u64> cycles[kCpuAccounts] = {};
    std::atomic<u64> exact_ns[kCpuAccounts] = {};
    std::atomic<u64> ckpt_ns{0};
    std::atomic<u64> mark{0};
    std::atomic<u8> running{kCpuOff};
};

// Task states for set_current_state(): what the next schedule_timeout() sleep may be ended by.
// Only the difference that matters here is kept: a TASK_INTERRUPTIBLE sleep also ends when a
// signal is pending (kernel_shim/signal.h), or does not begin if one already is.
constexpr u8 TASK_RUNNING = 0x0;
constexpr u8 TASK_INTERRUPTIBLE = 0x1;
constexpr u8 TASK_UNINTERRUPTIBLE = 0x2;

struct Task {
    u32 id = 0;
    std::string name;
    TaskKind kind = TaskKind::Kthread;
    TaskState state = TaskState::Runnable;

    // Atomic-context accounting for might_sleep: spinlocks held and IRQs disabled.
    int preempt_count = 0;
    bool hardirq = false;
    // The descriptor table of the client this task runs for (kernel_shim/fs/fdtable.h); nullptr
    // means the process's own (init_files()).
    files_struct* files = nullptr;
    // The credentials the task acts with (kernel_shim/cred.h); nullptr: init_cred.
    const kshim::cred* cred = nullptr;
    // The process the task belongs to (task_tgid_nr): 0 is the runtime's own; the preload's
    // client threads carry their host process's pid (drm_file.pid, the DRM master rules).
    int tgid = 0;
    // irq_work raised by this task, run when it leaves atomic context (kernel_shim/irq_work.h).
    irq_work* irq_work_head = nullptr;
    irq_work* irq_work_tail = nullptr;
    // lockdep-lite: locks (and pseudo-locks) held, in acquisition order.
    std::vector<HeldLock> held;
    // /proc/<pid>/make-it-fail: a FaultPlan with task_filter fails only this task's allocations
    // (kernel_shim/fault_inject.h).
    bool make_it_fail = false;

    // Lifecycle.
    std::function<void()> fn;
    int exit_code = 0;  // kthread function's return value
    std::atomic<bool> should_stop{false};
    std::atomic<bool> exited{false};
    Task* joiner = nullptr;           // task waiting in join()
    bool idle_park = false;           // parked waiting for work: not "stuck" at teardown
    const char* wait_reason = "";     // what it blocks on, for deadlock reports
    std::source_location wait_loc{};  // where it blocked
    work_struct* current_work = nullptr;
    u64 current_work_seq = 0;  // the queued instance current_work runs

    TaskCputime cpu;

    // Wake token (unpark before park makes park return at once).
    std::atomic<bool> wake_token{false};

    // Signals (kernel_shim/signal.h). `sleep_state` is what set_current_state() last said: a
    // TASK_INTERRUPTIBLE sleep ends early when a signal arrives. Both are written by a signal
    // handler in real mode, hence atomics.
    std::atomic<u8> sleep_state{0};
    std::atomic<bool> sigpending{false};

    // Simulated-mode state.
    Fiber fiber;
    bool timed_out = false;
    bool aborted = false;  // resumed only to unwind (the simulation found a deadlock)
    // Yielded from cpu_relax, when the runtime's progress count was spin_epoch: if every
    // runnable task is such a spinner, nothing changed since they last looked (a livelock).
    bool spinning = false;
    u64 spin_epoch = 0;
    std::source_location spin_loc{};

    // Real-mode state.
    std::thread thread;
    std::mutex park_lock;  // protects parked, counted_active and parked_futex
    bool parked = false;
    bool counted_active = true;
    // A park sleeps on this futex word; every unpark and signal changes it and wakes the task (a
    // signal handler may, where a condition variable must not be touched).
    std::atomic<u32> futex_seq{0};
    bool parked_futex = false;  // under park_lock: between the bookkeeping and the wake-up
};

namespace detail {
extern constinit thread_local Task* t_current;
}
// The task running on this CPU: the current fiber's task in simulated mode, the thread's task
// in real mode; nullptr outside any runtime. Inline: it is asked on every lock, wake-up and
// MMIO access.
inline Task* current() {
    return detail::t_current;
}
inline void set_current(Task* t) {
    detail::t_current = t;
}

// task_tgid_nr: the process id of task t (Task::tgid; 0 without a task).
inline int task_tgid_nr(const Task* t) {
    return t ? t->tgid : 0;
}

inline bool in_hardirq() {
    Task* t = current();
    return t && t->hardirq;
}
inline bool in_softirq() {
    Task* t = current();
    return t && t->kind == TaskKind::Softirq;
}
inline bool in_atomic() {
    Task* t = current();
    return t && (t->preempt_count > 0 || t->hardirq || t->kind == TaskKind::Softirq);
}
inline bool in_task() {
    return !in_hardirq() && !in_softirq();
}

}  // namespace kshim
