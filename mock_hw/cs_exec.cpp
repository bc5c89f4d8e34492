// The command-stream interpreter of the mock firmware (cs_engine.h): fetch from the ring buffer
// and called buffers, every v10 opcode (docs/hw/csf/cs-isa.md), scoreboards, sync objects, RUN_*
// issue, CS_FAULT/CS_FATAL, MMU faults, and the FaultPlan's instruction-counted injections. The
// jobs a RUN_* queues live in cs_jobs.cpp, the tiler heap in cs_heap.cpp.
#include <algorithm>
#include <cstring>

#include "hw/csf/regs/exceptions.h"
#include "mock_hw/cs_engine.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

using namespace panthor;
using cs::Instr;

u32 CsEngine::cores_total_locked() const {
    lockdep_assert_held(&lock_);
    u64 mask = gpu_.config().id.shader_present;
    const u64 en = gpu_.mcu().core_en_mask_locked();
    if (en)
        mask &= en;
    return static_cast<u32>(__builtin_popcountll(mask));
}

void CsEngine::kick_locked() {
    lockdep_assert_held(&lock_);
    if (running_ && !run_ev_->pending_locked())
        run_ev_->arm_locked(0);
}

bool CsEngine::runnable_locked(const Group& g, const Stream& s) const {
    lockdep_assert_held(&lock_);
    return g.state == GState::Running && s.started && s.block == Block::None;
}

bool CsEngine::sb_busy(const Stream& s, uint16_t mask) const {
    for (u32 i = 0; i < 16; i++)
        if ((mask & (1u << i)) && s.sb[i])
            return true;
    return false;
}

bool CsEngine::stream_idle_locked(const Stream& s) const {
    lockdep_assert_held(&lock_);
    if (!s.started || s.block == Block::Fatal)
        return true;
    if (s.jobs)
        return false;
    if (s.block == Block::SyncWait)
        return (s.cs_req_cfg & CS_IDLE_SYNC_WAIT) != 0;
    if (s.block != Block::None)
        return false;
    const bool empty = s.depth == 0 && s.frames[0].pc >= s.frames[0].end;
    return empty && (s.cs_req_cfg & CS_IDLE_EMPTY);
}

bool CsEngine::refresh_insert_locked(Stream& s) {
    lockdep_assert_held(&lock_);
    if (!s.io_in)
        return false;
    u64 insert = 0;
    if (!gpu_.mcu().read_locked(static_cast<u32>(s.io_in), &insert, 8).ok())
        return false;
    s.frames[0].end = insert;
    return true;
}

namespace {
constexpr ktime_t kNever = INT64_MAX;
}  // namespace

void CsEngine::run_locked() {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    const GpuLatencies& lat = gpu_.config().lat;
    const ktime_t now = kshim::ktime_get();
    bool more = false, waiting = false;
    ktime_t wake = kNever;  // the earliest next slice of a throttled group
    const u32 budget = std::max<u32>(1, lat.cs_slice_instrs);
    // Checked once per slice so that the instruction loop pays one flag test when nothing is armed.
    const bool count_instrs = gpu_.faults().counts_instructions_locked();
    for (auto& gp : groups_) {
        Group& g = *gp;
        if (g.state != GState::Running)
            continue;
        // A throttled group's spinning streams wait for their slice; its other streams run.
        const bool held = g.spin_next > now;
        bool spun = false;
        for (auto& s : g.cs) {
            if (!runnable_locked(g, s)) {
                s.spinning = false;
            } else if (!(held && s.spinning)) {
                const u32 n = exec_stream_locked(g, s, budget, count_instrs);
                s.spinning = n == budget && s.block == Block::None && s.started;
                spun |= s.spinning;
            }
            waiting |= s.block == Block::SyncWait;
        }
        if (spun && g.state == GState::Running) {
            const ktime_t next = progress_spin_locked(g, now);
            if (g.spin_next)
                wake = std::min(wake, next);
            else
                more = true;
        } else if (held) {
            wake = std::min(wake, g.spin_next);
        }
    }
    update_idle_locked();
    if (more)
        wake = std::min(wake, now + lat.cs_slice);
    if (wake != kNever && (more || !run_ev_->pending_locked() || run_ev_->due_locked() > wake))
        run_ev_->arm_at_locked(wake);
    if (waiting && !poll_ev_->pending_locked())
        poll_ev_->arm_locked(lat.sync_poll);
}

