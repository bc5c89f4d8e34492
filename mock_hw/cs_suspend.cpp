// CSG suspend and resume in the mock firmware (cs_engine.h; record format in cs_formats.h).
//
// Real CSF firmware suspends at task boundaries rather than waiting for work to finish, and so
// does the mock: a SUSPEND takes the group's jobs off their shader cores at once (each keeps the
// time it had left; a write or access its shader had still to do stays pending), queued jobs with
// them, and acks csg_suspend later with every stream and those jobs saved in the suspend buffer.
// RESUME puts the jobs back in the queue; each runs for exactly what it had left and then
// signals its scoreboard entry as if nothing had happened. The cores go to other groups meanwhile.
//
// What cannot be preempted is waited for, as before: a cache flush (short, no task boundary to
// stop at), a job whose final memory access is stalled on an MMU fault (the transaction is in
// flight until the AS is updated), and a running "Hang" shader: a workgroup that never ends has no
// task boundary, so a SUSPEND of a group with a hung job never completes. That is the hardware
// behaviour panthor's suspend timeout -> TERMINATE -> reset path exists for.
#include <algorithm>
#include <cstring>

#include "kernel_shim/trace.h"
#include "mock_hw/cs_engine.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

using namespace panthor;

void CsEngine::preempt_group_jobs_locked(Group& g) {
    lockdep_assert_held(&lock_);
    const ktime_t now = kshim::ktime_get();
    for (size_t i = 0; i < jobs_.size();) {
        Job& j = jobs_[i];
        const bool preemptible =
            j.csg == g.slot && j.uses_core && !j.stalled && !(j.started && j.shader.kind == MockShader::Hang);
        if (!preemptible) {
            i++;
            continue;
        }
        if (j.started) {
            j.shader.duration_ns = static_cast<u64>(std::max<ktime_t>(j.end - now, 0));
            release_core_locked(j);
            j.started = false;
        }
        g.preempted.push_back(j);
        jobs_.erase(jobs_.begin() + static_cast<long>(i));
    }
    if (!g.running[kEpCompute] && !g.running[kEpFragment])
        g.progress_ev->cancel_locked();
    rearm_jobs_locked();
    dispatch_locked();  // the freed cores go to other groups
}

bool CsEngine::suspend_drained_locked(const Group& g) const {
    lockdep_assert_held(&lock_);
    return std::none_of(jobs_.begin(), jobs_.end(), [&](const Job& j) { return j.csg == g.slot; });
}

void CsEngine::save_group_locked(Group& g) {
    lockdep_assert_held(&lock_);
    SavedStream& sv = saved_scratch_;  // only the part a suspend writes is filled in
    for (auto& s : g.cs) {
        // The header is zeroed (no stale bytes between fields), then filled in; the registers are
        // copied whole.
        memset(static_cast<void*>(&sv), 0, offsetof(SavedStream, regs));
        sv.njobs = 0;
        // A group rotated off its slot keeps its no-progress time, so a spinning group that the
        // host keeps suspending and resuming still times out.
        sv.spin_us = static_cast<u32>(std::min<ktime_t>(g.spin_ns / kshim::NSEC_PER_USEC, UINT32_MAX));
        sv.exc_va = s.exc_va;
        sv.magic = kSaveMagic;
        sv.version = kSaveVersion;
        sv.flags = (s.started ? kSavedStarted : 0) | (s.in_error ? kSavedInError : 0) | (s.sync64 ? kSavedSync64 : 0) |
                   (s.wait_instr ? kSavedWaitInstr : 0) | (s.reexec ? kSavedReexec : 0);
        sv.depth = s.depth;
        for (u32 i = 0; i < cs::kCallStackDepth; i++) {
            sv.frames[2 * i] = s.frames[i].pc;
            sv.frames[2 * i + 1] = s.frames[i].end;
        }
        memcpy(sv.sb, s.sb, sizeof(sv.sb));
        sv.sb_endpoint = s.sb_endpoint;
        sv.sb_other = s.sb_other;
        sv.sync_cond = s.sync_cond;
        sv.block = static_cast<u8>(s.block);
        sv.last_error = s.last_error;
        sv.sync_ptr = s.sync_ptr;
        sv.sync_value = s.sync_value;
        sv.heap_ctx = s.heap_ctx;
        sv.vt_start = s.heap_vt_start;
        sv.vt_end = s.heap_vt_end;
        sv.frag_end = s.heap_frag_end;
        sv.req_resource = s.req_resource;
        sv.progress = s.progress;
        sv.exc_addr = s.exc_handler_addr;
        sv.exc_len = s.exc_handler_len;
        sv.exc_type = s.exc_handler_type;
        sv.oom_heap = s.oom_heap;
        memcpy(sv.regs, s.regs, sizeof(sv.regs));
        // g.preempted is in issue order; a stream never has more than kMaxJobsPerStream jobs.
        for (const Job& j : g.preempted) {
            if (j.cs != s.idx || sv.njobs >= kMaxJobsPerStream)
                continue;
            SavedJob& sj = sv.jobs[sv.njobs++];
            sj = SavedJob{};
            sj.shader = j.shader;
            sj.seq = j.seq;
            sj.sb_slot = j.slot;
            sj.endpoint = j.ep;
        }
        sv.checksum = saved_stream_checksum(sv);
        const u32 rec = static_cast<u32>(g.suspend_buf + u64{s.idx} * kSaveStride);
        gpu_.mcu().write_locked(rec, &sv, saved_stream_size(sv.njobs));
        gpu_.mcu().write_locked(rec + offsetof(SavedStream, checksum), &sv.checksum, sizeof(sv.checksum));
    }
    // The suspend buffer holds them now; only a RESUME from it brings them back.
    g.preempted.clear();
}

