// The simulated runtime: every task is a fiber on one runner thread, time is virtual.
//
// A scheduler fiber runs the loop: fire the events that are due, then run one runnable task
// picked by the seeded PRNG until it blocks, yields or exits; when nothing is runnable, jump
// the clock to the next event. The main task (the thread that made the runtime) is an ordinary
// task except that it can wait for "idle", "time has passed" or "a predicate holds", which the
// loop decides. If nothing can run, no event is pending and the main task waits for something
// else, the simulation is deadlocked: that is reported and the main task is unwound.
//
// Busy-waits (cpu_relax) yield to the loop marked as spins. Progress (a wake-up, an event, a
// spawn, a task that ran other than to spin again) bumps a counter; when every runnable task
// spun since the last progress, none can see anything new until time moves: the clock jumps to
// the next event as if nothing could run, and with none pending that livelock is reported (with
// where each task spins) and the main task is unwound, as for a deadlock.
//
// CPU time (cputime.h), when the runtime splits it: every change of who runs (a fiber switch, an event callback, main's
// predicate, a CpuAccountScope) reads the cycle counter and adds the cycles since the previous
// change to the task and account that ran; a query converts the cycles since the previous query
// into the runner thread's CPU time over the same span, in proportion.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "kernel_shim/backend.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sim_abort.h"
#include "kernel_shim/trace.h"

namespace kshim {
namespace {

class SimBackend final : public Backend {
public:
    SimBackend(const RuntimeOptions& opts, Task* main) : opts_(opts), main_(main), rng_(opts.seed) {
        main_->id = next_task_id();
        main_->state = TaskState::Running;
        fiber_adopt_thread(main_->fiber);
        softirq_.id = 0;
        softirq_.name = "softirq";
        softirq_.kind = TaskKind::Softirq;
        init_task_cputime(main_);
        init_task_cputime(&softirq_);
        fiber_create(sched_fiber_, &SimBackend::sched_entry, this);
        running_ = main_;
        cpu_task_ = main_;
        cpu_acct_ = main_->cpu.cur;
        if (cpu_split_) {
            cpu_clock_ = this_thread_cpu_clock();
            cpu_long_ = cpu_long_interval_cycles();
            cpu_synced_ns_ = clock_ns(cpu_clock_);
            cpu_mark_ = cpu_cycles();
        }
    }

    ~SimBackend() override { fiber_destroy(sched_fiber_); }

    ktime_t now() override { return now_; }

    Task* spawn(std::string name, TaskKind kind, std::function<void()> fn) override {
        auto* t = new Task();
        t->id = next_task_id();
        t->name = std::move(name);
        t->kind = kind;
        t->fn = std::move(fn);
        t->state = TaskState::Runnable;
        init_task_cputime(t);
        fiber_create(t->fiber, &SimBackend::task_entry, t);
        tasks_.push_back(t);
        runq_.push_back(t);
        spin_epoch_++;
        trace::task_name(t->id, t->name.c_str());
        return t;
    }

    int join(Task* t) override {
        Task* self = current();
        while (!t->exited.load()) {
            t->joiner = self;
            self->wait_reason = "join";
            park(KTIME_MAX);
        }
        tasks_.erase(std::find(tasks_.begin(), tasks_.end(), t));
        int code = t->exit_code;
        delete t;
        return code;
    }

    bool park(ktime_t deadline) override {
        Task* t = current();
        check_can_block(t);
        if (t->wake_token.exchange(false))
            return true;
        if (deadline <= now_)
            return false;
        switch (run_alone_until(t, deadline)) {
        case Alone::Reached: return false;
        case Alone::Woken: return true;
        case Alone::Others: break;
        }
        const bool timed_out = block(t, deadline, "park");
        if (t->aborted) {
            t->aborted = false;
            throw SimAbort{};
        }
        return !timed_out;
    }

    // Only the runner thread calls in (a test body standing for the signal's sender).
    void signal_wake(Task* t) override {
        if (t->sleep_state.load(std::memory_order_relaxed) == TASK_INTERRUPTIBLE)
            unpark(t);
    }

