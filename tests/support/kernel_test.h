// The GoogleTest fixture for kernel code: a runtime per test (simulated by default) whose main
// task is the test body, KUnit-style test-managed resources (kernel_shim/kunit/resource.h), and
// the end-of-test checks that make a test fail on leaked objects, lockdep/might_sleep/WARN
// reports, or tasks still blocked.
#pragma once
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "host/run_checks.h"
#include "kernel_shim/kunit/resource.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"

namespace kshim::testing {

// A runtime, the test's resources, plus the checks. While the world lives its `kunit` is the
// current test (kunit_get_current_test). finish() (or the destructor) first releases the test's
// resources (kunit_cleanup, newest first, in the main task so an action may block), then drains
// the runtime and reports every problem as a non-fatal gtest failure, then prints the seed to
// replay with if anything failed.
class TestWorld {
public:
    explicit TestWorld(RuntimeOptions opts);
    ~TestWorld();
    TestWorld(const TestWorld&) = delete;
    TestWorld& operator=(const TestWorld&) = delete;

    Runtime& rt() { return *rt_; }
    kunit* test() { return test_.get(); }
    void finish();

private:
    std::unique_ptr<Runtime> rt_;
    std::unique_ptr<kunit> test_;
    kunit* prev_test_ = nullptr;
    upanthor::host::RunChecks checks_;  // the mark taken before the world, and the end-of-test checks
    bool finished_ = false;
};

// Runs body as the main task of a fresh simulated runtime with `seed`, then checks the world.
// The body's `kunit` is kunit_get_current_test().
void run_simulated(u64 seed, const std::function<void()>& body, double preempt_probability = 0.0);

class KernelTest : public ::testing::Test {
protected:
    // Override to choose the mode, seed, preemption or tracing of a fixture. KSHIM_SEED and
    // KSHIM_TRACE always apply; KSHIM_PREEMPT only to fixtures whose tests hold under any
    // interleaving (a test that asserts "still pending right after queueing" does not).
    virtual RuntimeOptions runtime_options() const {
        RuntimeOptions o = options_from_env({});
        if (!interleaving_agnostic())
            o.preempt_probability = 0.0;
        return o;
    }
    virtual bool interleaving_agnostic() const { return false; }

    void SetUp() override;
    void TearDown() override;

    // The test's handle, as upstream's `struct kunit *test`: kunit_kzalloc(test, ...),
    // kunit_add_action(test, ...), drm_mock_sched_new(test, ...). Released at TearDown (also
    // after a failed ASSERT_), before the leak checks.
    kunit* test = nullptr;

    Runtime& rt() { return world_->rt(); }
    bool advance_until_idle(ktime_t limit = 600 * NSEC_PER_SEC) { return rt().advance_until_idle(limit); }
    bool run_pending() { return rt().run_pending(); }
    void advance(ktime_t d) { rt().advance(d); }
    bool run_until(const std::function<bool()>& pred, ktime_t timeout) { return rt().run_until(pred, timeout); }
    // Consumes the first pending report of `kind` (so teardown does not fail on it).
    bool expect_report(ReportKind kind) { return consume_report(kind); }

private:
    std::unique_ptr<TestWorld> world_;
};

class RealKernelTest : public KernelTest {
protected:
    RuntimeOptions runtime_options() const override {
        RuntimeOptions o = options_from_env({});
        o.mode = Mode::Real;
        return o;
    }
};

// A simulated fixture whose tests must pass under any interleaving: seeded sweeps with
// KSHIM_PREEMPT=<probability> explore them.
class SweepableKernelTest : public KernelTest {
protected:
    bool interleaving_agnostic() const override { return true; }
};

}  // namespace kshim::testing
