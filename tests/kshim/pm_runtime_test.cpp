// Runtime PM with the kernel's semantics, in virtual time.
#include <gtest/gtest.h>

#include "kernel_shim/devres.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/time.h"
#include "tests/kshim/platform_test_util.h"
#include "tests/kshim/pm_runtime_test_util.h"
#include "tests/support/kernel_test.h"

using namespace kshim;
using kshim::testing::PmProbe;
using kshim::testing::TestPlatform;

class PmRuntime : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        tp_ = std::make_unique<TestPlatform>();
        dev = tp_->dev();
        dev->driver_data = &probe;
        dev->pm = &kshim::testing::kProbePmOps;
    }
    void TearDown() override {
        tp_.reset();
        KernelTest::TearDown();
    }

    // Enables runtime PM, resumes and holds one reference.
    void enable_and_get() {
        pm_runtime_enable(dev);
        ASSERT_EQ(pm_runtime_resume_and_get(dev), 0);
    }
    void use_autosuspend(int delay_ms) {
        pm_runtime_set_autosuspend_delay(dev, delay_ms);
        pm_runtime_use_autosuspend(dev);
    }

    PmProbe probe;
    Device* dev = nullptr;

private:
    std::unique_ptr<TestPlatform> tp_;
};

TEST_F(PmRuntime, ResumeAndGetRunsTheCallbackOnce) {
    enable_and_get();
    EXPECT_EQ(probe.resumes, 1);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_TRUE(pm_runtime_active(dev));
    EXPECT_EQ(pm_runtime_usage_count(dev), 1);

    EXPECT_EQ(pm_runtime_resume_and_get(dev), 0);  // already active
    EXPECT_EQ(pm_runtime_get_sync(dev), 1);        // 1: it was active
    EXPECT_EQ(probe.resumes, 1);
    EXPECT_EQ(pm_runtime_usage_count(dev), 3);

    pm_runtime_put_noidle(dev);
    pm_runtime_put_noidle(dev);
    pm_runtime_get_noresume(dev);
    EXPECT_EQ(pm_runtime_usage_count(dev), 2);
    EXPECT_EQ(pm_runtime_put_sync_suspend(dev), 0);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);  // still one user
    EXPECT_EQ(pm_runtime_put_sync_suspend(dev), 0);
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_TRUE(pm_runtime_suspended(dev));
    EXPECT_EQ(probe.suspends, 1);
    EXPECT_EQ(probe.last_suspend_task.load(), current());  // synchronous: in the caller

    pm_runtime_put_noidle(dev);  // does not go below zero
    EXPECT_EQ(pm_runtime_usage_count(dev), 0);
    EXPECT_EQ(pm_runtime_put(dev), -EINVAL);  // underflow, as upstream
    EXPECT_EQ(pm_runtime_usage_count(dev), 0);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, PutSuspendsOnThePmWorkqueue) {
    enable_and_get();
    EXPECT_EQ(pm_runtime_put(dev), 0);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);  // queued, not done
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_EQ(probe.suspends, 1);
    EXPECT_NE(probe.last_suspend_task.load(), current());
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, PutAutosuspendSuspendsExactlyAfterTheDelay) {
    use_autosuspend(100);
    enable_and_get();
    advance(3 * NSEC_PER_MSEC + 123'456);  // not on a tick
    const ktime_t t0 = ktime_get();
    pm_runtime_mark_last_busy(dev);
    EXPECT_EQ(pm_runtime_put_autosuspend(dev), 0);

    advance(ms_to_ktime(99));
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_EQ(probe.suspends, 0);
    advance(ms_to_ktime(1) + TICK_NSEC);
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_EQ(probe.suspends, 1);
    EXPECT_EQ(probe.last_suspend_at.load(), t0 + ms_to_ktime(100));
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, MarkLastBusyPostponesTheAutosuspend) {
    use_autosuspend(100);
    enable_and_get();
    const ktime_t t0 = ktime_get();
    pm_runtime_mark_last_busy(dev);
    pm_runtime_put_autosuspend(dev);

    advance(ms_to_ktime(60));
    pm_runtime_mark_last_busy(dev);  // busy again, without taking a reference
    advance(ms_to_ktime(40) + TICK_NSEC);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_EQ(probe.last_suspend_at.load(), t0 + ms_to_ktime(160));
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, ResumeCancelsThePendingAutosuspend) {
    use_autosuspend(50);
    enable_and_get();
    pm_runtime_mark_last_busy(dev);
    pm_runtime_put_autosuspend(dev);
    advance(ms_to_ktime(30));
    ASSERT_EQ(pm_runtime_resume_and_get(dev), 0);  // in use again before the delay ran out
    advance(ms_to_ktime(500));
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_EQ(probe.suspends, 0);
    EXPECT_EQ(probe.resumes, 1);
    pm_runtime_mark_last_busy(dev);
    pm_runtime_put_autosuspend(dev);
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(probe.suspends, 1);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, GetIfInUseAndIfActive) {
    EXPECT_EQ(pm_runtime_get_if_in_use(dev), -EINVAL);  // disabled
    EXPECT_EQ(pm_runtime_get_if_active(dev), -EINVAL);
    pm_runtime_enable(dev);
    EXPECT_EQ(pm_runtime_get_if_in_use(dev), 0);  // suspended
    EXPECT_EQ(pm_runtime_get_if_active(dev), 0);

    use_autosuspend(100);
    ASSERT_EQ(pm_runtime_resume_and_get(dev), 0);
    EXPECT_EQ(pm_runtime_get_if_in_use(dev), 1);
    EXPECT_EQ(pm_runtime_usage_count(dev), 2);
    pm_runtime_put_noidle(dev);
    pm_runtime_put_autosuspend(dev);  // active, nobody using it
    EXPECT_EQ(pm_runtime_get_if_in_use(dev), 0);
    EXPECT_EQ(pm_runtime_get_if_active(dev), 1);
    EXPECT_EQ(pm_runtime_usage_count(dev), 1);
    pm_runtime_put_autosuspend(dev);
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, FailedResumeIsReportedAndTheDeviceStaysSuspended) {
    pm_runtime_enable(dev);
    probe.fail_resume = -EIO;
    EXPECT_EQ(pm_runtime_resume_and_get(dev), -EIO);
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_EQ(pm_runtime_usage_count(dev), 0);  // resume_and_get dropped its reference
    EXPECT_EQ(pm_runtime_error(dev), -EIO);
    EXPECT_EQ(probe.resumes, 0);

    // get_sync keeps the reference on failure.
    probe.fail_resume = -ETIMEDOUT;
    EXPECT_EQ(pm_runtime_get_sync(dev), -ETIMEDOUT);
    EXPECT_EQ(pm_runtime_usage_count(dev), 1);
    pm_runtime_put_noidle(dev);

    // The next attempt runs the callback again, and clears the error.
    EXPECT_EQ(pm_runtime_resume_and_get(dev), 0);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_EQ(pm_runtime_error(dev), 0);
    EXPECT_EQ(probe.resumes, 1);
    pm_runtime_put_sync_suspend(dev);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, FailedSuspendLeavesTheDeviceActive) {
    enable_and_get();
    probe.fail_suspend = -EIO;
    EXPECT_EQ(pm_runtime_put_sync_suspend(dev), -EIO);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_EQ(pm_runtime_error(dev), -EIO);
    EXPECT_EQ(probe.suspends, 0);

    // -EBUSY is "not now", not an error.
    ASSERT_EQ(pm_runtime_resume_and_get(dev), 0);
    probe.fail_suspend = -EBUSY;
    EXPECT_EQ(pm_runtime_put_sync_suspend(dev), -EBUSY);
    EXPECT_EQ(pm_runtime_error(dev), 0);

    EXPECT_EQ(pm_runtime_suspend(dev), 0);
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_EQ(probe.suspends, 1);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, ConcurrentResumersRunTheCallbackOnce) {
    pm_runtime_enable(dev);
    probe.sleep_ms = 5;
    std::atomic<int> results[3] = {99, 99, 99};
    std::vector<Task*> ts;
    for (int i = 0; i < 3; i++)
        ts.push_back(kthread_run(
            [&, i] {
                results[i] = pm_runtime_resume_and_get(dev);
                return 0;
            },
            "resumer"));
    for (Task* t : ts)
        kthread_stop(t);
    for (auto& r : results)
        EXPECT_EQ(r.load(), 0);
    EXPECT_EQ(probe.resumes, 1);
    EXPECT_EQ(pm_runtime_usage_count(dev), 3);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);

    // A synchronous suspend racing with a resume: the callbacks never overlap, and the
    // resumer finds the device active when it returns.
    for (int i = 0; i < 3; i++)
        pm_runtime_put_noidle(dev);
    Task* s = kthread_run([&] { return pm_runtime_suspend(dev); }, "suspender");
    msleep(1);  // the suspend callback is running
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDING);
    EXPECT_EQ(pm_runtime_resume_and_get(dev), 0);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    kthread_stop(s);
    EXPECT_EQ(probe.suspends, 1);
    EXPECT_EQ(probe.resumes, 2);
    EXPECT_EQ(probe.max_in_callback, 1);
    pm_runtime_put_sync_suspend(dev);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, DisabledDeviceRefusesTransitions) {
    EXPECT_EQ(pm_runtime_resume_and_get(dev), -EACCES);
    EXPECT_EQ(pm_runtime_usage_count(dev), 0);
    EXPECT_EQ(pm_runtime_suspend(dev), -EACCES);
    EXPECT_EQ(probe.resumes, 0);

    // While disabled the driver may declare the hardware state; enabled, it may not.
    EXPECT_EQ(pm_runtime_set_active(dev), 0);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_EQ(pm_runtime_get_sync(dev), 1);  // active and disabled: nothing to do
    EXPECT_EQ(probe.resumes, 0);
    pm_runtime_enable(dev);
    EXPECT_EQ(pm_runtime_set_suspended(dev), -EAGAIN);
    pm_runtime_disable(dev);
    pm_runtime_disable(dev);  // nests
    pm_runtime_enable(dev);
    EXPECT_FALSE(pm_runtime_enabled(dev));
    EXPECT_EQ(pm_runtime_get_sync(dev), 1);  // disabled while active
    pm_runtime_put_noidle(dev);
    pm_runtime_put_noidle(dev);
    EXPECT_EQ(pm_runtime_set_suspended(dev), 0);
}

