// Job-chain execution on the mock Mali-G52: every job type on arch 7 (and the arch 9 / arch 5
// differences), the WRITE_VALUE value types, the modelled time of shader jobs, header write-back,
// 32- and 64-bit next pointers, dependencies, JS_HEAD/JS_TAIL, FaultPlan's job kinds and the "JS<n>"
// trace track.
#include <string>

#include "kernel_shim/trace.h"
#include "mock_hw/fault_plan.h"
#include "tests/mock_jm/jm_test.h"

namespace mock_jm::testing {
namespace {

using kshim::ktime_get;
using mock_hw::FaultKind;
using mock_hw::FaultSpec;
using mock_hw::FaultTrigger;

// An invocation of a * b invocations: workgroup size X = a, workgroup count Z = b (every other
// field 1: the shifts of size Y .. count Z all sit at bit 16).
Invocation invocation(u32 a, u32 b) {
    Invocation i{};
    i.invocations = (a - 1) | ((b - 1) << 16);
    i.shifts = 16 | (16u << 5) | (16u << 10) | (16u << 16) | (16u << 22);
    return i;
}

FragmentPayload fragment(u32 x0, u32 y0, u32 x1, u32 y1) {
    FragmentPayload f{};
    f.bound_min = fragment_bound(x0, y0);
    f.bound_max = fragment_bound(x1, y1);
    return f;
}

class JobExec : public JmTest {
protected:
    // A job of `type` sized by an invocation (or a fragment payload for FRAGMENT).
    u64 shader_job(u32 type, u64 size, u32 index = 1, u64 prev = 0) {
        if (type == kJobFragment) {
            const FragmentPayload f = fragment(0, 0, static_cast<u32>(size) - 1, 0);
            return arena().job(type, index, &f, sizeof(f), prev);
        }
        const Invocation inv = invocation(static_cast<u32>(size), 1);
        return arena().job(type, index, &inv, sizeof(inv), prev);
    }
    // The modelled time of a shader job of `size` (docs/mock_jm.md, "Job times").
    ktime_t shader_time(u32 type, u64 size) const {
        const JmLatencies& l = gpu_cfg_lat_;
        const ktime_t t = type == kJobFragment
                              ? l.shader_job_base + static_cast<ktime_t>(size) * l.tile
                              : l.shader_job_base + static_cast<ktime_t>(size * 1000 / l.invocations_per_us);
        return std::min(t, l.shader_job_max);
    }
    // Runs a chain and returns the virtual time from submit to its interrupt.
    ktime_t timed_chain(u64 head, u32* status) {
        const ktime_t t0 = ktime_get();
        submit(0, head);
        *status = wait_slot(0);
        const ktime_t dt = ktime_get() - t0;
        d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
        return dt;
    }
    u64 read_cycle_count() { return d().r64(GPU_CYCLE_COUNT_LO); }
    u64 read_timestamp() { return d().r64(GPU_TIMESTAMP_LO); }
    bool slot_irq_pending(u32 js) { return d().r(JOB_INT_RAWSTAT) & MK_JS_MASK(js); }

