// (no upstream counterpart) The end-of-run checks every host runs the same way: after a run (a
// test, a fuzz input, a scenario, a process served by the preload), the runtime is drained and
// anything left over is a problem: a runtime that does not go idle, a task still blocked, a kshim
// report (lockdep, might_sleep, fence signalling, WARN, BUG, deadlock), objects or pages allocated
// since the mark and not freed, mappings left, a device its driver unplugged.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"

namespace upanthor::host {

struct Problem {
    enum class Kind { Deadlock, NotIdle, StuckTask, Report, Leak, LiveMappings };
    Kind kind;
    std::string text;
};
// One problem a line ("leaked at the end: ..."), "" for none.
std::string problems_text(const std::vector<Problem>& problems);

struct CheckOptions {
    // How much time the drain may take: virtual time in simulated mode, a bound in real mode.
    kshim::ktime_t drain_limit = 600 * kshim::NSEC_PER_SEC;
    // Reports the run explains (a WARN upstream also gives on an injected failure): not problems.
    std::function<bool(const kshim::Report&)> accept_report;
    // Leak lines (mem_counters_diff) that are not problems, e.g. a cache that outlives the run.
    std::function<bool(std::string_view line)> ignore_leak;
    // How the problems name the moment ("at the end of the test").
    std::string when = "at the end of the run";
};

// The memory mark and the checks against it. A mark also clears pending reports and the log, so
// nothing from before it counts against the run.
class RunChecks {
public:
    RunChecks() { mark(); }
    void mark();
    // Drains the runtime (advance_until_idle up to the limit), then: not idle, blocked tasks, reports.
    std::vector<Problem> drain(kshim::Runtime& rt, const CheckOptions& opts = {}) const;
    // What a runtime drained as far as it goes still shows: not idle, blocked tasks.
    static std::vector<Problem> leftovers(kshim::Runtime& rt, bool idle, const CheckOptions& opts = {});
    // What is allocated now and was not at the mark.
    std::vector<Problem> leaks(const CheckOptions& opts = {}) const;
    // Reports only (for a host whose runtime is gone already).
    static std::vector<Problem> reports(const CheckOptions& opts = {});
    const kshim::MemCounters& marked() const { return mark_; }

private:
    kshim::MemCounters mark_;
};

}  // namespace upanthor::host
