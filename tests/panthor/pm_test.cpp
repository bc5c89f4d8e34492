// Runtime and system PM of the panthor driver on the mock G610 (simulated runtime): the 50 ms
// autosuspend, what a suspended GPU looks like (clocks off, MCU halted, L2 off), resume on demand
// by an ioctl, failed resumes (clock enable, FW boot) and system sleep with VMs bound.
#include <cstring>
#include <string>
#include <vector>

#include "hw/csf/fw_iface.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/time.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;
using kshim::ms_to_ktime;

constexpr u64 kUserVa = 0x1000000;
constexpr u64 kPage = 4096;

class PanthorPm : public PanthorTest {
protected:
    void SetUp() override {
        PanthorTest::SetUp();
        if (ptdev)
            count_soft_resets();
    }
    u64 l2_ready() { return gpu().peek32(L2_READY).value_or(0) | (u64{gpu().peek32(L2_READY + 4).value_or(0)} << 32); }
    // Enabled and prepared counts of the three clocks of the G610 node, summed.
    int clocks_enabled() {
        return ptdev->clks.core->enable_count + (ptdev->clks.stacks ? ptdev->clks.stacks->enable_count : 0) +
               (ptdev->clks.coregroup ? ptdev->clks.coregroup->enable_count : 0);
    }
    int clocks_prepared() {
        return ptdev->clks.core->prepare_count + (ptdev->clks.stacks ? ptdev->clks.stacks->prepare_count : 0) +
               (ptdev->clks.coregroup ? ptdev->clks.coregroup->prepare_count : 0);
    }
    // The runtime PM status (pm_runtime_suspended() is false while PM is disabled by a system
    // sleep, whatever the device's state).
    bool suspended() { return kshim::pm_runtime_status(dev()) == kshim::RPM_SUSPENDED; }

    // DEV_QUERY TIMESTAMP_INFO: an ioctl that reads GPU registers, so it needs the device powered.
    int query_timestamp(drm_panthor_timestamp_info* out) {
        *out = {};
        drm::UserRange r(*out);
        drm_panthor_dev_query q{};
        q.type = DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO;
        q.size = sizeof(*out);
        q.pointer = reinterpret_cast<u64>(out);
        return ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &q);
    }

    // A BO of one page filled with `fill`, through its CPU mapping.
    u32 bo_with_pattern(u32 fill) {
        const u32 bo = bo_create(kPage);
        auto* cpu = static_cast<u32*>(bo_cpu(bo, kPage));
        if (cpu)
            for (size_t i = 0; i < kPage / sizeof(u32); i++)
                cpu[i] = fill + static_cast<u32>(i);
        return bo;
    }

    // What the GPU reads at `va` through address space `as` (the mock's own walker), or ~0u if
    // the access does not succeed.
    u32 gpu_read32(int as, u64 va) {
        u32 v = 0;
        if (as < 0)
            return ~0u;
        const mock_hw::MemResult r =
            gpu().mmu().read(static_cast<u32>(as), va, &v, sizeof(v), mock_hw::Access::Read, mock_hw::kSourceTest);
        return r.ok() ? v : ~0u;
    }

    panthor_vm* user_vm(u32 id) {
        return panthor_vm_pool_get_vm(static_cast<panthor_file*>(file->driver_priv)->vms, id);
    }

    // The state every runtime-suspended device must be in.
    void expect_powered_down(bool fast) {
        EXPECT_TRUE(suspended());
        EXPECT_EQ(ptdev->pm.state.load(), PANTHOR_DEVICE_PM_STATE_SUSPENDED);
        EXPECT_EQ(clocks_enabled(), 0);
        EXPECT_EQ(clocks_prepared(), 0);
        EXPECT_EQ(l2_ready(), 0u);
        // A clean halt keeps the MCU in HALT for a fast restart; otherwise the GPU was reset.
        EXPECT_EQ(mcu_status(), fast ? MCU_STATUS_HALT : MCU_STATUS_DISABLED);
        EXPECT_EQ(ptdev->reset.fast, fast);
    }

    void expect_powered_up() {
        EXPECT_TRUE(kshim::pm_runtime_active(dev()));
        EXPECT_EQ(ptdev->pm.state.load(), PANTHOR_DEVICE_PM_STATE_ACTIVE);
        EXPECT_EQ(ptdev->clks.core->enable_count, 1);
        EXPECT_EQ(l2_ready(), ptdev->gpu_info.l2_present);
        EXPECT_EQ(mcu_status(), MCU_STATUS_ENABLED);
        // The host's global configuration was acked by the FW after this (re)start.
        panthor_fw_global_iface* glb = panthor_fw_get_glb_iface(ptdev);
        EXPECT_EQ(glb->output->ack & GLB_REQ_MASK & ~GLB_HALT, glb->input->req & GLB_REQ_MASK & ~GLB_HALT);
    }
};

