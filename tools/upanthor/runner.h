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

namespace upanthor {

struct RunOptions {
    std::optional<std::uint64_t> seed;  // overrides the scenario's
    std::string trace_path;             // non-empty: write a Perfetto/Chrome JSON trace there
    bool json = false;
};

// The `run` subcommand: 0 when every expectation holds, 1 when one does not (or the run could not
// be set up), 2 when the file is malformed (its diagnostics go to `err`).
int cmd_run(const std::string& path, const RunOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace upanthor