void CsEngine::poll_locked() {
    lockdep_assert_held(&lock_);
    if (!running_)
        return;
    polls_++;
    // A poll that would only run every blocked SYNC_WAIT again to block it again, the same way,
    // is skipped; the next poll is then due when that run would have armed it. (A queue blocked
    // until drm_sched's timeout spent most of a sanitized campaign's CPU here, 20 us by 20 us.)
    if (sync_waits_hold_locked()) {
        poll_ev_->arm_at_locked(next_sync_poll_locked());
        return;
    }
    reeval_sync_waits_locked();
}

// The poll after one that found every wait holding: a period on or, when the runtime knows that
// nothing else happens for longer (simulated mode: every task waits and no other event is due),
// the first of the poll's times at or after that. Nothing can write a sync object until then, so
// each poll in between would find the waits holding again and re-arm; the polls that remain are
// at the times they always were (a lock-up until drm_sched's timeout cost one poll per 20 us).
kshim::ktime_t CsEngine::next_sync_poll_locked() const {
    lockdep_assert_held(&lock_);
    const kshim::ktime_t period = gpu_.config().lat.sync_poll;
    const kshim::ktime_t now = kshim::ktime_get();
    const kshim::ktime_t quiet = kshim::backend().quiet_until();
    if (period <= 0 || quiet == kshim::KTIME_MAX || quiet <= now + period)
        return now + period;
    return now + (quiet - now + period - 1) / period * period;
}

// Whether every stream blocked in a SYNC_WAIT belongs to a running group and still reads an
// unsatisfied sync object, looked at without an access (Mmu::peek_locked). Any doubt (a TLB miss,
// an AS in trouble, a group not running) answers false, and the poll re-evaluates as before.
bool CsEngine::sync_waits_hold_locked() const {
    lockdep_assert_held(&lock_);
    // Index loops: at -O1 (the sanitizer presets) the iterators' calls cost more than the test,
    // and this runs at every poll of a long wait.
    const std::unique_ptr<Group>* groups = groups_.data();
    for (size_t gi = 0, ng = groups_.size(); gi < ng; gi++) {
        const Group* g = groups[gi].get();
        const Stream* streams = g->cs.data();
        for (size_t si = 0, ns = g->cs.size(); si < ns; si++) {
            const Stream& s = streams[si];
            if (s.block != Block::SyncWait)
                continue;
            if (g->state != GState::Running)
                return false;
            // The object as sync_wait_locked reads it: value and status, 16 or 8 bytes.
            u64 v = 0;
            if (s.sync64) {
                u64 obj[2] = {};
                if (!gpu_.mmu().peek_locked(g->as, s.sync_ptr, obj, sizeof(obj)))
                    return false;
                v = obj[0];
            } else {
                u32 obj[2] = {};
                if (!gpu_.mmu().peek_locked(g->as, s.sync_ptr, obj, sizeof(obj)))
                    return false;
                v = obj[0];
            }
            if (sync_satisfied(v, s.sync_value, s.sync_cond))
                return false;
        }
    }
    return true;
}

void CsEngine::reeval_sync_waits_locked() {
    lockdep_assert_held(&lock_);
    bool any = false;
    for (auto& g : groups_)
        for (auto& s : g->cs)
            if (s.block == Block::SyncWait)
                s.block = Block::None, any = true;
    if (any)
        kick_locked();
}

namespace {
// Instructions whose only effect is on the stream's registers (a LOAD reads memory nothing else
// writes during the slice): a loop made of them alone repeats itself exactly once its registers
// repeat.
bool register_only(u8 opcode) {
    switch (opcode) {
    case cs::NOP:
    case cs::MOVE:
    case cs::MOVE32:
    case cs::ADD_IMMEDIATE32:
    case cs::ADD_IMMEDIATE64:
    case cs::UMIN32:
    case cs::LOAD_MULTIPLE:
    case cs::BRANCH: return true;
    default: return false;
    }
}

// A loop at a fixed point (cs_engine.h): at a taken backward branch the stream's registers are
// recorded; arriving at the same branch target again with the same registers, after only
// register_only instructions, every further iteration of the slice would be the same, so the
// whole iterations left in the budget are counted without being interpreted and the slice ends
// with the few instructions of the last partial iteration, exactly where it would have.
}  // namespace

struct CsEngine::LoopProbe {
    static constexpr int kTries = 4;  // records per slice: a loop whose registers keep changing
                                      // (a countdown) is left alone after that
    int tries = kTries;
    bool armed = false;
    u64 pc = 0;
    u32 depth = 0, at_n = 0;
    u32 regs[128];
};

