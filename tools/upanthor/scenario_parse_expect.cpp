// The scenario parser's [expect] section (scenario_parser.h): fence states, group states, memory
// contents and latency bounds. (No upstream counterpart.)
#include "tools/upanthor/scenario_parser.h"

#include <algorithm>
#include <cerrno>

#include "uapi/drm/panthor_drm.h"

namespace upanthor::scenario {

namespace {

struct ErrnoName {
    const char* name;
    int err;
};
constexpr ErrnoName kErrnos[] = {
    {"ECANCELED", ECANCELED}, {"ETIMEDOUT", ETIMEDOUT}, {"EINVAL", EINVAL}, {"EIO", EIO},
    {"ENOMEM", ENOMEM},       {"EFAULT", EFAULT},       {"ENODEV", ENODEV}, {"EAGAIN", EAGAIN},
    {"EBUSY", EBUSY},         {"EACCES", EACCES},       {"EPERM", EPERM},   {"ENOENT", ENOENT},
};

struct GroupFlagName {
    const char* name;
    u32 flag;
};
constexpr GroupFlagName kGroupFlags[] = {
    {"timedout", DRM_PANTHOR_GROUP_STATE_TIMEDOUT},
    {"fatal_fault", DRM_PANTHOR_GROUP_STATE_FATAL_FAULT},
    {"innocent", DRM_PANTHOR_GROUP_STATE_INNOCENT},
};

}  // namespace

void ScenarioParser::parse_expect(const toml::table& t) {
    const std::string what = "[expect]";
    check_keys(t, what, {"fences", "groups", "memory", "latency", "gpu_resets"});
    if (auto r = get_u64(t, "gpu_resets", what, false, 0, 1'000'000)) {
        sc_.expect.gpu_resets = *r;
        sc_.expect.gpu_resets_loc = loc_of(t.get("gpu_resets")->source());
    }
    if (auto* ft = get_table(t, "fences", false, what)) {
        for (auto&& [k, v] : *ft) {
            std::string name(k.str());
            if (!fence_names_.count(name)) {
                std::map<std::string, size_t> names(fence_names_.begin(), fence_names_.end());
                error(loc_of(k.source()),
                      "undefined fence '" + name + "' (expected " +
                          expected_names(names, "fence named by a [[submit]] or [[jm_submit]] 'fence'") + ")");
                continue;
            }
            FenceExpect fe;
            fe.fence = name;
            fe.loc = loc_of(v.source());
            const char* exp = "\"signaled\", \"pending\" or an errno name such as \"ECANCELED\"";
            if (!v.is_string()) {
                wrong_type(v, name, exp);
                continue;
            }
            const std::string& s = v.as_string()->get();
            if (s == "signaled") {
                fe.state = FenceExpect::State::Signaled;
            } else if (s == "pending") {
                fe.state = FenceExpect::State::Pending;
            } else {
                auto it = std::find_if(std::begin(kErrnos), std::end(kErrnos), [&](auto& e) { return s == e.name; });
                if (it == std::end(kErrnos)) {
                    std::string all;
                    for (auto& e : kErrnos)
                        all += std::string(", ") + e.name;
                    error(v, "unknown fence state '" + s + "' (expected signaled, pending" + all + ")");
                    continue;
                }
                fe.state = FenceExpect::State::Error;
                fe.error = -it->err;
            }
            sc_.expect.fences.push_back(std::move(fe));
        }
    }
    if (auto* gt = get_table(t, "groups", false, what)) {
        for (auto&& [k, v] : *gt) {
            std::string name(k.str());
            auto g = group_names_.find(name);
            if (g == group_names_.end()) {
                error(loc_of(k.source()),
                      "undefined group '" + name + "' (expected " + expected_names(group_names_, "group") + ")");
                continue;
            }
            GroupExpect ge;
            ge.group = g->second;
            ge.loc = loc_of(v.source());
            const char* exp = "an array of state flags: timedout, fatal_fault, innocent; [] for none";
            if (!v.is_array()) {
                wrong_type(v, name, exp);
                continue;
            }
            bool ok = true;
            for (const toml::node& f : *v.as_array()) {
                auto it = f.is_string() ? std::find_if(std::begin(kGroupFlags), std::end(kGroupFlags),
                                                       [&](auto& e) { return f.as_string()->get() == e.name; })
                                        : std::end(kGroupFlags);
                if (it == std::end(kGroupFlags)) {
                    error(f, std::string("bad group state flag (expected ") + exp + ")");
                    ok = false;
                    continue;
                }
                ge.state |= it->flag;
            }
            if (ok)
                sc_.expect.groups.push_back(ge);
        }
    }
    const std::string mwhat = "[[expect.memory]]";
    for (auto* mt : get_tables(t, "memory", "an array of tables [[expect.memory]]")) {
        check_keys(*mt, mwhat, {"bo", "offset", "value"});
        auto bo = get_ref(*mt, "bo", mwhat, true, bo_names_, "bo");
        auto off = get_u64(*mt, "offset", mwhat, true);
        auto val = get_u64(*mt, "value", mwhat, true);
        if (bo && off && !check_bo_offset(*mt, *bo, *off))
            continue;
        if (bo && off && val)
            sc_.expect.memory.push_back({*bo, *off, *val, loc_of(mt->source())});
    }
    const std::string lwhat = "[[expect.latency]]";
    for (auto* lt : get_tables(t, "latency", "an array of tables [[expect.latency]]")) {
        check_keys(*lt, lwhat, {"group", "p50_us", "p99_us", "max_us"});
        LatencyExpect le;
        le.loc = loc_of(lt->source());
        bool ok = true;
        if (lt->contains("group")) {
            le.group = get_ref(*lt, "group", lwhat, false, group_names_, "group");
            ok = le.group.has_value();
        }
        for (auto [key, field] : {std::pair{"p50_us", &le.p50_us}, {"p99_us", &le.p99_us}, {"max_us", &le.max_us}}) {
            if (!lt->contains(key))
                continue;
            *field = get_u64(*lt, key, lwhat, false, 1);
            ok = ok && field->has_value();
        }
        if (!le.p50_us && !le.p99_us && !le.max_us && ok) {
            error(*lt, "[[expect.latency]] has no bound (expected at least one of: p50_us, p99_us, max_us)");
            ok = false;
        }
        if (ok)
            sc_.expect.latency.push_back(le);
    }
}

std::string file_;
std::vector<Diagnostic> diags_;
Scenario sc_;
std::map<std::string, size_t> client_names_, vm_names_, bo_names_, heap_names_, group_names_, job_names_,
    syncobj_names_, fence_names_;
std::map<std::string, SourceLoc> client_where_, vm_where_, bo_where_, heap_where_, group_where_, job_where_,
    syncobj_where_;
std::map<std::string, std::map<std::string, size_t>> queue_names_;  // group -> queue -> index

}  // namespace upanthor::scenario
