// Fault injection for the mock GPUs: GPU, MMU, MCU boot and the GLB interface, the CSG/CS engine
// (Mali-G610) and the job slots (Mali-G52, mock_jm/).
// A FaultPlan is a list of FaultSpecs; each names what goes wrong and when:
//  - AtTime(t): for faults tied to an event (drop an ack, stuck AS, lost reset...), every
//    occurrence from virtual time t on; for spontaneous faults (FwHang, McuFatal, GpuFault) the
//    fault happens by itself at t.
//  - Nth(n): the n-th occurrence of the event (1-based).
//  - Probability(p): each occurrence with probability p, from a seeded PRNG (GpuConfig::fault_seed
//    or the runtime's seed), so a run replays.
//  - Always: every occurrence.
// max_fires bounds how often one spec fires (0 = no bound). Which event each kind counts is
// listed in docs/mock_hw.md.
#pragma once
#include <memory>
#include <vector>

#include "kernel_shim/spinlock.h"
#include "kernel_shim/types.h"
#include "mock_hw/hw_event.h"

namespace mock_hw {

using kshim::u32;
using kshim::u64;

class GpuBase;

enum class FaultKind {
    GlbAckDrop,           // a GLB request in glb_req_mask is never acked (counts GLB requests)
    GlbAckDelay,          // ...is acked `delay` late (counts GLB requests)
    FwHang,               // the MCU stops answering: no acks, no events, HALT ignored (GLB doorbells)
    McuFatal,             // MCU_STATUS = FATAL with GLB halt_status (GLB doorbells)
    BootFail,             // the MCU boot fails: no IRQ, MCU_STATUS = FATAL (MCU boots)
    GpuFault,             // GPU_INT FAULT with fault_status/fault_addr latched (GPU_CMD writes)
    AsActiveStuck,        // AS_STATUS.AS_ACTIVE never clears (AS_COMMAND writes on `as`, -1 = any)
    ResetNeverCompletes,  // RESET_COMPLETED never raised (reset commands)
    FlushNeverCompletes,  // CLEAN_CACHES_COMPLETED never raised (FLUSH_CACHES commands)
    SlowPower,            // power transitions take slow_factor times longer (power transitions)
    // The CSG/CS engine. `csg`/`cs` narrow to one slot/stream (-1 = any).
    CsgAckDrop,             // a CSG request in csg_req_mask (STATE/EP_CFG/STATUS_UPDATE) is never acked (CSG requests)
    CsgAckDelay,            // ...is acked `delay` late (CSG requests)
    CsgWrongState,          // a STATE request is acked with `wrong_state` instead (CSG state requests)
    CsFatal,                // CS_FATAL with `exception` on the stream (cs_event; AtTime + RunIssue: spontaneous)
    CsFault,                // CS_FAULT with `exception` on the stream (cs_event; AtTime + RunIssue: spontaneous)
    CsUnrecoverable,        // CS_FATAL CS_UNRECOVERABLE (cs_event; AtTime + RunIssue: spontaneous)
    ShaderHang,             // the job never completes (RUN_* issues)
    MmuFaultAt,             // the job accesses fault_addr in the group's AS when it completes (RUN_* issues)
    SuspendNeverCompletes,  // a SUSPEND is never acked (CSG SUSPEND requests)
    CorruptSuspendBuffer,   // the suspend buffer written by a SUSPEND is corrupted (CSG SUSPEND completions)
    // The Job Manager GPU's job slots (mock_jm/). `js` narrows to one slot (-1 = any). They count
    // the jobs a slot starts (JobHang, JobFault, JobBusFault; MmuFaultAt too on a JM GPU), the
    // chains that end (JobIrqLost) or the stop commands (SoftStopIgnored). ResetNeverCompletes and
    // SlowPower apply to a JM GPU as to the G610.
    JobHang,          // the job never completes; only a hard stop or a reset ends it
    JobFault,         // the job fails with `exception` (written back into its header)
    JobBusFault,      // the job fails with JOB_BUS_FAULT and GPU_INT FAULT latches a bus fault at fault_addr
    JobIrqLost,       // the chain ends (status, TAIL, JS_STATE updated) but its JOB_INT bit is never raised
    SoftStopIgnored,  // a SOFT_STOP (or a matching _0/_1 variant) never takes effect
};
const char* fault_kind_name(FaultKind k);

struct FaultTrigger {
    enum class Type { Always, AtTime, Nth, Probability };
    Type type = Type::Always;
    ktime_t at = 0;
    u64 nth = 1;
    double probability = 0.0;

