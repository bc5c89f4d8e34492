// The job-chain builder (umd/pan_jc.h) on plain memory: header words, next links, the scoreboard
// rules of Mesa's pan_jc_add_job (tiling order, v5 write-value reservation, injected reload
// tiler job), the emitters' payloads and the pool's errors.
#include "umd/pan_jc.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <vector>

namespace umd {
namespace {

namespace desc = panfrost::desc;

class PanJcTest : public ::testing::Test {
protected:
    static constexpr std::uint64_t kVa = 0x1000000;
    void SetUp() override { mem.add(kVa, buf.data(), buf.size()); }

    const desc::JobHeader& hdr(std::uint64_t va) { return *static_cast<desc::JobHeader*>(mem.cpu(va, 32)); }
    // The chain's jobs in `next` order.
    std::vector<std::uint64_t> walk(const JobChain& jc) {
        std::vector<std::uint64_t> out;
        for (std::uint64_t j = jc.first_job(); j && out.size() < 100; j = hdr(j).next)
            out.push_back(j);
        return out;
    }

    std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(64 * 1024);
    MappedRanges mem;
    JobPool pool{mem, kVa, 64 * 1024};
};

TEST_F(PanJcTest, WriteValueChainIsLinkedAndIndexedInOrder) {
    JobChain jc(mem);
    EXPECT_TRUE(jc.empty());
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(emit_write_value(pool, jc, 0x2000 + 8 * i, desc::kWriteValueImmediate64, 100 + i), i + 1);
    const std::vector<std::uint64_t> jobs = walk(jc);
    ASSERT_EQ(jobs.size(), 3u);
    EXPECT_EQ(jobs.front(), jc.first_job());
    EXPECT_EQ(jobs.back(), jc.last_job());
    for (size_t i = 0; i < jobs.size(); i++) {
        const desc::JobHeader& h = hdr(jobs[i]);
        EXPECT_EQ(h.control, desc::job_control(desc::kJobWriteValue, static_cast<std::uint32_t>(i + 1)));
        EXPECT_EQ(jobs[i] % 64, 0u);
        EXPECT_EQ(h.dependency_1, 0);
        EXPECT_EQ(h.dependency_2, 0);
        const auto* p = static_cast<desc::WriteValuePayload*>(mem.cpu(jobs[i] + 0x20, sizeof(desc::WriteValuePayload)));
        EXPECT_EQ(p->address, 0x2000 + 8 * i);
        EXPECT_EQ(p->type, desc::kWriteValueImmediate64);
        EXPECT_EQ(p->immediate, 100 + i);
    }
    EXPECT_EQ(hdr(jobs.back()).next, 0u);
}

TEST_F(PanJcTest, FlagsAndExplicitDependenciesGoIntoTheHeader) {
    JobChain jc(mem);
    const int a = emit_null_job(pool, jc);
    const int b = emit_null_job(pool, jc, {.barrier = true, .suppress_prefetch = true}, 1, 0);
    ASSERT_EQ(a, 1);
    ASSERT_EQ(b, 2);
    const desc::JobHeader& h = hdr(jc.last_job());
    EXPECT_TRUE(desc::job_barrier(h.control));
    EXPECT_NE(h.control & desc::kJobSuppressPrefetch, 0u);
    EXPECT_EQ(desc::job_index(h.control), 2u);
    EXPECT_EQ(h.dependency_1, 1);
    EXPECT_EQ(h.control & 0xFFFF, 0x0903u);  // 64-bit NULL + barrier + suppress prefetch
}

TEST_F(PanJcTest, TilerJobsDependOnTheirVertexJobAndThePreviousTilerJob) {
    JobChain jc(mem);
    const desc::Invocation inv = pack_invocation(4, 1, 1, 8, 1, 1);
    ASSERT_EQ(emit_draw(pool, jc, inv), 2);
    const std::uint64_t tiler1 = jc.last_job();
    ASSERT_EQ(emit_shader_job(pool, jc, desc::kJobCompute, inv), 3);  // not tiling: no dep 2
    EXPECT_EQ(hdr(jc.last_job()).dependency_2, 0);
    ASSERT_EQ(emit_draw(pool, jc, inv), 5);
    const std::uint64_t tiler2 = jc.last_job();
    EXPECT_EQ(hdr(tiler1).dependency_1, 1);
    EXPECT_EQ(hdr(tiler1).dependency_2, 0);  // first tiling job: nothing to order after on v7
    EXPECT_EQ(hdr(tiler2).dependency_1, 4);
    EXPECT_EQ(hdr(tiler2).dependency_2, 2);  // the previous tiling job, whatever the caller passed
    EXPECT_EQ(jc.tiler_dep(), 5u);
    // A global dependency the caller gives a tiling job is replaced by the tiler order.
    ASSERT_EQ(emit_shader_job(pool, jc, desc::kJobTiler, inv, {}, 0, 3), 6);
    EXPECT_EQ(hdr(jc.last_job()).dependency_2, 5);
    EXPECT_EQ(desc::job_type(hdr(tiler2).control), desc::kJobTiler);
    EXPECT_EQ(walk(jc).size(), 6u);
}

TEST_F(PanJcTest, MidgardReservesTheWriteValueJobAndPutsItFirst) {
    JobChain jc(mem, 5);
    const desc::Invocation inv = pack_invocation(1, 1, 1, 3, 1, 1);
    ASSERT_EQ(emit_shader_job(pool, jc, desc::kJobVertex, inv), 1);
    // The first tiling job reserves index 2 for the write-value job and depends on it.
    ASSERT_EQ(emit_shader_job(pool, jc, desc::kJobTiler, inv, {}, 1), 3);
    EXPECT_EQ(jc.write_value_index(), 2u);
    EXPECT_EQ(hdr(jc.last_job()).dependency_2, 2);
    const std::uint64_t old_first = jc.first_job();
    Result<JobPtr> wv = jc.initialize_tiler(pool, 0x5000);
    ASSERT_TRUE(wv.ok());
    ASSERT_NE(wv->gpu, 0u);
    EXPECT_EQ(jc.first_job(), wv->gpu);
    EXPECT_EQ(hdr(wv->gpu).next, old_first);
    EXPECT_EQ(desc::job_index(hdr(wv->gpu).control), 2u);
    const auto* p = static_cast<desc::WriteValuePayload*>(mem.cpu(wv->gpu + 0x20, sizeof(desc::WriteValuePayload)));
    EXPECT_EQ(p->type, desc::kWriteValueZero);
    EXPECT_EQ(p->address, 0x5000u);
    EXPECT_EQ(walk(jc).size(), 3u);
    // On v7 there is nothing to initialise.
    JobChain v7(mem);
    ASSERT_EQ(emit_draw(pool, v7, inv), 2);
    Result<JobPtr> none = v7.initialize_tiler(pool, 0x5000);
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(none->gpu, 0u);
}

TEST_F(PanJcTest, InjectedTilerJobGoesFirstAndOrdersTheOldFirstTilerJob) {
    JobChain jc(mem);
    const desc::Invocation inv = pack_invocation(1, 1, 1, 1, 1, 1);
    ASSERT_EQ(emit_draw(pool, jc, inv), 2);
    const std::uint64_t first_tiler = jc.last_job();
    const std::uint64_t old_first = jc.first_job();
    Result<JobPtr> j = pool.alloc(desc::kTilerJobSizeV7, jc.job_align());
    ASSERT_TRUE(j.ok());
    ASSERT_EQ(jc.add_job(desc::kJobTiler, {}, 0, 0, *j, true), 3);
    EXPECT_EQ(jc.first_job(), j->gpu);
    EXPECT_EQ(hdr(j->gpu).next, old_first);
    EXPECT_EQ(hdr(first_tiler).dependency_1, 1);
    EXPECT_EQ(hdr(first_tiler).dependency_2, 3);
    EXPECT_EQ(walk(jc).size(), 3u);
    // Only tiler jobs may be injected.
    Result<JobPtr> k = pool.alloc(64, 64);
    ASSERT_TRUE(k.ok());
    EXPECT_EQ(jc.add_job(desc::kJobNull, {}, 0, 0, *k, true), -EINVAL);
}

TEST_F(PanJcTest, ShaderJobPayloadsSizeTheMockJobs) {
    const desc::Invocation inv = pack_invocation(8, 4, 2, 16, 3, 5);
    EXPECT_EQ(desc::invocation_total(inv), 8ull * 4 * 2 * 16 * 3 * 5);
    const std::uint32_t want[] = {8, 4, 2, 16, 3, 5};
    for (std::uint32_t f = desc::kSizeX; f <= desc::kCountZ; f++)
        EXPECT_EQ(desc::invocation_field(inv, f), want[f]) << f;
    JobChain jc(mem);
    ASSERT_EQ(emit_fragment_job(pool, jc, 0, 0, 15, 9, 0x7000), 1);
    const auto* fp = static_cast<desc::FragmentPayload*>(mem.cpu(jc.last_job() + 0x20, sizeof(desc::FragmentPayload)));
    EXPECT_EQ(desc::fragment_tile_count(*fp), 160u);
    EXPECT_EQ(fp->framebuffer, 0x7000u);
    ASSERT_EQ(emit_shader_job(pool, jc, desc::kJobCompute, inv), 2);
    const auto* ip = static_cast<desc::Invocation*>(mem.cpu(jc.last_job() + 0x20, sizeof(desc::Invocation)));
    EXPECT_EQ(desc::invocation_total(*ip), desc::invocation_total(inv));
    EXPECT_EQ(emit_shader_job(pool, jc, desc::kJobFragment, inv), -EINVAL);
}

TEST_F(PanJcTest, PoolReportsExhaustionAndUnmappedMemory) {
    JobPool small(mem, kVa, 128);
    JobChain jc(mem);
    EXPECT_EQ(emit_write_value(small, jc, 0, desc::kWriteValueZero), 1);
    EXPECT_EQ(emit_write_value(small, jc, 0, desc::kWriteValueZero), 2);
    EXPECT_EQ(emit_write_value(small, jc, 0, desc::kWriteValueZero), -ENOMEM);
    JobPool unmapped(mem, 0x9000000, 4096);
    EXPECT_EQ(emit_null_job(unmapped, jc), -EFAULT);
    EXPECT_EQ(walk(jc).size(), 2u);
}

}  // namespace
}  // namespace umd
