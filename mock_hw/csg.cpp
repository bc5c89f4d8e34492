// CSG and CS slot interfaces of the mock firmware (cs_engine.h): the per-slot req/ack protocol,
// state transitions, events and IRQs, status reporting, suspend buffers
// (docs/hw/csf/fw-interfaces.md).
#include <algorithm>
#include <cstring>

#include "hw/csf/regs/exceptions.h"
#include "hw/csf/regs/job_regs.h"
#include "kernel_shim/trace.h"
#include "mock_hw/cs_engine.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

using namespace panthor;

CsEngine::CsEngine(Gpu& gpu) : gpu_(gpu), lock_(gpu.lock()) {
    const McuConfig& mc = gpu.config().mcu;
    nregs_ = std::min<u32>(mc.work_regs, 128);
    nsb_ = std::min<u32>(mc.scoreboards, 16);
    for (u32 i = 0; i < gpu.mcu().layout().group_num; i++) {
        auto g = std::make_unique<Group>();
        g->slot = i;
        g->cs.resize(gpu.mcu().layout().stream_num);
        for (u32 c = 0; c < g->cs.size(); c++)
            g->cs[c].csg = i, g->cs[c].idx = c;
        Group* gp = g.get();
        g->scan_ev = gpu.make_event("mock_hw CSG scan", [this, gp] { csg_scan_locked(*gp); });
        g->state_ev = gpu.make_event("mock_hw CSG state", [this, gp] { csg_state_done_locked(*gp); });
        g->progress_ev = gpu.make_event("mock_hw CSG progress", [this, gp] { progress_timer_fired_locked(*gp); });
        g->delayed_ack_ev = gpu.make_event("mock_hw CSG delayed ack", [this, gp] { delayed_ack_locked(*gp); });
        if (kshim::trace::enabled())
            g->track = kshim::trace::track(("csg" + std::to_string(i)).c_str());
        groups_.push_back(std::move(g));
    }
    run_ev_ = gpu.make_event("mock_hw CS run", [this] { run_locked(); });
    jobs_ev_ = gpu.make_event("mock_hw CS jobs", [this] { jobs_fired_locked(); });
    poll_ev_ = gpu.make_event("mock_hw CS sync poll", [this] { poll_locked(); });
}

CsEngine::~CsEngine() = default;

u64 CsEngine::csg_in(u32 slot) const {
    return gpu_.mcu().shared_va(gpu_.mcu().layout().csg_input(slot));
}
u64 CsEngine::csg_out(u32 slot) const {
    return gpu_.mcu().shared_va(gpu_.mcu().layout().csg_output(slot));
}
u64 CsEngine::cs_in(u32 slot, u32 cs) const {
    return gpu_.mcu().shared_va(gpu_.mcu().layout().cs_input(slot, cs));
}
u64 CsEngine::cs_out(u32 slot, u32 cs) const {
    return gpu_.mcu().shared_va(gpu_.mcu().layout().cs_output(slot, cs));
}

// ---- CsfEngine seam ------------------------------------------------------------------------------

void CsEngine::csg_doorbell_locked(u32 slot_mask) {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    for (auto& g : groups_)
        if ((slot_mask & (1u << g->slot)) && !g->scan_ev->pending_locked())
            g->scan_ev->arm_locked(gpu_.config().lat.csg_request);
}

void CsEngine::user_doorbell_locked(u32 doorbell) {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    // A user doorbell wakes the streams configured with it (CS config[15:8]); they re-read
    // CS_INSERT and re-evaluate a blocked SYNC_WAIT when they run.
    for (auto& g : groups_) {
        if (g->state != GState::Running)
            continue;
        for (auto& s : g->cs)
            if (s.started && ((s.cs_config >> 8) & 0xFF) == doorbell && s.block == Block::SyncWait)
                s.block = Block::None;
    }
    kick_locked();
}

void CsEngine::mcu_started_locked(bool cold) {
    lockdep_assert_held(&lock_);
    running_ = true;
    if (cold) {
        jobs_.clear();
        set_cores_busy_locked(0);
        for (auto& g : groups_) {
            g->state = GState::Off;
            std::fill(std::begin(g->running), std::end(g->running), 0u);
            g->preempted.clear();
            g->pending_state = 0xFF;
            g->idle = true;
            g->suspend_stuck = g->progress_reported = false;
            g->spin_ns = g->spin_next = 0;
            g->delayed_bits = g->dropped_bits = 0;
            for (auto& s : g->cs)
                reset_stream(*g, s);
        }
    }
    kick_locked();
}

