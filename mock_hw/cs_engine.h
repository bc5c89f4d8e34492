// The CSF firmware's group scheduler and command-stream interpreter: CSG slots (STATE
// START/SUSPEND/RESUME/TERMINATE, EP_CFG, STATUS_UPDATE, the SYNC_UPDATE/IDLE/PROGRESS_TIMER
// events), CS slots (START/STOP, ring-buffer fetch between CS_EXTRACT and CS_INSERT, idle
// reporting), an interpreter for every v10 opcode (hw/csf/cs_isa.h), timed "mock shader" jobs on a
// shared pool of shader cores, sync objects, the tiler heap, suspend buffers with job preemption,
// and the CS_FAULT/CS_FATAL paths including MMU faults. Facts: docs/hw/csf/fw-interfaces.md,
// exceptions.md and cs-isa.md.
// The memory formats the mock defines are in cs_formats.h.
//
// Design. Everything runs under the Gpu lock from HwEvents. A CSG doorbell schedules a scan of
// the slot (csg_request later); the scan acks EP_CFG/STATUS_UPDATE, handles the per-CS requests
// and starts a state transition whose ack lands csg_state later (SUSPEND: preempts the group's
// jobs at once and acks csg_suspend later; cs_suspend.cpp). Streams run in slices of
// cs_slice_instrs instructions from one engine-wide "run" event; a slice costs cs_slice of virtual
// time, so an endless MOVE/BRANCH loop advances time instead of stopping it; such a loop also
// counts as time without forward progress for the group's progress timer, and after
// cs_spin_after it is throttled to one slice per cs_spin_slice (progress_spin_locked). A loop that
// reaches a fixed point (its registers repeat at its backward branch, and it only moves, adds and
// loads) is not interpreted for the rest of its slice: the slice counts its whole iterations and
// ends exactly where interpreting them would have (skip_fixed_point_loop). An instruction that
// cannot complete (SB wait, SYNC_WAIT, MMU stall, OOM reply, fault ack) leaves the stream's pc on
// it and is re-executed when the stream is woken, which is also how a suspended stream resumes
// exactly where it stopped. Memory goes through Mmu accessors: the group's streams through the AS
// in CSG config, the user-I/O pages and suspend buffers through AS 0.
//
// Files: csg.cpp (slots, events, status), cs_exec.cpp (interpreter), cs_jobs.cpp (job pool and
// shader cores), cs_heap.cpp (tiler heap), cs_suspend.cpp (preemption, suspend buffers).
#pragma once
#include <memory>
#include <vector>

#include "hw/csf/cs_isa.h"
#include "hw/csf/fw_iface.h"
#include "hw/csf/mock_fw_formats.h"
#include "kernel_shim/spinlock.h"
#include "mock_hw/csf_engine.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/mmu.h"

namespace mock_hw {

class Gpu;

class CsEngine final : public CsfEngine {
public:
    explicit CsEngine(Gpu& gpu);
    ~CsEngine() override;

    void csg_doorbell_locked(u32 slot_mask) override;
    void user_doorbell_locked(u32 doorbell) override;
    void mcu_started_locked(bool cold) override;
    void mcu_stopped_locked() override;

    // FaultPlan spontaneous kinds (CsFatal/CsFault/CsUnrecoverable at a time).
    void inject_locked(u32 csg, u32 cs, bool fatal, u32 exception);
    // MMU update listener: stalled requesters on `as` retry.
    void as_updated_locked(u32 as);

