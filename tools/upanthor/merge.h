// `upanthor merge FILES...`: one table of many result files (results.h). (No upstream counterpart.)
//
// DOC: Reads every file (sweep shards, campaign shards, fuzz campaigns, in any mix and order),
// merges each group, and prints one section per group (what ran, the counts, every failing seed
// with its replay command) and the totals; `--json` prints the same as a JSON document whose
// sweep entries have the fields of `upanthor sweep --json`. Exit code 0 when every group is
// complete and clean, 1 when something failed, 2 when a file is not a result file or a sharded
// group is incomplete (a shard missing or repeated), unless `--partial` accepts what is there.
#pragma once
#include <cstdio>
#include <string>
#include <vector>

namespace upanthor {

struct MergeOptions {
    bool json = false;
    bool partial = false;  // an incomplete group is reported, not an error
};

int cmd_merge(const std::vector<std::string>& paths, const MergeOptions& opts, std::FILE* out, std::FILE* err);

}  // namespace upanthor
