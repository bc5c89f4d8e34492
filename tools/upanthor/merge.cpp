// `upanthor merge` (merge.h): printing merged result groups as text or JSON.
#include "tools/upanthor/merge.h"

#include <cinttypes>

#include <nlohmann/json.hpp>

#include "tools/upanthor/cli.h"
#include "tools/upanthor/results.h"

namespace upanthor {
namespace {

namespace rs = upanthor::results;
using nlohmann::json;

using rs::kMaxListed;

std::string shard_note(const rs::Group& g) {
    std::string s = std::to_string(g.files.size()) + (g.files.size() == 1 ? " file" : " files");
    if (g.kind == rs::File::Kind::Fuzz)
        return s;
    s += ", " + std::to_string(g.shard_count) + (g.shard_count == 1 ? " shard" : " shards");
    return s;
}

void print_incomplete(const rs::Group& g, std::FILE* out) {
    if (g.missing_count) {
        std::fprintf(out, "  INCOMPLETE: %" PRIu64 " of %" PRIu64 " shards missing (index", g.missing_count,
                     g.shard_count);
        for (std::uint64_t i : g.missing_shards)
            std::fprintf(out, " %" PRIu64, i);
        std::fprintf(out, "%s)\n", g.missing_count > g.missing_shards.size() ? " ..." : "");
    }
    if (!g.repeated_shards.empty()) {
        std::fprintf(out, "  INCOMPLETE: shards given more than once (index");
        for (std::uint64_t i : g.repeated_shards)
            std::fprintf(out, " %" PRIu64, i);
        std::fprintf(out, ")\n");
    }
}

void print_failing(const std::vector<rs::Failing>& failing, const char* what, std::FILE* out) {
    if (failing.empty())
        return;
    std::fprintf(out, "  %s (replay each with the command below it):\n", what);
    for (size_t k = 0; k < failing.size() && k < kMaxListed; k++) {
        const rs::Failing& f = failing[k];
        std::string head = f.cell.empty() ? "" : f.cell + ", ";
        if (f.seed)
            head += "seed " + std::to_string(f.seed);
        std::fprintf(out, "    %s%s%s", head.c_str(), head.empty() ? "" : ": ",
                     f.failures.empty() ? "failed" : f.failures.front().c_str());
        if (f.failures.size() > 1)
            std::fprintf(out, " (+%zu more)", f.failures.size() - 1);
        std::fprintf(out, "\n      %s\n", f.replay.c_str());
    }
    if (failing.size() > kMaxListed)
        std::fprintf(out, "    ... and %zu more (--json lists them all)\n", failing.size() - kMaxListed);
}

void print_text(const rs::Group& g, std::FILE* out) {
    switch (g.kind) {
    case rs::File::Kind::Sweep: {
        const rs::Sweep& s = g.sweep;
        std::fprintf(out, "sweep %s (%s): seeds %" PRIu64 "..%" PRIu64 ", preempt %s, %s\n", s.scenario.c_str(),
                     s.file.c_str(), s.first, s.last, s.preempt.c_str(), shard_note(g).c_str());
        std::fprintf(out, "  %" PRIu64 " seeds run: %" PRIu64 " passed, %zu failed (longest shard %.2f s)\n",
                     s.seeds_run, s.seeds_run - s.failing.size(), s.failing.size(), s.wall_time_s);
        print_failing(s.failing, "failing seeds", out);
        break;
    }
    case rs::File::Kind::Campaign: {
        const rs::Campaign& c = g.campaign;
        std::fprintf(out, "campaign %s: %" PRIu64 " seeds per cell, %s\n", c.name.c_str(), c.seeds_per_cell,
                     shard_note(g).c_str());
        bool lost = false;  // the column only for a campaign that counts such outcomes
        for (const auto& [k, cell] : c.cells)
            lost = lost || cell.lost;
        std::fprintf(out, "  %-18s %-18s %8s %10s %12s%s\n", "class", "trigger", "runs", "violations", "first_seed",
                     lost ? "     lost" : "");
        for (const auto& [k, cell] : c.cells) {
            std::fprintf(out, "  %-18s %-18s %8" PRIu64 " %10" PRIu64 " %12s", k.first.c_str(), k.second.c_str(),
                         cell.runs, cell.violations,
                         cell.violations ? std::to_string(cell.first_failing_seed).c_str() : "-");
            if (lost)
                std::fprintf(out, " %8" PRIu64, cell.lost);
            std::fprintf(out, "\n");
        }
        std::fprintf(out, "  %" PRIu64 " runs, %" PRIu64 " violations\n", g.runs(), g.failed());
        print_failing(c.failing, "failing runs", out);
        break;
    }
    case rs::File::Kind::Fuzz: {
        const rs::Fuzz& f = g.fuzz;
        std::fprintf(out, "fuzz %s: %s, %u workers, %" PRIu64 " executions in %.0f s, %zu findings\n", f.target.c_str(),
                     shard_note(g).c_str(), f.workers, f.executions, f.seconds, f.findings.size());
        print_failing(f.findings, "findings", out);
        break;
    }
    }
    print_incomplete(g, out);
}

json failing_json(const std::vector<rs::Failing>& v) {
    json a = json::array();
    for (const rs::Failing& f : v) {
        json x = {{"replay", f.replay}, {"failures", f.failures}};
        if (f.seed)
            x["seed"] = f.seed;
        if (!f.cell.empty())
            x["cell"] = f.cell;
        a.push_back(std::move(x));
    }
    return a;
}

json group_json(const rs::Group& g) {
    json j = {{"files", g.files},
              {"complete", g.complete()},
              {"shards", {{"count", g.shard_count}, {"missing", g.missing_count}, {"repeated", g.repeated_shards}}},
              {"passed", g.complete() && g.failed() == 0}};
    switch (g.kind) {
    case rs::File::Kind::Sweep: {
        const rs::Sweep& s = g.sweep;
        j["kind"] = "sweep";
        j["scenario"] = s.scenario;
        j["file"] = s.file;
        j["range"] = {{"first", s.first}, {"last", s.last}};
        j["preempt"] = std::stod(s.preempt);
        j["seeds_run"] = s.seeds_run;
        j["seeds_passed"] = s.seeds_run - s.failing.size();
        j["seeds_failed"] = s.failing.size();
        j["wall_time_s"] = s.wall_time_s;
        j["seeds"] = s.seeds;
        j["failing"] = failing_json(s.failing);
        break;
    }
    case rs::File::Kind::Campaign: {
        j["kind"] = "campaign";
        j["name"] = g.campaign.name;
        j["seeds_per_cell"] = g.campaign.seeds_per_cell;
        j["runs"] = g.runs();
        j["violations"] = g.failed();
        json cells = json::array();
        for (const auto& [k, c] : g.campaign.cells)
            cells.push_back({{"class", k.first},
                             {"trigger", k.second},
                             {"runs", c.runs},
                             {"violations", c.violations},
                             {"first_failing_seed", c.first_failing_seed},
                             {"lost", c.lost}});
        j["cells"] = std::move(cells);
        j["failing"] = failing_json(g.campaign.failing);
        break;
    }
    case rs::File::Kind::Fuzz:
        j["kind"] = "fuzz";
        j["target"] = g.fuzz.target;
        j["executions"] = g.fuzz.executions;
        j["seconds"] = g.fuzz.seconds;
        j["workers"] = g.fuzz.workers;
        j["findings"] = failing_json(g.fuzz.findings);
        break;
    }
    return j;
}

}  // namespace

int cmd_merge(const std::vector<std::string>& paths, const MergeOptions& opts, std::FILE* out, std::FILE* err) {
    std::vector<rs::File> files;
    for (const std::string& p : paths) {
        rs::File f;
        std::string why;
        if (!rs::read_file(p, &f, &why)) {
            std::fprintf(err, "upanthor merge: %s\n", why.c_str());
            return kExitUsage;
        }
        files.push_back(std::move(f));
    }
    const std::vector<rs::Group> groups = rs::merge_results(files);
    std::uint64_t runs = 0, failed = 0;
    bool complete = true;
    for (const rs::Group& g : groups) {
        runs += g.kind == rs::File::Kind::Fuzz ? 0 : g.runs();
        failed += g.failed();
        complete = complete && g.complete();
    }
    const bool passed = failed == 0 && complete;
    if (opts.json) {
        json j = {{"kind", "merged"}, {"format", rs::kFormatVersion}, {"passed", passed}, {"complete", complete}};
        j["totals"] = {{"files", files.size()}, {"groups", groups.size()}, {"runs", runs}, {"failed", failed}};
        json gs = json::array();
        for (const rs::Group& g : groups)
            gs.push_back(group_json(g));
        j["groups"] = std::move(gs);
        const std::string text = j.dump(2) + "\n";
        std::fwrite(text.data(), 1, text.size(), out);
    } else {
        std::fprintf(out, "merged %zu file%s into %zu result%s\n", files.size(), files.size() == 1 ? "" : "s",
                     groups.size(), groups.size() == 1 ? "" : "s");
        for (const rs::Group& g : groups)
            print_text(g, out);
        std::fprintf(out, "total: %" PRIu64 " runs (sweeps and campaigns), %" PRIu64 " failed%s\n", runs, failed,
                     complete ? "" : ", INCOMPLETE");
        std::fprintf(out, "%s\n", passed ? "PASS" : "FAIL");
    }
    if (!complete && !opts.partial) {
        std::fprintf(err,
                     "upanthor merge: a sharded result is incomplete (see INCOMPLETE above); --partial accepts it\n");
        return kExitUsage;
    }
    return failed ? kExitFailure : kExitOk;
}

}  // namespace upanthor