void CsEngine::mcu_stopped_locked() {
    lockdep_assert_held(&lock_);
    running_ = false;
    run_ev_->cancel_locked();
    jobs_ev_->cancel_locked();
    poll_ev_->cancel_locked();
    // The firmware stops: in-flight work is lost. panthor suspends every group before a halt.
    jobs_.clear();
    set_cores_busy_locked(0);
    for (auto& g : groups_) {
        std::fill(std::begin(g->running), std::end(g->running), 0u);
        g->preempted.clear();
        g->scan_ev->cancel_locked();
        g->state_ev->cancel_locked();
        g->progress_ev->cancel_locked();
        g->delayed_ack_ev->cancel_locked();
        g->spin_next = 0;
        for (auto& s : g->cs)
            s.jobs = 0, memset(s.sb, 0, sizeof(s.sb));
        if (g->state == GState::Running || g->state == GState::Suspending || g->state == GState::Terminating) {
            g->state = GState::Off;
            for (auto& s : g->cs)
                s.started = false;
        }
        g->pending_state = 0xFF;
    }
}

// ---- CSG requests --------------------------------------------------------------------------------

void CsEngine::csg_scan_locked(Group& g) {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    Mcu& mcu = gpu_.mcu();
    panthor_fw_csg_input_iface in{};
    panthor_fw_csg_output_iface out{};
    if (!mcu.read_locked(csg_in(g.slot), &in, sizeof(in)).ok() ||
        !mcu.read_locked(csg_out(g.slot), &out, sizeof(out)).ok())
        return;
    g.as = CSG_CONFIG_AS(in.config);
    g.priority = (in.endpoint_req & CSG_EP_REQ_PRIORITY_MASK) >> 28;
    g.ep_limit[kEpCompute] = in.endpoint_req & 0xFF;
    g.ep_limit[kEpFragment] = (in.endpoint_req >> 8) & 0xFF;
    g.ep_exclusive[kEpCompute] = in.endpoint_req & CSG_EP_REQ_EXCL_COMPUTE;
    g.ep_exclusive[kEpFragment] = in.endpoint_req & CSG_EP_REQ_EXCL_FRAGMENT;
    g.suspend_buf = in.suspend_buf;

    const u32 db = in.doorbell_req ^ out.doorbell_ack;
    if (db) {
        mcu.write_locked(csg_out(g.slot) + offsetof(panthor_fw_csg_output_iface, doorbell_ack), &in.doorbell_req, 4);
        for (u32 c = 0; c < g.cs.size(); c++)
            if (db & (1u << c))
                cs_scan_locked(g, g.cs[c]);
    }

    const u32 pending = (in.req ^ out.ack) & (CSG_ENDPOINT_CONFIG | CSG_STATUS_UPDATE);
    g.dropped_bits &= pending | CSG_STATE_MASK;
    g.delayed_bits &= pending | CSG_STATE_MASK;
    u32 acked = 0;
    for (u32 todo = pending & ~g.dropped_bits & ~g.delayed_bits; todo; todo &= todo - 1) {
        const u32 bit = todo & -todo;
        FaultPlan& fp = gpu_.faults();
        if (fp.occurrence_locked(FaultKind::CsgAckDrop, bit, -1, static_cast<int>(g.slot))) {
            g.dropped_bits |= bit;
            continue;
        }
        if (const FaultSpec* f = fp.occurrence_locked(FaultKind::CsgAckDelay, bit, -1, static_cast<int>(g.slot))) {
            g.delayed_bits |= bit;
            g.delayed_ack_ev->arm_locked(f->delay);
            continue;
        }
        if (bit == CSG_ENDPOINT_CONFIG) {
            const u32 cores = cores_total_locked();
            u32 cur = std::min<u32>(in.endpoint_req & 0xFF, cores) |
                      (std::min<u32>((in.endpoint_req >> 8) & 0xFF, cores) << 8) |
                      (std::min<u32>((in.endpoint_req >> 16) & 0xF, 1) << 16);
            mcu.write_locked(csg_out(g.slot) + offsetof(panthor_fw_csg_output_iface, status_ep_current), &cur, 4);
            mcu.write_locked(csg_out(g.slot) + offsetof(panthor_fw_csg_output_iface, status_ep_req), &in.endpoint_req,
                             4);
        } else {
            csg_status_update_locked(g);
        }
        acked |= bit;
    }

    const u32 req_state = in.req & CSG_STATE_MASK;
    if (req_state != (out.ack & CSG_STATE_MASK) && req_state != g.pending_state && !(g.dropped_bits & CSG_STATE_MASK)) {
        if (gpu_.faults().occurrence_locked(FaultKind::CsgAckDrop, CSG_STATE_MASK, -1, static_cast<int>(g.slot))) {
            g.dropped_bits |= CSG_STATE_MASK;
        } else {
            ktime_t extra = 0;
            if (const FaultSpec* f = gpu_.faults().occurrence_locked(FaultKind::CsgAckDelay, CSG_STATE_MASK, -1,
                                                                     static_cast<int>(g.slot)))
                extra = f->delay;
            g.pending_state = req_state;
            csg_apply_state_locked(g, req_state);
            if (g.state_ev->pending_locked())
                g.state_ev->arm_locked(g.state_ev->due_locked() - kshim::ktime_get() + extra);
        }
    }
    if (acked) {
        u32 ack = 0;
        mcu.read_locked(csg_out(g.slot), &ack, 4);
        ack = (ack & ~acked) | (in.req & acked);
        mcu.write_locked(csg_out(g.slot), &ack, 4);
        if (acked & in.ack_irq_mask)
            gpu_.job_irq().raise_locked(JOB_INT_CSG_IF(g.slot));
    }
    update_idle_locked();
    kick_locked();
}