    JmLatencies gpu_cfg_lat_;
};

// ---- NULL and WRITE_VALUE ----

TEST_F(JobExec, NullJobCompletesInSimpleJobTime) {
    bring_up();
    const u64 j = arena().null_job();
    u32 status;
    const ktime_t dt = timed_chain(j, &status);
    EXPECT_EQ(status, DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(dt, gpu_cfg_lat_.simple_job);
    EXPECT_EQ(arena().header(j)->exception_status, kJobStatusDone);
}

struct ImmCase {
    u32 type;
    u32 width;
    const char* name;
};

void PrintTo(const ImmCase& c, std::ostream* os) {
    *os << c.name;
}

class WriteValueImmediate : public JobExec, public ::testing::WithParamInterface<ImmCase> {};

// The low `width` bytes of the immediate land at the target; the bytes around it stay.
TEST_P(WriteValueImmediate, WritesExactlyItsWidth) {
    bring_up();
    const ImmCase c = GetParam();
    const u64 buf = arena().alloc(32);
    std::memset(arena().host(buf), 0xAA, 32);
    const u64 value = 0x1122334455667788ull;
    const u64 j = arena().write_value(buf + 8, c.type, value);
    ASSERT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_DONE);
    const u8* m = arena().host(buf);
    for (u32 i = 0; i < 32; i++) {
        const bool written = i >= 8 && i < 8 + c.width;
        const u8 want = written ? static_cast<u8>(value >> (8 * (i - 8))) : 0xAA;
        EXPECT_EQ(m[i], want) << "byte " << i;
    }
}

INSTANTIATE_TEST_SUITE_P(AllWidths, WriteValueImmediate,
                         ::testing::Values(ImmCase{kWriteValueImmediate8, 1, "Imm8"},
                                           ImmCase{kWriteValueImmediate16, 2, "Imm16"},
                                           ImmCase{kWriteValueImmediate32, 4, "Imm32"},
                                           ImmCase{kWriteValueImmediate64, 8, "Imm64"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(JobExec, WriteValueZeroWritesEightZeroBytes) {
    bring_up();
    const u64 buf = arena().alloc(24);
    std::memset(arena().host(buf), 0xAA, 24);
    // The immediate is ignored by Zero.
    const u64 j = arena().write_value(buf + 8, kWriteValueZero, ~0ull);
    ASSERT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_DONE);
    const u8* m = arena().host(buf);
    for (u32 i = 0; i < 24; i++)
        EXPECT_EQ(m[i], i >= 8 && i < 16 ? 0 : 0xAA) << "byte " << i;
}

TEST_F(JobExec, WriteValueCycleCounterWritesTheRunningCounter) {
    bring_up();
    d().w(GPU_CMD, GPU_CMD_CYCLE_COUNT_START);
    advance(5 * NSEC_PER_USEC);
    const u64 target = arena().alloc(8);
    const u64 j = arena().write_value(target, kWriteValueCycleCounter, 0);
    const u64 before = read_cycle_count();
    ASSERT_GT(before, 0u);
    ASSERT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_DONE);
    const u64 after = read_cycle_count();
    const u64 v = *arena().at<u64>(target);
    EXPECT_GE(v, before);
    EXPECT_LE(v, after);
    EXPECT_GT(after, before);  // the counter ran while the job did
}

TEST_F(JobExec, WriteValueSystemTimestampWritesTheTimestamp) {
    bring_up();
    advance(50 * NSEC_PER_USEC);
    const u64 target = arena().alloc(8);
    const u64 j = arena().write_value(target, kWriteValueSystemTimestamp, 0);
    const u64 before = read_timestamp();
    ASSERT_GT(before, 0u);
    ASSERT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_DONE);
    const u64 after = read_timestamp();
    const u64 v = *arena().at<u64>(target);
    EXPECT_GE(v, before);
    EXPECT_LE(v, after);
}

TEST_F(JobExec, WriteValueOfUnknownValueTypeIsAConfigFault) {
    bring_up();
    const u64 target = arena().alloc(8);
    *arena().at<u64>(target) = 0x55;
    const u64 j = arena().write_value(target, 8, 0x1234);
    EXPECT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
    EXPECT_EQ(*arena().at<u64>(target), 0x55u);
    EXPECT_EQ(arena().header(j)->exception_status, DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
}

// ---- CACHE_FLUSH ----

TEST_F(JobExec, CacheFlushJobAdvancesFlushIdOnlyForL2CleanInvalidate) {
    bring_up();
    // No start/end flush in JS_CONFIG: only the job itself may move LATEST_FLUSH_ID.
    const u32 config = kAs;
    CacheFlushPayload clean_inv{kFlushJobManagerClean | kFlushJobManagerInvalidate, kFlushL2Clean | kFlushL2Invalidate};
    CacheFlushPayload clean_only{kFlushCleanShaderCoreLs, kFlushL2Clean};
    const u64 j1 = arena().job(kJobCacheFlush, 1, &clean_inv, sizeof(clean_inv));
    const u64 j2 = arena().job(kJobCacheFlush, 1, &clean_only, sizeof(clean_only));

    const u32 id0 = d().r(GPU_LATEST_FLUSH_ID);
    ASSERT_EQ(run_chain(0, j1, config), DRM_PANFROST_EXCEPTION_DONE);
    const u32 id1 = d().r(GPU_LATEST_FLUSH_ID);
    EXPECT_EQ(id1, id0 + 1);
    ASSERT_EQ(run_chain(0, j2, config), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r(GPU_LATEST_FLUSH_ID), id1);
    EXPECT_EQ(arena().header(j2)->exception_status, kJobStatusDone);
}

// ---- Jobs that would run shaders ----

struct ShaderCase {
    u32 type;
    const char* name;
};
const ShaderCase kShaderTypesV7[] = {
    {kJobCompute, "Compute"}, {kJobVertex, "Vertex"},     {kJobGeometry, "Geometry"},          {kJobTiler, "Tiler"},
    {kJobFused, "Fused"},     {kJobFragment, "Fragment"}, {kJobIndexedVertex, "IndexedVertex"}};

void PrintTo(const ShaderCase& c, std::ostream* os) {
    *os << c.name;
}

class ShaderJob : public JobExec, public ::testing::WithParamInterface<ShaderCase> {};

TEST_P(ShaderJob, CompletesAfterATimeThatGrowsWithItsSize) {
    bring_up();
    const u32 type = GetParam().type;
    const u64 small_size = type == kJobFragment ? 4 : 1024;
    const u64 big_size = type == kJobFragment ? 64 : 32768;
    const u64 small = shader_job(type, small_size);
    const u64 big = shader_job(type, big_size);
    u32 status;
    const ktime_t t_small = timed_chain(small, &status);
    EXPECT_EQ(status, DRM_PANFROST_EXCEPTION_DONE);
    const ktime_t t_big = timed_chain(big, &status);
    EXPECT_EQ(status, DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(t_small, shader_time(type, small_size));
    EXPECT_EQ(t_big, shader_time(type, big_size));
    EXPECT_GT(t_big, t_small);
    EXPECT_EQ(arena().header(small)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(big)->exception_status, kJobStatusDone);
}

TEST_P(ShaderJob, FailsWithConfigFaultWhenShaderJobsAreRefused) {
    JmConfig cfg;
    cfg.shader_jobs = ShaderJobPolicy::ConfigFault;
    make_gpu(cfg);
    bring_up();
    const u64 j = shader_job(GetParam().type, 16);
    EXPECT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
    EXPECT_EQ(arena().header(j)->exception_status, DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j);
}

INSTANTIATE_TEST_SUITE_P(Arch7, ShaderJob, ::testing::ValuesIn(kShaderTypesV7),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(JobExec, ShaderJobTimeIsCappedAtShaderJobMax) {
    bring_up();
    const u64 j = arena().job(kJobCompute, 1, nullptr, 0);
    Invocation inv = invocation(65536, 65536);
    std::memcpy(arena().host(j) + kInvocationOffset, &inv, sizeof(inv));
    u32 status;
    EXPECT_EQ(timed_chain(j, &status), gpu_cfg_lat_.shader_job_max);
    EXPECT_EQ(status, DRM_PANFROST_EXCEPTION_DONE);
}

TEST_F(JobExec, FragmentTimeCountsTilesInBothDimensions) {
    bring_up();
    const FragmentPayload f = fragment(2, 3, 5, 6);  // 4 x 4 tiles
    const u64 j = arena().job(kJobFragment, 1, &f, sizeof(f));
    u32 status;
    EXPECT_EQ(timed_chain(j, &status), gpu_cfg_lat_.shader_job_base + 16 * gpu_cfg_lat_.tile);
    EXPECT_EQ(status, DRM_PANFROST_EXCEPTION_DONE);
}

struct BadTypeCase {
    u32 type;
    const char* name;
};
void PrintTo(const BadTypeCase& c, std::ostream* os) {
    *os << c.name;
}
class UnknownJobType : public JobExec, public ::testing::WithParamInterface<BadTypeCase> {};

// Types the G52 (arch 7) does not run fail the job, whose header records the fault.
TEST_P(UnknownJobType, FailsWithConfigFault) {
    bring_up();
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().job(GetParam().type, 2, nullptr, 0, j1);
    const u64 j3 = arena().null_job(3, j2);
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
    EXPECT_EQ(arena().header(j3)->exception_status, 0u);
}

INSTANTIATE_TEST_SUITE_P(Arch7, UnknownJobType,
                         ::testing::Values(BadTypeCase{kJobNotStarted, "NotStarted"},
                                           BadTypeCase{kJobMallocVertex, "MallocVertex"}, BadTypeCase{12, "Type12"},
                                           BadTypeCase{13, "Type13"}, BadTypeCase{127, "Type127"}),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- Other architectures ----

TEST_F(JobExec, Arch9HasMallocVertexButNoVertexAndAlways64BitNext) {
    JmConfig cfg;
    cfg.arch = 9;
    make_gpu(cfg);
    bring_up();
    // A second arena above 4 GiB: reached only when the whole 64-bit next is followed.
    constexpr u64 kHighVa = 0x1'2000'0000ull;
    JobArena high(pt(), kHighVa, 0x10000);
    const u64 mv = arena().job(kJobMallocVertex, 1);
    const u64 target = high.alloc(8);
    const u64 wv = high.write_value(target, kWriteValueImmediate32, 0xB16B00B5, 2);
    arena().header(mv)->control &= ~kJobIs64b;  // v9 has no such bit: next is 64-bit regardless
    arena().header(mv)->next = wv;
    EXPECT_EQ(run_chain(0, mv), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*high.at<u32>(target), 0xB16B00B5u);
    EXPECT_EQ(high.header(wv)->exception_status, kJobStatusDone);

    const u64 vtx = shader_job(kJobVertex, 16);
    EXPECT_EQ(run_chain(0, vtx), DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
    const u64 idvs = shader_job(kJobFused, 16);
    EXPECT_EQ(run_chain(0, idvs), DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
}

TEST_F(JobExec, Arch5HasNoImmediateWriteValues) {
    JmConfig cfg;
    cfg.arch = 5;
    make_gpu(cfg);
    bring_up();
    const u64 target = arena().alloc(8);
    *arena().at<u64>(target) = ~0ull;
    for (u32 type : {kWriteValueImmediate8, kWriteValueImmediate16, kWriteValueImmediate32, kWriteValueImmediate64}) {
        const u64 j = arena().write_value(target, type, 0x42);
        EXPECT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT) << "type " << type;
        EXPECT_EQ(*arena().at<u64>(target), ~0ull) << "type " << type;
    }
    // Zero has no immediate and exists on v5; IDVS does not.
    const u64 z = arena().write_value(target, kWriteValueZero, 0);
    EXPECT_EQ(run_chain(0, z), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u64>(target), 0u);
    EXPECT_EQ(run_chain(0, shader_job(kJobIndexedVertex, 16)), DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT);
}

// ---- Header write-back ----

TEST_F(JobExec, WriteBackSetsStatusOnlyAndLeavesTheOtherWords) {
    bring_up();
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().null_job(2, j1);
    for (u64 j : {j1, j2}) {
        arena().header(j)->first_incomplete_task = 0x1234;
        arena().header(j)->fault_pointer = 0xFEEDFACE00ull;
    }
    ASSERT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    for (u64 j : {j1, j2}) {
        EXPECT_EQ(arena().header(j)->exception_status, kJobStatusDone);
        EXPECT_EQ(arena().header(j)->first_incomplete_task, 0x1234u);
        EXPECT_EQ(arena().header(j)->fault_pointer, 0xFEEDFACE00ull);
    }
}

TEST_F(JobExec, DisableDescriptorWriteBackLeavesHeadersUntouched) {
    bring_up();
    const u64 target = arena().alloc(8);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().write_value(target, kWriteValueImmediate32, 7, 2, j1);
    ASSERT_EQ(run_chain(0, j1, jm_js_config(kAs) | JS_CONFIG_DISABLE_DESCRIPTOR_WR_BK), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 7u);
    EXPECT_EQ(arena().header(j1)->exception_status, 0u);
    EXPECT_EQ(arena().header(j2)->exception_status, 0u);
    // Nothing recorded, so the same chain runs again as is.
    EXPECT_EQ(run_chain(0, j1, jm_js_config(kAs) | JS_CONFIG_DISABLE_DESCRIPTOR_WR_BK), DRM_PANFROST_EXCEPTION_DONE);
}

TEST_F(JobExec, RerunningADoneChainIsDataInvalidUntilHeadersAreZeroed) {
    bring_up();
    const u64 target = arena().alloc(8);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().write_value(target, kWriteValueImmediate32, 1, 2, j1);
    ASSERT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    *arena().at<u32>(target) = 0;

    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DATA_INVALID_FAULT);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j1);
    EXPECT_EQ(*arena().at<u32>(target), 0u);

    // A chain whose first job was reset but a later one not fails at the later one.
    std::memset(arena().host(j1), 0, kJobHeaderStatusBytes);
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DATA_INVALID_FAULT);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);

    // What panvk does before re-submitting: zero the first 16 bytes of every job.
    for (u64 j : {j1, j2})
        std::memset(arena().host(j), 0, kJobHeaderStatusBytes);
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 1u);
}

// ---- Next pointers ----

TEST_F(JobExec, ThirtyTwoBitNextIgnoresTheHighWord) {
    bring_up();
    const u64 target = arena().alloc(8);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().write_value(target, kWriteValueImmediate32, 0x32, 2);
    arena().header(j1)->control &= ~kJobIs64b;
    arena().header(j1)->next = (0xDEADull << 32) | j2;
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 0x32u);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
}

TEST_F(JobExec, SixtyFourBitNextFollowsTheWholeWord) {
    bring_up();
    constexpr u64 kHighVa = 0x1'2000'0000ull;
    JobArena high(pt(), kHighVa, 0x10000);
    const u64 target = high.alloc(8);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = high.write_value(target, kWriteValueImmediate32, 0x64, 2);
    arena().header(j1)->next = j2;
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*high.at<u32>(target), 0x64u);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
}

