// upanthor scenario parser and validator (no upstream counterpart): the entry points, the
// section order and the names that references resolve through. toml++ does the syntax; the
// checked access is toml_access.h and each section's parser is in a scenario_parse_*.cpp
// (scenario_parser.h lists them). Every key, type, reference and range is checked, and each
// problem is reported with its position.
#include "tools/upanthor/scenario.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "tools/upanthor/scenario_parser.h"

namespace upanthor::scenario {

std::string Diagnostic::to_string() const {
    return file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": " + message;
}

const char* job_kind_name(JobKind k) {
    switch (k) {
    case JobKind::Compute: return "compute";
    case JobKind::Store: return "store";
    case JobKind::Wait: return "wait";
    case JobKind::Hang: return "hang";
    case JobKind::FaultAccess: return "fault_access";
    case JobKind::TilerFragment: return "tiler_fragment";
    case JobKind::Asm: return "asm";
    }
    return "?";
}

ParseResult ScenarioParser::run(std::string_view text) {
    ParseResult res;
    toml::table root;
    if (!parse_toml(text, &root)) {
        res.diagnostics = std::move(diags_);
        return res;
    }
    parse_root(root);
    // Sections are checked in dependency order; report in file order.
    std::stable_sort(diags_.begin(), diags_.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.column < b.loc.column;
    });
    if (diags_.empty())
        res.scenario = std::move(sc_);
    res.diagnostics = std::move(diags_);
    return res;
}

// One [[fault]] table alone (`--inject`), validated against `gpu`.
InjectResult ScenarioParser::run_fault(std::string_view text, const mock_hw::GpuConfig& gpu, GpuModel model) {
    InjectResult res;
    sc_.gpu = gpu;
    sc_.model = model;
    toml::table root;
    if (!parse_toml(text, &root)) {
        res.diagnostics = std::move(diags_);
        return res;
    }
    check_keys(root, "the fault", {"fault"});
    for (auto* t : get_tables(root, "fault", "a [[fault]] table"))
        parse_fault(*t);
    if (diags_.empty() && sc_.faults.size() == 1)
        res.fault = sc_.faults.front();
    res.diagnostics = std::move(diags_);
    return res;
}

std::optional<std::string> ScenarioParser::get_name(const toml::table& t, const std::string& what) {
    auto s = get_string(t, "name", what, true);
    if (!s)
        return std::nullopt;
    if (s->empty() || s->find_first_of(" \t.@+,") != std::string::npos) {
        error(*t.get("name"),
              "invalid name '" + *s + "' (expected a non-empty name without spaces, '.', '@', '+' or ',')");
        return std::nullopt;
    }
    return s;
}

std::optional<size_t> ScenarioParser::get_ref(const toml::table& t, std::string_view key, const std::string& what,
                                              bool required, const std::map<std::string, size_t>& names,
                                              const char* kind) {
    auto s = get_string(t, key, what, required);
    if (!s)
        return std::nullopt;
    auto it = names.find(*s);
    if (it == names.end()) {
        if (invalid_.count({kind, *s}))
            return std::nullopt;  // its own diagnostic says why
        error(*t.get(key),
              "undefined " + std::string(kind) + " '" + *s + "' (expected " + expected_names(names, kind) + ")");
        return std::nullopt;
    }
    return it->second;
}

std::string ScenarioParser::expected_names(const std::map<std::string, size_t>& names, const char* kind) {
    if (names.empty())
        return std::string("a ") + kind + " defined in this file; there is none";
    std::string s = "one of: ";
    size_t i = 0;
    for (auto& [n, idx] : names) {
        if (i++)
            s += ", ";
        if (i > 8) {
            s += "...";
            break;
        }
        s += n;
    }
    return s;
}

// An object that was named but rejected: references to it are not reported again.
void ScenarioParser::poison(const char* kind, const std::optional<std::string>& name) {
    if (name)
        invalid_.insert({kind, *name});
}

// Registers a unique name; false (and a diagnostic) on a duplicate.
bool ScenarioParser::define(std::map<std::string, size_t>& names, std::map<std::string, SourceLoc>& where,
                            const std::string& name, size_t idx, const toml::table& t, const char* kind) {
    auto [it, inserted] = names.emplace(name, idx);
    if (!inserted) {
        SourceLoc first = where[name];
        error(*t.get("name"), std::string("duplicate ") + kind + " name '" + name + "' (first defined at " +
                                  std::to_string(first.line) + ":" + std::to_string(first.column) + ")");
        return false;
    }
    where[name] = loc_of(t.source());
    return true;
}

