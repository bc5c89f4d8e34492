// Probe of the panfrost driver under failures (issue #33): an allocation failure injected at each
// allocation probe makes in turn, each hardware wait of probe never completing (power-up; AS_ACTIVE
// is not waited for), and system sleep (pm_runtime_force_suspend/resume) idle, with a job queued
// in the scheduler and with a job on the hardware.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "drm/drm_syncobj.h"
#include "hw/jm/regs/gpu_regs.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "mock_hw/fault_plan.h"
#include "panfrost/panfrost_job.h"
#include "tests/dma_fence/mock_fence.h"
#include "tests/panfrost/pf_job_fixture.h"

namespace panfrost::testing {
namespace {

using kshim::dma_fence;

std::string drain_reports() {
    std::string out;
    for (const kshim::Report& r : kshim::take_reports())
        out += std::string(kshim::report_kind_name(r.kind)) + ": " + r.title + "\n";
    return out;
}

// The job fixture without the automatic probe: each test probes (and removes) itself.
class PanfrostProbeManual : public PfJobTest {
protected:
    void SetUp() override { PanfrostTest::SetUp(); }
    bool probe_in_setup() const override { return false; }

    // Probes and removes once, so that what the first probe creates for good (kmem caches,
    // module-lifetime state) is not counted against the sweep.
    void warm_up() {
        ASSERT_EQ(probe(), 0);
        remove();
        ASSERT_EQ(drain_reports(), "");
        expect_platform_released("after the warm-up");
    }

    // Closes what a test opened on the device, then unbinds the driver.
    void remove() {
        for (drm::VmArea* v : vmas)
            drm::drm_munmap(v);
        vmas.clear();
        for (dma_fence* f : fences)
            kshim::dma_fence_put(f);
        fences.clear();
        advance_until_idle(10 * kshim::NSEC_PER_SEC);
        if (file)
            drm::drm_release(file);
        file = nullptr;
        machine_->remove();
        pfdev = nullptr;
        advance_until_idle(kshim::NSEC_PER_SEC);
    }

    // A WRITE_VALUE job on the device a probe just bound: it completes and writes its value.
    void run_a_job(const std::string& where) {
        ASSERT_EQ(machine_->open_file(&file), 0) << where;
        // Probe leaves the MMU interrupts masked until a reset: the job's resume unmasks them.
        ASSERT_TRUE(wait_autosuspend()) << where;
        JobBo bo = job_bo();
        ASSERT_NE(bo.cpu, nullptr) << where;
        const u64 target = bo.slot();
        dma_fence* done = submit_fenced({.jc = bo.write_value(target, 0x5A5A), .bos = {bo.handle}});
        ASSERT_TRUE(wait_signaled(done)) << where;
        EXPECT_EQ(kshim::dma_fence_get_status(done), 1) << where;
        EXPECT_EQ(bo.value(target), 0x5A5Au) << where;
    }