// ---- Dependencies, JS_HEAD and JS_TAIL ----

TEST_F(JobExec, DependencyOnAnEarlierJobIsMet) {
    bring_up();
    const u64 target = arena().alloc(8);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().job(kJobNull, 2, nullptr, 0, j1, false, 1);
    const u64 j3 = arena().write_value(target, kWriteValueImmediate32, 3, 3, j2);
    arena().header(j3)->dependency_1 = 2;
    arena().header(j3)->dependency_2 = 1;
    arena().header(j3)->control |= kJobBarrier;
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 3u);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j3);
}

TEST_F(JobExec, DependencyNoEarlierJobHadWaitsUntilHardStop) {
    bring_up();
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().job(kJobNull, 2, nullptr, 0, j1, false, 0, 5);
    submit(0, j1);
    advance(10 * NSEC_PER_MSEC);
    EXPECT_FALSE(slot_irq_pending(0));
    EXPECT_EQ(d().r(JS_STATUS(0)), DRM_PANFROST_EXCEPTION_ACTIVE);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE) & 1u, 1u);
    EXPECT_EQ(d().r64(JS_HEAD_LO(0)), j2);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, 0u);

    d().w(JS_COMMAND(0), JS_COMMAND_HARD_STOP);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_TERMINATED);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_ERR(0));
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
    EXPECT_EQ(d().r(JOB_INT_JS_STATE) & 1u, 0u);
    EXPECT_EQ(arena().header(j2)->exception_status, 0u);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
}

