// drm_sched throughput and latency, with a null backend whose hardware fence
// signals inside run_job: what is measured is the scheduler itself (init, arm, push, selection,
// run_job, fence signals, free_job) plus the workqueue hops it needs. Release preset.
//
//   BM_SchedThroughputReal        real threads, one entity, 1,024 jobs in flight (items/s); the
//                                 submitter on one CPU, the scheduler's worker on another
//   BM_SchedThroughput64Entities  the same spread round-robin over 64 entities
//   BM_SchedThroughputRealOneCpu  BM_SchedThroughputReal with every thread on one CPU: no
//                                 cross-core transfers, but no parallelism either
//   BM_SchedCpuPerJob/<n>         simulated mode: whole lifecycle, the runtime drained every n jobs
//   BM_SchedSubmitWaitLatency     real mode: submit one job, wait for `finished`
#include <benchmark/benchmark.h>
#include <sched.h>

#include <memory>
#include <vector>

#include "bench/cpu_pinning.h"
#include "drm/sched/gpu_scheduler.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/wait.h"

using namespace kshim;
using namespace drm;

namespace {

// Jobs come from a kmem_cache, as panthor allocates one per submission: the slab's per-thread
// magazines carry freed jobs back to the submitter in batches. The submitter counts what it
// submitted and the freeing side what it retired, each on its own cache line, so keeping 1,024
// in flight costs no shared write per job.
struct JobPool {
    kshim::KmemCache* cache = nullptr;
    u64 submitted = 0;  // the submitter's
    alignas(SMP_CACHE_BYTES) std::atomic<u64> retired{0};
    alignas(SMP_CACHE_BYTES) std::atomic<u64> wake_at{~u64{0}};  // the submitter sleeps until retired reaches it
    wait_queue_head drained;

    int in_flight() const { return static_cast<int>(submitted - retired.load(std::memory_order_seq_cst)); }
};

struct NullJob {
    drm_sched_job base;
    dma_fence hw;
    std::atomic<int> pins{2};  // free_job and the hardware fence's release
    JobPool* pool = nullptr;
};

SpinLock g_hw_lock{"bench_hw"};  // every null hardware fence's lock, as a ring lock would be
u64 g_hw_context;
std::atomic<u64> g_hw_seqno{0};

void unpin(NullJob* j) {
    if (j->pins.fetch_sub(1, std::memory_order_acq_rel) != 1)
        return;
    JobPool* p = j->pool;
    kmem_cache_delete(p->cache, j);
    // One freeing thread at a time (the scheduler's ordered workqueue): a plain increment.
    const u64 retired = p->retired.load(std::memory_order_relaxed) + 1;
    // Sequentially consistent against wait_in_flight's store of wake_at and load of retired:
    // one of the two sides sees the other's write, so the last wake-up is never lost.
    p->retired.store(retired, std::memory_order_seq_cst);
    if (retired == p->wake_at.load(std::memory_order_seq_cst))
        wake_up(&p->drained);
}

const char* hw_name(dma_fence*) {
    return "null_hw";
}
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
drm_gpu_sched_stat null_timedout(drm_sched_job*) {
    return DRM_GPU_SCHED_STAT_NO_HANG;
}
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
    const int max_in_flight;

    Bench(int num_entities, int in_flight_limit) : max_in_flight(in_flight_limit) {
        g_hw_context = dma_fence_context_alloc(1);
        pool.cache = kmem_cache_create("bench_null_job", sizeof(NullJob), alignof(NullJob), 0);
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
    }
    ~Bench() {
        // Each entity's last_scheduled pins its last job until the entity goes away.
        for (auto& e : entities)
            drm_sched_entity_destroy(e.get());
        wait_in_flight(0);
        drm_sched_fini(&sched);
        kmem_cache_destroy(pool.cache);
    }

    // init + arm + push; returns the job (its finished fence is valid until it is freed).
    // `finished`, when given, receives a reference taken before the push (the job may be gone
    // right after it).
    NullJob* submit(drm_sched_entity* e, dma_fence** finished = nullptr) {
        if (pool.in_flight() >= max_in_flight)
            wait_in_flight(max_in_flight - 1);
        auto* j = kmem_cache_new<NullJob>(pool.cache, GFP_KERNEL);
        j->pool = &pool;
        pool.submitted++;
        drm_sched_job_init(&j->base, e, 1, nullptr);
        drm_sched_job_arm(&j->base);
        if (finished)
            *finished = dma_fence_get(&j->base.s_fence->finished);
        drm_sched_entity_push_job(&j->base);
        return j;
    }

