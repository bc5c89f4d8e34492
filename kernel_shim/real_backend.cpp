// The real runtime: tasks are OS threads, the clock is CLOCK_MONOTONIC, and timer events run
// on one timer thread (the "softirq" task).
//
// Events live in the same ordered set as in simulated mode; the timer thread sleeps on a futex
// word until the earliest one, and an arming that moves the earliest event forward wakes it only
// if it waits for a later one. (Spinning for events due within 10-20 us instead measured no
// better on the 2-vCPU machine, and worse under load: docs/kshim.md, "Real mode: wake-up chain".)
//
// "Idle" (for advance_until_idle) means: every task that is not main is parked without a
// deadline and no event is armed or running. An unpark counts its target as active at once, so a
// hand-off between two tasks is never mistaken for idleness.
//
// CPU time (cputime.h): each task's thread CPU clock gives its total; when the runtime splits
// it, that is shared out between accounts in proportion to the cycles the thread ran for each
// (account changes, parks and the polling sleeps of the main task's waits are the interval
// boundaries; waiting time is not counted), so a thread preempted by the OS does not skew the
// split. A thread that ends adds its split to the totals of ended tasks before it stops being
// readable.
#include <chrono>
#include <cstdio>
#include <optional>

#include <linux/futex.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <climits>
#include <csignal>

#include "kernel_shim/backend.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/trace.h"

namespace kshim {
namespace {

using Clock = std::chrono::steady_clock;

// Kernel threads take no signals: the process's signals go to its own threads (the ones that
// make syscalls, where an interruptible wait can be interrupted). Faults stay deliverable.
void block_async_signals() {
    sigset_t s;
    sigfillset(&s);
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS})
        sigdelset(&s, sig);
    pthread_sigmask(SIG_BLOCK, &s, nullptr);
}

// The host thread's name (what perf, top and gdb show): the task's, in the 15 bytes Linux keeps.
// A worker's name loses "kworker/", and a long name keeps its end, which tells tasks apart
// ("csf-sched:0").
void set_thread_name(std::string name) {
    if (name.starts_with("kworker/"))
        name.erase(0, 8);
    if (name.size() > 15)
        name.erase(0, name.size() - 15);
    pthread_setname_np(pthread_self(), name.c_str());
}

class RealBackend final : public Backend {
public:
    RealBackend(const RuntimeOptions& opts, Task* main) : opts_(opts), main_(main), start_(Clock::now()) {
        main_->id = next_task_id();
        main_->state = TaskState::Running;
        softirq_.name = "softirq";
        softirq_.kind = TaskKind::Softirq;
        init_task_cputime(main_);
        init_task_cputime(&softirq_);
        cpu_task_start(main_);
        timer_thread_ = std::thread([this] {
            block_async_signals();
            set_thread_name("softirq");
            // The mock's hardware effects are due at exact times: no 50 us of default timer slack.
            prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
            set_current(&softirq_);
            cpu_task_start(&softirq_);
            timer_loop();
            cpu_task_end(&softirq_);
            set_current(nullptr);
        });
    }

    ~RealBackend() override = default;

