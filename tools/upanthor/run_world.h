// `upanthor run`: the run skeleton that the CSF runner (runner.cpp) and the Job Manager runner
// (jm_runner.cpp) share, so that both models get the same seed rule, the same host world, the same
// boot-fault arming and the same end-of-run checks. (No upstream counterpart.)
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "host/world.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/fault_plan.h"
#include "tools/upanthor/runner.h"
#include "tools/upanthor/scenario.h"

namespace upanthor::run_detail {

// The simulator's own speed (virtual vs. wall time); the driver never sees this clock.
double wall_seconds();

// The run's seed: --seed, else the scenario's, else 1.
std::uint64_t run_seed(const scenario::Scenario& s, const RunOptions& opts);

// The runtime of one run: its seed, the simulated or real mode, the preemption chance, the trace.
kshim::RuntimeOptions runtime_options(const RunOptions& opts, std::uint64_t seed);

// What a runner does inside its world (run_in_world); each step sees the model's own platform.
struct WorldSteps {
    // The world did not boot: records the step that failed and its errno; returns the run's rc.
    std::function<int(const std::string& step, int err)> fail_setup;
    // The fault plan of the machine's GPU. The scenario's BootFail faults are armed there before
    // setup, because setup probes the driver and that is when they fire.
    std::function<mock_hw::FaultPlan&(host::Machine&)> faults;
    // Probes the driver and creates the scenario's objects: 0, or 1 with the error recorded.
    std::function<int(host::Machine&)> setup;
    // The workload, only after a successful setup: 0, or 1.
    std::function<int(host::World&)> drive;
    // Releases what setup and drive took (also after a failed setup), before the world ends.
    std::function<void()> teardown;
};

// Builds the host's world for `machine` (the runtime, the GPU model with its driver module loaded
// but not probed) and runs `steps` in it. The end-of-run checks count only against this run
// (nothing from before the world), so a deadlock the simulation aborts on (SimAbort) and what
// world.finish() finds (leaks, WARNs, lockdep, tasks left blocked) become `kernel_findings`.
// Returns 0, or 1 when a step failed or the simulation aborted.
int run_in_world(const kshim::RuntimeOptions& ro, const host::Machine::Options& machine, const scenario::Scenario& s,
                 const WorldSteps& steps, std::vector<std::string>* kernel_findings);

// Adds the scenario's and --inject faults other than BootFail once the workload starts: their
// at_us count from `t0`, the start of the workload. Returns their ids in `plan`.
std::vector<int> add_workload_faults(mock_hw::FaultPlan& plan, const scenario::Scenario& s, const RunOptions& opts,
                                     std::int64_t t0);

// One instance of a submission at its time: (virtual µs from the start of the workload,
// submission, instance).
struct TimedSubmit {
    std::uint64_t t_us;
    std::size_t sub;
    std::uint32_t inst;
};

// The instances of `subs` (a scenario's [[submit]]s or [[jm_submit]]s: start_us, count, every_us)
// in time order, ties in the order of the file.
template <class Submission>
std::vector<TimedSubmit> submission_schedule(const std::vector<Submission>& subs) {
    std::vector<TimedSubmit> evs;
    for (std::size_t i = 0; i < subs.size(); i++)
        for (std::uint32_t k = 0; k < subs[i].count; k++)
            evs.push_back({subs[i].start_us + k * subs[i].every_us, i, k});
    std::stable_sort(evs.begin(), evs.end(),
                     [](const TimedSubmit& a, const TimedSubmit& b) { return a.t_us < b.t_us; });
    return evs;
}

// The workload from `t0`: issues each of `schedule` at t0 + its time through `submit` (none past
// the end: duration_us after t0, or kMaxRunNs without one), then runs until `all_done` or the end.
// The waiting goes in slices of the same virtual length whether or not `progress` (optional) is
// called after each, so a long run can report without changing its schedule. 0, or 1 when
// `submit` failed.
int run_workload(kshim::Runtime& rt, const scenario::Scenario& s, std::int64_t t0,
                 const std::vector<TimedSubmit>& schedule, const std::function<int(std::size_t, std::uint32_t)>& submit,
                 const std::function<bool()>& all_done,
                 const std::function<void(std::int64_t now, std::int64_t end)>& progress);

// Runs `runner` once and writes its summary to `report_out` when set: text, or JSON with
// opts.json. The CSF and Job Manager runners have the same interface for this.
template <class R>
RunOutcome run_and_report(R& runner, const RunOptions& opts, std::FILE* report_out) {
    runner.run();
    if (report_out) {
        if (opts.json)
            runner.report_json(report_out);
        else
            runner.report(report_out);
    }
    return runner.outcome();
}

}  // namespace upanthor::run_detail