void CsEngine::delayed_ack_locked(Group& g) {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    const u32 bits = g.delayed_bits & ~CSG_STATE_MASK;
    g.delayed_bits = 0;
    if (bits & CSG_STATUS_UPDATE)
        csg_status_update_locked(g);
    panthor_fw_csg_input_iface in{};
    u32 ack = 0;
    gpu_.mcu().read_locked(csg_in(g.slot), &in, sizeof(in));
    gpu_.mcu().read_locked(csg_out(g.slot), &ack, 4);
    ack = (ack & ~bits) | (in.req & bits);
    gpu_.mcu().write_locked(csg_out(g.slot), &ack, 4);
    if (bits & in.ack_irq_mask)
        gpu_.job_irq().raise_locked(JOB_INT_CSG_IF(g.slot));
}

void CsEngine::csg_apply_state_locked(Group& g, u32 state) {
    lockdep_assert_held(&lock_);
    const GpuLatencies& lat = gpu_.config().lat;
    if (kshim::trace::enabled()) {
        static const char* names[] = {"TERMINATE", "START", "SUSPEND", "RESUME"};
        gpu_.trace_instant_locked("csg_state_req", names[state & 3]);
    }
    switch (state) {
    case CSG_STATE_START:
    case CSG_STATE_RESUME: g.state_ev->arm_locked(lat.csg_state); break;
    case CSG_STATE_SUSPEND:
        if (g.state == GState::Running) {
            g.state = GState::Suspending;
            preempt_group_jobs_locked(g);
        }
        g.suspend_stuck = gpu_.faults().occurrence_locked(FaultKind::SuspendNeverCompletes, ~0u, -1,
                                                          static_cast<int>(g.slot)) != nullptr;
        g.state_ev->arm_locked(lat.csg_suspend);
        break;
    case CSG_STATE_TERMINATE:
        drop_jobs_locked(g.slot, ~0u);
        if (g.state != GState::Off)
            g.state = GState::Terminating;
        g.state_ev->arm_locked(lat.csg_state);
        break;
    default:
        // Unknown state values are not acked (panthor then times out and resets).
        g.pending_state = 0xFF;
        break;
    }
}

