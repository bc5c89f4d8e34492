// Probe and remove of the panfrost driver on the mock Mali-G52 (simulated runtime), through the
// host's Machine as every host boots it: what probe reads and writes, GET_PARAM against the
// mock's own registers, runtime suspend/resume, and the probes that must fail cleanly (an unknown
// GPU_ID, a reset that never completes).
#include <gtest/gtest.h>

#include <bit>
#include <memory>
#include <string>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/uaccess.h"
#include "host/machine.h"
#include "hw/jm/models.h"
#include "hw/jm/regs/gpu_regs.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/err.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "mock_hw/fault_plan.h"
#include "mock_jm/jm_platform.h"
#include "panfrost/panfrost_device.h"
#include "panfrost/panfrost_drv.h"
#include "tests/panfrost/panfrost_test.h"
#include "tests/support/kernel_test.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost::testing {
namespace {

using namespace drm::uapi;

// ---- probe ----

TEST_F(PanfrostTest, ProbeReadsTheG52sIdentityAndModel) {
    ASSERT_NE(pfdev, nullptr);
    const panfrost_features& f = pfdev->features;
    EXPECT_EQ(f.id, kG52R1.gpu_id >> 16);
    EXPECT_EQ(f.revision, kG52R1.gpu_id & 0xFFFF);
    EXPECT_TRUE(panfrost_model_eq(pfdev, 0x7002));
    EXPECT_TRUE(panfrost_model_is_bifrost(pfdev));
    EXPECT_EQ(f.hw_features.to_ullong(), 0xCF7u) << "the bitmap panfrost prints for a G52";
    EXPECT_EQ(f.hw_issues.to_ullong(), 0x400u);
    // Upstream's device object: the DRM driver's identity.
    EXPECT_STREQ(pfdev->base.driver().name, "panfrost");
    EXPECT_EQ(pfdev->base.driver().major, 1);
    EXPECT_EQ(pfdev->base.driver().minor, 6);
}

TEST_F(PanfrostTest, ProbeEnablesClocksSupplyAndPowersEveryDomain) {
    for (const char* id : {"gpu", "bus"})
        EXPECT_EQ(kshim::devm_clk_get(dev(), id)->enable_count, 1) << id;
    EXPECT_EQ(kshim::devm_regulator_get(dev(), "mali")->enable_count, 1);
    EXPECT_EQ(reg64(GPU_L2_PRESENT), reg64(L2_READY_LO));
    EXPECT_EQ(reg64(GPU_SHADER_PRESENT), reg64(SHADER_READY_LO));
    EXPECT_EQ(reg64(GPU_TILER_PRESENT), reg64(TILER_READY_LO));
    EXPECT_NE(reg(L2_READY_LO), 0u);
    // Only the interrupts panfrost handles are unmasked after the reset.
    EXPECT_EQ(reg(GPU_INT_MASK), 0x00030081u);
}

TEST_F(PanfrostTest, ProbeWritesTheG52Quirks) {
    EXPECT_EQ(reg(GPU_JM_CONFIG), 0x000F0000u) << "IDVS group size";
    EXPECT_EQ(reg(GPU_SHADER_CONFIG), 0u) << "no G52 issue sets a SHADER_CONFIG bit";
    EXPECT_EQ(reg(GPU_TILER_CONFIG), 0u);
}

TEST_F(PanfrostTest, RemoveReleasesEverything) {
    drm::drm_release(file);
    file = nullptr;
    machine_->remove();
    expect_platform_released("after remove");
    EXPECT_EQ(reg(L2_READY_LO), 0u) << "fini powers the GPU off";
    EXPECT_EQ(reg(SHADER_READY_LO), 0u);
}

// ---- GET_PARAM ----

struct ParamCase {
    u32 param;
    u32 reg;  // GPU_CONTROL register it reflects
    bool is64;
};

TEST_F(PanfrostTest, GetParamReturnsEveryRegisterTheMockHolds) {
    const ParamCase cases[] = {
        {DRM_PANFROST_PARAM_SHADER_PRESENT, GPU_SHADER_PRESENT, true},
        {DRM_PANFROST_PARAM_TILER_PRESENT, GPU_TILER_PRESENT, true},
        {DRM_PANFROST_PARAM_L2_PRESENT, GPU_L2_PRESENT, true},
        {DRM_PANFROST_PARAM_STACK_PRESENT, GPU_STACK_PRESENT_LO, true},
        {DRM_PANFROST_PARAM_AS_PRESENT, GPU_AS_PRESENT, false},
        {DRM_PANFROST_PARAM_JS_PRESENT, GPU_JS_PRESENT, false},
        {DRM_PANFROST_PARAM_L2_FEATURES, GPU_L2_FEATURES, false},
        {DRM_PANFROST_PARAM_CORE_FEATURES, GPU_CORE_FEATURES, false},
        {DRM_PANFROST_PARAM_TILER_FEATURES, GPU_TILER_FEATURES, false},
        {DRM_PANFROST_PARAM_MEM_FEATURES, GPU_MEM_FEATURES, false},
        {DRM_PANFROST_PARAM_MMU_FEATURES, GPU_MMU_FEATURES, false},
        {DRM_PANFROST_PARAM_THREAD_FEATURES, GPU_THREAD_FEATURES, false},
        {DRM_PANFROST_PARAM_MAX_THREADS, GPU_THREAD_MAX_THREADS, false},
        {DRM_PANFROST_PARAM_THREAD_MAX_WORKGROUP_SZ, GPU_THREAD_MAX_WORKGROUP_SIZE, false},
        {DRM_PANFROST_PARAM_THREAD_MAX_BARRIER_SZ, GPU_THREAD_MAX_BARRIER_SIZE, false},
        {DRM_PANFROST_PARAM_COHERENCY_FEATURES, GPU_COHERENCY_FEATURES, false},  // G52 has COHERENCY_REG
        {DRM_PANFROST_PARAM_THREAD_TLS_ALLOC, GPU_THREAD_TLS_ALLOC, false},
        {DRM_PANFROST_PARAM_AFBC_FEATURES, GPU_AFBC_FEATURES, false},
    };
    for (const ParamCase& c : cases) {
        u64 v = 0;
        ASSERT_EQ(get_param(c.param, &v), 0) << c.param;
        EXPECT_EQ(v, c.is64 ? reg64(c.reg) : reg(c.reg)) << "param " << c.param;
    }
    for (u32 i = 0; i < 4; i++) {
        u64 v = 0;
        ASSERT_EQ(get_param(DRM_PANFROST_PARAM_TEXTURE_FEATURES0 + i, &v), 0);
        EXPECT_EQ(v, reg(GPU_TEXTURE_FEATURES(i))) << "TEXTURE_FEATURES" << i;
    }
    for (u32 i = 0; i < 16; i++) {
        u64 v = 0;
        ASSERT_EQ(get_param(DRM_PANFROST_PARAM_JS_FEATURES0 + i, &v), 0);
        // Unprobed slots (beyond popcount(JS_PRESENT)) read 0.
        const u32 want = i < static_cast<u32>(std::popcount(reg(GPU_JS_PRESENT))) ? reg(GPU_JS_FEATURES(i)) : 0;
        EXPECT_EQ(v, want) << "JS_FEATURES" << i;
    }
    EXPECT_NE(reg(GPU_JS_FEATURES(0)), 0u) << "the mock's slot 0 has features: the loop above checks something";

    u64 v = 0;
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_GPU_PROD_ID, &v), 0);
    EXPECT_EQ(v, reg(GPU_ID) >> 16);
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_GPU_REVISION, &v), 0);
    EXPECT_EQ(v, reg(GPU_ID) & 0xFFFF);
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_NR_CORE_GROUPS, &v), 0);
    EXPECT_EQ(v, static_cast<u64>(std::popcount(reg64(GPU_L2_PRESENT))));
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_SELECTED_COHERENCY, &v), 0);
    EXPECT_EQ(v, DRM_PANFROST_GPU_COHERENCY_NONE) << "the RK3568 node is not dma-coherent";
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP_FREQUENCY, &v), 0);
    EXPECT_EQ(v, gpu().config().timestamp_hz);
}