TEST_F(PanthorPm, ProbeLeavesDeviceActiveThenAutosuspendsAfter50ms) {
    expect_powered_up();
    EXPECT_EQ(kshim::pm_runtime_usage_count(dev()), 0);

    // Probe's last put started the 50 ms autosuspend delay (HZ=250 rounding allowed).
    EXPECT_FALSE(run_until([&] { return suspended(); }, ms_to_ktime(48)));
    expect_powered_up();
    EXPECT_TRUE(run_until([&] { return suspended(); }, ms_to_ktime(12)));
    expect_powered_down(/*fast=*/true);
    EXPECT_EQ(soft_resets_, 0) << "a clean halt only powers L2 off";
}

TEST_F(PanthorPm, AutosuspendDelayCountsFromTheLastUser) {
    ASSERT_TRUE(wait_autosuspend());
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    expect_powered_up();

    // A user that stays longer than the delay: the device must not suspend under it.
    EXPECT_FALSE(run_until([&] { return !kshim::pm_runtime_active(dev()); }, ms_to_ktime(200)));

    kshim::pm_runtime_mark_last_busy(dev());
    const ktime_t t0 = kshim::ktime_get();
    kshim::pm_runtime_put_autosuspend(dev());

    EXPECT_FALSE(run_until([&] { return suspended(); }, ms_to_ktime(48)));
    EXPECT_TRUE(kshim::pm_runtime_active(dev()));
    ASSERT_TRUE(run_until([&] { return suspended(); }, ms_to_ktime(12)));
    const ktime_t waited = kshim::ktime_get() - t0;
    EXPECT_GE(waited, ms_to_ktime(48));
    EXPECT_LE(waited, ms_to_ktime(60));
    expect_powered_down(/*fast=*/true);
}

TEST_F(PanthorPm, AutosuspendRestartsWhenANewUserComesWithinTheDelay) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    kshim::pm_runtime_mark_last_busy(dev());
    kshim::pm_runtime_put_autosuspend(dev());
    advance(ms_to_ktime(40));
    ASSERT_TRUE(kshim::pm_runtime_active(dev()));

    const u64 boots = gpu().mcu().boots();
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    kshim::pm_runtime_mark_last_busy(dev());
    const ktime_t t1 = kshim::ktime_get();
    kshim::pm_runtime_put_autosuspend(dev());

    // The first put's deadline (t1 + 10 ms) passes without a suspend.
    EXPECT_FALSE(run_until([&] { return suspended(); }, ms_to_ktime(48)));
    ASSERT_TRUE(run_until([&] { return suspended(); }, ms_to_ktime(12)));
    EXPECT_GE(kshim::ktime_get() - t1, ms_to_ktime(48));
    EXPECT_EQ(gpu().mcu().boots(), boots) << "the second user found the device still running";
}

