// The mock GPU's command-stream engine (issue #9 benchmarks), simulated mode, release preset.
//
//   BM_CsInterpreter     one iteration = one ring submission running a MOVE/MOVE/ADD/BRANCH loop of
//                        ~100,000 executed instructions to completion (items/s = instructions/s;
//                        target >= 20M/s)
//   BM_CsgStartSuspend   one iteration = a CSG slot START then SUSPEND round trip (counter
//                        virt_ns = virtual time per round trip)
//
// The driver side is the tests' CsfRig (tests/mock_hw/csf_rig.h): boot, queues, slots.
#include <benchmark/benchmark.h>

#include "kernel_shim/runtime.h"
#include "mock_hw/cs_engine.h"
#include "panthor/cs_isa.h"
#include "tests/mock_hw/csf_rig.h"

using namespace mock_hw;
using namespace mock_hw::testing;
namespace cs = panthor::cs;

namespace {

// r2 = loops; do { r3 = ..; r4 = ..; r2 -= 1 } while (r2 != 0): 1 + 4 * loops instructions.
constexpr u32 kLoops = 25'000;
constexpr u64 kInstrsPerRun = 1 + 4ull * kLoops;

void BM_CsInterpreter(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    u64 executed = 0;
    {
        CsfRig drv(rt);
        if (!drv.boot()) return state.SkipWithError("MCU boot failed");
        auto q = drv.make_queue(4096);
        drv.program_cs(0, 0, q);
        drv.start_group(0);
        if (!drv.wait([&] { return drv.state_acked(0); })) return state.SkipWithError("CSG START not acked");
        const u64 before = drv.gpu.engine().instructions_executed();
        for (auto _ : state) {
            drv.push(q, {cs::move32(2, kLoops), cs::move32(3, 0x1234), cs::move48(4, 0xABCD0000ull),
                         cs::add_imm32(2, 2, -1), cs::branch(cs::NEQUAL, 2, -4)});
            drv.d.w(CSF_DOORBELL(1), 1);
            if (!drv.wait([&] { return drv.locked([&] { return q.out->extract == q.in->insert; }); }, kshim::NSEC_PER_SEC)) {
                state.SkipWithError("stream did not complete");
                break;
            }
        }
        executed = drv.gpu.engine().instructions_executed() - before;
        if (executed != kInstrsPerRun * state.iterations() && !state.error_occurred())
            state.SkipWithError("executed instruction count differs from the program's");
    }
    rt.run_until_idle();
    state.SetItemsProcessed(static_cast<int64_t>(executed));
    state.counters["instrs_per_run"] = static_cast<double>(kInstrsPerRun);
}
BENCHMARK(BM_CsInterpreter)->Unit(benchmark::kMillisecond);

void BM_CsgStartSuspend(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    kshim::ktime_t virt = 0;
    {
        CsfRig drv(rt);
        if (!drv.boot()) return state.SkipWithError("MCU boot failed");
        auto q = drv.make_queue(4096);
        u32 sb = 0;  // allocated by the first start, reused after
        for (auto _ : state) {
            const kshim::ktime_t t0 = kshim::ktime_get();
            drv.program_cs(0, 0, q);
            sb = drv.start_group(0, 15, CSG_STATE_START, sb);
            bool ok = drv.wait([&] { return drv.state_acked(0); });
            drv.set_state(0, CSG_STATE_SUSPEND);
            ok = ok && drv.wait([&] { return drv.state_acked(0); });
            virt += kshim::ktime_get() - t0;
            if (!ok) {
                state.SkipWithError("CSG state request not acked");
                break;
            }
        }
    }
    rt.run_until_idle();
    state.counters["virt_ns"] = benchmark::Counter(static_cast<double>(virt), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CsgStartSuspend)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
