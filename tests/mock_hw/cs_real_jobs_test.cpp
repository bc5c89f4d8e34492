// RUN_* on real Valhall descriptors (what Mesa's panvk submits; docs/mock_hw.md "Real
// descriptors"): what the hardware reads before shading is read and checked, a wrong descriptor or
// an unreadable address faults as on hardware, and the job takes the time its size gives and
// writes nothing.
#include <cstring>

#include "hw/csf/valhall_desc.h"
#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

namespace v = panthor::valhall;

class CsRealJobsTest : public CsTest {
protected:
    // Memory filled with a pattern, so a test can tell nothing was written.
    u64 patterned(CsfRig& r, size_t bytes, u8** host, u64 attrs = kPteRw) {
        const u64 va = r.gpu_alloc(bytes, host, attrs);
        r.locked([&] { std::memset(*host, 0xA5, bytes); });
        return va;
    }
    bool untouched(CsfRig& r, const u8* host, size_t bytes) {
        return r.locked([&] {
            for (size_t i = 0; i < bytes; i++)
                if (host[i] != 0xA5)
                    return false;
            return true;
        });
    }
    // A compute shader program descriptor whose binary is at `binary`.
    u64 spd(CsfRig& r, u64 binary, u32 type = v::kDescShader, u32 stage = v::kStageCompute) {
        v::ShaderProgram* p;
        const u64 va = r.gpu_alloc(sizeof(*p), reinterpret_cast<u8**>(&p));
        r.locked([&] {
            *p = {};
            p->word0 = type | (stage << 4);
            p->binary = binary;
        });
        return va;
    }
    // Starts group 0 with `q` and returns once its empty queue's IDLE is acknowledged.
    void start_idle(CsfRig& r, CsfRig::Queue& q) {
        ASSERT_TRUE(r.boot());
        start(r, 0, {&q});
        wait([&] { return r.csg_events(0) & CSG_IDLE; });
        r.ack_csg(0, CSG_EVT_MASK);
    }
    u64 real_jobs(CsfRig& r) { return r.gpu.engine().real_jobs_completed(); }
};

// 256000 workgroups of 8x8 = 16.384M invocations at 16384 per us: 1 ms, plus the 2 us base.
TEST_F(CsRealJobsTest, ComputeJobTakesTheTimeItsSizeGivesAndWritesNothing) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    start_idle(r, q);
    u8 *bin_h, *srt_h, *fau_h, *tsd_h, *sync_h;
    const u64 bin = patterned(r, 256, &bin_h);
    const u64 srt = patterned(r, 2 * sizeof(v::Resource), &srt_h);
    const u64 fau = patterned(r, 4 * 8, &fau_h);
    const u64 tsd = patterned(r, sizeof(v::LocalStorage), &tsd_h);
    const u64 sync = r.gpu_alloc(16, &sync_h);
    const u64 shader = spd(r, bin);
    r.push(q, {cs::move48(0, srt | 2), cs::move48(8, fau | (u64{4} << 56)), cs::move48(16, shader), cs::move48(24, tsd),
               cs::move32(33, 7 | (7 << 10)), cs::move32(37, 256000), cs::move32(38, 1), cs::move32(39, 1),
               cs::run_compute(), cs::wait(1), cs::move48(A, sync), cs::move48(V, 1), cs::sync_add64(A, V)});
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.d.w(CSF_DOORBELL(1), 1);
    const kshim::ktime_t done = time_when([&] { return r.locked([&] { return sync_h[0] == 1; }); });
    ASSERT_GE(done, 0);
    EXPECT_GE(done - t0, NSEC_PER_MSEC + 2 * NSEC_PER_USEC);
    EXPECT_LT(done - t0, NSEC_PER_MSEC + 50 * NSEC_PER_USEC);
    EXPECT_EQ(real_jobs(r), 1u);
    EXPECT_EQ(r.gpu.engine().jobs_completed(), 1u);
    EXPECT_EQ(r.cs_events(0, 0) & (CS_FAULT | CS_FATAL), 0u);
    EXPECT_TRUE(untouched(r, bin_h, 256));
    EXPECT_TRUE(untouched(r, srt_h, 2 * sizeof(v::Resource)));
    EXPECT_TRUE(untouched(r, fau_h, 32));
    EXPECT_TRUE(untouched(r, tsd_h, sizeof(v::LocalStorage)));
}

