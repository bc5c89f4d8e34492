// The runtime object: picks the mode's backend, adopts the calling thread as the main task,
// and owns the runtime-wide services (system workqueues, trace, lockdep's graph) for its life.
#include "kernel_shim/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernel_shim/backend.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/trace.h"
#include "kernel_shim/workqueue.h"

namespace kshim {
namespace detail {
constinit thread_local Task* t_current = nullptr;
}
namespace {
Runtime* g_runtime = nullptr;
}  // namespace

Backend& backend() {
    if (!g_runtime) {
        std::fprintf(stderr, "kshim: kernel code called with no runtime alive\n");
        std::abort();
    }
    return g_runtime->backend();
}

ktime_t ktime_get() {
    return g_runtime ? g_runtime->backend().now() : 0;
}

u64 seed_from_env(u64 fallback) {
    const char* s = std::getenv("KSHIM_SEED");
    if (!s || !*s)
        return fallback;
    return std::strtoull(s, nullptr, 0);
}

RuntimeOptions options_from_env(RuntimeOptions opts) {
    opts.seed = seed_from_env(opts.seed);
    if (const char* t = std::getenv("KSHIM_TRACE"); t && *t) {
        opts.trace = true;
        opts.trace_path = t;
    }
    if (const char* p = std::getenv("KSHIM_PREEMPT"); p && *p)
        opts.preempt_probability = std::strtod(p, nullptr);
    if (const char* c = std::getenv("KSHIM_CPUTIME"); c && *c)
        opts.cputime_split = std::strtol(c, nullptr, 0) != 0;
    return opts;
}

Runtime* Runtime::get() {
    return g_runtime;
}

Runtime::Runtime(RuntimeOptions opts) : opts_(std::move(opts)) {
    if (g_runtime) {
        std::fprintf(stderr, "kshim: only one runtime may exist at a time\n");
        std::abort();
    }
    main_ = new Task();
    main_->name = "main";
    main_->kind = TaskKind::Main;
    detail::g_cputime_split.store(opts_.cputime_split, std::memory_order_relaxed);
    backend_.reset(opts_.mode == Mode::Simulated ? make_sim_backend(opts_, main_) : make_real_backend(opts_, main_));
    g_runtime = this;
    set_current(main_);
    trace::start(opts_.trace || !opts_.trace_path.empty());
    trace::task_name(main_->id, "main");
    lockdep_reset();
    workqueue_runtime_init();
}

Runtime::~Runtime() {
    workqueue_runtime_exit();
    backend_->shutdown();
    lockdep_task_exit(main_);
    if (!opts_.trace_path.empty())
        trace::write_json(opts_.trace_path);
    trace::stop();
    // No runtime from here on: kernel code still running somewhere (a bug, reported by the
    // backend's shutdown) gets the clear "no runtime alive" abort, never a half-destroyed backend.
    g_runtime = nullptr;
    set_current(nullptr);
    backend_.reset();
    detail::g_cputime_split.store(false, std::memory_order_relaxed);
    delete main_;
}

bool Runtime::advance_until_idle(ktime_t limit) {
    return backend_->advance_until_idle(limit);
}
bool Runtime::run_pending() {
    return backend_->advance_until_idle(0);
}
void Runtime::advance(ktime_t d) {
    backend_->advance(d);
}
bool Runtime::run_until(const std::function<bool()>& pred, ktime_t timeout) {
    return backend_->run_until(pred, timeout);
}
std::vector<std::string> Runtime::stuck_tasks() {
    return backend_->stuck_tasks();
}
u64 Runtime::context_switches() const {
    return backend_->context_switches();
}

}  // namespace kshim
