// JOB_CONTROL of the mock Mali-G52: registers, commands, NEXT promotion and the job interrupt (see
// job_control.h). The chains themselves run in job_chain.cpp.
#include "mock_jm/job_control.h"

#include <string>

#include "hw/jm/regs/exceptions.h"
#include "hw/jm/regs/job_regs.h"
#include "kernel_shim/trace.h"
#include "mock_hw/fault_plan.h"
#include "mock_jm/jm_gpu.h"
#include "mock_jm/job_slot.h"

namespace mock_jm {

using namespace panfrost;
using mock_hw::FaultKind;
using mock_hw::RegDecl;

JobControl::JobControl(JmGpu& gpu, kshim::IrqLine& line)
    : gpu_(gpu), lock_(gpu.lock()), irq_(bank_, JOB_INT_RAWSTAT, line, gpu.lock(), "JOB_INT", false) {
    bank_.add(JOB_INT_JS_STATE, RegDecl{.name = "JOB_INT_JS_STATE", .on_read = [this] { return js_state_locked(); }});
    bank_.add(JOB_INT_THROTTLE, RegDecl{.name = "JOB_INT_THROTTLE", .writable = ~0u});
    const u32 present = gpu.jm_config().js_present;
    for (u32 n = 0; n < MAX_JOB_SLOTS; n++) {
        if (!(present & (1u << n)))
            break;  // slots are numbered densely from 0
        auto s = std::make_unique<Slot>();
        Slot* sp = s.get();
        s->n = n;
        s->step_ev = gpu.make_event("mock_jm job slot", [this, sp] { step_locked(*sp); });
        if (kshim::trace::enabled())
            s->track = kshim::trace::track("JS" + std::to_string(n));
        // The current set reads what the running chain latched.
        bank_.add(JS_HEAD_LO(n), RegDecl{.name = "JS_HEAD_LO", .on_read = [sp] { return static_cast<u32>(sp->head); }});
        bank_.add(JS_HEAD_HI(n),
                  RegDecl{.name = "JS_HEAD_HI", .on_read = [sp] { return static_cast<u32>(sp->head >> 32); }});
        bank_.add64(JS_TAIL_LO(n), "JS_TAIL");
        bank_.add(JS_AFFINITY_LO(n),
                  RegDecl{.name = "JS_AFFINITY_LO", .on_read = [sp] { return static_cast<u32>(sp->affinity); }});
        bank_.add(JS_AFFINITY_HI(n),
                  RegDecl{.name = "JS_AFFINITY_HI", .on_read = [sp] { return static_cast<u32>(sp->affinity >> 32); }});
        bank_.add(JS_CONFIG(n), RegDecl{.name = "JS_CONFIG", .on_read = [sp] { return sp->config; }});
        bank_.add(JS_XAFFINITY(n), RegDecl{.name = "JS_XAFFINITY", .on_read = [sp] { return sp->xaffinity; }});
        bank_.add(JS_COMMAND(n), RegDecl{.name = "JS_COMMAND", .write_only = true, .on_write = [this, sp](u32 v) {
                                             command_locked(*sp, v);
                                         }});
        bank_.add(JS_STATUS(n), RegDecl{.name = "JS_STATUS"});
        // The NEXT set is plain storage; a NOP keeps it, so software can re-arm with START alone.
        bank_.add64(JS_HEAD_NEXT_LO(n), "JS_HEAD_NEXT", 0, ~0ull);
        bank_.add64(JS_AFFINITY_NEXT_LO(n), "JS_AFFINITY_NEXT", 0, ~0ull);
        bank_.add(JS_CONFIG_NEXT(n), RegDecl{.name = "JS_CONFIG_NEXT", .writable = ~0u});
        bank_.add(JS_XAFFINITY_NEXT(n), RegDecl{.name = "JS_XAFFINITY_NEXT", .writable = ~0u});
        bank_.add(JS_COMMAND_NEXT(n), RegDecl{.name = "JS_COMMAND_NEXT",
                                              .on_read = [sp] { return sp->armed ? JS_COMMAND_START : 0u; },
                                              .on_write = [this, sp](u32 v) { command_next_locked(*sp, v); }});
        bank_.add(JS_FLUSH_ID_NEXT(n), RegDecl{.name = "JS_FLUSH_ID_NEXT", .writable = ~0u});
        slots_.push_back(std::move(s));
    }
    // A FAIL bit cleared lets that slot promote its NEXT set again.
    irq_.set_clear_hook([this](u32 v) { fail_cleared_locked(v); });
}

JobControl::~JobControl() = default;

const SlotStats& JobControl::stats_locked(u32 js) const {
    lockdep_assert_held(&lock_);
    return slots_.at(js)->stats;
}

// Live rather than the kbase-style snapshot taken at the last CLEAR: panfrost reads it right after
// clearing, where the two agree (docs/mock_jm.md, "JS_STATE").
u32 JobControl::js_state_locked() const {
    lockdep_assert_held(&lock_);
    u32 v = 0;
    for (const auto& s : slots_) {
        if (s->active)
            v |= 1u << s->n;
        if (s->armed)
            v |= 1u << (16 + s->n);
    }
    return v;
}

void JobControl::fail_cleared_locked(u32 bits) {
    lockdep_assert_held(&lock_);
    for (auto& s : slots_) {
        if (!(bits & JOB_INT_MASK_ERR(s->n)) || !s->fail_pending)
            continue;
        s->fail_pending = false;
        try_promote_locked(*s);
    }
}

void JobControl::command_next_locked(Slot& s, u32 cmd) {
    lockdep_assert_held(&lock_);
    switch (cmd) {
    case JS_COMMAND_NOP: s.armed = false; break;
    case JS_COMMAND_START:
        s.armed = true;
        try_promote_locked(s);
        break;
    default:
        gpu_.log_once_locked(0x40000 | s.n, "JS%u: JS_COMMAND_NEXT %#x is neither NOP nor START (ignored)", s.n, cmd);
        break;
    }
}

void JobControl::command_locked(Slot& s, u32 cmd) {
    lockdep_assert_held(&lock_);
    if (cmd == JS_COMMAND_NOP)
        return;
    if (!JS_COMMAND_IS_STOP(cmd)) {
        gpu_.log_once_locked(0x41000 | s.n, "JS%u: JS_COMMAND %#x is not a stop command (ignored)", s.n, cmd);
        return;
    }
    // Stops act on the current chain only, and the _0/_1 forms only on a chain whose flag matches.
    if (!s.active)
        return;
    if (JS_COMMAND_IS_CONDITIONAL(cmd) && JS_CONFIG_CHAIN_FLAG(s.config) != JS_COMMAND_REQUIRED_FLAG(cmd))
        return;
    gpu_.trace_instant_locked(JS_COMMAND_IS_HARD_STOP(cmd) ? "js_hard_stop" : "js_soft_stop", "JS");
    if (JS_COMMAND_IS_HARD_STOP(cmd)) {
        s.hard_stop = true;
        s.step_ev->arm_locked(gpu_.jm_config().jm_lat.hard_stop);
        return;
    }
    if (gpu_.faults().occurrence_locked(FaultKind::SoftStopIgnored, ~0u, -1, -1, -1, static_cast<int>(s.n)))
        return;
    s.soft_stop = true;
    // Between jobs the boundary is now; a job in progress (or stalled, or hung) reaches it only
    // when it completes.
    if (!s.in_job && !s.stalled && !s.hung && !s.finishing)
        s.step_ev->arm_locked(gpu_.jm_config().jm_lat.hard_stop);
}

void JobControl::try_promote_locked(Slot& s) {
    lockdep_assert_held(&lock_);
    if (!s.armed || s.active || s.fail_pending || gpu_.control().reset_pending_locked())
        return;
    s.armed = false;
    s.head = bank_.get64(JS_HEAD_NEXT_LO(s.n));
    s.affinity = bank_.get64(JS_AFFINITY_NEXT_LO(s.n));
    s.config = bank_.get(JS_CONFIG_NEXT(s.n));
    s.xaffinity = bank_.get(JS_XAFFINITY_NEXT(s.n));
    s.flush_id = bank_.get(JS_FLUSH_ID_NEXT(s.n));
    s.as = JS_CONFIG_AS(s.config);
    start_chain_locked(s);
}

void JobControl::start_chain_locked(Slot& s) {
    lockdep_assert_held(&lock_);
    s.active = true;
    s.stalled = s.hung = s.waiting_dep = s.in_job = s.finishing = false;
    s.soft_stop = s.hard_stop = false;
    s.chain_start = kshim::ktime_get();
    if (s.resume_tail == 0 || s.head != s.resume_tail) {
        if (++s.gen == 0)
            s.gen = 1;
    }
    s.resume_tail = 0;
    s.stats.chains_started++;
    bank_.set(JS_STATUS(s.n), DRM_PANFROST_EXCEPTION_ACTIVE);
    // The start flush: skipped when flush reduction is on and a flush already happened since the
    // flush ID software read at submit time.
    if (JS_CONFIG_START_FLUSH(s.config) == (JS_CONFIG_START_FLUSH_CLEAN_INVALIDATE >> JS_CONFIG_START_FLUSH_SHIFT)) {
        if ((s.config & JS_CONFIG_ENABLE_FLUSH_REDUCTION) && s.flush_id != gpu_.control().latest_flush_id_locked()) {
            s.stats.start_flushes_skipped++;
        } else {
            s.stats.start_flushes++;
            gpu_.control().advance_flush_id_locked();
        }
    }
    if (kshim::trace::enabled())
        kshim::trace::begin_on(s.track, "chain", "mock_jm");
    s.step_ev->arm_locked(0);
}

void JobControl::end_chain_locked(Slot& s, u8 status, u64 tail) {
    lockdep_assert_held(&lock_);
    const bool done = status == DRM_PANFROST_EXCEPTION_DONE;
    s.active = false;
    s.in_job = s.stalled = s.hung = s.waiting_dep = s.finishing = false;
    s.soft_stop = s.hard_stop = false;
    s.step_ev->cancel_locked();
    bank_.set(JS_STATUS(s.n), status);
    bank_.set64(JS_TAIL_LO(s.n), tail);
    s.resume_tail = status == DRM_PANFROST_EXCEPTION_STOPPED ? tail : 0;
    if (done) {
        s.stats.chains_done++;
        if (JS_CONFIG_END_FLUSH(s.config) == (JS_CONFIG_END_FLUSH_CLEAN_INVALIDATE >> JS_CONFIG_END_FLUSH_SHIFT))
            gpu_.control().advance_flush_id_locked();
    } else {
        s.stats.chains_failed++;
        s.fail_pending = true;
    }
    if (kshim::trace::enabled()) {
        kshim::trace::end_on(s.track, "chain", "mock_jm");
        kshim::trace::instant(
            done ? "js_done" : "js_fail", "mock_jm",
            "{\"js\":" + std::to_string(s.n) + ",\"status\":\"" + std::string(exception_name(status)) + "\"}");
    }
    if (gpu_.faults().occurrence_locked(FaultKind::JobIrqLost, ~0u, -1, -1, -1, static_cast<int>(s.n))) {
        // The interrupt is lost, and with it the hold on NEXT a FAIL would put.
        s.fail_pending = false;
    } else {
        irq_.raise_locked(done ? JOB_INT_MASK_DONE(s.n) : JOB_INT_MASK_ERR(s.n));
    }
    // A successful chain hands over to an armed NEXT at once; a failed one holds it (above).
    try_promote_locked(s);
}

void JobControl::as_command_locked(u32 as, u32 cmd) {
    lockdep_assert_held(&lock_);
    (void)cmd;
    for (auto& s : slots_) {
        if (s->active && s->stalled && s->as == as) {
            s->stalled = false;
            s->step_ev->arm_locked(0);
        }
    }
}

void JobControl::abort_all_locked() {
    lockdep_assert_held(&lock_);
    for (auto& s : slots_) {
        if (s->active && kshim::trace::enabled())
            kshim::trace::end_on(s->track, "chain", "mock_jm");
        s->step_ev->cancel_locked();
        s->active = s->armed = s->fail_pending = false;
        s->in_job = s->stalled = s->hung = s->waiting_dep = s->finishing = false;
        s->soft_stop = s->hard_stop = false;
        s->resume_tail = 0;
    }
}

void JobControl::reset_locked() {
    lockdep_assert_held(&lock_);
    abort_all_locked();
    for (auto& s : slots_) {
        s->head = s->affinity = 0;
        s->config = s->xaffinity = s->flush_id = s->as = 0;
    }
    bank_.reset();
    irq_.resync_locked();
}

}  // namespace mock_jm
