// `upanthor sweep`: one scenario under a range of seeds, in parallel processes. (No upstream
// counterpart.)
//
// DOC: The scenario is parsed once in the parent, which never creates a kshim Runtime. Each seed
// then runs in a process of its own, forked from that parent (at most `jobs` at a time): the run
// starts from exactly the state `upanthor run` starts from, so nothing a previous seed left
// behind (static state, allocator history) can make a sweep result differ from its replay, and a
// seed that crashes takes down only its own process ("crashed: signal N"). The child runs
// run_scenario() with the seed and the sweep's preemption probability, its stdout and stderr on
// /dev/null (the driver's dev_err lines of failing seeds would bury the summary; the replay
// command shows them), and writes its RunOutcome to a pipe. The parent polls the pipes, draws a
// progress bar on stderr when it is a terminal, and prints the summary with one replay command
// per failing seed: `upanthor run SCENARIO --seed N --preempt P` reproduces that run exactly.
//
// `--shard I/N` keeps the seeds s of A..B with (s - A) % N == I: N invocations with I = 0..N-1
// (a CI matrix, GNU parallel, a batch job array) cover the range exactly once between them.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace upanthor {

// The preemption probability of a sweep when `--preempt` is not given: high enough that most
// lock/unlock/queue_work/wake-up points of a run can switch tasks somewhere, so seeds explore
// different interleavings (tests/panthor/sched_sweep_test.cpp uses the same value).
inline constexpr double kDefaultSweepPreempt = 0.3;

struct SeedRange {
    std::uint64_t first = 0, last = 0;  // inclusive
};

struct Shard {
    std::uint64_t index = 0, count = 1;  // 0 <= index < count
};

struct SweepOptions {
    SeedRange seeds;
    Shard shard;
    unsigned jobs = 1;  // worker processes at a time
    double preempt = kDefaultSweepPreempt;
    bool json = false;
    std::FILE* progress_out = nullptr;  // the progress bar (a terminal), or nullptr: none
};

// "A..B" with decimal (or 0x) integers A <= B; nullopt when malformed.
std::optional<SeedRange> parse_seed_range(const std::string& text);
// "I/N" with 0 <= I < N.
std::optional<Shard> parse_shard(const std::string& text);
// `--shard auto`: the shard a job engine gives this process through its environment, the first of
// UPANTHOR_SHARD_INDEX + UPANTHOR_SHARD_COUNT; a Slurm job array (SLURM_ARRAY_TASK_ID, _MIN,
// _STEP, _COUNT); a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with UPANTHOR_SHARD_COUNT set to
// its completions). nullopt with `why` when none is set or the values do not make a shard.
std::optional<Shard> shard_from_environment(std::string* why);
// "N" (1..kMaxJobs), or "0" / "auto": the number of online CPUs.
inline constexpr unsigned kMaxJobs = 256;
std::optional<unsigned> parse_jobs(const std::string& text);

// How many seeds of `range` shard `shard` runs (saturating at UINT64_MAX), and the k-th of them
// (ascending): range.first + shard.index + k * shard.count.
std::uint64_t shard_seed_count(const SeedRange& range, const Shard& shard);
inline std::uint64_t shard_seed(const SeedRange& range, const Shard& shard, std::uint64_t k) {
    return range.first + shard.index + k * shard.count;
}
// The most seeds one invocation runs (a larger sweep is split with --shard).
inline constexpr std::uint64_t kMaxSweepSeeds = std::uint64_t{1} << 32;

// The shortest text that reads back (strtod) as `p`: what replay commands print.
std::string format_probability(double p);

// The `sweep` subcommand: 0 when every seed passed, 1 when one failed (or crashed), 2 when the
// file is malformed (diagnostics on `err`, nothing run).
int cmd_sweep(const std::string& path, const SweepOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace upanthor
