// The state of one `upanthor run` (runner.h), shared by the files that implement it: setup of the
// scenario's objects (run_setup.cpp), the job command streams (job_streams.cpp), the run itself
// (runner.cpp, on the skeleton of run_world.h) and the expectations and reports (run_report.cpp).
// The Job Manager runner (jm_runner.cpp) uses its job fences, expectation checks and report pieces
// too. (No upstream counterpart.)
#pragma once
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "drm/drm_file.h"
#include "host/world.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_sched.h"
#include "tools/upanthor/coredump_sink.h"
#include "tools/upanthor/runner.h"
#include "tools/upanthor/scenario.h"
#include "umd/panthor_client.h"

namespace upanthor::run_detail {

namespace sc = upanthor::scenario;
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;

// Per VM, the runner's own BO: command streams, mock shader descriptors, progress objects.
constexpr u64 kRunnerVa = 0x10000000;
constexpr u64 kRunnerSize = 8ull << 20;
// Scenario BOs without a fixed `va` are placed from here up.
constexpr u64 kUserVa = 0x40000000;
// With duration_us = 0 the run still stops after this much virtual time.
constexpr s64 kMaxRunNs = 600 * kshim::NSEC_PER_SEC;

inline u64 align_up(u64 v, u64 a) {
    return (v + a - 1) & ~(a - 1);
}

// "ETIMEDOUT" for -ETIMEDOUT (or ETIMEDOUT); "E?" for one it does not know.
const char* errno_name(int e);
// A dma_fence status as text: "signaled", "pending" or the errno's name.
std::string status_name(int st);
// The pct-th percentile of an ascending vector (0 when empty).
u64 percentile(const std::vector<u64>& sorted, unsigned pct);
// `s` as a JSON string literal.
std::string json_str(const std::string& s);
// Whether a job whose fence status is `st` (as status_name() reads it) meets `fe`; `want` gets
// the state `fe` expects, as text. The CSF and Job Manager runners check [[expect.fence]] alike.
bool fence_expect_holds(const sc::FenceExpect& fe, int st, std::string* want);
// An [[expect.memory]] check against the CPU mapping `bo_cpu` of its BO: "" when the 64-bit word
// there has the expected value, else the failure's text.
std::string memory_mismatch(const sc::Scenario& s, const sc::MemoryExpect& me, const u8* bo_cpu);

// One job instance's done fence and when it was submitted / completed, as both runners (CSF and
// Job Manager) track it. `cb` comes first so the fence callback finds its JobFence from the
// dma_fence_cb it is given.
struct JobFence {
    kshim::dma_fence_cb cb;
    kshim::dma_fence* fence = nullptr;
    s64 submit_ns = 0;
    s64 done_ns = 0;
    std::atomic<bool> done{false};  // set by the fence callback (another thread with --real)
    std::atomic<bool> cb_armed{false};
    int submit_error = 0;  // the submission failed: the job never ran
    size_t submission = 0;
    std::atomic<u32>* done_count = nullptr;

    // The job never ran (`err`): done at once, at its submit time.
    void fail_submit(int err) {
        submit_error = err;
        done = true;
        done_ns = submit_ns;
        ++*done_count;
    }
    // With `fence` set: done when it signals (at once when it already has).
    void arm();
    // Teardown: drops the callback (a no-op if it ran meanwhile) and the fence reference.
    void release();
};

// A CSF job instance: which instance of which group ran it.
struct Pending : JobFence {
    size_t group = 0;
    u32 group_inst = 0;
};

struct ClientRt {
    drm::drm_file* file = nullptr;
    std::unique_ptr<umd::DrmFileBackend> be;
    std::unique_ptr<umd::PanthorClient> c;
};

struct VmRt {
    size_t client = 0;
    u32 id = 0;
    umd::Bo bo;
    u8* cpu = nullptr;
    u64 used = 0;
    u64 next_va = kUserVa;
};

struct BoRt {
    umd::Bo bo;
    u8* cpu = nullptr;
    u64 va = 0;
};

struct GroupInst {
    u32 handle = 0;
    std::vector<u64> progress_va;  // per queue
};

struct GroupStats {
    u64 submitted = 0, completed = 0, failed = 0;
    std::vector<u64> latencies_us;
};

struct Failure {
    u32 line = 0;
    std::string what;
};

// What a run gave (runner.h), from a runner's results: each failure as "file:line: expectation
// failed: ..." and each kernel finding as "kernel: ...". Passed iff all three lists are empty.
RunOutcome make_outcome(const std::string& file, u64 seed, const std::string& setup_error,
                        const std::vector<Failure>& failures, const std::vector<std::string>& kernel_findings,
                        s64 virtual_ns, double wall_s);
// The end of a text summary: the setup error, the failed expectations and the kernel findings.
void report_problems(std::FILE* out, const std::string& file, const std::string& setup_error,
                     const std::vector<Failure>& failures, const std::vector<std::string>& kernel_findings);
// The JSON summary's "expectations_checked", "failures" and the "kernel_findings" items; the
// caller closes that list (what follows it differs between the runners).
void report_problems_json(std::FILE* out, u32 checked, const std::vector<Failure>& failures,
                          const std::vector<std::string>& kernel_findings);

class Runner {
public:
    Runner(const sc::Scenario& s, const RunOptions& o) : s_(s), opts_(o) {}