    // Observability for tests and benchmarks.
    u64 instructions_executed() const { return instrs_; }
    // Of those, the ones the interpreter decoded: the rest were whole iterations of a loop at a
    // fixed point, counted without being run (skip_fixed_point_loop).
    u64 instructions_interpreted() const { return interpreted_; }
    // The rounds of the blocked-SYNC_WAIT poll that ran (next_sync_poll_locked skips the ones
    // that could not see a change).
    u64 sync_polls() const { return polls_; }
    u32 cores_total_locked() const;
    u32 cores_busy_locked() const {
        lockdep_assert_held(&lock_);
        return cores_busy_;
    }
    // Virtual time during which at least one shader core was busy (what "GPU busy" means to a
    // user of the simulator), since the GPU was created.
    u64 busy_ns_locked() const;
    u64 jobs_completed() const { return jobs_done_; }
    // Jobs on real Valhall descriptors that completed without their shaders being executed.
    u64 real_jobs_completed() const { return real_jobs_done_; }

    enum class Block : u8 { None, SbWait, SyncWait, Mmu, Oom, FaultAck, Fatal, Resource };

private:
    // The endpoint kind a job occupies (CSG endpoint_req [7:0] / [15:8] and the exclusive bits).
    enum Endpoint : u8 { kEpCompute = 0, kEpFragment = 1, kEpKinds = 2 };

    struct Frame {
        u64 pc = 0;   // root: ring byte position; else GPU VA
        u64 end = 0;  // root: CS_INSERT; else GPU VA of the end
    };
    struct Stream {
        u32 csg = 0, idx = 0;
        bool started = false;
        u32 regs[128] = {};
        Frame frames[panthor::cs::kCallStackDepth];
        u32 depth = 0;  // 0 = executing the ring buffer
        u32 sb[16] = {};
        u8 sb_endpoint = 0, sb_other = 0;
        Block block = Block::None;
        uint16_t wait_mask = 0;   // SB_WAIT / WAIT mask
        bool wait_instr = false;  // blocked by a WAIT instruction (status SB source 8)
        // SYNC_WAIT being waited on
        u64 sync_ptr = 0, sync_value = 0;
        u8 sync_cond = 0;
        bool sync64 = false;
        bool in_error = false;  // CS_FAULT raised, until ERROR_BARRIER
        u32 last_error = 0;
        // The instruction a pending CS_FAULT/CS_FATAL was raised by, when it retired with the
        // exception (the stream resumes after it): CS_STATUS_CMD_PTR names it until the host acks
        // the fault. 0: the exception came from elsewhere (a job, the FaultPlan's timed kinds).
        u64 exc_va = 0;
        // Its last slice used the whole instruction budget (it is executing, not blocked).
        bool spinning = false;
        u64 heap_ctx = 0;
        u32 heap_vt_start = 0, heap_vt_end = 0, heap_frag_end = 0;
        u64 oom_heap = 0;          // heap context waiting for a chunk
        bool oom_replied = false;  // the host acked TILER_OOM; oom_chunk is its heap_start
        u64 oom_chunk = 0;
        u64 progress = 0;
        u8 exc_handler_type = 0;
        u64 exc_handler_addr = 0;
        u32 exc_handler_len = 0;
        u32 req_resource = 0;
        u32 stalled_as = ~0u;
        bool mmu_bus_fault = false;
        // The next instruction to run is a re-execution of one that blocked where it stands (the
        // FaultPlan counts each instruction once).
        bool reexec = false;
        // config copied from the CS input block at START/RESUME
        u64 ring_base = 0;
        u32 ring_size = 0;
        u64 io_in = 0, io_out = 0;
        u32 cs_config = 0;
        u32 cs_req_cfg = 0;   // IDLE_* / EXTRACT_EVENT config bits last acked
        u32 jobs = 0;         // in-flight async ops of this stream (preempted ones included)
        u32 trace_lanes = 0;  // trace tracks of this stream holding a job slice (bit per track)
        // fetch cache: up to 8 instructions at fetch_va
        u64 fetch_va = ~0ull;
        u32 fetch_n = 0;
        u64 fetch_buf[8] = {};
    };
    static constexpr u8 kNoTraceLane = 0xFF;
    struct Job {
        u32 csg, cs;
        u8 slot;
        bool uses_core;
        u8 ep = kEpCompute;  // with uses_core
        bool started = false;
        bool stalled = false;
        MockShader shader;  // duration_ns: the whole run (restored after a suspend: what was left)
        ktime_t end = 0;
        u32 prio = 0;
        u64 seq = 0;
        bool flush = false, flush_l2 = false;
        u8 trace_lane = kNoTraceLane;  // the stream's trace track its slice is on
    };
    enum class GState : u8 { Off, Running, Suspending, Suspended, Terminating };
    struct Group {
        u32 slot = 0;
        GState state = GState::Off;
        u32 pending_state = 0xFF;  // state request in flight
        u32 as = 0;
        u32 priority = 0;
        // endpoint_req: cores of each kind this group may occupy at once (0 = no limit), and
        // whether it wants them to itself (no other group's job of that kind runs beside it).
        u32 ep_limit[kEpKinds] = {};
        bool ep_exclusive[kEpKinds] = {};
        u32 running[kEpKinds] = {};  // its jobs holding a core, per kind
        u64 suspend_buf = 0;
        bool idle = true;
        bool suspend_stuck = false;
        std::vector<Stream> cs;
        // Jobs a SUSPEND took off their cores, until the suspend buffer holds them.
        std::vector<Job> preempted;
        std::unique_ptr<HwEvent> scan_ev, state_ev, progress_ev, delayed_ack_ev;
        u32 delayed_bits = 0, dropped_bits = 0;
        bool progress_reported = false;
        // Virtual time its streams executed whole slices since its last forward progress (a job
        // holding a core completed, the group went idle or started), and, once that passes
        // cs_spin_after, when its spinning streams get their next slice (0: not throttled).
        ktime_t spin_ns = 0;
        ktime_t spin_next = 0;
        u32 track = 0;
    };

