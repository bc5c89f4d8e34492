// What the scenario parser's tests share (scenario_test.cpp, scenario_jm_test.cpp): a result's
// diagnostics as text for a failure message, and one row of a diagnostics table.
#pragma once
#include <string>

#include "tools/upanthor/scenario.h"

namespace upanthor::scenario::testing {

inline std::string dump(const ParseResult& r) {
    std::string s;
    for (auto& d : r.diagnostics)
        s += d.to_string() + "\n";
    return s;
}

// A snippet appended to a valid prelude, and the one diagnostic it must produce.
struct DiagRow {
    const char* name;
    const char* snippet;
    unsigned line;  // within the snippet, 1-based
    unsigned column;
    const char* message_part;
};

}  // namespace upanthor::scenario::testing