TEST_F(PanthorPm, IoctlResumesASuspendedDeviceWhichAutosuspendsAgain) {
    ASSERT_TRUE(wait_autosuspend());
    const u64 boots = gpu().mcu().boots();

    drm_panthor_timestamp_info ts{};
    ASSERT_EQ(query_timestamp(&ts), 0);
    // The registers were read from a powered GPU: GPU_TIMESTAMP counts the runtime clock at 24 MHz.
    EXPECT_EQ(ts.timestamp_frequency, 24'000'000u);
    const u64 now_ticks = static_cast<u64>(kshim::ktime_get()) * 24 / 1000;
    EXPECT_LE(ts.current_timestamp, now_ticks);
    EXPECT_GE(ts.current_timestamp + 24'000, now_ticks) << "timestamp more than 1 ms stale";
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);
    expect_powered_up();
    EXPECT_EQ(kshim::pm_runtime_usage_count(dev()), 0) << "the ioctl dropped its reference";
    EXPECT_FALSE(kshim::log_contains("slow reset"));

    EXPECT_FALSE(run_until([&] { return suspended(); }, ms_to_ktime(48)));
    ASSERT_TRUE(run_until([&] { return suspended(); }, ms_to_ktime(12)));
    expect_powered_down(/*fast=*/true);

    // And again: every suspend/resume cycle is a clean fast restart.
    ASSERT_EQ(query_timestamp(&ts), 0);
    EXPECT_EQ(gpu().mcu().boots(), boots + 2);
    expect_powered_up();
    ASSERT_TRUE(wait_autosuspend());
    expect_powered_down(/*fast=*/true);
}

TEST_F(PanthorPm, VmBindOnAnInactiveVmDoesNotWakeTheDevice) {
    const u32 vm = vm_create();
    const u32 bo = bo_with_pattern(0x5a000000);
    ASSERT_TRUE(wait_autosuspend());
    const u64 boots = gpu().mcu().boots();

    // Only the page tables change: nothing to flush on a GPU that has no AS for this VM.
    ASSERT_EQ(vm_map(vm, bo, kUserVa, kPage), 0);
    EXPECT_TRUE(suspended());
    EXPECT_EQ(gpu().mcu().boots(), boots);
    EXPECT_EQ(clocks_enabled(), 0);

    // The mapping is what the GPU sees once the VM gets an address space.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    panthor_vm* v = user_vm(vm);
    ASSERT_NE(v, nullptr);
    ASSERT_EQ(panthor_vm_active(v), 0);
    const int as = panthor_vm_as(v);
    ASSERT_GT(as, 0) << "AS 0 belongs to the MCU";
    EXPECT_EQ(gpu_read32(as, kUserVa), 0x5a000000u);
    EXPECT_EQ(gpu_read32(as, kUserVa + kPage - 4), 0x5a000000u + kPage / 4 - 1);
    panthor_vm_idle(v);
    panthor_vm_put(v);
    kshim::pm_runtime_put_autosuspend(dev());
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanthorPm, VmBindOnAnActiveVmUpdatesWhatTheGpuSees) {
    const u32 vm = vm_create();
    const u32 bo_a = bo_with_pattern(0xa0000000);
    const u32 bo_b = bo_with_pattern(0xb0000000);
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    panthor_vm* v = user_vm(vm);
    ASSERT_NE(v, nullptr);
    ASSERT_EQ(panthor_vm_active(v), 0);
    const int as = panthor_vm_as(v);
    ASSERT_GT(as, 0);

    ASSERT_EQ(vm_map(vm, bo_a, kUserVa, kPage), 0);
    EXPECT_EQ(gpu_read32(as, kUserVa + 8), 0xa0000002u);  // now in the GPU's TLB
    // A remap must lock/flush the region on the live AS, or the GPU keeps reading bo_a.
    ASSERT_EQ(vm_unmap(vm, kUserVa, kPage), 0);
    ASSERT_EQ(vm_map(vm, bo_b, kUserVa, kPage), 0);
    EXPECT_EQ(gpu_read32(as, kUserVa + 8), 0xb0000002u);
    EXPECT_TRUE(kshim::pm_runtime_active(dev()));

    panthor_vm_idle(v);
    panthor_vm_put(v);
    kshim::pm_runtime_put_autosuspend(dev());
    EXPECT_TRUE(wait_autosuspend());
}

// A clock that fails to enable makes the resume fail; each clock of the node in turn.
struct ClockCase {
    const char* name;
    kshim::Clk* (*get)(panthor_device*);
};
void PrintTo(const ClockCase& c, std::ostream* os) {
    *os << c.name;
}

class PanthorPmClockFail : public PanthorPm, public ::testing::WithParamInterface<ClockCase> {};

