// The checked TOML access layer of the scenario parser (toml_access.h; no upstream counterpart).
#include "tools/upanthor/toml_access.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace upanthor::scenario {

std::string join(const Keys& keys) {
    std::string s;
    for (size_t i = 0; i < keys.size(); i++) {
        if (i)
            s += ", ";
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

SourceLoc loc_of(const toml::source_region& r) {
    return {r.begin.line, r.begin.column};
}

// Parses a non-negative integer written in a string: decimal or 0x hex, with an optional size
// suffix K/M/G (powers of 1024) when `sizes`.
std::optional<u64> parse_u64_text(std::string_view s, bool sizes) {
    std::string t(s);
    u64 mult = 1;
    if (sizes && !t.empty()) {
        char c = t.back();
        if (c == 'K' || c == 'k')
            mult = 1ull << 10;
        if (c == 'M' || c == 'm')
            mult = 1ull << 20;
        if (c == 'G' || c == 'g')
            mult = 1ull << 30;
        if (mult != 1)
            t.pop_back();
    }
    if (t.empty() || t[0] == '-' || t[0] == '+' || t[0] == ' ')
        return std::nullopt;
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(t.c_str(), &end, 0);
    if (errno || *end)
        return std::nullopt;
    if (mult != 1 && v > ~0ull / mult)
        return std::nullopt;
    return static_cast<u64>(v) * mult;
}

bool TomlAccess::parse_toml(std::string_view text, toml::table* root) {
    try {
        *root = toml::parse(text, file_);
        return true;
    } catch (const toml::parse_error& e) {
        error(loc_of(e.source()), std::string(e.description()));
        return false;
    }
}

void TomlAccess::check_keys(const toml::table& t, const std::string& what, const Keys& allowed) {
    for (auto&& [k, v] : t) {
        if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end())
            error(loc_of(k.source()), "unknown key '" + std::string(k.str()) + "' in " + what +
                                          " (expected one of: " + join(allowed) + ")");
    }
}

const toml::node* TomlAccess::need(const toml::table& t, std::string_view key, const std::string& what, bool required,
                                   const char* expected) {
    const toml::node* n = t.get(key);
    if (!n && required)
        error(t, "missing key '" + std::string(key) + "' in " + what + " (expected " + expected + ")");
    return n;
}

void TomlAccess::wrong_type(const toml::node& n, std::string_view key, const char* expected) {
    error(n, "'" + std::string(key) + "' is " + type_name(n) + " (expected " + expected + ")");
}

std::optional<std::string> TomlAccess::get_string(const toml::table& t, std::string_view key, const std::string& what,
                                                  bool required) {
    const toml::node* n = need(t, key, what, required, "a string");
    if (!n)
        return std::nullopt;
    if (!n->is_string()) {
        wrong_type(*n, key, "a string");
        return std::nullopt;
    }
    return n->as_string()->get();
}

std::optional<bool> TomlAccess::get_bool(const toml::table& t, std::string_view key, const std::string& what,
                                         bool required) {
    const toml::node* n = need(t, key, what, required, "a boolean");
    if (!n)
        return std::nullopt;
    if (!n->is_boolean()) {
        wrong_type(*n, key, "a boolean");
        return std::nullopt;
    }
    return n->as_boolean()->get();
}

// An integer in [lo, hi].
std::optional<s64> TomlAccess::get_int(const toml::table& t, std::string_view key, const std::string& what,
                                       bool required, s64 lo, s64 hi) {
    std::string expected = "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
    const toml::node* n = need(t, key, what, required, expected.c_str());
    if (!n)
        return std::nullopt;
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
std::optional<u64> TomlAccess::get_u64(const toml::table& t, std::string_view key, const std::string& what,
                                       bool required, u64 lo, u64 hi, bool sizes) {
    std::string expected = sizes ? "a size in bytes, an integer or a string like \"64K\"" : "a non-negative integer";
    const toml::node* n = need(t, key, what, required, expected.c_str());
    if (!n)
        return std::nullopt;
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
std::optional<double> TomlAccess::get_number(const toml::table& t, std::string_view key, const std::string& what,
                                             bool required, bool positive) {
    const char* expected = positive ? "a number > 0" : "a number >= 0";
    const toml::node* n = need(t, key, what, required, expected);
    if (!n)
        return std::nullopt;
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

const toml::table* TomlAccess::get_table(const toml::table& t, std::string_view key, bool required,
                                         const std::string& what) {
    const toml::node* n = need(t, key, what, required, "a table");
    if (!n)
        return nullptr;
    if (!n->is_table()) {
        wrong_type(*n, key, "a table");
        return nullptr;
    }
    return n->as_table();
}

// The tables of an array (`[[key]]` or `key = [{...}, ...]`).
std::vector<const toml::table*> TomlAccess::get_tables(const toml::table& t, std::string_view key,
                                                       const char* expected) {
    std::vector<const toml::table*> out;
    const toml::node* n = t.get(key);
    if (!n)
        return out;
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

}  // namespace upanthor::scenario
