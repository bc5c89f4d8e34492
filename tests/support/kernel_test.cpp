// The end-of-test checks (docs/conventions.md, Checks): nothing leaked, nothing reported, nobody
// stuck.
#include "tests/support/kernel_test.h"

#include <cstdio>

#include "kernel_shim/log.h"
#include "kernel_shim/sim_abort.h"

namespace kshim::testing {

TestWorld::TestWorld(RuntimeOptions opts) {
    take_reports();  // a fresh start: nothing from before this world counts against it
    log_clear();
    before_ = mem_counters();
    rt_ = std::make_unique<Runtime>(std::move(opts));
}

TestWorld::~TestWorld() { finish(); }

void TestWorld::finish() {
    if (finished_) return;
    finished_ = true;
    const u64 seed = rt_->seed();
    const bool simulated = rt_->mode() == Mode::Simulated;
    bool found = false;  // this world found a problem (also when a test intercepts the failure)
    bool idle = false;
    try {
        idle = rt_->run_until_idle();
    } catch (const SimAbort&) {
    }
    if (!idle) {
        found = true;
        ADD_FAILURE() << "the runtime did not go idle at the end of the test (a periodic timer or work?)";
    }
    for (const std::string& s : rt_->stuck_tasks()) {
        found = true;
        ADD_FAILURE() << "task still blocked at the end of the test: " << s;
    }
    rt_.reset();
    std::string leaks = mem_counters_diff(before_, mem_counters());
    if (!leaks.empty()) {
        found = true;
        ADD_FAILURE() << "leaked at the end of the test:\n" << leaks;
    }
    for (const Report& r : take_reports()) {
        found = true;
        ADD_FAILURE() << "kshim report [" << report_kind_name(r.kind) << "]: " << r.title << "\n" << r.detail;
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

void KernelTest::SetUp() { world_ = std::make_unique<TestWorld>(runtime_options()); }

void KernelTest::TearDown() { world_.reset(); }

}  // namespace kshim::testing
