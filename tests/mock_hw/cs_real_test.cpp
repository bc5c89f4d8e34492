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

namespace mock_hw::testing {
namespace {

// A loaded host starves the timer thread that runs the mock's effects, but a register reads as
// a function of the time since the command that changed it: a poll sees the L2 powered once its
// transition time has passed, even while the timer thread is held for 100 ms.
void hold_timer_thread(kshim::TimerEvent*, u64) {
    const kshim::ktime_t until = kshim::ktime_get() + 100 * kshim::NSEC_PER_MSEC;
    while (kshim::ktime_get() < until) {
    }
}

TEST_F(CsReal, RegistersCatchUpWhileTheTimerThreadIsStarved) {
    GpuConfig cfg;
    cfg.lat.power_transition = 50 * kshim::NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    kshim::TimerEvent starve(&hold_timer_thread, nullptr, kshim::kBandTimer, "starve");
    kshim::backend().timer_arm(&starve, kshim::ktime_get());
    d.w(L2_PWRON, 1);
    const kshim::ktime_t deadline = kshim::ktime_get() + 5 * kshim::NSEC_PER_MSEC;
    bool ready = false;
    while (!ready && kshim::ktime_get() < deadline)
        ready = d.r(L2_READY) & 1;
    EXPECT_TRUE(ready) << "L2 not ready 5 ms after PWRON (the transition takes 50 us)";
    kshim::backend().timer_cancel(&starve);
    kshim::backend().timer_wait_idle(&starve);
}

}  // namespace
}  // namespace mock_hw::testing
