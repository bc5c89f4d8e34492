// The result table of a recovery fault campaign (panthor's and panfrost's): runs, invariant
// violations and the first failing seed per class x trigger cell, printed when the binary exits,
// and written as a result file for `upanthor merge` (tools/upanthor/results.h, kind "campaign")
// when UPANTHOR_RESULTS_JSON=FILE is set. A gtest shard (GTEST_SHARD_INDEX of GTEST_TOTAL_SHARDS)
// records its shard, so that the merge can tell a complete campaign from one with a shard lost.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

namespace upanthor::testing {

class CampaignTable {
public:
    struct Cell {
        std::uint64_t runs = 0, violations = 0, first_failing_seed = 0;
        std::uint64_t lost = 0;  // a campaign's own count of tolerated losses (panfrost's -ECANCELED)
    };

    // One finished run of the current test; `lost` adds to the cell's count. A failure prints the
    // command that replays the run.
    void record(const std::string& cls, const std::string& trigger, std::uint64_t seed, bool failed,
                std::uint64_t lost = 0) {
        Cell& c = cells_[{cls, trigger}];
        c.runs++;
        c.lost += lost;
        if (!failed)
            return;
        if (!c.violations)
            c.first_failing_seed = seed;
        c.violations++;
        const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
        const std::string replay = "KSHIM_SEED=" + std::to_string(seed) + " " + self_path() + " --gtest_filter='" +
                                   t->test_suite_name() + "." + t->name() + "'";
        failing_.push_back({cls + " x " + trigger, seed, replay, first_failure(*t)});
        std::fprintf(stderr, "[campaign] %s x %s failed: replay with %s\n", cls.c_str(), trigger.c_str(),
                     replay.c_str());
    }

    // The table on stdout (with the `lost` column when `show_lost`), and the result file when
    // UPANTHOR_RESULTS_JSON names one.
    void report(const char* title, const std::string& name, std::uint64_t seeds_per_cell, bool show_lost) const {
        if (cells_.empty())
            return;
        std::printf("\n%s: class x trigger -> runs, invariant violations, first failing seed\n", title);
        std::printf("%-18s %-18s %6s %10s %10s%s\n", "class", "trigger", "runs", "violations", "first_seed",
                    show_lost ? "   lost" : "");
        for (const auto& [k, c] : cells_) {
            std::printf("%-18s %-18s %6llu %10llu %10s", k.first.c_str(), k.second.c_str(),
                        static_cast<unsigned long long>(c.runs), static_cast<unsigned long long>(c.violations),
                        c.violations ? std::to_string(c.first_failing_seed).c_str() : "-");
            if (show_lost)
                std::printf(" %6llu", static_cast<unsigned long long>(c.lost));
            std::printf("\n");
        }
        if (const char* path = std::getenv("UPANTHOR_RESULTS_JSON"); path && *path)
            write_json(path, name, seeds_per_cell);
    }

private:
    struct FailingRun {
        std::string cell;
        std::uint64_t seed;
        std::string replay;
        std::string failure;
    };

    // The first line of the run's first failed assertion: what the merge shows for it.
    static std::string first_failure(const ::testing::TestInfo& t) {
        const ::testing::TestResult* r = t.result();
        for (int i = 0; r && i < r->total_part_count(); i++) {
            const ::testing::TestPartResult& p = r->GetTestPartResult(i);
            if (p.failed()) {
                const std::string s = p.summary();
                return s.substr(0, s.find('\n'));
            }
        }
        return "invariant violated";
    }

    static std::string self_path() {
        char buf[4096];
        const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("<test binary>");
    }

    static std::uint64_t env_u64(const char* name, std::uint64_t dflt) {
        const char* v = std::getenv(name);
        return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
    }

    void write_json(const char* path, const std::string& name, std::uint64_t seeds_per_cell) const {
        using nlohmann::json;
        json cells = json::array();
        for (const auto& [k, c] : cells_)
            cells.push_back({{"class", k.first},
                             {"trigger", k.second},
                             {"runs", c.runs},
                             {"violations", c.violations},
                             {"first_failing_seed", c.first_failing_seed},
                             {"lost", c.lost}});
        json failing = json::array();
        for (const FailingRun& f : failing_)
            failing.push_back({{"cell", f.cell}, {"seed", f.seed}, {"replay", f.replay}, {"failures", {f.failure}}});
        const json j = {
            {"kind", "campaign"},
            {"format", 1},
            {"name", name},
            {"seeds_per_cell", seeds_per_cell},
            {"shard", {{"index", env_u64("GTEST_SHARD_INDEX", 0)}, {"count", env_u64("GTEST_TOTAL_SHARDS", 1)}}},
            {"cells", std::move(cells)},
            {"failing", std::move(failing)}};
        std::ofstream out(path);
        out << j.dump(2) << "\n";
        if (!out)
            std::fprintf(stderr, "[campaign] cannot write %s\n", path);
    }

    std::map<std::pair<std::string, std::string>, Cell> cells_;
    std::vector<FailingRun> failing_;
};

}  // namespace upanthor::testing