void CsEngine::csg_state_done_locked(Group& g) {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    const u32 st = g.pending_state;
    Mcu& mcu = gpu_.mcu();
    switch (st) {
    case CSG_STATE_START:
        if (g.state != GState::Running) {
            g.preempted.clear();
            for (auto& s : g.cs)
                reset_stream(g, s);
            progress_made_locked(g);
            g.state = GState::Running;
            g.idle = false;
            for (auto& s : g.cs)
                cs_scan_locked(g, s);
        }
        if (kshim::trace::enabled())
            kshim::trace::begin_on(g.track, "csg_resident", "mock_hw");
        break;
    case CSG_STATE_RESUME: {
        const bool ok = restore_group_locked(g);
        g.state = GState::Running;
        g.idle = false;
        for (auto& s : g.cs)
            cs_scan_locked(g, s);
        if (!ok) {
            for (auto& s : g.cs)
                if (s.started)
                    fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CSF_FW_INTERNAL_ERROR, g.suspend_buf);
        }
        dispatch_locked();  // the jobs the suspend preempted take cores again
        if (kshim::trace::enabled())
            kshim::trace::begin_on(g.track, "csg_resident", "mock_hw");
        break;
    }
    case CSG_STATE_SUSPEND: {
        if (g.suspend_stuck)
            return;
        if (!suspend_drained_locked(g))
            return;  // re-armed when the last job it could not preempt retires
        if (g.state == GState::Suspending || g.state == GState::Running) {
            save_group_locked(g);
            if (gpu_.faults().occurrence_locked(FaultKind::CorruptSuspendBuffer, ~0u, -1, static_cast<int>(g.slot))) {
                u32 junk = 0xDEADBEEF;
                mcu.write_locked(static_cast<u32>(g.suspend_buf + offsetof(SavedStream, regs)), &junk, 4);
            }
            for (auto& s : g.cs)
                if (s.started)
                    cs_write_extract_locked(s, false);
            g.state = GState::Suspended;
            if (kshim::trace::enabled())
                kshim::trace::end_on(g.track, "csg_resident", "mock_hw");
        }
        break;
    }
    case CSG_STATE_TERMINATE:
        drop_jobs_locked(g.slot, ~0u);
        for (auto& s : g.cs) {
            if (s.started)
                cs_write_extract_locked(s, false);
            reset_stream(g, s);
        }
        if (g.state != GState::Off && g.state != GState::Suspended && kshim::trace::enabled())
            kshim::trace::end_on(g.track, "csg_resident", "mock_hw");
        g.state = GState::Off;
        g.progress_ev->cancel_locked();
        progress_made_locked(g);
        break;
    default: return;
    }
    g.pending_state = 0xFF;
    u32 reported = st;
    if (const FaultSpec* f =
            gpu_.faults().occurrence_locked(FaultKind::CsgWrongState, ~0u, -1, static_cast<int>(g.slot)))
        reported = f->wrong_state & CSG_STATE_MASK;
    u32 ack = 0, mask = 0;
    mcu.read_locked(csg_out(g.slot), &ack, 4);
    ack = (ack & ~CSG_STATE_MASK) | reported;
    mcu.write_locked(csg_out(g.slot), &ack, 4);
    mcu.read_locked(csg_in(g.slot) + offsetof(panthor_fw_csg_input_iface, ack_irq_mask), &mask, 4);
    if (mask & CSG_STATE_MASK)
        gpu_.job_irq().raise_locked(JOB_INT_CSG_IF(g.slot));
    update_idle_locked();
    kick_locked();
}

void CsEngine::reset_stream(Group& g, Stream& s) {
    const u32 c = s.idx;
    s = Stream{};
    s.csg = g.slot;
    s.idx = c;
}

void CsEngine::csg_raise_event_locked(Group& g, u32 bit) {
    lockdep_assert_held(&lock_);
    u32 ack = 0, req = 0, mask = 0;
    gpu_.mcu().read_locked(csg_out(g.slot), &ack, 4);
    gpu_.mcu().read_locked(csg_in(g.slot), &req, 4);
    // An event the host has not acknowledged yet stays signalled (toggling again would cancel it).
    if (!((ack ^ req) & bit)) {
        ack ^= bit;
        gpu_.mcu().write_locked(csg_out(g.slot), &ack, 4);
    }
    gpu_.mcu().read_locked(csg_in(g.slot) + offsetof(panthor_fw_csg_input_iface, ack_irq_mask), &mask, 4);
    if (mask & bit)
        gpu_.job_irq().raise_locked(JOB_INT_CSG_IF(g.slot));
}