TEST_F(CsRealJobsTest, MockShaderRecordsAreNotCountedAsRealJobs) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    start_idle(r, q);
    r.push(q, {cs::move48(16, r.shader(MockShader::Run, 1000)), cs::run_compute(), cs::wait(1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.gpu.engine().jobs_completed() == 1; }));
    EXPECT_EQ(real_jobs(r), 0u);
}

TEST_F(CsRealJobsTest, ADescriptorOfTheWrongTypeOrStageIsDataInvalidFaultNamingIt) {
    for (const auto& [type, stage] : {std::pair{u32{v::kDescTexture}, u32{v::kStageCompute}},
                                      std::pair{u32{v::kDescShader}, u32{v::kStageFragment}}}) {
        SCOPED_TRACE(::testing::Message() << "type " << type << " stage " << stage);
        CsfRig r(rt());
        CsfRig::Queue q = r.make_queue();
        start_idle(r, q);
        u8* bin_h;
        const u64 shader = spd(r, patterned(r, 64, &bin_h), type, stage);
        r.push(q, {cs::move48(16, shader), cs::run_compute()});
        r.d.w(CSF_DOORBELL(1), 1);
        ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FAULT; }));
        EXPECT_EQ(CS_EXCEPTION_TYPE(r.cs_out(0, 0)->fault), u32{DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT});
        EXPECT_EQ(r.cs_out(0, 0)->fault_info, shader);
        EXPECT_EQ(real_jobs(r), 0u);
    }
}

// The first instruction fetch is an execute access: a binary in a no-execute mapping faults at
// its address, and the stream stalls there as for any MMU fault.
TEST_F(CsRealJobsTest, AShaderBinaryInANoExecuteMappingFaultsAtItsAddress) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    start_idle(r, q);
    u8* bin_h;
    const u64 bin = patterned(r, 64, &bin_h, kPteRw | kPteXn);
    r.push(q, {cs::move48(16, spd(r, bin)), cs::run_compute(), cs::wait(1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.d.r(MMU_INT_RAWSTAT) & 2; }));
    EXPECT_EQ(r.d.r64(AS_FAULTADDRESS(1)), bin);
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(r.gpu.engine().jobs_completed(), 0u);
    EXPECT_EQ(r.cs_events(0, 0) & (CS_FAULT | CS_FATAL), 0u) << "stalled on the fault, not failed";
}

TEST_F(CsRealJobsTest, AnUnmappedResourceTableFaultsAtItsAddress) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    start_idle(r, q);
    u8* bin_h;
    const u64 bad_srt = 0x7000000000ull;
    r.push(q, {cs::move48(0, bad_srt | 3), cs::move48(16, spd(r, patterned(r, 64, &bin_h))), cs::run_compute(),
               cs::wait(1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.d.r(MMU_INT_RAWSTAT) & 2; }));
    EXPECT_EQ(r.d.r64(AS_FAULTADDRESS(1)), bad_srt);
    EXPECT_EQ(r.gpu.engine().jobs_completed(), 0u);
}

// 1024x1024 pixels in 16x16 tiles: 4096 tiles at 200 ns, plus the 2 us base.
TEST_F(CsRealJobsTest, FragmentJobTakesTheTimeItsTilesGiveAndWritesNothing) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    start_idle(r, q);
    u8 *fbd_h, *tiler_h, *sync_h;
    const size_t fbd_size = v::kFramebufferHeaderSize + v::kRenderTargetSize;
    const u64 fbd = patterned(r, fbd_size, &fbd_h);
    const u64 tiler = patterned(r, 64, &tiler_h);
    r.locked([&] {
        auto* p = reinterpret_cast<v::FramebufferParameters*>(fbd_h);
        p->word11 = 8u << 9;  // 256-pixel tiles
        p->tiler = tiler;
    });
    const u64 sync = r.gpu_alloc(16, &sync_h);
    r.push(q, {cs::move48(40, fbd | 1), cs::move32(42, 0), cs::move32(43, (1023u << 16) | 1023u), cs::run_fragment(),
               cs::wait(1), cs::move48(A, sync), cs::move48(V, 1), cs::sync_add64(A, V)});
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.d.w(CSF_DOORBELL(1), 1);
    const kshim::ktime_t done = time_when([&] { return r.locked([&] { return sync_h[0] == 1; }); });
    ASSERT_GE(done, 0);
    const kshim::ktime_t expect = 4096 * 200 + 2 * NSEC_PER_USEC;
    EXPECT_GE(done - t0, expect);
    EXPECT_LT(done - t0, expect + 50 * NSEC_PER_USEC);
    EXPECT_EQ(real_jobs(r), 1u);
    r.locked([&] {
        auto* p = reinterpret_cast<v::FramebufferParameters*>(fbd_h);
        p->word11 = 0xA5A5A5A5;
        p->tiler = 0xA5A5A5A5A5A5A5A5ull;
    });
    EXPECT_TRUE(untouched(r, fbd_h, fbd_size));
    EXPECT_TRUE(untouched(r, tiler_h, 64));
}