TEST_F(PanfrostTest, GetParamRejectsUnknownParamsAndNonZeroPad) {
    u64 v = 0;
    EXPECT_EQ(get_param(DRM_PANFROST_PARAM_SELECTED_COHERENCY + 1, &v), -EINVAL);
    EXPECT_EQ(get_param(0xFFFFFFFFu, &v), -EINVAL);
    EXPECT_EQ(get_param(DRM_PANFROST_PARAM_GPU_PROD_ID, &v, 1), -EINVAL) << "pad must be 0";
    EXPECT_EQ(get_param(DRM_PANFROST_PARAM_GPU_PROD_ID, &v, 0), 0);
}

TEST_F(PanfrostTest, OtherIoctlsAreUnknown) {
    // SUBMIT with a zeroed argument (jc 0) and nr 0x0E, past the end of driver 1.6's table.
    kshim::u8 arg[48] = {};
    drm::UserRange r(arg, sizeof(arg));
    EXPECT_EQ(drm::ioctl(file, DRM_IOW<kshim::u8[48]>(DRM_COMMAND_BASE + 0x00), arg), -EINVAL);
    EXPECT_EQ(drm::ioctl(file, DRM_IOWR<kshim::u8[16]>(DRM_COMMAND_BASE + 0x0E), arg), -EINVAL);
}

