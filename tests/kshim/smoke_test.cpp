#include <gtest/gtest.h>

#include "kernel_shim/completion.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Smoke : public kshim::testing::KernelTest {};

static int g_ran;
TEST_F(Smoke, WorkRunsAndTimePasses) {
    g_ran = 0;
    work_struct w;
    INIT_WORK(&w, [](work_struct*) { g_ran++; });
    EXPECT_TRUE(queue_work(system_wq(), &w));
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(g_ran, 1);
    ktime_t t0 = ktime_get();
    msleep(5000);
    EXPECT_EQ(ktime_get() - t0, 5000 * NSEC_PER_MSEC);
}

TEST_F(Smoke, KthreadAndCompletion) {
    completion c;
    Task* t = kthread_run(
        [&] {
            msleep(10);
            complete(&c);
            return 7;
        },
        "k");
    wait_for_completion(&c);
    EXPECT_EQ(kthread_stop(t), 7);
}

class RealSmoke : public kshim::testing::RealKernelTest {};
TEST_F(RealSmoke, WorkRuns) {
    g_ran = 0;
    work_struct w;
    INIT_WORK(&w, [](work_struct*) { g_ran++; });
    EXPECT_TRUE(queue_work(system_wq(), &w));
    flush_work(&w);
    EXPECT_EQ(g_ran, 1);
}
