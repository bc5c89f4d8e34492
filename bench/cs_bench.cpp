// The mock GPU's command-stream engine, simulated mode, release preset.
//
//   BM_CsInterpreter     one iteration = one ring submission running a MOVE/MOVE/ADD/BRANCH loop of
//                        ~100,000 executed instructions to completion (items/s = instructions/s;
//                        target >= 20M/s)
//   BM_CsgStartSuspend   one iteration = a CSG slot START then SUSPEND round trip (counter
//                        virt_ns = virtual time per round trip)
//   BM_CsgSuspendResume  one iteration = SUSPEND then RESUME of a started group whose four streams
//                        each hold registers, a preempted job and a WAIT on it, re-programming the
//                        CS slots before the RESUME as panthor does when it rotates groups
//                        (target for both round trips: <= 10 us of CPU)
//
// The driver side is the tests' CsfRig (testkit/csf_rig.h): boot, queues, slots.
#include <benchmark/benchmark.h>

#include "hw/csf/cs_isa.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/cs_engine.h"
#include "testkit/csf_rig.h"

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
        if (!drv.boot())
            return state.SkipWithError("MCU boot failed");
        auto q = drv.make_queue(4096);
        drv.program_cs(0, 0, q);
        drv.start_group(0);
        if (!drv.wait([&] { return drv.state_acked(0); }))
            return state.SkipWithError("CSG START not acked");
        const u64 before = drv.gpu.engine().instructions_executed();
        for (auto _ : state) {
            drv.push(q, {cs::move32(2, kLoops), cs::move32(3, 0x1234), cs::move48(4, 0xABCD0000ull),
                         cs::add_imm32(2, 2, -1), cs::branch(cs::NEQUAL, 2, -4)});
            drv.d.w(CSF_DOORBELL(1), 1);
            if (!drv.wait([&] { return drv.locked([&] { return q.out->extract == q.in->insert; }); },
                          kshim::NSEC_PER_SEC)) {
                state.SkipWithError("stream did not complete");
                break;
            }
        }
        executed = drv.gpu.engine().instructions_executed() - before;
        if (executed != kInstrsPerRun * state.iterations() && !state.error_occurred())
            state.SkipWithError("executed instruction count differs from the program's");
    }
    rt.advance_until_idle();
    state.SetItemsProcessed(static_cast<int64_t>(executed));
    state.counters["instrs_per_run"] = static_cast<double>(kInstrsPerRun);
}
BENCHMARK(BM_CsInterpreter)->Unit(benchmark::kMillisecond);

void BM_CsgStartSuspend(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    kshim::ktime_t virt = 0;
    {
        CsfRig drv(rt);
        if (!drv.boot())
            return state.SkipWithError("MCU boot failed");
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
    rt.advance_until_idle();
    state.counters["virt_ns"] = benchmark::Counter(static_cast<double>(virt), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CsgStartSuspend)->Unit(benchmark::kMicrosecond);

void BM_CsgSuspendResume(benchmark::State& state) {
    constexpr u32 kQueues = 4;
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    kshim::ktime_t virt = 0;
    {
        CsfRig drv(rt);
        if (!drv.boot())
            return state.SkipWithError("MCU boot failed");
        std::vector<CsfRig::Queue> qs;
        for (u32 c = 0; c < kQueues; c++) {
            qs.push_back(drv.make_queue(4096));
            drv.program_cs(0, c, qs[c]);
        }
        u8* sbh;
        const u32 sb = drv.mcu_alloc(drv.locked([&] { return drv.csg_ctrl(0)->suspend_size; }), &sbh);
        drv.start_group(0, 15, CSG_STATE_START, sb);
        if (!drv.wait([&] { return drv.state_acked(0); }))
            return state.SkipWithError("CSG START not acked");
        // Each stream: a few registers, a job that outlives the benchmark on SB entry c, and a WAIT
        // on it. Every SUSPEND preempts the jobs and saves them with the streams; every RESUME
        // checks the records and queues the jobs again.
        for (u32 c = 0; c < kQueues; c++) {
            drv.push(qs[c], {cs::move32(20, 0x1000 + c), cs::move48(22, 0xABCD0000ull + c), cs::set_sb_entry(c, 0),
                             cs::move48(16, drv.shader(MockShader::Run, 1000 * kshim::NSEC_PER_SEC)), cs::run_compute(),
                             cs::wait(1u << c)});
        }
        drv.d.w(CSF_DOORBELL(1), 1);
        auto cores_busy = [&] { return drv.locked([&] { return drv.gpu.engine().cores_busy_locked(); }); };
        if (!drv.wait([&] { return cores_busy() == kQueues; }))
            return state.SkipWithError("jobs did not start");
        for (auto _ : state) {
            const kshim::ktime_t t0 = kshim::ktime_get();
            drv.set_state(0, CSG_STATE_SUSPEND);
            bool ok = drv.wait([&] { return drv.state_acked(0); });
            for (u32 c = 0; c < kQueues; c++) {
                drv.locked([&] { memset(drv.cs_out(0, c), 0, sizeof(panthor_fw_cs_output_iface)); });
                drv.program_cs(0, c, qs[c]);
            }
            drv.start_group(0, 15, CSG_STATE_RESUME, sb);
            ok = ok && drv.wait([&] { return drv.state_acked(0); });
            virt += kshim::ktime_get() - t0;
            if (!ok) {
                state.SkipWithError("CSG state request not acked");
                break;
            }
        }
        // The last round trip saved one job per stream and brought all of them back.
        const bool saved = drv.locked([&] {
            for (u32 c = 0; c < kQueues; c++)
                if (reinterpret_cast<const SavedStream*>(sbh + c * kSaveStride)->njobs != 1)
                    return false;
            return true;
        });
        if (!state.error_occurred() && (!saved || !drv.wait([&] { return cores_busy() == kQueues; })))
            state.SkipWithError("the jobs did not survive the round trips");
    }
    rt.advance_until_idle();
    state.counters["virt_ns"] = benchmark::Counter(static_cast<double>(virt), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_CsgSuspendResume)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
