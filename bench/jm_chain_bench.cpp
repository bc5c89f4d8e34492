// The mock Mali-G52's job slots walking job chains, simulated mode, release preset.
//
//   BM_JmChain/<kind>/<jobs>   one iteration = one chain of <jobs> jobs submitted on JS0 (AS 1,
//                              Mali-LPAE tables) and run to DONE (items/s = jobs per second of
//                              host CPU; target >= 5M/s). Kinds:
//                                Null        NULL jobs
//                                WriteValue  WRITE_VALUE jobs (immediate 32/64, zero) to a
//                                            target array
//                                Mix         one NULL in four, the rest WRITE_VALUE, each job
//                                            depending on the previous one, a barrier every 16
//
// Every chain is built once, 64-bit linked, in one arena of GPU memory; between iterations (not
// timed) the job headers' status words are reset, as panvk does before a re-submission. The
// counter virt_ns is the modelled (virtual) time of one chain.
#include <benchmark/benchmark.h>

#include <vector>

#include "kernel_shim/runtime.h"
#include "testkit/jm_gpu_helpers.h"

using namespace mock_jm;
using namespace mock_jm::testing;
using namespace panfrost;
using namespace panfrost::desc;

namespace {

constexpr u32 kAs = 1;
constexpr u64 kArenaVa = 0x10000000;
constexpr size_t kArenaSize = 4 << 20;

enum class Kind { Null, WriteValue, Mix };

// Builds a chain of `n` jobs of `kind` in `arena`; returns the VAs of its jobs in order.
std::vector<u64> build_chain(JobArena& arena, Kind kind, u32 n) {
    std::vector<u64> jobs;
    jobs.reserve(n);
    const u64 targets = kind == Kind::Null ? 0 : arena.alloc(8ull * n, 64);
    static constexpr u32 kWvTypes[] = {kWriteValueImmediate32, kWriteValueImmediate64, kWriteValueZero};
    u64 prev = 0;
    for (u32 i = 0; i < n; i++) {
        const u32 index = i + 1;
        bool null = kind == Kind::Null || (kind == Kind::Mix && i % 4 == 0);
        u64 j;
        if (null) {
            j = arena.null_job(index, prev);
        } else {
            WriteValuePayload p{};
            p.address = targets + 8ull * i;
            p.type = kWvTypes[i % 3];
            p.immediate = 0x1234567800000000ull | i;
            const bool barrier = kind == Kind::Mix && i % 16 == 15;
            const u16 dep = kind == Kind::Mix && i > 0 ? static_cast<u16>(i) : 0;
            j = arena.job(kJobWriteValue, index, &p, sizeof(p), prev, barrier, dep);
        }
        jobs.push_back(j);
        prev = j;
    }
    return jobs;
}

void BM_JmChain(benchmark::State& state, Kind kind) {
    const u32 n = static_cast<u32>(state.range(0));
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    kshim::ktime_t virt = 0;
    u64 jobs_done = 0;
    {
        JmGpu gpu;
        JmDrv d{gpu};
        MaliPageTables pt;
        JobArena arena(pt, kArenaVa, kArenaSize);
        auto wait = [&](const std::function<bool()>& p) { return rt.run_until(p, 100 * NSEC_PER_MSEC); };
        if (!jm_power_on(d, wait) || !jm_as_enable(d, kAs, pt.transtab(), wait))
            return state.SkipWithError("power-up or AS enable failed");
        const std::vector<u64> jobs = build_chain(arena, kind, n);
        auto completed = [&] {
            kshim::SpinGuard g(gpu.lock());
            return gpu.jobs().stats_locked(0).jobs_completed;
        };
        const u64 before = completed();
        for (auto _ : state) {
            state.PauseTiming();
            for (u64 j : jobs)
                arena.header(j)->exception_status = 0;
            state.ResumeTiming();
            const kshim::ktime_t t0 = kshim::ktime_get();
            jm_submit(d, 0, jobs.front(), jm_js_config(kAs));
            if (!wait([&] { return d.r(JOB_INT_RAWSTAT) & MK_JS_MASK(0); })) {
                state.SkipWithError("chain did not end");
                break;
            }
            virt += kshim::ktime_get() - t0;
            if (d.r(JS_STATUS(0)) != DRM_PANFROST_EXCEPTION_DONE) {
                state.SkipWithError("chain did not end DONE");
                break;
            }
            d.w(JOB_INT_CLEAR, MK_JS_MASK(0));
        }
        jobs_done = completed() - before;
        if (!state.error_occurred() &&
            (jobs_done != u64{n} * state.iterations() || arena.header(jobs.back())->exception_status != kJobStatusDone))
            state.SkipWithError("completed job count differs from the chains'");
    }
    rt.advance_until_idle();
    state.SetItemsProcessed(static_cast<int64_t>(jobs_done));
    state.counters["virt_ns"] = benchmark::Counter(static_cast<double>(virt), benchmark::Counter::kAvgIterations);
}
BENCHMARK_CAPTURE(BM_JmChain, Null, Kind::Null)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_JmChain, WriteValue, Kind::WriteValue)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_JmChain, Mix, Kind::Mix)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
