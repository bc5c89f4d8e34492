// JOB_CONTROL of the mock Mali-G52 (0x1000-0x1FFF): the job interrupt (DONE bits 0-15, FAIL bits
// 16-31), JOB_INT_JS_STATE and the job slots. Each slot has a current register set, the chain it
// runs, and a NEXT set software arms with JS_COMMAND_NEXT = START; the NEXT chain is promoted when
// the slot is idle, or right after the current chain completes, but never while a FAIL of the slot
// is unacknowledged. JS_COMMAND stops the current chain: SOFT_STOP at the next job boundary
// (STOPPED, JS_TAIL = the first unfinished job), HARD_STOP at once (TERMINATED); the _0/_1 forms
// only when the chain's JOB_CHAIN_FLAG matches. Chains are walked in GPU memory through the AS
// JS_CONFIG names (job_chain.cpp). Semantics and the mock's choices: docs/mock_jm.md.
//
// Everything that accompanies an interrupt (JS_STATUS, JS_TAIL, JS_STATE, header write-back,
// memory written by the jobs) is in place before the JOB_INT bit is raised.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "hw/jm/job_desc.h"
#include "kernel_shim/spinlock.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/irq_block.h"
#include "mock_hw/mmu.h"
#include "mock_hw/register_bank.h"
#include "mock_jm/config.h"

namespace mock_jm {

class JmGpu;
using mock_hw::IrqBlock;
using mock_hw::RegisterBank;

// Per-slot counters, for tests and benchmarks (read with the Gpu lock or after the slot is idle).
struct SlotStats {
    u64 chains_started = 0;
    u64 chains_done = 0;
    u64 chains_failed = 0;  // faults, STOPPED and TERMINATED
    u64 jobs_completed = 0;
    std::array<u64, panfrost::desc::kJobTypeCount> jobs_by_type{};
    u64 start_flushes = 0;          // clean+invalidate at chain start performed
    u64 start_flushes_skipped = 0;  // ...skipped by flush reduction
};

class JobControl {
public:
    JobControl(JmGpu& gpu, kshim::IrqLine& line);
    ~JobControl();

    RegisterBank& bank() { return bank_; }
    IrqBlock& irq() { return irq_; }
    u32 slot_count() const { return static_cast<u32>(slots_.size()); }
    const SlotStats& stats_locked(u32 js) const;

    // An AS command completed (the MMU's listener): slots stalled on that AS retry their access.
    void as_command_locked(u32 as, u32 cmd);
    // A GPU reset started: every slot stops where it is, raising nothing; armed NEXT sets are
    // dropped. The registers go back to their reset values at the end of the reset (reset_locked).
    void abort_all_locked();
    void reset_locked();

private:
    struct Slot;
    enum class Outcome { Continue, Wait, Ended };

    // Registers and commands (job_control.cpp).
    void command_locked(Slot& s, u32 cmd);
    void command_next_locked(Slot& s, u32 cmd);
    void fail_cleared_locked(u32 bits);
    u32 js_state_locked() const;
    void try_promote_locked(Slot& s);
    void start_chain_locked(Slot& s);
    // The chain ended: status, TAIL and the interrupt bit (DONE for status DONE, else FAIL).
    void end_chain_locked(Slot& s, u8 status, u64 tail);

    // Execution (job_chain.cpp).
    void step_locked(Slot& s);
    Outcome run_job_locked(Slot& s, ktime_t& spent);
    Outcome finish_job_locked(Slot& s, ktime_t& spent);
    // A memory access of the running job did not complete: stall, or end the chain.
    Outcome access_failed_locked(Slot& s, const mock_hw::MemResult& r);
    Outcome fail_job_locked(Slot& s, u8 exception, bool write_back);
    bool shader_job_time_locked(Slot& s, u32 type, ktime_t* t, mock_hw::MemResult& r);
    bool read_locked(Slot& s, u64 va, void* dst, size_t len, mock_hw::MemResult& r);
    bool write_locked(Slot& s, u64 va, const void* src, size_t len, mock_hw::MemResult& r);

    JmGpu& gpu_;
    kshim::SpinLock& lock_;  // gpu_.lock(): every _locked method asserts it
    RegisterBank bank_{"JOB_CONTROL"};
    IrqBlock irq_;
    std::vector<std::unique_ptr<Slot>> slots_;
};

}  // namespace mock_jm