u32 CsEngine::exec_stream_locked(Group& g, Stream& s, u32 budget, bool count_instrs) {
    lockdep_assert_held(&lock_);
    u32 n = 0;
    s.fetch_n = 0;  // the fetch buffer lives for one slice (the host may rewrite a ring it has consumed)
    LoopProbe probe;
    // An instruction-counting fault must see every instruction run.
    if (count_instrs)
        probe.tries = 0;
    while (n < budget && s.block == Block::None && s.started) {
        Frame& f = s.frames[s.depth];
        if (f.pc >= f.end) {
            if (s.depth > 0) {
                s.depth--;
                s.fetch_n = 0;
                continue;
            }
            if (!refresh_insert_locked(s) || s.frames[0].pc >= s.frames[0].end)
                break;
        }
        u64 raw = 0;
        if (!fetch_locked(g, s, &raw))
            break;
        const u32 d = s.depth;
        const u64 next = s.frames[d].pc + 8;
        n++;
        instrs_++;
        interpreted_++;
        if (count_instrs && !s.reexec && inject_at_instruction_locked(g, s, next))
            break;
        const Instr in = cs::decode(raw);
        pc_set_ = false;
        const Step st = exec_one_locked(g, s, in, next);
        if (st == Step::Next && !pc_set_)
            s.frames[d].pc = next;
        if (probe.armed && !register_only(in.opcode))
            probe.armed = false;
        if (st == Step::Next && pc_set_ && s.depth == d && s.frames[d].pc < next && (probe.armed || probe.tries))
            skip_fixed_point_loop(s, probe, n, budget);
        // An instruction that blocked where it stands runs again when the stream is woken; that
        // re-execution is not a new instruction for the FaultPlan's count.
        s.reexec = st == Step::Block && !pc_set_;
        if (st != Step::Next)
            break;
    }
    if (s.started) {
        cs_write_extract_locked(s, true);
        if (s.block != Block::None)
            cs_publish_status_locked(s);
    }
    return n;
}

// At a taken backward branch: records the registers, or finds the loop at its fixed point.
void CsEngine::skip_fixed_point_loop(Stream& s, LoopProbe& probe, u32& n, u32 budget) {
    const u32 d = s.depth;
    const u64 target = s.frames[d].pc;
    const size_t bytes = nregs_ * sizeof(u32);
    if (probe.armed && probe.pc == target && probe.depth == d && !std::memcmp(probe.regs, s.regs, bytes)) {
        const u32 len = n - probe.at_n;
        const u32 rest = budget - n;
        const u32 skip = rest - rest % len;
        n += skip;
        instrs_ += skip;
        probe.armed = false;
        probe.tries = 0;
        return;
    }
    if (!probe.tries)
        return;
    probe.tries--;
    probe.armed = true;
    probe.pc = target;
    probe.depth = d;
    probe.at_n = n;
    std::memcpy(probe.regs, s.regs, bytes);
}

bool CsEngine::inject_at_instruction_locked(Group& g, Stream& s, u64 next_pc) {
    lockdep_assert_held(&lock_);
    const FaultSpec* f = gpu_.faults().cs_instruction_locked(static_cast<int>(g.slot), static_cast<int>(s.idx));
    if (!f)
        return false;
    // The exception takes the instruction's place: it retires without running, and the report
    // names its VA.
    const u64 va = pc_va(s);
    s.frames[s.depth].pc = next_pc;
    if (f->kind == FaultKind::CsFault)
        fault_locked(g, s, f->exception, va, va);
    else if (f->kind == FaultKind::CsUnrecoverable)
        fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_UNRECOVERABLE, va, va);
    else
        fatal_locked(g, s, f->exception, va, va);
    return true;
}

bool CsEngine::fetch_locked(Group& g, Stream& s, u64* instr) {
    lockdep_assert_held(&lock_);
    const Frame& f = s.frames[s.depth];
    const u64 key = f.pc;
    if (s.fetch_n && key >= s.fetch_va && key < s.fetch_va + s.fetch_n * 8ull) {
        *instr = s.fetch_buf[(key - s.fetch_va) / 8];
        return true;
    }
    u64 va = f.pc;
    u64 count = std::min<u64>(8, (f.end - f.pc) / 8);
    if (s.depth == 0) {
        va = s.ring_base + (f.pc % s.ring_size);
        count = std::min<u64>(count, (s.ring_size - (f.pc % s.ring_size)) / 8);
    }
    count = std::max<u64>(count, 1);
    if (!mem_read_locked(g, s, va, s.fetch_buf, count * 8))
        return false;
    s.fetch_va = key;
    s.fetch_n = static_cast<u32>(count);
    *instr = s.fetch_buf[0];
    return true;
}