    void unpark(Task* t) override {
        spin_epoch_++;
        if (t->state == TaskState::Blocked) {
            t->state = TaskState::Runnable;
            runq_.push_back(t);
        } else {
            t->wake_token.store(true);
        }
    }

    void yield() override {
        Task* t = current();
        if (!t || t == &softirq_)
            return;
        t->state = TaskState::Runnable;
        runq_.push_back(t);
        switch_to_scheduler(t);
        if (t->aborted) {
            t->aborted = false;
            throw SimAbort{};
        }
    }

    void spin_yield(std::source_location loc) override {
        Task* t = current();
        if (!t || t == &softirq_)
            return;
        t->spinning = true;
        t->spin_epoch = spin_epoch_;
        t->spin_loc = loc;
        yield();
        t->spinning = false;
    }

    void cond_resched() override {
        if (opts_.preempt_probability <= 0.0)
            return;
        Task* t = current();
        if (!t || t == &softirq_ || t->preempt_count || t->hardirq)
            return;
        if (!runq_.empty())
            yield();
    }

    void preempt_point() override {
        if (opts_.preempt_probability <= 0.0)
            return;
        Task* t = current();
        if (!t || t == &softirq_ || t->preempt_count || t->hardirq)
            return;
        double r = static_cast<double>(next_random() >> 11) * 0x1.0p-53;
        if (r < opts_.preempt_probability)
            yield();
    }

    void busy_wait(ktime_t d) override {
        Task* t = current();
        if (d <= 0)
            return;
        if (!t || t == &softirq_) {  // atomic context: the clock moves, nobody else runs
            now_ += d;
            return;
        }
        // Spinning on one CPU while the others run: virtual time passes without the might_sleep
        // check a real sleep does. A wake-up meanwhile stays as a token, as on a spinning thread.
        const ktime_t target = now_ + d;
        bool woken = false;
        while (now_ < target) {
            switch (run_alone_until(t, target)) {
            case Alone::Reached: break;
            case Alone::Woken: woken = true; break;
            case Alone::Others: woken |= !block(t, target, "udelay"); break;
            }
        }
        if (woken)
            t->wake_token.store(true);
    }

    void timer_arm(TimerEvent* ev, ktime_t when) override {
        if (ev->armed)
            events_.erase(events_.iterator_to(*ev));
        ev->when = std::max(when, now_);
        ev->seq = ++event_seq_;
        ev->gen++;
        ev->armed = true;
        events_.insert(*ev);
    }

    // Called from an event callback, in the loop's context (no task runs) or in the fast path of
    // a waiting task (run_alone_until, whose wake-up is alone_until_).
    ktime_t quiet_until() override {
        if (!runq_.empty())
            return now_;
        ktime_t q = events_.empty() ? KTIME_MAX : events_.begin()->when;
        if (main_wait_ != MainWait::None)
            q = std::min(q, main_deadline_);
        return std::min(q, alone_until_);
    }

    bool timer_cancel(TimerEvent* ev) override {
        if (!ev->armed)
            return false;
        events_.erase(events_.iterator_to(*ev));
        ev->armed = false;
        return true;
    }

    void timer_wait_idle(TimerEvent*) override {}  // callbacks never interleave with tasks here

    bool advance_until_idle(ktime_t limit) override { return main_wait(MainWait::Idle, nullptr, limit); }

    void advance(ktime_t d) override {
        ktime_t target = saturating_add(now_, d);
        while (now_ < target)
            park(target);
    }

    bool run_until(const std::function<bool()>& pred, ktime_t timeout) override {
        if (pred())
            return true;
        return main_wait(MainWait::Pred, &pred, timeout);
    }

    std::vector<std::string> stuck_tasks() override {
        std::vector<std::string> out;
        for (Task* t : tasks_)
            if (t->state == TaskState::Blocked && !t->idle_park)
                out.push_back(describe(t));
        return out;
    }

    u64 context_switches() const override { return switches_; }

