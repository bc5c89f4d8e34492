// upanthor's progress bar (progress.h).
#include "tools/upanthor/progress.h"

#include <cinttypes>

#include "kernel_shim/time.h"

namespace upanthor {
namespace {

constexpr std::uint64_t kRedrawNs = 100'000'000;
constexpr int kBarWidth = 30;

}  // namespace

ProgressBar::ProgressBar(std::FILE* out, std::uint64_t total)
    : out_(out), total_(total), start_ns_(kshim::host_monotonic_ns()) {}

void ProgressBar::update(std::uint64_t done, std::uint64_t failed, bool force) {
    if (!out_)
        return;
    const std::uint64_t now = kshim::host_monotonic_ns();
    if (!force && drawn_ && now - last_draw_ns_ < kRedrawNs)
        return;
    last_draw_ns_ = now;
    drawn_ = true;
    const int filled = total_ ? static_cast<int>(done * kBarWidth / total_) : kBarWidth;
    char bar[kBarWidth + 1];
    for (int k = 0; k < kBarWidth; k++)
        bar[k] = k < filled ? '#' : '.';
    bar[kBarWidth] = '\0';
    const double elapsed = static_cast<double>(now - start_ns_) * 1e-9;
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
    std::fprintf(out_, "\r[%s] %" PRIu64 "/%" PRIu64 "  %" PRIu64 " failed  %.1f runs/s", bar, done, total_, failed,
                 rate);
    if (rate > 0 && done < total_)
        std::fprintf(out_, "  ETA %.0f s", static_cast<double>(total_ - done) / rate);
    std::fputs("\033[K", out_);
    std::fflush(out_);
}

void ProgressBar::finish() {
    if (!out_ || !drawn_)
        return;
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
    drawn_ = false;
}

}  // namespace upanthor