TEST_P(PanthorPmClockFail, FailedResumeReturnsTheErrnoAndTheNextIoctlWorks) {
    ASSERT_TRUE(wait_autosuspend());
    kshim::Clk* clk = GetParam().get(ptdev);
    ASSERT_NE(clk, nullptr);
    const u64 boots = gpu().mcu().boots();
    const kshim::MemCounters before = kshim::mem_counters();

    clk->fail_next_enable = -EIO;
    drm_panthor_timestamp_info ts{};
    EXPECT_EQ(query_timestamp(&ts), -EIO);

    // Nothing half-enabled, nothing leaked, the FW not touched.
    EXPECT_TRUE(suspended());
    EXPECT_EQ(ptdev->pm.state.load(), PANTHOR_DEVICE_PM_STATE_SUSPENDED);
    EXPECT_EQ(clocks_enabled(), 0);
    EXPECT_EQ(clocks_prepared(), 0);
    EXPECT_EQ(kshim::pm_runtime_usage_count(dev()), 0);
    EXPECT_EQ(kshim::pm_runtime_error(dev()), -EIO);
    EXPECT_EQ(gpu().mcu().boots(), boots);
    EXPECT_EQ(mcu_status(), MCU_STATUS_HALT);
    EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "");

    // The clock works again: so does the device.
    ASSERT_EQ(query_timestamp(&ts), 0);
    EXPECT_GT(ts.current_timestamp, 0u);
    EXPECT_EQ(kshim::pm_runtime_error(dev()), 0);
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);
    expect_powered_up();
    EXPECT_EQ(clk->enable_count, 1);
    ASSERT_TRUE(wait_autosuspend());
    expect_powered_down(/*fast=*/true);
}