bool CsEngine::mem_read_locked(Group& g, Stream& s, u64 va, void* dst, size_t len) {
    lockdep_assert_held(&lock_);
    const MemResult r = gpu_.mmu().read_locked(g.as, va, dst, len, Access::Read, kSourceCs);
    if (r.ok())
        return true;
    mem_fail_locked(g, s, r);
    return false;
}

bool CsEngine::mem_write_locked(Group& g, Stream& s, u64 va, const void* src, size_t len) {
    lockdep_assert_held(&lock_);
    const MemResult r = gpu_.mmu().write_locked(g.as, va, src, len, kSourceCs);
    if (r.ok())
        return true;
    mem_fail_locked(g, s, r);
    return false;
}

void CsEngine::mem_fail_locked(Group& g, Stream& s, const MemResult& r) {
    lockdep_assert_held(&lock_);
    switch (r.status) {
    case MemResult::Status::Fault:
    case MemResult::Status::Stalled:
        // The access waits for the AS to be updated (as_updated_locked), like hardware stalls.
        s.block = Block::Mmu;
        s.stalled_as = g.as;
        break;
    default: bus_fault_locked(g, s, r.va); break;
    }
}

void CsEngine::bus_fault_locked(Group& g, Stream& s, u64 va) {
    lockdep_assert_held(&lock_);
    fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_BUS_FAULT, va);
    for (auto& o : g.cs)
        if (&o != &s && o.started && o.block != Block::Fatal)
            fault_locked(g, o, DRM_PANTHOR_EXCEPTION_CS_RES_TERM, 0);
}

void CsEngine::fatal_locked(Group& g, Stream& s, u32 exception, u64 info, u64 exc_va) {
    lockdep_assert_held(&lock_);
    s.block = Block::Fatal;
    s.exc_va = exc_va;
    const u64 out = cs_out(g.slot, s.idx);
    gpu_.mcu().write_locked(static_cast<u32>(out + offsetof(panthor_fw_cs_output_iface, fatal)), &exception, 4);
    gpu_.mcu().write_locked(static_cast<u32>(out + offsetof(panthor_fw_cs_output_iface, fatal_info)), &info, 8);
    cs_publish_status_locked(s);
    gpu_.trace_instant_locked("cs_fatal", "mock_hw");
    cs_raise_event_locked(g, s, CS_FATAL);
}

void CsEngine::fault_locked(Group& g, Stream& s, u32 exception, u64 info, u64 exc_va) {
    lockdep_assert_held(&lock_);
    s.in_error = true;
    s.last_error = exception;
    if (s.block != Block::Fatal)
        s.block = Block::FaultAck, s.exc_va = exc_va;
    const u64 out = cs_out(g.slot, s.idx);
    gpu_.mcu().write_locked(static_cast<u32>(out + offsetof(panthor_fw_cs_output_iface, fault)), &exception, 4);
    gpu_.mcu().write_locked(static_cast<u32>(out + offsetof(panthor_fw_cs_output_iface, fault_info)), &info, 8);
    cs_publish_status_locked(s);
    gpu_.trace_instant_locked("cs_fault", "mock_hw");
    cs_raise_event_locked(g, s, CS_FAULT);
}

void CsEngine::inject_locked(u32 csg, u32 cs, bool fatal, u32 exception) {
    lockdep_assert_held(&lock_);
    if (csg >= groups_.size())
        return;
    Group& g = *groups_[csg];
    if (g.state != GState::Running || cs >= g.cs.size() || !g.cs[cs].started)
        return;
    if (fatal)
        fatal_locked(g, g.cs[cs], exception, 0);
    else
        fault_locked(g, g.cs[cs], exception, 0);
    update_idle_locked();
}

void CsEngine::as_updated_locked(u32 as) {
    lockdep_assert_held(&lock_);
    bool any = false;
    for (auto& g : groups_) {
        for (auto& s : g->cs)
            if (s.block == Block::Mmu && (s.stalled_as == as || as == 0))
                s.block = Block::None, any = true;
    }
    const ktime_t now = kshim::ktime_get();
    for (auto& j : jobs_)
        if (j.stalled && groups_[j.csg]->as == as)
            j.stalled = false, j.end = now;
    rearm_jobs_locked();
    if (any)
        kick_locked();
}

