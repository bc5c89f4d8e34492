// panfrost's job path on the mock Mali-G52, release preset, simulated mode (docs/panfrost.md,
// "Benchmarks").
//
//   BM_SubmitWriteValue     one iteration = SUBMIT of one WRITE_VALUE job (laid out in a
//                           CPU-mapped BO) with an out_sync, then SYNCOBJ_WAIT on it: the ioctl,
//                           drm_sched, run_job, the NEXT registers, the mock running the job, the
//                           job IRQ and its thread, fence signalling. Host CPU per job, split into
//                           driver (kernel tasks), hw (the mock's events and MMIO handling), body
//                           (the ioctls in the caller) and the runtime's scheduling. Goal <= 5 us.
//                           /split:0 runs without the split (the runtime's default; total_us
//                           only), /split:1 with it (kernel_shim/cputime.h: it costs a
//                           cycle-counter read per task switch and per MMIO access).
//   BM_JobTimeoutRecovery   one iteration = an endless job chain submitted, its 500 ms timeout
//                           firing (virtual time), the reset, the guilty fence signalled and the
//                           device running a WRITE_VALUE job again. Wall time per iteration.
//                           Goal <= 50 ms.
//   BM_ResetWith100Queued   100 chains of 300 NULL jobs queued on the job slots (half fragment on
//                           JS0, half on JS1: SUBMIT never picks JS2, as upstream), then a reset
//                           requested while they run. One iteration = the reset, from the request
//                           until the slots run again; host CPU (driver, hw, total). The chains
//                           finishing afterwards is not timed. Goal <= 1 ms.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "drm/drm_syncobj.h"
#include "drm/uaccess.h"
#include "host/machine.h"
#include "kernel_shim/cputime.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"
#include "mock_jm/jm_platform.h"
#include "panfrost/panfrost_device.h"
#include "panfrost/panfrost_drv.h"
#include "panfrost/panfrost_job.h"
#include "testkit/panfrost_rig.h"

using kshim::u32;
using kshim::u64;
using panfrost::testing::PanfrostJobBo;
using panfrost::testing::PfSubmit;

namespace {

namespace desc = panfrost::desc;

// The G52 machine, the driver probed, one file and a 4 MiB job BO mapped for the CPU.
struct Rig {
    std::unique_ptr<upanthor::host::Machine> machine;
    panfrost::panfrost_device* pfdev = nullptr;
    drm::drm_file* file = nullptr;
    PanfrostJobBo bo;
    u32 syncobj = 0;

