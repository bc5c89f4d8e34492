// Mirrors kernel/sched/cputime.c: the accounting API (cputime.h); the measuring is the backends'.
#include "kernel_shim/cputime.h"

#include <pthread.h>

#include <algorithm>

#include "kernel_shim/backend.h"

namespace kshim {

namespace detail {
std::atomic<bool> g_cputime_split{false};
}

const char* cpu_account_name(CpuAccount a) {
    switch (a) {
    case CpuAccount::Kernel: return "kernel";
    case CpuAccount::Hardware: return "hardware";
    case CpuAccount::Body: return "body";
    case CpuAccount::Runtime: return "runtime";
    }
    return "?";
}

clockid_t this_thread_cpu_clock() {
    clockid_t c{};
    if (pthread_getcpuclockid(pthread_self(), &c) != 0)
        c = CLOCK_THREAD_CPUTIME_ID;
    return c;
}

u64 cpu_long_interval_cycles() {
    static const u64 cycles = [] {
        // Calibrated against the monotonic clock over ~50 us.
        const u64 t0 = clock_ns(CLOCK_MONOTONIC), c0 = cpu_cycles();
        u64 t1;
        do
            t1 = clock_ns(CLOCK_MONOTONIC);
        while (t1 - t0 < 50000);
        const u64 c1 = cpu_cycles();
        return std::max<u64>((c1 - c0) * 50000 / (t1 - t0), 1);
    }();
    return cycles;
}

u64 process_cputime_ns() {
    return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

CpuTimes cputime_all() {
    return Runtime::get() ? backend().cputime() : CpuTimes{};
}
u64 cputime_ns(CpuAccount a) {
    return cputime_all()[a];
}
u64 cputime_total_ns() {
    return cputime_all().total();
}

u64 task_cputime_ns(const Task* t) {
    return Runtime::get() && t ? backend().task_cputime(t) : 0;
}

void set_task_cpu_account(Task* t, CpuAccount a) {
    if (Runtime::get() && t)
        backend().set_task_cpu_account(t, a);
}

CpuAccount task_cpu_account(const Task* t) {
    return t->cpu.account.load(std::memory_order_relaxed);
}

void CpuAccountScope::enter(CpuAccount a) {
    Task* t = current();
    if (!t)
        return;
    prev_ = backend().cpu_scope_enter(a);
    if (prev_ != a)
        task_ = t;
}

void CpuAccountScope::exit() {
    backend().cpu_scope_exit(prev_);
}

}  // namespace kshim