bool CsEngine::sync_satisfied(u64 v, u64 ref, u8 cond) const {
    switch (cond) {
    case cs::LEQUAL: return v <= ref;
    case cs::GREATER: return v > ref;
    case cs::EQUAL: return v == ref;
    case cs::NEQUAL: return v != ref;
    case cs::LESS: return v < ref;
    case cs::GEQUAL: return v >= ref;
    case cs::ALWAYS: return true;
    default: return false;
    }
}

CsEngine::Step CsEngine::sync_wait_locked(Group& g, Stream& s, const Instr& in) {
    lockdep_assert_held(&lock_);
    const bool is64 = in.opcode == cs::SYNC_WAIT64;
    const u64 addr = reg64(s, in.addr);
    u64 v = 0;
    u32 status = 0;
    if (is64) {
        u64 obj[2] = {};
        if (!mem_read_locked(g, s, addr, obj, 16))
            return Step::Block;
        v = obj[0];
        status = static_cast<u32>(obj[1]);
    } else {
        u32 obj[2] = {};
        if (!mem_read_locked(g, s, addr, obj, 8))
            return Step::Block;
        v = obj[0];
        status = obj[1];
    }
    const u64 ref = is64 ? reg64(s, in.data) : s.regs[in.data];
    if (!sync_satisfied(v, ref, in.cond)) {
        s.block = Block::SyncWait;
        s.sync_ptr = addr;
        s.sync_value = ref;
        s.sync_cond = in.cond;
        s.sync64 = is64;
        return Step::Block;
    }
    if (in.error_reject && status) {
        // The wait inherits the error of the sync object: it retires, the stream enters the error
        // state and reports CS_INHERIT_FAULT.
        const u64 va = pc_va(s);
        s.frames[s.depth].pc += 8;
        pc_set_ = true;
        fault_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_INHERIT_FAULT, addr, va);
        return Step::Block;
    }
    return Step::Next;
}

void CsEngine::sync_written_locked(Group& g, bool system_scope) {
    lockdep_assert_held(&lock_);
    if (system_scope)
        csg_raise_event_locked(g, CSG_SYNC_UPDATE);
    reeval_sync_waits_locked();
}