// Reads what a suspend wrote: the fixed part, then the job entries it claims (a count past the
// limit fails the checks without reading them), then the checksum.
bool CsEngine::read_saved_stream_locked(u32 rec, SavedStream& sv) {
    lockdep_assert_held(&lock_);
    Mcu& mcu = gpu_.mcu();
    if (!mcu.read_locked(rec, &sv, kSavedFixedSize).ok())
        return false;
    if (sv.njobs > kMaxJobsPerStream)
        return true;
    return mcu.read_locked(rec + kSavedFixedSize, sv.jobs, sv.njobs * sizeof(SavedJob)).ok() &&
           mcu.read_locked(rec + offsetof(SavedStream, checksum), &sv.checksum, sizeof(sv.checksum)).ok();
}

bool CsEngine::restore_group_locked(Group& g) {
    lockdep_assert_held(&lock_);
    bool ok = true;
    std::vector<Job> jobs;
    SavedStream& sv = saved_scratch_;  // each read fills what its checks look at
    g.spin_ns = g.spin_next = 0;
    for (auto& s : g.cs) {
        reset_stream(g, s);
        if (!read_saved_stream_locked(static_cast<u32>(g.suspend_buf + u64{s.idx} * kSaveStride), sv) ||
            !restore_stream_locked(g, s, sv, jobs))
            ok = false;
    }
    if (!ok) {
        // Nothing of a record that failed its checks is trusted, and the group's other streams
        // are reported broken too: drop every job and scoreboard count the records carried.
        for (auto& s : g.cs)
            s.jobs = 0, std::fill(std::begin(s.sb), std::end(s.sb), 0u);
        return false;
    }
    std::sort(jobs.begin(), jobs.end(), [](const Job& a, const Job& b) { return a.seq < b.seq; });
    for (Job& j : jobs) {
        j.seq = job_seq_++;
        j.prio = g.priority;
        jobs_.push_back(j);  // queued; dispatched once the group runs again
    }
    return true;
}

bool CsEngine::restore_stream_locked(Group& g, Stream& s, const SavedStream& sv, std::vector<Job>& jobs) {
    lockdep_assert_held(&lock_);
    if (sv.magic != kSaveMagic || sv.version != kSaveVersion || sv.checksum != saved_stream_checksum(sv) ||
        sv.depth >= cs::kCallStackDepth || sv.njobs > kMaxJobsPerStream)
        return false;
    // Each scoreboard entry must count exactly the saved jobs that signal it, else the stream
    // would wait on an entry nothing releases (or release one twice).
    u32 per_slot[16] = {};
    for (u32 i = 0; i < sv.njobs; i++) {
        const SavedJob& sj = sv.jobs[i];
        if (sj.shader.magic != MockShader::kMagic || sj.shader.kind > MockShader::kLastKind ||
            (sj.shader.flags & ~u32{MockShader::kFromDescriptors}) || sj.sb_slot >= nsb_ || sj.endpoint >= kEpKinds)
            return false;
        per_slot[sj.sb_slot]++;
    }
    if (memcmp(per_slot, sv.sb, sizeof(per_slot)) != 0)
        return false;
    if (!(sv.flags & kSavedStarted))
        return sv.njobs == 0;
    cs_start_locked(g, s, false);
    s.in_error = sv.flags & kSavedInError;
    s.sync64 = sv.flags & kSavedSync64;
    s.wait_instr = sv.flags & kSavedWaitInstr;
    s.reexec = sv.flags & kSavedReexec;
    s.depth = sv.depth;
    for (u32 i = 0; i < cs::kCallStackDepth; i++) {
        s.frames[i].pc = sv.frames[2 * i];
        if (i)
            s.frames[i].end = sv.frames[2 * i + 1];
    }
    refresh_insert_locked(s);
    memcpy(s.sb, sv.sb, sizeof(s.sb));
    s.sb_endpoint = sv.sb_endpoint;
    s.sb_other = sv.sb_other;
    s.sync_cond = sv.sync_cond;
    // A wait or stall is re-evaluated by re-executing its instruction; a pending fault ack, OOM
    // reply or fatal error stays pending.
    const Block b = static_cast<Block>(sv.block);
    s.block = (b == Block::FaultAck || b == Block::Oom || b == Block::Fatal) ? b : Block::None;
    s.last_error = sv.last_error;
    s.sync_ptr = sv.sync_ptr;
    s.sync_value = sv.sync_value;
    s.heap_ctx = sv.heap_ctx;
    s.heap_vt_start = sv.vt_start;
    s.heap_vt_end = sv.vt_end;
    s.heap_frag_end = sv.frag_end;
    s.req_resource = sv.req_resource;
    s.progress = sv.progress;
    s.exc_handler_addr = sv.exc_addr;
    s.exc_handler_len = sv.exc_len;
    s.exc_handler_type = static_cast<u8>(sv.exc_type);
    s.oom_heap = sv.oom_heap;
    s.exc_va = (s.block == Block::FaultAck || s.block == Block::Fatal) ? sv.exc_va : 0;
    g.spin_ns = std::max<ktime_t>(g.spin_ns, static_cast<ktime_t>(sv.spin_us) * kshim::NSEC_PER_USEC);
    memcpy(s.regs, sv.regs, sizeof(s.regs));
    for (u32 i = 0; i < sv.njobs; i++) {
        const SavedJob& sj = sv.jobs[i];
        Job j{};
        j.csg = g.slot;
        j.cs = s.idx;
        j.slot = sj.sb_slot;
        j.uses_core = true;
        j.ep = sj.endpoint;
        j.shader = sj.shader;
        j.seq = sj.seq;
        jobs.push_back(j);
    }
    s.jobs = sv.njobs;
    cs_write_extract_locked(s, true);
    return true;
}

}  // namespace mock_hw
