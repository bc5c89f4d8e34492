// The result files of long runs and how they merge (`upanthor merge`). (No upstream counterpart.)
//
// DOC: Three producers write a JSON result file, each with a "kind":
// - "sweep": `upanthor sweep --json` (one shard of a seed range, or the whole of it);
// - "campaign": a recovery fault campaign run with UPANTHOR_RESULTS_JSON=FILE (one gtest shard of
//   the class x trigger x seed grid, GTEST_SHARD_INDEX of GTEST_TOTAL_SHARDS);
// - "fuzz": scripts/fuzz-campaign.sh (one machine's campaign of a libFuzzer target).
// merge_results() groups the files by what they ran (the same sweep, the same campaign grid, the
// same fuzz target) and adds each group up. Sharded groups must be complete: every shard index
// 0..N-1 exactly once, else the group is reported incomplete (a missing or a repeated shard), so a
// lost job in a cluster cannot pass for a clean run. The merged sweep of N shards is what the
// unsharded sweep reports (the same seeds, failing seeds, failures and replay commands): only the
// timing fields differ.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace upanthor::results {

inline constexpr int kFormatVersion = 1;
inline constexpr std::size_t kListedMissing = 32;
// Failing seeds a text summary lists (of a sweep, or per merged group); --json lists every one.
inline constexpr std::size_t kMaxListed = 50;

struct Failing {
    std::uint64_t seed = 0;
    std::string replay;                 // the command that reproduces it
    std::vector<std::string> failures;  // what went wrong, the first first
    std::string cell;                   // campaigns: "class x trigger"; empty otherwise
};

struct ShardInfo {
    std::uint64_t index = 0, count = 1;
};

// One sweep shard (or a whole sweep), or the merge of a group of them.
struct Sweep {
    std::string scenario, file;
    std::uint64_t first = 0, last = 0;
    std::string preempt;  // as printed: part of the replay commands, so compared as text
    ShardInfo shard;
    std::uint64_t seeds_run = 0;
    double wall_time_s = 0;
    std::vector<std::uint64_t> seeds;
    std::vector<Failing> failing;
};

struct CampaignCell {
    std::uint64_t runs = 0, violations = 0, first_failing_seed = 0;
    std::uint64_t lost = 0;  // outcomes the campaign tolerates and counts (panfrost's -ECANCELED)
};

struct Campaign {
    std::string name;  // "panthor-recovery", "panfrost-recovery"
    std::uint64_t seeds_per_cell = 0;
    ShardInfo shard;
    std::map<std::pair<std::string, std::string>, CampaignCell> cells;  // (class, trigger)
    std::vector<Failing> failing;
};

struct Fuzz {
    std::string target;
    std::uint64_t executions = 0;
    double seconds = 0;
    unsigned workers = 0;
    std::vector<Failing> findings;  // seed 0; replay is the command, failures[0] the file
};

// One parsed file.
struct File {
    std::string path;
    enum class Kind { Sweep, Campaign, Fuzz } kind = Kind::Sweep;
    Sweep sweep;
    Campaign campaign;
    Fuzz fuzz;
};

// Reads `path`; false with `why` ("cannot open", "not JSON: ...", "unknown kind ...") when it is
// not a result file.
bool read_file(const std::string& path, File* out, std::string* why);

// A merged group: the sum, where its files came from, and whether its shards cover the whole.
struct Group {
    File::Kind kind = File::Kind::Sweep;
    Sweep sweep;
    Campaign campaign;
    Fuzz fuzz;
    std::vector<std::string> files;
    std::uint64_t shard_count = 1;
    std::uint64_t missing_count = 0;            // shard indices no file had
    std::vector<std::uint64_t> missing_shards;  // the first kListedMissing of them
    std::vector<std::uint64_t> repeated_shards;
    bool complete() const { return missing_count == 0 && repeated_shards.empty(); }
    std::uint64_t runs() const;
    std::uint64_t failed() const;
};

std::vector<Group> merge_results(const std::vector<File>& files);

}  // namespace upanthor::results