    // 0, or 1 with `setup_error_` set.
    int run();
    void report(std::FILE* out) const;
    void report_json(std::FILE* out) const;
    bool passed() const { return setup_error_.empty() && failures_.empty() && kernel_findings_.empty(); }
    RunOutcome outcome() const;
    const std::string& setup_error() const { return setup_error_; }
    u64 seed() const { return seed_; }

private:
    int setup(upanthor::host::Machine& m);
    // Adds the faults, issues the timed submissions, waits for the jobs, checks the expectations.
    int drive(kshim::Runtime& rt, mock_hw::MockPlatform& plat);
    int submit_instance(size_t sub, u32 inst);
    // The stream of job `j` on (group g instance gi, queue q): its VA and size.
    int stream_for(size_t j, size_t g, u32 gi, size_t q, u64* va, u32* size);
    u8* vm_alloc(size_t vm, u64 size, u64* va);
    void check_expectations();
    void teardown();
    // After the runtime is gone: leaks, kshim reports, tasks left blocked, as kernel_findings_.
    void progress(s64 now, s64 end);
    int fail_setup(const std::string& what, int err) {
        setup_error_ = what + ": " + errno_name(err) + " (" + std::to_string(err) + ")";
        return 1;
    }
    umd::PanthorClient& client_of_vm(size_t vm) { return *clients_[s_.vms[vm].client].c; }

    const sc::Scenario& s_;
    RunOptions opts_;
    u64 seed_ = 1;
    std::string setup_error_;
    panthor::panthor_device* ptdev_ = nullptr;
    std::vector<ClientRt> clients_;
    std::vector<VmRt> vms_;
    std::vector<BoRt> bos_;
    std::vector<umd::TilerHeap> heaps_;
    std::vector<std::vector<GroupInst>> groups_;
    std::vector<u32> syncobjs_;
    std::map<std::tuple<size_t, size_t, u32, size_t, bool>, std::pair<u64, u32>> streams_;
    std::vector<bool> heap_seeded_;
    std::vector<std::unique_ptr<Pending>> pending_;
    std::atomic<u32> done_count_{0};  // bumped by fence callbacks (other threads with --real)
    u32 total_ = 0;
    s64 t0_ = 0;
    s64 t_end_ = 0;
    double wall_ = 0;
    panthor::panthor_sched_stats stats_{};
    std::vector<GroupStats> gstats_;
    std::vector<Failure> failures_;
    std::vector<std::string> kernel_findings_;  // "leaked ...", "WARN ...", "task still blocked ..."
    std::vector<std::string> notes_;            // what was not checked, and why
    u64 busy0_ns_ = 0;                          // the mock's core-busy time at the start of the workload
    u64 gpu_busy_ns_ = 0;                       // ... during the workload
    u64 real_jobs0_ = 0;                        // jobs on real descriptors completed before the workload
    u64 real_jobs_ = 0;                         // ... during it (shaders not run: docs/mock_hw.md)
    u64 faults_fired_ = 0;                      // how often the scenario's and --inject faults fired
    std::atomic<u64> gpu_resets_{0};            // GPU soft/hard reset commands during the workload
    u32 checked_ = 0;
    double last_progress_wall_ = 0;
    // --coredump DIR: the devcoredump listener of this run (coredump_sink.h).
    std::unique_ptr<CoredumpSink> coredumps_;
};

}  // namespace upanthor::run_detail
