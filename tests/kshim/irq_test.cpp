// Threaded, level-triggered IRQs against a tiny device with RAWSTAT/MASK registers.
#include <gtest/gtest.h>

#include <atomic>

#include "kernel_shim/irq.h"
#include "kernel_shim/report.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {
// A device in the style of the Mali IRQ blocks: the line is asserted while RAWSTAT & MASK != 0.
struct Device {
    IrqLine line{"dev", 42};
    std::atomic<u32> rawstat{0};
    std::atomic<u32> mask{0};
    void update() { line.set_level((rawstat & mask) != 0); }
    void raise(u32 bits) {
        rawstat |= bits;
        update();
    }
    void clear(u32 bits) {
        rawstat &= ~bits;
        update();
    }
    void set_mask(u32 m) {
        mask = m;
        update();
    }
};

// The panthor pattern: the hard handler masks the device and wakes the thread, the thread
// handles and clears the events, then unmasks.
struct Driver {
    Device* dev;
    int hard_runs = 0, thread_runs = 0;
    bool hard_in_hardirq = false, line_masked_in_thread = false, thread_can_sleep = false;
    u32 handled = 0;

    irqreturn_t hard(int, void*) {
        hard_runs++;
        hard_in_hardirq = in_hardirq();
        if (!(dev->rawstat & dev->mask))
            return IRQ_NONE;
        dev->set_mask(0);
        return IRQ_WAKE_THREAD;
    }
    irqreturn_t thread(int, void*) {
        thread_runs++;
        line_masked_in_thread = dev->line.masked();
        thread_can_sleep = !in_atomic();
        msleep(1);
        u32 st = dev->rawstat;
        handled |= st;
        dev->clear(st);
        dev->set_mask(~0u);
        return IRQ_HANDLED;
    }
};
}  // namespace

class Irq : public kshim::testing::SweepableKernelTest {};

TEST_F(Irq, LineIsAssertedWhileStatusAndMaskIntersect) {
    Device d;
    d.raise(0x1);
    EXPECT_FALSE(d.line.level());  // masked off
    d.set_mask(0x2);
    EXPECT_FALSE(d.line.level());
    d.set_mask(0x3);
    EXPECT_TRUE(d.line.level());
    d.clear(0x1);
    EXPECT_FALSE(d.line.level());
}

TEST_F(Irq, ThreadedHandlerRunsWithTheLineMaskedThenUnmasks) {
    Device d;
    Driver drv{&d};
    d.set_mask(~0u);
    ASSERT_EQ(request_threaded_irq(
                  &d.line, [&](int i, void* p) { return drv.hard(i, p); },
                  [&](int i, void* p) { return drv.thread(i, p); }, IRQF_SHARED, "dev", &drv),
              0);
    d.raise(0x5);
    advance_until_idle();
    EXPECT_EQ(drv.hard_runs, 1);
    EXPECT_EQ(drv.thread_runs, 1);
    EXPECT_TRUE(drv.hard_in_hardirq);
    EXPECT_TRUE(drv.line_masked_in_thread);
    EXPECT_TRUE(drv.thread_can_sleep);
    EXPECT_EQ(drv.handled, 0x5u);
    EXPECT_FALSE(d.line.masked());  // re-enabled afterwards
    EXPECT_FALSE(d.line.level());
    d.raise(0x8);  // and it fires again
    advance_until_idle();
    EXPECT_EQ(drv.thread_runs, 2);
    EXPECT_EQ(drv.handled, 0xdu);
    free_irq(&d.line, &drv);
}

TEST_F(Irq, SleepingInTheHardHandlerIsReported) {
    Device d;
    d.set_mask(1);
    ASSERT_EQ(request_irq(
                  &d.line,
                  [&](int, void*) {
                      msleep(1);
                      d.clear(1);
                      return IRQ_HANDLED;
                  },
                  0, "sleepy", &d),
              0);
    d.raise(1);
    advance_until_idle();
    EXPECT_TRUE(expect_report(ReportKind::MightSleep));
    free_irq(&d.line, &d);
}

TEST_F(Irq, DisableIrqHoldsInterruptsUntilEnabled) {
    Device d;
    int runs = 0;
    d.set_mask(1);
    request_irq(
        &d.line,
        [&](int, void*) {
            runs++;
            d.clear(1);
            return IRQ_HANDLED;
        },
        0, "gated", &d);
    disable_irq(&d.line);
    d.raise(1);
    advance_until_idle();
    EXPECT_EQ(runs, 0);
    EXPECT_TRUE(d.line.masked());
    enable_irq(&d.line);
    advance_until_idle();
    EXPECT_EQ(runs, 1);
    free_irq(&d.line, &d);
}

TEST_F(Irq, DisableIrqWaitsForARunningThreadedHandler) {
    Device d;
    Driver drv{&d};
    d.set_mask(~0u);
    request_threaded_irq(
        &d.line, [&](int i, void* p) { return drv.hard(i, p); }, [&](int i, void* p) { return drv.thread(i, p); }, 0,
        "dev", &drv);
    d.raise(1);
    run_until([&] { return drv.hard_runs == 1; }, ms_to_ktime(1));
    disable_irq(&d.line);  // the thread sleeps 1 ms inside: we wait for it
    EXPECT_EQ(drv.thread_runs, 1);
    EXPECT_EQ(ktime_get(), ms_to_ktime(1));
    enable_irq(&d.line);
    free_irq(&d.line, &drv);
}

TEST_F(Irq, RequestingABusyLineFailsAndBothHandlersNullIsInvalid) {
    Device d;
    auto h = [](int, void*) { return IRQ_HANDLED; };
    EXPECT_EQ(request_threaded_irq(&d.line, nullptr, nullptr, 0, "none", nullptr), -EINVAL);
    EXPECT_EQ(request_irq(&d.line, h, 0, "first", &d), 0);
    EXPECT_EQ(request_irq(&d.line, h, 0, "second", &d), -EBUSY);
    free_irq(&d.line, &d);
}

TEST_F(Irq, UnhandledStormDisablesTheLine) {
    Device d;
    d.set_mask(1);
    request_irq(
        &d.line, [](int, void*) { return IRQ_NONE; }, 0, "deaf", &d);
    d.raise(1);  // never cleared, never claimed
    advance_until_idle();
    EXPECT_TRUE(expect_report(ReportKind::Irq));
    EXPECT_TRUE(d.line.masked());
    EXPECT_EQ(d.line.handled_count(), 100000u);
    free_irq(&d.line, &d);
}

TEST_F(Irq, HandledButNeverDeassertedStormDisablesTheLine) {
    Device d;
    d.set_mask(1);
    request_irq(
        &d.line, [](int, void*) { return IRQ_HANDLED; }, 0, "stuck-high", &d);  // never clears
    d.raise(1);
    advance_until_idle();
    EXPECT_TRUE(expect_report(ReportKind::Irq));
    EXPECT_TRUE(d.line.masked());
    EXPECT_EQ(d.line.handled_count(), 1000001u);
    free_irq(&d.line, &d);
}
