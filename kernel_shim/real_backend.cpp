// The real runtime: tasks are OS threads, the clock is CLOCK_MONOTONIC, and timer events run
// on one Boost.Asio thread (the "softirq" task).
//
// Events live in the same ordered set as in simulated mode; a single asio steady_timer is kept
// programmed for the earliest one. "Idle" (for run_until_idle) means: every task that is not
// main is parked without a deadline and no event is armed or running. An unpark counts its
// target as active at once, so a hand-off between two tasks is never mistaken for idleness.
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <chrono>
#include <cstdio>
#include <optional>

#include "kernel_shim/backend.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/trace.h"

namespace kshim {
namespace {

using Clock = std::chrono::steady_clock;

class RealBackend final : public Backend {
public:
    RealBackend(const RuntimeOptions& opts, Task* main) : opts_(opts), main_(main), start_(Clock::now()) {
        main_->id = next_task_id();
        main_->state = TaskState::Running;
        softirq_.name = "softirq";
        softirq_.kind = TaskKind::Softirq;
        io_thread_ = std::thread([this] {
            set_current(&softirq_);
            io_.run();
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
        {
            std::lock_guard g(tasks_lock_);
            t->id = next_task_id();
            tasks_.push_back(t);
        }
        trace::task_name(t->id, t->name.c_str());
        active_.fetch_add(1);
        t->thread = std::thread([this, t] {
            set_current(t);
            try {
                t->fn();
            } catch (const std::exception& e) {
                report(ReportKind::Bug, "uncaught exception in task " + t->name, e.what());
            }
            lockdep_task_exit(t);
            t->fn = nullptr;
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
        if (t->thread.joinable()) t->thread.join();
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
        std::unique_lock l(t->park_lock);
        if (t->wake_token.exchange(false)) return true;
        t->parked = true;
        t->state = TaskState::Blocked;
        // Untimed parks of non-main tasks make the task count as idle until somebody unparks it.
        bool untimed = deadline == KTIME_MAX && t != main_;
        if (untimed) {
            t->counted_active = false;
            active_.fetch_sub(1);
        }
        bool woke = true;
        auto token = [t] { return t->wake_token.load(); };
        if (deadline == KTIME_MAX)
            t->park_cv.wait(l, token);
        else
            woke = t->park_cv.wait_until(l, start_ + std::chrono::nanoseconds(deadline), token);
        t->parked = false;
        t->state = TaskState::Running;
        if (!t->counted_active) {  // only possible when woken by a token, which re-counted it
            t->counted_active = true;
        }
        if (woke) t->wake_token.store(false);
        return woke;
    }

    void unpark(Task* t) override {
        std::lock_guard l(t->park_lock);
        if (!t->wake_token.exchange(true) && t->parked && !t->counted_active) {
            t->counted_active = true;
            active_.fetch_add(1);
        }
        t->park_cv.notify_one();
    }

    void yield() override { std::this_thread::yield(); }
    void preempt_point() override {}

    void busy_wait(ktime_t d) override {
        ktime_t target = now() + d;
        while (now() < target) std::this_thread::yield();
    }

    void timer_arm(TimerEvent* ev, ktime_t when) override {
        bool reprogram = false;
        {
            std::lock_guard g(ev_lock_);
            if (ev->armed) events_.erase(events_.iterator_to(*ev));
            ev->when = when;
            ev->seq = ++event_seq_;
            ev->gen++;
            ev->armed = true;
            events_.insert(*ev);
            reprogram = &*events_.begin() == ev && when < programmed_;
            if (reprogram) programmed_ = when;
        }
        if (reprogram) boost::asio::post(io_, [this] { program_timer(); });
    }

    bool timer_cancel(TimerEvent* ev) override {
        std::lock_guard g(ev_lock_);
        if (!ev->armed) return false;
        events_.erase(events_.iterator_to(*ev));
        ev->armed = false;
        return true;
    }

    void timer_wait_idle(TimerEvent* ev) override {
        if (current() == &softirq_) return;  // a callback cancelling its own timer
        std::unique_lock l(ev_lock_);
        ev_cv_.wait(l, [&] { return running_event_ != ev; });
    }

    bool run_until_idle(ktime_t limit) override {
        ktime_t deadline = now() + std::min<ktime_t>(limit, 60 * NSEC_PER_SEC);
        int quiet = 0;
        while (now() < deadline) {
            if (is_idle()) {
                if (++quiet >= 3) return true;  // stable across a few polls
            } else {
                quiet = 0;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        return false;
    }

    void advance(ktime_t d) override {
        ktime_t target = now() + d;
        while (now() < target) park(target);
    }

    bool run_until(const std::function<bool()>& pred, ktime_t timeout) override {
        ktime_t deadline = now() + timeout;
        for (;;) {
            if (pred()) return true;
            if (now() >= deadline) return false;
            std::this_thread::sleep_for(std::chrono::microseconds(20));
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

    void shutdown() override {
        io_work_guard_.reset();
        io_.stop();
        if (io_thread_.joinable()) io_thread_.join();
        std::vector<Task*> left;
        {
            std::lock_guard g(tasks_lock_);
            left.swap(tasks_);
        }
        for (Task* t : left) {
            if (t->exited.load()) {
                if (t->thread.joinable()) t->thread.join();
                delete t;
            } else {
                // A stuck thread cannot be unwound; leave it (the test already failed).
                t->thread.detach();
            }
        }
    }

private:
    bool is_idle() {
        if (active_.load() != 0) return false;
        std::lock_guard g(ev_lock_);
        return events_.empty() && running_event_ == nullptr;
    }

    // On the asio thread: fire what is due, then point the steady_timer at the next event.
    void program_timer() {
        ktime_t next;
        {
            std::lock_guard g(ev_lock_);
            next = events_.empty() ? KTIME_MAX : events_.begin()->when;
            programmed_ = next;
        }
        if (next == KTIME_MAX) {
            timer_.cancel();
            return;
        }
        timer_.expires_at(start_ + std::chrono::nanoseconds(next));
        timer_.async_wait([this](const boost::system::error_code& ec) {
            if (ec == boost::asio::error::operation_aborted) return;
            fire_due();
            program_timer();
        });
    }

    void fire_due() {
        std::unique_lock l(ev_lock_);
        for (;;) {
            ktime_t t = now();
            if (events_.empty() || events_.begin()->when > t) break;
            TimerEvent* ev = &*events_.begin();
            events_.erase(events_.begin());
            ev->armed = false;
            running_event_ = ev;
            u64 gen = ev->gen;
            l.unlock();
            ev->fire(ev, gen);  // ev may be gone after this
            l.lock();
            running_event_ = nullptr;
            ev_cv_.notify_all();
        }
    }

    RuntimeOptions opts_;
    Task* main_;
    Task softirq_;
    Clock::time_point start_;

    std::mutex tasks_lock_;  // protects tasks_
    std::vector<Task*> tasks_;
    std::atomic<int> active_{0};  // tasks not parked without a deadline (main excluded)

    boost::asio::io_context io_;
    // Keeps io_.run() going while no timer is pending.
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> io_work_guard_{io_.get_executor()};
    boost::asio::steady_timer timer_{io_};
    std::thread io_thread_;

    std::mutex ev_lock_;  // protects events_, event_seq_, programmed_, running_event_, TimerEvent fields
    std::condition_variable ev_cv_;
    TimerEventSet events_;
    u64 event_seq_ = 0;
    ktime_t programmed_ = KTIME_MAX;
    TimerEvent* running_event_ = nullptr;
};

}  // namespace

Backend* make_real_backend(const RuntimeOptions& opts, Task* main) { return new RealBackend(opts, main); }

}  // namespace kshim
