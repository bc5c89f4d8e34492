// `upanthor run`: executes a validated scenario (scenario.h) against the panthor driver hosted
// in-process on the mock GPU and the simulated runtime. (No upstream counterpart.)
//
// DOC: The runner boots a device built from the scenario's [gpu], opens one DRM file per client and
// drives everything through the umd client library (the same ioctls a UMD issues): VMs, BOs (filled
// through their CPU mapping), tiler heaps, groups, syncobjs. Each job becomes a command stream in a
// per-VM runner BO, ending with a SYNC_ADD64 on the queue's progress object (what `wait` jobs
// wait on). Submissions are issued at their virtual times; each one signals a binary syncobj of
// its own, the job's done fence, whose signal time gives the submit-to-done latency. The run ends
// when every job is done or duration_us has passed; then the expectations are checked.
//
// Job streams: compute/hang/fault_access run a MockShader (Run with the duration / Hang / Access
// at the address) with RUN_COMPUTE; store is MOVE+STORE; wait is SYNC_WAIT64 GREATER value-1 on
// the waited queue's progress object (same instance index when that group has as many
// instances, else instance 0); asm is the parsed instructions with @bo resolved;
// tiler_fragment is HEAP_SET, a RUN_IDVS whose shader takes `chunks` heap chunks, FINISH_TILING,
// then RUN_FRAGMENT and FINISH_FRAGMENT returning the pass's chunks (the first stream using a heap
// also seeds the mock context's free list). Faults other than BootFail are added after boot, their
// at_us counted from the start of the workload.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "mock_hw/fault_plan.h"

namespace upanthor {

namespace scenario {
struct Scenario;
}

struct RunOptions {
    std::optional<std::uint64_t> seed;  // overrides the scenario's
    std::string trace_path;             // non-empty: write a Perfetto/Chrome JSON trace there
    std::string coredump_dir;           // non-empty: each devcoredump taken as a text file there
    bool json = false;
    // Faults added on top of the scenario's (`--inject`), with the same meaning as its [[fault]]s.
    std::vector<mock_hw::FaultSpec> injects;
    bool real = false;  // the real-thread runtime instead of the simulated one (not deterministic)
    // Simulated mode: the chance that a preemption point switches tasks (sweeps explore
    // interleavings with it; 0 runs the seed's plain schedule).
    double preempt_probability = 0.0;
    // Progress lines on `progress_out` while a long run goes on (nullptr: none).
    std::FILE* progress_out = nullptr;
};

// What one run gave: passed iff nothing failed to set up, every expectation held and the kernel
// side's checks found nothing (no leak, WARN, lockdep or fence report, no task left blocked).
struct RunOutcome {
    bool passed = false;
    std::uint64_t seed = 0;
    std::string setup_error;
    std::vector<std::string> failures;  // "file:line: expectation failed: ..." and "kernel: ..." lines
    std::int64_t virtual_ns = 0;
    double wall_s = 0.0;
};

// Runs a validated scenario once. With `report_out` set, writes the summary there (text, or JSON
// when opts.json).
RunOutcome run_scenario(const scenario::Scenario& s, const RunOptions& opts, std::FILE* report_out);

// The `run` subcommand: 0 when every expectation holds, 1 when one does not (or the run could not
// be set up), 2 when the file or an `inject_specs` entry (scenario::parse_inject) is malformed
// (diagnostics go to `err`; nothing runs).
int cmd_run(const std::string& path, RunOptions opts, const std::vector<std::string>& inject_specs, std::FILE* out,
            std::FILE* err);

}  // namespace upanthor