    // csg.cpp
    void csg_scan_locked(Group& g);
    void csg_apply_state_locked(Group& g, u32 state) REQUIRES(lock_);
    void csg_state_done_locked(Group& g);
    void csg_raise_event_locked(Group& g, u32 bit) REQUIRES(lock_);
    void csg_status_update_locked(Group& g) REQUIRES(lock_);
    void cs_scan_locked(Group& g, Stream& s) REQUIRES(lock_);
    void cs_start_locked(Group& g, Stream& s, bool fresh) REQUIRES(lock_);
    void cs_raise_event_locked(Group& g, Stream& s, u32 bit) REQUIRES(lock_);
    void cs_publish_status_locked(Stream& s) REQUIRES(lock_);
    void cs_write_extract_locked(Stream& s, bool active) REQUIRES(lock_);
    void reset_stream(Group& g, Stream& s);
    void update_idle_locked() REQUIRES(lock_);
    void delayed_ack_locked(Group& g);
    void progress_timer_fired_locked(Group& g);
    void rearm_progress_locked(Group& g) REQUIRES(lock_);
    ktime_t progress_timeout_locked() const REQUIRES(lock_);  // 0: no progress timer
    // A pass in which streams of `g` ran whole slices: charges the slice's time to the group's
    // no-progress time and raises PROGRESS_TIMER_EVENT once it reaches the timeout. Returns
    // when the group's spinning streams run next.
    ktime_t progress_spin_locked(Group& g, ktime_t now) REQUIRES(lock_);
    void progress_made_locked(Group& g) REQUIRES(lock_);
    void poll_locked();
    u64 csg_in(u32 slot) const;
    u64 csg_out(u32 slot) const;
    u64 cs_in(u32 slot, u32 cs) const;
    u64 cs_out(u32 slot, u32 cs) const;