void ScenarioParser::parse_root(const toml::table& root) {
    check_keys(root, "the top level",
               {"scenario", "gpu", "client", "vm", "bo", "heap", "group", "syncobj", "job", "submit", "jm_ctx", "chain",
                "jm_submit", "fault", "expect"});
    if (auto* t = get_table(root, "scenario", false, "the top level"))
        parse_meta(*t);
    if (auto* t = get_table(root, "gpu", false, "the top level"))
        parse_gpu(*t);
    for (auto* t : get_tables(root, "client", "an array of tables [[client]]"))
        parse_client(*t);
    for (auto* t : get_tables(root, "vm", "an array of tables [[vm]]"))
        parse_vm(*t);
    for (auto* t : get_tables(root, "bo", "an array of tables [[bo]]"))
        parse_bo(*t);
    for (auto* t : get_tables(root, "heap", "an array of tables [[heap]]"))
        parse_heap(*t);
    for (auto* t : get_tables(root, "group", "an array of tables [[group]]"))
        parse_group(*t);
    for (auto* t : get_tables(root, "syncobj", "an array of tables [[syncobj]]"))
        parse_syncobj(*t);
    for (auto* t : get_tables(root, "job", "an array of tables [[job]]"))
        parse_job(*t);
    for (auto* t : get_tables(root, "submit", "an array of tables [[submit]]"))
        parse_submit(*t);
    for (auto* t : get_tables(root, "jm_ctx", "an array of tables [[jm_ctx]]"))
        parse_jm_ctx(*t);
    for (auto* t : get_tables(root, "chain", "an array of tables [[chain]]"))
        parse_chain(*t);
    for (auto* t : get_tables(root, "jm_submit", "an array of tables [[jm_submit]]"))
        parse_jm_submit(*t);
    for (auto* t : get_tables(root, "fault", "an array of tables [[fault]]"))
        parse_fault(*t);
    if (auto* t = get_table(root, "expect", false, "the top level"))
        parse_expect(*t);
    check_model_sections(root);
}

// `group` + `queue` keys naming one queue.
std::optional<QueueRef> ScenarioParser::get_queue_ref(const toml::table& t, const std::string& what) {
    auto g = get_ref(t, "group", what, true, group_names_, "group");
    auto qs = get_string(t, "queue", what, true);
    if (!g || !qs)
        return std::nullopt;
    const auto& names = queue_names_[sc_.groups[*g].name];
    auto it = names.find(*qs);
    if (it == names.end()) {
        error(*t.get("queue"), "undefined queue '" + *qs + "' in group '" + sc_.groups[*g].name + "' (expected " +
                                   expected_names(names, "queue") + ")");
        return std::nullopt;
    }
    return QueueRef{*g, it->second};
}

bool ScenarioParser::check_bo_offset(const toml::table& t, size_t bo, u64 off) {
    u64 size = sc_.bos[bo].size;
    if (off % 8 == 0 && off + 8 <= size)
        return true;
    error(*t.get("offset"), "'offset' = " + std::to_string(off) + " is not an 8-byte aligned offset inside bo '" +
                                sc_.bos[bo].name + "' (expected 0.." + std::to_string(size >= 8 ? size - 8 : 0) +
                                ", a multiple of 8)");
    return false;
}

ParseResult parse_scenario(std::string_view text, std::string_view file) {
    return ScenarioParser(file).run(text);
}

namespace {

// A value of a `--inject` pair as TOML: numbers and booleans as they are, anything else quoted.
std::string inject_value_as_toml(std::string_view v) {
    if (v == "true" || v == "false")
        return std::string(v);
    bool numeric = !v.empty();
    for (char c : v)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' && c != '-')
            numeric = false;
    if (numeric && (std::isdigit(static_cast<unsigned char>(v[0])) || v[0] == '.' || v[0] == '+' || v[0] == '-'))
        return std::string(v);
    std::string q = "\"";
    for (char c : v) {
        if (c == '"' || c == '\\')
            q += '\\';
        q += c;
    }
    return q + "\"";
}

}  // namespace

InjectResult parse_inject(std::string_view spec, const mock_hw::GpuConfig& gpu, GpuModel model) {
    // "k=v,k=v" becomes a one-table TOML document, so the checks are exactly the [[fault]] ones;
    // the pairs go one per line, so a diagnostic's line names the pair (+1 for the header).
    std::string text = "[[fault]]\n";
    size_t start = 0;
    while (start <= spec.size()) {
        size_t comma = spec.find(',', start);
        if (comma == std::string_view::npos)
            comma = spec.size();
        const std::string_view pair = spec.substr(start, comma - start);
        const size_t eq = pair.find('=');
        if (pair.empty() || eq == std::string_view::npos || eq == 0) {
            InjectResult r;
            r.diagnostics.push_back(
                {"--inject",
                 {0, 0},
                 "'" + std::string(pair) + "' is not a key=value pair (expected e.g. kind=FwHang,at_us=2000)"});
            return r;
        }
        text += std::string(pair.substr(0, eq)) + " = " + inject_value_as_toml(pair.substr(eq + 1)) + "\n";
        start = comma + 1;
    }
    return ScenarioParser("--inject").run_fault(text, gpu, model);
}

ParseResult parse_scenario_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        ParseResult r;
        r.diagnostics.push_back({path, {0, 0}, "cannot read the file (expected a readable TOML scenario)"});
        return r;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse_scenario(ss.str(), path);
}

}  // namespace upanthor::scenario
