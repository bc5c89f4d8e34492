// The scenario parser's Job Manager sections (scenario_parser.h): [[jm_ctx]], [[chain]] and
// [[jm_submit]] of a `[gpu] model = "g52"` scenario, and which sections each model allows.
// (No upstream counterpart.)
#include <algorithm>
#include <cmath>

#include "tools/upanthor/scenario_parser.h"
#include "uapi/drm/panfrost_drm.h"

namespace upanthor::scenario {

namespace {

struct JmTypeName {
    const char* name;
    JmJobType type;
};
constexpr JmTypeName kJmTypes[] = {
    {"null", JmJobType::Null},
    {"write_value", JmJobType::WriteValue},
    {"cache_flush", JmJobType::CacheFlush},
    {"compute", JmJobType::Compute},
    {"vertex", JmJobType::Vertex},
    {"tiler", JmJobType::Tiler},
    {"fragment", JmJobType::Fragment},
    {"draw", JmJobType::Draw},
};

}  // namespace

const char* jm_job_type_name(JmJobType t) {
    for (const JmTypeName& n : kJmTypes)
        if (n.type == t)
            return n.name;
    return "?";
}

void ScenarioParser::parse_jm_ctx(const toml::table& t) {
    const std::string what = "[[jm_ctx]]";
    check_keys(t, what, {"name", "client", "priority"});
    JmCtx c;
    c.loc = loc_of(t.source());
    auto name = get_name(t, what);
    auto client = get_ref(t, "client", what, true, client_names_, "client");
    bool ok = name && client;
    if (auto p = get_string(t, "priority", what, false)) {
        if (*p == "low")
            c.priority = PANFROST_JM_CTX_PRIORITY_LOW;
        else if (*p == "medium")
            c.priority = PANFROST_JM_CTX_PRIORITY_MEDIUM;
        else if (*p == "high")
            c.priority = PANFROST_JM_CTX_PRIORITY_HIGH;
        else {
            error(*t.get("priority"), "unknown JM context priority '" + *p + "' (expected low, medium or high)");
            ok = false;
        }
    } else if (t.contains("priority")) {
        ok = false;
    }
    if (!ok || !define(jm_ctx_names_, jm_ctx_where_, *name, sc_.jm_ctxs.size(), t, "jm_ctx"))
        return poison("jm_ctx", name);
    c.name = *name;
    c.client = *client;
    sc_.jm_ctxs.push_back(std::move(c));
}

std::optional<JmJob> ScenarioParser::parse_jm_job(const toml::table& t, size_t position) {
    const std::string what = "a job of [[chain]]";
    check_keys(t, what,
               {"type", "bo", "offset", "address", "value", "invocations", "tiles_x", "tiles_y", "barrier", "dep"});
    JmJob j;
    j.loc = loc_of(t.source());
    auto ty = get_string(t, "type", what, true);
    if (!ty)
        return std::nullopt;
    auto it =
        std::find_if(std::begin(kJmTypes), std::end(kJmTypes), [&](const JmTypeName& n) { return *ty == n.name; });
    if (it == std::end(kJmTypes)) {
        std::string all;
        for (const JmTypeName& n : kJmTypes)
            all += (all.empty() ? "" : ", ") + std::string(n.name);
        error(*t.get("type"), "unknown job type '" + *ty + "' (expected one of: " + all + ")");
        return std::nullopt;
    }
    j.type = it->type;
    bool ok = true;
    // Keys each type takes beyond type/barrier/dep.
    Keys own;
    switch (j.type) {
    case JmJobType::WriteValue: own = {"bo", "offset", "address", "value"}; break;
    case JmJobType::Compute:
    case JmJobType::Vertex:
    case JmJobType::Tiler:
    case JmJobType::Draw: own = {"invocations"}; break;
    case JmJobType::Fragment: own = {"tiles_x", "tiles_y"}; break;
    default: break;
    }
    for (const char* k : {"bo", "offset", "address", "value", "invocations", "tiles_x", "tiles_y"})
        if (t.contains(k) && std::find(own.begin(), own.end(), k) == own.end()) {
            error(*t.get(k), "'" + std::string(k) + "' on a " + *ty + " job (expected " +
                                 (own.empty() ? std::string("none of the payload keys") : join(own)) + ")");
            ok = false;
        }
    if (j.type == JmJobType::WriteValue) {
        if (t.contains("bo") == t.contains("address")) {
            error(t, "a write_value job needs exactly one of 'bo' (with 'offset') or 'address'");
            ok = false;
        } else if (t.contains("bo")) {
            j.bo = get_ref(t, "bo", what, true, bo_names_, "bo");
            auto off = get_u64(t, "offset", what, false);
            ok = ok && j.bo && (off || !t.contains("offset"));
            j.offset = off.value_or(0);
            if (j.bo && off && !sc_.bos[*j.bo].heap && !check_bo_offset(t, *j.bo, *off))
                ok = false;
            if (j.bo && off && sc_.bos[*j.bo].heap && *off + 8 > sc_.bos[*j.bo].size) {
                error(*t.get("offset"), "'offset' is outside heap bo '" + sc_.bos[*j.bo].name + "'");
                ok = false;
            }
        } else {
            auto a = get_u64(t, "address", what, true, 0, (1ull << 48) - 8);
            ok = ok && a;
            j.address = a.value_or(0);
        }
        auto v = get_u64(t, "value", what, false);
        ok = ok && (v || !t.contains("value"));
        j.value = v.value_or(0);
    }
    if (auto n = get_u64(t, "invocations", what, false, 1, 1ull << 31))
        j.invocations = *n;
    else if (t.contains("invocations"))
        ok = false;
    for (auto [key, field] : {std::pair{"tiles_x", &j.tiles_x}, {"tiles_y", &j.tiles_y}}) {
        if (auto v = get_int(t, key, what, false, 1, 4096))
            *field = static_cast<u32>(*v);
        else if (t.contains(key))
            ok = false;
    }
    if (auto b = get_bool(t, "barrier", what, false))
        j.barrier = *b;
    else if (t.contains("barrier"))
        ok = false;
    if (t.contains("dep")) {
        auto d = get_int(t, "dep", what, false, 0, position ? static_cast<s64>(position) - 1 : -1);
        if (!d && position == 0) {
            error(*t.get("dep"), "'dep' on the first job of a chain (expected an earlier job's position)");
        }
        ok = ok && d;
        if (d)
            j.dep = static_cast<u32>(*d);
    }
    if (!ok)
        return std::nullopt;
    return j;
}

void ScenarioParser::parse_chain(const toml::table& t) {
    const std::string what = "[[chain]]";
    check_keys(t, what, {"name", "jobs"});
    JmChain c;
    c.loc = loc_of(t.source());
    auto name = get_name(t, what);
    bool ok = name.has_value();
    const std::vector<const toml::table*> jobs = get_tables(t, "jobs", "an array of job tables {type = ...}");
    if (!t.contains("jobs") || (jobs.empty() && t.get("jobs")->is_array())) {
        error(t, "[[chain]] has no jobs (expected 'jobs' = [{type = ...}, ...])");
        ok = false;
    }
    for (size_t i = 0; i < jobs.size(); i++) {
        auto j = parse_jm_job(*jobs[i], i);
        ok = ok && j;
        if (j)
            c.jobs.push_back(std::move(*j));
    }
    if (!ok || !define(chain_names_, chain_where_, *name, sc_.chains.size(), t, "chain"))
        return poison("chain", name);
    c.name = *name;
    sc_.chains.push_back(std::move(c));
}

bool ScenarioParser::parse_timing(const toml::table& t, const std::string& what, u64* start_us, u64* every_us,
                                  u32* count) {
    const int timings = t.contains("at_us") + t.contains("every_us") + t.contains("fps");
    if (timings != 1) {
        error(t, what + " has " + std::to_string(timings) + " timings (expected exactly one of: at_us, every_us, fps)");
        return false;
    }
    bool ok = true;
    if (t.contains("at_us")) {
        auto at = get_u64(t, "at_us", what, true);
        ok = at.has_value();
        *start_us = at.value_or(0);
        for (auto k : {"count", "start_us"})
            if (t.contains(k)) {
                error(*t.get(k), "'" + std::string(k) + "' with 'at_us' (expected it only with every_us or fps)");
                ok = false;
            }
        return ok;
    }
    if (t.contains("every_us")) {
        auto e = get_u64(t, "every_us", what, true, 1);
        ok = e.has_value();
        *every_us = e.value_or(0);
    } else {
        auto f = get_number(t, "fps", what, true, true);
        ok = f.has_value();
        if (f)
            *every_us = std::max<u64>(1, static_cast<u64>(std::llround(1e6 / *f)));
    }
    auto c = get_int(t, "count", what, true, 1, 10'000'000);
    auto st = get_u64(t, "start_us", what, false);
    ok = ok && c && (st || !t.contains("start_us"));
    *count = static_cast<u32>(c.value_or(1));
    *start_us = st.value_or(0);
    return ok;
}

bool ScenarioParser::parse_fence_name(const toml::table& t, const std::string& what, size_t index, std::string* out) {
    auto f = get_string(t, "fence", what, false);
    if (!f)
        return !t.contains("fence");
    if (f->empty() || fence_names_.count(*f)) {
        error(*t.get("fence"), f->empty()
                                   ? "empty fence name (expected a name)"
                                   : "duplicate fence name '" + *f + "' (expected a name no other submission uses)");
        return false;
    }
    fence_names_.emplace(*f, index);
    *out = *f;
    return true;
}

void ScenarioParser::parse_jm_submit(const toml::table& t) {
    const std::string what = "[[jm_submit]]";
    check_keys(t, what,
               {"chain", "client", "ctx", "requirements", "bos", "at_us", "every_us", "fps", "count", "start_us",
                "waits", "signals", "fence"});
    JmSubmission s;
    s.loc = loc_of(t.source());
    auto chain = get_ref(t, "chain", what, true, chain_names_, "chain");
    auto client = get_ref(t, "client", what, true, client_names_, "client");
    bool ok = chain && client;
    if (t.contains("ctx")) {
        s.ctx = get_ref(t, "ctx", what, false, jm_ctx_names_, "jm_ctx");
        ok = ok && s.ctx;
        if (s.ctx && client && sc_.jm_ctxs[*s.ctx].client != *client) {
            error(*t.get("ctx"), "jm_ctx '" + sc_.jm_ctxs[*s.ctx].name + "' belongs to client '" +
                                     sc_.clients[sc_.jm_ctxs[*s.ctx].client].name + "' (expected a context of '" +
                                     sc_.clients[*client].name + "')");
            ok = false;
        }
    }
    if (const toml::node* r = t.get("requirements")) {
        if (!r->is_array()) {
            wrong_type(*r, "requirements", "an array of \"fs\", \"cycle_count\"");
            ok = false;
        } else {
            for (const toml::node& e : *r->as_array()) {
                const std::string v = e.is_string() ? e.as_string()->get() : "";
                if (v == "fs")
                    s.requirements |= PANFROST_JD_REQ_FS;
                else if (v == "cycle_count")
                    s.requirements |= PANFROST_JD_REQ_CYCLE_COUNT;
                else {
                    error(e, "unknown requirement (expected \"fs\" or \"cycle_count\")");
                    ok = false;
                }
            }
        }
    }
    // The BOs of the submitter's file only: the chain's and the `bos` list.
    auto bo_client = [&](size_t bo) { return sc_.vms[sc_.bos[bo].vm].client; };
    if (const toml::node* b = t.get("bos")) {
        if (!b->is_array()) {
            wrong_type(*b, "bos", "an array of bo names");
            ok = false;
        } else {
            for (const toml::node& e : *b->as_array()) {
                const std::string n = e.is_string() ? e.as_string()->get() : "";
                auto it = bo_names_.find(n);
                if (it == bo_names_.end()) {
                    if (!invalid_.count({"bo", n}))
                        error(e, "undefined bo '" + n + "' (expected " + expected_names(bo_names_, "bo") + ")");
                    ok = false;
                    continue;
                }
                s.bos.push_back(it->second);
            }
        }
    }
    if (chain && client) {
        for (const JmJob& j : sc_.chains[*chain].jobs)
            if (j.bo && std::find(s.bos.begin(), s.bos.end(), *j.bo) == s.bos.end())
                s.bos.push_back(*j.bo);
        for (size_t bo : s.bos)
            if (bo_client(bo) != *client) {
                error(t, "bo '" + sc_.bos[bo].name + "' belongs to client '" + sc_.clients[bo_client(bo)].name +
                             "' (expected BOs of client '" + sc_.clients[*client].name + "', the submitter)");
                ok = false;
            }
    }
    ok = parse_timing(t, what, &s.start_us, &s.every_us, &s.count) && ok;
    s.waits = parse_sync_refs(t, "waits", client, &ok);
    s.signals = parse_sync_refs(t, "signals", client, &ok);
    ok = parse_fence_name(t, what, sc_.jm_submissions.size(), &s.fence) && ok;
    if (!ok)
        return;
    s.chain = *chain;
    s.client = *client;
    sc_.jm_submissions.push_back(std::move(s));
}

void ScenarioParser::check_model_sections(const toml::table& root) {
    const bool g52 = sc_.model == GpuModel::G52;
    const char* model = g52 ? "g52" : "g610";
    const char* other = g52 ? "[[jm_ctx]], [[chain]] and [[jm_submit]]" : "[[group]], [[job]] and [[submit]]";
    static const std::vector<const char*> kCsfOnly = {"group", "job", "submit", "heap"};
    static const std::vector<const char*> kJmOnly = {"jm_ctx", "chain", "jm_submit"};
    for (const char* key : g52 ? kCsfOnly : kJmOnly) {
        if (const toml::node* n = root.get(key))
            error(*n, std::string("[[") + key + "]] in a scenario for GPU model " + model + " (expected " + other +
                          (g52 ? "; [gpu] model = \"g610\" runs groups" : "; [gpu] model = \"g52\" runs chains") + ")");
    }
    if (!g52 && sc_.expect.gpu_resets)
        error(sc_.expect.gpu_resets_loc,
              "'gpu_resets' on GPU model g610 (expected it only with [gpu] model = \"g52\")");
    for (const Bo& b : sc_.bos)
        if (b.heap && !g52)
            error(b.loc, "heap bo '" + b.name + "' on GPU model g610 (expected [[heap]] for tiler heaps)");
    if (g52) {
        for (const Bo& b : sc_.bos)
            if (b.va)
                error(b.loc, "bo '" + b.name +
                                 "' with a fixed 'va' on GPU model g52 (expected none: panfrost places "
                                 "each BO at CREATE_BO)");
        for (const Syncobj& s : sc_.syncobjs)
            if (s.timeline)
                error(s.loc, "timeline syncobj '" + s.name +
                                 "' on GPU model g52 (expected binary syncobjs: panfrost "
                                 "has no timeline syncobjs)");
        if (!sc_.expect.groups.empty() || !sc_.expect.latency.empty())
            error(sc_.expect.groups.empty() ? sc_.expect.latency.front().loc : sc_.expect.groups.front().loc,
                  "group state or latency expectations on GPU model g52 (expected fences, memory or gpu_resets)");
        for (const MemoryExpect& m : sc_.expect.memory)
            if (sc_.bos[m.bo].heap)
                error(m.loc, "a memory expectation on heap bo '" + sc_.bos[m.bo].name + "' (it has no CPU mapping)");
    }
}

}  // namespace upanthor::scenario