CsEngine::Step CsEngine::exec_one_locked(Group& g, Stream& s, const Instr& in, u64 next_pc) {
    lockdep_assert_held(&lock_);
    // CS_INSTR_INVALID, and one log line per opcode naming what the mock rejected, so a client
    // that uses an instruction or field the mock lacks learns which (docs/mock_hw.md).
    auto invalid = [&]() REQUIRES(lock_) {
        const u64 va = pc_va(s);
        gpu_.log_once_locked(
            0x40000000u | in.opcode, "CSG%u CS%u: %s %#018llx at %#llx rejected (CS_INSTR_INVALID): %s", g.slot, s.idx,
            cs::opcode_name(in.opcode), static_cast<unsigned long long>(in.raw), static_cast<unsigned long long>(va),
            in.valid ? "a register or field out of the range the mock implements" : "opcode not implemented");
        fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_INSTR_INVALID, va, va);
        return Step::Block;
    };
    auto reg_ok = [&](u32 r, u32 n = 1) { return r + n <= nregs_; };
    auto wait_sbs = [&](uint16_t mask) {
        if (!sb_busy(s, mask))
            return false;
        s.block = Block::SbWait;
        s.wait_mask = mask;
        s.wait_instr = false;
        return true;
    };
    if (!in.valid)
        return invalid();
    switch (in.opcode) {
    case cs::NOP:
    case cs::PROT_REGION:
    case cs::FINISH_TILING:
    case cs::PROGRESS_WAIT: return Step::Next;
    case cs::MOVE:
        if (!reg_ok(in.dst, 2))
            return invalid();
        set_reg64(s, in.dst, in.imm);
        return Step::Next;
    case cs::MOVE32:
        if (!reg_ok(in.dst))
            return invalid();
        s.regs[in.dst] = static_cast<u32>(in.imm);
        return Step::Next;
    case cs::ADD_IMMEDIATE32:
        if (!reg_ok(in.dst) || !reg_ok(in.src))
            return invalid();
        s.regs[in.dst] = s.regs[in.src] + static_cast<u32>(in.simm);
        return Step::Next;
    case cs::ADD_IMMEDIATE64:
        if (!reg_ok(in.dst, 2) || !reg_ok(in.src, 2))
            return invalid();
        set_reg64(s, in.dst, reg64(s, in.src) + static_cast<u64>(static_cast<int64_t>(in.simm)));
        return Step::Next;
    case cs::UMIN32:
        if (!reg_ok(in.dst) || !reg_ok(in.src0) || !reg_ok(in.src1))
            return invalid();
        s.regs[in.dst] = std::min(s.regs[in.src0], s.regs[in.src1]);
        return Step::Next;
    case cs::LOAD_MULTIPLE:
    case cs::STORE_MULTIPLE: {
        if (!reg_ok(in.addr, 2))
            return invalid();
        const u64 base = reg64(s, in.addr) + static_cast<u64>(static_cast<int64_t>(in.offset));
        for (u32 i = 0; i < 16; i++) {
            if (!(in.mask & (1u << i)))
                continue;
            if (!reg_ok(in.base + i))
                return invalid();
            if (in.opcode == cs::LOAD_MULTIPLE) {
                if (!mem_read_locked(g, s, base + 4 * i, &s.regs[in.base + i], 4))
                    return Step::Block;
            } else {
                if (!mem_write_locked(g, s, base + 4 * i, &s.regs[in.base + i], 4))
                    return Step::Block;
            }
        }
        if (in.opcode == cs::STORE_MULTIPLE)
            reeval_sync_waits_locked();
        return Step::Next;
    }
    case cs::BRANCH: {
        if (!reg_ok(in.src))
            return invalid();
        const int32_t v = static_cast<int32_t>(s.regs[in.src]);
        bool taken = false;
        switch (in.cond) {
        case cs::LEQUAL: taken = v <= 0; break;
        case cs::GREATER: taken = v > 0; break;
        case cs::EQUAL: taken = v == 0; break;
        case cs::NEQUAL: taken = v != 0; break;
        case cs::LESS: taken = v < 0; break;
        case cs::GEQUAL: taken = v >= 0; break;
        case cs::ALWAYS: taken = true; break;
        default: return invalid();
        }
        if (taken) {
            s.frames[s.depth].pc = next_pc + static_cast<u64>(static_cast<int64_t>(in.offset) * 8);
            pc_set_ = true;
        }
        return Step::Next;
    }
    case cs::CALL:
    case cs::JUMP: {
        if (!reg_ok(in.addr, 2) || !reg_ok(in.length))
            return invalid();
        const u64 addr = reg64(s, in.addr);
        const u32 len = s.regs[in.length];
        if (len % 8)
            return invalid();
        if (len == 0 || addr == 0)
            return Step::Next;
        if (in.opcode == cs::JUMP && s.depth > 0) {
            s.frames[s.depth] = Frame{addr, addr + len};
        } else {
            // CALL (and a JUMP out of the ring buffer, which the mock treats as a CALL).
            if (s.depth + 1 >= cs::kCallStackDepth) {
                fatal_locked(g, s, DRM_PANTHOR_EXCEPTION_CS_CALL_STACK_OVERFLOW, pc_va(s), pc_va(s));
                return Step::Block;
            }
            s.frames[s.depth].pc = next_pc;
            s.depth++;
            s.frames[s.depth] = Frame{addr, addr + len};
        }
        s.fetch_n = 0;
        pc_set_ = true;
        return Step::Next;
    }
    case cs::WAIT:
        if (sb_busy(s, in.wait_mask)) {
            s.block = Block::SbWait;
            s.wait_mask = in.wait_mask;
            s.wait_instr = true;
            return Step::Block;
        }
        if (in.progress_inc)
            s.progress++;
        return Step::Next;
    case cs::SET_SB_ENTRY:
        s.sb_endpoint = in.sb_endpoint % nsb_;
        s.sb_other = in.sb_other % nsb_;
        return Step::Next;
    case cs::REQ_RESOURCE: s.req_resource = in.resources; return Step::Next;
    case cs::SET_EXCEPTION_HANDLER:
        if (!reg_ok(in.addr, 2) || !reg_ok(in.length))
            return invalid();
        if (in.exception == cs::EXCEPTION_TILER_OOM) {
            s.exc_handler_type = in.exception;
            s.exc_handler_addr = reg64(s, in.addr);
            s.exc_handler_len = s.regs[in.length];
        }
        return Step::Next;
    case cs::ERROR_BARRIER: s.in_error = false; return Step::Next;
    case cs::PROGRESS_STORE:
        if (!reg_ok(in.src, 2))
            return invalid();
        s.progress = reg64(s, in.src);
        return Step::Next;
    case cs::PROGRESS_LOAD:
        if (!reg_ok(in.dst, 2))
            return invalid();
        set_reg64(s, in.dst, s.progress);
        return Step::Next;
    case cs::HEAP_SET:
        if (!reg_ok(in.addr, 2))
            return invalid();
        s.heap_ctx = reg64(s, in.addr);
        return Step::Next;
    case cs::HEAP_OPERATION: return heap_operation_locked(g, s, in);
    case cs::FINISH_FRAGMENT: return finish_fragment_locked(g, s, in);
    case cs::TRACE_POINT:
        if (wait_sbs(in.wait_mask))
            return Step::Block;
        return Step::Next;
    case cs::STORE_STATE: {
        if (!reg_ok(in.addr, 2))
            return invalid();
        if (wait_sbs(in.wait_mask))
            return Step::Block;
        u64 v = 0;
        switch (in.state) {
        case cs::STATE_TIMESTAMP: v = gpu_.control().shader_timestamp_locked(); break;
        case cs::STATE_CYCLE_COUNT: v = gpu_.control().cycle_count_locked(); break;
        case cs::STATE_DISJOINT_COUNT: v = 0; break;
        case cs::STATE_ERROR_STATUS: v = s.in_error ? s.last_error : 0; break;
        }
        if (!mem_write_locked(g, s, reg64(s, in.addr) + static_cast<u64>(static_cast<int64_t>(in.offset)), &v, 8))
            return Step::Block;
        return Step::Next;
    }
    case cs::FLUSH_CACHE2: {
        if (!reg_ok(in.flush_id))
            return invalid();
        if (wait_sbs(in.wait_mask))
            return Step::Block;
        // Skipped when a flush already happened since the flush ID in the register was sampled;
        // flush ID 0 is never sampled (LATEST_FLUSH_ID skips it), so it always flushes.
        const u32 sampled = s.regs[in.flush_id] & 0xFFFFFF;
        if (sampled != 0 && sampled != gpu_.control().latest_flush_id_locked())
            return Step::Next;
        if (in.l2 == cs::FLUSH_NONE && in.lsc == cs::FLUSH_NONE && in.other == cs::OTHER_FLUSH_NONE)
            return Step::Next;
        Job j{};
        j.csg = g.slot;
        j.cs = s.idx;
        j.slot = in.signal_slot % nsb_;
        j.uses_core = false;
        j.flush = true;
        j.flush_l2 = in.l2 == cs::FLUSH_CLEAN_INVALIDATE;
        j.shader.duration_ns = gpu_.config().lat.cache_flush;
        queue_job_locked(j);
        return Step::Next;
    }
    case cs::SYNC_ADD32:
    case cs::SYNC_SET32:
    case cs::SYNC_ADD64:
    case cs::SYNC_SET64: {
        const bool is64 = in.opcode == cs::SYNC_ADD64 || in.opcode == cs::SYNC_SET64;
        if (!reg_ok(in.addr, 2) || !reg_ok(in.data, is64 ? 2 : 1))
            return invalid();
        if (wait_sbs(in.wait_mask))
            return Step::Block;
        const u64 addr = reg64(s, in.addr);
        const bool add = in.opcode == cs::SYNC_ADD32 || in.opcode == cs::SYNC_ADD64;
        const u32 status = s.in_error ? 1 : 0;
        if (is64) {
            u64 v = 0;
            if (add && !mem_read_locked(g, s, addr, &v, 8))
                return Step::Block;
            v = add ? v + reg64(s, in.data) : reg64(s, in.data);
            if (!mem_write_locked(g, s, addr, &v, 8))
                return Step::Block;
            if (in.error_propagate && !mem_write_locked(g, s, addr + 8, &status, 4))
                return Step::Block;
        } else {
            u32 v = 0;
            if (add && !mem_read_locked(g, s, addr, &v, 4))
                return Step::Block;
            v = add ? v + s.regs[in.data] : s.regs[in.data];
            if (!mem_write_locked(g, s, addr, &v, 4))
                return Step::Block;
            if (in.error_propagate && !mem_write_locked(g, s, addr + 4, &status, 4))
                return Step::Block;
        }
        sync_written_locked(g, in.scope == cs::SCOPE_SYSTEM);
        return Step::Next;
    }
    case cs::SYNC_WAIT32:
    case cs::SYNC_WAIT64:
        if (!reg_ok(in.addr, 2) || !reg_ok(in.data, in.opcode == cs::SYNC_WAIT64 ? 2 : 1))
            return invalid();
        return sync_wait_locked(g, s, in);
    case cs::RUN_COMPUTE:
    case cs::RUN_TILING:
    case cs::RUN_IDVS:
    case cs::RUN_FRAGMENT:
    case cs::RUN_FULLSCREEN:
    case cs::RUN_COMPUTE_INDIRECT: return issue_job_locked(g, s, in);
    default: return invalid();
    }
}

