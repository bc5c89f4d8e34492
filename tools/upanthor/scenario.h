// upanthor scenario files: the in-memory model of one scenario and its TOML parser/validator.
// (No upstream counterpart.) The format is described in docs/scenario-format.md.
//
// parse_scenario() either returns a fully validated Scenario, in which every reference to another
// object is resolved to an index, or the list of everything wrong with the file; a runner never
// sees a half-valid scenario.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mock_hw/config.h"
#include "mock_hw/fault_plan.h"
#include "umd/cs_asm.h"

namespace upanthor::scenario {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;

// Where an object was defined (1-based), so a runner can point back at the file.
struct SourceLoc {
    u32 line = 0;
    u32 column = 0;
};

struct Diagnostic {
    std::string file;
    SourceLoc loc;
    std::string message;
    // "file:line:column: message"
    std::string to_string() const;
};

// A client is one open DRM file.
struct Client {
    std::string name;
    bool cap_sys_nice = false;  // may create HIGH/REALTIME groups
    SourceLoc loc;
};

struct Vm {
    std::string name;
    size_t client = 0;
    SourceLoc loc;
};

// The GPU a scenario runs on: the Mali-G610 (CSF, panthor) or the Mali-G52 (Job Manager,
// panfrost). Each model has its own work sections: groups, queues, jobs and submits on the G610;
// JM contexts, chains and jm_submits on the G52 (docs/scenario-format.md).
enum class GpuModel : u8 { G610, G52 };

struct BoValue {
    u64 offset = 0;  // 8-byte aligned, inside the BO
    u64 value = 0;
};

struct Bo {
    std::string name;
    size_t vm = 0;                // created by the VM's client, mapped in that VM
    u64 size = 0;                 // bytes, > 0; the driver rounds up to pages
    std::optional<u64> va;        // fixed GPU VA (4 KiB aligned); otherwise the runner picks one
    std::optional<u32> pattern;   // initial contents: this word repeated; zero otherwise
    std::vector<BoValue> values;  // then these u64 written at their offsets
    bool heap = false;            // g52: a growable heap (PANFROST_BO_HEAP | NOEXEC), never CPU-mapped
    SourceLoc loc;
};

struct TilerHeap {
    std::string name;
    size_t vm = 0;
    u32 chunk_size = 0;  // 4 KiB aligned, 128 KiB .. 8 MiB (panthor_heap_create)
    u32 initial_chunks = 0;
    u32 max_chunks = 0;
    u32 target_in_flight = 0;
    SourceLoc loc;
};

enum class GroupPriority : u8 { Low = 0, Medium = 1, High = 2, Realtime = 3 };  // PANTHOR_GROUP_PRIORITY_*

struct Queue {
    std::string name;
    u8 priority = 0;        // 0 .. 15 (CSF_MAX_QUEUE_PRIO)
    u32 ring_size = 16384;  // power of two, 4 KiB .. 64 KiB
    SourceLoc loc;
};

struct Group {
    std::string name;
    size_t vm = 0;  // the group's client is the VM's client
    GroupPriority priority = GroupPriority::Medium;
    u32 instances = 1;          // identical groups created from this entry; submissions go to each
    std::vector<Queue> queues;  // 1 .. cs_per_csg
    SourceLoc loc;
};

// A (group, queue) pair.
struct QueueRef {
    size_t group = 0;
    size_t queue = 0;
};

// One command-stream instruction of a job's `asm`, as umd/cs_asm.h parses it (register operands are
// indices; a 64-bit register dN is the pair rN, rN+1). A MOVE immediate may be `@bo` or
// `@bo+offset`, the BO's GPU VA, which only the runner knows: bo_ref is set and imm holds the
// offset.
using umd::cs::asm_op_name;
using umd::cs::AsmOp;

struct AsmInstr : umd::cs::AsmInstr {
    std::optional<size_t> bo_ref;  // the BO `symbol` names
    SourceLoc loc;                 // of the mnemonic, in the file
};

enum class JobKind : u8 { Compute, Store, Wait, Hang, FaultAccess, TilerFragment, Asm };
const char* job_kind_name(JobKind k);

struct Job {
    std::string name;
    JobKind kind = JobKind::Compute;
    // Compute
    u32 workgroups = 0;
    u64 duration_us = 0;
    // Store
    size_t bo = 0;
    u64 offset = 0;  // 8-byte aligned, inside the BO
    u64 value = 0;   // Store: the u64 written; Wait: the seqno waited for (>=)
    // Wait: another queue's sync object
    QueueRef wait_queue;
    // FaultAccess
    u64 address = 0;
    // TilerFragment
    size_t heap = 0;
    u32 chunks = 0;
    // Asm
    std::vector<AsmInstr> instrs;
    SourceLoc loc;
};

struct Syncobj {
    std::string name;
    size_t client = 0;
    bool timeline = false;
    SourceLoc loc;
};

struct SyncRef {
    size_t syncobj = 0;
    u64 point = 0;  // timeline only; for a repeated submission instance i uses point + i
};

struct Submission {
    QueueRef queue;
    size_t job = 0;
    u64 start_us = 0;  // at_us, or the first instance of a repeated submission
    u64 every_us = 0;  // 0: once
    u32 count = 1;
    std::vector<SyncRef> waits;
    std::vector<SyncRef> signals;
    std::string fence;  // names the job's done fence for expectations ("" = unnamed)
    SourceLoc loc;
};

// ---- Job Manager (g52) work ----

// A JM context of a client (DRM_IOCTL_PANFROST_JM_CTX_CREATE); submits without one use the file's
// default context (MEDIUM).
struct JmCtx {
    std::string name;
    size_t client = 0;
    u32 priority = 1;  // PANFROST_JM_CTX_PRIORITY_LOW/MEDIUM/HIGH = 0/1/2
    SourceLoc loc;
};

// Draw is panvk's pair of a VERTEX job and a TILER job depending on it.
enum class JmJobType : u8 { Null, WriteValue, CacheFlush, Compute, Vertex, Tiler, Fragment, Draw };
const char* jm_job_type_name(JmJobType t);

// One job of a chain, built with umd/pan_jc (tiling jobs are ordered by its scoreboard).
struct JmJob {
    JmJobType type = JmJobType::Null;
    // WriteValue: the u64 `value` written at `bo`+`offset`, or at the raw GPU VA `address`.
    std::optional<size_t> bo;
    u64 offset = 0;
    u64 address = 0;
    u64 value = 0;
    u64 invocations = 1;           // Compute/Vertex/Tiler/Draw
    u32 tiles_x = 1, tiles_y = 1;  // Fragment
    bool barrier = false;          // wait for every earlier job of the chain
    std::optional<u32> dep;        // dependency 1: 0-based position of an earlier job of the chain
    SourceLoc loc;
};

struct JmChain {
    std::string name;
    std::vector<JmJob> jobs;
    SourceLoc loc;
};

// A SUBMIT of a chain: PANFROST_JD_REQ_FS sends it to job slot 0, anything else to slot 1.
struct JmSubmission {
    size_t chain = 0;
    size_t client = 0;
    std::optional<size_t> ctx;  // none: the default context
    u32 requirements = 0;       // PANFROST_JD_REQ_*
    u64 start_us = 0;
    u64 every_us = 0;  // 0: once
    u32 count = 1;
    std::vector<size_t> bos;  // the BO list (implicit sync); the chain's BOs are always added
    std::vector<SyncRef> waits;
    std::vector<SyncRef> signals;
    std::string fence;
    SourceLoc loc;
};

struct Fault {
    mock_hw::FaultSpec spec;
    SourceLoc loc;
};

// Final state of a named fence: signalled without error, still pending, or failed with -errno.
struct FenceExpect {
    std::string fence;
    enum class State : u8 { Signaled, Pending, Error } state = State::Signaled;
    int error = 0;  // negative errno for State::Error
    SourceLoc loc;
};

struct GroupExpect {
    size_t group = 0;
    u32 state = 0;  // DRM_PANTHOR_GROUP_STATE_* flags, exactly
    SourceLoc loc;
};

struct MemoryExpect {
    size_t bo = 0;
    u64 offset = 0;
    u64 value = 0;
    SourceLoc loc;
};

// Upper bounds (µs of virtual time) on submit-to-done latency, over one group or all of them.
struct LatencyExpect {
    std::optional<size_t> group;
    std::optional<u64> p50_us, p99_us, max_us;
    SourceLoc loc;
};

struct Expectations {
    std::vector<FenceExpect> fences;
    std::vector<GroupExpect> groups;
    std::vector<MemoryExpect> memory;
    std::vector<LatencyExpect> latency;
    // g52: the GPU resets panfrost's recovery (panfrost_reset) issued, exactly.
    std::optional<u64> gpu_resets;
    SourceLoc gpu_resets_loc;
};

struct Scenario {
    std::string file;
    std::string name;
    std::string description;
    u64 seed = 0;         // 0: the runtime's default
    u64 duration_us = 0;  // virtual time to run for; 0: until every submission is done
    GpuModel model = GpuModel::G610;
    mock_hw::GpuConfig gpu;  // the G610 mock with the file's overrides applied (g610 only)
    std::vector<Client> clients;
    std::vector<Vm> vms;
    std::vector<Bo> bos;
    std::vector<TilerHeap> heaps;
    std::vector<Group> groups;
    std::vector<Job> jobs;
    std::vector<Syncobj> syncobjs;
    std::vector<Submission> submissions;
    std::vector<JmCtx> jm_ctxs;                // g52
    std::vector<JmChain> chains;               // g52
    std::vector<JmSubmission> jm_submissions;  // g52
    std::vector<Fault> faults;
    Expectations expect;
};

struct ParseResult {
    std::optional<Scenario> scenario;  // set iff diagnostics is empty
    std::vector<Diagnostic> diagnostics;
    bool ok() const { return scenario.has_value(); }
};

// Parses and validates `text`; `file` names it in diagnostics.
ParseResult parse_scenario(std::string_view text, std::string_view file);
struct InjectResult {
    std::optional<Fault> fault;  // set iff diagnostics is empty
    std::vector<Diagnostic> diagnostics;
};

// A `--inject SPEC`: one fault in the [[fault]] vocabulary as comma-separated key=value pairs
// ("kind=FwHang,at_us=2000", "kind=CsFatal,after_count=3,csg=0,exception=0x58"), checked exactly as a
// [[fault]] table against `gpu`. Diagnostics name the file "--inject"; their line is the pair's
// index + 1.
// `model` selects the fault kinds that apply (the JM kinds on g52).
InjectResult parse_inject(std::string_view spec, const mock_hw::GpuConfig& gpu, GpuModel model = GpuModel::G610);

// Reads `path` (an unreadable file is one diagnostic at 0:0) and parses it.
ParseResult parse_scenario_file(const std::string& path);

}  // namespace upanthor::scenario
