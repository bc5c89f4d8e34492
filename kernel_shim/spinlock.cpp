// The contended half of SpinLock, and cpu_relax for busy-waits.
#include "kernel_shim/spinlock.h"

#include <thread>

namespace kshim {

void cpu_relax(unsigned iteration, std::source_location loc) {
    if (Runtime::get() && Runtime::get()->mode() == Mode::Simulated) {
        backend().spin_yield(loc);
    } else if (iteration > 64) {
        std::this_thread::yield();
    } else {
        host_cpu_pause();
    }
}

void SpinLock::lock_slow() {
    for (unsigned spins = 0;; spins++) {
        if (!locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire))
            return;
        cpu_relax(spins);
    }
}

}  // namespace kshim