// Only the streams the group runs: a stream never started (a slot beyond the group's queues) has
// no status the host reads, and publishing all of them made each tick's STATUS_UPDATE cost eight
// MCU writes where one or two are read.
void CsEngine::csg_status_update_locked(Group& g) {
    lockdep_assert_held(&lock_);
    for (auto& s : g.cs)
        if (s.started)
            cs_publish_status_locked(s);
    u32 st = g.idle ? CSG_STATUS_STATE_IS_IDLE : 0;
    gpu_.mcu().write_locked(csg_out(g.slot) + offsetof(panthor_fw_csg_output_iface, status_state), &st, 4);
}

// ---- CS requests ---------------------------------------------------------------------------------

void CsEngine::cs_scan_locked(Group& g, Stream& s) {
    lockdep_assert_held(&lock_);
    Mcu& mcu = gpu_.mcu();
    panthor_fw_cs_input_iface in{};
    u32 ack = 0;
    if (!mcu.read_locked(cs_in(g.slot, s.idx), &in, sizeof(in)).ok() ||
        !mcu.read_locked(cs_out(g.slot, s.idx), &ack, 4).ok())
        return;
    u32 copy = (in.req ^ ack) & (CS_REQ_MASK & ~CS_STATE_MASK);
    const u32 req_state = in.req & CS_STATE_MASK;
    if (req_state != (ack & CS_STATE_MASK)) {
        if (req_state == CS_STATE_START && g.state == GState::Running && !s.started)
            cs_start_locked(g, s, true);
        if (req_state == CS_STATE_STOP) {
            if (s.started)
                cs_write_extract_locked(s, false);
            drop_jobs_locked(g.slot, s.idx);
            reset_stream(g, s);
        }
        copy |= CS_STATE_MASK;
    } else if (req_state == CS_STATE_START && g.state == GState::Running && !s.started) {
        cs_start_locked(g, s, true);
    }
    s.cs_req_cfg = in.req;
    s.cs_config = in.config;
    if (copy) {
        ack = (ack & ~copy) | (in.req & copy);
        mcu.write_locked(cs_out(g.slot, s.idx), &ack, 4);
    }
    if (s.block == Block::FaultAck && !((in.req ^ ack) & CS_FAULT))
        s.block = Block::None, s.exc_va = 0;
    if (s.block == Block::Oom && !((in.req ^ ack) & CS_TILER_OOM)) {
        s.block = Block::None;
        s.oom_replied = true;
        s.oom_chunk = in.heap_start;
    }
    if (s.block == Block::SyncWait)
        s.block = Block::None;  // re-evaluated when it runs
}

void CsEngine::cs_start_locked(Group& g, Stream& s, bool fresh) {
    lockdep_assert_held(&lock_);
    panthor_fw_cs_input_iface in{};
    if (!gpu_.mcu().read_locked(cs_in(g.slot, s.idx), &in, sizeof(in)).ok())
        return;
    if (fresh)
        reset_stream(g, s);
    s.ring_base = in.ringbuf_base;
    s.ring_size = in.ringbuf_size;
    s.io_in = in.ringbuf_input;
    s.io_out = in.ringbuf_output;
    s.cs_config = in.config;
    s.cs_req_cfg = in.req;
    s.started = true;
    if (fresh) {
        u64 extract_init = 0;
        gpu_.mcu().read_locked(static_cast<u32>(s.io_in + offsetof(panthor_fw_ringbuf_input_iface, extract)),
                               &extract_init, 8);
        s.frames[0].pc = s.frames[0].end = extract_init;
    }
    refresh_insert_locked(s);
    if (s.ring_size == 0 || (s.ring_size & (s.ring_size - 1))) {
        fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_CONFIG_FAULT, s.ring_size);
        return;
    }
    cs_write_extract_locked(s, true);
}

