// `upanthor replay`: a session captured by the preload library (UPANTHOR_CAPTURE, docs/capture.md)
// replayed in-process on the simulated runtime. (No upstream counterpart.)
//
// DOC: The replay boots the same world `upanthor run` does (host::World, the g610 model, the
// driver probed), with its own descriptor table. Each captured thread becomes a kernel thread
// that issues its thread's calls in order; a call starts only once every call that had returned
// before it started (in the capture) has returned here, so happens-before between threads holds
// and a blocking wait is woken by the same call that woke it live. Each call is rebuilt from the
// record: fresh buffers for the argument and everything behind its pointers, GEM handles, VM ids,
// group and heap handles, syncobjs and descriptors mapped from the capture's values to this run's
// (learnt from the outputs of the calls that made them), fake mmap offsets likewise, SYNCOBJ wait
// timeouts shifted to the simulated clock (the same time after the call's start). Before a
// GROUP_SUBMIT or VM_BIND the file's BO pages the capture recorded are written back. After the
// call its return value and its outputs are compared with the capture's, except what is remapped
// or volatile (ioctl_layout.h); a difference is a mismatch naming the record ("line"), the call
// and the first differing byte. At the end the process's exit is replayed (mappings dropped,
// descriptors closed) and the world's end-of-run checks run (leaks, reports, stuck tasks).
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "mock_hw/fault_plan.h"
#include "tools/upanthor/runner.h"

namespace upanthor {

namespace capture {
struct Capture;
}

struct ReplayOptions {
    std::optional<std::uint64_t> seed;
    double preempt_probability = 0.0;
    std::string trace_path;
    bool json = false;
    // Faults added to the mock GPU, at_us from the start of the replay. With faults, results
    // that differ from the capture are expected: they are listed as divergences and do not fail
    // the replay (the end-of-run checks still do).
    std::vector<mock_hw::FaultSpec> injects;
};

struct ReplayOutcome {
    bool passed = false;
    bool bad_file = false;
    std::uint64_t seed = 1;
    std::string error;                    // the file's problem (bad_file) or a setup failure
    std::vector<std::string> mismatches;  // "line N: CALL: what"
    // Differences of queries (ioctl_is_query) that ran alongside another thread's call in the
    // capture: which of the two took effect first inside the calls is not recorded. Not failures.
    std::vector<std::string> races;
    std::vector<std::string> kernel;  // end-of-run problems
    // With --inject: the replay diverged and then could not finish (a wait for work the dead
    // group never ran; live, the client saw its device lost and stopped): where, not a failure.
    std::string stopped;
    bool stuck = false;  // did not finish within the virtual-time limit (error, or stopped)
    std::size_t calls = 0, ioctls = 0, threads = 0;
    // The groups the replay created, by the state GROUP_GET_STATE gave just before each was
    // destroyed (GROUP_DESTROY, the close of its file, or the process's exit).
    std::size_t groups = 0, groups_timedout = 0, groups_faulted = 0, groups_innocent = 0;
    // Jobs on real shader descriptors the mock completed without running their shaders.
    std::uint64_t real_jobs = 0;
    std::int64_t virtual_ns = 0;
    double wall_s = 0;
};

// Whether `path` starts like a capture (sweep tells captures from scenarios by it).
bool is_capture_file(const std::string& path);

// Replays the capture at `path` once; with `report_out`, prints the summary (text or JSON).
ReplayOutcome replay_file(const std::string& path, const ReplayOptions& opts, std::FILE* report_out);
// The same with the capture read already (`path` names it in the summary).
ReplayOutcome replay_capture(const capture::Capture& c, const std::string& path, const ReplayOptions& opts,
                             std::FILE* report_out);
// A replay's outcome as a run's (sweep): its mismatches and end-of-run problems as failures.
RunOutcome replay_outcome_as_run(const ReplayOutcome& o);

// The `replay` subcommand: 0 when every call gave what the capture says and the checks found
// nothing, 1 on a mismatch or a failed check, 2 when the file (or an --inject spec) is malformed.
int cmd_replay(const std::string& path, ReplayOptions opts, const std::vector<std::string>& inject_specs,
               std::FILE* out, std::FILE* err);

}  // namespace upanthor
