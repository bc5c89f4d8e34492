// Mirrors kernel/printk: a captured log with the kernel's levels.
#include "kernel_shim/log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

namespace kshim {
namespace {
std::mutex g_log_lock;  // protects g_log
// A ring like printk's log buffer: the newest kLogCapacity lines. A run that logs without end (a
// fault storm in a long simulation) must not grow the process without bound.
constexpr size_t kLogCapacity = size_t{1} << 16;
std::deque<LogLine> g_log;

LogLevel print_threshold() {
    static const LogLevel level = [] {
        const char* env = std::getenv("KSHIM_LOG");
        if (!env)
            return LogLevel::Warn;
        if (!std::strcmp(env, "debug"))
            return LogLevel::Debug;
        if (!std::strcmp(env, "info"))
            return LogLevel::Info;
        if (!std::strcmp(env, "none"))
            return static_cast<LogLevel>(0);  // fuzzers: lines only captured
        return LogLevel::Warn;
    }();
    return level;
}

const char* level_name(LogLevel l) {
    switch (l) {
    case LogLevel::Err: return "err";
    case LogLevel::Warn: return "warn";
    case LogLevel::Notice: return "notice";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
    }
    return "?";
}
}  // namespace

void log_message(LogLevel level, const Device* dev, const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = std::strlen(buf);
    while (n && buf[n - 1] == '\n')
        buf[--n] = 0;  // the kernel's messages end in \n; we store lines
    std::string device = dev ? dev->name : "";
    if (level <= print_threshold())
        std::fprintf(stderr, "[%s] %s%s%s\n", level_name(level), device.c_str(), device.empty() ? "" : ": ", buf);
    std::lock_guard g(g_log_lock);
    if (g_log.size() == kLogCapacity)
        g_log.pop_front();
    g_log.push_back({level, std::move(device), buf});
}

std::vector<LogLine> log_lines() {
    std::lock_guard g(g_log_lock);
    return {g_log.begin(), g_log.end()};
}

void log_clear() {
    std::lock_guard g(g_log_lock);
    g_log.clear();
}

bool log_contains(const std::string& needle, LogLevel at_most) {
    std::lock_guard g(g_log_lock);
    for (const auto& l : g_log)
        if (l.level <= at_most && l.text.find(needle) != std::string::npos)
            return true;
    return false;
}

}  // namespace kshim
