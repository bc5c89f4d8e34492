// A user command stream that never yields (the campaign's SpinLoop fault class): a BRANCH-to-self
// or MOVE+BRANCH loop holds no shader core, yet the mock's progress timer fires for its group after
// PROGRESS_TIMEOUT_CYCLES and panthor's progress-timeout path terminates it, as for a hung shader:
// its fences fail with -ETIMEDOUT, GROUP_GET_STATE says TIMEDOUT, further submits are refused,
// another group on the device completes meanwhile and the device runs a fresh job afterwards.
#include <string>
#include <vector>

#include "kernel_shim/devcoredump.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/log.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_fw.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;
using mock_hw::MockShader;

constexpr u32 kJobTimeoutMs = 5000;
// PROGRESS_TIMEOUT_CYCLES at the mock's 1 GHz GPU clock: ~2.62 s without forward progress.
constexpr ktime_t kProgressTimeout = static_cast<ktime_t>((PROGRESS_TIMEOUT_CYCLES >> 10) << 10);

class SpinTimeoutTest : public SchedTest, public ::testing::WithParamInterface<const char*> {
protected:
    void SetUp() override {
        SchedTest::SetUp();
        kshim::log_clear();
    }
    static u32 size_of(size_t instrs) { return static_cast<u32>(instrs * 8); }

    // The spinning user stream of the parameter.
    std::vector<u64> spin_instrs() const {
        if (std::string(GetParam()) == "branch_to_self")
            return {cs::branch(cs::ALWAYS, 0, -1)};
        return {cs::move48(2, 0x1234), cs::move32(4, 7), cs::branch(cs::ALWAYS, 0, -3)};
    }
    // A compute job holding a core for `duration`, then writing `value` at data offset `off`.
    u64 compute_stream(u64 off, u64 value, ktime_t duration) {
        return put_stream(
            {cs::move48(16, put_shader(shader(MockShader::Write, duration, data_va(off), value))), cs::run_compute(1)});
    }
    u64 instructions() {
        kshim::SpinGuard g(gpu().lock());
        return gpu().engine().instructions_executed();
    }
};

TEST_P(SpinTimeoutTest, SpinningStreamTimesOutThroughTheProgressTimer) {
    const u32 g = group_create(2);
    const u32 other = group_create();
    const ktime_t t0 = kshim::ktime_get();
    const std::vector<u64> spin = spin_instrs();
    const u64 spin_va = put_stream(spin);
    const u32 spinning = submit_stream(g, 0, spin_va, size_of(spin.size()));
    const u32 behind = submit_stream(g, 0, store_stream(0, 1), size_of(4));
    const u32 sibling = submit_stream(g, 1, compute_stream(8, 2, 10 * kMs), size_of(2));
    // The other group works all along, job after job.
    std::vector<u32> others;
    for (u32 i = 0; i < 4; i++)
        others.push_back(submit_stream(other, 0, compute_stream(32 + 8 * i, 10 + i, 800 * kMs), size_of(2)));

    const Done d = wait_done(spinning, 20000 * kMs);
    ASSERT_TRUE(d.signalled);
    EXPECT_EQ(d.status, -ETIMEDOUT);
    EXPECT_GE(d.at - t0, kProgressTimeout);
    EXPECT_LT(d.at - t0, static_cast<ktime_t>(kJobTimeoutMs) * kMs) << "the queue timer fired first";
    EXPECT_TRUE(kshim::log_contains("CSG_PROGRESS_TIMER_EVENT"));
    EXPECT_FALSE(kshim::log_contains("job timeout"));
    // The host executed a bounded number of instructions (the spin is throttled after 1 ms), not
    // 4096 per virtual microsecond for 2.6 s (~10^10).
    EXPECT_LT(instructions(), 50'000'000u);
    // The progress-timeout dump shows the spinning queue at its loop: CS_STATUS_CMD_PTR, marked
    // "=>", is an instruction of the user stream.
    const std::string dump = read_devcoredump();
    EXPECT_EQ(dump.rfind("# panthor devcoredump\nreason: PROGRESS_TIMEOUT\n", 0), 0u) << dump;
    const size_t mark = dump.find("  => ");
    ASSERT_NE(mark, std::string::npos) << dump;
    const u64 marked = std::stoull(dump.substr(mark + 5, 16), nullptr, 16);
    EXPECT_GE(marked, spin_va) << dump;
    EXPECT_LT(marked, spin_va + size_of(spin.size())) << dump;
    if (spin.size() == 1) {
        EXPECT_NE(dump.substr(mark, dump.find('\n', mark) - mark).find("BRANCH"), std::string::npos) << dump;
    }

    EXPECT_EQ(wait_done(behind, 100 * kMs).status, -ETIMEDOUT);
    EXPECT_EQ(wait_done(sibling, 100 * kMs).status, 1) << "a job done before the timeout stays done";
    EXPECT_EQ(read_data(0), 0u);
    EXPECT_EQ(read_data(8), 2u);

    const drm_panthor_group_get_state st = group_state(g);
    EXPECT_EQ(st.state, static_cast<u32>(DRM_PANTHOR_GROUP_STATE_TIMEDOUT));
    EXPECT_EQ(st.fatal_queues, 0u);
    EXPECT_EQ(submit(g, {{.queue = 1, .stream = store_stream(24, 4), .size = size_of(4)}}), -EINVAL);

    // The other group was never affected: its jobs all completed, and it runs a fresh one.
    for (u32 i = 0; i < others.size(); i++) {
        EXPECT_EQ(wait_done(others[i], 5000 * kMs).status, 1) << i;
        EXPECT_EQ(read_data(32 + 8 * i), 10u + i);
    }
    EXPECT_EQ(group_state(other).state, 0u);
    EXPECT_EQ(wait_done(submit_stream(other, 0, store_stream(80, 9), size_of(4)), 1000 * kMs).status, 1);
    EXPECT_EQ(read_data(80), 9u);
    // And so does a new group.
    const u32 fresh = group_create();
    EXPECT_EQ(wait_done(submit_stream(fresh, 0, store_stream(88, 5), size_of(4)), 1000 * kMs).status, 1);
    EXPECT_EQ(read_data(88), 5u);
    EXPECT_EQ(group_destroy(g), 0);
}

INSTANTIATE_TEST_SUITE_P(Loops, SpinTimeoutTest, ::testing::Values("branch_to_self", "move_branch"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace panthor::testing
