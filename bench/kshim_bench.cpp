// kshim runtime costs: simulated task hand-off, real-mode queue_work latency, lock fast paths.
// Run from the release preset (debug checks compiled out) and from dev (lockdep on).
#include <benchmark/benchmark.h>

#include <mutex>

#include "kernel_shim/completion.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"

using namespace kshim;

// One iteration = main hands off to a task and the task hands back: two task switches.
static void BM_SimTaskSwitch(benchmark::State& state) {
    Runtime rt(RuntimeOptions{.mode = Mode::Simulated});
    Task* main = current();
    bool stop = false;
    Task* peer = kthread_run(
        [&] {
            for (;;) {
                backend().park(KTIME_MAX);
                if (stop)
                    return 0;
                backend().unpark(main);
            }
        },
        "peer");
    rt.advance_until_idle();
    u64 switches0 = rt.context_switches();
    for (auto _ : state) {
        backend().unpark(peer);
        backend().park(KTIME_MAX);
    }
    state.counters["switches_per_iter"] =
        static_cast<double>(rt.context_switches() - switches0) / static_cast<double>(state.iterations());
    state.counters["ns_per_switch"] = benchmark::Counter(static_cast<double>(2 * state.iterations()),
                                                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert,
                                                         benchmark::Counter::OneK::kIs1000);
    stop = true;
    kthread_stop(peer);
}
BENCHMARK(BM_SimTaskSwitch);

namespace {
struct LatencyProbe {
    work_struct work;
    completion done;
    ktime_t queued = 0;
    ktime_t total = 0;
    static void fn(work_struct* w) {
        auto* p = container_of(w, LatencyProbe, work);
        p->total += ktime_get() - p->queued;
        complete(&p->done);
    }
};
}  // namespace

// queue_work to the item running, on real threads; the iteration also includes waking main.
static void BM_RealQueueWorkLatency(benchmark::State& state) {
    Runtime rt(RuntimeOptions{.mode = Mode::Real});
    workqueue_struct* wq = alloc_workqueue("bench", WQ_UNBOUND, 1);
    LatencyProbe p;
    INIT_WORK(&p.work, LatencyProbe::fn);
    for (auto _ : state) {
        p.queued = ktime_get();
        queue_work(wq, &p.work);
        wait_for_completion(&p.done);
    }
    state.counters["queue_to_run_us"] = static_cast<double>(p.total) / static_cast<double>(state.iterations()) / 1000.0;
    destroy_workqueue(wq);
}
BENCHMARK(BM_RealQueueWorkLatency)->UseRealTime();

// The baseline runs with a real runtime alive, as the kshim locks do: glibc drops the locked
// instruction while a process has a single thread, which would flatter std::mutex 4x.
static void BM_StdMutexUncontended(benchmark::State& state) {
    Runtime rt(RuntimeOptions{.mode = Mode::Real});
    std::mutex m;
    for (auto _ : state) {
        m.lock();
        benchmark::ClobberMemory();
        m.unlock();
    }
}
BENCHMARK(BM_StdMutexUncontended);

static void BM_MutexUncontended(benchmark::State& state) {
    Runtime rt(RuntimeOptions{.mode = Mode::Real});
    Mutex m("bench.mutex");
    for (auto _ : state) {
        m.lock();
        benchmark::ClobberMemory();
        m.unlock();
    }
}
BENCHMARK(BM_MutexUncontended);

static void BM_SpinlockUncontended(benchmark::State& state) {
    Runtime rt(RuntimeOptions{.mode = Mode::Real});
    SpinLock l("bench.spin");
    for (auto _ : state) {
        l.lock();
        benchmark::ClobberMemory();
        l.unlock();
    }
}
BENCHMARK(BM_SpinlockUncontended);

BENCHMARK_MAIN();
