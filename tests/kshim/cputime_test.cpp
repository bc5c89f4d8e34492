// Per-task CPU time and its accounts (kernel_shim/cputime.h), in both modes. The reference is the
// process's CPU clock; work is "burned" against it, so the amounts are real CPU time whatever the
// load, and the bounds leave room for the runtime's own overhead and, in real mode, other threads.
#include <gtest/gtest.h>

#include "kernel_shim/backend.h"
#include "kernel_shim/completion.h"
#include "kernel_shim/cputime.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/time.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {

constexpr u64 kMs = 1000 * 1000;

// Runs on the CPU until the process has used `ns` more CPU time.
void burn(u64 ns) {
    const u64 end = process_cputime_ns() + ns;
    while (process_cputime_ns() < end) {
    }
}

CpuTimes delta(const CpuTimes& a, const CpuTimes& b) {
    CpuTimes d;
    for (int i = 0; i < kCpuAccounts; i++)
        d.ns[i] = b.ns[i] - a.ns[i];
    return d;
}

std::string show(const CpuTimes& t) {
    std::string s;
    for (int a = 0; a < kCpuAccounts; a++)
        s += std::string(cpu_account_name(static_cast<CpuAccount>(a))) + "=" + std::to_string(t.ns[a] / 1000) + "us ";
    return s;
}

// The split is opt-in (RuntimeOptions::cputime_split): a fixture of either runtime mode with
// the split on or off.
template <class Base, bool kSplit>
class CputimeFixture : public Base {
protected:
    RuntimeOptions runtime_options() const override {
        RuntimeOptions o = Base::runtime_options();
        o.cputime_split = kSplit;
        return o;
    }
};
using Cputime = CputimeFixture<kshim::testing::KernelTest, true>;

TEST_F(Cputime, BusyTaskAccruesCpuWhileASleepingTaskAccruesNone) {
    Task* busy = kthread_run(
        [] {
            burn(20 * kMs);
            while (!kthread_should_stop())
                schedule();
            return 0;
        },
        "busy");
    Task* sleeper = kthread_run(
        [] {
            msleep(5000);  // virtual time: no CPU while it passes
            while (!kthread_should_stop())
                schedule();
            return 0;
        },
        "sleeper");
    advance_until_idle();
    EXPECT_GE(task_cputime_ns(busy), 16 * kMs);
    EXPECT_LT(task_cputime_ns(busy), 60 * kMs);
    EXPECT_LT(task_cputime_ns(sleeper), 2 * kMs);
    // The body only waited meanwhile.
    EXPECT_LT(task_cputime_ns(current()), task_cputime_ns(busy));
    kthread_stop(busy);
    kthread_stop(sleeper);
}

TEST_F(Cputime, AccountsAndTaskTimesNeverGoDown) {
    Task* busy = kthread_run(
        [] {
            while (!kthread_should_stop()) {
                burn(kMs / 4);
                schedule_timeout(1);
            }
            return 0;
        },
        "busy");
    CpuTimes prev = cputime_all();
    u64 prev_task = task_cputime_ns(busy);
    u64 grew = 0;
    for (int i = 0; i < 50; i++) {
        advance(4 * NSEC_PER_MSEC);
        {
            CpuAccountScope hw(CpuAccount::Hardware);
            burn(kMs / 10);
        }
        const CpuTimes now = cputime_all();
        for (int a = 0; a < kCpuAccounts; a++)
            ASSERT_GE(now.ns[a], prev.ns[a]) << cpu_account_name(static_cast<CpuAccount>(a));
        const u64 t = task_cputime_ns(busy);
        ASSERT_GE(t, prev_task);
        grew += now.total() > prev.total();
        prev = now;
        prev_task = t;
    }
    EXPECT_EQ(grew, 50u);
    kthread_stop(busy);
}

TEST_F(Cputime, TimerCallbacksAreKernelAndHardwareEventsAreHardware) {
    timer_list timer;
    timer_setup(&timer, [](timer_list*) { burn(10 * kMs); });
    TimerEvent hw_event([](TimerEvent*, u64) { burn(20 * kMs); }, nullptr, kBandHardware, "test hw event");
    hw_event.account = CpuAccount::Hardware;
    const CpuTimes before = cputime_all();
    mod_timer(&timer, jiffies + 1);
    backend().timer_arm(&hw_event, ktime_get() + NSEC_PER_MSEC);
    advance_until_idle();
    const CpuTimes d = delta(before, cputime_all());
    EXPECT_GE(d[CpuAccount::Hardware], 16 * kMs);
    EXPECT_LT(d[CpuAccount::Hardware], 40 * kMs);
    EXPECT_GE(d[CpuAccount::Kernel], 8 * kMs);
    EXPECT_LT(d[CpuAccount::Kernel], 20 * kMs);
    EXPECT_LT(d[CpuAccount::Body], 2 * kMs);
    del_timer_sync(&timer);
}