TEST_F(JobExec, HeadFollowsTheRunningJobAndTailIsTheLastJob) {
    bring_up();
    const u64 j1 = shader_job(kJobCompute, 1024, 1);
    const u64 j2 = shader_job(kJobCompute, 1024, 2, j1);
    const ktime_t t = shader_time(kJobCompute, 1024);
    submit(0, j1);
    advance(t / 2);
    EXPECT_EQ(d().r64(JS_HEAD_LO(0)), j1);
    advance(t);
    EXPECT_EQ(d().r64(JS_HEAD_LO(0)), j2);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, 0u);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
}

// ---- FaultPlan ----

TEST_F(JobExec, JobFaultWritesTheExceptionAndFailsTheChain) {
    bring_up();
    FaultSpec f;
    f.kind = FaultKind::JobFault;
    f.exception = DRM_PANFROST_EXCEPTION_INSTR_INVALID_PC;
    f.trigger = FaultTrigger::nth_occurrence(3);
    const int id = gpu().faults().add(f);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().null_job(2, j1);
    const u64 j3 = arena().null_job(3, j2);
    const u64 j4 = arena().null_job(4, j3);
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_INSTR_INVALID_PC);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j3);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j3)->exception_status, DRM_PANFROST_EXCEPTION_INSTR_INVALID_PC);
    EXPECT_EQ(arena().header(j4)->exception_status, 0u);
}