    CpuAccount cpu_scope_enter(CpuAccount a) override {
        const CpuAccount prev = cpu_acct_;
        if (prev != a) {
            cpu_switch(cpu_task_, a);
            cpu_task_->cpu.cur = a;
        }
        return prev;
    }

    void cpu_scope_exit(CpuAccount prev) override {
        cpu_switch(cpu_task_, prev);
        cpu_task_->cpu.cur = prev;
    }

    CpuTimes cputime() override {
        if (!cpu_split_)
            return {};
        cpu_sync();
        CpuTimes r;
        for (int a = 0; a < kCpuAccounts; a++)
            r.ns[a] = static_cast<u64>(cpu_acct_ns_[a]);
        return r;
    }

    u64 task_cputime(const Task* t) override {
        if (!cpu_split_)
            return 0;
        cpu_sync();
        return static_cast<u64>(t->cpu.ns);
    }

    void set_task_cpu_account(Task* t, CpuAccount a) override {
        if (WARN(t->cpu.cur != t->cpu.account.load(), "set_task_cpu_account inside a CpuAccountScope"))
            return;
        if (cpu_task_ == t)
            cpu_switch(t, a);
        t->cpu.account.store(a);
        t->cpu.cur = a;
    }

    void shutdown() override {
        // Tasks still alive here are stuck (the owners of daemons stopped theirs): drop their
        // stacks without unwinding them.
        for (Task* t : tasks_) {
            if (t->fiber.mapping)
                fiber_destroy(t->fiber);
            delete t;
        }
        tasks_.clear();
        runq_.clear();
    }

private:
    enum class MainWait { None, Idle, Pred };

    static ktime_t saturating_add(ktime_t a, ktime_t b) { return b > KTIME_MAX - a ? KTIME_MAX : a + b; }

