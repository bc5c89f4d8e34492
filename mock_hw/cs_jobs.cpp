// The mock firmware's job pool (cs_engine.h): RUN_* jobs and cache flushes in flight, the shader
// cores they share, and what a job does when it ends.
//
// Jobs hold one shader core each from the pool of SHADER_PRESENT & core_en_mask; cache flushes
// hold none. A queued job starts when a core is free and the endpoint rules let it: its group may
// hold at most endpoint_req[7:0] compute / [15:8] fragment cores at once (0 = no limit), and a
// group that asked for exclusive compute (BIT20) or fragment (BIT21) endpoints runs jobs of that
// kind alone. Waiting jobs are considered by CSG priority, then issue order; when the first job
// in that order is an exclusive group's that waits for other groups' jobs of its kind to finish,
// no later job of that kind starts meanwhile, so the exclusive group is not starved.
#include <algorithm>
#include <bit>
#include <string>

#include "kernel_shim/trace.h"
#include "mock_hw/cs_engine.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

using namespace panthor;

void CsEngine::queue_job_locked(Job j) {
    lockdep_assert_held(&lock_);
    Stream& s = groups_[j.csg]->cs[j.cs];
    j.seq = job_seq_++;
    s.sb[j.slot]++;
    s.jobs++;
    jobs_.push_back(j);
    if (j.uses_core)
        dispatch_locked();
    else
        start_job_locked(jobs_.back());
}

bool CsEngine::may_start_locked(const Job& j, bool* reserve) const {
    lockdep_assert_held(&lock_);
    const Group& g = *groups_[j.csg];
    if (g.ep_limit[j.ep] && g.running[j.ep] >= g.ep_limit[j.ep])
        return false;
    bool others_running = false, other_exclusive = false;
    for (const auto& o : groups_) {
        if (o.get() == &g || !o->running[j.ep])
            continue;
        others_running = true;
        other_exclusive |= o->ep_exclusive[j.ep];
    }
    if (other_exclusive)
        return false;
    if (g.ep_exclusive[j.ep] && others_running) {
        *reserve = true;  // wait for the others to drain; nobody else starts this kind meanwhile
        return false;
    }
    return true;
}

void CsEngine::set_cores_busy_locked(u32 n) {
    lockdep_assert_held(&lock_);
    const ktime_t now = kshim::ktime_get();
    if (!cores_busy_ && n)
        busy_since_ = now;
    else if (cores_busy_ && !n)
        busy_ns_ += static_cast<u64>(now - busy_since_);
    cores_busy_ = n;
}

u64 CsEngine::busy_ns_locked() const {
    lockdep_assert_held(&lock_);
    return busy_ns_ + (cores_busy_ ? static_cast<u64>(kshim::ktime_get() - busy_since_) : 0);
}

void CsEngine::dispatch_locked() {
    lockdep_assert_held(&lock_);
    const u32 total = cores_total_locked();
    if (cores_busy_ >= total)
        return;
    dispatch_order_.clear();
    for (auto& j : jobs_)
        if (!j.started && j.uses_core && groups_[j.csg]->state == GState::Running)
            dispatch_order_.push_back(&j);
    std::sort(dispatch_order_.begin(), dispatch_order_.end(),
              [](const Job* a, const Job* b) { return a->prio != b->prio ? a->prio > b->prio : a->seq < b->seq; });
    bool reserved[kEpKinds] = {};
    for (Job* j : dispatch_order_) {
        if (cores_busy_ >= total)
            break;
        if (reserved[j->ep])
            continue;
        bool reserve = false;
        if (may_start_locked(*j, &reserve))
            start_job_locked(*j);
        else if (reserve)
            reserved[j->ep] = true;
    }
}

void CsEngine::start_job_locked(Job& j) {
    lockdep_assert_held(&lock_);
    j.started = true;
    j.end = kshim::ktime_get() + static_cast<ktime_t>(j.shader.duration_ns);
    if (j.uses_core) {
        Group& g = *groups_[j.csg];
        set_cores_busy_locked(cores_busy_ + 1);
        g.running[j.ep]++;
        if (kshim::trace::enabled()) {
            kshim::trace::async_begin("mock_job", j.seq, "mock_hw",
                                      "{\"csg\":" + std::to_string(j.csg) + ",\"cs\":" + std::to_string(j.cs) + "}");
            kshim::trace::counter("mock_cores_busy", cores_busy_);
            trace_job_begin_locked(j);
        }
        if (!g.progress_ev->pending_locked())
            rearm_progress_locked(g);
    }
    rearm_jobs_locked();
}

void CsEngine::release_core_locked(Job& j) {
    lockdep_assert_held(&lock_);
    if (!j.started || !j.uses_core)
        return;
    set_cores_busy_locked(cores_busy_ - 1);
    groups_[j.csg]->running[j.ep]--;
    if (kshim::trace::enabled()) {
        kshim::trace::async_end("mock_job", j.seq, "mock_hw");
        kshim::trace::counter("mock_cores_busy", cores_busy_);
    }
    trace_job_end_locked(j);
}

// A job's time on a core as a slice on its stream's track ("csg<slot> cs<n>"). Jobs of one stream
// overlap (one per core), so each takes the first free track of its stream: "csg0 cs1", then
// "csg0 cs1 #2", ...; slices on one track never overlap.
void CsEngine::trace_job_begin_locked(Job& j) {
    lockdep_assert_held(&lock_);
    Stream& s = groups_[j.csg]->cs[j.cs];
    const u32 lane = static_cast<u32>(std::countr_one(s.trace_lanes));
    if (lane >= 32)
        return;
    s.trace_lanes |= 1u << lane;
    j.trace_lane = static_cast<u8>(lane);
    const bool real = (j.shader.flags & MockShader::kFromDescriptors) != 0;
    const char* name = j.ep == kEpFragment ? (real ? "fragment job (shaders not run)" : "fragment job")
                                           : (real ? "compute job (shaders not run)" : "compute job");
    kshim::trace::begin_on(trace_job_track(j), name, "mock_hw");
}