    // The device a probe just returned is fully usable, then it is removed.
    void use_and_remove(const std::string& where) {
        pfdev = panfrost_from_pdev(machine_->pdev());
        ASSERT_NE(pfdev, nullptr) << where;
        run_a_job(where);
        remove();
    }
};

// ---------------------------------------------------------------------------------------------
// 1. Probe with an allocation failure injected at each allocation in turn.

// (Unlike panthor's, probe makes no non-blocking allocation: a sweep that skips the blocking
// ones, ProbeMakesNoNonBlockingAllocation, fails nothing.)
TEST_F(PanfrostProbeManual, EachAllocationFailureUnwindsCleanly) {
    warm_up();
    if (HasFatalFailure())
        return;

    u64 n = 1;
    u64 failed_probes = 0;
    u64 init_failures = 0;
    std::vector<u64> absorbed;  // allocations whose failure the probe survived
    bool reached_end = false;
    for (;; n++) {
        const std::string where = "allocation " + std::to_string(n);
        kshim::log_clear();
        const kshim::MemCounters before = kshim::mem_counters();
        kshim::fault_inject_arm({.fail_nth = n});
        const int ret = panfrost_probe(machine_->pdev());
        const u64 failures = kshim::fault_inject_failures();
        kshim::fault_inject_disarm();

        if (failures == 0) {
            // Probe made fewer than n allocations: the sweep is complete.
            EXPECT_EQ(ret, 0) << "probe failed with no allocation failed (n=" << n << ")";
            if (!ret)
                use_and_remove("with nothing failed");
            reached_end = true;
        } else if (ret == 0) {
            // A failure the driver survives: the device must then be fully usable.
            absorbed.push_back(n);
            use_and_remove("after " + where + " failed");
        } else {
            failed_probes++;
            EXPECT_EQ(ret, -ENOMEM) << where;
            EXPECT_EQ(panfrost_from_pdev(machine_->pdev()), nullptr) << where;
            EXPECT_EQ(machine_->pdev()->dev.pm, nullptr) << where;
            // A failure inside panfrost_device_init (not the device's own allocation nor the
            // shrinker's after it) is reported with upstream's message.
            if (kshim::log_contains("Fatal error during GPU init", kshim::LogLevel::Err))
                init_failures++;
        }
        // Anything freed from a workqueue is freed by now.
        advance_until_idle(kshim::NSEC_PER_SEC);
        const kshim::MemCounters after = kshim::mem_counters();
        EXPECT_EQ(kshim::mem_counters_diff(before, after), "") << where;
        EXPECT_EQ(after.pages_live, before.pages_live) << where;
        EXPECT_EQ(drain_reports(), "") << where;
        expect_platform_released("after " + where + " failed");
        if (HasFailure() || reached_end)
            break;
    }
    if (HasFailure())
        return;
    EXPECT_GT(failed_probes, 0u) << "no allocation made probe fail";
    EXPECT_GT(init_failures, 0u) << "no failure inside panfrost_device_init";
    EXPECT_LT(init_failures, failed_probes) << "the device's own allocation fails before init";
    EXPECT_TRUE(reached_end);
    std::string absorbed_list;
    for (u64 a : absorbed)
        absorbed_list += " " + std::to_string(a);
    RecordProperty("allocations", static_cast<int>(n - 1));
    RecordProperty("absorbed", absorbed_list);
    std::printf("[ probe   ] %llu allocations, %llu failed probes, absorbed:%s\n",
                static_cast<unsigned long long>(n - 1), static_cast<unsigned long long>(failed_probes),
                absorbed_list.empty() ? " none" : absorbed_list.c_str());

    // A probe with nothing injected still works on the same platform device.
    ASSERT_EQ(probe(), 0);
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanfrostProbeManual, ProbeMakesNoNonBlockingAllocation) {
    warm_up();
    if (HasFatalFailure())
        return;
    kshim::fault_inject_arm({.probability = 1.0, .ignore_blocking = true});
    const int ret = probe();
    const u64 failures = kshim::fault_inject_failures();
    kshim::fault_inject_disarm();
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(failures, 0u);
    if (!ret)
        use_and_remove("with every non-blocking allocation failing");
}

// ---------------------------------------------------------------------------------------------
// 2. Probe with a hardware wait that never completes. (The soft reset that never completes is in
// probe_test.cpp, PanfrostResetStuckTest.)

mock_hw::FaultSpec slow_power(u32 slow_factor, u32 max_fires) {
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::SlowPower;
    spec.trigger = mock_hw::FaultTrigger::always();
    spec.slow_factor = slow_factor;
    spec.max_fires = max_fires;
    return spec;
}

// Upstream's panfrost_gpu_power_on polls each domain's READY register, logs a domain that does
// not come up and carries on: probe succeeds with the GPU not (yet) powered.
TEST_F(PanfrostProbeManual, PowerUpThatNeverCompletesIsLoggedAndProbeSucceeds) {
    // 20 us x 1e9: every power transition takes hours of virtual time.
    const int id = gpu().faults().add(slow_power(1'000'000'000u, 0));
    kshim::log_clear();
    ASSERT_EQ(probe(), 0);
    EXPECT_GE(gpu().faults().fired(id), 3u) << "L2, shader and tiler power-up";
    for (const char* line : {"error powering up gpu L2", "error powering up gpu shader", "error powering up gpu tiler"})
        EXPECT_TRUE(kshim::log_contains(line, kshim::LogLevel::Err)) << line;
    EXPECT_EQ(reg(L2_READY_LO), 0u) << "the L2 never came up";
    EXPECT_TRUE(machine_->probed());
    EXPECT_FALSE(kshim::log_contains("Fatal error during GPU init"));

    // Remove powers off (each transition times out and is logged too) and releases everything.
    kshim::log_clear();
    remove();
    EXPECT_TRUE(kshim::log_contains("l2 power transition timeout", kshim::LogLevel::Err));
    EXPECT_EQ(drain_reports(), "");
    expect_platform_released("after remove");
}

// Only the first power-up (the L2's) is slow, 100 ms for a 20 ms poll: probe logs it and goes on;
// the device runs jobs once the next resume's reset powers it up again.
TEST_F(PanfrostProbeManual, SlowL2PowerUpIsLoggedAndTheDeviceStillRunsJobs) {
    const int id = gpu().faults().add(slow_power(5000, 1));
    kshim::log_clear();
    ASSERT_EQ(probe(), 0);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_TRUE(kshim::log_contains("error powering up gpu L2", kshim::LogLevel::Err));
    run_a_job("after the slow L2 power-up");
    EXPECT_EQ(reg64(L2_READY_LO), reg64(GPU_L2_PRESENT));
    remove();
    expect_platform_released("after remove");
}

// Probe issues no AS command (panfrost_mmu_init only requests the IRQ; an AS is bound by the
// first job), so there is no AS_ACTIVE wait in probe to stall: a stuck AS_ACTIVE never fires.
TEST_F(PanfrostProbeManual, ProbeIssuesNoAsCommand) {
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::AsActiveStuck;
    spec.trigger = mock_hw::FaultTrigger::always();
    spec.max_fires = 0;
    const int id = gpu().faults().add(spec);
    ASSERT_EQ(probe(), 0);
    EXPECT_TRUE(wait_autosuspend());
    EXPECT_EQ(gpu().faults().fired(id), 0u) << "probe wrote AS_COMMAND";
    gpu().faults().clear();
    remove();
    expect_platform_released("after remove");
}

// ---------------------------------------------------------------------------------------------
// 3. System sleep: .suspend/.resume are pm_runtime_force_suspend/resume over the runtime
// callbacks, as upstream's (EXPORT_GPL_RUNTIME_DEV_PM_OPS).

class PanfrostSystemSleep : public PfJobTest {
protected:
    // SUBMIT held by an in_sync on `gate`; returns the out fence.
    dma_fence* submit_gated(const JobBo& bo, u64 jc, dma_fence* gate) {
        drm_syncobj_create in{};
        drm_syncobj_create out{};
        for (drm_syncobj_create* c : {&in, &out}) {
            drm::UserRange r(c, sizeof(*c));
            EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_SYNCOBJ_CREATE, c), 0);
        }
        drm::drm_syncobj* s = drm::drm_syncobj_find(file, in.handle);
        EXPECT_NE(s, nullptr);
        if (!s)
            return nullptr;
        drm::drm_syncobj_replace_fence(s, gate);
        drm::drm_syncobj_put(s);
        u32 bos[] = {bo.handle};
        u32 in_syncs[] = {in.handle};
        drm_panfrost_submit args{};
        args.jc = jc;
        args.in_syncs = drm::user_ptr(in_syncs);
        args.in_sync_count = 1;
        args.out_sync = out.handle;
        args.bo_handles = drm::user_ptr(bos);
        args.bo_handle_count = 1;
        drm::UserRange r(&args, sizeof(args));
        drm::UserRange rb(bos, sizeof(bos));
        drm::UserRange ri(in_syncs, sizeof(in_syncs));
        EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PANFROST_SUBMIT, &args), 0);
        dma_fence* fence = nullptr;
        if (drm::drm_syncobj_find_fence(file, out.handle, 0, 0, &fence))
            return nullptr;
        fences.push_back(fence);
        return fence;
    }

