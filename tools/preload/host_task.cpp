// Host threads as kernel tasks (host_task.h).
#include "tools/preload/host_task.h"

#include <atomic>

#include "kernel_shim/backend.h"
#include "kernel_shim/task.h"

namespace upanthor::preload {

kshim::Task* host_task_attach(const char* name) {
    auto* t = new kshim::Task();
    t->name = name;
    t->kind = kshim::TaskKind::Kthread;
    t->state = kshim::TaskState::Running;
    static std::atomic<kshim::u32> next_id{1u << 20};
    t->id = next_id.fetch_add(1, std::memory_order_relaxed);
    kshim::init_task_cputime(t);
    t->cpu.clock = kshim::this_thread_cpu_clock();
    t->cpu.start_ns = kshim::clock_ns(t->cpu.clock);
    kshim::set_current(t);
    return t;
}

void host_task_detach(kshim::Task* t) {
    if (kshim::current() == t)
        kshim::set_current(nullptr);
    delete t;
}

}  // namespace upanthor::preload
