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
        fiber_create(sched_fiber_, &SimBackend::sched_entry, this);
        running_ = main_;
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
        if (t->wake_token.exchange(false)) return true;
        if (deadline <= now_) return false;
        const bool timed_out = block(t, deadline, "park");
        if (t->aborted) {
            t->aborted = false;
            throw SimAbort{};
        }
        return !timed_out;
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
        if (!t || t == &softirq_) return;
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
        if (!t || t == &softirq_) return;
        t->spinning = true;
        t->spin_epoch = spin_epoch_;
        t->spin_loc = loc;
        yield();
        t->spinning = false;
    }

    void cond_resched() override {
        if (opts_.preempt_probability <= 0.0) return;
        Task* t = current();
        if (!t || t == &softirq_ || t->preempt_count || t->hardirq) return;
        if (!runq_.empty()) yield();
    }

    void preempt_point() override {
        if (opts_.preempt_probability <= 0.0) return;
        Task* t = current();
        if (!t || t == &softirq_ || t->preempt_count || t->hardirq) return;
        double r = static_cast<double>(next_random() >> 11) * 0x1.0p-53;
        if (r < opts_.preempt_probability) yield();
    }

    void busy_wait(ktime_t d) override {
        Task* t = current();
        if (d <= 0) return;
        if (!t || t == &softirq_) {  // atomic context: the clock moves, nobody else runs
            now_ += d;
            return;
        }
        // Spinning on one CPU while the others run: virtual time passes without the might_sleep
        // check a real sleep does. A wake-up meanwhile stays as a token, as on a spinning thread.
        const ktime_t target = now_ + d;
        bool woken = false;
        while (now_ < target) woken |= !block(t, target, "udelay");
        if (woken) t->wake_token.store(true);
    }

    void timer_arm(TimerEvent* ev, ktime_t when) override {
        if (ev->armed) events_.erase(events_.iterator_to(*ev));
        ev->when = std::max(when, now_);
        ev->seq = ++event_seq_;
        ev->gen++;
        ev->armed = true;
        events_.insert(*ev);
    }

    bool timer_cancel(TimerEvent* ev) override {
        if (!ev->armed) return false;
        events_.erase(events_.iterator_to(*ev));
        ev->armed = false;
        return true;
    }

    void timer_wait_idle(TimerEvent*) override {}  // callbacks never interleave with tasks here

    bool run_until_idle(ktime_t limit) override { return main_wait(MainWait::Idle, nullptr, limit); }

    void advance(ktime_t d) override {
        ktime_t target = saturating_add(now_, d);
        while (now_ < target) park(target);
    }

    bool run_until(const std::function<bool()>& pred, ktime_t timeout) override {
        if (pred()) return true;
        return main_wait(MainWait::Pred, &pred, timeout);
    }

    std::vector<std::string> stuck_tasks() override {
        std::vector<std::string> out;
        for (Task* t : tasks_)
            if (t->state == TaskState::Blocked && !t->idle_park) out.push_back(describe(t));
        return out;
    }

    u64 context_switches() const override { return switches_; }

    void shutdown() override {
        // Tasks still alive here are stuck (the owners of daemons stopped theirs): drop their
        // stacks without unwinding them.
        for (Task* t : tasks_) {
            if (t->fiber.mapping) fiber_destroy(t->fiber);
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
        if (t->wait_loc.line()) s += std::string(" at ") + t->wait_loc.file_name() + ":" + std::to_string(t->wait_loc.line());
        return s;
    }

    void check_can_block(Task* t) {
        if (!t || t == &softirq_) {
            report(ReportKind::MightSleep, "BUG: scheduling while atomic: a timer or event callback tried to block");
            std::abort();
        }
    }

    bool main_wait(MainWait kind, const std::function<bool()>* pred, ktime_t limit) {
        Task* t = current();
        if (t != main_) {
            report(ReportKind::Bug, "run_until_idle/advance/run_until called from a task other than main");
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

    void switch_to_scheduler(Task* t) { fiber_switch(t->fiber, sched_fiber_); }

    // Blocks t until unparked or `deadline` (KTIME_MAX: none); true if the deadline passed.
    bool block(Task* t, ktime_t deadline, const char* why) {
        TimerEvent ev(&SimBackend::park_timeout, t, kBandWake, why);
        if (deadline != KTIME_MAX) timer_arm(&ev, deadline);
        t->timed_out = false;
        t->state = TaskState::Blocked;
        switch_to_scheduler(t);
        if (ev.armed) timer_cancel(&ev);
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
        if (t->joiner) self->unpark(t->joiner);
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
        if (!t->spinning || t->state != TaskState::Runnable) spin_epoch_++;  // it did more than spin
        if (t->state == TaskState::Exited && t->fiber.mapping) fiber_destroy(t->fiber);
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
            ev.fire(&ev, ev.gen);  // ev may be gone after this
        }
    }

    [[noreturn]] void loop() {
        set_current(&softirq_);
        for (;;) {
            fire_due_events();
            if (main_wait_ == MainWait::Pred && (*main_pred_)()) {
                wake_main(true);
                continue;
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

    void deadlock() {
        std::string detail = "virtual time " + std::to_string(now_) + " ns, seed " + std::to_string(opts_.seed) +
                             "\nblocked: " + describe(main_) + "\n";
        for (auto& s : stuck_tasks()) detail += "blocked: " + s + "\n";
        report(ReportKind::Deadlock, "simulation deadlock: nothing can run and no event is pending", detail);
        main_->aborted = true;
        run(main_);
    }

    // Every runnable task spun since the last progress.
    bool only_spinners_runnable() const {
        if (runq_.empty()) return false;
        for (const Task* t : runq_)
            if (!t->spinning || t->spin_epoch != spin_epoch_) return false;
        return true;
    }

    void livelock() {
        std::string detail = "virtual time " + std::to_string(now_) + " ns, seed " + std::to_string(opts_.seed) + "\n";
        for (const Task* t : runq_) {
            detail += "spinning: " + t->name + " (task " + std::to_string(t->id) + ") in cpu_relax at " +
                      t->spin_loc.file_name() + ":" + std::to_string(t->spin_loc.line()) + " in " +
                      t->spin_loc.function_name() + "\n";
        }
        for (auto& s : stuck_tasks()) detail += "blocked: " + s + "\n";
        report(ReportKind::Deadlock,
               "simulation livelock: every runnable task only spins (cpu_relax) and no timer is pending", detail);
        // Unwind the main task, wherever it is: blocked in a wait or spinning itself.
        auto it = std::find(runq_.begin(), runq_.end(), main_);
        if (it != runq_.end()) runq_.erase(it);
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
    bool main_result_ = false;
};

}  // namespace

Backend* make_sim_backend(const RuntimeOptions& opts, Task* main) { return new SimBackend(opts, main); }

}  // namespace kshim
