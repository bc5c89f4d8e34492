// Two paths of the job slots without a test elsewhere: the job waiting in a slot's NEXT
// registers when its JM context is destroyed (cancelled before it starts, the running job of
// another context untouched), and a stuck AS_ACTIVE during an AS command (the MMU gives up
// waiting, logs it and schedules a GPU reset, after which jobs run again).
#include "hw/jm/regs/job_regs.h"
#include "kernel_shim/log.h"
#include "mock_hw/fault_plan.h"
#include "panfrost/panfrost_job.h"
#include "tests/panfrost/pf_job_fixture.h"

namespace panfrost::testing {
namespace {

constexpr kshim::ktime_t kMs = kshim::NSEC_PER_MSEC;

class PanfrostJobCancelTest : public PfJobTest {
protected:
    // 1 ms per WRITE_VALUE job: a chain of a few keeps the slot's current job busy long enough for
    // the next one to sit in NEXT.
    mock_jm::JmConfig jm_config() const override {
        mock_jm::JmConfig c;
        c.jm_lat.simple_job = kMs;
        return c;
    }
};

TEST_F(PanfrostJobCancelTest, DestroyingAContextCancelsItsJobInNext) {
    JobBo bo = job_bo();
    const u64 running_target = bo.slot();
    u64 head = 0, prev = 0;
    for (u64 i = 1; i <= 20; i++) {
        prev = bo.write_value(running_target, i, prev);
        if (!head)
            head = prev;
    }
    const u64 queued_target = bo.slot();
    const u64 queued_jc = bo.write_value(queued_target, 0x77);

    u32 ctx = 0;
    ASSERT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_MEDIUM, &ctx), 0);
    kshim::dma_fence* running = submit_fenced({.jc = head, .bos = {bo.handle}});
    kshim::dma_fence* queued = submit_fenced({.jc = queued_jc, .bos = {bo.handle}, .ctx = ctx});
    // Both on slot 1: the default context's chain current, the other context's job in NEXT.
    ASSERT_TRUE(run_until([&] { return pfdev->jobs[1][1] != nullptr; }, 5 * kMs));
    EXPECT_EQ(reg(JS_COMMAND_NEXT(1)), JS_COMMAND_START) << "armed in NEXT";
    EXPECT_EQ(reg64(JS_HEAD_NEXT_LO(1)), queued_jc);

    ASSERT_EQ(jm_ctx_destroy(ctx), 0);
    // NOP disarmed NEXT; the hard stop carried the queued job's chain flag, which the running
    // chain does not have.
    EXPECT_EQ(reg(JS_COMMAND_NEXT(1)), 0u) << "cancelled before it started";
    EXPECT_EQ(pfdev->jobs[1][1]->jc, 0u) << "never restarted";

    ASSERT_TRUE(wait_signaled(running, 100 * kMs));
    EXPECT_EQ(kshim::dma_fence_get_status(running), 1) << "the other context's chain ran to its end";
    EXPECT_EQ(bo.value(running_target), 20u);
    ASSERT_TRUE(wait_signaled(queued, 10 * kMs)) << "the cancelled job is retired with the running one";
    // As upstream: the slot goes idle with the cancelled job still recorded, which the IRQ
    // handler takes for a second DONE merged into the first, so its fence carries no error.
    EXPECT_EQ(kshim::dma_fence_get_status(queued), 1);
    EXPECT_EQ(bo.value(queued_target), 0u) << "the cancelled job never ran";
    EXPECT_EQ(bo.header(queued_jc)->exception_status, 0u) << "no status written back";
    EXPECT_TRUE(panfrost_jm_is_idle(pfdev));
    EXPECT_EQ(pfdev->pfdevfreq.busy_count, 0);
    EXPECT_TRUE(wait_autosuspend()) << "both jobs' runtime-PM references dropped";
}

TEST_F(PanfrostJobCancelTest, ClosingTheFileCancelsItsJobInNext) {
    drm::drm_file* other = open_extra();
    JobBo bo = job_bo();
    const u64 running_target = bo.slot();
    u64 head = 0, prev = 0;
    for (u64 i = 1; i <= 20; i++) {
        prev = bo.write_value(running_target, i, prev);
        if (!head)
            head = prev;
    }
    JobBo obo = job_bo(64 * 1024, other);
    const u64 queued_target = obo.slot();
    const u64 queued_jc = obo.write_value(queued_target, 0x77);
    kshim::dma_fence* running = submit_fenced({.jc = head, .bos = {bo.handle}});
    kshim::dma_fence* queued = submit_fenced({.jc = queued_jc, .bos = {obo.handle}, .f = other});
    ASSERT_TRUE(run_until([&] { return pfdev->jobs[1][1] != nullptr; }, 5 * kMs));

    // Close the other file (panfrost_jm_close destroys its contexts).
    for (size_t i = 1; i < vmas.size(); i++)
        drm::drm_munmap(vmas[i]);
    vmas.resize(1);
    drm::drm_release(other);
    extra_files.clear();
    EXPECT_EQ(reg(JS_COMMAND_NEXT(1)), 0u);

    ASSERT_TRUE(wait_signaled(running, 100 * kMs));
    EXPECT_EQ(kshim::dma_fence_get_status(running), 1);
    EXPECT_EQ(bo.value(running_target), 20u);
    ASSERT_TRUE(wait_signaled(queued, 10 * kMs));
    EXPECT_TRUE(panfrost_jm_is_idle(pfdev));
    EXPECT_FALSE(kshim::log_contains("gpu sched timeout"));
}

TEST_F(PanfrostJobCancelTest, StuckAsActiveSchedulesAReset) {
    JobBo bo = job_bo();
    // The first AS command panfrost issues (binding the file's VM for the job) never finishes.
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::AsActiveStuck;
    const int id = gpu().faults().add(spec);

    const u64 t = bo.slot();
    kshim::dma_fence* f = submit_fenced({.jc = bo.write_value(t, 5), .bos = {bo.handle}});
    // The next command waits 100 ms for AS_ACTIVE to clear, gives up and schedules a reset.
    ASSERT_TRUE(run_until([&] { return kshim::log_contains("AS_ACTIVE bit stuck"); }, 500 * kMs));
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    // The reset recovers the GPU: the job completes (resubmitted) and later jobs run.
    ASSERT_TRUE(wait_signaled(f, 2 * kshim::NSEC_PER_SEC));
    EXPECT_EQ(pfdev->reset.pending.load(), 0) << "the reset ran";
    const u64 t2 = bo.slot();
    kshim::dma_fence* g = submit_fenced({.jc = bo.write_value(t2, 6), .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(g, 100 * kMs));
    EXPECT_EQ(kshim::dma_fence_get_status(g), 1);
    EXPECT_EQ(bo.value(t2), 6u);
}

}  // namespace
}  // namespace panfrost::testing
