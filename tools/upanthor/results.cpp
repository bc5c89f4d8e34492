// Reading and merging result files (results.h).
#include "tools/upanthor/results.h"

#include <algorithm>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "tools/upanthor/sweep.h"

namespace upanthor::results {
namespace {

using nlohmann::json;

// A field that must be there with the right type; throws json::exception (type_error or
// out_of_range) otherwise, which read_file turns into its `why`.
template <class T>
T need(const json& j, const char* key) {
    return j.at(key).get<T>();
}

std::vector<Failing> read_failing(const json& arr) {
    std::vector<Failing> v;
    for (const json& f : arr) {
        Failing x;
        x.seed = f.value("seed", std::uint64_t{0});
        x.replay = need<std::string>(f, "replay");
        x.failures = f.value("failures", std::vector<std::string>{});
        x.cell = f.value("cell", std::string{});
        v.push_back(std::move(x));
    }
    return v;
}

ShardInfo read_shard(const json& j) {
    if (!j.contains("shard"))
        return {};
    const json& s = j.at("shard");
    ShardInfo sh{need<std::uint64_t>(s, "index"), need<std::uint64_t>(s, "count")};
    if (sh.count == 0 || sh.index >= sh.count)
        throw std::out_of_range("shard index " + std::to_string(sh.index) + " of " + std::to_string(sh.count));
    return sh;
}

void read_sweep(const json& j, Sweep* s) {
    s->scenario = need<std::string>(j, "scenario");
    s->file = need<std::string>(j, "file");
    s->first = need<std::uint64_t>(j.at("range"), "first");
    s->last = need<std::uint64_t>(j.at("range"), "last");
    s->preempt = format_probability(need<double>(j, "preempt"));
    s->shard = read_shard(j);
    s->seeds_run = need<std::uint64_t>(j, "seeds_run");
    s->wall_time_s = j.value("wall_time_s", 0.0);
    s->seeds = need<std::vector<std::uint64_t>>(j, "seeds");
    s->failing = read_failing(j.at("failing"));
}

void read_campaign(const json& j, Campaign* c) {
    c->name = need<std::string>(j, "name");
    c->seeds_per_cell = need<std::uint64_t>(j, "seeds_per_cell");
    c->shard = read_shard(j);
    for (const json& cell : j.at("cells")) {
        CampaignCell& x = c->cells[{need<std::string>(cell, "class"), need<std::string>(cell, "trigger")}];
        x.runs = need<std::uint64_t>(cell, "runs");
        x.violations = need<std::uint64_t>(cell, "violations");
        x.first_failing_seed = cell.value("first_failing_seed", std::uint64_t{0});
        x.lost = cell.value("lost", std::uint64_t{0});
    }
    c->failing = read_failing(j.at("failing"));
}

void read_fuzz(const json& j, Fuzz* f) {
    f->target = need<std::string>(j, "target");
    f->executions = need<std::uint64_t>(j, "executions");
    f->seconds = j.value("seconds", 0.0);
    f->workers = j.value("workers", 0u);
    f->findings = read_failing(j.at("findings"));
}

bool by_seed(const Failing& a, const Failing& b) {
    return std::tie(a.seed, a.cell, a.replay) < std::tie(b.seed, b.cell, b.replay);
}

// What makes two files parts of the same run.
std::string group_key(const File& f) {
    switch (f.kind) {
    case File::Kind::Sweep:
        return "sweep\n" + f.sweep.scenario + "\n" + std::to_string(f.sweep.first) + ".." +
               std::to_string(f.sweep.last) + "\n" + f.sweep.preempt + "\n" + std::to_string(f.sweep.shard.count);
    case File::Kind::Campaign:
        return "campaign\n" + f.campaign.name + "\n" + std::to_string(f.campaign.seeds_per_cell) + "\n" +
               std::to_string(f.campaign.shard.count);
    case File::Kind::Fuzz: return "fuzz\n" + f.fuzz.target;
    }
    return {};
}

ShardInfo shard_of(const File& f) {
    switch (f.kind) {
    case File::Kind::Sweep: return f.sweep.shard;
    case File::Kind::Campaign: return f.campaign.shard;
    case File::Kind::Fuzz: return {};
    }
    return {};
}

void add(Group* g, const File& f) {
    switch (f.kind) {
    case File::Kind::Sweep: {
        Sweep& s = g->sweep;
        s.seeds_run += f.sweep.seeds_run;
        s.wall_time_s = std::max(s.wall_time_s, f.sweep.wall_time_s);
        s.seeds.insert(s.seeds.end(), f.sweep.seeds.begin(), f.sweep.seeds.end());
        s.failing.insert(s.failing.end(), f.sweep.failing.begin(), f.sweep.failing.end());
        break;
    }
    case File::Kind::Campaign:
        for (const auto& [k, c] : f.campaign.cells) {
            CampaignCell& m = g->campaign.cells[k];
            if (c.violations && (!m.violations || c.first_failing_seed < m.first_failing_seed))
                m.first_failing_seed = c.first_failing_seed;
            m.runs += c.runs;
            m.violations += c.violations;
            m.lost += c.lost;
        }
        g->campaign.failing.insert(g->campaign.failing.end(), f.campaign.failing.begin(), f.campaign.failing.end());
        break;
    case File::Kind::Fuzz:
        g->fuzz.executions += f.fuzz.executions;
        g->fuzz.seconds += f.fuzz.seconds;
        g->fuzz.workers += f.fuzz.workers;
        g->fuzz.findings.insert(g->fuzz.findings.end(), f.fuzz.findings.begin(), f.fuzz.findings.end());
        break;
    }
}

}  // namespace

bool read_file(const std::string& path, File* out, std::string* why) {
    std::ifstream in(path);
    if (!in) {
        *why = "cannot open '" + path + "'";
        return false;
    }
    out->path = path;
    try {
        const json j = json::parse(in);
        if (!j.is_object()) {
            *why = path + ": not a result file (a JSON document, but not an object)";
            return false;
        }
        const std::string kind = j.value("kind", std::string{});
        const int format = j.value("format", 0);
        if (format != kFormatVersion) {
            *why = path + ": result format " + std::to_string(format) + ", this upanthor reads format " +
                   std::to_string(kFormatVersion);
            return false;
        }
        if (kind == "sweep") {
            out->kind = File::Kind::Sweep;
            read_sweep(j, &out->sweep);
        } else if (kind == "campaign") {
            out->kind = File::Kind::Campaign;
            read_campaign(j, &out->campaign);
        } else if (kind == "fuzz") {
            out->kind = File::Kind::Fuzz;
            read_fuzz(j, &out->fuzz);
        } else {
            *why = path + ": unknown result kind '" + kind + "' (expected sweep, campaign or fuzz)";
            return false;
        }
    } catch (const std::exception& e) {
        *why = path + ": not a valid result file: " + e.what();
        return false;
    }
    return true;
}

std::uint64_t Group::runs() const {
    switch (kind) {
    case File::Kind::Sweep: return sweep.seeds_run;
    case File::Kind::Campaign: {
        std::uint64_t n = 0;
        for (const auto& [k, c] : campaign.cells)
            n += c.runs;
        return n;
    }
    case File::Kind::Fuzz: return fuzz.executions;
    }
    return 0;
}

std::uint64_t Group::failed() const {
    switch (kind) {
    case File::Kind::Sweep: return sweep.failing.size();
    case File::Kind::Campaign: {
        std::uint64_t n = 0;
        for (const auto& [k, c] : campaign.cells)
            n += c.violations;
        return n;
    }
    case File::Kind::Fuzz: return fuzz.findings.size();
    }
    return 0;
}

std::vector<Group> merge_results(const std::vector<File>& files) {
    std::vector<std::string> order;  // groups in the order their first file came
    std::map<std::string, Group> groups;
    std::map<std::string, std::map<std::uint64_t, unsigned>> seen;  // key -> shard index -> times
    for (const File& f : files) {
        const std::string key = group_key(f);
        auto [it, fresh] = groups.try_emplace(key);
        Group& g = it->second;
        if (fresh) {
            order.push_back(key);
            g.kind = f.kind;
            // The identity of the run comes from its first file; the counts are added below.
            g.sweep = f.sweep;
            g.sweep.seeds_run = 0;
            g.sweep.wall_time_s = 0;
            g.sweep.seeds.clear();
            g.sweep.failing.clear();
            g.sweep.shard = {};
            g.campaign.name = f.campaign.name;
            g.campaign.seeds_per_cell = f.campaign.seeds_per_cell;
            g.fuzz.target = f.fuzz.target;
            g.shard_count = shard_of(f).count;
        }
        g.files.push_back(f.path);
        seen[key][shard_of(f).index]++;
        add(&g, f);
    }
    std::vector<Group> out;
    for (const std::string& key : order) {
        Group& g = groups[key];
        if (g.kind != File::Kind::Fuzz) {
            const auto& times = seen[key];
            g.missing_count = g.shard_count - times.size();
            for (const auto& [index, n] : times)
                if (n > 1)
                    g.repeated_shards.push_back(index);
            // The first few missing indices name the lost jobs; a count says how many in all.
            const std::uint64_t listed = std::min<std::uint64_t>(g.missing_count, kListedMissing);
            for (std::uint64_t i = 0; i < g.shard_count && g.missing_shards.size() < listed; i++)
                if (!times.count(i))
                    g.missing_shards.push_back(i);
        }
        std::sort(g.sweep.seeds.begin(), g.sweep.seeds.end());
        std::sort(g.sweep.failing.begin(), g.sweep.failing.end(), by_seed);
        std::sort(g.campaign.failing.begin(), g.campaign.failing.end(), by_seed);
        out.push_back(std::move(g));
    }
    return out;
}

}  // namespace upanthor::results
