// The system counter (kernel_shim/arch_timer.h).
#include "kernel_shim/arch_timer.h"

#include <atomic>

#include "kernel_shim/runtime.h"

namespace kshim {

namespace {
constexpr u32 kDefaultCntfrq = 24'000'000;
std::atomic<u32> g_cntfrq{kDefaultCntfrq};
}  // namespace

u32 arch_timer_get_cntfrq() {
    return g_cntfrq.load(std::memory_order_relaxed);
}

u64 __arch_counter_get_cntvct() {
    const ktime_t now = ktime_get();
    const auto ns = static_cast<unsigned __int128>(now < 0 ? 0 : now);
    return static_cast<u64>(ns * arch_timer_get_cntfrq() / NSEC_PER_SEC);
}

void arch_timer_set_cntfrq(u32 hz) {
    g_cntfrq.store(hz ? hz : kDefaultCntfrq, std::memory_order_relaxed);
}

}  // namespace kshim