void CsEngine::cs_raise_event_locked(Group& g, Stream& s, u32 bit) {
    lockdep_assert_held(&lock_);
    Mcu& mcu = gpu_.mcu();
    u32 ack = 0, req = 0, irq_req = 0, irq_ack = 0, mask = 0;
    mcu.read_locked(cs_out(g.slot, s.idx), &ack, 4);
    mcu.read_locked(cs_in(g.slot, s.idx), &req, 4);
    if (!((ack ^ req) & bit)) {
        ack ^= bit;
        mcu.write_locked(cs_out(g.slot, s.idx), &ack, 4);
    }
    mcu.read_locked(csg_out(g.slot) + offsetof(panthor_fw_csg_output_iface, cs_irq_req), &irq_req, 4);
    mcu.read_locked(csg_in(g.slot) + offsetof(panthor_fw_csg_input_iface, cs_irq_ack), &irq_ack, 4);
    if (!((irq_req ^ irq_ack) & (1u << s.idx))) {
        irq_req ^= 1u << s.idx;
        mcu.write_locked(csg_out(g.slot) + offsetof(panthor_fw_csg_output_iface, cs_irq_req), &irq_req, 4);
    }
    mcu.read_locked(cs_in(g.slot, s.idx) + offsetof(panthor_fw_cs_input_iface, ack_irq_mask), &mask, 4);
    if (mask & bit)
        gpu_.job_irq().raise_locked(JOB_INT_CSG_IF(g.slot));
}

void CsEngine::cs_publish_status_locked(Stream& s) {
    lockdep_assert_held(&lock_);
    panthor_fw_cs_output_iface o{};
    const Frame& f = s.frames[s.depth];
    // The program pointer: the next instruction, or the one that blocked or faulted where it stands.
    // An exception an instruction retired with names that instruction until the host acks it,
    // as hardware reports the faulting command (the stream itself resumes after it).
    o.status_cmd_ptr = s.depth == 0 ? (s.ring_size ? s.ring_base + (f.pc % s.ring_size) : s.ring_base) : f.pc;
    if (s.exc_va && (s.block == Block::FaultAck || s.block == Block::Fatal))
        o.status_cmd_ptr = s.exc_va;
    u32 wait = 0, reason = CS_STATUS_BLOCKED_REASON_UNBLOCKED;
    switch (s.block) {
    case Block::SbWait:
        wait = s.wait_mask | (s.wait_instr ? CS_STATUS_WAIT_SB_SRC_WAIT << 16 : 0);
        reason = CS_STATUS_BLOCKED_REASON_SB_WAIT;
        break;
    case Block::SyncWait:
        wait = CS_STATUS_WAIT_SYNC | (s.sync64 ? CS_STATUS_WAIT_SYNC_64B : 0) | ((s.sync_cond & 0xFu) << 24);
        reason = CS_STATUS_BLOCKED_REASON_SYNC_WAIT;
        o.status_wait_sync_ptr = s.sync_ptr;
        o.status_wait_sync_value = static_cast<u32>(s.sync_value);
        o.status_wait_sync_value_hi = static_cast<u32>(s.sync_value >> 32);
        break;
    case Block::Resource: reason = CS_STATUS_BLOCKED_REASON_RESOURCE; break;
    case Block::Mmu:
    case Block::Oom: reason = CS_STATUS_BLOCKED_REASON_DEFERRED; break;
    default: break;
    }
    o.status_wait = wait;
    o.status_blocked_reason = reason;
    o.status_req_resource = s.req_resource | (s.req_resource << 16);
    u32 sbs = 0;
    for (u32 i = 0; i < 16; i++)
        if (s.sb[i])
            sbs |= 1u << i;
    o.status_scoreboards = sbs;
    constexpr size_t lo = offsetof(panthor_fw_cs_output_iface, status_cmd_ptr);
    constexpr size_t hi = offsetof(panthor_fw_cs_output_iface, status_wait_sync_value_hi) + 4;
    gpu_.mcu().write_locked(static_cast<u32>(cs_out(s.csg, s.idx) + lo), reinterpret_cast<u8*>(&o) + lo, hi - lo);
    u32 heap[4] = {s.heap_vt_start, s.heap_vt_end, 0, s.heap_frag_end};
    gpu_.mcu().write_locked(
        static_cast<u32>(cs_out(s.csg, s.idx) + offsetof(panthor_fw_cs_output_iface, heap_vt_start)), heap,
        sizeof(heap));
}

