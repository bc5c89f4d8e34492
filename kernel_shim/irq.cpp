// Mirrors kernel/irq/manage.c and handle.c (threaded IRQs, oneshot masking, spurious detection).
#include "kernel_shim/irq.h"

#include "kernel_shim/irq_work.h"
#include "kernel_shim/report.h"
#include "kernel_shim/trace.h"

namespace kshim {

IrqLine::~IrqLine() {
    if (requested_)
        free_irq(this, dev_id_);
}

void IrqLine::set_level(bool asserted) {
    std::lock_guard g(lock_);
    bool could = can_fire_locked();
    level_ = asserted;
    if (!could && can_fire_locked() && task_)
        backend().unpark(task_);
}

bool IrqLine::level() const {
    std::lock_guard g(lock_);
    return level_;
}

bool IrqLine::masked() const {
    std::lock_guard g(lock_);
    return depth_ > 0 || oneshot_masked_;
}

u64 IrqLine::handled_count() const {
    std::lock_guard g(lock_);
    return count_;
}

void IrqLine::report_line_disabled(const char* what, const char* detail) const {
    report(ReportKind::Irq, "irq " + std::to_string(number_) + " (" + name_ + "): " + what, detail);
}

void IrqLine::irq_thread() {
    Task* me = current();
    std::unique_lock l(lock_);
    for (;;) {
        if (stopping_)
            break;
        if (!can_fire_locked()) {
            me->idle_park = true;
            me->wait_reason = "irq";
            l.unlock();
            backend().park(KTIME_MAX);
            l.lock();
            me->idle_park = false;
            continue;
        }
        in_handler_ = true;
        count_++;
        l.unlock();

        irqreturn_t r;
        me->hardirq = true;
        {
            trace::Slice s("irq_handler", "irq");
            r = handler_ ? handler_(number_, dev_id_) : IRQ_WAKE_THREAD;
        }
        me->hardirq = false;
        if (me->irq_work_head && me->preempt_count == 0)
            irq_work_run();  // raised by the handler
        if ((r & IRQ_WAKE_THREAD) && thread_fn_) {
            {
                std::lock_guard g(lock_);
                oneshot_masked_ = true;
            }
            {
                trace::Slice s("irq_thread", "irq");
                thread_fn_(number_, dev_id_);
            }
            std::lock_guard g(lock_);
            oneshot_masked_ = false;
        }

        l.lock();
        in_handler_ = false;
        const ktime_t now = ktime_get();
        same_instant_ = now == last_fire_ ? same_instant_ + 1 : 0;
        last_fire_ = now;
        if (same_instant_ >= 1000000) {
            depth_++;
            same_instant_ = 0;
            l.unlock();
            report_line_disabled("interrupt storm",
                                 "1000000 interrupts at one instant: the handler does not deassert the line; "
                                 "disabling it");
            l.lock();
        }
        if (r == IRQ_NONE) {
            if (++unhandled_ >= 100000) {
                depth_++;
                l.unlock();
                report_line_disabled("nobody cared",
                                     "the handler returned IRQ_NONE 100000 times in a row; disabling the line");
                l.lock();
            }
        } else {
            unhandled_ = 0;
        }
        l.unlock();
        idle_wq_.wake_up_all();
        l.lock();
    }
}

int request_threaded_irq(IrqLine* line, irq_handler_t handler, irq_handler_t thread_fn, unsigned long, const char* name,
                         void* dev_id) {
    if (!handler && !thread_fn)
        return -EINVAL;
    std::lock_guard g(line->lock_);
    if (line->requested_)
        return -EBUSY;
    line->requested_ = true;
    line->stopping_ = false;
    line->handler_ = std::move(handler);
    line->thread_fn_ = std::move(thread_fn);
    line->dev_id_ = dev_id;
    line->unhandled_ = 0;
    std::string tname = "irq/" + std::to_string(line->number_) + "-" + (name ? name : line->name_.c_str());
    line->task_ = backend().spawn(tname, TaskKind::Irq, [line] { line->irq_thread(); });
    return 0;
}

void free_irq(IrqLine* line, void* dev_id) {
    Task* t;
    {
        std::lock_guard g(line->lock_);
        if (!line->requested_ || line->dev_id_ != dev_id) {
            WARN(true, "Trying to free already-free IRQ %d", line->number_);
            return;
        }
        line->stopping_ = true;
        t = line->task_;
        backend().unpark(t);
    }
    backend().join(t);
    std::lock_guard g(line->lock_);
    line->task_ = nullptr;
    line->requested_ = false;
    line->handler_ = nullptr;
    line->thread_fn_ = nullptr;
}

void disable_irq_nosync(IrqLine* line) {
    std::lock_guard g(line->lock_);
    line->depth_++;
}

void disable_irq(IrqLine* line) {
    disable_irq_nosync(line);
    synchronize_irq(line);
}

void enable_irq(IrqLine* line) {
    std::lock_guard g(line->lock_);
    if (WARN(line->depth_ == 0, "Unbalanced enable for IRQ %d", line->number_))
        return;
    line->depth_--;
    if (line->can_fire_locked() && line->task_)
        backend().unpark(line->task_);
}

void synchronize_irq(IrqLine* line) {
    might_sleep();
    wait_event(line->idle_wq_, [&] {
        std::lock_guard g(line->lock_);
        return !line->in_handler_;
    }());
}

}  // namespace kshim