TEST_F(CsRealJobsTest, AFramebufferPointerWithoutTheMultiTargetTypeIsDataInvalidFault) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    start_idle(r, q);
    u8* fbd_h;
    const u64 fbd = patterned(r, 256, &fbd_h);
    r.push(q, {cs::move48(40, fbd), cs::run_fragment()});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return r.cs_events(0, 0) & CS_FAULT; }));
    EXPECT_EQ(CS_EXCEPTION_TYPE(r.cs_out(0, 0)->fault), u32{DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT});
    EXPECT_EQ(r.cs_out(0, 0)->fault_info, fbd);
}

// The FaultPlan's shader kinds apply to real jobs as to mock records: a hang never completes.
TEST_F(CsRealJobsTest, AnInjectedShaderHangHoldsARealJobOnItsCore) {
    CsfRig r(rt());
    CsfRig::Queue q = r.make_queue();
    start_idle(r, q);
    r.gpu.faults().add(FaultSpec{.kind = FaultKind::ShaderHang, .trigger = FaultTrigger::nth_occurrence(1)});
    u8* bin_h;
    r.push(q, {cs::move48(16, spd(r, patterned(r, 64, &bin_h))), cs::run_compute(), cs::wait(1)});
    r.d.w(CSF_DOORBELL(1), 1);
    ASSERT_TRUE(wait([&] { return cores_busy(r) == 1; }));
    advance(10 * NSEC_PER_MSEC);
    EXPECT_EQ(cores_busy(r), 1u);
    EXPECT_EQ(r.gpu.engine().jobs_completed(), 0u);
}

// A SUSPEND preempts a job on real descriptors like any other: it keeps its mark and the time it
// had left in the suspend buffer, and completes after RESUME as a real job.
TEST_F(CsRealJobsTest, ASuspendedRealJobResumesAndCompletesAsARealJob) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());
    u8* sbh;
    const u32 suspend_buf = r.mcu_alloc(r.locked([&] { return r.csg_ctrl(0)->suspend_size; }), &sbh);
    CsfRig::Queue q = r.make_queue();
    start(r, 0, {&q}, 15, suspend_buf);
    u8 *bin_h, *sync_h;
    const u64 sync = r.gpu_alloc(16, &sync_h);
    r.push(q, {cs::move48(16, spd(r, patterned(r, 64, &bin_h))), cs::move32(33, 7 | (7 << 10)), cs::move32(37, 256000),
               cs::move32(38, 1), cs::move32(39, 1), cs::run_compute(), cs::wait(1), cs::move48(A, sync),
               cs::move48(V, 1), cs::sync_add64(A, V)});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(200 * NSEC_PER_USEC);
    ASSERT_EQ(cores_busy(r), 1u);
    r.set_state(0, CSG_STATE_SUSPEND);
    ASSERT_TRUE(wait([&] { return r.state_acked(0); }));
    const auto* saved = reinterpret_cast<const SavedStream*>(sbh);
    ASSERT_EQ(r.locked([&] { return saved->njobs; }), 1u);
    EXPECT_EQ(r.locked([&] { return saved->jobs[0].shader.flags; }), u32{MockShader::kFromDescriptors});
    advance(NSEC_PER_MSEC);
    resume(r, 0, {&q}, suspend_buf);
    ASSERT_TRUE(wait([&] { return r.locked([&] { return sync_h[0] == 1; }); }));
    EXPECT_EQ(real_jobs(r), 1u);
    EXPECT_EQ(r.cs_events(0, 0) & (CS_FAULT | CS_FATAL), 0u);
}

}  // namespace
}  // namespace mock_hw::testing
