// Mirrors kernel/sched/core.c (might_sleep, schedule_timeout), kernel/time/sleep_timeout.c,
// kernel/kthread.c, on the runtime's park/unpark.
#include "kernel_shim/sched.h"

#include <algorithm>
#include <thread>

#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/signal.h"

namespace kshim {

namespace {
// Out of line: the report's strings would give might_sleep_impl, which runs before every lock
// and sleep, a large stack frame that ASan poisons and clears on each call.
[[gnu::noinline, gnu::cold]] void report_might_sleep(const Task* t, bool softirq, std::source_location loc) {
    report(ReportKind::MightSleep,
           std::string("BUG: sleeping function called from invalid context at ") + loc.file_name() + ":" +
               std::to_string(loc.line()),
           "in_atomic(): " + std::to_string(t->preempt_count > 0 || softirq) +
               ", in_hardirq(): " + std::to_string(t->hardirq) + ", name: " + t->name +
               "\nfunction: " + loc.function_name() + "\nlocks held:\n" + lockdep_held_locks_text(t));
}
}  // namespace

void might_sleep_impl(std::source_location loc) {
    Task* t = current();
    if (!t)
        return;
    bool softirq = t->kind == TaskKind::Softirq;
    if (t->preempt_count == 0 && !t->hardirq && !softirq)
        return;
    report_might_sleep(t, softirq, loc);
}

void might_alloc(gfp_t gfp) {
#if KSHIM_DEBUG_CHECKS
    if (!gfpflags_allow_blocking(gfp) || !current())
        return;
    might_sleep();
    fs_reclaim_acquire(gfp);
    fs_reclaim_release(gfp);
#else
    (void)gfp;
#endif
}

long schedule_timeout(long timeout, std::source_location loc) {
    might_sleep(loc);
    Task* t = current();
    t->wait_reason = "schedule_timeout";
    t->wait_loc = loc;
    const ktime_t deadline = jiffies_timeout_deadline(timeout);
    // As __schedule() does: an interruptible sleeper with a signal pending stays runnable.
    if (!(t->sleep_state.load(std::memory_order_relaxed) == TASK_INTERRUPTIBLE && signal_pending(t)))
        backend().park(deadline);
    t->sleep_state.store(TASK_RUNNING, std::memory_order_relaxed);
    if (timeout == MAX_SCHEDULE_TIMEOUT)
        return MAX_SCHEDULE_TIMEOUT;
    return jiffies_until(deadline);
}

bool wake_up_process(Task* t) {
    backend().unpark(t);
    return true;
}

void signal_wake_up(Task* t) {
    t->sigpending.store(true, std::memory_order_release);
    backend().signal_wake(t);
}

void cond_resched() {
    backend().cond_resched();
}

// Sleeps until `deadline` whatever wakes the task meanwhile; keeps a token that arrives
// during the sleep for the next park, as the kernel's state machine would.
static void sleep_until(ktime_t deadline, const char* why, std::source_location loc) {
    might_sleep(loc);
    Task* t = current();
    t->wait_reason = why;
    t->wait_loc = loc;
    bool token = false;
    while (ktime_get() < deadline)
        token |= backend().park(deadline);
    if (token)
        t->wake_token.store(true);
}

void msleep(unsigned msecs) {
    sleep_until(ktime_get() + static_cast<ktime_t>(msecs) * NSEC_PER_MSEC, "msleep", std::source_location::current());
}

void usleep_range(unsigned long min_us, unsigned long) {
    sleep_until(ktime_get() + static_cast<ktime_t>(min_us) * NSEC_PER_USEC, "usleep_range",
                std::source_location::current());
}

void fsleep(unsigned long usecs) {
    usleep_range(usecs, usecs * 2);
}

void udelay(unsigned long usecs) {
    backend().busy_wait(static_cast<ktime_t>(usecs) * NSEC_PER_USEC);
}
void ndelay(unsigned long nsecs) {
    backend().busy_wait(static_cast<ktime_t>(nsecs));
}

Task* kthread_run(std::function<int()> fn, const char* name) {
    return backend().spawn(name, TaskKind::Kthread, [fn = std::move(fn)] { current()->exit_code = fn(); });
}

bool kthread_should_stop() {
    Task* t = current();
    return t && t->should_stop.load();
}

unsigned num_online_cpus() {
    if (Runtime::get()->mode() == Mode::Simulated)
        return 8;
    return std::max(1u, std::thread::hardware_concurrency());
}

int kthread_stop(Task* t) {
    t->should_stop.store(true);
    backend().unpark(t);
    return backend().join(t);
}

}  // namespace kshim
