// Mirrors kernel/sched/wait_bit.c's variable waits (wake_up_var), without the hashed table.
#include "kernel_shim/wait_bit.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace kshim {

namespace {
// Every variable waiter of the process, in the order they started waiting (so wake-ups are
// issued in a deterministic order). Few tasks wait on variables at once: a scan is enough.
std::mutex g_var_lock;
std::vector<VarWaiter*> g_var_waiters;
}  // namespace

void var_waiter_add(VarWaiter* w) {
    std::lock_guard g(g_var_lock);
    g_var_waiters.push_back(w);
}

void var_waiter_remove(VarWaiter* w) {
    std::lock_guard g(g_var_lock);
    std::erase(g_var_waiters, w);
}

void wake_up_var(const void* var) {
    {
        std::lock_guard g(g_var_lock);
        for (VarWaiter* w : g_var_waiters)
            if (w->var == var)
                backend().unpark(w->task);
    }
    preempt_point();
}

}  // namespace kshim
