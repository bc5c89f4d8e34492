// GPU_CYCLE_COUNT and GPU_TIMESTAMP as every mock GPU computes them from the runtime's clock: the
// cycle counter counts at gpu_clock_hz while it runs (what starts and stops it is family-specific:
// GPU_CMD, the firmware, the MCU), the timestamp at timestamp_hz from boot. Callers hold the Gpu
// lock.
#pragma once
#include "kernel_shim/time.h"
#include "mock_hw/config.h"

namespace mock_hw {

class GpuCounters {
public:
    explicit GpuCounters(const GpuConfig& cfg) : cfg_(cfg) {}

    static u64 ns_to_ticks(ktime_t ns, u64 hz) {
        return static_cast<u64>(static_cast<unsigned __int128>(ns < 0 ? 0 : ns) * hz / 1'000'000'000u);
    }
    // Starts or stops the cycle counter; it keeps its count while stopped.
    void set_cycle_counter_running(bool run) {
        if (run == running_)
            return;
        base_ = cycle_count();
        since_ = kshim::ktime_get();
        running_ = run;
    }
    u64 cycle_count() const {
        return running_ ? base_ + ns_to_ticks(kshim::ktime_get() - since_, cfg_.gpu_clock_hz) : base_;
    }
    u64 timestamp() const { return ns_to_ticks(kshim::ktime_get(), cfg_.timestamp_hz); }
    u64 timestamp_hz() const { return cfg_.timestamp_hz; }
    // A GPU reset: the counter stops at 0.
    void reset() {
        running_ = false;
        base_ = 0;
    }

private:
    const GpuConfig& cfg_;
    bool running_ = false;
    u64 base_ = 0;
    ktime_t since_ = 0;
};

}  // namespace mock_hw
