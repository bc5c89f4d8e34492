// The CSF firmware's group scheduler and command-stream interpreter (issue 9): CSG slots (STATE
// START/SUSPEND/RESUME/TERMINATE, EP_CFG, STATUS_UPDATE, the SYNC_UPDATE/IDLE/PROGRESS_TIMER
// events), CS slots (START/STOP, ring-buffer fetch between CS_EXTRACT and CS_INSERT, idle
// reporting), an interpreter for every v10 opcode (panthor/cs_isa.h), timed "mock shader" jobs on a
// shared pool of shader cores, sync objects, the tiler heap OOM handshake, suspend buffers, and the
// CS_FAULT/CS_FATAL paths including MMU faults. Facts: hw-interface.md §3.3-3.8, 4, 5.
//
// Design. Everything runs under the Gpu lock from HwEvents. A CSG doorbell schedules a scan of
// the slot (csg_request later); the scan acks EP_CFG/STATUS_UPDATE, handles the per-CS requests
// and starts a state transition whose ack lands csg_state later (SUSPEND: once the group's jobs
// drained, csg_suspend later). Streams run in slices of cs_slice_instrs instructions from one
// engine-wide "run" event; a slice costs cs_slice of virtual time, so an endless MOVE/BRANCH loop
// advances time instead of stopping it. An instruction that cannot complete (SB wait, SYNC_WAIT,
// MMU stall, OOM reply, fault ack) leaves the stream's pc on it and is re-executed when the
// stream is woken, which is also how a suspended stream resumes exactly where it stopped.
// Memory goes through Mmu accessors: the group's streams through the AS in CSG config, the
// user-I/O pages and suspend buffers through AS 0.
#pragma once
#include <deque>
#include <memory>
#include <vector>

#include "mock_hw/csf_engine.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/mmu.h"
#include "panthor/cs_isa.h"
#include "panthor/fw_iface.h"

namespace mock_hw {

class Gpu;

// The "mock shader" a RUN_* instruction executes: 64 bytes at the address the RUN reads its
// program descriptor from (RUN_COMPUTE/RUN_TILING/RUN_COMPUTE_INDIRECT: the SPD dreg
// d(16 + 2 * spd_sel); RUN_IDVS: d16; RUN_FRAGMENT: d40 & ~63 (the FBD pointer); RUN_FULLSCREEN:
// the DCD dreg). Read through the group's AS, so an unmapped descriptor faults like hardware.
struct MockShader {
    static constexpr u32 kMagic = 0x4448534D;  // "MSHD"
    enum Kind : u32 {
        Run = 0,     // occupy a core for duration_ns
        Write = 1,   // ...then write the 64-bit `value` at `addr` (group AS)
        Hang = 2,    // never completes (a shader stuck in a loop)
        Access = 3,  // ...then read 8 bytes at `addr` (to provoke an MMU fault)
        Fault = 4,   // ...then report CS_FAULT with exception `value` (e.g. 0x58 DATA_INVALID_FAULT)
    };
    u32 magic = kMagic;
    u32 kind = Run;
    u64 duration_ns = 0;
    u64 addr = 0;
    u64 value = 0;
    u32 heap_chunks = 0;  // RUN_IDVS / RUN_TILING: tiler heap chunks this job consumes
    u32 reserved[7] = {};
};
static_assert(sizeof(MockShader) == 64);

// The mock's tiler heap context (the 32 bytes at the HEAP_SET address; opaque to the driver, which
// only zeroes it). `free_chunk` is the next chunk to consume, encoded like the chunk header's
// `next` (VA | size >> 12); userspace seeds it with first_heap_chunk_gpu_va. Each consumed chunk's
// header `next` gives the following one; 0 means the heap is exhausted (TILER_OOM).
struct MockHeapContext {
    u64 free_chunk;
    u64 chunks_used;
    u64 last_chunk;
    u64 reserved;
};
static_assert(sizeof(MockHeapContext) == 32);

// One stream's state in the suspend buffer (at suspend_buf + cs * kSaveStride, through AS 0).
inline constexpr u32 kSaveStride = 0x1000;
inline constexpr u32 kSaveMagic = 0x53435355;  // "USCS"

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
    u32 cores_total_locked() const;
    u32 cores_busy_locked() const { return cores_busy_; }
    u64 jobs_completed() const { return jobs_done_; }