    u64 next_random() {
        u64 z = (rng_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }

    std::string describe(Task* t) {
        std::string s = t->name + " (task " + std::to_string(t->id) + ") waits on " + t->wait_reason;
        if (t->wait_loc.line())
            s += std::string(" at ") + t->wait_loc.file_name() + ":" + std::to_string(t->wait_loc.line());
        return s;
    }

    void check_can_block(Task* t) {
        if (!t || t == &softirq_)
            scheduling_while_atomic();
    }
    // Out of line: the report's string would give park, which checks on every wait, a larger
    // stack frame that ASan poisons and clears on each call.
    [[noreturn, gnu::noinline, gnu::cold]] static void scheduling_while_atomic() {
        report(ReportKind::MightSleep, "BUG: scheduling while atomic: a timer or event callback tried to block");
        std::abort();
    }

    bool main_wait(MainWait kind, const std::function<bool()>* pred, ktime_t limit) {
        Task* t = current();
        if (t != main_) {
            report(ReportKind::Bug, "advance_until_idle/advance/run_until called from a task other than main");
            std::abort();
        }
        main_wait_ = kind;
        main_pred_ = pred;
        main_deadline_ = saturating_add(now_, limit);
        t->state = TaskState::Blocked;
        switch_to_scheduler(t);
        if (t->aborted) {
            t->aborted = false;
            throw SimAbort{};
        }
        return main_result_;
    }

    void switch_to_scheduler(Task* t) {
        cpu_switch(&softirq_, CpuAccount::Runtime);
        fiber_switch(t->fiber, sched_fiber_);
        cpu_switch(t, t->cpu.cur);
    }

    // From now on the CPU goes to task `t`, account `a`; the cycles since the last switch go to
    // whoever had it. Nothing to do with the split off (cputime.h).
    void cpu_switch(Task* t, CpuAccount a) {
        if (!cpu_split_ || (t == cpu_task_ && a == cpu_acct_))
            return;
        // A long interval ends at a read of the CPU clock, so that it gets what it really ran if
        // the OS preempted the thread meanwhile (and the short ones around it do not share that).
        if (cpu_close_interval() >= cpu_long_)
            cpu_sync();
        cpu_task_ = t;
        cpu_acct_ = a;
    }
    u64 cpu_close_interval() {
        const u64 now = cpu_cycles();
        const u64 d = now - cpu_mark_;
        cpu_mark_ = now;
        cpu_task_->cpu.ticks += d;
        cpu_acct_ticks_[static_cast<int>(cpu_acct_)] += d;
        return d;
    }

    // Converts the cycles counted since the last sync into the runner thread's CPU time over the
    // same span. Every account's and task's share only grows, so the counts are monotonic.
    void cpu_sync() {
        cpu_close_interval();
        u64 cycles = 0;
        for (u64 c : cpu_acct_ticks_)
            cycles += c;
        if (!cycles)
            return;
        const u64 cpu = clock_ns(cpu_clock_);
        const double scale =
            cpu > cpu_synced_ns_ ? static_cast<double>(cpu - cpu_synced_ns_) / static_cast<double>(cycles) : 0.0;
        cpu_synced_ns_ = std::max(cpu, cpu_synced_ns_);
        for (int a = 0; a < kCpuAccounts; a++) {
            cpu_acct_ns_[a] += static_cast<double>(cpu_acct_ticks_[a]) * scale;
            cpu_acct_ticks_[a] = 0;
        }
        auto settle = [scale](Task* t) {
            t->cpu.ns += static_cast<double>(t->cpu.ticks) * scale;
            t->cpu.ticks = 0;
        };
        settle(main_);
        settle(&softirq_);
        for (Task* t : tasks_)
            settle(t);
    }

    // The fast path of a wait by the running task t until `until` (KTIME_MAX: none). While no
    // other task can run, the loop would only fire the events due before t's wake-up, one time
    // after the other, and then run t again; that happens here, on t's stack and in the loop's
    // context, without the two switches per step. The order of everything stays as the loop's
    // (events, main's predicate, the picks), so interleavings and seeds are unchanged:
    // - Reached: the clock is at `until` and nothing woke t;
    // - Woken: an event woke t and t, alone runnable, runs on (or took its turn in the loop);
    // - Others: someone else can run, or main's wait ends, first: t blocks as usual (the events
    //   fired so far are the ones the loop would have fired first).
    enum class Alone { Reached, Woken, Others };
    Alone run_alone_until(Task* t, ktime_t until) {
        if (!runq_.empty() || (main_wait_ == MainWait::Pred && main_pred_holds(t)))
            return Alone::Others;
        // t's wake-up is not an event: the callbacks fired here see it through quiet_until().
        alone_until_ = until;
        struct Clear {
            ktime_t& until;
            ~Clear() { until = KTIME_MAX; }
        } clear_on_return{alone_until_};
        for (;;) {
            const ktime_t next = events_.empty() ? KTIME_MAX : events_.begin()->when;
            const ktime_t stop = std::min(next, until);
            if (stop == KTIME_MAX || (main_wait_ != MainWait::None && stop > main_deadline_))
                return Alone::Others;  // a deadlock to report, or main's wait ends first
            if (next > until) {
                now_ = until;
                spin_epoch_++;  // progress, as the firing of t's wake-up would be
                if (main_wait_ == MainWait::Pred && main_pred_holds(t))
                    yield();  // main's turn comes before t's, as in the loop
                return Alone::Reached;
            }
            now_ = std::max(now_, next);
            t->state = TaskState::Blocked;  // so that an unpark by an event queues t where the loop would
            fire_due_events();
            set_current(t);
            cpu_switch(t, t->cpu.cur);
            const bool woken = t->state == TaskState::Runnable;
            const size_t others = runq_.size() - (woken ? 1 : 0);
            if (others || (main_wait_ == MainWait::Pred && main_pred_holds(t))) {
                if (!woken) {
                    t->state = TaskState::Running;
                    return Alone::Others;
                }
                // t is on the run queue in its place: the loop picks, as it would have.
                switch_to_scheduler(t);
                if (t->aborted) {
                    t->aborted = false;
                    throw SimAbort{};
                }
                return Alone::Woken;
            }
            t->state = TaskState::Running;
            if (woken) {
                runq_.clear();
                return Alone::Woken;
            }
        }
    }
    // Blocks t until unparked or `deadline` (KTIME_MAX: none); true if the deadline passed.
    bool block(Task* t, ktime_t deadline, const char* why) {
        TimerEvent ev(&SimBackend::park_timeout, t, kBandWake, why);
        if (deadline != KTIME_MAX)
            timer_arm(&ev, deadline);
        t->timed_out = false;
        t->state = TaskState::Blocked;
        switch_to_scheduler(t);
        if (ev.armed)
            timer_cancel(&ev);
        return std::exchange(t->timed_out, false);
    }

    static void park_timeout(TimerEvent* ev, u64) {
        auto* t = static_cast<Task*>(ev->owner);
        auto* self = static_cast<SimBackend*>(&backend());
        if (t->state == TaskState::Blocked) {
            t->timed_out = true;
            t->state = TaskState::Runnable;
            self->runq_.push_back(t);
        }
    }

    static void task_entry(void* arg) {
        auto* t = static_cast<Task*>(arg);
        auto* self = static_cast<SimBackend*>(&backend());
        self->cpu_switch(t, t->cpu.cur);
        try {
            t->fn();
        } catch (const SimAbort&) {
        } catch (const std::exception& e) {
            report(ReportKind::Bug, "uncaught exception in task " + t->name, e.what());
        }
        lockdep_task_exit(t);
        t->fn = nullptr;
        t->state = TaskState::Exited;
        t->exited.store(true);
        if (t->joiner)
            self->unpark(t->joiner);
        self->cpu_switch(&self->softirq_, CpuAccount::Runtime);
        fiber_exit(t->fiber, self->sched_fiber_);
    }

    static void sched_entry(void* arg) { static_cast<SimBackend*>(arg)->loop(); }

    void run(Task* t) {
        t->state = TaskState::Running;
        running_ = t;
        set_current(t);
        switches_++;
        fiber_switch(sched_fiber_, t->fiber);
        set_current(&softirq_);
        running_ = nullptr;
        if (!t->spinning || t->state != TaskState::Runnable)
            spin_epoch_++;  // it did more than spin
        if (t->state == TaskState::Exited && t->fiber.mapping)
            fiber_destroy(t->fiber);
    }

    void wake_main(bool result) {
        main_wait_ = MainWait::None;
        main_result_ = result;
        run(main_);
    }

    void fire_due_events() {
        while (!events_.empty() && events_.begin()->when <= now_) {
            TimerEvent& ev = *events_.begin();
            events_.erase(events_.begin());
            ev.armed = false;
            spin_epoch_++;
            set_current(&softirq_);
            // The CPU stays with the last event's account until the loop moves on (see loop()).
            cpu_switch(&softirq_, ev.account);
            softirq_.cpu.cur = ev.account;
            ev.fire(&ev, ev.gen);  // ev may be gone after this
        }
        softirq_.cpu.cur = CpuAccount::Runtime;
    }

    [[noreturn]] void loop() {
        set_current(&softirq_);
        for (;;) {
            fire_due_events();
            if (main_wait_ == MainWait::Pred) {
                if (main_pred_holds(&softirq_)) {
                    wake_main(true);
                    continue;
                }
            } else {
                cpu_switch(&softirq_, CpuAccount::Runtime);
            }
            const bool livelocked = only_spinners_runnable();
            if (!runq_.empty() && !livelocked) {
                size_t i = runq_.size() == 1 ? 0 : next_random() % runq_.size();
                Task* t = runq_[i];
                runq_.erase(runq_.begin() + static_cast<long>(i));
                run(t);
                continue;
            }
            if (!events_.empty()) {
                ktime_t next = events_.begin()->when;
                if (main_wait_ != MainWait::None && next > main_deadline_) {
                    now_ = main_deadline_;
                    wake_main(false);
                    continue;
                }
                now_ = std::max(now_, next);
                continue;
            }
            if (livelocked) {
                livelock();
                continue;
            }
            if (main_wait_ != MainWait::None) {
                wake_main(main_wait_ == MainWait::Idle);
                continue;
            }
            deadlock();
        }
    }

    // main's predicate is the body's code, run in the loop's atomic context (softirq: from a
    // waiting task's fiber too, whose locks are not the predicate's): its time is main's. Then
    // back to `back`, the loop or that task.
    bool main_pred_holds(Task* back) {
        set_current(&softirq_);
        cpu_switch(main_, main_->cpu.cur);
        const bool r = (*main_pred_)();
        cpu_switch(back, back->cpu.cur);
        set_current(back);
        return r;
    }

    void deadlock() {
        std::string detail = "virtual time " + std::to_string(now_) + " ns, seed " + std::to_string(opts_.seed) +
                             "\nblocked: " + describe(main_) + "\n";
        for (auto& s : stuck_tasks())
            detail += "blocked: " + s + "\n";
        report(ReportKind::Deadlock, "simulation deadlock: nothing can run and no event is pending", detail);
        main_->aborted = true;
        run(main_);
    }

    // Every runnable task spun since the last progress.
    bool only_spinners_runnable() const {
        if (runq_.empty())
            return false;
        for (const Task* t : runq_)
            if (!t->spinning || t->spin_epoch != spin_epoch_)
                return false;
        return true;
    }

    void livelock() {
        std::string detail = "virtual time " + std::to_string(now_) + " ns, seed " + std::to_string(opts_.seed) + "\n";
        for (const Task* t : runq_) {
            detail += "spinning: " + t->name + " (task " + std::to_string(t->id) + ") in cpu_relax at " +
                      t->spin_loc.file_name() + ":" + std::to_string(t->spin_loc.line()) + " in " +
                      t->spin_loc.function_name() + "\n";
        }
        for (auto& s : stuck_tasks())
            detail += "blocked: " + s + "\n";
        report(ReportKind::Deadlock,
               "simulation livelock: every runnable task only spins (cpu_relax) and no timer is pending", detail);
        // Unwind the main task, wherever it is: blocked in a wait or spinning itself.
        auto it = std::find(runq_.begin(), runq_.end(), main_);
        if (it != runq_.end())
            runq_.erase(it);
        main_wait_ = MainWait::None;
        main_->aborted = true;
        run(main_);
    }

    RuntimeOptions opts_;
    Task* main_;
    Task softirq_;
    Fiber sched_fiber_;
    Task* running_ = nullptr;
    std::vector<Task*> runq_;
    std::vector<Task*> tasks_;  // creation order: reports are deterministic
    TimerEventSet events_;
    ktime_t now_ = 0;
    u64 event_seq_ = 0;
    u64 rng_;
    u64 switches_ = 0;
    u64 spin_epoch_ = 0;  // progress so far (see the top of the file)
    MainWait main_wait_ = MainWait::None;
    const std::function<bool()>* main_pred_ = nullptr;
    ktime_t main_deadline_ = 0;
    ktime_t alone_until_ = KTIME_MAX;  // the wake-up of the task in run_alone_until, if any
    bool main_result_ = false;
    // CPU-time accounting (see the top of the file): who has the CPU since cpu_mark_ (cycles),
    // cycles per account since the last sync, the CPU time counted per account, and the runner
    // thread's CPU clock with its reading at the last sync.
    const bool cpu_split_ = opts_.cputime_split;
    u64 cpu_mark_ = 0;
    Task* cpu_task_ = nullptr;
    CpuAccount cpu_acct_ = CpuAccount::Body;
    u64 cpu_acct_ticks_[kCpuAccounts] = {};
    double cpu_acct_ns_[kCpuAccounts] = {};
    clockid_t cpu_clock_{};
    u64 cpu_synced_ns_ = 0;
    u64 cpu_long_ = 0;  // cpu_long_interval_cycles()
};

}  // namespace

Backend* make_sim_backend(const RuntimeOptions& opts, Task* main) {
    return new SimBackend(opts, main);
}

}  // namespace kshim