    // cs_suspend.cpp
    void preempt_group_jobs_locked(Group& g) REQUIRES(lock_);
    bool suspend_drained_locked(const Group& g) const REQUIRES(lock_);
    void save_group_locked(Group& g) REQUIRES(lock_);
    bool restore_group_locked(Group& g) REQUIRES(lock_);
    bool read_saved_stream_locked(u32 rec, SavedStream& sv) REQUIRES(lock_);
    bool restore_stream_locked(Group& g, Stream& s, const SavedStream& sv, std::vector<Job>& jobs) REQUIRES(lock_);

    // cs_exec.cpp
    void kick_locked() REQUIRES(lock_);
    void run_locked();
    bool runnable_locked(const Group& g, const Stream& s) const REQUIRES(lock_);
    // Executes up to `budget` instructions; returns how many ran.
    u32 exec_stream_locked(Group& g, Stream& s, u32 budget, bool count_instrs) REQUIRES(lock_);
    struct LoopProbe;
    void skip_fixed_point_loop(Stream& s, LoopProbe& probe, u32& n, u32 budget) REQUIRES(lock_);
    enum class Step : u8 { Next, Block };
    Step exec_one_locked(Group& g, Stream& s, const panthor::cs::Instr& in, u64 next_pc) REQUIRES(lock_);
    bool inject_at_instruction_locked(Group& g, Stream& s, u64 next_pc) REQUIRES(lock_);
    bool fetch_locked(Group& g, Stream& s, u64* instr) REQUIRES(lock_);
    bool refresh_insert_locked(Stream& s) REQUIRES(lock_);
    bool stream_idle_locked(const Stream& s) const REQUIRES(lock_);
    bool sb_busy(const Stream& s, uint16_t mask) const;
    bool mem_read_locked(Group& g, Stream& s, u64 va, void* dst, size_t len) REQUIRES(lock_);
    bool mem_write_locked(Group& g, Stream& s, u64 va, const void* src, size_t len) REQUIRES(lock_);
    void mem_fail_locked(Group& g, Stream& s, const MemResult& r) REQUIRES(lock_);
    // `exc_va`: the instruction that raised it when that instruction retired (Stream::exc_va).
    void fatal_locked(Group& g, Stream& s, u32 exception, u64 info, u64 exc_va = 0) REQUIRES(lock_);
    void fault_locked(Group& g, Stream& s, u32 exception, u64 info, u64 exc_va = 0) REQUIRES(lock_);
    u64 pc_va(const Stream& s) const {
        return s.depth == 0 ? s.ring_base + (s.ring_size ? s.frames[0].pc % s.ring_size : 0) : s.frames[s.depth].pc;
    }
    void bus_fault_locked(Group& g, Stream& s, u64 va) REQUIRES(lock_);
    bool sync_satisfied(u64 v, u64 ref, u8 cond) const;
    Step sync_wait_locked(Group& g, Stream& s, const panthor::cs::Instr& in) REQUIRES(lock_);
    void sync_written_locked(Group& g, bool system_scope) REQUIRES(lock_);
    void reeval_sync_waits_locked() REQUIRES(lock_);
    bool sync_waits_hold_locked() const REQUIRES(lock_);
    kshim::ktime_t next_sync_poll_locked() const REQUIRES(lock_);
    Step issue_job_locked(Group& g, Stream& s, const panthor::cs::Instr& in) REQUIRES(lock_);
    Step retire_with_locked(Group& g, Stream& s, bool fatal, u32 exception, u64 info) REQUIRES(lock_);

    // cs_real_jobs.cpp: a RUN_* whose descriptor is not a MockShader record. Reads what the
    // hardware reads before shading (the job's descriptors, each shader's first instruction) and
    // gives the job's modelled duration in *sh (kind Run, flag kFromDescriptors).
    enum class RealJob : u8 { Ok, Stalled, Invalid };
    RealJob real_job_locked(Group& g, Stream& s, const panthor::cs::Instr& in, MockShader* sh, u64* bad_va)
        REQUIRES(lock_);
    RealJob real_shader_locked(Group& g, Stream& s, u64 spd_va, u32 stage, u64* bad_va) REQUIRES(lock_);
    RealJob real_shader_env_locked(Group& g, Stream& s, u64 srt, u64 fau, u64 tsd) REQUIRES(lock_);
    RealJob real_fragment_locked(Group& g, Stream& s, u64 fbd_ptr, u32* tile_px, u64* bad_va) REQUIRES(lock_);
    ktime_t real_duration_locked(ktime_t size_ns) const REQUIRES(lock_);

