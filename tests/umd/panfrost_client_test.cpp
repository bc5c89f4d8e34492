// umd::PanfrostClient against panfrost on the mock Mali-G52 (the host Machine's model g52) through
// the in-process backend, with chains built by umd/pan_jc: GET_PARAM, BOs and their VAs,
// WRITE_VALUE chains, dependencies across submits through syncobjs, WAIT_BO, JM contexts, and
// a vertex/tiler -> fragment frame through panvk's queue submit (fragment on slot 0).
#include <gtest/gtest.h>

#include <cerrno>
#include <deque>
#include <memory>

#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "hw/jm/job_desc.h"
#include "hw/jm/regs/job_regs.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "tests/panfrost/panfrost_test.h"
#include "umd/pan_jc.h"
#include "umd/panfrost_client.h"

namespace umd {
namespace {

namespace desc = panfrost::desc;
using std::uint32_t;
using std::uint64_t;

constexpr std::int64_t kSec = 1'000'000'000;

// A BO mapped for the CPU and registered as GPU memory for the chain builder.
struct MappedBo {
    PanfrostBo bo;
    std::uint8_t* cpu = nullptr;
    uint64_t& u64_at(uint64_t va) { return *reinterpret_cast<uint64_t*>(cpu + (va - bo.va)); }
};

class PanfrostClientTest : public panfrost::testing::PanfrostTest {
protected:
    void SetUp() override {
        PanfrostTest::SetUp();
        if (HasFatalFailure())
            return;
        // Start from a runtime-suspended GPU, as the driver's job tests do.
        ASSERT_TRUE(wait_autosuspend());
        mmaps_before_ = drm::drm_mmap_live();
        backend_ = std::make_unique<DrmFileBackend>(file);
        Result<std::unique_ptr<PanfrostClient>> c = PanfrostClient::open(*backend_);
        ASSERT_TRUE(c.ok()) << c.error();
        client_ = std::move(*c);
    }
    void TearDown() override {
        advance_until_idle(10 * kshim::NSEC_PER_SEC);
        for (MappedBo& b : bos_)
            EXPECT_TRUE(client_->munmap(b.cpu, b.bo.size).ok());
        bos_.clear();
        client_.reset();
        backend_.reset();
        EXPECT_EQ(drm::drm_mmap_live(), mmaps_before_);
        PanfrostTest::TearDown();
    }

    PanfrostClient& c() { return *client_; }
    // dma_fence_get_status of the syncobj's fence (1 signalled, < 0 its error).
    int fence_status(uint32_t handle) {
        kshim::dma_fence* f = nullptr;
        if (int ret = drm::drm_syncobj_find_fence(file, handle, 0, 0, &f))
            return ret;
        const int st = kshim::dma_fence_get_status(f);
        kshim::dma_fence_put(f);
        return st;
    }

    MappedBo& new_bo(uint32_t size = 64 * 1024) {
        Result<PanfrostBo> bo = c().bo_create(size);
        EXPECT_TRUE(bo.ok()) << bo.error();
        MappedBo m;
        m.bo = bo.value_or({});
        Result<void*> p = c().bo_mmap(m.bo.handle, size);
        EXPECT_TRUE(p.ok()) << p.error();
        m.cpu = static_cast<std::uint8_t*>(p.value_or(nullptr));
        mem_.add(m.bo.va, m.cpu, size);
        bos_.push_back(m);
        return bos_.back();
    }
    uint32_t syncobj() {
        Result<uint32_t> s = c().syncobj_create();
        EXPECT_TRUE(s.ok());
        return s.value_or(0);
    }
    Status wait(uint32_t s, std::int64_t timeout = 2 * kSec) {
        return c().syncobj_wait(s, c().deadline_after(timeout)).status();
    }

