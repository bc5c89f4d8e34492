// The mock's work is charged to the Hardware CPU account (kernel_shim/cputime.h): its effects
// (HwEvents, so the command-stream interpreter too) and the MMIO handlers it runs inline in the
// caller's task. Without that a benchmark could not tell the driver's CPU from the model's.
#include "testkit/csf_rig.h"
#include "tests/mock_hw/mock_test.h"

#include "kernel_shim/cputime.h"

namespace mock_hw::testing {
namespace {

// The split is opt-in (RuntimeOptions::cputime_split).
class HwCputime : public MockHwTest {
protected:
    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o = MockHwTest::runtime_options();
        o.cputime_split = true;
        return o;
    }
};

kshim::CpuTimes delta(const kshim::CpuTimes& a, const kshim::CpuTimes& b) {
    kshim::CpuTimes d;
    for (int i = 0; i < kshim::kCpuAccounts; i++)
        d.ns[i] = b.ns[i] - a.ns[i];
    return d;
}

TEST_F(HwCputime, CommandStreamExecutionIsHardware) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    auto q = r.make_queue(4096);
    r.program_cs(0, 0, q);
    r.start_group(0);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    // ~200,000 instructions, all run by the engine's events.
    r.push(q, {cs::move32(2, 100'000), cs::move32(3, 1), cs::add_imm32(2, 2, -1), cs::branch(cs::NEQUAL, 2, -2)});
    const u64 instrs0 = r.gpu.engine().instructions_executed();
    const kshim::CpuTimes before = kshim::cputime_all();
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return q.out->extract == q.in->insert; }); }, kshim::NSEC_PER_SEC));
    const kshim::CpuTimes d = delta(before, kshim::cputime_all());
    EXPECT_EQ(r.gpu.engine().instructions_executed() - instrs0, 200'002u);
    // The interpreter's time dwarfs the body's waiting (its predicate runs between the slices).
    EXPECT_GT(d[kshim::CpuAccount::Hardware], 4 * d[kshim::CpuAccount::Body]);
    EXPECT_GT(d[kshim::CpuAccount::Hardware], d.total() / 2);
    EXPECT_LT(d[kshim::CpuAccount::Kernel], d[kshim::CpuAccount::Hardware] / 20);  // no kernel work here
}

TEST_F(HwCputime, MmioHandlersRunInTheCallerButAreHardware) {
    Gpu gpu;
    Drv d{gpu};
    const kshim::CpuTimes before = kshim::cputime_all();
    u64 sum = 0;
    for (int i = 0; i < 20000; i++)
        sum += d.r(GPU_ID) + d.r(GPU_INT_RAWSTAT);
    const kshim::CpuTimes dt = delta(before, kshim::cputime_all());
    EXPECT_NE(sum, 0u);
    // The register reads (lock, decode, handler) are the mock's; the loop around them the body's.
    EXPECT_GT(dt[kshim::CpuAccount::Hardware], dt.total() / 4);
    EXPECT_GT(dt[kshim::CpuAccount::Body], 0u);
    EXPECT_EQ(kshim::task_cpu_account(kshim::current()), kshim::CpuAccount::Body);
}

}  // namespace
}  // namespace mock_hw::testing
