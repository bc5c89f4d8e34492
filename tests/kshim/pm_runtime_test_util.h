// Runtime-PM callbacks that count and can fail or sleep, for pm_runtime tests in both modes.
#pragma once
#include <atomic>

#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/time.h"

namespace kshim::testing {

// Set as the device's driver data; atomics, since real-mode callbacks run on other threads.
struct PmProbe {
    std::atomic<int> resumes{0};
    std::atomic<int> suspends{0};
    std::atomic<int> fail_resume{0};    // the next resume callback returns this
    std::atomic<int> fail_suspend{0};   // the next suspend callback returns this
    std::atomic<unsigned> sleep_ms{0};  // each callback sleeps this long
    std::atomic<ktime_t> last_suspend_at{-1};
    std::atomic<Task*> last_suspend_task{nullptr};
    std::atomic<int> in_callback{0};
    std::atomic<int> max_in_callback{0};

    static PmProbe* of(Device* dev) { return static_cast<PmProbe*>(dev->driver_data); }

    void enter() {
        int n = in_callback.fetch_add(1) + 1;
        int m = max_in_callback.load();
        while (n > m && !max_in_callback.compare_exchange_weak(m, n)) {
        }
        if (unsigned ms = sleep_ms.load())
            msleep(ms);
    }

    static int runtime_resume(Device* dev) {
        PmProbe* p = of(dev);
        p->enter();
        p->in_callback.fetch_sub(1);
        if (int err = p->fail_resume.exchange(0))
            return err;
        p->resumes.fetch_add(1);
        return 0;
    }
    static int runtime_suspend(Device* dev) {
        PmProbe* p = of(dev);
        p->enter();
        p->in_callback.fetch_sub(1);
        if (int err = p->fail_suspend.exchange(0))
            return err;
        p->suspends.fetch_add(1);
        p->last_suspend_at.store(ktime_get());
        p->last_suspend_task.store(current());
        return 0;
    }
};

// As panthor's DEFINE_RUNTIME_DEV_PM_OPS: system sleep goes through the runtime callbacks.
inline const DevPmOps kProbePmOps = {
    .runtime_suspend = PmProbe::runtime_suspend,
    .runtime_resume = PmProbe::runtime_resume,
    .runtime_idle = nullptr,
    .suspend = pm_runtime_force_suspend,
    .resume = pm_runtime_force_resume,
};

}  // namespace kshim::testing
