// irq_work: raised in atomic context, delivered when that context ends, before the raising task
// yields; raised in task context, delivered at once; never nested.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernel_shim/irq.h"
#include "kernel_shim/irq_work.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/spinlock.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {
class IrqWork : public kshim::testing::KernelTest {};

struct Counted {
    irq_work work;
    int runs = 0;
    bool in_irq = false;
    std::vector<int>* order = nullptr;
    int id = 0;
    static void func(irq_work* w) {
        auto* self = container_of(w, Counted, work);
        self->runs++;
        self->in_irq = in_hardirq();
        if (self->order)
            self->order->push_back(self->id);
    }
};

TEST_F(IrqWork, RaisedInTaskContextRunsAtOnce) {
    Counted c;
    init_irq_work(&c.work, Counted::func);
    EXPECT_TRUE(irq_work_queue(&c.work));
    EXPECT_EQ(c.runs, 1);
    EXPECT_TRUE(c.in_irq);  // it runs as an interrupt would: might_sleep fires inside
    EXPECT_FALSE(irq_work_is_busy(&c.work));
}

TEST_F(IrqWork, RaisedUnderSpinlockRunsAtTheOutermostUnlock) {
    SpinLock a("irq_work_a"), b("irq_work_b");
    Counted c;
    init_irq_work(&c.work, Counted::func);
    spin_lock(&a);
    spin_lock(&b);
    EXPECT_TRUE(irq_work_queue(&c.work));
    EXPECT_FALSE(irq_work_queue(&c.work));  // already pending: it runs once
    EXPECT_TRUE(irq_work_is_pending(&c.work));
    spin_unlock(&b);
    EXPECT_EQ(c.runs, 0);
    spin_unlock(&a);
    EXPECT_EQ(c.runs, 1);
    EXPECT_FALSE(irq_work_is_pending(&c.work));
}

class IrqWorkPreempt : public IrqWork {
protected:
    RuntimeOptions runtime_options() const override {
        RuntimeOptions o = IrqWork::runtime_options();
        o.preempt_probability = 1.0;  // every preemption point switches if it can
        return o;
    }
};

TEST_F(IrqWorkPreempt, RunsBeforeAnyOtherTask) {
    // Another runnable task must not get in between the raising context and the work.
    bool other_ran = false;
    bool other_ran_before_work = true;
    Task* other = kthread_run(
        [&] {
            other_ran = true;
            return 0;
        },
        "other");
    SpinLock a("irq_work_a");
    static bool* seen;
    static bool* before;
    seen = &other_ran;
    before = &other_ran_before_work;
    irq_work w;
    init_irq_work(&w, [](irq_work*) { *before = *seen; });
    spin_lock(&a);
    irq_work_queue(&w);
    spin_unlock(&a);
    EXPECT_FALSE(other_ran_before_work);
    EXPECT_EQ(kthread_stop(other), 0);
}

struct Cascade {
    irq_work work;
    int depth = 0;
    int max_depth = 0;
    int remaining = 0;
    static void func(irq_work* w) {
        auto* self = container_of(w, Cascade, work);
        self->depth++;
        self->max_depth = std::max(self->max_depth, self->depth);
        // Re-raising from inside a run joins the list instead of nesting.
        if (--self->remaining > 0)
            irq_work_queue(w);
        self->depth--;
    }
};

TEST_F(IrqWork, ItemsRaisedWhileRunningJoinTheListInsteadOfNesting) {
    Cascade c;
    c.remaining = 10000;
    init_irq_work(&c.work, Cascade::func);
    u64 runs = irq_work_run_count();
    irq_work_queue(&c.work);
    EXPECT_EQ(c.remaining, 0);
    EXPECT_EQ(c.max_depth, 1);
    EXPECT_EQ(irq_work_run_count() - runs, 10000u);
}

TEST_F(IrqWork, RunInFifoOrder) {
    std::vector<int> order;
    Counted c[3];
    SpinLock a("irq_work_a");
    spin_lock(&a);
    for (int i = 0; i < 3; i++) {
        c[i].order = &order;
        c[i].id = i;
        init_irq_work(&c[i].work, Counted::func);
        irq_work_queue(&c[i].work);
    }
    spin_unlock(&a);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST_F(IrqWork, SleepingInsideIsReported) {
    irq_work w;
    init_irq_work(&w, [](irq_work*) { might_sleep(); });
    irq_work_queue(&w);
    EXPECT_TRUE(expect_report(ReportKind::MightSleep));
}

TEST_F(IrqWork, SyncRunsOwnPendingItemAndReturnsIdle) {
    Counted c;
    init_irq_work(&c.work, Counted::func);
    irq_work_sync(&c.work);  // idle: returns at once
    EXPECT_EQ(c.runs, 0);
    irq_work_queue(&c.work);
    irq_work_sync(&c.work);
    EXPECT_EQ(c.runs, 1);
    EXPECT_FALSE(irq_work_is_busy(&c.work));
}

TEST_F(IrqWork, RaisedFromHardIrqHandlerRunsWhenItReturns) {
    Counted c;
    init_irq_work(&c.work, Counted::func);
    int runs_in_handler = -1;
    IrqLine line("irq_work_dev", 7);
    ASSERT_EQ(request_irq(
                  &line,
                  [&](int, void*) -> irqreturn_t {
                      irq_work_queue(&c.work);
                      runs_in_handler = c.runs;
                      line.set_level(false);  // the device's ack
                      return IRQ_HANDLED;
                  },
                  0, "irq_work_dev", nullptr),
              0);
    line.set_level(true);
    advance_until_idle();
    EXPECT_EQ(runs_in_handler, 0);  // not inside the handler...
    EXPECT_EQ(c.runs, 1);           // ...but as soon as it returned
    free_irq(&line, nullptr);
}
}  // namespace
