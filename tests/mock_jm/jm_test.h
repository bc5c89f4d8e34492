// The fixture of the mock Mali-G52 tests: a powered-up G52, AS 1 enabled on hand-built Mali-LPAE
// tables, and a job arena mapped in them (testkit/jm_gpu_helpers.h).
#pragma once
#include <gtest/gtest.h>

#include <memory>

#include "testkit/jm_gpu_helpers.h"
#include "tests/support/kernel_test.h"

namespace mock_jm::testing {

using namespace panfrost;
using namespace panfrost::desc;

class JmTest : public kshim::testing::KernelTest {
protected:
    static constexpr u32 kAs = 1;
    static constexpr u64 kArenaVa = 0x10000000;
    static constexpr size_t kArenaSize = 1 << 20;

    // Builds the GPU; tests that want another configuration call it again before using it.
    void make_gpu(JmConfig cfg = {}) {
        arena_.reset();
        pt_.reset();
        drv_.reset();
        gpu_.reset();
        gpu_ = std::make_unique<JmGpu>(std::move(cfg));
        drv_ = std::make_unique<JmDrv>(JmDrv{*gpu_});
        pt_ = std::make_unique<MaliPageTables>();
        arena_ = std::make_unique<JobArena>(*pt_, kArenaVa, kArenaSize);
    }
    void SetUp() override {
        KernelTest::SetUp();
        make_gpu();
    }
    void TearDown() override {
        arena_.reset();
        pt_.reset();
        drv_.reset();
        gpu_.reset();
        KernelTest::TearDown();
    }

    JmGpu& gpu() { return *gpu_; }
    JmDrv& d() { return *drv_; }
    MaliPageTables& pt() { return *pt_; }
    JobArena& arena() { return *arena_; }

    bool wait(const std::function<bool()>& pred, kshim::ktime_t timeout = 100 * NSEC_PER_MSEC) {
        return run_until(pred, timeout);
    }
    WaitFn waiter() {
        return [this](const std::function<bool()>& p) { return wait(p); };
    }
    // Power on every domain and enable kAs on the tables: what panfrost does before a first job.
    void bring_up() {
        ASSERT_TRUE(jm_power_on(d(), waiter()));
        ASSERT_TRUE(jm_as_enable(d(), kAs, pt().transtab(), waiter()));
    }
    void submit(u32 js, u64 head, bool chain_flag = false) { jm_submit(d(), js, head, jm_js_config(kAs, chain_flag)); }
    // Waits for the slot's DONE or FAIL bit; returns JS_STATUS.
    u32 wait_slot(u32 js, kshim::ktime_t timeout = 100 * NSEC_PER_MSEC) {
        EXPECT_TRUE(wait([&] { return d().r(JOB_INT_RAWSTAT) & MK_JS_MASK(js); }, timeout)) << "JS" << js;
        return d().r(JS_STATUS(js));
    }
    u32 run_chain(u32 js, u64 head) { return run_chain(js, head, jm_js_config(kAs)); }
    // Submits with an explicit JS_CONFIG, waits for DONE or FAIL, clears it; returns JS_STATUS.
    u32 run_chain(u32 js, u64 head, u32 config) {
        jm_submit(d(), js, head, config);
        const u32 status = wait_slot(js);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(js));
        return status;
    }

private:
    std::unique_ptr<JmGpu> gpu_;
    std::unique_ptr<JmDrv> drv_;
    std::unique_ptr<MaliPageTables> pt_;
    std::unique_ptr<JobArena> arena_;
};

}  // namespace mock_jm::testing
