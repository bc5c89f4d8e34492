// panfrost on the real-thread runtime (label real; the tsan preset runs it under
// ThreadSanitizer): two threads submit jobs to both job slots panfrost uses while an endless job
// of a third context times out and the reset runs in the middle of their submissions; the IRQ
// threads, the schedulers, the reset work and the mock GPU's timers run on OS threads.
#include <vector>

#include "kernel_shim/kthread.h"
#include "kernel_shim/log.h"
#include "kernel_shim/sched.h"
#include "tests/panfrost/pf_job_fixture.h"

namespace panfrost::testing {
namespace {

class PanfrostReal : public PfJobTest {
protected:
    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o = kshim::options_from_env({});
        o.mode = kshim::Mode::Real;
        return o;
    }
};

constexpr u32 kThreads = 2;
constexpr u32 kJobs = 16;

TEST_F(PanfrostReal, TwoThreadsSubmitToBothSlotsAcrossATimeoutAndReset) {
    // No coredump: its 5-minute expiry timer would keep the runtime busy at teardown.
    pfdev->dump_core.store(false);
    JobBo bo = job_bo(256 * 1024);
    u32 guilty_ctx = 0, ctx1 = 0;
    ASSERT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_MEDIUM, &guilty_ctx), 0);
    ASSERT_EQ(jm_ctx_create(PANFROST_JM_CTX_PRIORITY_MEDIUM, &ctx1), 0);

    // Everything the threads submit is laid out and its syncobj created beforehand: the threads
    // only call SUBMIT.
    struct Job {
        u64 jc = 0;
        u64 target = 0;
        u64 value = 0;
        u32 requirements = 0;
        u32 syncobj = 0;
    };
    std::vector<Job> jobs(kThreads * kJobs);
    for (u32 t = 0; t < kThreads; t++) {
        for (u32 k = 0; k < kJobs; k++) {
            Job& j = jobs[t * kJobs + k];
            j.target = bo.slot();
            j.value = 1000 * (t + 1) + k;
            j.jc = bo.write_value(j.target, j.value);
            j.requirements = (k % 2) ? PANFROST_JD_REQ_FS : 0;  // slot 0 and slot 1 in turn
            drm_syncobj_create sc{};
            drm::UserRange r(&sc, sizeof(sc));
            ASSERT_EQ(drm::ioctl(file, DRM_IOCTL_SYNCOBJ_CREATE, &sc), 0);
            j.syncobj = sc.handle;
        }
    }

    kshim::dma_fence* guilty = submit_fenced({.jc = bo.endless(), .bos = {bo.handle}, .ctx = guilty_ctx});
    ASSERT_NE(guilty, nullptr);

    std::vector<int> rets(jobs.size(), 1);
    std::vector<kshim::Task*> tasks;
    for (u32 t = 0; t < kThreads; t++) {
        tasks.push_back(kshim::kthread_run(
            [&, t] {
                for (u32 k = 0; k < kJobs; k++) {
                    Job& j = jobs[t * kJobs + k];
                    u32 handles[1] = {bo.handle};
                    drm_panfrost_submit args{};
                    args.jc = j.jc;
                    args.out_sync = j.syncobj;
                    args.bo_handles = drm::user_ptr(handles);
                    args.bo_handle_count = 1;
                    args.requirements = j.requirements;
                    args.jm_ctx_handle = t ? ctx1 : 0;
                    drm::UserRange r(&args, sizeof(args));
                    drm::UserRange rh(handles, sizeof(handles));
                    rets[t * kJobs + k] = drm::ioctl(file, DRM_IOCTL_PANFROST_SUBMIT, &args);
                    // Spread the submissions over the 500 ms timeout of the endless job.
                    kshim::msleep(40);
                }
                return 0;
            },
            "submitter"));
    }
    for (kshim::Task* task : tasks)
        kshim::kthread_stop(task);

    for (size_t i = 0; i < jobs.size(); i++)
        EXPECT_EQ(rets[i], 0) << i;
    ASSERT_TRUE(wait_signaled(guilty, 5 * kshim::NSEC_PER_SEC));
    EXPECT_EQ(kshim::dma_fence_get_status(guilty), -ECANCELED);
    EXPECT_TRUE(kshim::log_contains("gpu sched timeout, js=1"));
    for (size_t i = 0; i < jobs.size(); i++) {
        kshim::dma_fence* f = nullptr;
        ASSERT_EQ(drm::drm_syncobj_find_fence(file, jobs[i].syncobj, 0, 0, &f), 0) << i;
        fences.push_back(f);
        ASSERT_TRUE(wait_signaled(f, 5 * kshim::NSEC_PER_SEC)) << i;
        EXPECT_EQ(kshim::dma_fence_get_status(f), 1) << "innocent job " << i;
        EXPECT_EQ(__atomic_load_n(bo.at<u64>(jobs[i].target), __ATOMIC_ACQUIRE), jobs[i].value) << i;
    }
    EXPECT_EQ(pfdev->reset.pending.load(), 0);
    EXPECT_TRUE(wait_autosuspend());
}

}  // namespace
}  // namespace panfrost::testing
