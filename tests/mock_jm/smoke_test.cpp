// The first things a driver sees of the mock Mali-G52: its identity, and a NULL job and a
// WRITE_VALUE job running to DONE through a Mali-LPAE address space.
#include "tests/mock_jm/jm_test.h"

namespace mock_jm::testing {
namespace {

using Smoke = JmTest;

TEST_F(Smoke, IdentifiesAsMaliG52R1) {
    EXPECT_EQ(d().r(GPU_ID), 0x74021000u);
    EXPECT_EQ(d().r(GPU_JS_PRESENT), 0x7u);
    EXPECT_EQ(d().r(GPU_AS_PRESENT), 0xFFu);
    EXPECT_EQ(d().r(GPU_MMU_FEATURES), 0x2823u);
}

TEST_F(Smoke, NullAndWriteValueJobsCompleteAndWriteBack) {
    bring_up();
    const u64 target = arena().alloc(8);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().write_value(target, kWriteValueImmediate32, 0xCAFEF00D, 2, j1);
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 0xCAFEF00Du);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, kJobStatusDone);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
}

}  // namespace
}  // namespace mock_jm::testing