TEST_F(PanfrostTest, SystemTimestampResumesTheGpuAndAdvances) {
    ASSERT_TRUE(wait_autosuspend());
    u64 t0 = 0, t1 = 0;
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP, &t0), 0);
    advance(kshim::NSEC_PER_MSEC);
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP, &t1), 0);
    EXPECT_NE(t0, 0u);
    EXPECT_GT(t1, t0);
    // 1 ms at the timestamp rate, give or take the resume in between.
    EXPECT_GE(t1 - t0, gpu().config().timestamp_hz / 1000);
    EXPECT_EQ(pfdev->cycle_counter.use_count.load(), 0) << "the counter is released after the read";
}

TEST_F(PanfrostTest, AllowedJmCtxPrioritiesFollowCapSysNice) {
    u64 v = 0;
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES, &v), 0);
    EXPECT_EQ(v, 0x3u) << "LOW and MEDIUM for an ordinary user";
    client_cred.cap_effective = kshim::cap_raise(kshim::CAP_EMPTY_SET, kshim::CAP_SYS_NICE);
    ASSERT_EQ(get_param(DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES, &v), 0);
    EXPECT_EQ(v, 0x7u) << "HIGH too with CAP_SYS_NICE";
}

// ---- runtime PM ----

TEST_F(PanfrostTest, RuntimeSuspendPowersOffAndResumeReappliesQuirks) {
    ASSERT_TRUE(wait_autosuspend()) << "autosuspend after 50 ms without users";
    EXPECT_EQ(reg(L2_READY_LO), 0u);
    EXPECT_EQ(reg(SHADER_READY_LO), 0u);
    EXPECT_EQ(reg(TILER_READY_LO), 0u);
    EXPECT_EQ(reg(GPU_INT_MASK), 0u) << "GPU IRQs masked while suspended";

    // Clobber a quirk register while off: resume must write it again.
    ASSERT_TRUE(gpu().poke32(GPU_JM_CONFIG, 0));
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(reg64(L2_READY_LO), reg64(GPU_L2_PRESENT));
    EXPECT_EQ(reg64(SHADER_READY_LO), reg64(GPU_SHADER_PRESENT));
    EXPECT_EQ(reg64(TILER_READY_LO), reg64(GPU_TILER_PRESENT));
    EXPECT_EQ(reg(GPU_JM_CONFIG), 0x000F0000u);
    EXPECT_EQ(reg(GPU_INT_MASK), 0x00030081u);
    kshim::pm_runtime_put_autosuspend(dev());
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanfrostTest, GpuFaultIsLoggedAndMasksGpuInterrupts) {
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::GpuFault;
    spec.trigger = mock_hw::FaultTrigger::at_time(kshim::ktime_get() + 1000);
    spec.fault_status = DRM_PANFROST_EXCEPTION_DELAYED_BUS_FAULT;
    spec.fault_addr = 0x1234000;
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    gpu().faults().add(spec);
    ASSERT_TRUE(run_until([&] { return reg(GPU_INT_MASK) == 0; }, kshim::NSEC_PER_MSEC));
    EXPECT_EQ(reg(GPU_INT_STAT), 0u) << "the handler cleared what it handled";
    kshim::pm_runtime_put_autosuspend(dev());
}

// ---- probe failures ----

class PanfrostProbeFailTest : public PanfrostTest {
protected:
    bool probe_in_setup() const override { return false; }
};

class PanfrostUnknownGpuTest : public PanfrostProbeFailTest {
protected:
    mock_jm::JmConfig jm_config() const override {
        mock_jm::JmConfig c;
        c.gpu.id.gpu_id = 0x12340000;  // no model has product id 0x1234 (masked: 0x1004)
        return c;
    }
};

TEST_F(PanfrostUnknownGpuTest, ProbeFailsWithEnodevAndReleasesEverything) {
    EXPECT_EQ(probe(), -ENODEV);
    expect_platform_released("after the failed probe");
}

class PanfrostResetStuckTest : public PanfrostProbeFailTest {};

TEST_F(PanfrostResetStuckTest, ProbeFailsCleanlyWhenNoResetCompletes) {
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::ResetNeverCompletes;
    spec.trigger = mock_hw::FaultTrigger::always();
    spec.max_fires = 0;  // the hard reset too
    const int id = gpu().faults().add(spec);
    EXPECT_EQ(probe(), -ETIMEDOUT);
    EXPECT_EQ(gpu().faults().fired(id), 2u) << "a soft reset, then a hard one";
    expect_platform_released("after the failed probe");
}

TEST_F(PanfrostResetStuckTest, HardResetRecoversAStuckSoftReset) {
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::ResetNeverCompletes;
    spec.trigger = mock_hw::FaultTrigger::always();
    spec.max_fires = 1;  // the soft reset only
    const int id = gpu().faults().add(spec);
    ASSERT_EQ(probe(), 0);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(reg(GPU_JM_CONFIG), 0x000F0000u);
    EXPECT_EQ(reg64(L2_READY_LO), reg64(GPU_L2_PRESENT));
}

}  // namespace
}  // namespace panfrost::testing
