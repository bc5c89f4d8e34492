// drm_sched throughput and latency (issue #5 targets), with a null backend whose hardware fence
// signals inside run_job: what is measured is the scheduler itself (init, arm, push, selection,
// run_job, fence signals, free_job) plus the workqueue hops it needs. Release preset.
//
//   BM_SchedThroughputReal        real threads, one entity, 1,024 jobs in flight (items/s)
//   BM_SchedThroughput64Entities  the same spread round-robin over 64 entities
//   BM_SchedThroughputRealOneCpu  BM_SchedThroughputReal with every thread pinned to one CPU:
//                                 the scheduler's own cost without the cross-core cache-line
//                                 transfers that dominate the unpinned figure on a 2-vCPU VM
//   BM_SchedCpuPerJob/<n>         simulated mode: whole lifecycle, the runtime drained every n jobs
//   BM_SchedSubmitWaitLatency     real mode: submit one job, wait for `finished`
#include <benchmark/benchmark.h>
#include <sched.h>

#include <memory>
#include <vector>

#include "drm/sched/gpu_scheduler.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/wait.h"

using namespace kshim;
using namespace drm;

namespace {

struct NullJob;

// A fixed set of jobs recycled between the submitter and the scheduler. A job comes back once
// free_job ran and its hardware fence was released (the sched fence holds it as `parent`).
struct JobPool {
    SpinLock lock{"bench_pool"};  // protects free
    std::vector<NullJob*> free;
    std::vector<NullJob*> all;
    std::atomic<int> in_flight{0};
    std::atomic<int> low_water{-1};  // the submitter sleeps until in_flight drops to this
    WaitQueueHead drained;
    drm_sched_entity* entity = nullptr;
};

struct NullJob {
    drm_sched_job base;
    dma_fence hw;
    std::atomic<int> pins{0};
    JobPool* pool = nullptr;
};

SpinLock g_hw_lock{"bench_hw"};  // every null hardware fence's lock, as a ring lock would be
u64 g_hw_context;
std::atomic<u64> g_hw_seqno{0};

void unpin(NullJob* j) {
    if (j->pins.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    JobPool* p = j->pool;
    {
        SpinGuard g(p->lock);
        p->free.push_back(j);
    }
    int left = p->in_flight.fetch_sub(1, std::memory_order_acq_rel) - 1;
    if (left == p->low_water.load(std::memory_order_acquire)) wake_up(&p->drained);
}

const char* hw_name(dma_fence*) { return "null_hw"; }
const dma_fence_ops hw_ops = {
    .get_driver_name = hw_name,
    .get_timeline_name = hw_name,
    .release = [](dma_fence* f) { unpin(container_of(f, NullJob, hw)); },
};

dma_fence* null_run_job(drm_sched_job* sj) {
    NullJob* j = container_of(sj, NullJob, base);
    dma_fence_init(&j->hw, &hw_ops, &g_hw_lock, g_hw_context, g_hw_seqno.fetch_add(1, std::memory_order_relaxed) + 1);
    dma_fence_signal(&j->hw);
    return &j->hw;  // the reference dma_fence_init gave
}
drm_gpu_sched_stat null_timedout(drm_sched_job*) { return DRM_GPU_SCHED_STAT_NO_HANG; }
void null_free_job(drm_sched_job* sj) {
    drm_sched_job_cleanup(sj);
    unpin(container_of(sj, NullJob, base));
}
const drm_sched_backend_ops null_ops = {
    .run_job = null_run_job,
    .timedout_job = null_timedout,
    .free_job = null_free_job,
};

struct Bench {
    drm_gpu_scheduler sched;
    std::vector<std::unique_ptr<drm_sched_entity>> entities;
    drm_gpu_scheduler* list[1] = {&sched};
    JobPool pool;

    Bench(int num_entities, int pool_size) {
        g_hw_context = dma_fence_context_alloc(1);
        drm_sched_init_args args;
        args.ops = &null_ops;
        args.credit_limit = 1u << 20;
        args.timeout = static_cast<long>(msecs_to_jiffies(5000));
        args.name = "bench";
        drm_sched_init(&sched, &args);
        for (int i = 0; i < num_entities; i++) {
            entities.push_back(std::make_unique<drm_sched_entity>());
            drm_sched_entity_init(entities.back().get(), DRM_SCHED_PRIORITY_NORMAL, list, 1, nullptr);
        }
        for (int i = 0; i < pool_size; i++) {
            auto* j = knew<NullJob>(GFP_KERNEL);
            j->pool = &pool;
            pool.all.push_back(j);
            pool.free.push_back(j);
        }
    }
    ~Bench() {
        // Each entity's last_scheduled pins its last job until the entity goes away.
        for (auto& e : entities) drm_sched_entity_destroy(e.get());
        wait_in_flight(0);
        drm_sched_fini(&sched);
        for (auto* j : pool.all) kdelete(j);
    }

    NullJob* get() {
        SpinGuard g(pool.lock);
        NullJob* j = pool.free.back();
        pool.free.pop_back();
        return j;
    }

    // init + arm + push; returns the job (its finished fence is valid until it is freed).
    // `finished`, when given, receives a reference taken before the push (the job may be gone
    // right after it).
    NullJob* submit(drm_sched_entity* e, dma_fence** finished = nullptr) {
        if (pool.in_flight.load(std::memory_order_acquire) >= static_cast<int>(pool.all.size()))
            wait_in_flight(static_cast<int>(pool.all.size()) - 1);
        NullJob* j = get();
        j->pins.store(2, std::memory_order_relaxed);
        pool.in_flight.fetch_add(1, std::memory_order_relaxed);
        drm_sched_job_init(&j->base, e, 1, nullptr);
        drm_sched_job_arm(&j->base);
        if (finished) *finished = dma_fence_get(&j->base.s_fence->finished);
        drm_sched_entity_push_job(&j->base);
        return j;
    }

    void wait_in_flight(int at_most) {
        if (pool.in_flight.load(std::memory_order_acquire) <= at_most) return;
        pool.low_water.store(at_most, std::memory_order_release);
        wait_event(pool.drained, pool.in_flight.load(std::memory_order_acquire) <= at_most);
        pool.low_water.store(-1, std::memory_order_release);
    }
};

constexpr int kInFlight = 1024;

void throughput(benchmark::State& state, int num_entities) {
    Runtime rt(RuntimeOptions{.mode = Mode::Real});
    {
        Bench b(num_entities, kInFlight);
        size_t next = 0;
        for (auto _ : state) {
            if (b.pool.in_flight.load(std::memory_order_relaxed) >= kInFlight) b.wait_in_flight(kInFlight / 2);
            b.submit(b.entities[next].get());
            if (++next == b.entities.size()) next = 0;
        }
        b.wait_in_flight(num_entities);  // the entities' last_scheduled pin one job each
        state.SetItemsProcessed(state.iterations());
        state.counters["run_work_per_job"] =
            static_cast<double>(b.sched.stats.run_work_calls.load()) / static_cast<double>(state.iterations());
        state.counters["free_work_per_job"] =
            static_cast<double>(b.sched.stats.free_work_calls.load()) / static_cast<double>(state.iterations());
    }
}

void BM_SchedThroughputReal(benchmark::State& state) { throughput(state, 1); }
BENCHMARK(BM_SchedThroughputReal)->UseRealTime();

// Restricts this process's threads, and those it creates meanwhile, to one CPU.
class PinToOneCpu {
public:
    PinToOneCpu() {
        sched_getaffinity(0, sizeof(saved_), &saved_);
        cpu_set_t one;
        CPU_ZERO(&one);
        for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
            if (CPU_ISSET(cpu, &saved_)) {
                CPU_SET(cpu, &one);
                break;
            }
        sched_setaffinity(0, sizeof(one), &one);
    }
    ~PinToOneCpu() { sched_setaffinity(0, sizeof(saved_), &saved_); }

private:
    cpu_set_t saved_;
};

void BM_SchedThroughputRealOneCpu(benchmark::State& state) {
    PinToOneCpu pin;  // before the runtime exists, so its threads inherit it
    throughput(state, 1);
}
BENCHMARK(BM_SchedThroughputRealOneCpu)->UseRealTime();

void BM_SchedThroughput64Entities(benchmark::State& state) { throughput(state, 64); }
BENCHMARK(BM_SchedThroughput64Entities)->UseRealTime();

void BM_SchedCpuPerJob(benchmark::State& state) {
    const int drain_every = static_cast<int>(state.range(0));
    Runtime rt(RuntimeOptions{.mode = Mode::Simulated});
    {
        Bench b(1, drain_every + 2);  // + the job entity->last_scheduled keeps pinned
        int n = 0;
        for (auto _ : state) {
            b.submit(b.entities[0].get());
            if (++n == drain_every) {
                rt.run_until_idle();
                n = 0;
            }
        }
        rt.run_until_idle();
        state.SetItemsProcessed(state.iterations());
        state.counters["task_switches_per_job"] =
            static_cast<double>(rt.context_switches()) / static_cast<double>(state.iterations());
    }
}
BENCHMARK(BM_SchedCpuPerJob)->Arg(1)->Arg(64);

void BM_SchedSubmitWaitLatency(benchmark::State& state) {
    Runtime rt(RuntimeOptions{.mode = Mode::Real});
    {
        Bench b(1, 4);
        u64 waiter_sleeps = 0;
        for (auto _ : state) {
            dma_fence* f;
            b.submit(b.entities[0].get(), &f);
            if (!dma_fence_is_signaled(f)) {
                waiter_sleeps++;
                dma_fence_wait(f, false);
            }
            dma_fence_put(f);
        }
        b.wait_in_flight(1);
        const double iters = static_cast<double>(state.iterations());
        // Every run_job_work call here starts on an idle worker (the submitter was waiting), so
        // each is one wake-up of the worker; each waiter sleep is one wake-up of the submitter.
        state.counters["wakeups_per_job"] =
            (static_cast<double>(b.sched.stats.run_work_calls.load()) + static_cast<double>(waiter_sleeps)) / iters;
        state.counters["free_work_per_job"] = static_cast<double>(b.sched.stats.free_work_calls.load()) / iters;
    }
}
BENCHMARK(BM_SchedSubmitWaitLatency)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