    void expect_powered_off(const std::string& where) {
        EXPECT_EQ(reg(L2_READY_LO), 0u) << where;
        EXPECT_EQ(reg(SHADER_READY_LO), 0u) << where;
        EXPECT_EQ(reg(TILER_READY_LO), 0u) << where;
        EXPECT_EQ(reg(GPU_INT_MASK), 0u) << where;
    }
};

TEST_F(PanfrostSystemSleep, IdleDeviceSuspendsAndResumes) {
    // Runtime-active with the autosuspend pending (as right after probe or a job): the system
    // suspend powers it off itself.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(kshim::pm_runtime_active(dev()));
    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    expect_powered_off("after the system suspend of an active device");
    EXPECT_FALSE(kshim::pm_runtime_enabled(dev())) << "runtime PM is off while the system sleeps";
    ASSERT_TRUE(gpu().poke32(GPU_JM_CONFIG, 0));
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    EXPECT_TRUE(kshim::pm_runtime_enabled(dev()));
    // No user held it (only the sleep's own usage count): force_suspend marked it suspended for
    // good (pm_runtime_need_not_resume), so force_resume leaves it for the next user to resume.
    EXPECT_TRUE(kshim::pm_runtime_suspended(dev()));
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(reg64(L2_READY_LO), reg64(GPU_L2_PRESENT));
    EXPECT_EQ(reg(GPU_JM_CONFIG), 0x000F0000u) << "the quirks written again";
    EXPECT_EQ(reg(GPU_INT_MASK), 0x00030081u);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend()) << "the sleep left no usage count behind";

    // A device a user holds active is resumed by force_resume.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    expect_powered_off("after the system suspend of a device in use");
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    EXPECT_TRUE(kshim::pm_runtime_active(dev())) << "force_resume resumes what force_suspend suspended";
    EXPECT_EQ(reg64(L2_READY_LO), reg64(GPU_L2_PRESENT));
    EXPECT_EQ(reg(GPU_INT_MASK), 0x00030081u);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());

    // A runtime-suspended device stays suspended across the sleep, and works afterwards.
    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    expect_powered_off("after the system suspend of a suspended device");
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    EXPECT_TRUE(kshim::pm_runtime_suspended(dev())) << "nothing to resume";
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    dma_fence* done = submit_fenced({.jc = bo.write_value(target, 11), .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(kshim::dma_fence_get_status(done), 1);
    EXPECT_EQ(bo.value(target), 11u);
    EXPECT_TRUE(wait_autosuspend());
    EXPECT_EQ(drain_reports(), "");
}

TEST_F(PanfrostSystemSleep, JobQueuedAcrossTheSleepCompletesAfterResume) {
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    dma_fence* gate = dma_fence_test::mock_fence(kshim::dma_fence_context_alloc(1), 1);
    dma_fence* done = submit_gated(bo, bo.write_value(target, 0x77), gate);
    ASSERT_NE(done, nullptr);
    advance(10 * kshim::NSEC_PER_MSEC);
    ASSERT_TRUE(panfrost_jm_is_idle(pfdev)) << "the job waits in the scheduler, not on a slot";

    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    expect_powered_off("with a job queued");
    advance(100 * kshim::NSEC_PER_MSEC);
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);

    kshim::dma_fence_signal(gate);
    kshim::dma_fence_put(gate);
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(kshim::dma_fence_get_status(done), 1);
    EXPECT_EQ(bo.value(target), 0x77u);
    EXPECT_TRUE(wait_autosuspend());
    EXPECT_EQ(drain_reports(), "");
}

