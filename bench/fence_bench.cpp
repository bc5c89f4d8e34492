// dma_fence fast paths: signal with and without a timestamp, the signalled
// check, create + release, and the cost of each extra callback. Real mode, release preset.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/irq_work.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"

using namespace kshim;

namespace {
struct BenchFence {
    dma_fence base;
    SpinLock lock{"bench_fence"};
};

const char* bench_name(dma_fence*) {
    return "bench";
}
// Embedded fences (a job's fence lives in the job): the release has nothing to free.
const dma_fence_ops embedded_ops = {
    .get_driver_name = bench_name,
    .get_timeline_name = bench_name,
    .release = [](dma_fence*) {},
};

KmemCache* g_cache;
const dma_fence_ops slab_ops = {
    .get_driver_name = bench_name,
    .get_timeline_name = bench_name,
    .release = [](dma_fence* f) { kmem_cache_free(g_cache, container_of(f, BenchFence, base)); },
};

std::unique_ptr<Runtime> real_runtime() {
    return std::make_unique<Runtime>(RuntimeOptions{.mode = Mode::Real});
}

// A batch of initialised fences, re-armed outside the timed region.
constexpr int kBatch = 1024;

void BM_ClockRead(benchmark::State& state) {
    auto rt = real_runtime();
    for (auto _ : state)
        benchmark::DoNotOptimize(ktime_get());
}
BENCHMARK(BM_ClockRead);

template <bool kTimestamp>
void signal_bench(benchmark::State& state) {
    auto rt = real_runtime();
    std::vector<BenchFence> fences(kBatch);
    ktime_t ts = 1;
    while (state.KeepRunningBatch(kBatch)) {
        state.PauseTiming();
        for (auto& f : fences)
            dma_fence_init(&f.base, &embedded_ops, &f.lock, 1, 1);
        state.ResumeTiming();
        for (auto& f : fences) {
            if constexpr (kTimestamp)
                dma_fence_signal(&f.base);
            else
                dma_fence_signal_timestamp(&f.base, ts);
        }
    }
    benchmark::DoNotOptimize(fences.data());
}

void BM_FenceSignal(benchmark::State& state) {
    signal_bench<true>(state);
}
BENCHMARK(BM_FenceSignal);

// The caller supplies the timestamp (it often has one already, e.g. from the IRQ handler).
void BM_FenceSignalNoTimestamp(benchmark::State& state) {
    signal_bench<false>(state);
}
BENCHMARK(BM_FenceSignalNoTimestamp);

void BM_FenceIsSignaled(benchmark::State& state) {
    auto rt = real_runtime();
    BenchFence f;
    dma_fence_init(&f.base, &embedded_ops, &f.lock, 1, 1);
    dma_fence_signal(&f.base);
    dma_fence* p = &f.base;
    for (auto _ : state) {
        benchmark::DoNotOptimize(p);
        benchmark::DoNotOptimize(dma_fence_is_signaled(p));
    }
}
BENCHMARK(BM_FenceIsSignaled);

// Init + final put (release through the ops) of a fence embedded in its owner.
void BM_FenceCreateRelease(benchmark::State& state) {
    auto rt = real_runtime();
    BenchFence f;
    for (auto _ : state) {
        dma_fence_init(&f.base, &embedded_ops, &f.lock, 1, 1);
        benchmark::DoNotOptimize(&f);
        dma_fence_put(&f.base);
    }
}
BENCHMARK(BM_FenceCreateRelease);

// The same with the fence's memory from a kmem_cache (allocation and free included).
void BM_FenceCreateReleaseKmemCache(benchmark::State& state) {
    auto rt = real_runtime();
    g_cache = kmem_cache_create("bench_fence", sizeof(BenchFence), alignof(BenchFence), 0);
    for (auto _ : state) {
        auto* f = kmem_cache_new<BenchFence>(g_cache, GFP_KERNEL);
        dma_fence_init(&f->base, &slab_ops, &f->lock, 1, 1);
        dma_fence_put(&f->base);
    }
    kmem_cache_destroy(g_cache);
}
BENCHMARK(BM_FenceCreateReleaseKmemCache);

// One iteration = one callback run by a signal; the fences carry kCallbacks each so the
// signal itself is spread thin, and adding them is outside the timed region.
void BM_FenceCallback(benchmark::State& state) {
    constexpr int kFences = 64;
    constexpr int kCallbacks = 64;
    auto rt = real_runtime();
    std::vector<BenchFence> fences(kFences);
    std::vector<dma_fence_cb> cbs(kFences * kCallbacks);
    static long ran;
    auto fn = [](dma_fence*, dma_fence_cb*) { ran++; };
    while (state.KeepRunningBatch(kFences * kCallbacks)) {
        state.PauseTiming();
        for (int i = 0; i < kFences; i++) {
            dma_fence_init(&fences[i].base, &embedded_ops, &fences[i].lock, 1, 1);
            for (int j = 0; j < kCallbacks; j++)
                dma_fence_add_callback(&fences[i].base, &cbs[i * kCallbacks + j], fn);
        }
        state.ResumeTiming();
        for (auto& f : fences)
            dma_fence_signal(&f.base);
    }
    benchmark::DoNotOptimize(ran);
}
BENCHMARK(BM_FenceCallback);

// What adding and running one callback costs together (for comparison with the above).
void BM_FenceAddCallbackAndRun(benchmark::State& state) {
    auto rt = real_runtime();
    BenchFence f;
    std::vector<dma_fence_cb> cbs(kBatch);
    auto fn = [](dma_fence*, dma_fence_cb*) {};
    while (state.KeepRunningBatch(kBatch)) {
        dma_fence_init(&f.base, &embedded_ops, &f.lock, 1, 1);
        for (auto& cb : cbs)
            dma_fence_add_callback(&f.base, &cb, fn);
        dma_fence_signal(&f.base);
    }
}
BENCHMARK(BM_FenceAddCallbackAndRun);
// A timeline of kChainLinks links, every link with signalling enabled (as upstream's
// st-dma-fence-chain does), whose fences signal in one burst before the signaller yields.
// One iteration = one link signalled and its chain link completed; building the chain is
// outside the timed region. Backward used to cost n²/2 walk steps (the chain's re-arm ran as a
// work item after the burst and every item walked the whole signalled prefix); the counters
// show the work per link, which must not grow with the chain.
constexpr unsigned kChainLinks = 4 << 10;

template <Mode kMode, bool kBackward>
void chain_burst_bench(benchmark::State& state) {
    Runtime rt(RuntimeOptions{.mode = kMode});
    std::vector<BenchFence> fences(kChainLinks);
    std::vector<dma_fence*> chains(kChainLinks);
    u64 steps = 0, runs = 0;
    while (state.KeepRunningBatch(kChainLinks)) {
        state.PauseTiming();
        dma_fence* tail = nullptr;
        for (unsigned i = 0; i < kChainLinks; i++) {
            dma_fence_init(&fences[i].base, &embedded_ops, &fences[i].lock, 1, 1);
            dma_fence_chain* c = dma_fence_chain_alloc();
            dma_fence_chain_init(c, dma_fence_get(tail), dma_fence_get(&fences[i].base), i + 1);
            chains[i] = tail = &c->base;
            dma_fence_enable_sw_signaling(tail);
        }
        u64 steps0 = dma_fence_chain_walk_steps(), runs0 = irq_work_run_count();
        state.ResumeTiming();
        for (unsigned n = 0; n < kChainLinks; n++)
            dma_fence_signal(&fences[kBackward ? kChainLinks - 1 - n : n].base);
        state.PauseTiming();
        steps += dma_fence_chain_walk_steps() - steps0;
        runs += irq_work_run_count() - runs0;
        for (dma_fence* c : chains) {
            if (!dma_fence_test_signaled_flag(c))
                state.SkipWithError("a link did not signal");
            dma_fence_put(c);
        }
        state.ResumeTiming();
    }
    double links = static_cast<double>(state.iterations());
    state.counters["walk_steps_per_link"] = static_cast<double>(steps) / links;
    state.counters["irq_work_per_link"] = static_cast<double>(runs) / links;
}

void BM_ChainBurstForwardSim(benchmark::State& state) {
    chain_burst_bench<Mode::Simulated, false>(state);
}
BENCHMARK(BM_ChainBurstForwardSim);
void BM_ChainBurstBackwardSim(benchmark::State& state) {
    chain_burst_bench<Mode::Simulated, true>(state);
}
BENCHMARK(BM_ChainBurstBackwardSim);
void BM_ChainBurstForwardReal(benchmark::State& state) {
    chain_burst_bench<Mode::Real, false>(state);
}
BENCHMARK(BM_ChainBurstForwardReal);
void BM_ChainBurstBackwardReal(benchmark::State& state) {
    chain_burst_bench<Mode::Real, true>(state);
}
BENCHMARK(BM_ChainBurstBackwardReal);
}  // namespace

BENCHMARK_MAIN();
