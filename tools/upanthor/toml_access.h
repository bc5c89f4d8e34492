// The checked TOML access layer of the scenario parser (no upstream counterpart). toml++ does the
// syntax; TomlAccess reads one key with the type and range the caller expects and reports every
// missing key, wrong type, out-of-range value and unknown key as "file:line:column: message",
// collecting them instead of stopping at the first. Internal to upanthor_scenario (it includes
// toml++, which the library links privately).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#if __has_include(<toml++/toml.hpp>)
#include <toml++/toml.hpp>
#else
#include <toml++/toml.h>
#endif

#include "tools/upanthor/scenario.h"

namespace upanthor::scenario {

// The keys a table may hold.
using Keys = std::vector<std::string_view>;

// "a, b, c"
std::string join(const Keys& keys);
// "an integer", "a table", ...: what a node is, for "'key' is X (expected Y)".
const char* type_name(const toml::node& n);
SourceLoc loc_of(const toml::source_region& r);
// A non-negative integer written in a string: decimal or 0x hex, with an optional size suffix
// K/M/G (powers of 1024) when `sizes`.
std::optional<u64> parse_u64_text(std::string_view s, bool sizes);

class TomlAccess {
public:
    explicit TomlAccess(std::string_view file) : file_(file) {}

    const std::string& file() const { return file_; }

    // TOML syntax: false (and the parser's diagnostic) when `text` is not a TOML document.
    bool parse_toml(std::string_view text, toml::table* root);

    void error(SourceLoc l, std::string msg) { diags_.push_back({file_, l, std::move(msg)}); }
    void error(const toml::node& n, std::string msg) { error(loc_of(n.source()), std::move(msg)); }

    // Reports every key of `t` not in `allowed`, at the key; `what` names the table.
    void check_keys(const toml::table& t, const std::string& what, const Keys& allowed);

    // The key's node; a missing required key is reported (`expected` says what should be there).
    const toml::node* need(const toml::table& t, std::string_view key, const std::string& what, bool required,
                           const char* expected);
    void wrong_type(const toml::node& n, std::string_view key, const char* expected);

    // Each getter returns nullopt (and has reported why) when the key is missing but required, has
    // the wrong type or is out of range; a missing optional key is nullopt without a report.
    std::optional<std::string> get_string(const toml::table& t, std::string_view key, const std::string& what,
                                          bool required);
    std::optional<bool> get_bool(const toml::table& t, std::string_view key, const std::string& what, bool required);
    // An integer in [lo, hi].
    std::optional<s64> get_int(const toml::table& t, std::string_view key, const std::string& what, bool required,
                               s64 lo, s64 hi);
    // A u64 in [lo, hi]: an integer, or a string holding one (decimal, 0x hex; with `sizes`, a
    // K/M/G suffix) for values a TOML integer cannot hold.
    std::optional<u64> get_u64(const toml::table& t, std::string_view key, const std::string& what, bool required,
                               u64 lo = 0, u64 hi = ~0ull, bool sizes = false);
    // A number (integer or float) > 0 (`positive`) or >= 0.
    std::optional<double> get_number(const toml::table& t, std::string_view key, const std::string& what, bool required,
                                     bool positive);
    const toml::table* get_table(const toml::table& t, std::string_view key, bool required, const std::string& what);
    // The tables of an array (`[[key]]` or `key = [{...}, ...]`); other elements are reported.
    std::vector<const toml::table*> get_tables(const toml::table& t, std::string_view key, const char* expected);

protected:
    std::string file_;
    std::vector<Diagnostic> diags_;
};

}  // namespace upanthor::scenario