    static FaultTrigger always() { return {}; }
    static FaultTrigger at_time(ktime_t t) { return {Type::AtTime, t, 1, 0.0}; }
    static FaultTrigger nth_occurrence(u64 n) { return {Type::Nth, 0, n, 0.0}; }
    static FaultTrigger with_probability(double p) { return {Type::Probability, 0, 1, p}; }
};

// What CsFatal/CsFault/CsUnrecoverable count. RunIssue: each RUN_* a matching stream issues (the
// RUN retires with the exception). Instruction: each instruction a matching stream starts, counted
// once however often a blocked instruction re-executes, in the order the stream runs them (called
// buffers included); so with one stream selected, nth_occurrence(n) is the n-th instruction that
// stream starts after the spec was added (suspend/resume does not restart the count; a blocked
// instruction saved by a suspend is still the same instruction when it re-executes after the
// RESUME). The exception replaces the instruction: it retires without running, and the
// fault/fatal info is its GPU VA.
enum class CsFaultEvent { RunIssue, Instruction };

struct FaultSpec {
    FaultKind kind = FaultKind::GpuFault;
    FaultTrigger trigger;
    u32 glb_req_mask = ~0u;   // GlbAckDrop / GlbAckDelay
    ktime_t delay = 0;        // GlbAckDelay
    u32 halt_status = 0x4E;   // McuFatal (GLB_HALT_STATUS_PANIC)
    u32 fault_status = 0x80;  // GpuFault (GPU_BUS_FAULT)
    u64 fault_addr = 0;       // GpuFault
    int as = -1;              // AsActiveStuck
    u32 slow_factor = 10;     // SlowPower
    u32 max_fires = 1;        // 0 = unbounded
    // For the CSG/CS engine kinds.
    u32 csg_req_mask = ~0u;  // CsgAckDrop / CsgAckDelay: CSG_REQ bits (STATE = 0x7, EP_CFG, STATUS_UPDATE)
    int csg = -1;            // CSG slot (-1 = any)
    int cs = -1;             // CS slot within the CSG (-1 = any)
    u32 exception = 0x58;    // CsFatal / CsFault: exception type [7:0] | data << 8 (default DATA_INVALID_FAULT)
    u32 wrong_state = 0;     // CsgWrongState: the state reported in CSG_ACK[2:0]
    CsFaultEvent cs_event = CsFaultEvent::RunIssue;  // CsFatal / CsFault / CsUnrecoverable
    int js = -1;                                     // the JM kinds: job slot (-1 = any)
};

class FaultPlan {
public:
    explicit FaultPlan(GpuBase& gpu);
    ~FaultPlan();

    // Adds a spec; returns its id. Spontaneous AtTime faults are armed at once.
    int add(const FaultSpec& spec);
    void clear();
    // How often spec `id` fired so far.
    u64 fired(int id) const;

    // Hardware side, Gpu lock held: one occurrence of the event `kind` counts. Returns the
    // spec that fires for it, or nullptr. `bits`/`as` narrow GLB and AS kinds.
    // `csg`/`cs` narrow the CSG/CS kinds.
    const FaultSpec* occurrence_locked(FaultKind kind, u32 bits = ~0u, int as = -1, int csg = -1, int cs = -1,
                                       int js = -1);
    // One instruction started on stream (csg, cs): the CsFatal/CsFault/CsUnrecoverable spec with
    // cs_event = Instruction that fires for it, or nullptr.
    const FaultSpec* cs_instruction_locked(int csg, int cs);
    // Whether any spec counts instructions (the engine skips the per-instruction call otherwise).
    bool counts_instructions_locked() const {
        lockdep_assert_held(&lock_);
        return instr_specs_ != 0;
    }
    // Stops the timers (Gpu destructor, without the lock).
    void shutdown();

private:
    struct Entry {
        FaultSpec spec;
        u64 seen = 0;
        u64 fired = 0;
        std::unique_ptr<HwEvent> timer;
    };
    static bool cs_exception(FaultKind k) {
        return k == FaultKind::CsFatal || k == FaultKind::CsFault || k == FaultKind::CsUnrecoverable;
    }
    static bool counts_instructions(const FaultSpec& s) {
        return cs_exception(s.kind) && s.cs_event == CsFaultEvent::Instruction;
    }
    static bool spontaneous(const FaultSpec& s) {
        if (counts_instructions(s))
            return false;
        return s.kind == FaultKind::FwHang || s.kind == FaultKind::McuFatal || s.kind == FaultKind::GpuFault ||
               cs_exception(s.kind);
    }
    // One occurrence counted against e; true if its trigger fires for it.
    bool fires_locked(Entry& e) REQUIRES(lock_);
    double next_random_locked() REQUIRES(lock_);

    GpuBase& gpu_;
    kshim::SpinLock& lock_;                        // gpu_.lock(): every _locked method asserts it
    std::vector<std::unique_ptr<Entry>> entries_;  // under the Gpu lock
    u32 instr_specs_ = 0;                          // entries that count instructions (Gpu lock)
    u64 rng_state_;
};

}  // namespace mock_hw