void CsEngine::trace_job_end_locked(Job& j) {
    lockdep_assert_held(&lock_);
    if (j.trace_lane == kNoTraceLane)
        return;
    groups_[j.csg]->cs[j.cs].trace_lanes &= ~(1u << j.trace_lane);
    kshim::trace::end_on(trace_job_track(j), j.ep == kEpFragment ? "fragment job" : "compute job", "mock_hw");
    j.trace_lane = kNoTraceLane;
}

u32 CsEngine::trace_job_track(const Job& j) {
    std::string name = "csg" + std::to_string(j.csg) + " cs" + std::to_string(j.cs);
    if (j.trace_lane)
        name += " #" + std::to_string(j.trace_lane + 1);
    return kshim::trace::track(name);
}

void CsEngine::rearm_jobs_locked() {
    lockdep_assert_held(&lock_);
    ktime_t due = 0;
    bool any = false;
    for (auto& j : jobs_) {
        if (!j.started || j.stalled || j.shader.kind == MockShader::Hang)
            continue;
        if (!any || j.end < due)
            due = j.end, any = true;
    }
    if (!any)
        jobs_ev_->cancel_locked();
    else if (!jobs_ev_->pending_locked() || jobs_ev_->due_locked() != due)
        jobs_ev_->arm_at_locked(due);
}

void CsEngine::jobs_fired_locked() {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    const ktime_t now = kshim::ktime_get();
    for (size_t i = 0; i < jobs_.size();) {
        Job& j = jobs_[i];
        if (j.started && !j.stalled && j.shader.kind != MockShader::Hang && j.end <= now) {
            const size_t before = jobs_.size();
            complete_job_locked(i);
            if (jobs_.size() == before)
                i++;  // stalled, kept
            else
                i = 0;  // erased; the vector may have been reshuffled
        } else {
            i++;
        }
    }
    rearm_jobs_locked();
    dispatch_locked();
    update_idle_locked();
    kick_locked();
}

void CsEngine::complete_job_locked(size_t idx) {
    lockdep_assert_held(&lock_);
    Job j = jobs_[idx];
    Group& g = *groups_[j.csg];
    Stream& s = g.cs[j.cs];
    if (j.flush) {
        gpu_.control().cs_flush_done_locked(j.flush_l2);
    } else if (j.shader.kind == MockShader::Write || j.shader.kind == MockShader::Access) {
        u64 v = j.shader.value;
        const MemResult r = j.shader.kind == MockShader::Write
                                ? gpu_.mmu().write_locked(g.as, j.shader.addr, &v, 8, kSourceCs)
                                : gpu_.mmu().read_locked(g.as, j.shader.addr, &v, 8, Access::Read, kSourceCs);
        if (r.status == MemResult::Status::Fault || r.status == MemResult::Status::Stalled) {
            jobs_[idx].stalled = true;  // retried when the AS is updated
            return;
        }
        if (!r.ok())
            bus_fault_locked(g, s, j.shader.addr);
        else if (j.shader.kind == MockShader::Write)
            reeval_sync_waits_locked();
    } else if (j.shader.kind == MockShader::Fault) {
        fault_locked(g, s, static_cast<u32>(j.shader.value), j.shader.addr);
    }
    release_core_locked(j);
    if (s.sb[j.slot])
        s.sb[j.slot]--;
    if (s.jobs)
        s.jobs--;
    jobs_done_++;
    if (j.shader.flags & MockShader::kFromDescriptors)
        real_jobs_done_++;
    jobs_.erase(jobs_.begin() + static_cast<long>(idx));
    g.progress_reported = false;
    if (j.uses_core) {
        rearm_progress_locked(g);
        progress_made_locked(g);
    }
    stream_jobs_changed_locked(g, s);
}

void CsEngine::drop_jobs_locked(u32 csg, u32 cs) {
    lockdep_assert_held(&lock_);
    Group& g = *groups_[csg];
    for (size_t i = jobs_.size(); i-- > 0;) {
        if (jobs_[i].csg != csg || (cs != ~0u && jobs_[i].cs != cs))
            continue;
        release_core_locked(jobs_[i]);
        jobs_.erase(jobs_.begin() + static_cast<long>(i));
    }
    std::erase_if(g.preempted, [&](const Job& j) { return cs == ~0u || j.cs == cs; });
    for (auto& s : g.cs) {
        if (cs != ~0u && s.idx != cs)
            continue;
        s.jobs = 0;
        std::fill(std::begin(s.sb), std::end(s.sb), 0u);
    }
    if (!g.running[kEpCompute] && !g.running[kEpFragment])
        g.progress_ev->cancel_locked();
    rearm_jobs_locked();
    dispatch_locked();
}

void CsEngine::stream_jobs_changed_locked(Group& g, Stream& s) {
    lockdep_assert_held(&lock_);
    if (s.block == Block::SbWait && !sb_busy(s, s.wait_mask))
        s.block = Block::None;
    if (s.block == Block::Resource && s.jobs < kMaxJobsPerStream)
        s.block = Block::None;
    // A SUSPEND waiting for the group's jobs that cannot be preempted completes csg_suspend
    // after the last of them.
    if (g.state == GState::Suspending && g.pending_state == CSG_STATE_SUSPEND && !g.state_ev->pending_locked() &&
        suspend_drained_locked(g))
        g.state_ev->arm_locked(gpu_.config().lat.csg_suspend);
    kick_locked();
}

}  // namespace mock_hw