    bool up() {
        upanthor::host::Machine::Options o;
        o.model = "g52";
        if (upanthor::host::Machine::create(o, &machine) || machine->probe())
            return false;
        pfdev = panfrost::panfrost_from_pdev(machine->pdev());
        if (machine->open_file(&file))
            return false;
        return panfrost::testing::pf_job_bo(file, 4u << 20, &bo) == 0 &&
               panfrost::testing::pf_syncobj_create(file, &syncobj) == 0;
    }
    ~Rig() {
        panfrost::testing::pf_job_bo_release(&bo);
        if (file)
            drm::drm_release(file);
    }
    int submit(u64 jc, u32 out_sync, u32 requirements = 0) {
        return panfrost::testing::pf_submit(
            file, PfSubmit{.jc = jc, .bos = {bo.handle}, .out_sync = out_sync, .requirements = requirements});
    }
    int wait(u32 handle, kshim::ktime_t timeout) {
        drm::uapi::drm_syncobj_wait w{};
        w.handles = drm::user_ptr(&handle);
        w.count_handles = 1;
        w.timeout_nsec = kshim::ktime_get() + timeout;
        return panfrost::testing::pf_ioctl(file, drm::uapi::DRM_IOCTL_SYNCOBJ_WAIT, &w, sizeof(w));
    }
};

// A simulated runtime that splits its CPU time by account (off by default: it costs).
kshim::RuntimeOptions split_options() {
    kshim::RuntimeOptions o;
    o.cputime_split = true;
    return o;
}

void set_cpu_counters(benchmark::State& state, const kshim::CpuTimes& a, const kshim::CpuTimes& b, double per) {
    auto us = [&](kshim::CpuAccount acc) { return static_cast<double>(b[acc] - a[acc]) / 1000.0 / per; };
    state.counters["driver_us"] = us(kshim::CpuAccount::Kernel);
    state.counters["hw_us"] = us(kshim::CpuAccount::Hardware);
    state.counters["body_us"] = us(kshim::CpuAccount::Body);
    state.counters["runtime_us"] = us(kshim::CpuAccount::Runtime);
    state.counters["total_us"] = static_cast<double>(b.total() - a.total()) / 1000.0 / per;
}

void BM_SubmitWriteValue(benchmark::State& state) {
    const bool split = state.range(0) != 0;
    kshim::RuntimeOptions o;
    o.cputime_split = split;
    kshim::Runtime rt{o};
    drm::uaccess_set_trust_all(true);
    {
        Rig r;
        if (!r.up())
            return state.SkipWithError("setup failed");
        const u64 target = r.bo.slot();
        const u64 jc = r.bo.write_value(target, 1);
        auto once = [&] {
            // The GPU refuses a header it already completed: a fresh status each time.
            r.bo.header(jc)->exception_status = 0;
            return r.submit(jc, r.syncobj) == 0 && r.wait(r.syncobj, kshim::NSEC_PER_SEC) == 0;
        };
        // The first job resumes the GPU; later ones find it awake (50 ms autosuspend).
        if (!once())
            return state.SkipWithError("warm-up failed");
        const kshim::CpuTimes before = kshim::cputime_all();
        const u64 cpu0 = kshim::process_cputime_ns();
        const u64 switches = rt.context_switches();
        for (auto _ : state) {
            if (!once()) {
                state.SkipWithError("job failed");
                break;
            }
        }
        const double n = static_cast<double>(state.iterations());
        if (split)
            set_cpu_counters(state, before, kshim::cputime_all(), n);
        else
            state.counters["total_us"] = static_cast<double>(kshim::process_cputime_ns() - cpu0) / 1000.0 / n;
        state.counters["switches_per_job"] = static_cast<double>(rt.context_switches() - switches) / n;
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_SubmitWriteValue)->ArgName("split")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_JobTimeoutRecovery(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    drm::uaccess_set_trust_all(true);
    {
        Rig r;
        if (!r.up())
            return state.SkipWithError("setup failed");
        // The endless chain's place, and a WRITE_VALUE that shows the device runs again.
        const u64 loop = r.bo.endless();
        const u64 target = r.bo.slot();
        const u64 check = r.bo.write_value(target, 1);
        u32 done = 0;
        panfrost::testing::pf_syncobj_create(r.file, &done);
        kshim::ktime_t virt = 0;
        for (auto _ : state) {
            // Lay the loop out again (its jobs zero each other's status; the hard stop leaves them
            // as they were), submit, and wait through the timeout and the reset.
            r.bo.used = loop - r.bo.va;
            if (r.bo.endless() != loop)
                return state.SkipWithError("layout moved");
            r.bo.header(check)->exception_status = 0;
            const kshim::ktime_t t0 = kshim::ktime_get();
            if (r.submit(loop, r.syncobj) || r.wait(r.syncobj, 2 * kshim::NSEC_PER_SEC)) {
                state.SkipWithError("the endless job's fence did not signal");
                break;
            }
            if (r.submit(check, done) || r.wait(done, kshim::NSEC_PER_SEC) || r.bo.value(target) != 1) {
                state.SkipWithError("the device did not recover");
                break;
            }
            virt += kshim::ktime_get() - t0;
            r.bo.at<u64>(target)[0] = 0;
        }
        state.counters["virtual_ms"] = static_cast<double>(virt) / 1e6 /
                                       static_cast<double>(std::max<benchmark::IterationCount>(1, state.iterations()));
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_JobTimeoutRecovery)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ResetWith100Queued(benchmark::State& state) {
    kshim::Runtime rt{split_options()};
    drm::uaccess_set_trust_all(true);
    {
        Rig r;
        if (!r.up())
            return state.SkipWithError("setup failed");
        constexpr int kChains = 100;
        std::vector<u32> syncs(kChains);
        for (u32& s : syncs)
            panfrost::testing::pf_syncobj_create(r.file, &s);
        const size_t base = r.bo.used;
        kshim::CpuTimes sum_before{}, sum_after{};
        // Chains the resets stopped (STOPPED counts as failed in the mock's slot counters): shows
        // that every reset met chains on the slots.
        auto chains_stopped = [&] {
            kshim::SpinGuard g(r.machine->jm()->gpu().lock());
            u64 n = 0;
            for (u32 js = 0; js < 3; js++)
                n += r.machine->jm()->gpu().jobs().stats_locked(js).chains_failed;
            return n;
        };
        const u64 stopped0 = chains_stopped();
        for (auto _ : state) {
            state.PauseTiming();
            r.bo.used = base;
            for (int i = 0; i < kChains; i++) {
                const u64 target = r.bo.slot();
                const u64 jc = r.bo.chain(300, target, static_cast<u64>(i + 1));
                if (!jc || r.submit(jc, syncs[i], i % 2 ? 0 : PANFROST_JD_REQ_FS))
                    return state.SkipWithError("submit failed");
            }
            // The first chains on the slots, the rest queued behind them.
            rt.advance(10 * kshim::NSEC_PER_USEC);
            state.ResumeTiming();

            const kshim::CpuTimes before = kshim::cputime_all();
            panfrost::panfrost_device_schedule_reset(r.pfdev);
            if (!rt.run_until(
                    [&] { return !r.pfdev->reset.pending.load() && !kshim::work_pending(&r.pfdev->reset.work); },
                    kshim::NSEC_PER_SEC))
                return state.SkipWithError("the reset did not finish");
            const kshim::CpuTimes after = kshim::cputime_all();
            for (int a = 0; a < kshim::kCpuAccounts; a++) {
                sum_before.ns[a] += before.ns[a];
                sum_after.ns[a] += after.ns[a];
            }

            state.PauseTiming();
            for (u32 s : syncs)
                if (r.wait(s, 2 * kshim::NSEC_PER_SEC))
                    return state.SkipWithError("a chain did not finish after the reset");
            state.ResumeTiming();
        }
        set_cpu_counters(state, sum_before, sum_after, static_cast<double>(state.iterations()));
        state.counters["stopped_per_reset"] =
            static_cast<double>(chains_stopped() - stopped0) / static_cast<double>(state.iterations());
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_ResetWith100Queued)->Unit(benchmark::kMicrosecond)->Iterations(100);

}  // namespace

BENCHMARK_MAIN();
