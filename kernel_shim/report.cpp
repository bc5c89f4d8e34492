// Mirrors lib/bug.c (WARN/BUG) and the reporting half of lockdep: records verdicts for the tests.
#include "kernel_shim/report.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

namespace kshim {
namespace {
std::mutex g_reports_lock;  // protects g_reports
std::vector<Report> g_reports;
}  // namespace

const char* report_kind_name(ReportKind kind) {
    switch (kind) {
    case ReportKind::LockOrder: return "lock-order";
    case ReportKind::LockUsage: return "lock-usage";
    case ReportKind::MightSleep: return "might-sleep";
    case ReportKind::FenceSignalling: return "fence-signalling";
    case ReportKind::Warn: return "warn";
    case ReportKind::Leak: return "leak";
    case ReportKind::Deadlock: return "deadlock";
    case ReportKind::Irq: return "irq";
    case ReportKind::Fence: return "fence";
    case ReportKind::Bug: return "bug";
    }
    return "?";
}

void report(ReportKind kind, std::string title, std::string detail) {
    std::fprintf(stderr, "\n===== kshim report [%s]: %s\n%s%s=====\n", report_kind_name(kind), title.c_str(),
                 detail.c_str(), detail.empty() || detail.back() == '\n' ? "" : "\n");
    std::lock_guard g(g_reports_lock);
    g_reports.push_back({kind, std::move(title), std::move(detail)});
}

std::vector<Report> take_reports() {
    std::lock_guard g(g_reports_lock);
    return std::exchange(g_reports, {});
}

bool consume_report(ReportKind kind) {
    std::lock_guard g(g_reports_lock);
    for (auto it = g_reports.begin(); it != g_reports.end(); ++it) {
        if (it->kind == kind) {
            g_reports.erase(it);
            return true;
        }
    }
    return false;
}

size_t pending_report_count() {
    std::lock_guard g(g_reports_lock);
    return g_reports.size();
}

static std::string where(std::source_location loc) {
    return std::string(loc.file_name()) + ":" + std::to_string(loc.line()) + " in " + loc.function_name();
}

bool warn_on_impl(bool condition, const char* text, std::source_location loc) {
    if (condition)
        report(ReportKind::Warn, std::string("WARN_ON(") + text + ")", "at " + where(loc));
    return condition;
}

bool warn_impl(bool condition, std::source_location loc, const char* fmt, ...) {
    if (!condition)
        return false;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    report(ReportKind::Warn, buf, "at " + where(loc));
    return true;
}

void bug_impl(const char* text, std::source_location loc) {
    report(ReportKind::Bug, std::string("kernel BUG: ") + text, "at " + where(loc));
    std::abort();
}

}  // namespace kshim
