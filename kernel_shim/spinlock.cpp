// The contended half of SpinLock.
#include "kernel_shim/spinlock.h"

#include <thread>

namespace kshim {

void SpinLock::lock_slow() {
    const bool simulated = Runtime::get() && Runtime::get()->mode() == Mode::Simulated;
    for (unsigned spins = 0;; spins++) {
        if (!locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire)) return;
        if (simulated) {
            // One runner: the holder only progresses if we let it run.
            backend().yield();
        } else if (spins > 64) {
            std::this_thread::yield();
        } else {
#if defined(__x86_64__)
            __builtin_ia32_pause();
#endif
        }
    }
}

}  // namespace kshim