TEST_F(Cputime, ScopeChargesItsRegionToItsAccountAndNests) {
    const CpuTimes before = cputime_all();
    {
        CpuAccountScope hw(CpuAccount::Hardware);
        burn(10 * kMs);
        {
            CpuAccountScope k(CpuAccount::Kernel);
            burn(10 * kMs);
        }
        burn(10 * kMs);
    }
    burn(5 * kMs);
    const CpuTimes d = delta(before, cputime_all());
    SCOPED_TRACE(show(d));
    EXPECT_GE(d[CpuAccount::Hardware], 16 * kMs);
    EXPECT_LT(d[CpuAccount::Hardware], 30 * kMs);
    EXPECT_GE(d[CpuAccount::Kernel], 8 * kMs);
    EXPECT_LT(d[CpuAccount::Kernel], 15 * kMs);
    EXPECT_GE(d[CpuAccount::Body], 4 * kMs);
    EXPECT_LT(d[CpuAccount::Body], 10 * kMs);
    // Scopes move time between accounts, not between tasks: all of it is still the body's.
    EXPECT_EQ(task_cpu_account(current()), CpuAccount::Body);
}

TEST_F(Cputime, ScopeAcrossABlockingWaitKeepsItsAccountOnlyForItsOwnTask) {
    completion done;
    Task* other = kthread_run(
        [&] {
            burn(10 * kMs);
            complete(&done);
            return 0;
        },
        "other");
    const CpuTimes before = cputime_all();
    {
        CpuAccountScope hw(CpuAccount::Hardware);
        wait_for_completion(&done);  // the kthread runs meanwhile: Kernel, not the scope's
        burn(5 * kMs);
    }
    const CpuTimes d = delta(before, cputime_all());
    EXPECT_GE(d[CpuAccount::Kernel], 8 * kMs);
    EXPECT_GE(d[CpuAccount::Hardware], 4 * kMs);
    EXPECT_LT(d[CpuAccount::Hardware], 10 * kMs);
    kthread_stop(other);
}

TEST_F(Cputime, WorkqueueWorkIsKernelAndTheBodyIsBody) {
    struct Burn {
        work_struct work;
        static void fn(work_struct*) { burn(10 * kMs); }
    } w;
    INIT_WORK(&w.work, Burn::fn);
    const CpuTimes before = cputime_all();
    queue_work(system_wq(), &w.work);
    burn(10 * kMs);
    flush_work(&w.work);
    const CpuTimes d = delta(before, cputime_all());
    EXPECT_GE(d[CpuAccount::Kernel], 8 * kMs);
    EXPECT_LT(d[CpuAccount::Kernel], 15 * kMs);
    EXPECT_GE(d[CpuAccount::Body], 8 * kMs);
    EXPECT_LT(d[CpuAccount::Body], 15 * kMs);
    EXPECT_LT(d[CpuAccount::Hardware], kMs);
}

TEST_F(Cputime, TaskAccountCanBeSetToHardware) {
    Task* model = kthread_run(
        [] {
            set_task_cpu_account(current(), CpuAccount::Hardware);
            burn(10 * kMs);
            return 0;
        },
        "device model");
    const CpuTimes before = cputime_all();
    advance_until_idle();
    EXPECT_EQ(task_cpu_account(model), CpuAccount::Hardware);
    const CpuTimes d = delta(before, cputime_all());
    EXPECT_GE(d[CpuAccount::Hardware], 8 * kMs);
    EXPECT_LT(d[CpuAccount::Kernel], kMs);
    kthread_stop(model);
}

TEST_F(Cputime, AccountsSumToTheProcessCpuTime) {
    Task* busy = kthread_run(
        [] {
            burn(10 * kMs);
            return 0;
        },
        "busy");
    const u64 p0 = process_cputime_ns();
    const u64 c0 = cputime_total_ns();
    burn(10 * kMs);
    {
        CpuAccountScope hw(CpuAccount::Hardware);
        burn(10 * kMs);
    }
    advance_until_idle();
    const u64 c1 = cputime_total_ns();
    const u64 p1 = process_cputime_ns();
    // Simulated mode runs everything on this thread: the accounts are its CPU time, which is all
    // of the process's apart from the sanitizers' and the C library's own threads.
    const double acc = static_cast<double>(c1 - c0), proc = static_cast<double>(p1 - p0);
    EXPECT_GE(proc, 28e6);
    EXPECT_LE(acc, proc * 1.01 + 1e6);
    EXPECT_GE(acc, proc * 0.9);
    kthread_stop(busy);
}