TEST_F(JobExec, JobFaultNarrowedToOneSlot) {
    bring_up();
    FaultSpec f;
    f.kind = FaultKind::JobFault;
    f.exception = DRM_PANFROST_EXCEPTION_INSTR_INVALID_ENC;
    f.js = 1;
    gpu().faults().add(f);
    EXPECT_EQ(run_chain(0, arena().null_job()), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(run_chain(2, arena().null_job()), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(run_chain(1, arena().null_job()), DRM_PANFROST_EXCEPTION_INSTR_INVALID_ENC);
    EXPECT_EQ(run_chain(1, arena().null_job()), DRM_PANFROST_EXCEPTION_DONE);  // max_fires 1
}

TEST_F(JobExec, JobBusFaultLatchesAGpuFault) {
    bring_up();
    FaultSpec f;
    f.kind = FaultKind::JobBusFault;
    f.fault_addr = 0xABCD000;
    gpu().faults().add(f);
    const u64 j = arena().null_job();
    EXPECT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    EXPECT_TRUE(d().r(GPU_INT_RAWSTAT) & GPU_IRQ_FAULT);
    EXPECT_EQ(d().r64(GPU_FAULT_ADDRESS_LO), 0xABCD000u);
    EXPECT_EQ(d().r(GPU_FAULT_STATUS) & 0xFF, DRM_PANFROST_EXCEPTION_DELAYED_BUS_FAULT);
    EXPECT_EQ(arena().header(j)->exception_status, 0u);  // a bus fault writes nothing back
}

// ---- Trace ----

TEST_F(JobExec, TraceHasAJobSlotTrackWithSlicesNamedByType) {
    kshim::trace::start(true);
    make_gpu();  // the "JS<n>" tracks are created with the GPU
    bring_up();
    const u64 target = arena().alloc(8);
    const u64 j1 = arena().null_job(1);
    arena().write_value(target, kWriteValueImmediate32, 1, 2, j1);
    ASSERT_EQ(run_chain(1, j1), DRM_PANFROST_EXCEPTION_DONE);
    const std::string json = kshim::trace::to_json();
    kshim::trace::stop();

    // The track's id from its thread_name metadata, then a begin and an end slice of each type on it.
    const std::string meta = "\"name\":\"thread_name\",\"args\":{\"name\":\"JS1\"}";
    const size_t at = json.find(meta);
    ASSERT_NE(at, std::string::npos) << json.substr(0, 2000);
    const size_t tid_at = json.rfind("\"tid\":", at);
    ASSERT_NE(tid_at, std::string::npos);
    const std::string tid = json.substr(tid_at + 6, json.find(',', tid_at) - tid_at - 6);
    auto has_slice = [&](const char* ph, const char* name) {
        const std::string head = std::string("{\"ph\":\"") + ph + "\",\"pid\":1,\"tid\":" + tid + ",\"ts\":";
        const std::string tail = std::string(",\"name\":\"") + name + "\"";
        for (size_t p = json.find(head); p != std::string::npos; p = json.find(head, p + 1)) {
            const size_t eol = json.find('}', p);
            if (json.substr(p, eol - p).find(tail) != std::string::npos)
                return true;
        }
        return false;
    };
    for (const char* name : {"NULL", "WRITE_VALUE"})
        for (const char* ph : {"B", "E"})
            EXPECT_TRUE(has_slice(ph, name)) << name << " " << ph << " on tid " << tid;
    EXPECT_FALSE(has_slice("B", "CACHE_FLUSH"));
}

}  // namespace
}  // namespace mock_jm::testing
