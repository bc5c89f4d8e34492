// Mirrors include/linux/dev_printk.h and printk: messages are captured so tests can assert on them.
#pragma once
#include <string>
#include <vector>

#include "kernel_shim/device.h"

namespace kshim {

enum class LogLevel { Err = 3, Warn = 4, Notice = 5, Info = 6, Debug = 7 };

struct LogLine {
    LogLevel level;
    std::string device;
    std::string text;
};

void log_message(LogLevel level, const Device* dev, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// Captured messages (all levels). Printing to stderr: err/warn always, the rest when
// KSHIM_LOG=debug (or info) is set.
std::vector<LogLine> log_lines();
void log_clear();
// True when a captured line at `level` or more severe contains `needle`.
bool log_contains(const std::string& needle, LogLevel at_most = LogLevel::Debug);

}  // namespace kshim

#define dev_err(dev, ...) ::kshim::log_message(::kshim::LogLevel::Err, (dev), __VA_ARGS__)
#define dev_warn(dev, ...) ::kshim::log_message(::kshim::LogLevel::Warn, (dev), __VA_ARGS__)
#define dev_notice(dev, ...) ::kshim::log_message(::kshim::LogLevel::Notice, (dev), __VA_ARGS__)
#define dev_info(dev, ...) ::kshim::log_message(::kshim::LogLevel::Info, (dev), __VA_ARGS__)
// Debug lines are compiled out of builds without the debug checks (the release preset), as the
// kernel's dev_dbg is off unless dynamic debug enables it: hot paths (every VM_BIND logs one)
// must not pay for formatting and capturing them. The arguments are still type-checked.
#if KSHIM_DEBUG_CHECKS
#define dev_dbg(dev, ...) ::kshim::log_message(::kshim::LogLevel::Debug, (dev), __VA_ARGS__)
#else
#define dev_dbg(dev, ...)                                                       \
    do {                                                                        \
        if (false)                                                              \
            ::kshim::log_message(::kshim::LogLevel::Debug, (dev), __VA_ARGS__); \
    } while (0)
#endif
#define pr_err(...) ::kshim::log_message(::kshim::LogLevel::Err, nullptr, __VA_ARGS__)
#define pr_warn(...) ::kshim::log_message(::kshim::LogLevel::Warn, nullptr, __VA_ARGS__)
#define pr_info(...) ::kshim::log_message(::kshim::LogLevel::Info, nullptr, __VA_ARGS__)
#define pr_debug(...) ::kshim::log_message(::kshim::LogLevel::Debug, nullptr, __VA_ARGS__)
