// EP_CFG exclusive endpoints: a group that asked for exclusive compute (fragment) endpoints runs
// jobs of that kind with no other group's job of that kind beside it.
#include "tests/mock_hw/cs_test.h"

namespace mock_hw::testing {
namespace {

struct ExclusiveCase {
    const char* name;
    bool fragment;   // the kind group A runs and asks exclusivity for
    bool exclusive;  // false: the control case, cores shared
};

class CsExclusive : public CsTest, public ::testing::WithParamInterface<ExclusiveCase> {
protected:
    void set_endpoints(CsfRig& r, u32 slot, u32 extra) {
        r.locked([&] {
            r.csg_in(slot)->endpoint_req =
                CSG_EP_REQ_COMPUTE(4) | CSG_EP_REQ_FRAGMENT(4) | CSG_EP_REQ_TILER(1) | CSG_EP_REQ_PRIORITY(15) | extra;
        });
        r.toggle_csg(slot, CSG_ENDPOINT_CONFIG);
        ASSERT_TRUE(wait([&] {
            return r.locked([&] { return !((r.csg_in(slot)->req ^ r.csg_out(slot)->ack) & CSG_ENDPOINT_CONFIG); });
        }));
    }
    // RUN_COMPUTE reads the shader at d16; RUN_FRAGMENT at d40 (the FBD pointer).
    void push_job(CsfRig& r, CsfRig::Queue& q, bool fragment, u64 shader) {
        if (fragment)
            r.push(q, {cs::move48(40, shader), cs::run_fragment()});
        else
            r.push(q, {cs::move48(16, shader), cs::run_compute()});
    }
};

TEST_P(CsExclusive, OtherGroupsJobsOfTheExclusiveKindWaitWhileTheOtherKindRuns) {
    const ExclusiveCase c = GetParam();
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());  // 4 cores
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    auto landed = [&](u32 i, u64 v) {
        return [&r, m, i, v] { return r.locked([&] { return reinterpret_cast<u64*>(m)[i] == v; }); };
    };
    CsfRig::Queue qa = r.make_queue(), qb_same = r.make_queue(), qb_other = r.make_queue();
    start(r, 0, {&qa});
    start(r, 1, {&qb_same, &qb_other});
    const u32 excl = c.fragment ? CSG_EP_REQ_EXCL_FRAGMENT : CSG_EP_REQ_EXCL_COMPUTE;
    set_endpoints(r, 0, c.exclusive ? excl : 0);
    EXPECT_EQ(
        r.locked([&] { return r.csg_out(0)->status_ep_req & (CSG_EP_REQ_EXCL_COMPUTE | CSG_EP_REQ_EXCL_FRAGMENT); }),
        c.exclusive ? excl : 0u);
    // Group A: one 100 us job of its kind. Group B, 10 us later: a 20 us job of the same kind and
    // one of the other kind, on two queues.
    push_job(r, qa, c.fragment, r.shader(MockShader::Write, 100 * kUs, buf, 1));
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.d.w(CSF_DOORBELL(1), 1);
    advance(10 * kUs);
    push_job(r, qb_same, c.fragment, r.shader(MockShader::Write, 20 * kUs, buf + 8, 2));
    push_job(r, qb_other, !c.fragment, r.shader(MockShader::Write, 20 * kUs, buf + 16, 3));
    r.d.w(CSF_DOORBELL(2), 1);
    EXPECT_EQ(time_when(landed(2, 3)), t0 + 30 * kUs);  // the other kind shares the cores either way
    if (c.exclusive) {
        EXPECT_EQ(time_when(landed(0, 1)), t0 + 100 * kUs);
        EXPECT_EQ(time_when(landed(1, 2)), t0 + 120 * kUs);  // started when A's job ended
    } else {
        EXPECT_EQ(time_when(landed(1, 2)), t0 + 30 * kUs);
        EXPECT_EQ(time_when(landed(0, 1)), t0 + 100 * kUs);
    }
}

INSTANTIATE_TEST_SUITE_P(Endpoints, CsExclusive,
                         ::testing::Values(ExclusiveCase{"ExclusiveCompute", false, true},
                                           ExclusiveCase{"SharedCompute", false, false},
                                           ExclusiveCase{"ExclusiveFragment", true, true},
                                           ExclusiveCase{"SharedFragment", true, false}),
                         [](const ::testing::TestParamInfo<ExclusiveCase>& i) { return std::string(i.param.name); });

class CsEndpoint : public CsTest {};

TEST_F(CsEndpoint, ExclusiveGroupWaitsForOthersToDrainAndLaterJobsDoNotOvertakeIt) {
    CsfRig r(rt());
    ASSERT_TRUE(r.boot());  // 4 cores: only exclusivity keeps these jobs apart
    u8* m;
    const u64 buf = r.gpu_alloc(64, &m);
    auto landed = [&](u32 i, u64 v) {
        return [&r, m, i, v] { return r.locked([&] { return reinterpret_cast<u64*>(m)[i] == v; }); };
    };
    CsfRig::Queue qa = r.make_queue(), qb = r.make_queue();
    start(r, 0, {&qa});
    start(r, 1, {&qb});
    r.locked([&] { r.csg_in(0)->endpoint_req |= CSG_EP_REQ_EXCL_COMPUTE; });
    r.toggle_csg(0, CSG_ENDPOINT_CONFIG);
    advance(20 * kUs);
    // B runs compute first; A (exclusive) asks at +10 us; B asks again at +20 us.
    r.push(qb, {cs::move48(16, r.shader(MockShader::Write, 100 * kUs, buf, 1)), cs::run_compute()});
    const kshim::ktime_t t0 = kshim::ktime_get();
    r.d.w(CSF_DOORBELL(2), 1);
    advance(10 * kUs);
    r.push(qa, {cs::move48(16, r.shader(MockShader::Write, 50 * kUs, buf + 8, 2)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(1), 1);
    advance(10 * kUs);
    r.push(qb, {cs::move48(16, r.shader(MockShader::Write, 30 * kUs, buf + 16, 3)), cs::run_compute()});
    r.d.w(CSF_DOORBELL(2), 1);
    EXPECT_EQ(time_when(landed(0, 1)), t0 + 100 * kUs);
    EXPECT_EQ(time_when(landed(1, 2)), t0 + 150 * kUs);  // A alone once B drained
    EXPECT_EQ(time_when(landed(2, 3)), t0 + 180 * kUs);  // B's later job waited for A
}

}  // namespace
}  // namespace mock_hw::testing
