// panfrost's job slots on the mock Mali-G52: SUBMIT runs WRITE_VALUE/NULL chains built in a BO
// (through its CPU mapping, at its GPU VA), out_sync/in_sync and implicit sync, the register
// sequence of panfrost_job_hw_submit, job faults, the 500 ms timeout with its reset, growable heaps
// and unhandled MMU faults, JM contexts and the SUBMIT errnos.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "hw/jm/job_desc.h"
#include "hw/jm/regs/exceptions.h"
#include "hw/jm/regs/job_regs.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/log.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_job.h"
#include "tests/dma_fence/mock_fence.h"
#include "tests/panfrost/pf_job_fixture.h"
#include "uapi/drm/drm.h"

namespace panfrost::testing {
namespace {

using kshim::dma_fence;
using kshim::u8;
namespace desc = panfrost::desc;

constexpr u64 MiB = u64{1} << 20;

class PanfrostJobTest : public PfJobTest {};

// ---- submission ----

TEST_F(PanfrostJobTest, WriteValueJobWritesAndOutSyncSignals) {
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    const u64 jc = bo.write_value(target, 0x1122334455667788ull);
    dma_fence* done = submit_fenced({.jc = jc, .bos = {bo.handle}});
    ASSERT_NE(done, nullptr);
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(kshim::dma_fence_get_status(done), 1);
    EXPECT_EQ(bo.value(target), 0x1122334455667788ull);
    EXPECT_EQ(bo.header(jc)->exception_status, desc::kJobStatusDone) << "the GPU wrote the status back";

    // What panfrost_job_hw_submit programmed: slot 1, the file's AS, all shader cores and the
    // G52's config (flush reduction, clean+invalidate, priority 8; chain flag = seqno 1's parity).
    EXPECT_EQ(reg64(JS_HEAD_NEXT_LO(1)), jc);
    EXPECT_EQ(reg64(JS_AFFINITY_NEXT_LO(1)), pfdev->features.shader_present);
    const u32 cfg = reg(JS_CONFIG_NEXT(1));
    EXPECT_EQ(cfg & ~JS_CONFIG_AS_MASK, 0x00087300u | JS_CONFIG_JOB_CHAIN_FLAG) << std::hex << cfg;
    EXPECT_EQ(reg(JS_COMMAND_NEXT(1)), 0u) << "promoted";
    EXPECT_EQ(reg(JS_HEAD_NEXT_LO(0)), 0u) << "nothing on the fragment slot";
    EXPECT_TRUE(panfrost_jm_is_idle(pfdev));
    // The job's runtime-PM reference is gone: the GPU autosuspends again.
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanfrostJobTest, FragmentJobsGoToSlotZero) {
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    const u64 jc = bo.write_value(target, 5);
    dma_fence* done = submit_fenced({.jc = jc, .bos = {bo.handle}, .requirements = PANFROST_JD_REQ_FS});
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(bo.value(target), 5u);
    EXPECT_EQ(reg64(JS_HEAD_NEXT_LO(0)), jc);
    EXPECT_EQ(reg(JS_HEAD_NEXT_LO(1)), 0u);
}

TEST_F(PanfrostJobTest, TwoJobsRunInSubmissionOrder) {
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    // The first chain is long (50 jobs), the second short: only ordering makes the second's
    // value the last one written.
    u64 first = 0, prev = 0;
    for (int i = 0; i < 50; i++) {
        prev = bo.write_value(target, 1, prev);
        if (!first)
            first = prev;
    }
    const u64 second = bo.write_value(target, 2);
    dma_fence* a = submit_fenced({.jc = first, .bos = {bo.handle}});
    dma_fence* b = submit_fenced({.jc = second, .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(b));
    EXPECT_TRUE(kshim::dma_fence_is_signaled(a));
    EXPECT_EQ(kshim::dma_fence_get_status(a), 1);
    EXPECT_EQ(kshim::dma_fence_get_status(b), 1);
    EXPECT_EQ(bo.value(target), 2u);
}

TEST_F(PanfrostJobTest, InSyncHoldsTheJobUntilItsFenceSignals) {
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    const u64 jc = bo.write_value(target, 7);

    const u32 in = syncobj_create();
    dma_fence* gate = dma_fence_test::mock_fence(kshim::dma_fence_context_alloc(1), 1);
    drm::drm_syncobj* s = drm::drm_syncobj_find(file, in);
    ASSERT_NE(s, nullptr);
    drm::drm_syncobj_replace_fence(s, gate);
    drm::drm_syncobj_put(s);

    dma_fence* done = submit_fenced({.jc = jc, .bos = {bo.handle}, .in_syncs = {in}});
    advance(50 * kshim::NSEC_PER_MSEC);
    EXPECT_FALSE(kshim::dma_fence_is_signaled(done));
    EXPECT_EQ(bo.value(target), 0u) << "the job ran before its in_sync signalled";

    kshim::dma_fence_signal(gate);
    kshim::dma_fence_put(gate);
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(bo.value(target), 7u);
}

TEST_F(PanfrostJobTest, ImplicitSyncOrdersJobsOnASharedBoAcrossSlots) {
    // Two slots run in parallel: only the BO's reservation makes the short fragment job wait for
    // the long vertex-slot chain that writes the same word.
    JobBo bo = job_bo();
    const u64 target = bo.slot();
    // 300 jobs of 100 ns: longer than the mock's 20 us execution slice, so a job on the other
    // slot can write in between.
    u64 first = 0, prev = 0;
    for (int i = 0; i < 300; i++) {
        prev = bo.write_value(target, 1, prev);
        if (!first)
            first = prev;
    }
    const u64 second = bo.write_value(target, 2);
    dma_fence* a = submit_fenced({.jc = first, .bos = {bo.handle}});
    dma_fence* b = submit_fenced({.jc = second, .bos = {bo.handle}, .requirements = PANFROST_JD_REQ_FS});
    ASSERT_TRUE(wait_signaled(b));
    EXPECT_TRUE(kshim::dma_fence_is_signaled(a));
    EXPECT_EQ(bo.value(target), 2u) << "the fragment job did not wait for the writer before it";

    // Without the BO in the list there is no implicit dependency: the fragment job overtakes.
    const u64 first2 = first;
    for (u64 j = first2; j; j = bo.header(j)->next)
        bo.header(j)->exception_status = 0;
    bo.header(second)->exception_status = 0;
    dma_fence* c = submit_fenced({.jc = first2, .bos = {bo.handle}});
    dma_fence* d = submit_fenced({.jc = second, .requirements = PANFROST_JD_REQ_FS});
    ASSERT_TRUE(wait_signaled(c));
    ASSERT_TRUE(wait_signaled(d));
    EXPECT_EQ(bo.value(target), 1u);
}

TEST_F(PanfrostJobTest, SubmitErrnos) {
    JobBo bo = job_bo();
    const u64 jc = bo.null_job();
    EXPECT_EQ(submit({.jc = jc, .pad = 1}), -EINVAL) << "pad";
    EXPECT_EQ(submit({.jc = 0}), -EINVAL) << "jc 0";
    EXPECT_EQ(submit({.jc = jc, .requirements = 4}), -EINVAL) << "unknown requirement";
    EXPECT_EQ(submit({.jc = jc, .out_sync = 999}), -ENODEV) << "missing out_sync";
    EXPECT_EQ(submit({.jc = jc, .ctx = 5}), -EINVAL) << "unknown JM context";
    EXPECT_EQ(submit({.jc = jc, .in_syncs = {999}}), -ENOENT) << "missing in_sync";
    EXPECT_EQ(submit({.jc = jc, .in_syncs = {syncobj_create()}}), -EINVAL) << "in_sync without a fence";
    EXPECT_EQ(submit({.jc = jc, .bos = {999}}), -ENOENT) << "missing BO";
    {
        drm_panfrost_submit args{};
        args.jc = jc;
        args.bo_handles = 0x1000;  // not a registered user range
        args.bo_handle_count = 1;
        drm::UserRange r(&args, sizeof(args));
        EXPECT_EQ(drm::ioctl(file, DRM_IOCTL_PANFROST_SUBMIT, &args), -EFAULT);
    }
    dma_fence* ok = submit_fenced({.jc = jc});
    ASSERT_TRUE(wait_signaled(ok));
    EXPECT_EQ(kshim::dma_fence_get_status(ok), 1) << "no BOs, no syncs: valid";
}

TEST_F(PanfrostJobTest, CycleCountRequirementRunsTheCycleCounterDuringTheJob) {
    // Two cycle-counter samples 300 NULL jobs (30 us) apart: the counter only advances while
    // someone holds it, and the job does with PANFROST_JD_REQ_CYCLE_COUNT.
    JobBo bo = job_bo();
    const u64 t1 = bo.slot(), t2 = bo.slot();
    const u64 first = bo.write_value(t1, 0, 0, desc::kWriteValueCycleCounter);
    u64 prev = first;
    for (int i = 0; i < 300; i++)
        prev = bo.null_job(prev);
    bo.write_value(t2, 0, prev, desc::kWriteValueCycleCounter);
    dma_fence* done = submit_fenced({.jc = first, .bos = {bo.handle}, .requirements = PANFROST_JD_REQ_CYCLE_COUNT});
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(kshim::dma_fence_get_status(done), 1);
    EXPECT_GT(bo.value(t2), bo.value(t1));
    EXPECT_EQ(pfdev->cycle_counter.use_count.load(), 0) << "dropped when the job completed";
}

// ---- faults ----

TEST_F(PanfrostJobTest, AJobAlreadyDoneFailsAndTheNextJobStillRuns) {
    JobBo bo = job_bo();
    const u64 t1 = bo.slot(), t2 = bo.slot();
    const u64 bad = bo.write_value(t1, 1);
    bo.header(bad)->exception_status = desc::kJobStatusDone;  // re-execution: DATA_INVALID_FAULT
    const u64 good = bo.write_value(t2, 2);
    dma_fence* a = submit_fenced({.jc = bad, .bos = {bo.handle}});
    dma_fence* b = submit_fenced({.jc = good, .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(b));
    ASSERT_TRUE(kshim::dma_fence_is_signaled(a));
    EXPECT_EQ(kshim::dma_fence_get_status(a), -EINVAL);
    EXPECT_EQ(kshim::dma_fence_get_status(b), 1);
    EXPECT_EQ(bo.value(t1), 0u);
    EXPECT_EQ(bo.value(t2), 2u);
    EXPECT_TRUE(kshim::log_contains("js fault, js=1, status=DATA_INVALID_FAULT"));
}

TEST_F(PanfrostJobTest, EndlessJobTimesOutResetsAndTheInnocentJobCompletes) {
    // IGT's endless loop: two WRITE_VALUE jobs that zero each other's status and point at each
    // other.
    JobBo bo = job_bo();
    const u64 j1 = bo.write_value(0, 0, 0, desc::kWriteValueImmediate32);
    const u64 j2 = bo.write_value(j1, 0, j1, desc::kWriteValueImmediate32);
    bo.at<desc::WriteValuePayload>(j1 + desc::kJobPayloadOffset)->address = j2;
    bo.header(j2)->next = j1;

    // The innocent job comes from another context, so the guilty context's karma spares it.
    u32 ctx2 = 0;
    ASSERT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_MEDIUM, &ctx2), 0);
    EXPECT_EQ(ctx2, 1u);
    const u64 target = bo.slot();
    const u64 innocent = bo.write_value(target, 42);

    const kshim::ktime_t start = kshim::ktime_get();
    dma_fence* guilty = submit_fenced({.jc = j1, .bos = {bo.handle}});
    dma_fence* inn = submit_fenced({.jc = innocent, .bos = {bo.handle}, .ctx = ctx2});
    advance(400 * kshim::NSEC_PER_MSEC);
    EXPECT_FALSE(kshim::dma_fence_is_signaled(guilty)) << "no timeout before 500 ms";
    EXPECT_FALSE(kshim::dma_fence_is_signaled(inn));

    ASSERT_TRUE(wait_signaled(guilty, 2 * kshim::NSEC_PER_SEC));
    // The timeout is in jiffies: it may fire up to one tick before 500 ms after the submit.
    EXPECT_GE(kshim::ktime_get() - start, 500 * kshim::NSEC_PER_MSEC - kshim::TICK_NSEC);
    EXPECT_EQ(kshim::dma_fence_get_status(guilty), -ECANCELED);
    EXPECT_TRUE(kshim::log_contains("gpu sched timeout, js=1"));

    ASSERT_TRUE(wait_signaled(inn));
    EXPECT_EQ(kshim::dma_fence_get_status(inn), 1);
    EXPECT_EQ(bo.value(target), 42u);
    EXPECT_EQ(pfdev->reset.pending.load(), 0);
    EXPECT_EQ(reg(JOB_INT_MASK), 0x00070007u) << "interrupts back on";

    // The device still runs jobs afterwards, on the guilty context too.
    const u64 t2 = bo.slot();
    dma_fence* after = submit_fenced({.jc = bo.write_value(t2, 9), .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(after));
    EXPECT_EQ(kshim::dma_fence_get_status(after), 1);
    EXPECT_EQ(bo.value(t2), 9u);
    // The reset balanced the runtime-PM references of the jobs it collected.
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanfrostJobTest, HeapFaultGrowsTheHeapAndTheJobCompletes) {
    JobBo bo = job_bo();
    u32 heap = 0;
    u64 heap_va = 0;
    ASSERT_EQ(create_bo(4 * MiB, PANFROST_BO_NOEXEC | PANFROST_BO_HEAP, &heap, &heap_va), 0);
    const u64 jc = bo.write_value(heap_va + 2 * MiB + 0x40, 0xABCD);
    dma_fence* done = submit_fenced({.jc = jc, .bos = {bo.handle, heap}});
    ASSERT_TRUE(wait_signaled(done));

    EXPECT_EQ(kshim::dma_fence_get_status(done), 1);
    drm::drm_gem_object* obj = file->gem.lookup(heap);
    ASSERT_NE(obj, nullptr);
    panfrost_gem_object* hbo = to_panfrost_bo(obj);
    // The MMU IRQ thread finishes its bookkeeping after the flush that let the job go on.
    EXPECT_TRUE(run_until([&] { return hbo->heap_rss_size == 2 * MiB; }, kshim::NSEC_PER_MSEC))
        << "one chunk, the one written";
    ASSERT_NE(hbo->heap_chunks, nullptr);
    ASSERT_NE(hbo->heap_chunks[1], nullptr);
    EXPECT_EQ(*reinterpret_cast<u64*>(static_cast<u8*>(kshim::page_address(hbo->heap_chunks[1])) + 0x40), 0xABCDu);
    drm::drm_gem_object_put(obj);
}

TEST_F(PanfrostJobTest, UnhandledFaultFailsOnlyThatJob) {
    JobBo bo = job_bo();
    // Another file's job on the fragment slot runs meanwhile and is not affected.
    drm::drm_file* other = open_extra();
    JobBo obo = job_bo(64 * 1024, other);
    const u64 ot = obo.slot();
    u64 ofirst = 0, oprev = 0;
    for (int i = 0; i < 50; i++) {
        oprev = obo.write_value(ot, static_cast<u64>(i + 1), oprev);
        if (!ofirst)
            ofirst = oprev;
    }
    dma_fence* o = submit_fenced({.jc = ofirst, .requirements = PANFROST_JD_REQ_FS, .f = other});

    const u64 bad = bo.write_value(0x1000000, 1);  // 16 MiB: below the VA window, never mapped
    dma_fence* a = submit_fenced({.jc = bad, .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(a));
    EXPECT_EQ(kshim::dma_fence_get_status(a), -EINVAL);
    EXPECT_TRUE(kshim::log_contains("Unhandled Page fault"));

    ASSERT_TRUE(wait_signaled(o));
    EXPECT_EQ(kshim::dma_fence_get_status(o), 1);
    EXPECT_EQ(obo.value(ot), 50u);

    // The faulty AS comes back for the next job of the file.
    const u64 t = bo.slot();
    dma_fence* b = submit_fenced({.jc = bo.write_value(t, 3), .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(b));
    EXPECT_EQ(kshim::dma_fence_get_status(b), 1);
    EXPECT_EQ(bo.value(t), 3u);
}

// ---- JM contexts ----

TEST_F(PanfrostJobTest, JmContextCreateAndDestroy) {
    u32 h = 0;
    EXPECT_EQ(jm_ctx_create(3, &h), -EINVAL) << "unknown priority";
    EXPECT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_HIGH, &h), -EACCES) << "HIGH needs CAP_SYS_NICE";
    ASSERT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_LOW, &h), 0);
    EXPECT_EQ(h, 1u) << "the default context holds 0";

