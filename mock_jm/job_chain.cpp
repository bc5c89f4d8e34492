// The job slots' execution (see job_control.h): walking a chain in GPU memory through the slot's
// address space, one job at a time in list order, executing NULL/WRITE_VALUE/CACHE_FLUSH jobs and
// timing the jobs that would run shaders. Why list order: Mesa makes every dependency point at an
// earlier job of the chain, so running the list in order honours each dependency and barrier; a
// dependency on an index no earlier job had can never be met, and the slot waits (as the hardware
// scoreboard would) until a stop or a reset. Modelled time: docs/mock_jm.md, "Job times".
#include <algorithm>
#include <cstring>
#include <string>

#include "hw/jm/regs/exceptions.h"
#include "hw/jm/regs/gpu_regs.h"
#include "hw/jm/regs/job_regs.h"
#include "kernel_shim/trace.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/power.h"
#include "mock_jm/jm_gpu.h"
#include "mock_jm/job_control.h"
#include "mock_jm/job_slot.h"

namespace mock_jm {

using namespace panfrost;
using namespace panfrost::desc;
using mock_hw::Access;
using mock_hw::FaultKind;
using mock_hw::FaultSpec;
using mock_hw::MemResult;

namespace {

// Requester id latched in AS_FAULTSTATUS[31:16] for a job slot's accesses.
constexpr u32 kSourceJobSlot = 0x3;

const char* job_type_name(u32 type) {
    static const char* const names[kJobTypeCount] = {"NOT_STARTED", "NULL",     "WRITE_VALUE",    "CACHE_FLUSH",
                                                     "COMPUTE",     "VERTEX",   "GEOMETRY",       "TILER",
                                                     "FUSED",       "FRAGMENT", "INDEXED_VERTEX", "MALLOC_VERTEX"};
    return type < kJobTypeCount ? names[type] : "UNKNOWN";
}

bool is_shader_job(u32 type) {
    return type >= kJobCompute && type < kJobTypeCount;
}

}  // namespace

bool JobControl::read_locked(Slot& s, u64 va, void* dst, size_t len, MemResult& r) {
    r = gpu_.mmu().read_locked(s.as, va, dst, len, Access::Read, kSourceJobSlot);
    return r.ok();
}

bool JobControl::write_locked(Slot& s, u64 va, const void* src, size_t len, MemResult& r) {
    r = gpu_.mmu().write_locked(s.as, va, src, len, kSourceJobSlot);
    return r.ok();
}

void JobControl::step_locked(Slot& s) {
    lockdep_assert_held(&lock_);
    if (!s.active)
        return;
    const JmLatencies& lat = gpu_.jm_config().jm_lat;
    if (s.hard_stop) {
        end_chain_locked(s, DRM_PANFROST_EXCEPTION_TERMINATED, s.head);
        return;
    }
    if (s.finishing) {
        end_chain_locked(s, DRM_PANFROST_EXCEPTION_DONE, s.finish_tail);
        return;
    }
    ktime_t spent = 0;
    if (s.in_job && finish_job_locked(s, spent) != Outcome::Continue)
        return;
    for (;;) {
        if (s.soft_stop) {
            end_chain_locked(s, DRM_PANFROST_EXCEPTION_STOPPED, s.head);
            return;
        }
        if (run_job_locked(s, spent) != Outcome::Continue)
            return;
        if (spent >= lat.slice)
            break;
    }
    // The slice is used up: the host gets the CPU back, the chain goes on when its modelled time
    // is up. A chain that has run for long (an endless loop) is throttled.
    ktime_t delay = spent;
    if (kshim::ktime_get() - s.chain_start >= lat.throttle_after)
        delay = std::max(delay, lat.throttle_slice);
    s.step_ev->arm_locked(delay);
}

JobControl::Outcome JobControl::run_job_locked(Slot& s, ktime_t& spent) {
    lockdep_assert_held(&lock_);
    const JmConfig& jc = gpu_.jm_config();
    MemResult r;
    if (!read_locked(s, s.head, &s.hdr, sizeof(s.hdr), r))
        return access_failed_locked(s, r);
    // A job whose header records an outcome already was not reset by software (panvk zeroes the
    // first 16 bytes before re-submitting); the hardware refuses to run it again.
    if (s.hdr.exception_status != 0)
        return fail_job_locked(s, DRM_PANFROST_EXCEPTION_DATA_INVALID_FAULT, true);
    const u32 type = job_type(s.hdr.control);
    for (u32 dep : {u32{s.hdr.dependency_1}, u32{s.hdr.dependency_2}}) {
        if (dep && !s.index_done(dep)) {
            s.waiting_dep = true;
            gpu_.log_once_locked(0x42000 | s.n, "JS%u: job %#llx depends on index %u, which no earlier job had", s.n,
                                 static_cast<unsigned long long>(s.head), dep);
            return Outcome::Wait;
        }
    }
    if (kshim::trace::enabled())
        kshim::trace::begin_on(s.track, job_type_name(type), "mock_jm");
    s.in_job = true;

    const bool retry = s.started && s.started_gen == s.gen && s.started_job == s.head;
    if (!retry) {
        s.started = true;
        s.started_gen = s.gen;
        s.started_job = s.head;
        s.probe = false;
        mock_hw::FaultPlan& fp = gpu_.faults();
        const int js = static_cast<int>(s.n);
        if (fp.occurrence_locked(FaultKind::JobHang, ~0u, -1, -1, -1, js)) {
            s.hung = true;
            return Outcome::Wait;
        }
        if (const FaultSpec* f = fp.occurrence_locked(FaultKind::JobFault, ~0u, -1, -1, -1, js))
            return fail_job_locked(s, static_cast<u8>(f->exception), true);
        if (const FaultSpec* f = fp.occurrence_locked(FaultKind::JobBusFault, ~0u, -1, -1, -1, js)) {
            gpu_.raise_gpu_fault_locked(DRM_PANFROST_EXCEPTION_DELAYED_BUS_FAULT, f->fault_addr);
            return fail_job_locked(s, DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT, false);
        }
        if (const FaultSpec* f = fp.occurrence_locked(FaultKind::MmuFaultAt, ~0u, -1, -1, -1, js)) {
            s.probe = true;
            s.probe_va = f->fault_addr;
        }
    }
    if (s.probe) {
        u32 probe;
        if (!read_locked(s, s.probe_va, &probe, sizeof(probe), r))
            return access_failed_locked(s, r);
    }

    if (type == kJobNotStarted || !job_type_exists(type, jc.arch))
        return fail_job_locked(s, DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT, true);
    switch (type) {
    case kJobNull: spent += jc.jm_lat.simple_job; break;
    case kJobCacheFlush: {
        CacheFlushPayload p;
        if (!read_locked(s, s.head + kJobPayloadOffset, &p, sizeof(p), r))
            return access_failed_locked(s, r);
        // No cache is modelled; an L2 clean+invalidate still advances LATEST_FLUSH_ID.
        if ((p.word1 & (kFlushL2Clean | kFlushL2Invalidate)) == (kFlushL2Clean | kFlushL2Invalidate))
            gpu_.control().advance_flush_id_locked();
        spent += jc.jm_lat.simple_job;
        break;
    }
    case kJobWriteValue: {
        WriteValuePayload p{};
        // v5 has no immediate field.
        const size_t len = jc.arch >= 6 ? sizeof(p) : offsetof(WriteValuePayload, immediate);
        if (!read_locked(s, s.head + kJobPayloadOffset, &p, len, r))
            return access_failed_locked(s, r);
        const u32 width = write_value_width(p.type);
        const bool immediate = p.type >= kWriteValueImmediate8;
        if (width == 0 || (immediate && jc.arch < 6))
            return fail_job_locked(s, DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT, true);
        u64 value = 0;
        switch (p.type) {
        case kWriteValueCycleCounter: value = gpu_.control().cycle_count_locked(); break;
        case kWriteValueSystemTimestamp: value = gpu_.control().timestamp_locked(); break;
        case kWriteValueZero: value = 0; break;
        default: value = p.immediate; break;
        }
        // Little-endian: the low `width` bytes of the value.
        if (!write_locked(s, p.address, &value, width, r))
            return access_failed_locked(s, r);
        spent += jc.jm_lat.simple_job;
        break;
    }
    default: {
        if (!is_shader_job(type) || jc.shader_jobs == ShaderJobPolicy::ConfigFault)
            return fail_job_locked(s, DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT, true);
        ktime_t t = 0;
        if (!shader_job_time_locked(s, type, &t, r))
            return access_failed_locked(s, r);
        // The job holds the slot for its modelled time; finish_job completes it then.
        s.step_ev->arm_locked(spent + t);
        return Outcome::Wait;
    }
    }
    return finish_job_locked(s, spent);
}

bool JobControl::shader_job_time_locked(Slot& s, u32 type, ktime_t* t, MemResult& r) {
    lockdep_assert_held(&lock_);
    const JmConfig& jc = gpu_.jm_config();
    const JmLatencies& lat = jc.jm_lat;
    ktime_t d = lat.shader_job_base;
    if (type == kJobFragment) {
        FragmentPayload f;
        if (!read_locked(s, s.head + kJobPayloadOffset, &f, sizeof(f), r))
            return false;
        d += static_cast<ktime_t>(fragment_tile_count(f)) * lat.tile;
    } else if (jc.arch <= 7) {
        // Compute, vertex, geometry, tiler, fused and IDVS jobs of v5-v7 start with the invocation.
        Invocation inv;
        if (!read_locked(s, s.head + kInvocationOffset, &inv, sizeof(inv), r))
            return false;
        const u64 n = invocation_total(inv);
        d += static_cast<ktime_t>(n * 1000 / std::max<u64>(lat.invocations_per_us, 1));
    }
    *t = std::min(d, lat.shader_job_max);
    return true;
}

JobControl::Outcome JobControl::finish_job_locked(Slot& s, ktime_t& spent) {
    lockdep_assert_held(&lock_);
    s.in_job = false;
    const u32 type = job_type(s.hdr.control);
    if (!(s.config & JS_CONFIG_DISABLE_DESCRIPTOR_WR_BK)) {
        const u32 done = kJobStatusDone;
        MemResult r;
        if (!write_locked(s, s.head, &done, sizeof(done), r))
            return access_failed_locked(s, r);
    }
    s.started = s.probe = false;
    if (kshim::trace::enabled())
        kshim::trace::end_on(s.track, job_type_name(type), "mock_jm");
    if (const u32 idx = job_index(s.hdr.control))
        s.mark_done(idx);
    s.stats.jobs_completed++;
    s.stats.jobs_by_type[type]++;
    const u64 next = job_next(s.hdr, gpu_.jm_config().arch >= 9);
    if (next == 0) {
        if (spent > 0) {
            // The last job's results are in memory; the interrupt comes when its time is up.
            s.finishing = true;
            s.finish_tail = s.head;
            s.step_ev->arm_locked(spent);
            return Outcome::Wait;
        }
        end_chain_locked(s, DRM_PANFROST_EXCEPTION_DONE, s.head);
        return Outcome::Ended;
    }
    s.head = next;
    return Outcome::Continue;
}

JobControl::Outcome JobControl::access_failed_locked(Slot& s, const MemResult& r) {
    lockdep_assert_held(&lock_);
    switch (r.status) {
    case MemResult::Status::Ok: break;
    case MemResult::Status::Fault:
    case MemResult::Status::Stalled:
        // The MMU holds the access: the job starts over when an AS command follows the handled
        // fault (as_command_locked). A job's effects are idempotent up to its write-back.
        if (s.in_job && kshim::trace::enabled())
            kshim::trace::end_on(s.track, job_type_name(job_type(s.hdr.control)), "mock_jm");
        s.in_job = false;
        s.stalled = true;
        return Outcome::Wait;
    case MemResult::Status::Unmapped: return fail_job_locked(s, gpu_.jm_config().disabled_as_status, false);
    case MemResult::Status::BusFault: return fail_job_locked(s, DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT, false);
    }
    return Outcome::Wait;
}

JobControl::Outcome JobControl::fail_job_locked(Slot& s, u8 exception, bool write_back) {
    lockdep_assert_held(&lock_);
    if (s.in_job && kshim::trace::enabled())
        kshim::trace::end_on(s.track, job_type_name(job_type(s.hdr.control)), "mock_jm");
    s.in_job = false;
    // A job that fails on its own (not through the MMU) records the exception in its header.
    if (write_back && !(s.config & JS_CONFIG_DISABLE_DESCRIPTOR_WR_BK)) {
        const u32 status = exception;
        MemResult r;
        write_locked(s, s.head, &status, sizeof(status), r);
    }
    end_chain_locked(s, exception, s.head);
    return Outcome::Ended;
}

}  // namespace mock_jm
