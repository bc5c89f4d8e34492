// One job slot's state (private to job_control.cpp and job_chain.cpp): the current set the running
// chain uses, whether NEXT is armed, the chain's progress (the job at JS_HEAD, the scoreboard of
// completed job indices) and the pending stop. The NEXT registers themselves are plain storage in
// the bank.
#pragma once
#include <memory>
#include <vector>

#include "mock_hw/hw_event.h"
#include "mock_jm/job_control.h"

namespace mock_jm {

struct JobControl::Slot {
    u32 n = 0;
    // The current set (JS_HEAD..JS_XAFFINITY), latched at promotion.
    u64 head = 0;  // the job being (or next to be) processed
    u64 affinity = 0;
    u32 config = 0;
    u32 xaffinity = 0;
    u32 flush_id = 0;
    u32 as = 0;

    bool armed = false;         // NEXT armed by START, not promoted yet
    bool active = false;        // a chain is in the current set (running, waiting or stalled)
    bool fail_pending = false;  // a FAIL bit of this slot awaits JOB_INT_CLEAR: no promotion
    bool stalled = false;       // the running job waits for the MMU (retried on an AS command)
    bool hung = false;          // FaultPlan JobHang: the job never completes
    bool waiting_dep = false;   // the job depends on an index no earlier job of the chain had
    // The job at `head` was read and is executing for a modelled time (a shader job); finish_job
    // completes it when the step event fires at its end.
    bool in_job = false;
    panfrost::desc::JobHeader hdr{};
    // The job at `head` started in chain generation `started_gen` and has not finished: running
    // it again is a retry after an MMU stall, not a new job (FaultPlan counts it once), and an
    // injected MmuFaultAt access (probe_va) is made again until it succeeds.
    bool started = false;
    u32 started_gen = 0;
    u64 started_job = 0;
    bool probe = false;
    u64 probe_va = 0;
    // The chain ran out of jobs inside a slice: DONE is raised when the slice's modelled time is up.
    bool finishing = false;
    u64 finish_tail = 0;
    // Stops: a soft stop waits for the job boundary; a hard stop ends the chain when its latency is
    // up (step_locked checks both first).
    bool soft_stop = false;
    bool hard_stop = false;
    ktime_t chain_start = 0;
    // JS_TAIL of a chain that ended STOPPED: a chain started there is its resumption and keeps
    // the scoreboard, so a job after the stop point may depend on one before it (Mesa chains do).
    u64 resume_tail = 0;

    // Scoreboard: generation stamps per job index, so a new chain clears it in O(1).
    std::vector<u32> done_gen;
    u32 gen = 0;
    bool index_done(u32 idx) const { return idx < done_gen.size() && done_gen[idx] == gen; }
    void mark_done(u32 idx) {
        if (done_gen.empty())
            done_gen.assign(1u << 16, 0);
        done_gen[idx] = gen;
    }

    SlotStats stats;
    std::unique_ptr<mock_hw::HwEvent> step_ev;
    u32 track = 0;  // trace track "JS<n>"
};

}  // namespace mock_jm
