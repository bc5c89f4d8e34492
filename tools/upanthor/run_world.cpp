// `upanthor run`: the run skeleton shared by the CSF and Job Manager runners (run_world.h).
#include "tools/upanthor/run_world.h"

#include "kernel_shim/sim_abort.h"
#include "kernel_shim/time.h"
#include "tools/upanthor/run_state.h"

namespace upanthor::run_detail {

namespace {

void on_job_done(kshim::dma_fence*, kshim::dma_fence_cb* cb) {
    auto* p = reinterpret_cast<JobFence*>(cb);
    p->done_ns = kshim::ktime_get();
    p->done = true;
    p->cb_armed = false;
    ++*p->done_count;
}

}  // namespace

void JobFence::arm() {
    cb_armed = true;
    if (kshim::dma_fence_add_callback(fence, &cb, on_job_done)) {
        cb_armed = false;
        done = true;
        done_ns = kshim::ktime_get();
        ++*done_count;
    }
}

void JobFence::release() {
    if (cb_armed && fence)
        kshim::dma_fence_remove_callback(fence, &cb);  // a no-op if it ran meanwhile
    cb_armed = false;
    if (fence)
        kshim::dma_fence_put(fence);
    fence = nullptr;
}

double wall_seconds() {
    return static_cast<double>(kshim::host_monotonic_ns()) * 1e-9;
}

std::uint64_t run_seed(const scenario::Scenario& s, const RunOptions& opts) {
    return opts.seed ? *opts.seed : (s.seed ? s.seed : 1);
}

kshim::RuntimeOptions runtime_options(const RunOptions& opts, std::uint64_t seed) {
    kshim::RuntimeOptions ro;
    ro.seed = seed;
    ro.mode = opts.real ? kshim::Mode::Real : kshim::Mode::Simulated;
    ro.preempt_probability = opts.preempt_probability;
    if (!opts.trace_path.empty()) {
        ro.trace = true;
        ro.trace_path = opts.trace_path;
    }
    return ro;
}

int run_in_world(const kshim::RuntimeOptions& ro, const host::Machine::Options& machine, const scenario::Scenario& s,
                 const WorldSteps& steps, std::vector<std::string>* kernel_findings) {
    host::World::Options wo;
    wo.runtime = ro;
    wo.machine = machine;
    wo.boot = host::World::Boot::Device;  // setup() probes, after the boot faults are armed
    host::World world(wo);
    int rc = 0;
    try {
        if (int ret = world.status()) {
            rc = steps.fail_setup(world.failed_step(), ret);
        } else {
            mock_hw::FaultPlan& plan = steps.faults(*world.machine());
            for (const scenario::Fault& f : s.faults)
                if (f.spec.kind == mock_hw::FaultKind::BootFail)
                    plan.add(f.spec);
            rc = steps.setup(*world.machine());
            if (!rc)
                rc = steps.drive(world);
            steps.teardown();
        }
    } catch (const kshim::SimAbort&) {
        kernel_findings->push_back("the simulation found a deadlock (see the report above)");
        rc = 1;
    }
    for (const host::Problem& p : world.finish())
        kernel_findings->push_back(p.text);
    return rc;
}

std::vector<int> add_workload_faults(mock_hw::FaultPlan& plan, const scenario::Scenario& s, const RunOptions& opts,
                                     std::int64_t t0) {
    std::vector<int> ids;
    auto add = [&](mock_hw::FaultSpec spec) {
        if (spec.kind == mock_hw::FaultKind::BootFail)
            return;
        if (spec.trigger.type == mock_hw::FaultTrigger::Type::AtTime)
            spec.trigger.at += t0;
        ids.push_back(plan.add(spec));
    };
    for (const scenario::Fault& f : s.faults)
        add(f.spec);
    for (const mock_hw::FaultSpec& f : opts.injects)
        add(f);
    return ids;
}

// Waiting for the last jobs goes in slices of this much virtual time (see run_workload).
constexpr s64 kWaitSliceNs = 100 * kshim::NSEC_PER_MSEC;

int run_workload(kshim::Runtime& rt, const scenario::Scenario& s, std::int64_t t0,
                 const std::vector<TimedSubmit>& schedule, const std::function<int(std::size_t, std::uint32_t)>& submit,
                 const std::function<bool()>& all_done,
                 const std::function<void(std::int64_t now, std::int64_t end)>& progress) {
    const s64 end = s.duration_us ? t0 + kshim::us_to_ktime(s.duration_us) : t0 + kMaxRunNs;
    for (const TimedSubmit& e : schedule) {
        const s64 at = t0 + kshim::us_to_ktime(e.t_us);
        if (at > end)
            break;
        const s64 now = kshim::ktime_get();
        if (at > now)
            rt.advance(at - now);
        if (progress)
            progress(at, end);
        if (submit(e.sub, e.inst))
            return 1;
    }
    for (s64 now = kshim::ktime_get(); now < end && !all_done(); now = kshim::ktime_get()) {
        rt.run_until(all_done, std::min(kWaitSliceNs, end - now));
        if (progress)
            progress(kshim::ktime_get(), end);
    }
    return 0;
}

}  // namespace upanthor::run_detail
