// `upanthor run` (runner.h): boots the device, issues the timed submissions, waits, tears down.
#include "tools/upanthor/runner.h"

#include <algorithm>
#include <cerrno>
#include <vector>

#include "drm/drm_syncobj.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/sim_abort.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/time.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_drv.h"
#include "tools/upanthor/cli.h"
#include "tools/upanthor/jm_run.h"
#include "tools/upanthor/run_state.h"

namespace upanthor {
namespace run_detail {
namespace {

// The simulator's own speed (virtual vs. wall time); the driver never sees this clock.
double wall_seconds() {
    return static_cast<double>(kshim::host_monotonic_ns()) * 1e-9;
}

}  // namespace

int Runner::submit_instance(size_t si, u32 inst) {
    const sc::Submission& sub = s_.submissions[si];
    const size_t g = sub.queue.group;
    const size_t client = vms_[s_.groups[g].vm].client;
    umd::PanthorClient& c = *clients_[client].c;
    for (u32 gi = 0; gi < groups_[g].size(); gi++) {
        u64 va = 0;
        u32 size = 0;
        if (int ret = stream_for(sub.job, g, gi, sub.queue.queue, &va, &size))
            return ret;
        auto done = c.syncobj_create();
        if (!done.ok()) {
            setup_error_ = "SYNCOBJ_CREATE (job fence)";
            return done.error();
        }
        std::vector<drm_panthor_sync_op> syncs;
        for (const sc::SyncRef& w : sub.waits)
            syncs.push_back(s_.syncobjs[w.syncobj].timeline ? umd::timeline_wait(syncobjs_[w.syncobj], w.point + inst)
                                                            : umd::sync_wait(syncobjs_[w.syncobj]));
        for (const sc::SyncRef& w : sub.signals)
            syncs.push_back(s_.syncobjs[w.syncobj].timeline ? umd::timeline_signal(syncobjs_[w.syncobj], w.point + inst)
                                                            : umd::sync_signal(syncobjs_[w.syncobj]));
        syncs.push_back(umd::sync_signal(*done));
        umd::QueueSubmit qs;
        qs.queue_index = static_cast<u32>(sub.queue.queue);
        qs.stream_addr = va;
        qs.stream_size = size;
        qs.latest_flush = c.latest_flush_id().value_or(0);
        qs.syncs = std::move(syncs);

        auto p = std::make_unique<Pending>();
        p->submission = si;
        p->group = g;
        p->group_inst = gi;
        p->done_count = &done_count_;
        p->submit_ns = kshim::ktime_get();
        gstats_[g].submitted++;
        total_++;
        if (umd::Status st = c.group_submit(groups_[g][gi].handle, qs); !st) {
            p->submit_error = st.error();
            p->done = true;
            p->done_ns = p->submit_ns;
            done_count_++;
        } else if (int ret = drm::drm_syncobj_find_fence(clients_[client].file, *done, 0, 0, &p->fence); ret) {
            p->submit_error = ret;
            p->done = true;
            p->done_ns = p->submit_ns;
            done_count_++;
        } else {
            p->cb_armed = true;
            if (kshim::dma_fence_add_callback(p->fence, &p->cb, on_job_done)) {
                p->cb_armed = false;
                p->done = true;
                p->done_ns = kshim::ktime_get();
                done_count_++;
            }
        }
        pending_.push_back(std::move(p));
    }
    return 0;
}

// The submissions in time order: (virtual µs from the start, submission, instance).
struct TimedSubmit {
    u64 t_us;
    size_t sub;
    u32 inst;
};

std::vector<TimedSubmit> submission_schedule(const sc::Scenario& s) {
    std::vector<TimedSubmit> evs;
    for (size_t i = 0; i < s.submissions.size(); i++)
        for (u32 k = 0; k < s.submissions[i].count; k++)
            evs.push_back({s.submissions[i].start_us + k * s.submissions[i].every_us, i, k});
    std::stable_sort(evs.begin(), evs.end(),
                     [](const TimedSubmit& a, const TimedSubmit& b) { return a.t_us < b.t_us; });
    return evs;
}

// Waiting for the last jobs goes in slices of this much virtual time, so that a long run can
// report progress; the slicing is the same with or without progress output (same schedule).
constexpr s64 kWaitSliceNs = 100 * kshim::NSEC_PER_MSEC;

void Runner::progress(s64 now, s64 end) {
    if (!opts_.progress_out)
        return;
    const double w = wall_seconds();
    if (w - last_progress_wall_ < 1.0)
        return;
    last_progress_wall_ = w;
    std::fprintf(opts_.progress_out, "upanthor run: %.3f s of %.3f s virtual, %u/%u jobs done\n",
                 static_cast<double>(now - t0_) / 1e9, static_cast<double>(end - t0_) / 1e9, done_count_.load(),
                 total_);
}

u64 gpu_busy_ns(mock_hw::MockPlatform& plat) {
    kshim::SpinGuard g(plat.gpu().lock());
    return plat.gpu().engine().busy_ns_locked();
}

int Runner::drive(kshim::Runtime& rt, mock_hw::MockPlatform& plat) {
    t0_ = kshim::ktime_get();
    busy0_ns_ = gpu_busy_ns(plat);
    real_jobs0_ = plat.gpu().engine().real_jobs_completed();
    // GPU resets of the workload, seen as the driver's writes of the reset commands.
    plat.pdev()->desc.iomem->trace_hook = [this](bool write, u32 off, u32 value) {
        if (write && off == panthor::GPU_CMD && (value == panthor::GPU_SOFT_RESET || value == panthor::GPU_HARD_RESET))
            gpu_resets_.fetch_add(1, std::memory_order_relaxed);
    };
    // Fault times count from the start of the workload, after boot.
    std::vector<int> fault_ids;
    auto add_fault = [&](mock_hw::FaultSpec spec) {
        if (spec.kind == mock_hw::FaultKind::BootFail)
            return;
        if (spec.trigger.type == mock_hw::FaultTrigger::Type::AtTime)
            spec.trigger.at += t0_;
        fault_ids.push_back(plat.gpu().faults().add(spec));
    };
    for (const sc::Fault& f : s_.faults)
        add_fault(f.spec);
    for (const mock_hw::FaultSpec& f : opts_.injects)
        add_fault(f);

    const s64 end = s_.duration_us ? t0_ + kshim::us_to_ktime(s_.duration_us) : t0_ + kMaxRunNs;
    for (const TimedSubmit& e : submission_schedule(s_)) {
        const s64 at = t0_ + kshim::us_to_ktime(e.t_us);
        if (at > end)
            break;
        const s64 now = kshim::ktime_get();
        if (at > now)
            rt.advance(at - now);
        progress(at, end);
        if (submit_instance(e.sub, e.inst))
            return 1;
    }
    for (s64 now = kshim::ktime_get(); now < end && done_count_ != total_; now = kshim::ktime_get()) {
        rt.run_until([this] { return done_count_ == total_; }, std::min(kWaitSliceNs, end - now));
        progress(kshim::ktime_get(), end);
    }
    t_end_ = kshim::ktime_get();
    stats_ = panthor::panthor_sched_get_stats(ptdev_);
    gpu_busy_ns_ = gpu_busy_ns(plat) - busy0_ns_;
    real_jobs_ = plat.gpu().engine().real_jobs_completed() - real_jobs0_;
    for (int id : fault_ids)
        faults_fired_ += plat.gpu().faults().fired(id);
    plat.pdev()->desc.iomem->trace_hook = nullptr;
    check_expectations();
    return 0;
}

int Runner::run() {
    seed_ = opts_.seed ? *opts_.seed : (s_.seed ? s_.seed : 1);
    kshim::RuntimeOptions ro;
    ro.seed = seed_;
    ro.mode = opts_.real ? kshim::Mode::Real : kshim::Mode::Simulated;
    ro.preempt_probability = opts_.preempt_probability;
    if (!opts_.trace_path.empty()) {
        ro.trace = true;
        ro.trace_path = opts_.trace_path;
    }
    // --coredump DIR: a listener for the whole life of the runtime (it runs in kernel work items).
    if (!opts_.coredump_dir.empty()) {
        std::string err;
        coredumps_ = CoredumpSink::open(opts_.coredump_dir, &err);
        if (!coredumps_) {
            setup_error_ = err;
            gstats_.resize(s_.groups.size());  // the summary still lists the groups
            return 1;
        }
    }
    const double wall0 = wall_seconds();
    last_progress_wall_ = wall0;
    int rc = 0;
    {
        // The host's world: the runtime, the scenario's GPU model with its driver module loaded
        // (probed by setup(), after the boot faults are armed), and the end-of-run checks against
        // the memory before it (nothing from before this run counts against it).
        upanthor::host::World::Options wo;
        wo.runtime = ro;
        wo.machine.config.csf = s_.gpu;
        wo.boot = upanthor::host::World::Boot::Device;
        upanthor::host::World world(wo);
        try {
            if (int ret = world.status()) {
                rc = fail_setup(world.failed_step(), ret);
            } else {
                mock_hw::MockPlatform& plat = *world.machine()->csf();
                for (const sc::Fault& f : s_.faults)
                    if (f.spec.kind == mock_hw::FaultKind::BootFail)
                        plat.gpu().faults().add(f.spec);
                gstats_.resize(s_.groups.size());
                rc = setup(*world.machine());
                if (!rc)
                    rc = drive(world.rt(), plat);
                teardown();
            }
        } catch (const kshim::SimAbort&) {
            kernel_findings_.push_back("the simulation found a deadlock (see the report above)");
            rc = 1;
        }
        for (const upanthor::host::Problem& p : world.finish())
            kernel_findings_.push_back(p.text);
    }
    if (coredumps_ && !coredumps_->error().empty() && setup_error_.empty()) {
        setup_error_ = "--coredump: " + coredumps_->error();
        rc = 1;
    }
    wall_ = wall_seconds() - wall0;
    return rc;
}

RunOutcome Runner::outcome() const {
    RunOutcome o;
    o.passed = passed();
    o.seed = seed_;
    o.setup_error = setup_error_;
    for (const Failure& f : failures_)
        o.failures.push_back(s_.file + ":" + std::to_string(f.line) + ": expectation failed: " + f.what);
    for (const std::string& k : kernel_findings_)
        o.failures.push_back("kernel: " + k);
    o.virtual_ns = t_end_ - t0_;
    o.wall_s = wall_;
    return o;
}

void Runner::teardown() {
    for (auto& p : pending_) {
        if (p->cb_armed && p->fence)
            kshim::dma_fence_remove_callback(p->fence, &p->cb);  // a no-op if it ran meanwhile
        p->cb_armed = false;
        if (p->fence)
            kshim::dma_fence_put(p->fence);
        p->fence = nullptr;
    }
    // Closing a file destroys what is left of its groups, heaps, VMs and handles.
    for (ClientRt& c : clients_) {
        c.c.reset();
        c.be.reset();
        if (c.file)
            drm::drm_release(c.file);
        c.file = nullptr;
    }
}

}  // namespace run_detail

using run_detail::Runner;
namespace sc = upanthor::scenario;

RunOutcome run_scenario(const sc::Scenario& s, const RunOptions& opts, std::FILE* report_out) {
    if (s.model == sc::GpuModel::G52)
        return run_jm_scenario(s, opts, report_out);
    Runner r(s, opts);
    r.run();
    if (report_out) {
        if (opts.json)
            r.report_json(report_out);
        else
            r.report(report_out);
    }
    return r.outcome();
}

int cmd_run(const std::string& path, RunOptions opts, const std::vector<std::string>& inject_specs, std::FILE* out,
            std::FILE* err) {
    sc::ParseResult pr = sc::parse_scenario_file(path);
    if (!pr.ok()) {
        for (const sc::Diagnostic& d : pr.diagnostics)
            std::fprintf(err, "%s\n", d.to_string().c_str());
        return kExitUsage;
    }
    for (const std::string& spec : inject_specs) {
        sc::InjectResult ir = sc::parse_inject(spec, pr.scenario->gpu, pr.scenario->model);
        for (const sc::Diagnostic& d : ir.diagnostics)
            std::fprintf(err, "upanthor run: --inject '%s': %s\n", spec.c_str(), d.message.c_str());
        if (!ir.fault)
            return kExitUsage;
        opts.injects.push_back(ir.fault->spec);
    }
    const RunOutcome o = run_scenario(*pr.scenario, opts, out);
    if (!o.setup_error.empty())
        std::fprintf(err, "upanthor run: %s\n", o.setup_error.c_str());
    return o.passed ? kExitOk : kExitFailure;
}

}  // namespace upanthor