TEST_F(PmRuntime, DevmEnableSuspendsAndDisablesOnRelease) {
    ASSERT_EQ(devm_pm_runtime_enable(dev), 0);
    EXPECT_TRUE(pm_runtime_enabled(dev));
    use_autosuspend(1000);
    ASSERT_EQ(pm_runtime_resume_and_get(dev), 0);
    pm_runtime_put_autosuspend(dev);  // would suspend in a second
    devres_release_all(dev);
    // dont_use_autosuspend suspended it at once, then runtime PM went off.
    EXPECT_EQ(probe.suspends, 1);
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_FALSE(pm_runtime_enabled(dev));
}

TEST_F(PmRuntime, BarrierCancelsRequestsAndWaitsForTransitions) {
    enable_and_get();
    pm_runtime_put(dev);
    pm_runtime_barrier(dev);  // the queued suspend request is dropped
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_EQ(probe.suspends, 0);

    probe.sleep_ms = 10;
    Task* s = kthread_run([&] { return pm_runtime_suspend(dev); }, "suspender");
    msleep(1);
    const ktime_t t = ktime_get();
    pm_runtime_barrier(dev);  // waits for the suspend in progress
    EXPECT_GE(ktime_get() - t, ms_to_ktime(8));
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_EQ(kthread_stop(s), 0);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, SystemSleepOfADeviceInUse) {
    use_autosuspend(50);
    enable_and_get();  // in use across the sleep
    ASSERT_EQ(device_pm_suspend(dev), 0);
    EXPECT_EQ(probe.suspends, 1);
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_FALSE(pm_runtime_enabled(dev));

    ASSERT_EQ(device_pm_resume(dev), 0);
    EXPECT_EQ(probe.resumes, 2);
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_TRUE(pm_runtime_enabled(dev));
    EXPECT_EQ(pm_runtime_usage_count(dev), 1);
    advance(ms_to_ktime(200));
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);  // still held by its user

    pm_runtime_mark_last_busy(dev);
    pm_runtime_put_autosuspend(dev);
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, SystemSleepOfAnIdleDeviceLeavesItToRuntimePm) {
    use_autosuspend(1000);
    enable_and_get();
    pm_runtime_mark_last_busy(dev);
    pm_runtime_put_autosuspend(dev);  // active, autosuspend pending
    ASSERT_EQ(device_pm_suspend(dev), 0);
    EXPECT_EQ(probe.suspends, 1);
    ASSERT_EQ(device_pm_resume(dev), 0);
    EXPECT_EQ(probe.resumes, 1);  // not resumed: nobody needs it
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    EXPECT_TRUE(pm_runtime_enabled(dev));
    EXPECT_EQ(pm_runtime_usage_count(dev), 0);
    EXPECT_TRUE(advance_until_idle());
    EXPECT_EQ(probe.suspends, 1);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, SystemSuspendFailureKeepsRuntimePmWorking) {
    enable_and_get();
    probe.fail_suspend = -EBUSY;
    EXPECT_EQ(device_pm_suspend(dev), -EBUSY);
    EXPECT_TRUE(pm_runtime_enabled(dev));
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    EXPECT_EQ(pm_runtime_usage_count(dev), 1);
    EXPECT_EQ(pm_runtime_put_sync_suspend(dev), 0);
    EXPECT_EQ(probe.suspends, 1);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, NegativeAutosuspendDelayForbidsSuspend) {
    use_autosuspend(100);
    enable_and_get();
    pm_runtime_set_autosuspend_delay(dev, -1);
    pm_runtime_put_autosuspend(dev);
    advance(ms_to_ktime(1000));
    EXPECT_EQ(pm_runtime_status(dev), RPM_ACTIVE);
    pm_runtime_set_autosuspend_delay(dev, 0);  // allowed again: suspends now
    EXPECT_EQ(pm_runtime_status(dev), RPM_SUSPENDED);
    pm_runtime_disable(dev);
}

TEST_F(PmRuntime, ReleaseOfAnEnabledDeviceStopsEverything) {
    use_autosuspend(100);
    enable_and_get();
    pm_runtime_mark_last_busy(dev);
    pm_runtime_put_autosuspend(dev);
    // TearDown destroys the device with the timer armed; nothing may fire afterwards.
}
