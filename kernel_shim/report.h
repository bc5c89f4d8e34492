// The checks' verdicts (lockdep splats, might_sleep, WARN, leaks, deadlocks): lib/bug.c and
// kernel/locking/lockdep.c print them; we record them so a test fails, or can expect one.
#pragma once
#include <source_location>
#include <string>
#include <vector>

namespace kshim {

enum class ReportKind {
    LockOrder,        // lock-order inversion (possible circular locking dependency)
    LockUsage,        // unlock of a lock not held, recursive locking, held at exit, assert_held failed
    MightSleep,       // sleeping function called from invalid context
    FenceSignalling,  // fence-signalling contract broken (reported through lockdep as well)
    Warn,             // WARN_ON fired
    Leak,             // objects or pages still live at teardown
    Deadlock,         // simulated mode: nothing runnable, somebody still waits
    Irq,              // interrupt storms, unhandled interrupts
    Fence,            // fence released unsignalled, double signal misuse
    Bug,              // BUG_ON
};

const char* report_kind_name(ReportKind kind);

struct Report {
    ReportKind kind;
    std::string title;
    std::string detail;
};

// Records a report and prints it to stderr at once (tests fail on unconsumed reports).
void report(ReportKind kind, std::string title, std::string detail = {});

// Removes and returns all reports recorded so far.
std::vector<Report> take_reports();
// Removes the first report of `kind` and returns true, or returns false if there is none.
bool consume_report(ReportKind kind);
size_t pending_report_count();

// Implementation of WARN_ON; returns `condition` so it can be used in `if`.
bool warn_on_impl(bool condition, const char* text, std::source_location loc);
bool warn_impl(bool condition, std::source_location loc, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
[[noreturn]] void bug_impl(const char* text, std::source_location loc);

}  // namespace kshim

// The condition is tested inline; only a firing WARN pays for the call.
#define WARN_ON(cond)                                                          \
    (__builtin_expect(static_cast<bool>(cond), 0)                              \
         ? ::kshim::warn_on_impl(true, #cond, std::source_location::current()) \
         : false)
#define WARN_ON_ONCE(cond)                                                       \
    ([&]() -> bool {                                                             \
        static bool warned_;                                                     \
        bool c_ = static_cast<bool>(cond);                                       \
        if (c_ && !warned_) {                                                    \
            warned_ = true;                                                      \
            ::kshim::warn_on_impl(true, #cond, std::source_location::current()); \
        }                                                                        \
        return c_;                                                               \
    }())
#define WARN(cond, ...)                                                           \
    (__builtin_expect(static_cast<bool>(cond), 0)                                 \
         ? ::kshim::warn_impl(true, std::source_location::current(), __VA_ARGS__) \
         : false)
#define BUG_ON(cond)                                                   \
    do {                                                               \
        if (cond)                                                      \
            ::kshim::bug_impl(#cond, std::source_location::current()); \
    } while (0)
#define BUG() ::kshim::bug_impl("BUG()", std::source_location::current())
