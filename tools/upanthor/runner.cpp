// `upanthor run` (runner.h): boots the device, issues the timed submissions, waits, tears down.
#include "tools/upanthor/runner.h"

#include <algorithm>
#include <cerrno>
#include <vector>

#include "drm/drm_syncobj.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/time.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_drv.h"
#include "tools/upanthor/cli.h"
#include "tools/upanthor/jm_run.h"
#include "tools/upanthor/run_state.h"
#include "tools/upanthor/run_world.h"

namespace upanthor {
namespace run_detail {
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
        if (umd::Status st = c.group_submit(groups_[g][gi].handle, qs); !st)
            p->fail_submit(st.error());
        else if (int ret = drm::drm_syncobj_find_fence(clients_[client].file, *done, 0, 0, &p->fence); ret)
            p->fail_submit(ret);
        else
            p->arm();
        pending_.push_back(std::move(p));
    }
    return 0;
}

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
    const std::vector<int> fault_ids = add_workload_faults(plat.gpu().faults(), s_, opts_, t0_);

    const int rc = run_workload(
        rt, s_, t0_, submission_schedule(s_.submissions),
        [this](size_t sub, u32 inst) { return submit_instance(sub, inst); }, [this] { return done_count_ == total_; },
        [this](s64 now, s64 end) { progress(now, end); });
    if (rc)
        return rc;
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
    seed_ = run_seed(s_, opts_);
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
    // The scenario's GPU model: the default CSF one, configured by its [gpu].
    host::Machine::Options mo;
    mo.config.csf = s_.gpu;
    WorldSteps steps;
    steps.fail_setup = [this](const std::string& step, int err) { return fail_setup(step, err); };
    steps.faults = [](host::Machine& m) -> mock_hw::FaultPlan& { return m.csf()->gpu().faults(); };
    steps.setup = [this](host::Machine& m) {
        gstats_.resize(s_.groups.size());
        return setup(m);
    };
    steps.drive = [this](host::World& w) { return drive(w.rt(), *w.machine()->csf()); };
    steps.teardown = [this] { teardown(); };
    int rc = run_in_world(runtime_options(opts_, seed_), mo, s_, steps, &kernel_findings_);
    if (coredumps_ && !coredumps_->error().empty() && setup_error_.empty()) {
        setup_error_ = "--coredump: " + coredumps_->error();
        rc = 1;
    }
    wall_ = wall_seconds() - wall0;
    return rc;
}

RunOutcome Runner::outcome() const {
    return make_outcome(s_.file, seed_, setup_error_, failures_, kernel_findings_, t_end_ - t0_, wall_);
}

void Runner::teardown() {
    for (auto& p : pending_)
        p->release();
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
    return run_detail::run_and_report(r, opts, report_out);
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