CsEngine::Step CsEngine::retire_with_locked(Group& g, Stream& s, bool fatal, u32 exception, u64 info) {
    lockdep_assert_held(&lock_);
    // The instruction is done (it does not run again after the host's ack); the exception is
    // reported against it: CS_STATUS_CMD_PTR names it while the exception is pending.
    const u64 va = pc_va(s);
    s.frames[s.depth].pc += 8;
    pc_set_ = true;
    if (fatal)
        fatal_locked(g, s, exception, info, va);
    else
        fault_locked(g, s, exception, info, va);
    return Step::Block;
}

CsEngine::Step CsEngine::issue_job_locked(Group& g, Stream& s, const Instr& in) {
    lockdep_assert_held(&lock_);
    if (s.in_error) {
        if (in.progress_inc)
            s.progress++;
        return Step::Next;  // RUN_* are no-ops until ERROR_BARRIER
    }
    if (s.jobs >= kMaxJobsPerStream) {
        s.block = Block::Resource;  // re-executed when one of the stream's jobs retires
        return Step::Block;
    }
    u64 desc = 0;
    switch (in.opcode) {
    case cs::RUN_FRAGMENT: desc = reg64(s, 40) & ~0x3Full; break;
    case cs::RUN_FULLSCREEN: desc = reg64(s, in.addr); break;
    case cs::RUN_IDVS: desc = reg64(s, 16); break;
    default: desc = reg64(s, static_cast<u8>(16 + 2 * in.spd)); break;
    }
    // A MockShader record (our tests' jobs) or real Valhall descriptors (cs_real_jobs.cpp): the
    // record's magic cannot start a valid shader program or framebuffer descriptor.
    MockShader sh{};
    if (!mem_read_locked(g, s, desc, &sh.magic, sizeof(sh.magic)))
        return Step::Block;
    if (sh.magic == MockShader::kMagic) {
        if (!mem_read_locked(g, s, desc, &sh, sizeof(sh)))
            return Step::Block;
        if (in.progress_inc)
            s.progress++;
        if (sh.kind > MockShader::kLastKind || sh.flags)
            return retire_with_locked(g, s, false, DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT, desc);
    } else {
        u64 bad_va = desc;
        const RealJob r = real_job_locked(g, s, in, &sh, &bad_va);
        if (r == RealJob::Stalled)
            return Step::Block;
        if (in.progress_inc)
            s.progress++;
        if (r == RealJob::Invalid)
            return retire_with_locked(g, s, false, DRM_PANTHOR_EXCEPTION_DATA_INVALID_FAULT, bad_va);
    }
    FaultPlan& fp = gpu_.faults();
    const int gi = static_cast<int>(g.slot), si = static_cast<int>(s.idx);
    if (const FaultSpec* f = fp.occurrence_locked(FaultKind::CsFatal, ~0u, -1, gi, si))
        return retire_with_locked(g, s, true, f->exception, desc);
    if (fp.occurrence_locked(FaultKind::CsUnrecoverable, ~0u, -1, gi, si))
        return retire_with_locked(g, s, true, DRM_PANTHOR_EXCEPTION_CS_UNRECOVERABLE, desc);
    if (const FaultSpec* f = fp.occurrence_locked(FaultKind::CsFault, ~0u, -1, gi, si))
        return retire_with_locked(g, s, false, f->exception, desc);
    if (fp.occurrence_locked(FaultKind::ShaderHang, ~0u, -1, gi, si))
        sh.kind = MockShader::Hang;
    if (const FaultSpec* f = fp.occurrence_locked(FaultKind::MmuFaultAt, ~0u, -1, gi, si)) {
        sh.kind = MockShader::Access;
        sh.addr = f->fault_addr;
    }
    if ((in.opcode == cs::RUN_IDVS || in.opcode == cs::RUN_TILING) && sh.heap_chunks) {
        Step st = Step::Next;
        if (!heap_take_chunks_locked(g, s, sh.heap_chunks, &st))
            return st;
    }
    Job j{};
    j.csg = g.slot;
    j.cs = s.idx;
    j.slot = s.sb_endpoint;
    j.uses_core = true;
    j.ep = (in.opcode == cs::RUN_FRAGMENT || in.opcode == cs::RUN_FULLSCREEN) ? kEpFragment : kEpCompute;
    j.shader = sh;
    j.prio = g.priority;
    queue_job_locked(j);
    return Step::Next;
}

}  // namespace mock_hw
