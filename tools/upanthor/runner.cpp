// `upanthor run` (runner.h): boots the device, issues the timed submissions, waits, tears down.
#include "tools/upanthor/runner.h"

#include <algorithm>
#include <cerrno>
#include <vector>

#include "drm/syncobj.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/time.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_drv.h"
#include "tools/upanthor/cli.h"
#include "tools/upanthor/run_state.h"

namespace upanthor {
namespace run_detail {
namespace {


// The simulator's own speed (virtual vs. wall time); the driver never sees this clock.
double wall_seconds() { return static_cast<double>(kshim::host_monotonic_ns()) * 1e-9; }

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
            syncs.push_back(s_.syncobjs[w.syncobj].timeline
                                ? umd::timeline_signal(syncobjs_[w.syncobj], w.point + inst)
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

int Runner::run() {
    seed_ = opts_.seed ? *opts_.seed : (s_.seed ? s_.seed : 1);
    kshim::RuntimeOptions ro;
    ro.seed = seed_;
    if (!opts_.trace_path.empty()) {
        ro.trace = true;
        ro.trace_path = opts_.trace_path;
    }
    const double wall0 = wall_seconds();
    int rc = 0;
    {
        kshim::Runtime rt{ro};
        {
            mock_hw::MockPlatform plat(s_.gpu);
            for (const sc::Fault& f : s_.faults)
                if (f.spec.kind == mock_hw::FaultKind::BootFail)
                    plat.gpu().faults().add(f.spec);
            int ret = panthor::panthor_init();
            if (ret) {
                rc = fail_setup("panthor_init", ret);
            } else {
                gstats_.resize(s_.groups.size());
                rc = setup(plat);
                if (!rc) {
                    t0_ = kshim::ktime_get();
                    // Fault times in the file count from the start of the workload, after boot.
                    for (const sc::Fault& f : s_.faults) {
                        if (f.spec.kind == mock_hw::FaultKind::BootFail)
                            continue;
                        mock_hw::FaultSpec spec = f.spec;
                        if (spec.trigger.type == mock_hw::FaultTrigger::Type::AtTime)
                            spec.trigger.at += t0_;
                        plat.gpu().faults().add(spec);
                    }
                    struct Ev {
                        u64 t_us;
                        size_t sub;
                        u32 inst;
                    };
                    std::vector<Ev> evs;
                    for (size_t i = 0; i < s_.submissions.size(); i++)
                        for (u32 k = 0; k < s_.submissions[i].count; k++)
                            evs.push_back({s_.submissions[i].start_us + k * s_.submissions[i].every_us, i, k});
                    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.t_us < b.t_us; });
                    const s64 end = s_.duration_us ? t0_ + kshim::us_to_ktime(s_.duration_us) : t0_ + kMaxRunNs;
                    for (const Ev& e : evs) {
                        const s64 at = t0_ + kshim::us_to_ktime(e.t_us);
                        if (at > end)
                            break;
                        const s64 now = kshim::ktime_get();
                        if (at > now)
                            rt.advance(at - now);
                        if (submit_instance(e.sub, e.inst)) {
                            rc = 1;
                            break;
                        }
                    }
                    if (!rc) {
                        const s64 now = kshim::ktime_get();
                        if (end > now)
                            rt.run_until([this] { return done_count_ == total_; }, end - now);
                    }
                    t_end_ = kshim::ktime_get();
                    stats_ = panthor::panthor_sched_get_stats(ptdev_);
                    if (!rc)
                        check_expectations();
                }
                teardown();
                if (ptdev_)
                    panthor::panthor_remove(plat.pdev());
                panthor::panthor_exit();
            }
        }
        rt.run_until_idle();
    }
    wall_ = wall_seconds() - wall0;
    return rc;
}

void Runner::teardown() {
    for (auto& p : pending_) {
        if (p->cb_armed && p->fence)
            kshim::dma_fence_remove_callback(p->fence, &p->cb);
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

int cmd_run(const std::string& path, const RunOptions& opts, std::FILE* out, std::FILE* err) {
    sc::ParseResult pr = sc::parse_scenario_file(path);
    if (!pr.ok()) {
        for (const sc::Diagnostic& d : pr.diagnostics)
            std::fprintf(err, "%s\n", d.to_string().c_str());
        return kExitUsage;
    }
    Runner r(*pr.scenario, opts);
    r.run();
    if (opts.json)
        r.report_json(out);
    else
        r.report(out);
    if (!r.setup_error().empty())
        std::fprintf(err, "upanthor run: %s\n", r.setup_error().c_str());
    return r.passed() ? kExitOk : kExitFailure;
}

}  // namespace upanthor