    std::unique_ptr<DrmFileBackend> backend_;
    std::unique_ptr<PanfrostClient> client_;
    MappedRanges mem_;
    std::deque<MappedBo> bos_;
    size_t mmaps_before_ = 0;
};

TEST_F(PanfrostClientTest, OpenReadsTheG52Identity) {
    EXPECT_EQ(c().gpu_info().gpu_prod_id, 0x7402u);
    EXPECT_EQ(c().arch(), 7u);
    EXPECT_EQ(c().gpu_info().js_present, 0x7u);
    EXPECT_NE(c().gpu_info().shader_present, 0u);
    EXPECT_NE(c().gpu_info().timestamp_frequency, 0u);
    // LOW and MEDIUM for an ordinary user.
    EXPECT_EQ(c().gpu_info().allowed_jm_ctx_priorities & 0x3, 0x3u);
    EXPECT_EQ(c().get_param(0xFFFF).error(), -EINVAL);
}

TEST_F(PanfrostClientTest, BoOffsetMatchesCreateAndUnknownHandlesFail) {
    MappedBo& b = new_bo();
    EXPECT_GE(b.bo.va, uint64_t{32} << 20);
    Result<uint64_t> off = c().bo_offset(b.bo.handle);
    ASSERT_TRUE(off.ok());
    EXPECT_EQ(*off, b.bo.va);
    EXPECT_EQ(c().bo_offset(999).error(), -ENOENT);
    EXPECT_EQ(c().bo_mmap_offset(999).error(), -ENOENT);
    Result<PanfrostBo> extra = c().bo_create(4096);
    ASSERT_TRUE(extra.ok());
    EXPECT_TRUE(c().bo_destroy(extra->handle).ok());
    EXPECT_EQ(c().bo_destroy(extra->handle).error(), -EINVAL);
}

TEST_F(PanfrostClientTest, WriteValueChainRunsOnSlotOneAndSignalsItsSyncobj) {
    MappedBo& b = new_bo();
    JobPool pool(mem_, b.bo.va, 32 * 1024);
    JobChain jc(mem_, c().arch());
    const uint64_t target = b.bo.va + 48 * 1024;
    for (uint32_t i = 0; i < 4; i++)
        ASSERT_GT(emit_write_value(pool, jc, target + 8 * i, desc::kWriteValueImmediate64, 0xC0DE0000 + i), 0);
    const uint32_t done = syncobj();
    JmSubmit s;
    s.jc = jc.first_job();
    s.out_sync = done;
    s.bos = {b.bo.handle};
    ASSERT_TRUE(c().submit(s).ok());
    ASSERT_TRUE(wait(done).ok());
    for (uint32_t i = 0; i < 4; i++)
        EXPECT_EQ(b.u64_at(target + 8 * i), 0xC0DE0000u + i);
    // Every job's header says DONE, and slot 1 (not FS) ran the chain: its tail is the last job.
    for (uint64_t j = jc.first_job(); j; j = reinterpret_cast<desc::JobHeader*>(mem_.cpu(j, 32))->next)
        EXPECT_EQ(reinterpret_cast<desc::JobHeader*>(mem_.cpu(j, 32))->exception_status, desc::kJobStatusDone);
    EXPECT_EQ(reg64(panfrost::JS_TAIL_LO(1)), jc.last_job());
}

TEST_F(PanfrostClientTest, InSyncOrdersAChainAfterAnotherAcrossSlots) {
    MappedBo& b = new_bo();
    JobPool pool(mem_, b.bo.va, 32 * 1024);
    const uint64_t t_first = b.bo.va + 48 * 1024, t_second = t_first + 8;
    // First chain: a long compute job, then the GPU timestamp.
    JobChain first(mem_, c().arch());
    ASSERT_GT(emit_shader_job(pool, first, desc::kJobCompute, pack_invocation(64, 1, 1, 1024, 1, 1)), 0);
    ASSERT_GT(emit_write_value(pool, first, t_first, desc::kWriteValueSystemTimestamp), 0);
    // Second chain (slot 0): the timestamp, only once the first is done.
    JobChain second(mem_, c().arch());
    ASSERT_GT(emit_write_value(pool, second, t_second, desc::kWriteValueSystemTimestamp), 0);
    const uint32_t s1 = syncobj(), s2 = syncobj();
    JmSubmit a;
    a.jc = first.first_job();
    a.out_sync = s1;
    a.bos = {b.bo.handle};
    JmSubmit bsub;
    bsub.jc = second.first_job();
    bsub.in_syncs = {s1};
    bsub.out_sync = s2;
    bsub.requirements = PANFROST_JD_REQ_FS;
    bsub.bos = {b.bo.handle};
    ASSERT_TRUE(c().submit(a).ok());
    ASSERT_TRUE(c().submit(bsub).ok());
    ASSERT_TRUE(wait(s2).ok());
    ASSERT_TRUE(wait(s1, 0).ok());
    EXPECT_NE(b.u64_at(t_first), 0u);
    EXPECT_GE(b.u64_at(t_second), b.u64_at(t_first));
    EXPECT_EQ(reg64(panfrost::JS_TAIL_LO(0)), second.last_job());
}

TEST_F(PanfrostClientTest, WaitBoPollsBusyThenSucceedsOnceTheJobIsDone) {
    MappedBo& b = new_bo();
    JobPool pool(mem_, b.bo.va, 32 * 1024);
    JobChain jc(mem_, c().arch());
    // ~10 ms of work: WAIT_BO's poll waits up to a jiffy (dma_resv_wait_timeout, as upstream).
    for (int i = 0; i < 5; i++)
        ASSERT_GT(emit_shader_job(pool, jc, desc::kJobCompute, pack_invocation(64, 1, 1, 65535, 1, 1)), 0);
    JmSubmit s;
    s.jc = jc.first_job();
    s.bos = {b.bo.handle};
    ASSERT_TRUE(c().submit(s).ok());
    EXPECT_EQ(c().bo_wait(b.bo.handle, 0).error(), -EBUSY);
    EXPECT_TRUE(c().bo_wait(b.bo.handle, c().deadline_after(2 * kSec)).ok());
    EXPECT_EQ(c().bo_wait(999, 0).error(), -ENOENT);
}

TEST_F(PanfrostClientTest, JmContextsTakeSubmitsAndRejectUnknownHandles) {
    Result<uint32_t> ctx = c().jm_ctx_create(PANFROST_JM_CTX_PRIORITY_LOW);
    ASSERT_TRUE(ctx.ok()) << ctx.error();
    EXPECT_NE(*ctx, 0u);
    EXPECT_EQ(c().jm_ctx_create(PANFROST_JM_CTX_PRIORITY_HIGH).error(), -EACCES);
    MappedBo& b = new_bo();
    JobPool pool(mem_, b.bo.va, 32 * 1024);
    JobChain jc(mem_, c().arch());
    const uint64_t target = b.bo.va + 48 * 1024;
    ASSERT_GT(emit_write_value(pool, jc, target, desc::kWriteValueImmediate32, 0x1234), 0);
    const uint32_t done = syncobj();
    JmSubmit s;
    s.jc = jc.first_job();
    s.out_sync = done;
    s.jm_ctx = *ctx;
    ASSERT_TRUE(c().submit(s).ok());
    ASSERT_TRUE(wait(done).ok());
    EXPECT_EQ(b.u64_at(target), 0x1234u);
    s.jm_ctx = 77;
    EXPECT_EQ(c().submit(s).error(), -EINVAL);
    EXPECT_TRUE(c().jm_ctx_destroy(*ctx).ok());
    EXPECT_EQ(c().jm_ctx_destroy(0).error(), -EINVAL);
}

TEST_F(PanfrostClientTest, VertexTilerThenFragmentFrameThroughQueueSubmit) {
    MappedBo& b = new_bo(128 * 1024);
    JobPool pool(mem_, b.bo.va, 96 * 1024);
    const uint64_t marks = b.bo.va + 120 * 1024;  // [0] vtc done, [1] fragment done
    const uint32_t queue_sync = syncobj(), frame_done = syncobj();
    for (int frame = 0; frame < 3; frame++) {
        pool.reset();
        JobChain vtc(mem_, c().arch()), frag(mem_, c().arch());
        for (int draw = 0; draw < 3; draw++)
            ASSERT_GT(emit_draw(pool, vtc, pack_invocation(16, 1, 1, 64, 1, 1)), 0);
        // The marker waits for every tiling job (a barrier), as the end of a batch does.
        ASSERT_GT(emit_write_value(pool, vtc, marks, desc::kWriteValueSystemTimestamp, 0, {.barrier = true}), 0);
        ASSERT_GT(emit_fragment_job(pool, frag, 0, 0, 29, 16), 0);
        ASSERT_GT(emit_write_value(pool, frag, marks + 8, desc::kWriteValueSystemTimestamp), 0);
        b.u64_at(marks) = 0;
        b.u64_at(marks + 8) = 0;

        JmBatch batch;
        batch.vtc_jc = vtc.first_job();
        batch.frag_jc = frag.first_job();
        batch.bos = {b.bo.handle};
        batch.signals = {frame_done};
        ASSERT_TRUE(c().queue_submit(batch, queue_sync).ok());
        ASSERT_TRUE(wait(frame_done).ok()) << "frame " << frame;
        EXPECT_NE(b.u64_at(marks), 0u) << frame;
        EXPECT_GE(b.u64_at(marks + 8), b.u64_at(marks)) << frame;
        // Fragment work ran on slot 0, vertex/tiler on slot 1.
        EXPECT_EQ(reg64(panfrost::JS_TAIL_LO(0)), frag.last_job()) << frame;
        EXPECT_EQ(reg64(panfrost::JS_TAIL_LO(1)), vtc.last_job()) << frame;
        for (uint64_t j = vtc.first_job(); j; j = reinterpret_cast<desc::JobHeader*>(mem_.cpu(j, 32))->next)
            EXPECT_EQ(reinterpret_cast<desc::JobHeader*>(mem_.cpu(j, 32))->exception_status, desc::kJobStatusDone);
    }
}

TEST_F(PanfrostClientTest, FaultingChainFailsItsFenceAndTheNextOneRuns) {
    MappedBo& b = new_bo();
    JobPool pool(mem_, b.bo.va, 32 * 1024);
    JobChain bad(mem_, c().arch());
    ASSERT_GT(emit_write_value(pool, bad, 0x10000, desc::kWriteValueZero), 0);
    const uint32_t s1 = syncobj();
    JmSubmit s;
    s.jc = bad.first_job();
    s.out_sync = s1;
    ASSERT_TRUE(c().submit(s).ok());
    ASSERT_TRUE(wait(s1).ok());
    EXPECT_LT(fence_status(s1), 0);  // signalled with the job's error
    JobChain good(mem_, c().arch());
    const uint64_t target = b.bo.va + 48 * 1024;
    ASSERT_GT(emit_write_value(pool, good, target, desc::kWriteValueImmediate64, 42), 0);
    const uint32_t s2 = syncobj();
    s.jc = good.first_job();
    s.out_sync = s2;
    ASSERT_TRUE(c().submit(s).ok());
    ASSERT_TRUE(wait(s2).ok());
    EXPECT_EQ(fence_status(s2), 1);
    EXPECT_EQ(b.u64_at(target), 42u);
}

}  // namespace
}  // namespace umd
