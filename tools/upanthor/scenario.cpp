// upanthor scenario parser and validator (no upstream counterpart). toml++ does the syntax; this
// file checks every key, type, reference and range, and reports each problem with its position.
#include "tools/upanthor/scenario.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>
#endif

#include "drm/uapi/panthor_drm.h"

namespace upanthor::scenario {

std::string Diagnostic::to_string() const {
    return file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column) + ": " + message;
}

const char* asm_op_name(AsmOp op) {
    switch (op) {
    case AsmOp::Nop: return "NOP";
    case AsmOp::Move48: return "MOVE48";
    case AsmOp::Move32: return "MOVE32";
    case AsmOp::AddImm32: return "ADD_IMM32";
    case AsmOp::Load: return "LOAD";
    case AsmOp::Store: return "STORE";
    case AsmOp::Wait: return "WAIT";
    case AsmOp::SyncAdd64: return "SYNC_ADD64";
    case AsmOp::SyncWait64: return "SYNC_WAIT64";
    }
    return "?";
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

namespace {

using Keys = std::vector<std::string_view>;

std::string join(const Keys& keys) {
    std::string s;
    for (size_t i = 0; i < keys.size(); i++) {
        if (i) s += ", ";
        s += keys[i];
    }
    return s;
}

const char* type_name(const toml::node& n) {
    switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "nothing";
    }
}

SourceLoc loc_of(const toml::source_region& r) { return {r.begin.line, r.begin.column}; }

// Parses a non-negative integer written in a string: decimal or 0x hex, with an optional size
// suffix K/M/G (powers of 1024) when `sizes`.
std::optional<u64> parse_u64_text(std::string_view s, bool sizes) {
    std::string t(s);
    u64 mult = 1;
    if (sizes && !t.empty()) {
        char c = t.back();
        if (c == 'K' || c == 'k') mult = 1ull << 10;
        if (c == 'M' || c == 'm') mult = 1ull << 20;
        if (c == 'G' || c == 'g') mult = 1ull << 30;
        if (mult != 1) t.pop_back();
    }
    if (t.empty() || t[0] == '-' || t[0] == '+' || t[0] == ' ') return std::nullopt;
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(t.c_str(), &end, 0);
    if (errno || *end) return std::nullopt;
    if (mult != 1 && v > ~0ull / mult) return std::nullopt;
    return static_cast<u64>(v) * mult;
}

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

struct LatencyField {
    const char* name;
    kshim::ktime_t mock_hw::GpuLatencies::*field;
};
constexpr LatencyField kLatencies[] = {
    {"power_transition", &mock_hw::GpuLatencies::power_transition},
    {"soft_reset", &mock_hw::GpuLatencies::soft_reset},
    {"hard_reset", &mock_hw::GpuLatencies::hard_reset},
    {"cache_flush", &mock_hw::GpuLatencies::cache_flush},
    {"as_command", &mock_hw::GpuLatencies::as_command},
    {"mcu_boot", &mock_hw::GpuLatencies::mcu_boot},
    {"mcu_halt", &mock_hw::GpuLatencies::mcu_halt},
    {"mcu_disable", &mock_hw::GpuLatencies::mcu_disable},
    {"glb_request", &mock_hw::GpuLatencies::glb_request},
    {"csg_request", &mock_hw::GpuLatencies::csg_request},
    {"csg_state", &mock_hw::GpuLatencies::csg_state},
    {"csg_suspend", &mock_hw::GpuLatencies::csg_suspend},
    {"cs_slice", &mock_hw::GpuLatencies::cs_slice},
    {"sync_poll", &mock_hw::GpuLatencies::sync_poll},
};

constexpr int kLastFaultKind = static_cast<int>(mock_hw::FaultKind::CorruptSuspendBuffer);

class Parser {
public:
    explicit Parser(std::string_view file) : file_(file) { sc_.file = file_; }

    ParseResult run(std::string_view text) {
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
    InjectResult run_fault(std::string_view text, const mock_hw::GpuConfig& gpu) {
        InjectResult res;
        sc_.gpu = gpu;
        toml::table root;
        if (!parse_toml(text, &root)) {
            res.diagnostics = std::move(diags_);
            return res;
        }
        check_keys(root, "the fault", {"fault"});
        for (auto* t : get_tables(root, "fault", "a [[fault]] table")) parse_fault(*t);
        if (diags_.empty() && sc_.faults.size() == 1)
            res.fault = sc_.faults.front();
        res.diagnostics = std::move(diags_);
        return res;
    }

private:
    // TOML syntax: false (and the parser's diagnostic) when `text` is not a TOML document.
    bool parse_toml(std::string_view text, toml::table* root) {
        try {
            *root = toml::parse(text, file_);
            return true;
        } catch (const toml::parse_error& e) {
            error(loc_of(e.source()), std::string(e.description()));
            return false;
        }
    }

    // ---- diagnostics and checked access ----
    void error(SourceLoc l, std::string msg) { diags_.push_back({file_, l, std::move(msg)}); }
    void error(const toml::node& n, std::string msg) { error(loc_of(n.source()), std::move(msg)); }

    // Reports every key of `t` not in `allowed`, at the key.
    void check_keys(const toml::table& t, const std::string& what, const Keys& allowed) {
        for (auto&& [k, v] : t) {
            if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
                error(loc_of(k.source()), "unknown key '" + std::string(k.str()) + "' in " + what +
                                              " (expected one of: " + join(allowed) + ")");
        }
    }

    const toml::node* need(const toml::table& t, std::string_view key, const std::string& what, bool required,
                           const char* expected) {
        const toml::node* n = t.get(key);
        if (!n && required)
            error(t, "missing key '" + std::string(key) + "' in " + what + " (expected " + expected + ")");
        return n;
    }

    void wrong_type(const toml::node& n, std::string_view key, const char* expected) {
        error(n, "'" + std::string(key) + "' is " + type_name(n) + " (expected " + expected + ")");
    }

    std::optional<std::string> get_string(const toml::table& t, std::string_view key, const std::string& what,
                                          bool required) {
        const toml::node* n = need(t, key, what, required, "a string");
        if (!n) return std::nullopt;
        if (!n->is_string()) {
            wrong_type(*n, key, "a string");
            return std::nullopt;
        }
        return n->as_string()->get();
    }

    // A name: a non-empty string without spaces, dots or '@' (they separate references).
    std::optional<std::string> get_name(const toml::table& t, const std::string& what) {
        auto s = get_string(t, "name", what, true);
        if (!s) return std::nullopt;
        if (s->empty() || s->find_first_of(" \t.@+,") != std::string::npos) {
            error(*t.get("name"), "invalid name '" + *s + "' (expected a non-empty name without spaces, '.', '@', '+' or ',')");
            return std::nullopt;
        }
        return s;
    }

    std::optional<bool> get_bool(const toml::table& t, std::string_view key, const std::string& what, bool required) {
        const toml::node* n = need(t, key, what, required, "a boolean");
        if (!n) return std::nullopt;
        if (!n->is_boolean()) {
            wrong_type(*n, key, "a boolean");
            return std::nullopt;
        }
        return n->as_boolean()->get();
    }

    // An integer in [lo, hi].
    std::optional<s64> get_int(const toml::table& t, std::string_view key, const std::string& what, bool required,
                               s64 lo, s64 hi) {
        std::string expected = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
        const toml::node* n = need(t, key, what, required, expected.c_str());
        if (!n) return std::nullopt;
        if (!n->is_integer()) {
            wrong_type(*n, key, expected.c_str());
            return std::nullopt;
        }
        s64 v = n->as_integer()->get();
        if (v < lo || v > hi) {
            error(*n, "'" + std::string(key) + "' = " + std::to_string(v) + " is out of range (expected " + expected + ")");
            return std::nullopt;
        }
        return v;
    }

    // A u64 in [lo, hi]: an integer, or a string holding one (decimal, 0x hex; with `sizes`, a
    // K/M/G suffix) for values a TOML integer cannot hold.
    std::optional<u64> get_u64(const toml::table& t, std::string_view key, const std::string& what, bool required,
                               u64 lo = 0, u64 hi = ~0ull, bool sizes = false) {
        std::string expected = sizes ? "a size in bytes, an integer or a string like \"64K\"" : "a non-negative integer";
        const toml::node* n = need(t, key, what, required, expected.c_str());
        if (!n) return std::nullopt;
        std::optional<u64> v;
        if (n->is_integer()) {
            s64 i = n->as_integer()->get();
            if (i < 0) {
                error(*n, "'" + std::string(key) + "' = " + std::to_string(i) + " is negative (expected " + expected + ")");
                return std::nullopt;
            }
            v = static_cast<u64>(i);
        } else if (n->is_string()) {
            v = parse_u64_text(n->as_string()->get(), sizes);
            if (!v) {
                error(*n, "'" + std::string(key) + "' = \"" + n->as_string()->get() + "\" is not a number (expected " +
                              expected + ")");
                return std::nullopt;
            }
        } else {
            wrong_type(*n, key, expected.c_str());
            return std::nullopt;
        }
        if (*v < lo || *v > hi) {
            error(*n, "'" + std::string(key) + "' = " + std::to_string(*v) + " is out of range (expected " +
                          std::to_string(lo) + ".." + std::to_string(hi) + ")");
            return std::nullopt;
        }
        return v;
    }

    // A number (integer or float) > 0 or >= 0.
    std::optional<double> get_number(const toml::table& t, std::string_view key, const std::string& what,
                                     bool required, bool positive) {
        const char* expected = positive ? "a number > 0" : "a number >= 0";
        const toml::node* n = need(t, key, what, required, expected);
        if (!n) return std::nullopt;
        double v;
        if (n->is_integer())
            v = static_cast<double>(n->as_integer()->get());
        else if (n->is_floating_point())
            v = n->as_floating_point()->get();
        else {
            wrong_type(*n, key, expected);
            return std::nullopt;
        }
        if (!std::isfinite(v) || v < 0 || (positive && v == 0)) {
            std::ostringstream os;
            os << "'" << key << "' = " << v << " is out of range (expected " << expected << ")";
            error(*n, os.str());
            return std::nullopt;
        }
        return v;
    }

    const toml::table* get_table(const toml::table& t, std::string_view key, bool required, const std::string& what) {
        const toml::node* n = need(t, key, what, required, "a table");
        if (!n) return nullptr;
        if (!n->is_table()) {
            wrong_type(*n, key, "a table");
            return nullptr;
        }
        return n->as_table();
    }

    // The tables of an array (`[[key]]` or `key = [{...}, ...]`).
    std::vector<const toml::table*> get_tables(const toml::table& t, std::string_view key, const char* expected) {
        std::vector<const toml::table*> out;
        const toml::node* n = t.get(key);
        if (!n) return out;
        if (!n->is_array()) {
            wrong_type(*n, key, expected);
            return out;
        }
        for (const toml::node& e : *n->as_array()) {
            if (!e.is_table()) {
                error(e, "an element of '" + std::string(key) + "' is " + type_name(e) + " (expected " + expected + ")");
                continue;
            }
            out.push_back(e.as_table());
        }
        return out;
    }

    // Resolves a reference by name in `names`; `kind` says what it names.
    std::optional<size_t> get_ref(const toml::table& t, std::string_view key, const std::string& what, bool required,
                                  const std::map<std::string, size_t>& names, const char* kind) {
        auto s = get_string(t, key, what, required);
        if (!s) return std::nullopt;
        auto it = names.find(*s);
        if (it == names.end()) {
            if (invalid_.count({kind, *s})) return std::nullopt;  // its own diagnostic says why
            error(*t.get(key), "undefined " + std::string(kind) + " '" + *s + "' (expected " + expected_names(names, kind) + ")");
            return std::nullopt;
        }
        return it->second;
    }

    static std::string expected_names(const std::map<std::string, size_t>& names, const char* kind) {
        if (names.empty()) return std::string("a ") + kind + " defined in this file; there is none";
        std::string s = "one of: ";
        size_t i = 0;
        for (auto& [n, idx] : names) {
            if (i++) s += ", ";
            if (i > 8) {
                s += "...";
                break;
            }
            s += n;
        }
        return s;
    }

    // An object that was named but rejected: references to it are not reported again.
    void poison(const char* kind, const std::optional<std::string>& name) {
        if (name) invalid_.insert({kind, *name});
    }

    // Registers a unique name; false (and a diagnostic) on a duplicate.
    bool define(std::map<std::string, size_t>& names, std::map<std::string, SourceLoc>& where, const std::string& name,
                size_t idx, const toml::table& t, const char* kind) {
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

    // ---- sections ----
    void parse_root(const toml::table& root) {
        check_keys(root, "the top level",
                   {"scenario", "gpu", "client", "vm", "bo", "heap", "group", "syncobj", "job", "submit", "fault", "expect"});
        if (auto* t = get_table(root, "scenario", false, "the top level")) parse_meta(*t);
        if (auto* t = get_table(root, "gpu", false, "the top level")) parse_gpu(*t);
        for (auto* t : get_tables(root, "client", "an array of tables [[client]]")) parse_client(*t);
        for (auto* t : get_tables(root, "vm", "an array of tables [[vm]]")) parse_vm(*t);
        for (auto* t : get_tables(root, "bo", "an array of tables [[bo]]")) parse_bo(*t);
        for (auto* t : get_tables(root, "heap", "an array of tables [[heap]]")) parse_heap(*t);
        for (auto* t : get_tables(root, "group", "an array of tables [[group]]")) parse_group(*t);
        for (auto* t : get_tables(root, "syncobj", "an array of tables [[syncobj]]")) parse_syncobj(*t);
        for (auto* t : get_tables(root, "job", "an array of tables [[job]]")) parse_job(*t);
        for (auto* t : get_tables(root, "submit", "an array of tables [[submit]]")) parse_submit(*t);
        for (auto* t : get_tables(root, "fault", "an array of tables [[fault]]")) parse_fault(*t);
        if (auto* t = get_table(root, "expect", false, "the top level")) parse_expect(*t);
    }

    void parse_meta(const toml::table& t) {
        const std::string what = "[scenario]";
        check_keys(t, what, {"name", "description", "seed", "duration_us"});
        if (auto s = get_string(t, "name", what, false)) sc_.name = *s;
        if (auto s = get_string(t, "description", what, false)) sc_.description = *s;
        if (auto v = get_u64(t, "seed", what, false)) sc_.seed = *v;
        if (auto v = get_u64(t, "duration_us", what, false, 1, 3600ull * 1000 * 1000)) sc_.duration_us = *v;
    }

    void parse_gpu(const toml::table& t) {
        const std::string what = "[gpu]";
        mock_hw::GpuConfig& g = sc_.gpu;
        check_keys(t, what, {"csg_slots", "cs_per_csg", "shader_cores", "shader_present", "gpu_clock_hz", "timestamp_hz",
                             "core_clk_hz", "work_regs", "scoreboards", "cs_slice_instrs", "latency_us"});
        if (auto v = get_int(t, "csg_slots", what, false, 1, 31)) g.mcu.group_num = static_cast<u32>(*v);
        if (auto v = get_int(t, "cs_per_csg", what, false, 1, 32)) g.mcu.stream_num = static_cast<u32>(*v);
        if (t.contains("shader_cores") && t.contains("shader_present"))
            error(*t.get("shader_present"), "'shader_present' and 'shader_cores' both given (expected one of them)");
        else if (auto v = get_int(t, "shader_cores", what, false, 1, 32))
            g.id.shader_present = (1ull << *v) - 1;
        else if (auto m = get_u64(t, "shader_present", what, false, 1, 0xFFFFFFFFull))
            g.id.shader_present = *m;
        if (auto v = get_u64(t, "gpu_clock_hz", what, false, 1'000'000, 10'000'000'000ull)) g.gpu_clock_hz = *v;
        if (auto v = get_u64(t, "timestamp_hz", what, false, 1'000, 10'000'000'000ull)) g.timestamp_hz = *v;
        if (auto v = get_u64(t, "core_clk_hz", what, false, 1'000'000, 10'000'000'000ull))
            g.platform.core_clk_hz = static_cast<unsigned long>(*v);
        if (auto v = get_int(t, "work_regs", what, false, 16, 256)) g.mcu.work_regs = static_cast<u32>(*v);
        if (auto v = get_int(t, "scoreboards", what, false, 1, 16)) g.mcu.scoreboards = static_cast<u32>(*v);
        if (auto v = get_int(t, "cs_slice_instrs", what, false, 1, 1 << 24)) g.lat.cs_slice_instrs = static_cast<u32>(*v);
        if (auto* lat = get_table(t, "latency_us", false, what)) {
            Keys names;
            for (auto& f : kLatencies) names.push_back(f.name);
            check_keys(*lat, "[gpu.latency_us]", names);
            for (auto& f : kLatencies) {
                if (auto us = get_number(*lat, f.name, "[gpu.latency_us]", false, false))
                    g.lat.*f.field = static_cast<kshim::ktime_t>(std::llround(*us * 1000.0));
            }
        }
    }

    void parse_client(const toml::table& t) {
        const std::string what = "[[client]]";
        check_keys(t, what, {"name", "cap_sys_nice"});
        Client c;
        c.loc = loc_of(t.source());
        auto name = get_name(t, what);
        if (auto b = get_bool(t, "cap_sys_nice", what, false)) c.cap_sys_nice = *b;
        if (!name || !define(client_names_, client_where_, *name, sc_.clients.size(), t, "client")) return poison("client", name);
        c.name = *name;
        sc_.clients.push_back(std::move(c));
    }

    void parse_vm(const toml::table& t) {
        const std::string what = "[[vm]]";
        check_keys(t, what, {"name", "client"});
        Vm v;
        v.loc = loc_of(t.source());
        auto name = get_name(t, what);
        auto client = get_ref(t, "client", what, true, client_names_, "client");
        if (!name || !client || !define(vm_names_, vm_where_, *name, sc_.vms.size(), t, "vm")) return poison("vm", name);
        v.name = *name;
        v.client = *client;
        sc_.vms.push_back(std::move(v));
    }

    void parse_bo(const toml::table& t) {
        const std::string what = "[[bo]]";
        check_keys(t, what, {"name", "vm", "size", "va", "pattern", "values"});
        Bo b;
        b.loc = loc_of(t.source());
        auto name = get_name(t, what);
        auto vm = get_ref(t, "vm", what, true, vm_names_, "vm");
        auto size = get_u64(t, "size", what, true, 1, 1ull << 32, true);
        bool ok = name && vm && size;
        if (t.contains("va")) {
            auto va = get_u64(t, "va", what, false, 0x1000, (1ull << 48) - 1);
            if (va && (*va & 0xFFF)) {
                error(*t.get("va"), "'va' = " + std::to_string(*va) + " is not page aligned (expected a multiple of 4096)");
                va.reset();
            }
            ok = ok && va;
            b.va = va;
        }
        if (t.contains("pattern")) {
            auto p = get_u64(t, "pattern", what, false, 0, 0xFFFFFFFFull);
            ok = ok && p;
            if (p) b.pattern = static_cast<u32>(*p);
        }
        const std::string vwhat = "an element of 'values' of [[bo]]";
        for (auto* vt : get_tables(t, "values", "an array of tables {offset, value}")) {
            check_keys(*vt, vwhat, {"offset", "value"});
            auto off = get_u64(*vt, "offset", vwhat, true);
            auto val = get_u64(*vt, "value", vwhat, true);
            if (off && size && (*off % 8 || *off + 8 > *size)) {
                error(*vt->get("offset"), "'offset' = " + std::to_string(*off) + " is not an 8-byte aligned offset inside the BO (expected 0.." +
                                              std::to_string(*size >= 8 ? *size - 8 : 0) + ", a multiple of 8)");
                off.reset();
            }
            ok = ok && off && val;
            if (off && val) b.values.push_back({*off, *val});
        }
        if (!ok || !define(bo_names_, bo_where_, *name, sc_.bos.size(), t, "bo")) return poison("bo", name);
        b.name = *name;
        b.vm = *vm;
        b.size = *size;
        sc_.bos.push_back(std::move(b));
    }

    void parse_heap(const toml::table& t) {
        const std::string what = "[[heap]]";
        check_keys(t, what, {"name", "vm", "chunk_size", "initial_chunks", "max_chunks", "target_in_flight"});
        TilerHeap h;
        h.loc = loc_of(t.source());
        auto name = get_name(t, what);
        auto vm = get_ref(t, "vm", what, true, vm_names_, "vm");
        auto cs = get_u64(t, "chunk_size", what, true, 128 << 10, 8 << 20, true);
        if (cs && (*cs & 0xFFF)) {
            error(*t.get("chunk_size"), "'chunk_size' = " + std::to_string(*cs) + " is not page aligned (expected a multiple of 4096)");
            cs.reset();
        }
        auto initial = get_int(t, "initial_chunks", what, true, 1, 1 << 20);
        auto max = get_int(t, "max_chunks", what, true, 1, 1 << 20);
        auto target = get_int(t, "target_in_flight", what, true, 1, 65535);
        if (initial && max && *initial > *max) {
            error(*t.get("initial_chunks"), "'initial_chunks' = " + std::to_string(*initial) + " exceeds 'max_chunks' = " +
                                                std::to_string(*max) + " (expected initial_chunks <= max_chunks)");
            initial.reset();
        }
        if (!name || !vm || !cs || !initial || !max || !target ||
            !define(heap_names_, heap_where_, *name, sc_.heaps.size(), t, "heap"))
            return poison("heap", name);
        h.name = *name;
        h.vm = *vm;
        h.chunk_size = static_cast<u32>(*cs);
        h.initial_chunks = static_cast<u32>(*initial);
        h.max_chunks = static_cast<u32>(*max);
        h.target_in_flight = static_cast<u32>(*target);
        sc_.heaps.push_back(std::move(h));
    }

    void parse_group(const toml::table& t) {
        const std::string what = "[[group]]";
        check_keys(t, what, {"name", "client", "vm", "priority", "instances", "queues"});
        Group g;
        g.loc = loc_of(t.source());
        auto name = get_name(t, what);
        auto vm = get_ref(t, "vm", what, true, vm_names_, "vm");
        bool ok = name && vm;
        // `client` is optional: a VM belongs to one client, and the group is that client's.
        if (t.contains("client")) {
            auto c = get_ref(t, "client", what, false, client_names_, "client");
            if (c && vm && *c != sc_.vms[*vm].client) {
                const std::string& owner = sc_.clients[sc_.vms[*vm].client].name;
                error(*t.get("client"), "client '" + sc_.clients[*c].name + "' does not own vm '" + sc_.vms[*vm].name +
                                            "' (expected '" + owner + "', the vm's client)");
                c.reset();
            }
            ok = ok && c;
        }
        if (auto p = get_string(t, "priority", what, false)) {
            static const char* const kPrios[] = {"low", "medium", "high", "realtime"};
            auto it = std::find(std::begin(kPrios), std::end(kPrios), *p);
            if (it == std::end(kPrios)) {
                error(*t.get("priority"), "unknown priority '" + *p + "' (expected one of: low, medium, high, realtime)");
                ok = false;
            } else {
                g.priority = static_cast<GroupPriority>(it - std::begin(kPrios));
            }
        } else if (t.contains("priority")) {
            ok = false;
        }
        if (auto n = get_int(t, "instances", what, false, 1, 4096))
            g.instances = static_cast<u32>(*n);
        else if (t.contains("instances"))
            ok = false;
        const toml::node* qn = need(t, "queues", what, true, "an array of queue tables {name, priority, ring_size}");
        auto queues = get_tables(t, "queues", "an array of queue tables {name, priority, ring_size}");
        u32 max_queues = sc_.gpu.mcu.stream_num;
        if (qn && qn->is_array() && (qn->as_array()->empty() || qn->as_array()->size() > max_queues)) {
            error(*qn, "'queues' has " + std::to_string(qn->as_array()->size()) + " queues (expected 1.." +
                           std::to_string(max_queues) + ", the CS slots per CSG)");
            ok = false;
        }
        if (!qn || !qn->is_array()) ok = false;
        std::map<std::string, size_t> qnames;
        std::map<std::string, SourceLoc> qwhere;
        const std::string qwhat = "a queue of [[group]]";
        for (auto* qt : queues) {
            check_keys(*qt, qwhat, {"name", "priority", "ring_size"});
            Queue q;
            q.loc = loc_of(qt->source());
            auto qname = get_name(*qt, qwhat);
            auto prio = get_int(*qt, "priority", qwhat, false, 0, 15);
            auto ring = get_u64(*qt, "ring_size", qwhat, false, 0, ~0ull, true);
            if (ring && (*ring < 4096 || *ring > 65536 || (*ring & (*ring - 1)))) {
                error(*qt->get("ring_size"), "'ring_size' = " + std::to_string(*ring) +
                                                 " is not a power of two in 4096..65536 (expected 4K, 8K, 16K, 32K or 64K)");
                ok = false;
            }
            if (!qname || (qt->contains("priority") && !prio) || (qt->contains("ring_size") && !ring) ||
                !define(qnames, qwhere, *qname, g.queues.size(), *qt, "queue")) {
                ok = false;
                continue;
            }
            q.name = *qname;
            if (prio) q.priority = static_cast<u8>(*prio);
            if (ring) q.ring_size = static_cast<u32>(*ring);
            g.queues.push_back(std::move(q));
        }
        if (!ok || !define(group_names_, group_where_, *name, sc_.groups.size(), t, "group")) return poison("group", name);
        g.name = *name;
        g.vm = *vm;
        queue_names_[*name] = std::move(qnames);
        sc_.groups.push_back(std::move(g));
    }

    // `group` + `queue` keys naming one queue.
    std::optional<QueueRef> get_queue_ref(const toml::table& t, const std::string& what) {
        auto g = get_ref(t, "group", what, true, group_names_, "group");
        auto qs = get_string(t, "queue", what, true);
        if (!g || !qs) return std::nullopt;
        const auto& names = queue_names_[sc_.groups[*g].name];
        auto it = names.find(*qs);
        if (it == names.end()) {
            error(*t.get("queue"), "undefined queue '" + *qs + "' in group '" + sc_.groups[*g].name + "' (expected " +
                                       expected_names(names, "queue") + ")");
            return std::nullopt;
        }
        return QueueRef{*g, it->second};
    }

    void parse_syncobj(const toml::table& t) {
        const std::string what = "[[syncobj]]";
        check_keys(t, what, {"name", "client", "timeline"});
        Syncobj s;
        s.loc = loc_of(t.source());
        auto name = get_name(t, what);
        auto client = get_ref(t, "client", what, true, client_names_, "client");
        auto tl = get_bool(t, "timeline", what, false);
        if (!name || !client || (t.contains("timeline") && !tl) ||
            !define(syncobj_names_, syncobj_where_, *name, sc_.syncobjs.size(), t, "syncobj"))
            return poison("syncobj", name);
        s.name = *name;
        s.client = *client;
        s.timeline = tl.value_or(false);
        sc_.syncobjs.push_back(std::move(s));
    }

    void parse_job(const toml::table& t) {
        const std::string what = "[[job]]";
        static const Keys kOps = {"compute", "store", "wait", "hang", "fault_access", "tiler_fragment", "asm"};
        Keys allowed = {"name"};
        allowed.insert(allowed.end(), kOps.begin(), kOps.end());
        check_keys(t, what, allowed);
        Job j;
        j.loc = loc_of(t.source());
        auto name = get_name(t, what);
        std::vector<std::string_view> present;
        for (auto op : kOps)
            if (t.contains(op)) present.push_back(op);
        if (present.size() != 1) {
            error(t, present.empty() ? "[[job]] has no operation (expected exactly one of: " + join(kOps) + ")"
                                     : "[[job]] has " + std::to_string(present.size()) +
                                           " operations (expected exactly one of: " + join(kOps) + ")");
            return poison("job", name);
        }
        std::string_view op = present[0];
        bool ok = name.has_value();
        if (op == "asm") {
            j.kind = JobKind::Asm;
            ok = parse_asm(*t.get("asm"), j) && ok;
        } else if (op == "hang") {
            j.kind = JobKind::Hang;
            auto* ot = get_table(t, "hang", true, what);
            if (ot) check_keys(*ot, "'hang'", {});
            ok = ok && ot;
        } else {
            auto* ot = get_table(t, op, true, what);
            if (!ot) return poison("job", name);
            const std::string ow = "'" + std::string(op) + "'";
            if (op == "compute") {
                j.kind = JobKind::Compute;
                check_keys(*ot, ow, {"workgroups", "duration_us"});
                auto wg = get_int(*ot, "workgroups", ow, true, 1, 1 << 30);
                auto d = get_u64(*ot, "duration_us", ow, true, 0, 3600ull * 1000 * 1000);
                ok = ok && wg && d;
                if (wg && d) j.workgroups = static_cast<u32>(*wg), j.duration_us = *d;
            } else if (op == "store") {
                j.kind = JobKind::Store;
                check_keys(*ot, ow, {"bo", "offset", "value"});
                auto bo = get_ref(*ot, "bo", ow, true, bo_names_, "bo");
                auto off = get_u64(*ot, "offset", ow, true);
                auto val = get_u64(*ot, "value", ow, true);
                if (bo && off && !check_bo_offset(*ot, *bo, *off)) off.reset();
                ok = ok && bo && off && val;
                if (bo && off && val) j.bo = *bo, j.offset = *off, j.value = *val;
            } else if (op == "wait") {
                j.kind = JobKind::Wait;
                check_keys(*ot, ow, {"group", "queue", "value"});
                auto q = get_queue_ref(*ot, ow);
                auto val = get_u64(*ot, "value", ow, true, 1);
                ok = ok && q && val;
                if (q && val) j.wait_queue = *q, j.value = *val;
            } else if (op == "fault_access") {
                j.kind = JobKind::FaultAccess;
                check_keys(*ot, ow, {"address"});
                auto a = get_u64(*ot, "address", ow, true, 0, (1ull << 48) - 1);
                ok = ok && a;
                if (a) j.address = *a;
            } else if (op == "tiler_fragment") {
                j.kind = JobKind::TilerFragment;
                check_keys(*ot, ow, {"heap", "chunks"});
                auto h = get_ref(*ot, "heap", ow, true, heap_names_, "heap");
                auto c = get_int(*ot, "chunks", ow, true, 1, 1 << 20);
                ok = ok && h && c;
                if (h && c) j.heap = *h, j.chunks = static_cast<u32>(*c);
            }
        }
        if (!ok || !define(job_names_, job_where_, *name, sc_.jobs.size(), t, "job")) return poison("job", name);
        j.name = *name;
        sc_.jobs.push_back(std::move(j));
    }

    bool check_bo_offset(const toml::table& t, size_t bo, u64 off) {
        u64 size = sc_.bos[bo].size;
        if (off % 8 == 0 && off + 8 <= size) return true;
        error(*t.get("offset"), "'offset' = " + std::to_string(off) + " is not an 8-byte aligned offset inside bo '" +
                                    sc_.bos[bo].name + "' (expected 0.." + std::to_string(size >= 8 ? size - 8 : 0) +
                                    ", a multiple of 8)");
        return false;
    }

    // ---- command-stream assembly ----
    struct AsmLine {
        std::string_view text;
        SourceLoc loc;  // of text[0]
    };

    bool parse_asm(const toml::node& n, Job& j) {
        if (!n.is_string()) {
            wrong_type(n, "asm", "a string, one instruction per line");
            return false;
        }
        const std::string& s = n.as_string()->get();
        const auto& src = n.source();
        // A multi-line string drops a newline right after its opening quotes; detect it by the
        // line span so that line numbers stay exact.
        u32 newlines = static_cast<u32>(std::count(s.begin(), s.end(), '\n'));
        bool multiline = src.end.line > src.begin.line;
        u32 first_line = src.begin.line + ((multiline && src.end.line - src.begin.line > newlines) ? 1 : 0);
        u32 first_col = first_line == src.begin.line ? src.begin.column + (multiline ? 3 : 1) : 1;
        bool ok = true;
        size_t pos = 0;
        for (u32 line = first_line;; line++) {
            size_t nl = s.find('\n', pos);
            std::string_view text = std::string_view(s).substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
            ok = parse_asm_line({text, {line, line == first_line ? first_col : 1}}, j) && ok;
            if (nl == std::string::npos) break;
            pos = nl + 1;
        }
        if (ok && j.instrs.empty()) {
            error(n, "'asm' has no instructions (expected one instruction per line)");
            return false;
        }
        return ok;
    }

    struct Token {
        std::string_view text;
        u32 col;
    };

    bool parse_asm_line(AsmLine l, Job& j) {
        std::string_view t = l.text;
        if (auto c = t.find('#'); c != std::string_view::npos) t = t.substr(0, c);
        // Mnemonic, then comma-separated operands.
        std::vector<Token> tok;
        size_t i = 0;
        auto skip_ws = [&] {
            while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r')) i++;
        };
        skip_ws();
        if (i == t.size()) return true;
        size_t start = i;
        while (i < t.size() && t[i] != ' ' && t[i] != '\t' && t[i] != '\r') i++;
        Token mnem{t.substr(start, i - start), l.loc.column + static_cast<u32>(start)};
        skip_ws();
        while (i < t.size()) {
            start = i;
            while (i < t.size() && t[i] != ',') i++;
            size_t end = i;
            while (end > start && (t[end - 1] == ' ' || t[end - 1] == '\t' || t[end - 1] == '\r')) end--;
            tok.push_back({t.substr(start, end - start), l.loc.column + static_cast<u32>(start)});
            if (i < t.size()) i++;  // the comma
            skip_ws();
        }
        auto at = [&](const Token& k) { return SourceLoc{l.loc.line, k.col}; };
        std::string m(mnem.text);
        std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::toupper(c); });
        struct Shape {
            const char* name;
            AsmOp op;
            size_t min, max;
            const char* syntax;
        };
        static const Shape kShapes[] = {
            {"NOP", AsmOp::Nop, 0, 0, "NOP"},
            {"MOVE48", AsmOp::Move48, 2, 2, "MOVE48 dN, imm48|@bo[+offset]"},
            {"MOVE32", AsmOp::Move32, 2, 2, "MOVE32 rN, imm32"},
            {"ADD_IMM32", AsmOp::AddImm32, 3, 3, "ADD_IMM32 rD, rS, imm32"},
            {"LOAD", AsmOp::Load, 2, 3, "LOAD rD|dD, dA[, offset]"},
            {"STORE", AsmOp::Store, 2, 3, "STORE rS|dS, dA[, offset]"},
            {"WAIT", AsmOp::Wait, 1, 1, "WAIT mask|all"},
            {"SYNC_ADD64", AsmOp::SyncAdd64, 2, 2, "SYNC_ADD64 dAddr, dValue"},
            {"SYNC_WAIT64", AsmOp::SyncWait64, 3, 3, "SYNC_WAIT64 dAddr, dRef, le|gt"},
        };
        const Shape* shape = nullptr;
        for (auto& s : kShapes)
            if (m == s.name) shape = &s;
        if (!shape) {
            error(at(mnem), "unknown instruction '" + std::string(mnem.text) +
                                "' (expected one of: NOP, MOVE48, MOVE32, ADD_IMM32, LOAD, STORE, WAIT, SYNC_ADD64, SYNC_WAIT64)");
            return false;
        }
        if (tok.size() < shape->min || tok.size() > shape->max) {
            error(at(mnem), std::string(shape->name) + " takes " +
                                (shape->min == shape->max ? std::to_string(shape->min)
                                                          : std::to_string(shape->min) + " or " + std::to_string(shape->max)) +
                                " operands, got " + std::to_string(tok.size()) + " (expected " + shape->syntax + ")");
            return false;
        }
        for (auto& k : tok) {
            if (k.text.empty()) {
                error(at(k), std::string("empty operand (expected ") + shape->syntax + ")");
                return false;
            }
        }
        u32 user_regs = sc_.gpu.mcu.work_regs - 4;  // the top 4 are the kernel's (cs_builder Config)
        // Register operand: 'r' (32-bit) or 'd' (64-bit pair, even index).
        auto reg = [&](const Token& k, char kind, u8* out, bool* wide = nullptr) -> bool {
            char c = k.text[0];
            bool ok_kind = (c == kind) || (kind == '*' && (c == 'r' || c == 'd'));
            std::optional<u64> idx = k.text.size() > 1 && std::isdigit(static_cast<unsigned char>(k.text[1]))
                                         ? parse_u64_text(k.text.substr(1), false)
                                         : std::nullopt;
            bool is64 = c == 'd';
            bool valid = ok_kind && idx && (is64 ? (*idx % 2 == 0 && *idx + 1 < user_regs) : *idx < user_regs);
            if (!valid) {
                std::string exp = kind == 'r'   ? "a register r0..r" + std::to_string(user_regs - 1)
                                  : kind == 'd' ? "a 64-bit register d0, d2 .. d" + std::to_string(user_regs - 2)
                                                : "a register r0..r" + std::to_string(user_regs - 1) + " or d0, d2 .. d" +
                                                      std::to_string(user_regs - 2);
                error(at(k), "bad register '" + std::string(k.text) + "' (expected " + exp + ")");
                return false;
            }
            *out = static_cast<u8>(*idx);
            if (wide) *wide = is64;
            return true;
        };
        auto imm = [&](const Token& k, s64 lo, s64 hi, s64* out) -> bool {
            std::string_view v = k.text;
            bool neg = !v.empty() && v[0] == '-';
            if (neg) v.remove_prefix(1);
            auto u = parse_u64_text(v, false);
            if (u && *u <= static_cast<u64>(INT64_MAX)) {
                s64 x = neg ? -static_cast<s64>(*u) : static_cast<s64>(*u);
                if (x >= lo && x <= hi) {
                    *out = x;
                    return true;
                }
            }
            error(at(k), "bad immediate '" + std::string(k.text) + "' (expected an integer in " + std::to_string(lo) + ".." +
                             std::to_string(hi) + ")");
            return false;
        };
        AsmInstr in;
        in.op = shape->op;
        in.loc = at(mnem);
        bool ok = true;
        switch (shape->op) {
        case AsmOp::Nop: break;
        case AsmOp::Move48:
            ok = reg(tok[0], 'd', &in.dst);
            if (tok[1].text[0] == '@') {
                std::string_view r = tok[1].text.substr(1);
                std::string_view off;
                if (auto p = r.find('+'); p != std::string_view::npos) off = r.substr(p + 1), r = r.substr(0, p);
                auto it = bo_names_.find(std::string(r));
                if (it == bo_names_.end()) {
                    if (!invalid_.count({"bo", std::string(r)}))
                        error(at(tok[1]), "undefined bo '" + std::string(r) + "' (expected " + expected_names(bo_names_, "bo") + ")");
                    ok = false;
                } else {
                    in.bo_ref = it->second;
                    std::optional<u64> o = off.empty() ? std::optional<u64>(0) : parse_u64_text(off, false);
                    if (!o || *o >= sc_.bos[it->second].size) {
                        error(at(tok[1]), "bad offset in '" + std::string(tok[1].text) + "' (expected @" + std::string(r) +
                                              "+N with N < " + std::to_string(sc_.bos[it->second].size) + ")");
                        ok = false;
                    } else {
                        in.imm = static_cast<s64>(*o);
                    }
                }
            } else {
                ok = imm(tok[1], 0, (1ll << 48) - 1, &in.imm) && ok;
            }
            break;
        case AsmOp::Move32:
            ok = reg(tok[0], 'r', &in.dst);
            ok = imm(tok[1], INT32_MIN, UINT32_MAX, &in.imm) && ok;
            break;
        case AsmOp::AddImm32:
            ok = reg(tok[0], 'r', &in.dst);
            ok = reg(tok[1], 'r', &in.src) && ok;
            ok = imm(tok[2], INT32_MIN, INT32_MAX, &in.imm) && ok;
            break;
        case AsmOp::Load:
        case AsmOp::Store:
            ok = reg(tok[0], '*', &in.dst, &in.wide);
            ok = reg(tok[1], 'd', &in.src) && ok;
            if (tok.size() == 3) ok = imm(tok[2], INT16_MIN, INT16_MAX, &in.imm) && ok;
            break;
        case AsmOp::Wait: {
            s64 all = (1ll << sc_.gpu.mcu.scoreboards) - 1;
            if (tok[0].text == "all")
                in.imm = all;
            else
                ok = imm(tok[0], 0, all, &in.imm);
            break;
        }
        case AsmOp::SyncAdd64:
            ok = reg(tok[0], 'd', &in.dst);
            ok = reg(tok[1], 'd', &in.src) && ok;
            break;
        case AsmOp::SyncWait64: {
            ok = reg(tok[0], 'd', &in.dst);
            ok = reg(tok[1], 'd', &in.src) && ok;
            std::string c(tok[2].text);
            std::transform(c.begin(), c.end(), c.begin(), [](unsigned char x) { return std::tolower(x); });
            if (c == "gt" || c == "greater")
                in.cond_greater = true;
            else if (c != "le" && c != "lequal") {
                error(at(tok[2]), "bad condition '" + std::string(tok[2].text) + "' (expected le or gt)");
                ok = false;
            }
            break;
        }
        }
        if (ok) j.instrs.push_back(in);
        return ok;
    }

    // ---- submissions, faults, expectations ----
    // A job's BOs and heaps must be mapped in the VM of the group it is submitted to.
    std::optional<std::string> job_vm_conflict(const Job& j, size_t vm) {
        auto other = [&](const char* kind, const std::string& name, size_t in_vm) -> std::optional<std::string> {
            if (in_vm == vm) return std::nullopt;
            return std::string(kind) + " '" + name + "' of vm '" + sc_.vms[in_vm].name + "'";
        };
        switch (j.kind) {
        case JobKind::Store: return other("bo", sc_.bos[j.bo].name, sc_.bos[j.bo].vm);
        case JobKind::TilerFragment: return other("heap", sc_.heaps[j.heap].name, sc_.heaps[j.heap].vm);
        case JobKind::Wait: {
            const Group& g = sc_.groups[j.wait_queue.group];
            return other("the sync object of group", g.name, g.vm);
        }
        case JobKind::Asm:
            for (auto& in : j.instrs)
                if (in.bo_ref)
                    if (auto c = other("bo", sc_.bos[*in.bo_ref].name, sc_.bos[*in.bo_ref].vm)) return c;
            return std::nullopt;
        default: return std::nullopt;
        }
    }

    std::vector<SyncRef> parse_sync_refs(const toml::table& t, std::string_view key, std::optional<size_t> client, bool* ok) {
        std::vector<SyncRef> out;
        const std::string what = "an element of '" + std::string(key) + "'";
        for (auto* st : get_tables(t, key, "an array of tables {syncobj, point}")) {
            check_keys(*st, what, {"syncobj", "point"});
            auto s = get_ref(*st, "syncobj", what, true, syncobj_names_, "syncobj");
            if (!s) {
                *ok = false;
                continue;
            }
            if (client && sc_.syncobjs[*s].client != *client) {
                error(*st->get("syncobj"), "syncobj '" + sc_.syncobjs[*s].name + "' belongs to client '" +
                                               sc_.clients[sc_.syncobjs[*s].client].name + "' (expected a syncobj of client '" +
                                               sc_.clients[*client].name + "', the group's)");
                *ok = false;
                continue;
            }
            SyncRef r{*s, 0};
            bool tl = sc_.syncobjs[*s].timeline;
            if (tl) {
                auto p = get_u64(*st, "point", what, true, 1);
                if (!p) {
                    *ok = false;
                    continue;
                }
                r.point = *p;
            } else if (st->contains("point")) {
                error(*st->get("point"), "'point' on binary syncobj '" + sc_.syncobjs[*s].name +
                                             "' (expected no point; only timeline syncobjs have points)");
                *ok = false;
                continue;
            }
            out.push_back(r);
        }
        if (t.contains(key) && !t.get(key)->is_array()) *ok = false;
        return out;
    }

    void parse_submit(const toml::table& t) {
        const std::string what = "[[submit]]";
        check_keys(t, what, {"group", "queue", "job", "at_us", "every_us", "fps", "count", "start_us", "waits", "signals", "fence"});
        Submission s;
        s.loc = loc_of(t.source());
        auto q = get_queue_ref(t, what);
        auto job = get_ref(t, "job", what, true, job_names_, "job");
        bool ok = q && job;
        std::optional<size_t> client;
        if (q) {
            size_t vm = sc_.groups[q->group].vm;
            client = sc_.vms[vm].client;
            if (job) {
                if (auto c = job_vm_conflict(sc_.jobs[*job], vm)) {
                    error(*t.get("job"), "job '" + sc_.jobs[*job].name + "' uses " + *c + " but group '" +
                                             sc_.groups[q->group].name + "' runs in vm '" + sc_.vms[vm].name +
                                             "' (expected a job whose objects are in vm '" + sc_.vms[vm].name + "')");
                    ok = false;
                }
            }
        }
        int timings = t.contains("at_us") + t.contains("every_us") + t.contains("fps");
        if (timings != 1) {
            error(t, "[[submit]] has " + std::to_string(timings) + " timings (expected exactly one of: at_us, every_us, fps)");
            ok = false;
        } else if (t.contains("at_us")) {
            auto at = get_u64(t, "at_us", what, true);
            ok = ok && at;
            if (at) s.start_us = *at;
            for (auto k : {"count", "start_us"})
                if (t.contains(k)) {
                    error(*t.get(k), "'" + std::string(k) + "' with 'at_us' (expected it only with every_us or fps)");
                    ok = false;
                }
        } else {
            if (t.contains("every_us")) {
                auto e = get_u64(t, "every_us", what, true, 1);
                ok = ok && e;
                if (e) s.every_us = *e;
            } else {
                auto f = get_number(t, "fps", what, true, true);
                ok = ok && f;
                if (f) s.every_us = std::max<u64>(1, static_cast<u64>(std::llround(1e6 / *f)));
            }
            auto c = get_int(t, "count", what, true, 1, 10'000'000);
            auto st = get_u64(t, "start_us", what, false);
            ok = ok && c && (st || !t.contains("start_us"));
            if (c) s.count = static_cast<u32>(*c);
            if (st) s.start_us = *st;
        }
        s.waits = parse_sync_refs(t, "waits", client, &ok);
        s.signals = parse_sync_refs(t, "signals", client, &ok);
        if (auto f = get_string(t, "fence", what, false)) {
            if (f->empty() || fence_names_.count(*f)) {
                error(*t.get("fence"), f->empty() ? "empty fence name (expected a name)"
                                                  : "duplicate fence name '" + *f + "' (expected a name no other submission uses)");
                ok = false;
            } else {
                fence_names_.emplace(*f, sc_.submissions.size());
                s.fence = *f;
            }
        } else if (t.contains("fence")) {
            ok = false;
        }
        if (!ok) return;
        s.queue = *q;
        s.job = *job;
        sc_.submissions.push_back(std::move(s));
    }

    void parse_fault(const toml::table& t) {
        const std::string what = "[[fault]]";
        check_keys(t, what, {"kind", "at_us", "after_count", "probability", "always", "max_fires", "csg", "cs", "as",
                             "fault_addr", "fault_status", "exception", "delay_us", "glb_req_mask", "csg_req_mask",
                             "halt_status", "slow_factor", "wrong_state", "cs_event"});
        Fault f;
        f.loc = loc_of(t.source());
        mock_hw::FaultSpec& sp = f.spec;
        bool ok = true;
        if (auto k = get_string(t, "kind", what, true)) {
            int found = -1;
            std::string all;
            for (int i = 0; i <= kLastFaultKind; i++) {
                const char* n = mock_hw::fault_kind_name(static_cast<mock_hw::FaultKind>(i));
                if (*k == n) found = i;
                all += (i ? ", " : "") + std::string(n);
            }
            if (found < 0) {
                error(*t.get("kind"), "unknown fault kind '" + *k + "' (expected one of: " + all + ")");
                ok = false;
            } else {
                sp.kind = static_cast<mock_hw::FaultKind>(found);
            }
        } else {
            ok = false;
        }
        int triggers = t.contains("at_us") + t.contains("after_count") + t.contains("probability") + t.contains("always");
        if (triggers != 1) {
            error(t, "[[fault]] has " + std::to_string(triggers) +
                         " triggers (expected exactly one of: at_us, after_count, probability, always)");
            ok = false;
        } else if (t.contains("at_us")) {
            auto v = get_u64(t, "at_us", what, true);
            ok = ok && v;
            if (v) sp.trigger = mock_hw::FaultTrigger::at_time(static_cast<kshim::ktime_t>(*v) * 1000);
        } else if (t.contains("after_count")) {
            auto v = get_u64(t, "after_count", what, true, 1);
            ok = ok && v;
            if (v) sp.trigger = mock_hw::FaultTrigger::nth_occurrence(*v);
        } else if (t.contains("probability")) {
            auto p = get_number(t, "probability", what, true, true);
            if (p && *p > 1.0) {
                error(*t.get("probability"), "'probability' is above 1 (expected a number in (0, 1])");
                p.reset();
            }
            ok = ok && p;
            if (p) sp.trigger = mock_hw::FaultTrigger::with_probability(*p);
        } else {
            auto b = get_bool(t, "always", what, true);
            if (b && !*b) {
                error(*t.get("always"), "'always' = false (expected true, or another trigger)");
                b.reset();
            }
            ok = ok && b;
            sp.trigger = mock_hw::FaultTrigger::always();
        }
        auto opt_u32 = [&](std::string_view key, u32& field, u64 lo = 0, u64 hi = 0xFFFFFFFFull) {
            if (!t.contains(key)) return;
            auto v = get_u64(t, key, what, false, lo, hi);
            ok = ok && v;
            if (v) field = static_cast<u32>(*v);
        };
        auto opt_int = [&](std::string_view key, int& field, s64 lo, s64 hi) {
            if (!t.contains(key)) return;
            auto v = get_int(t, key, what, false, lo, hi);
            ok = ok && v;
            if (v) field = static_cast<int>(*v);
        };
        opt_u32("max_fires", sp.max_fires);
        opt_int("csg", sp.csg, -1, static_cast<s64>(sc_.gpu.mcu.group_num) - 1);
        opt_int("cs", sp.cs, -1, static_cast<s64>(sc_.gpu.mcu.stream_num) - 1);
        opt_int("as", sp.as, -1, 15);
        opt_u32("fault_status", sp.fault_status);
        opt_u32("exception", sp.exception);
        opt_u32("glb_req_mask", sp.glb_req_mask);
        opt_u32("csg_req_mask", sp.csg_req_mask);
        opt_u32("halt_status", sp.halt_status);
        opt_u32("slow_factor", sp.slow_factor, 1);
        opt_u32("wrong_state", sp.wrong_state, 0, 7);
        if (t.contains("fault_addr")) {
            auto v = get_u64(t, "fault_addr", what, false, 0, (1ull << 48) - 1);
            ok = ok && v;
            if (v) sp.fault_addr = *v;
        }
        if (t.contains("delay_us")) {
            auto v = get_u64(t, "delay_us", what, false, 0, 3600ull * 1000 * 1000);
            ok = ok && v;
            if (v) sp.delay = static_cast<kshim::ktime_t>(*v) * 1000;
        }
        if (auto e = get_string(t, "cs_event", what, false)) {
            if (*e == "run_issue")
                sp.cs_event = mock_hw::CsFaultEvent::RunIssue;
            else if (*e == "instruction")
                sp.cs_event = mock_hw::CsFaultEvent::Instruction;
            else {
                error(*t.get("cs_event"), "unknown cs_event '" + *e + "' (expected run_issue or instruction)");
                ok = false;
            }
        } else if (t.contains("cs_event")) {
            ok = false;
        }
        if (ok) sc_.faults.push_back(std::move(f));
    }

    void parse_expect(const toml::table& t) {
        const std::string what = "[expect]";
        check_keys(t, what, {"fences", "groups", "memory", "latency"});
        if (auto* ft = get_table(t, "fences", false, what)) {
            for (auto&& [k, v] : *ft) {
                std::string name(k.str());
                if (!fence_names_.count(name)) {
                    std::map<std::string, size_t> names(fence_names_.begin(), fence_names_.end());
                    error(loc_of(k.source()), "undefined fence '" + name + "' (expected " +
                                                  expected_names(names, "fence named by a [[submit]] 'fence'") + ")");
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
                        for (auto& e : kErrnos) all += std::string(", ") + e.name;
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
                    error(loc_of(k.source()), "undefined group '" + name + "' (expected " + expected_names(group_names_, "group") + ")");
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
                if (ok) sc_.expect.groups.push_back(ge);
            }
        }
        const std::string mwhat = "[[expect.memory]]";
        for (auto* mt : get_tables(t, "memory", "an array of tables [[expect.memory]]")) {
            check_keys(*mt, mwhat, {"bo", "offset", "value"});
            auto bo = get_ref(*mt, "bo", mwhat, true, bo_names_, "bo");
            auto off = get_u64(*mt, "offset", mwhat, true);
            auto val = get_u64(*mt, "value", mwhat, true);
            if (bo && off && !check_bo_offset(*mt, *bo, *off)) continue;
            if (bo && off && val) sc_.expect.memory.push_back({*bo, *off, *val, loc_of(mt->source())});
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
                if (!lt->contains(key)) continue;
                *field = get_u64(*lt, key, lwhat, false, 1);
                ok = ok && field->has_value();
            }
            if (!le.p50_us && !le.p99_us && !le.max_us && ok) {
                error(*lt, "[[expect.latency]] has no bound (expected at least one of: p50_us, p99_us, max_us)");
                ok = false;
            }
            if (ok) sc_.expect.latency.push_back(le);
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
    std::set<std::pair<std::string, std::string>> invalid_;            // (kind, name) rejected
};

}  // namespace

ParseResult parse_scenario(std::string_view text, std::string_view file) { return Parser(file).run(text); }

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

InjectResult parse_inject(std::string_view spec, const mock_hw::GpuConfig& gpu) {
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
            r.diagnostics.push_back({"--inject", {0, 0},
                                     "'" + std::string(pair) + "' is not a key=value pair (expected e.g. kind=FwHang,at_us=2000)"});
            return r;
        }
        text += std::string(pair.substr(0, eq)) + " = " + inject_value_as_toml(pair.substr(eq + 1)) + "\n";
        start = comma + 1;
    }
    return Parser("--inject").run_fault(text, gpu);
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