INSTANTIATE_TEST_SUITE_P(Clocks, PanthorPmClockFail,
                         ::testing::Values(ClockCase{"core", [](panthor_device* p) { return p->clks.core; }},
                                           ClockCase{"stacks", [](panthor_device* p) { return p->clks.stacks; }},
                                           ClockCase{"coregroup", [](panthor_device* p) { return p->clks.coregroup; }}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(PanthorPm, FastRestartThatFailsToBootFallsBackToASlowOne) {
    ASSERT_TRUE(wait_autosuspend());
    ASSERT_TRUE(ptdev->reset.fast);
    const u64 boots = gpu().mcu().boots();
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::BootFail;
    f.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    const int id = gpu().faults().add(f);

    drm_panthor_timestamp_info ts{};
    ASSERT_EQ(query_timestamp(&ts), 0);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_TRUE(kshim::log_contains("Failed to boot MCU (status=fatal)"));
    EXPECT_TRUE(kshim::log_contains("fast reset failed, trying a slow reset"));
    EXPECT_EQ(gpu().mcu().boots(), boots + 2);
    expect_powered_up();

    ASSERT_TRUE(wait_autosuspend());
    expect_powered_down(/*fast=*/true);
}

TEST_F(PanthorPm, ResumeWhoseBootsAllFailFailsCleanlyAndRecoversLater) {
    ASSERT_TRUE(wait_autosuspend());
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::BootFail;
    f.trigger = mock_hw::FaultTrigger::always();
    f.max_fires = 0;
    gpu().faults().add(f);
    const kshim::MemCounters before = kshim::mem_counters();

    drm_panthor_timestamp_info ts{};
    EXPECT_EQ(query_timestamp(&ts), -ETIMEDOUT);
    EXPECT_TRUE(kshim::log_contains("FW slow reset failed"));
    EXPECT_TRUE(suspended());
    EXPECT_EQ(ptdev->pm.state.load(), PANTHOR_DEVICE_PM_STATE_SUSPENDED);
    EXPECT_EQ(clocks_enabled(), 0);
    EXPECT_EQ(clocks_prepared(), 0);
    EXPECT_EQ(l2_ready(), 0u);
    EXPECT_EQ(kshim::pm_runtime_usage_count(dev()), 0);
    EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "");
    // Nothing keeps waking a device whose FW does not boot.
    const u64 boots = gpu().mcu().boots();
    advance(ms_to_ktime(13'000));
    EXPECT_EQ(gpu().mcu().boots(), boots);
    EXPECT_TRUE(suspended());

    gpu().faults().clear();
    kshim::log_clear();
    ASSERT_EQ(query_timestamp(&ts), 0);
    expect_powered_up();
    EXPECT_FALSE(kshim::log_contains("Failed to boot MCU"));
    ASSERT_TRUE(wait_autosuspend());
    expect_powered_down(/*fast=*/true);
}

TEST_F(PanthorPm, SystemSleepWithAUserAndAVmBoundKeepsTheMappings) {
    const u32 vm = vm_create();
    const u32 bo = bo_with_pattern(0x77000000);
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    const u64 boots = gpu().mcu().boots();

    // Before any mapping.
    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    expect_powered_down(/*fast=*/true);
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    expect_powered_up();
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);

    ASSERT_EQ(vm_map(vm, bo, kUserVa, kPage), 0);
    panthor_vm* v = user_vm(vm);
    ASSERT_NE(v, nullptr);
    ASSERT_EQ(panthor_vm_active(v), 0);
    EXPECT_EQ(gpu_read32(panthor_vm_as(v), kUserVa + 4), 0x77000001u);
    panthor_vm_idle(v);

    // With the mapping in place.
    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    expect_powered_down(/*fast=*/true);
    EXPECT_EQ(panthor_vm_as(v), -1) << "suspend gives every AS back";
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    expect_powered_up();
    EXPECT_EQ(gpu().mcu().boots(), boots + 2);
    EXPECT_EQ(kshim::pm_runtime_usage_count(dev()), 1) << "only our reference is left";

    ASSERT_EQ(panthor_vm_active(v), 0);
    const int as = panthor_vm_as(v);
    ASSERT_GT(as, 0);
    EXPECT_EQ(gpu_read32(as, kUserVa + 4), 0x77000001u);
    EXPECT_EQ(gpu_read32(as, kUserVa + kPage - 4), 0x77000000u + kPage / 4 - 1);
    drm_panthor_timestamp_info ts{};
    EXPECT_EQ(query_timestamp(&ts), 0);
    // A second mapping after the sleep goes to the same tables.
    ASSERT_EQ(vm_map(vm, bo, kUserVa + 0x100000, kPage), 0);
    EXPECT_EQ(gpu_read32(as, kUserVa + 0x100000 + 4), 0x77000001u);
    panthor_vm_idle(v);
    panthor_vm_put(v);

    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
    expect_powered_down(/*fast=*/true);
}

TEST_F(PanthorPm, SystemSleepWhileRuntimeSuspendedStaysSuspended) {
    ASSERT_TRUE(wait_autosuspend());
    const u64 boots = gpu().mcu().boots();

    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    EXPECT_TRUE(suspended());
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    EXPECT_TRUE(suspended()) << "system resume must not power up a device nobody uses";
    EXPECT_EQ(gpu().mcu().boots(), boots);
    expect_powered_down(/*fast=*/true);
    EXPECT_EQ(kshim::pm_runtime_usage_count(dev()), 0);
    EXPECT_TRUE(kshim::pm_runtime_enabled(dev()));

    // Runtime PM works as before.
    drm_panthor_timestamp_info ts{};
    ASSERT_EQ(query_timestamp(&ts), 0);
    expect_powered_up();
    ASSERT_TRUE(wait_autosuspend());
}

TEST_F(PanthorPm, SystemSleepOfAnIdleActiveDeviceLeavesItSuspended) {
    // Inside the autosuspend window: powered, but nobody holds it.
    ASSERT_TRUE(kshim::pm_runtime_active(dev()));
    ASSERT_EQ(kshim::pm_runtime_usage_count(dev()), 0);

    ASSERT_EQ(kshim::device_pm_suspend(dev()), 0);
    expect_powered_down(/*fast=*/true);
    ASSERT_EQ(kshim::device_pm_resume(dev()), 0);
    expect_powered_down(/*fast=*/true);

    drm_panthor_timestamp_info ts{};
    ASSERT_EQ(query_timestamp(&ts), 0);
    expect_powered_up();
    ASSERT_TRUE(wait_autosuspend());
}

}  // namespace
}  // namespace panthor::testing
