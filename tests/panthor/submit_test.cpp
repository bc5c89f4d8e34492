// GROUP_SUBMIT end to end on the mock GPU: a job's stream runs, its syncobj signals, what it
// wrote is visible through the CPU mapping; empty streams as sync points; timelines.
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

class SubmitTest : public SchedTest {};

TEST_F(SubmitTest, OneJobRunsAndSignals) {
    const u32 g = group_create();
    const u64 stream = store_stream(0, 0x1122334455667788ull);
    const u32 s = submit_stream(g, 0, stream, 4 * 8);
    ASSERT_EQ(syncobj_wait({s}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(s), 1);
    EXPECT_EQ(read_data(0), 0x1122334455667788ull);
    EXPECT_EQ(group_destroy(g), 0);
}

}  // namespace
}  // namespace panthor::testing

namespace panthor::testing {
namespace {

class SubmitFlowTest : public SchedTest {
protected:
    // A compute job running `duration` on a core, then writing `value` at data offset `off`; the
    // stream waits for it (as panvk's do), so the job's profiling brackets the GPU work.
    u64 compute_stream(u64 off, u64 value, kshim::ktime_t duration) {
        mock_hw::MockShader sh;
        sh.kind = mock_hw::MockShader::Write;
        sh.duration_ns = static_cast<u64>(duration);
        sh.addr = data_va(off);
        sh.value = value;
        const u64 spd = put_shader(sh);
        return put_stream({cs::move48(16, spd), cs::run_compute(1), cs::wait(0xFF)});
    }
};

TEST_F(SubmitFlowTest, ManyJobsWrapTheRing) {
    const u32 g = group_create();
    u32 last = 0;
    for (u32 i = 0; i < 100; i++) {
        const u64 stream = store_stream(8 * (i % 8), i);
        last = submit_stream(g, 0, stream, 4 * 8);
    }
    ASSERT_EQ(syncobj_wait({last}, 2000 * kMs), 0);
    for (u32 i = 92; i < 100; i++)
        EXPECT_EQ(read_data(8 * (i % 8)), i);
}

TEST_F(SubmitFlowTest, EmptyStreamIsASyncPoint) {
    const u32 g = group_create();
    const u64 stream = compute_stream(0, 7, 5 * kMs);
    const u32 job = submit_stream(g, 0, stream, 3 * 8);
    const u32 point = syncobj_create();
    ASSERT_EQ(submit(g, {{.queue = 0, .syncs = {signal_op(point)}}}), 0);
    advance(1 * kMs);
    EXPECT_EQ(fence_status(point), 0);
    ASSERT_EQ(syncobj_wait({point}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(job), 1);
    EXPECT_EQ(read_data(0), 7u);
}

TEST_F(SubmitFlowTest, MoreGroupsThanSlotsAllComplete) {
    std::vector<u32> syncs;
    std::vector<u32> groups;
    for (u32 i = 0; i < 24; i++) {
        const u32 g = group_create();
        groups.push_back(g);
        syncs.push_back(submit_stream(g, 0, compute_stream(8 * i, 100 + i, 20 * kMs), 3 * 8));
    }
    ASSERT_EQ(syncobj_wait(syncs, 5000 * kMs), 0);
    for (u32 i = 0; i < 24; i++)
        EXPECT_EQ(read_data(8 * i), 100u + i);
    for (u32 g : groups)
        EXPECT_EQ(group_destroy(g), 0);
}

TEST_F(SubmitFlowTest, HungJobTimesOutAndTheGroupIsDead) {
    const u32 g = group_create();
    mock_hw::MockShader sh;
    sh.kind = mock_hw::MockShader::Hang;
    const u64 stream = put_stream({cs::move48(16, put_shader(sh)), cs::run_compute(1)});
    const u32 s = submit_stream(g, 0, stream, 2 * 8);
    ASSERT_EQ(syncobj_wait({s}, 20000 * kMs), 0);
    EXPECT_EQ(fence_status(s), -ETIMEDOUT);
    EXPECT_TRUE(group_state(g).state & DRM_PANTHOR_GROUP_STATE_TIMEDOUT);
    EXPECT_EQ(submit(g, {{.queue = 0, .stream = stream, .size = 16}}), -EINVAL);
    EXPECT_EQ(group_destroy(g), 0);
}

TEST_F(SubmitFlowTest, DestroyWithJobsInFlight) {
    const u32 g = group_create(2);
    const u32 s0 = submit_stream(g, 0, compute_stream(0, 1, 50 * kMs), 24);
    const u32 s1 = submit_stream(g, 1, compute_stream(8, 2, 50 * kMs), 24);
    advance(1 * kMs);
    EXPECT_EQ(group_destroy(g), 0);
    ASSERT_EQ(syncobj_wait({s0, s1}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(s0), -ECANCELED);
    EXPECT_EQ(fence_status(s1), -ECANCELED);
}

}  // namespace
}  // namespace panthor::testing

#include "drm/drm_fdinfo.h"

namespace panthor::testing {
namespace {

// "key:\tvalue..." -> the value's leading number (-1 when the key is absent).
long long fdinfo_value(const std::string& text, const std::string& key) {
    const size_t at = text.find(key + ":\t");
    if (at == std::string::npos)
        return -1;
    return std::stoll(text.substr(at + key.size() + 2));
}

class ProfilingTest : public SubmitFlowTest {};

TEST_F(ProfilingTest, FdinfoReportsTimeAndCyclesOfProfiledJobs) {
    ptdev->profile_mask = PANTHOR_DEVICE_PROFILING_ALL;
    const u32 g = group_create();
    const u32 s = submit_stream(g, 0, compute_stream(0, 1, 5 * kMs), 24);
    ASSERT_EQ(syncobj_wait({s}, 1000 * kMs), 0);

    const std::string text = drm::drm_show_fdinfo(file);
    EXPECT_NE(text.find("drm-driver:\tpanthor\n"), std::string::npos) << text;
    EXPECT_GE(fdinfo_value(text, "drm-client-id"), 1);
    // The job held a core for 5 ms of GPU time; the STORE_STATEs around the CALL bracket it.
    const long long ns = fdinfo_value(text, "drm-engine-panthor");
    EXPECT_GE(ns, 5'000'000) << text;
    EXPECT_LT(ns, 6'000'000) << text;
    // ... at the mock's 1 GHz GPU clock.
    const long long cycles = fdinfo_value(text, "drm-cycles-panthor");
    EXPECT_GE(cycles, 5'000'000) << text;
    EXPECT_LT(cycles, 6'000'000) << text;
    EXPECT_GE(fdinfo_value(text, "drm-maxfreq-panthor"), 0) << text;
    EXPECT_GE(fdinfo_value(text, "drm-curfreq-panthor"), 0) << text;
    // The group's ring, sync objects, suspend buffers... and the user BO.
    EXPECT_GT(fdinfo_value(text, "panthor-resident-memory"), 0) << text;
    EXPECT_EQ(fdinfo_value(text, "drm-total-memory"), static_cast<long long>(kBoSize >> 20)) << text;

    // Samples are folded into the file once: a second read reports the same totals.
    const std::string again = drm::drm_show_fdinfo(file);
    EXPECT_EQ(fdinfo_value(again, "drm-engine-panthor"), ns);
    EXPECT_EQ(fdinfo_value(again, "drm-cycles-panthor"), cycles);
}

TEST_F(ProfilingTest, UnprofiledJobsReportNoEngineTime) {
    const u32 g = group_create();
    const u32 s = submit_stream(g, 0, compute_stream(0, 1, 5 * kMs), 24);
    ASSERT_EQ(syncobj_wait({s}, 1000 * kMs), 0);
    const std::string text = drm::drm_show_fdinfo(file);
    EXPECT_EQ(fdinfo_value(text, "drm-engine-panthor"), -1) << text;
    EXPECT_EQ(fdinfo_value(text, "drm-cycles-panthor"), -1) << text;
    EXPECT_GE(fdinfo_value(text, "drm-curfreq-panthor"), 0) << text;
}

}  // namespace
}  // namespace panthor::testing

namespace panthor::testing {
namespace {

class RotationSmokeTest : public SubmitFlowTest {};

TEST_F(RotationSmokeTest, SixteenLongJobsRotateOneGroupPerTick) {
    mock_hw::MockShader sh;
    sh.kind = mock_hw::MockShader::Run;
    sh.duration_ns = 3600ull * kshim::NSEC_PER_SEC;
    const u64 stream = put_stream({cs::move48(16, put_shader(sh)), cs::run_compute(1)});
    for (u32 i = 0; i < 16; i++)
        ASSERT_EQ(submit(group_create(), {{.queue = 0, .stream = stream, .size = 16}}), 0);
    advance(30 * kMs);
    const panthor_sched_stats s0 = panthor_sched_get_stats(ptdev);
    advance(100 * kMs);
    const panthor_sched_stats s1 = panthor_sched_get_stats(ptdev);
    EXPECT_TRUE(s1.ticking);
    EXPECT_LE(s1.ticks - s0.ticks, 11u) << "full " << s1.full_ticks - s0.full_ticks;
    // Upstream rotates one group per full tick: the resident group with the highest CSG
    // priority is moved behind the runnable ones, and only one slot frees up for them.
    EXPECT_EQ(s1.csg_suspends - s0.csg_suspends, s1.full_ticks - s0.full_ticks);
}

}  // namespace
}  // namespace panthor::testing