    void wait_in_flight(int at_most) {
        if (pool.in_flight() <= at_most)
            return;
        pool.wake_at.store(pool.submitted - static_cast<u64>(at_most), std::memory_order_seq_cst);
        wait_event(pool.drained, pool.in_flight() <= at_most);
        pool.wake_at.store(~u64{0}, std::memory_order_release);
    }
};

constexpr int kInFlight = 1024;

using upanthor_bench::allowed_cpus;
using upanthor_bench::pin_this_thread;

// Where the threads of a throughput run go. Unpinned runs on a 2-vCPU guest are bimodal (the OS
// sometimes puts submitter and worker on one vCPU, which is twice as fast), so the figures come
// from pinned runs, as the performance notes ask.
enum class Placement {
    TwoCpus,  // submitter on the first CPU, every runtime thread on the second: the pipelined case
    OneCpu,   // everything on the first CPU: the scheduler's cost without cross-core transfers
};

// Pins for the lifetime of a run and restores the thread's affinity afterwards. Runtime threads
// are created by whoever first needs them (a worker by the first queue_work), so the submitter
// stays on the workers' CPU until one job went through, then moves.
class Pinning {
public:
    explicit Pinning(Placement p) : placement_(p), cpus_(allowed_cpus()) { pin_this_thread(worker_cpu()); }
    void workers_started() { pin_this_thread(cpus_.front()); }
    bool cross_core() const { return placement_ == Placement::TwoCpus && cpus_.size() > 1; }

private:
    int worker_cpu() const { return placement_ == Placement::TwoCpus && cpus_.size() > 1 ? cpus_[1] : cpus_.front(); }
    upanthor_bench::SavedAffinity saved_;  // first: restored after everything else
    Placement placement_;
    std::vector<int> cpus_;
};

void throughput(benchmark::State& state, int num_entities, Placement placement) {
    Pinning pin(placement);  // before the runtime exists, so its threads inherit it
    Runtime rt(RuntimeOptions{.mode = Mode::Real});
    {
        Bench b(num_entities, kInFlight);
        // One job per entity through the scheduler before timing: starts the workers where the
        // placement wants them and leaves each entity's last_scheduled pinning one job.
        for (auto& e : b.entities)
            b.submit(e.get());
        b.wait_in_flight(num_entities);
        pin.workers_started();
        if (placement == Placement::TwoCpus && !pin.cross_core())
            state.SkipWithError("needs two CPUs");
        size_t next = 0;
        for (auto _ : state) {
            if (b.pool.in_flight() >= kInFlight)
                b.wait_in_flight(kInFlight / 2);
            b.submit(b.entities[next].get());
            if (++next == b.entities.size())
                next = 0;
        }
        b.wait_in_flight(num_entities);  // the entities' last_scheduled pin one job each
        state.SetItemsProcessed(state.iterations());
        state.counters["run_work_per_job"] =
            static_cast<double>(b.sched.stats.run_work_calls.load()) / static_cast<double>(state.iterations());
        state.counters["free_work_per_job"] =
            static_cast<double>(b.sched.stats.free_work_calls.load()) / static_cast<double>(state.iterations());
    }
}

void BM_SchedThroughputReal(benchmark::State& state) {
    throughput(state, 1, Placement::TwoCpus);
}
BENCHMARK(BM_SchedThroughputReal)->UseRealTime();

void BM_SchedThroughputRealOneCpu(benchmark::State& state) {
    throughput(state, 1, Placement::OneCpu);
}
BENCHMARK(BM_SchedThroughputRealOneCpu)->UseRealTime();

void BM_SchedThroughput64Entities(benchmark::State& state) {
    throughput(state, 64, Placement::TwoCpus);
}
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
                rt.advance_until_idle();
                n = 0;
            }
        }
        rt.advance_until_idle();
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