void CsEngine::cs_write_extract_locked(Stream& s, bool active) {
    lockdep_assert_held(&lock_);
    if (!s.io_out)
        return;
    panthor_fw_ringbuf_output_iface o{};
    o.extract = s.frames[0].pc;
    o.active = active ? 1 : 0;
    gpu_.mcu().write_locked(static_cast<u32>(s.io_out), &o, 12);
}

// ---- Idle, busy, progress ------------------------------------------------------------------------

void CsEngine::update_idle_locked() {
    lockdep_assert_held(&lock_);
    bool busy = false;
    for (auto& g : groups_) {
        if (g->state != GState::Running && g->state != GState::Suspending)
            continue;
        bool idle = true;
        for (auto& s : g->cs)
            idle &= stream_idle_locked(s);
        if (g->state == GState::Suspending)
            idle = false;
        busy |= !idle;
        if (idle && g->state == GState::Running) {
            // An idle group is not stuck: its no-progress time starts again.
            progress_made_locked(*g);
            g->progress_reported = false;
        }
        if (idle == g->idle || g->state != GState::Running) {
            g->idle = idle;
            continue;
        }
        g->idle = idle;
        u32 st = idle ? CSG_STATUS_STATE_IS_IDLE : 0;
        gpu_.mcu().write_locked(csg_out(g->slot) + offsetof(panthor_fw_csg_output_iface, status_state), &st, 4);
        if (idle) {
            for (auto& s : g->cs)
                if (s.started)
                    cs_publish_status_locked(s);
            csg_raise_event_locked(*g, CSG_IDLE);
        }
    }
    gpu_.mcu().set_busy_locked(busy);
}

ktime_t CsEngine::progress_timeout_locked() const {
    lockdep_assert_held(&lock_);
    const u64 cycles = u64{gpu_.mcu().progress_timer_locked()} * 1024;  // GLB progress_timer: units of 1024 cycles
    return static_cast<ktime_t>(static_cast<unsigned __int128>(cycles) * 1'000'000'000u / gpu_.config().gpu_clock_hz);
}

void CsEngine::rearm_progress_locked(Group& g) {
    lockdep_assert_held(&lock_);
    bool running_jobs = false;
    for (auto& j : jobs_)
        running_jobs |= j.csg == g.slot && j.started && j.uses_core;
    const ktime_t timeout = progress_timeout_locked();
    if (!running_jobs || !timeout) {
        g.progress_ev->cancel_locked();
        return;
    }
    g.progress_ev->arm_locked(timeout);
}

// The second way a group makes no forward progress: its streams execute without stopping (a
// MOVE/BRANCH loop, any loop of non-blocking instructions) while no job of the group completes.
// The time counts at the modelled instruction rate, one cs_slice per whole slice; the event is
// raised at the first slice that starts with the timeout reached, so never early.
ktime_t CsEngine::progress_spin_locked(Group& g, ktime_t now) {
    lockdep_assert_held(&lock_);
    const GpuLatencies& lat = gpu_.config().lat;
    const ktime_t timeout = progress_timeout_locked();
    if (timeout && g.spin_ns >= timeout)
        progress_timer_fired_locked(g);
    const bool throttled = g.spin_ns >= lat.cs_spin_after && lat.cs_spin_slice > 0;
    const ktime_t d = throttled ? lat.cs_spin_slice : lat.cs_slice;
    g.spin_ns += d;
    g.spin_next = throttled ? now + d : 0;
    return now + d;
}

void CsEngine::progress_made_locked(Group& g) {
    lockdep_assert_held(&lock_);
    g.spin_ns = 0;
    if (g.spin_next) {
        // Its spinning streams were waiting for a throttled slice: they run at the normal rate again.
        g.spin_next = 0;
        if (running_)
            run_ev_->arm_locked(0);
    }
}

void CsEngine::progress_timer_fired_locked(Group& g) {
    lockdep_assert_held(&lock_);
    if (!running_ || g.state != GState::Running || g.progress_reported)
        return;
    g.progress_reported = true;
    // Where each stream stands (a spinning stream never blocks, so its status would be stale): the
    // host's dump of the timed-out group shows the loop.
    for (auto& s : g.cs)
        if (s.started)
            cs_publish_status_locked(s);
    gpu_.trace_instant_locked("csg_progress_timeout", "mock_hw");
    csg_raise_event_locked(g, CSG_PROGRESS_TIMER_EVENT);
}

}  // namespace mock_hw
