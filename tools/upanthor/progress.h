// A one-line progress bar for a person watching a terminal (upanthor sweep). (No upstream
// counterpart.)
//
// DOC: The bar redraws one line in place ("\r" ... erase to end of line) with the count done, the
// failures so far, the rate and an estimate of the time left, at most ten times a second (a
// redraw per finished run would cost more than the runs on a fast sweep). finish() erases it, so
// what the command prints afterwards starts on a clean line. The caller decides whether there is
// a terminal at all (isatty): a bar must never end up in a pipe or a log file.
#pragma once
#include <cstdint>
#include <cstdio>

namespace upanthor {

class ProgressBar {
public:
    // `out` nullptr: every call is a no-op.
    ProgressBar(std::FILE* out, std::uint64_t total);
    ~ProgressBar() { finish(); }
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    // `done` of `total` finished, `failed` of them failed. `force` redraws even within the
    // rate limit.
    void update(std::uint64_t done, std::uint64_t failed, bool force = false);
    void finish();

private:
    std::FILE* out_;
    std::uint64_t total_;
    std::uint64_t start_ns_;
    std::uint64_t last_draw_ns_ = 0;
    bool drawn_ = false;
};

}  // namespace upanthor
