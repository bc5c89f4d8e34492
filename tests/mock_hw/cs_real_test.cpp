// Real mode (threads, monotonic clock; run under TSan): boot the MCU and run a small command
// stream to completion.
#include "testkit/csf_rig.h"
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {
namespace {

class CsReal : public MockHwTest {
protected:
    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o = kshim::options_from_env({});
        o.mode = kshim::Mode::Real;
        return o;
    }
};

TEST_F(CsReal, BootAndRunAStreamToCompletion) {
    GpuConfig cfg;
    cfg.lat = GpuLatencies::zero();
    CsfRig r(rt(), cfg);
    ASSERT_TRUE(r.boot());
    u8* m;
    const u64 obj = r.gpu_alloc(64, &m);
    CsfRig::Queue q = r.make_queue();
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }, 5 * kshim::NSEC_PER_SEC));
    r.push(q, {cs::move48(16, r.shader(MockShader::Write, 1000, obj + 16, 42)), cs::run_compute(), cs::wait(1),
               cs::move48(0, obj), cs::move48(2, 1), cs::sync_add64(0, 2)});
    r.d.w(CSF_DOORBELL(1), 1);
    (void)m;
    ASSERT_TRUE(wait([&] { return r.read64(obj) == 1; }, 5 * kshim::NSEC_PER_SEC));
    EXPECT_EQ(r.read64(obj + 16), 42u);
    ASSERT_TRUE(wait([&] { return r.d.r(JOB_INT_RAWSTAT) & JOB_INT_CSG_IF(0); }, 5 * kshim::NSEC_PER_SEC));
    r.set_state(0, CSG_STATE_TERMINATE);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }, 5 * kshim::NSEC_PER_SEC));
}

}  // namespace
}  // namespace mock_hw::testing
