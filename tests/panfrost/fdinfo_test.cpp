// Job profiling and fdinfo (panfrost_show_fdinfo): with profiling on, a job that runs a known
// modelled time is accounted to its slot's engine in ns and GPU cycles; the frequencies come
// from devfreq; the memory keys from the file's BOs; without profiling no engine keys.
#include <string>

#include "drm/drm_fdinfo.h"
#include "tests/panfrost/pf_job_fixture.h"

namespace panfrost::testing {
namespace {

constexpr kshim::ktime_t kMs = kshim::NSEC_PER_MSEC;

// "key:\tvalue..." -> the value's leading number (-1 when the key is absent).
long long fdinfo_value(const std::string& text, const std::string& key) {
    const size_t at = text.find(key + ":\t");
    if (at == std::string::npos)
        return -1;
    return std::stoll(text.substr(at + key.size() + 2));
}

class PanfrostFdinfoTest : public PfJobTest {
protected:
    // A WRITE_VALUE job runs exactly 1 ms of modelled time.
    mock_jm::JmConfig jm_config() const override {
        mock_jm::JmConfig c;
        c.jm_lat.simple_job = kMs;
        return c;
    }
    void run_job(JobBo& bo, u32 requirements = 0, drm::drm_file* f = nullptr) {
        const u64 t = bo.slot();
        kshim::dma_fence* done =
            submit_fenced({.jc = bo.write_value(t, 1), .bos = {bo.handle}, .requirements = requirements, .f = f});
        ASSERT_TRUE(wait_signaled(done));
        ASSERT_EQ(kshim::dma_fence_get_status(done), 1);
    }
};

TEST_F(PanfrostFdinfoTest, WithoutProfilingOnlyFrequenciesAndMemory) {
    JobBo bo = job_bo(64 * 1024);
    run_job(bo);
    const std::string text = drm::drm_show_fdinfo(file);
    EXPECT_EQ(fdinfo_value(text, "drm-engine-vertex-tiler"), -1) << text;
    EXPECT_EQ(fdinfo_value(text, "drm-cycles-vertex-tiler"), -1);
    EXPECT_EQ(fdinfo_value(text, "drm-maxfreq-fragment"), 800'000'000) << text;
    EXPECT_EQ(fdinfo_value(text, "drm-maxfreq-vertex-tiler"), 800'000'000);
    EXPECT_EQ(fdinfo_value(text, "drm-curfreq-fragment"), static_cast<long long>(pfdev->pfdevfreq.current_frequency));
    EXPECT_NE(text.find("drm-curfreq-vertex-tiler:\t"), std::string::npos);
    EXPECT_EQ(text.find("compute-only"), std::string::npos) << "the compute-only slot is not shown";
    EXPECT_EQ(fdinfo_value(text, "drm-total-memory"), 64) << text;  // KiB
    EXPECT_NE(text.find("drm-total-memory:\t64 KiB"), std::string::npos);
}

TEST_F(PanfrostFdinfoTest, ProfiledJobsAccountTimeAndCyclesPerEngine) {
    pfdev->profile_mode.store(true);
    JobBo bo = job_bo();
    run_job(bo);
    std::string text = drm::drm_show_fdinfo(file);
    const long long ns = fdinfo_value(text, "drm-engine-vertex-tiler");
    // The job ran 1 ms on the hardware; START to the IRQ adds the IRQ latency only.
    EXPECT_GE(ns, 1'000'000) << text;
    EXPECT_LT(ns, 1'100'000) << text;
    // The cycle counter runs at the mock's 800 MHz GPU clock.
    const long long cycles = fdinfo_value(text, "drm-cycles-vertex-tiler");
    EXPECT_GE(cycles, 800'000);
    EXPECT_LE(cycles, ns * 8 / 10 + 1);
    EXPECT_EQ(fdinfo_value(text, "drm-engine-fragment"), 0);
    EXPECT_EQ(fdinfo_value(text, "drm-cycles-fragment"), 0);

    // A fragment job counts on the fragment engine; the vertex-tiler one keeps its total.
    run_job(bo, PANFROST_JD_REQ_FS);
    text = drm::drm_show_fdinfo(file);
    EXPECT_GE(fdinfo_value(text, "drm-engine-fragment"), 1'000'000);
    EXPECT_EQ(fdinfo_value(text, "drm-engine-vertex-tiler"), ns);

    // Another file's jobs are its own.
    drm::drm_file* other = open_extra();
    JobBo obo = job_bo(64 * 1024, other);
    run_job(obo, 0, other);
    EXPECT_EQ(fdinfo_value(drm::drm_show_fdinfo(file), "drm-engine-vertex-tiler"), ns);
    EXPECT_GE(fdinfo_value(drm::drm_show_fdinfo(other), "drm-engine-vertex-tiler"), 1'000'000);

    // Profiling off: jobs are not accounted (and the keys go).
    pfdev->profile_mode.store(false);
    run_job(bo);
    pfdev->profile_mode.store(true);
    EXPECT_EQ(fdinfo_value(drm::drm_show_fdinfo(file), "drm-engine-vertex-tiler"), ns);
    // The cycle counter was only held while the jobs ran.
    EXPECT_EQ(pfdev->cycle_counter.use_count.load(), 0);
}

}  // namespace
}  // namespace panfrost::testing