    // cs_heap.cpp
    // Takes the chunks a tiling job needs; false: the RUN returns *step instead of queueing it
    // (blocked on OOM or a stall, or redirected to the exception handler, or retired with a fault).
    bool heap_take_chunks_locked(Group& g, Stream& s, u32 chunks, Step* step) REQUIRES(lock_);
    Step heap_operation_locked(Group& g, Stream& s, const panthor::cs::Instr& in) REQUIRES(lock_);
    Step finish_fragment_locked(Group& g, Stream& s, const panthor::cs::Instr& in) REQUIRES(lock_);

    // cs_jobs.cpp
    void queue_job_locked(Job j) REQUIRES(lock_);
    void dispatch_locked() REQUIRES(lock_);
    bool may_start_locked(const Job& j, bool* reserve) const REQUIRES(lock_);
    void start_job_locked(Job& j) REQUIRES(lock_);
    void release_core_locked(Job& j) REQUIRES(lock_);
    void trace_job_begin_locked(Job& j) REQUIRES(lock_);
    void trace_job_end_locked(Job& j) REQUIRES(lock_);
    static u32 trace_job_track(const Job& j);
    void jobs_fired_locked();
    void rearm_jobs_locked() REQUIRES(lock_);
    void complete_job_locked(size_t idx) REQUIRES(lock_);
    void drop_jobs_locked(u32 csg, u32 cs) REQUIRES(lock_);  // cs = ~0u: the whole group
    void stream_jobs_changed_locked(Group& g, Stream& s) REQUIRES(lock_);

    u64 reg64(const Stream& s, u8 r) const { return s.regs[r & 127] | (u64{s.regs[(r + 1) & 127]} << 32); }
    void set_reg64(Stream& s, u8 r, u64 v) {
        s.regs[r & 127] = static_cast<u32>(v);
        s.regs[(r + 1) & 127] = static_cast<u32>(v >> 32);
    }

    Gpu& gpu_;
    kshim::SpinLock& lock_;  // gpu_.lock(): every _locked method asserts it
    u32 nregs_ = 96;
    u32 nsb_ = 8;
    std::vector<std::unique_ptr<Group>> groups_ GUARDED_BY(lock_);
    std::vector<Job> jobs_ GUARDED_BY(lock_);  // on the GPU (queued or holding a core), in issue order
    std::vector<Job*> dispatch_order_;         // dispatch_locked's scratch list
    u64 job_seq_ GUARDED_BY(lock_) = 0;
    u32 cores_busy_ GUARDED_BY(lock_) = 0;
    u64 busy_ns_ GUARDED_BY(lock_) = 0;         // closed busy intervals (cores_busy_ > 0)
    ktime_t busy_since_ GUARDED_BY(lock_) = 0;  // start of the open one, when cores_busy_ > 0
    void set_cores_busy_locked(u32 n) REQUIRES(lock_);
    std::unique_ptr<HwEvent> run_ev_, jobs_ev_, poll_ev_;
    bool running_ GUARDED_BY(lock_) = false;  // MCU up
    bool pc_set_ GUARDED_BY(lock_) = false;   // the executing instruction moved the pc itself
    u64 instrs_ = 0, interpreted_ = 0, jobs_done_ = 0, real_jobs_done_ = 0, polls_ = 0;
    // One suspend-buffer record being built or checked (3.4 KiB: kept rather than constructed per
    // stream).
    SavedStream saved_scratch_{};
};

}  // namespace mock_hw