    enum class Block : u8 { None, SbWait, SyncWait, Mmu, Oom, FaultAck, Fatal, Resource };

private:
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
        uint16_t wait_mask = 0;  // SB_WAIT / WAIT mask
        bool wait_instr = false;  // blocked by a WAIT instruction (status SB source 8)
        // SYNC_WAIT being waited on
        u64 sync_ptr = 0, sync_value = 0;
        u8 sync_cond = 0;
        bool sync64 = false;
        bool in_error = false;  // CS_FAULT raised, until ERROR_BARRIER
        u32 last_error = 0;
        u64 heap_ctx = 0;
        u32 heap_vt_start = 0, heap_vt_end = 0, heap_frag_end = 0;
        u64 oom_heap = 0;  // heap context waiting for a chunk
        bool oom_replied = false;  // the host acked TILER_OOM; oom_chunk is its heap_start
        u64 oom_chunk = 0;
        u64 progress = 0;
        u8 exc_handler_type = 0;
        u64 exc_handler_addr = 0;
        u32 exc_handler_len = 0;
        u32 req_resource = 0;
        u32 stalled_as = ~0u;
        bool mmu_bus_fault = false;
        // config copied from the CS input block at START/RESUME
        u64 ring_base = 0;
        u32 ring_size = 0;
        u64 io_in = 0, io_out = 0;
        u32 cs_config = 0;
        u32 cs_req_cfg = 0;  // IDLE_* / EXTRACT_EVENT config bits last acked
        u32 jobs = 0;        // in-flight async ops of this stream
        // fetch cache: up to 8 instructions at fetch_va
        u64 fetch_va = ~0ull;
        u32 fetch_n = 0;
        u64 fetch_buf[8] = {};
    };
    enum class GState : u8 { Off, Running, Suspending, Suspended, Terminating };
    struct Group {
        u32 slot = 0;
        GState state = GState::Off;
        u32 pending_state = 0xFF;  // state request in flight
        u32 as = 0;
        u32 priority = 0;
        u32 ep_compute = 0;  // endpoint_req[7:0]: cores this group may occupy at once (0 = no limit)
        u32 running = 0;     // its jobs holding a core
        u64 suspend_buf = 0;
        bool idle = true;
        bool suspend_stuck = false;
        std::vector<Stream> cs;
        std::unique_ptr<HwEvent> scan_ev, state_ev, progress_ev, delayed_ack_ev;
        u32 delayed_bits = 0, dropped_bits = 0;
        bool progress_reported = false;
        u32 track = 0;
    };
    struct Job {
        u32 csg, cs;
        u8 slot;
        bool uses_core;
        bool started = false;
        bool stalled = false;
        MockShader shader;
        ktime_t end = 0;
        u32 prio = 0;
        u64 seq = 0;
        bool flush = false, flush_l2 = false;
        u32 trace_id = 0;
    };

    // csg.cpp
    void csg_scan_locked(Group& g);
    void csg_apply_state_locked(Group& g, u32 state);
    void csg_state_done_locked(Group& g);
    void csg_raise_event_locked(Group& g, u32 bit);
    void csg_status_update_locked(Group& g);
    void cs_scan_locked(Group& g, Stream& s);
    void cs_start_locked(Group& g, Stream& s, bool fresh);
    void cs_raise_event_locked(Group& g, Stream& s, u32 bit);
    void cs_publish_status_locked(Stream& s);
    void cs_write_extract_locked(Stream& s, bool active);
    void save_group_locked(Group& g);
    bool restore_group_locked(Group& g);
    void drop_group_jobs_locked(Group& g);
    void update_idle_locked();
    void delayed_ack_locked(Group& g);
    void progress_timer_fired_locked(Group& g);
    void rearm_progress_locked(Group& g);
    void poll_locked();
    u64 csg_in(u32 slot) const;
    u64 csg_out(u32 slot) const;
    u64 cs_in(u32 slot, u32 cs) const;
    u64 cs_out(u32 slot, u32 cs) const;

    // cs_exec.cpp
    void kick_locked();
    void run_locked();
    bool runnable_locked(const Group& g, const Stream& s) const;
    // Executes up to `budget` instructions; returns how many ran.
    u32 exec_stream_locked(Group& g, Stream& s, u32 budget);
    enum class Step : u8 { Next, Block, Stop };
    Step exec_one_locked(Group& g, Stream& s, const panthor::cs::Instr& in, u64 next_pc);
    bool fetch_locked(Group& g, Stream& s, u64* instr);
    bool refresh_insert_locked(Stream& s);
    bool stream_idle_locked(const Stream& s) const;
    bool sb_busy(const Stream& s, uint16_t mask) const;
    bool mem_read_locked(Group& g, Stream& s, u64 va, void* dst, size_t len);
    bool mem_write_locked(Group& g, Stream& s, u64 va, const void* src, size_t len);
    void mem_fail_locked(Group& g, Stream& s, const MemResult& r);
    void fatal_locked(Group& g, Stream& s, u32 exception, u64 info);
    void fault_locked(Group& g, Stream& s, u32 exception, u64 info);
    void bus_fault_locked(Group& g, Stream& s, u64 va);
    bool sync_satisfied(u64 v, u64 ref, u8 cond) const;
    Step sync_wait_locked(Group& g, Stream& s, const panthor::cs::Instr& in);
    void sync_written_locked(Group& g, bool system_scope);
    void reeval_sync_waits_locked();
    Step issue_job_locked(Group& g, Stream& s, const panthor::cs::Instr& in);
    bool heap_take_chunk_locked(Group& g, Stream& s, u32 chunks);
    void dispatch_locked();
    void start_job_locked(Job& j);
    void jobs_fired_locked();
    void rearm_jobs_locked();
    void complete_job_locked(size_t idx);
    void stream_jobs_changed_locked(Group& g, Stream& s);
    u64 reg64(const Stream& s, u8 r) const { return s.regs[r & 127] | (u64{s.regs[(r + 1) & 127]} << 32); }
    void set_reg64(Stream& s, u8 r, u64 v) {
        s.regs[r & 127] = static_cast<u32>(v);
        s.regs[(r + 1) & 127] = static_cast<u32>(v >> 32);
    }

    Gpu& gpu_;
    u32 nregs_ = 96;
    u32 nsb_ = 8;
    std::vector<std::unique_ptr<Group>> groups_;
    std::vector<Job> jobs_;  // in flight, in issue order
    u64 job_seq_ = 0;
    u32 cores_busy_ = 0;
    std::unique_ptr<HwEvent> run_ev_, jobs_ev_, poll_ev_;
    bool running_ = false;  // MCU up
    bool pc_set_ = false;   // the executing instruction moved the pc itself
    u64 instrs_ = 0, jobs_done_ = 0;
};

}  // namespace mock_hw