using CputimeReal = CputimeFixture<kshim::testing::RealKernelTest, true>;

TEST_F(CputimeReal, BusyThreadAccruesCpuWhileABlockedOneAccruesNone) {
    completion go, done;
    Task* busy = kthread_run(
        [&] {
            burn(20 * kMs);
            complete(&done);
            return 0;
        },
        "busy");
    Task* waiter = kthread_run(
        [&] {
            wait_for_completion(&go);
            return 0;
        },
        "waiter");
    wait_for_completion(&done);
    EXPECT_GE(task_cputime_ns(busy), 16 * kMs);
    EXPECT_LT(task_cputime_ns(waiter), 3 * kMs);
    const u64 busy_cpu = task_cputime_ns(busy);
    complete(&go);
    kthread_stop(busy);
    kthread_stop(waiter);
    // An ended thread keeps the time it had (no more).
    EXPECT_GE(cputime_ns(CpuAccount::Kernel), busy_cpu);
}

TEST_F(CputimeReal, ScopesAndHardwareEventsAreChargedAndTheTotalIsTheProcesss) {
    completion fired;
    struct Ctx {
        completion* fired;
    } ctx{&fired};
    TimerEvent hw_event(
        [](TimerEvent* ev, u64) {
            burn(10 * kMs);
            complete(static_cast<Ctx*>(ev->owner)->fired);
        },
        &ctx, kBandHardware, "test hw event");
    hw_event.account = CpuAccount::Hardware;
    const u64 p0 = process_cputime_ns();
    const CpuTimes before = cputime_all();
    backend().timer_arm(&hw_event, ktime_get());
    wait_for_completion(&fired);
    backend().timer_wait_idle(&hw_event);
    {
        CpuAccountScope hw(CpuAccount::Hardware);
        burn(10 * kMs);
    }
    burn(10 * kMs);
    const CpuTimes d = delta(before, cputime_all());
    const u64 p1 = process_cputime_ns();
    EXPECT_GE(d[CpuAccount::Hardware], 16 * kMs);
    EXPECT_LT(d[CpuAccount::Hardware], 30 * kMs);
    EXPECT_GE(d[CpuAccount::Body], 8 * kMs);
    EXPECT_LT(d[CpuAccount::Body], 20 * kMs);
    const double acc = static_cast<double>(d.total()), proc = static_cast<double>(p1 - p0);
    EXPECT_LE(acc, proc * 1.05 + 2e6);
    EXPECT_GE(acc, proc * 0.8);
}

// The default: no split, so nothing is measured per interval (no cycle-counter reads at task
// switches or scopes); the accounts read zero while the tasks' accounts are still kept.
using CputimeOff = CputimeFixture<kshim::testing::KernelTest, false>;

TEST_F(CputimeOff, NothingIsMeasuredButAccountsAreKept) {
    EXPECT_FALSE(cputime_split_enabled());
    Task* model = kthread_run(
        [] {
            set_task_cpu_account(current(), CpuAccount::Hardware);
            burn(2 * kMs);
            return 0;
        },
        "device model");
    {
        CpuAccountScope hw(CpuAccount::Hardware);
        burn(2 * kMs);
    }
    advance_until_idle();
    EXPECT_EQ(task_cpu_account(model), CpuAccount::Hardware);
    EXPECT_EQ(task_cpu_account(current()), CpuAccount::Body);
    EXPECT_EQ(cputime_total_ns(), 0u);
    EXPECT_EQ(task_cputime_ns(model), 0u);
    kthread_stop(model);
}

TEST_F(Cputime, TheSplitIsOnOnlyWhileARuntimeAsksForIt) {
    EXPECT_TRUE(cputime_split_enabled());
    EXPECT_GT(cputime_total_ns(), 0u);
}

class CputimeRealOff : public kshim::testing::RealKernelTest {};

// Real mode's per-task time is the thread's CPU clock: it needs no split.
TEST_F(CputimeRealOff, TaskTimeIsTheThreadsWithoutTheSplit) {
    completion go, done;
    Task* busy = kthread_run(
        [&] {
            wait_for_completion(&go);
            burn(10 * kMs);
            complete(&done);
            return 0;
        },
        "busy");
    complete(&go);
    wait_for_completion(&done);
    EXPECT_GE(task_cputime_ns(busy), 5 * kMs);
    EXPECT_EQ(cputime_total_ns(), 0u);
    kthread_stop(busy);
}

}  // namespace
