// The end-of-test checks (docs/conventions.md, Checks): the host library's, as every host runs
// them, reported as test failures: nothing leaked, nothing reported, nobody stuck.
#include "tests/support/kernel_test.h"

#include <cstdio>

#include "kernel_shim/log.h"
#include "kernel_shim/sim_abort.h"

namespace kshim::testing {

TestWorld::TestWorld(RuntimeOptions opts) {
    // checks_ took its mark: a fresh start, nothing from before this world counts against it.
    rt_ = std::make_unique<Runtime>(std::move(opts));
    test_ = std::make_unique<kunit>(::testing::UnitTest::GetInstance()->current_test_info()
                                        ? ::testing::UnitTest::GetInstance()->current_test_info()->name()
                                        : "kunit");
    prev_test_ = kunit_set_current_test(test_.get());
}

TestWorld::~TestWorld() {
    finish();
}

void TestWorld::finish() {
    if (finished_)
        return;
    finished_ = true;
    const u64 seed = rt_->seed();
    const bool simulated = rt_->mode() == Mode::Simulated;
    bool found = false;  // this world found a problem (also when a test intercepts the failure)
    bool idle = false;
    // The test's resources go first, as upstream's kunit_cleanup right after the test case
    // returns: they are no leak, and what they release (a scheduler's fini, an entity's destroy)
    // may leave work for the drain. Work that registers more while draining is released after.
    for (int round = 0; round < 2; round++) {
        try {
            kunit_cleanup(test_.get());
        } catch (const SimAbort&) {
            found = true;
            ADD_FAILURE() << "simulation deadlock while releasing the test's resources (see the report above)";
        }
        try {
            idle = rt_->advance_until_idle();
        } catch (const SimAbort&) {
        }
        if (!kunit_resource_count(test_.get()))
            break;
    }
    kunit_set_current_test(prev_test_);
    // The drain above went as far as it could: what is left is a problem (not idle, blocked
    // tasks, reports), then leaks once the runtime is gone.
    upanthor::host::CheckOptions opts;
    opts.when = "at the end of the test";
    std::vector<upanthor::host::Problem> problems = upanthor::host::RunChecks::leftovers(*rt_, idle, opts);
    test_.reset();  // releases what work registered in the last drain, if anything
    rt_.reset();
    for (upanthor::host::Problem& p : checks_.leaks(opts))
        problems.push_back(std::move(p));
    for (upanthor::host::Problem& p : upanthor::host::RunChecks::reports(opts))
        problems.push_back(std::move(p));
    for (const upanthor::host::Problem& p : problems) {
        found = true;
        ADD_FAILURE() << p.text;
    }
    if (found || ::testing::Test::HasFailure())
        std::fprintf(stderr, "[kshim] %s mode, replay with KSHIM_SEED=%llu\n", simulated ? "simulated" : "real",
                     static_cast<unsigned long long>(seed));
}

void run_simulated(u64 seed, const std::function<void()>& body, double preempt_probability) {
    RuntimeOptions o;
    o.seed = seed;
    o.preempt_probability = preempt_probability;
    TestWorld w(o);
    try {
        body();
    } catch (const SimAbort&) {
        ADD_FAILURE() << "simulation deadlock (see the report above)";
    }
}

void KernelTest::SetUp() {
    world_ = std::make_unique<TestWorld>(runtime_options());
    test = world_->test();
}

void KernelTest::TearDown() {
    world_.reset();
    test = nullptr;
}

}  // namespace kshim::testing