// A job on the hardware makes panfrost_device_runtime_suspend refuse with -EBUSY (upstream's
// panfrost_device_suspend does the same): the system suspend fails, runtime PM is enabled again,
// the GPU stays up, the job completes, and the next system suspend succeeds.
TEST_F(PanfrostSystemSleep, JobOnTheHardwareMakesTheSuspendFailWithEbusy) {
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    dma_fence* done = submit_fenced({.jc = bo.write_value(target, 0x99), .bos = {bo.handle}});
    ASSERT_NE(done, nullptr);
    ASSERT_TRUE(run_until([&] { return !panfrost_jm_is_idle(pfdev); }, 10 * kshim::NSEC_PER_MSEC));
    ASSERT_FALSE(kshim::dma_fence_is_signaled(done));

    kshim::log_clear();
    EXPECT_EQ(kshim::device_pm_suspend(dev()), -EBUSY);
    EXPECT_TRUE(kshim::log_contains("PM: failed to suspend: error -16", kshim::LogLevel::Err));
    EXPECT_TRUE(kshim::pm_runtime_enabled(dev()));
    EXPECT_TRUE(kshim::pm_runtime_active(dev()));
    EXPECT_EQ(reg64(L2_READY_LO), reg64(GPU_L2_PRESENT)) << "the GPU stayed up";

    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(kshim::dma_fence_get_status(done), 1);
    EXPECT_EQ(bo.value(target), 0x99u);
    EXPECT_TRUE(wait_autosuspend()) << "the aborted sleep left no usage count behind";

    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    EXPECT_EQ(drain_reports(), "");
}

}  // namespace
}  // namespace panfrost::testing
