// (no upstream counterpart) The end-of-run checks (run_checks.h).
#include "host/run_checks.h"

#include <sstream>

#include "kernel_shim/log.h"
#include "kernel_shim/sim_abort.h"

namespace upanthor::host {

std::string problems_text(const std::vector<Problem>& problems) {
    std::string out;
    for (const Problem& p : problems) {
        out += p.text;
        if (out.empty() || out.back() != '\n')
            out += '\n';
    }
    return out;
}

void RunChecks::mark() {
    kshim::take_reports();
    kshim::log_clear();
    mark_ = kshim::mem_counters();
}

std::vector<Problem> RunChecks::drain(kshim::Runtime& rt, const CheckOptions& opts) const {
    std::vector<Problem> out;
    bool idle = false;
    try {
        idle = rt.advance_until_idle(opts.drain_limit);
    } catch (const kshim::SimAbort&) {
        out.push_back({Problem::Kind::Deadlock, "simulation deadlock while draining (see the report above)"});
    }
    for (Problem& p : leftovers(rt, idle, opts))
        out.push_back(std::move(p));
    for (Problem& p : reports(opts))
        out.push_back(std::move(p));
    return out;
}

std::vector<Problem> RunChecks::leftovers(kshim::Runtime& rt, bool idle, const CheckOptions& opts) {
    std::vector<Problem> out;
    if (!idle)
        out.push_back(
            {Problem::Kind::NotIdle, "the runtime did not go idle " + opts.when + " (a periodic timer or work?)"});
    for (const std::string& s : rt.stuck_tasks())
        out.push_back({Problem::Kind::StuckTask, "task still blocked " + opts.when + ": " + s});
    return out;
}

std::vector<Problem> RunChecks::reports(const CheckOptions& opts) {
    std::vector<Problem> out;
    for (const kshim::Report& r : kshim::take_reports()) {
        if (opts.accept_report && opts.accept_report(r))
            continue;
        out.push_back({Problem::Kind::Report, std::string("kshim report [") + kshim::report_kind_name(r.kind) +
                                                  "]: " + r.title + "\n" + r.detail});
    }
    return out;
}

std::vector<Problem> RunChecks::leaks(const CheckOptions& opts) const {
    std::string diff = kshim::mem_counters_diff(mark_, kshim::mem_counters());
    if (opts.ignore_leak) {
        std::string kept;
        std::istringstream in(diff);
        for (std::string line; std::getline(in, line);)
            if (!opts.ignore_leak(line))
                kept += line + "\n";
        diff = kept;
    }
    if (diff.empty())
        return {};
    return {{Problem::Kind::Leak, "leaked " + opts.when + ":\n" + diff}};
}

}  // namespace upanthor::host