    ktime_t now() override {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start_).count();
    }

    Task* spawn(std::string name, TaskKind kind, std::function<void()> fn) override {
        auto* t = new Task();
        t->name = std::move(name);
        t->kind = kind;
        t->fn = std::move(fn);
        t->state = TaskState::Running;
        init_task_cputime(t);
        {
            std::lock_guard g(tasks_lock_);
            t->id = next_task_id();
            tasks_.push_back(t);
        }
        trace::task_name(t->id, t->name.c_str());
        active_.fetch_add(1);
        t->thread = std::thread([this, t] {
            block_async_signals();
            set_thread_name(t->name);
            set_current(t);
            cpu_task_start(t);
            try {
                t->fn();
            } catch (const std::exception& e) {
                report(ReportKind::Bug, "uncaught exception in task " + t->name, e.what());
            }
            lockdep_task_exit(t);
            t->fn = nullptr;
            cpu_task_end(t);
            {
                std::lock_guard g(t->park_lock);
                t->state = TaskState::Exited;
                t->exited.store(true);
            }
            active_.fetch_sub(1);
            set_current(nullptr);
        });
        return t;
    }

    int join(Task* t) override {
        cpu_wait_begin();
        if (t->thread.joinable())
            t->thread.join();
        cpu_wait_end();
        {
            std::lock_guard g(tasks_lock_);
            std::erase(tasks_, t);
        }
        int code = t->exit_code;
        delete t;
        return code;
    }

    bool park(ktime_t deadline) override {
        Task* t = current();
        if (!t || t == &softirq_) {
            report(ReportKind::MightSleep, "BUG: scheduling while atomic: a timer callback tried to block");
            std::abort();
        }
        // A deadline the host clock cannot express (start_ + deadline overflows: a client's
        // INT64_MAX wait turned into a huge timeout) is no deadline; adding it would overflow.
        if (deadline >= max_deadline())
            deadline = KTIME_MAX;
        std::unique_lock l(t->park_lock);
        if (t->wake_token.exchange(false))
            return true;
        t->parked = true;
        t->state = TaskState::Blocked;
        // Untimed parks of non-main tasks make the task count as idle until somebody unparks it.
        bool untimed = deadline == KTIME_MAX && t != main_;
        if (untimed) {
            t->counted_active = false;
            active_.fetch_sub(1);
        }
        const bool interruptible = t->sleep_state.load(std::memory_order_relaxed) == TASK_INTERRUPTIBLE;
        t->parked_futex = true;
        l.unlock();
        cpu_wait_begin();
        bool woke = park_futex(t, deadline, interruptible);
        cpu_wait_end();
        l.lock();
        t->parked_futex = false;
        t->parked = false;
        t->state = TaskState::Running;
        if (!t->counted_active) {
            // Woken by a signal (a token re-counts the task in unpark): count it again here.
            t->counted_active = true;
            active_.fetch_add(1);
        }
        if (woke)
            t->wake_token.store(false);
        return woke;
    }

    // Sleeps on the task's futex word until a token (or, interruptible, a pending signal) or the
    // deadline. False only when the deadline passed with neither. The word changes at every unpark
    // and signal, so a wake-up between the tests and the wait makes the wait return at once.
    bool park_futex(Task* t, ktime_t deadline, bool interruptible) {
        for (;;) {
            const u32 seq = t->futex_seq.load(std::memory_order_acquire);
            if (t->wake_token.load() || (interruptible && t->sigpending.load(std::memory_order_acquire)))
                return true;
            timespec abs{};
            if (deadline != KTIME_MAX) {
                if (now() >= deadline)
                    return t->wake_token.load();
                abs = host_time(deadline);
            }
            futex_wait(&t->futex_seq, seq, deadline == KTIME_MAX ? nullptr : &abs);
        }
    }

    // The first deadline the host clock cannot express (start_ + deadline would overflow).
    ktime_t max_deadline() const {
        return KTIME_MAX - std::chrono::duration_cast<std::chrono::nanoseconds>(start_.time_since_epoch()).count();
    }

    // `deadline` (below max_deadline()) on CLOCK_MONOTONIC: steady_clock's clock, which
    // FUTEX_WAIT_BITSET's absolute timeout uses.
    timespec host_time(ktime_t deadline) const {
        const auto when = start_.time_since_epoch() + std::chrono::nanoseconds(deadline);
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(when).count();
        timespec abs{};
        abs.tv_sec = static_cast<time_t>(ns / 1000000000);
        abs.tv_nsec = static_cast<long>(ns % 1000000000);
        return abs;
    }

    static void futex_wait(std::atomic<u32>* word, u32 seen, const timespec* abs) {
        syscall(SYS_futex, reinterpret_cast<u32*>(word), FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, seen, abs, nullptr,
                FUTEX_BITSET_MATCH_ANY);
    }
    // A private FUTEX_WAKE only hashes the address, it never reads the word: it is harmless on
    // a word whose task has meanwhile gone (at worst a spurious wake-up elsewhere, which every
    // futex loop tolerates).
    static void futex_wake_word(std::atomic<u32>* word) {
        syscall(SYS_futex, reinterpret_cast<u32*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
    }
    static void futex_wake(Task* t) {
        t->futex_seq.fetch_add(1, std::memory_order_release);
        futex_wake_word(&t->futex_seq);
    }

    // Called from a signal handler: no lock, no allocation (a parked task's bookkeeping is fixed
    // up by the task itself when it wakes, in park()).
    void signal_wake(Task* t) override {
        if (t->sleep_state.load(std::memory_order_relaxed) == TASK_INTERRUPTIBLE)
            futex_wake(t);
    }

    // Leaves the token; wakes the task only if it sleeps, and only after park_lock is released:
    // woken under the lock, it would run at once (a wake-up preempts on a busy CPU), block on
    // park_lock and need a second wake-up when the lock is dropped. A timer callback's wake-ups
    // take effect when the callback returns, as a softirq's do when the softirq ends: woken at
    // once, the task would preempt the callback and block on the locks it holds (an IRQ line's,
    // the device model's).
    void unpark(Task* t) override {
        bool sleeping;
        {
            std::lock_guard l(t->park_lock);
            if (!t->wake_token.exchange(true) && t->parked && !t->counted_active) {
                t->counted_active = true;
                active_.fetch_add(1);
            }
            sleeping = t->parked_futex;
            if (sleeping)
                t->futex_seq.fetch_add(1, std::memory_order_release);
        }
        if (!sleeping)
            return;
        if (current() == &softirq_)
            softirq_wakes_.push_back(&t->futex_seq);  // only the address: t may be gone by then
        else
            futex_wake_word(&t->futex_seq);
    }

    void yield() override { std::this_thread::yield(); }
    void preempt_point() override {}

    void busy_wait(ktime_t d) override {
        ktime_t target = now() + d;
        while (now() < target)
            std::this_thread::yield();
    }

    void timer_arm(TimerEvent* ev, ktime_t when) override {
        bool wake = false;
        {
            std::lock_guard g(ev_lock_);
            if (ev->armed) {
                events_.erase(events_.iterator_to(*ev));
                ev_cv_.notify_all();  // moved: catch_up_hardware may have waited for it
            }
            ev->when = when;
            ev->seq = ++event_seq_;
            ev->gen++;
            ev->armed = true;
            events_.insert(*ev);
            // The timer thread waits for a later event (or for none): it must look again.
            wake = &*events_.begin() == ev && when < programmed_;
            if (wake) {
                programmed_ = when;
                timer_seq_.fetch_add(1, std::memory_order_release);
            }
        }
        if (wake)
            futex_wake_word(&timer_seq_);
    }

    bool timer_cancel(TimerEvent* ev) override {
        std::lock_guard g(ev_lock_);
        if (!ev->armed)
            return false;
        events_.erase(events_.iterator_to(*ev));
        ev->armed = false;
        ev_cv_.notify_all();  // catch_up_hardware may have waited for it
        return true;
    }

    // Blocks until the timer thread has run every hardware effect due by `until` (backend.h).
    // Only hardware effects: they take nothing a sleeping task may hold.
    void catch_up_hardware(ktime_t until) override {
        if (current() == &softirq_)
            return;
        std::unique_lock l(ev_lock_);
        auto behind = [&] {
            if (running_event_ && running_event_->band == kBandHardware)
                return true;
            for (const TimerEvent& ev : events_) {
                if (ev.when > until)
                    return false;
                if (ev.band == kBandHardware)
                    return true;
            }
            return false;
        };
        ev_cv_.wait(l, [&] { return !behind(); });
    }

    void timer_wait_idle(TimerEvent* ev) override {
        if (current() == &softirq_)
            return;  // a callback cancelling its own timer
        std::unique_lock l(ev_lock_);
        cpu_wait_begin();
        ev_cv_.wait(l, [&] { return running_event_ != ev; });
        cpu_wait_end();
    }

    bool advance_until_idle(ktime_t limit) override {
        ktime_t deadline = now() + std::min<ktime_t>(limit, 60 * NSEC_PER_SEC);
        int quiet = 0;
        while (now() < deadline) {
            if (is_idle()) {
                if (++quiet >= 3)
                    return true;  // stable across a few polls
            } else {
                quiet = 0;
            }
            cpu_wait_begin();
            std::this_thread::sleep_for(std::chrono::microseconds(50));
            cpu_wait_end();
        }
        return false;
    }

    void advance(ktime_t d) override {
        ktime_t target = now() + d;
        while (now() < target)
            park(target);
    }

    bool run_until(const std::function<bool()>& pred, ktime_t timeout) override {
        ktime_t deadline = now() + timeout;
        for (;;) {
            if (pred())
                return true;
            if (now() >= deadline)
                return false;
            cpu_wait_begin();
            std::this_thread::sleep_for(std::chrono::microseconds(20));
            cpu_wait_end();
        }
    }

    std::vector<std::string> stuck_tasks() override {
        std::vector<std::string> out;
        std::lock_guard g(tasks_lock_);
        for (Task* t : tasks_) {
            std::lock_guard l(t->park_lock);
            if (t->parked && !t->idle_park && !t->exited.load())
                out.push_back(t->name + " (task " + std::to_string(t->id) + ") waits on " + t->wait_reason);
        }
        return out;
    }

    CpuAccount cpu_scope_enter(CpuAccount a) override {
        Task* t = current();
        const CpuAccount prev = t->cpu.cur;
        if (prev != a) {
            t->cpu.cur = a;
            cpu_to(t, static_cast<u8>(a));
        }
        return prev;
    }

    void cpu_scope_exit(CpuAccount prev) override {
        Task* t = current();
        t->cpu.cur = prev;
        cpu_to(t, static_cast<u8>(prev));
    }

    CpuTimes cputime() override {
        if (!cpu_split_)
            return {};
        std::lock_guard g(tasks_lock_);
        u64 ns[kCpuAccounts];
        for (int a = 0; a < kCpuAccounts; a++)
            ns[a] = cpu_ended_[a];
        cpu_add_split(main_, ns);
        cpu_add_split(&softirq_, ns);
        for (Task* t : tasks_)
            cpu_add_split(t, ns);
        // Proportions move as threads run on: an account's share never goes down in an answer.
        CpuTimes r;
        for (int a = 0; a < kCpuAccounts; a++)
            r.ns[a] = cpu_reported_[a] = std::max(ns[a], cpu_reported_[a]);
        return r;
    }

    u64 task_cputime(const Task* t) override {
        std::lock_guard g(tasks_lock_);
        return t->cpu.live ? cpu_thread_ns(t) : t->cpu.final_ns;
    }

    void set_task_cpu_account(Task* t, CpuAccount a) override {
        if (WARN(t != current(), "set_task_cpu_account of another task in real mode"))
            return;
        if (WARN(t->cpu.cur != t->cpu.account.load(), "set_task_cpu_account inside a CpuAccountScope"))
            return;
        t->cpu.account.store(a);
        t->cpu.cur = a;
        cpu_to(t, static_cast<u8>(a));
    }

    void shutdown() override {
        {
            std::lock_guard g(ev_lock_);
            timer_stop_ = true;
            timer_seq_.fetch_add(1, std::memory_order_release);
        }
        futex_wake_word(&timer_seq_);
        if (timer_thread_.joinable())
            timer_thread_.join();
        std::vector<Task*> left;
        {
            std::lock_guard g(tasks_lock_);
            left.swap(tasks_);
        }
        for (Task* t : left) {
            // A task whose function has returned may still be on its way out (its last wake-up
            // of a joiner let teardown begin): it touches this backend until it has exited, so
            // it gets time to finish rather than being left running into the destructor.
            for (int i = 0; i < 2000 && !t->exited.load() && !parked_for_good(t); i++)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (t->exited.load()) {
                if (t->thread.joinable())
                    t->thread.join();
                delete t;
            } else {
                // A stuck thread cannot be unwound; leave it (the test already failed).
                t->thread.detach();
            }
        }
    }

private:
    bool parked_for_good(Task* t) {
        std::lock_guard l(t->park_lock);
        return t->parked && t->state == TaskState::Blocked;
    }

    // On t's own thread.
    void cpu_task_start(Task* t) {
        const clockid_t c = this_thread_cpu_clock();
        const u64 start = clock_ns(c);
        {
            std::lock_guard g(tasks_lock_);
            t->cpu.clock = c;
            t->cpu.start_ns = start;
            t->cpu.live = true;
        }
        // The timer thread counts only while it runs callbacks (fire_due); its own bookkeeping
        // goes with them.
        cpu_to(t, t == &softirq_ ? TaskCputime::kCpuOff : static_cast<u8>(t->cpu.cur));
    }
    void cpu_task_end(Task* t) {
        cpu_to(t, TaskCputime::kCpuOff);
        std::lock_guard g(tasks_lock_);
        const u64 total = cpu_thread_ns(t);
        cpu_add_split(t, cpu_ended_);
        t->cpu.final_ns = total;
        t->cpu.live = false;
    }
    // Under tasks_lock_, t live: what its thread has run.
    static u64 cpu_thread_ns(const Task* t) {
        const u64 now = clock_ns(t->cpu.clock);
        return now > t->cpu.start_ns ? now - t->cpu.start_ns : 0;
    }
    // Under tasks_lock_: adds a live task's CPU time to ns[], split by its checkpoint and, after
    // it, in proportion to the cycles it ran for each account (its open interval included).
    void cpu_add_split(const Task* t, u64* ns) {
        if (!t->cpu.live)
            return;
        const TaskCputime& c = t->cpu;
        const u64 total = cpu_thread_ns(t);
        double exact[kCpuAccounts], cyc[kCpuAccounts];
        u64 ckpt;
        // Seqlock read: a consistent snapshot of what the thread wrote. Acquire loads (rather than
        // a fence, which TSan does not model) keep the final sequence check after the data.
        constexpr auto acq = std::memory_order_acquire;
        for (;;) {
            const u32 s0 = c.seq.load(acq);
            if (s0 & 1) {
                std::this_thread::yield();
                continue;
            }
            for (int a = 0; a < kCpuAccounts; a++) {
                exact[a] = static_cast<double>(c.exact_ns[a].load(acq));
                cyc[a] = static_cast<double>(c.cycles[a].load(acq));
            }
            ckpt = c.ckpt_ns.load(acq);
            const u8 r = c.running.load(acq);
            const u64 mark = c.mark.load(acq), now = cpu_cycles();
            if (r < kCpuAccounts && now > mark)
                cyc[r] += static_cast<double>(now - mark);
            if (c.seq.load(std::memory_order_relaxed) == s0)
                break;
        }
        double sum = 0;
        for (double v : cyc)
            sum += v;
        const double rest = total > ckpt ? static_cast<double>(total - ckpt) : 0.0;
        const int base = static_cast<int>(c.account.load(std::memory_order_relaxed));
        for (int a = 0; a < kCpuAccounts; a++) {
            const double share = sum > 0 ? rest * cyc[a] / sum : (a == base ? rest : 0.0);
            ns[a] += static_cast<u64>(exact[a] + share);
        }
    }
    // On t's own thread: closes the open interval and opens one for `acct` (kCpuOff: waiting).
    // An interval of cpu_long_ cycles or more ends with a checkpoint: the thread's CPU time since
    // the last one is split by the cycles since then, so the long interval gets what it really ran
    // even if the OS preempted the thread in it.
    void cpu_to(Task* t, u8 acct) {
        if (!cpu_split_)
            return;
        TaskCputime& c = t->cpu;
        const u64 now = cpu_cycles();
        const u8 r = c.running.load(std::memory_order_relaxed);
        const u64 d = now - c.mark.load(std::memory_order_relaxed);
        const bool checkpoint = r < kCpuAccounts && d >= cpu_long_;
        const u64 total = checkpoint ? clock_ns(c.clock) - c.start_ns : 0;
        // Seqlock write (only this thread writes): release stores keep every data store after the
        // odd sequence number, and the even one after them.
        constexpr auto rel = std::memory_order_release, rlx = std::memory_order_relaxed;
        const u32 s0 = c.seq.load(rlx);
        c.seq.store(s0 + 1, rlx);
        if (r < kCpuAccounts)
            c.cycles[r].store(c.cycles[r].load(rlx) + d, rel);
        c.mark.store(now, rel);
        c.running.store(acct, rel);
        if (checkpoint) {
            const u64 ckpt = c.ckpt_ns.load(rlx);
            const double rest = total > ckpt ? static_cast<double>(total - ckpt) : 0.0;
            double sum = 0;
            for (auto& x : c.cycles)
                sum += static_cast<double>(x.load(rlx));
            for (int a = 0; a < kCpuAccounts; a++) {
                const double share = rest * static_cast<double>(c.cycles[a].load(rlx)) / sum;
                c.exact_ns[a].store(c.exact_ns[a].load(rlx) + static_cast<u64>(share), rel);
                c.cycles[a].store(0, rel);
            }
            c.ckpt_ns.store(std::max(total, ckpt), rel);
        }
        c.seq.store(s0 + 2, rel);
    }
    // The calling task waits (park, the main task's polling sleeps) or runs again.
    void cpu_wait_begin() {
        if (Task* t = current())
            cpu_to(t, TaskCputime::kCpuOff);
    }
    void cpu_wait_end() {
        if (Task* t = current())
            cpu_to(t, static_cast<u8>(t->cpu.cur));
    }

    bool is_idle() {
        if (active_.load() != 0)
            return false;
        std::lock_guard g(ev_lock_);
        return events_.empty() && running_event_ == nullptr;
    }

    // The timer thread: fires what is due, then waits for the earliest event. While it runs,
    // programmed_ is 0, so no arming wakes it (it looks at the set again before it waits).
    void timer_loop() {
        std::unique_lock l(ev_lock_);
        while (!timer_stop_) {
            fire_due(l);
            const ktime_t next = events_.empty() ? KTIME_MAX : events_.begin()->when;
            const ktime_t t = now();
            if (next <= t)
                continue;
            if (next - t <= kTimerSpinNs) {
                // An event this close (the mock's doorbell scan is due 2 us after the write) is
                // waited for on the CPU: a futex sleep this short wakes on a host timer, which
                // costs a halted vCPU 20-40 us of wake-up on the project's VM.
                l.unlock();
                while (now() < next)
                    host_cpu_pause();
                l.lock();
                continue;
            }
            const u32 seq = timer_seq_.load(std::memory_order_relaxed);
            programmed_ = next;
            l.unlock();
            const bool timed = next < max_deadline();
            const timespec abs = timed ? host_time(next) : timespec{};
            futex_wait(&timer_seq_, seq, timed ? &abs : nullptr);
            l.lock();
            programmed_ = 0;
        }
    }

    // Under ev_lock_ (held by `l`; dropped around each callback).
    void fire_due(std::unique_lock<std::mutex>& l) {
        for (;;) {
            ktime_t t = now();
            if (timer_stop_ || events_.empty() || events_.begin()->when > t)
                break;
            TimerEvent* ev = &*events_.begin();
            events_.erase(events_.begin());
            ev->armed = false;
            running_event_ = ev;
            u64 gen = ev->gen;
            const CpuAccount acct = ev->account;
            l.unlock();
            softirq_.cpu.cur = acct;
            cpu_to(&softirq_, static_cast<u8>(acct));
            ev->fire(ev, gen);  // ev may be gone after this
            for (std::atomic<u32>* w : softirq_wakes_)
                futex_wake_word(w);
            softirq_wakes_.clear();
            cpu_to(&softirq_, TaskCputime::kCpuOff);
            softirq_.cpu.cur = CpuAccount::Runtime;
            l.lock();
            running_event_ = nullptr;
            ev_cv_.notify_all();
        }
    }

    RuntimeOptions opts_;
    Task* main_;
    Task softirq_;
    Clock::time_point start_;

    // Protects tasks_, cpu_ended_, cpu_reported_ and every task's cpu.live/final_ns/clock/start_ns.
    std::mutex tasks_lock_;
    std::vector<Task*> tasks_;
    u64 cpu_ended_[kCpuAccounts] = {};     // CPU time of the tasks whose threads ended
    u64 cpu_reported_[kCpuAccounts] = {};  // the last cputime() answer (answers never go down)
    const bool cpu_split_ = opts_.cputime_split;
    const u64 cpu_long_ = cpu_split_ ? cpu_long_interval_cycles() : 0;
    std::atomic<int> active_{0};  // tasks not parked without a deadline (main excluded)

    std::thread timer_thread_;
    // The futex words of the tasks a running timer callback woke (the timer thread's alone).
    std::vector<std::atomic<u32>*> softirq_wakes_;
    // Changed (under ev_lock_) whenever the timer thread must look at the events again.
    std::atomic<u32> timer_seq_{0};

    // Protects events_, event_seq_, programmed_, running_event_, timer_stop_ and
    // the TimerEvent fields.
    std::mutex ev_lock_;
    std::condition_variable ev_cv_;
    TimerEventSet events_;
    u64 event_seq_ = 0;
    ktime_t programmed_ = 0;  // the event time the timer thread waits for (0: it runs)
    bool timer_stop_ = false;
    // Events due within this long are waited for by spinning (timer_loop).
    static constexpr ktime_t kTimerSpinNs = 10 * NSEC_PER_USEC;
    TimerEvent* running_event_ = nullptr;
};

}  // namespace

Backend* make_real_backend(const RuntimeOptions& opts, Task* main) {
    return new RealBackend(opts, main);
}

}  // namespace kshim