    JobBo bo = job_bo();
    const u64 t = bo.slot();
    dma_fence* done = submit_fenced({.jc = bo.write_value(t, 11), .bos = {bo.handle}, .ctx = h});
    ASSERT_TRUE(wait_signaled(done));
    EXPECT_EQ(bo.value(t), 11u);

    EXPECT_EQ(jm_ctx_destroy(0), -EINVAL) << "the default context is permanent";
    EXPECT_EQ(jm_ctx_destroy(h, 1), -EINVAL) << "pad";
    EXPECT_EQ(jm_ctx_destroy(7), -EINVAL) << "unknown handle";
    EXPECT_EQ(jm_ctx_destroy(h), 0);
    EXPECT_EQ(submit({.jc = bo.null_job(), .ctx = h}), -EINVAL) << "destroyed";
    EXPECT_EQ(jm_ctx_destroy(h), -EINVAL);

    // Handles 0..64: 64 more fit, the 66th context does not.
    for (u32 i = 1; i <= 64; i++)
        ASSERT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_MEDIUM, &h), 0) << i;
    EXPECT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_MEDIUM, &h), -EBUSY);
}

TEST_F(PanfrostJobTest, ClosingAFileHardStopsItsEndlessJob) {
    drm::drm_file* other = open_extra();
    JobBo bo = job_bo(64 * 1024, other);
    const u64 j1 = bo.write_value(0, 0, 0, desc::kWriteValueImmediate32);
    const u64 j2 = bo.write_value(j1, 0, j1, desc::kWriteValueImmediate32);
    bo.at<desc::WriteValuePayload>(j1 + desc::kJobPayloadOffset)->address = j2;
    bo.header(j2)->next = j1;
    dma_fence* endless = submit_fenced({.jc = j1, .bos = {bo.handle}, .f = other});
    advance(10 * kshim::NSEC_PER_MSEC);
    EXPECT_FALSE(kshim::dma_fence_is_signaled(endless));

    for (drm::VmArea* v : vmas)
        drm::drm_munmap(v);
    vmas.clear();
    drm::drm_release(other);
    extra_files.clear();
    // Hard-stopped long before any timeout.
    ASSERT_TRUE(wait_signaled(endless, 50 * kshim::NSEC_PER_MSEC));
    EXPECT_EQ(kshim::dma_fence_get_status(endless), -ECANCELED);
    EXPECT_FALSE(kshim::log_contains("gpu sched timeout"));
}

}  // namespace
}  // namespace panfrost::testing
