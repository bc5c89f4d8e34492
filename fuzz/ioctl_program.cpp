// (no upstream counterpart) fuzz_ioctl's decoder and executor (ioctl_program.h).
//
// Decoding and execution are one pass: each call reads its choices from the input as it runs,
// so a choice can depend on what earlier calls returned (the handles in the pools). Nothing the
// program does may hang the host: waits get finite deadlines, CPU-written command-stream words
// are made loop-free, and an instruction budget (a seeded CS_FATAL per ~100k instructions, via
// the mock's fault plan) ends any stream that the GPU itself rewrote into a loop.
//
// This file keeps what all calls share: the user-memory arena, the choices (handles from the
// pools, VAs, deadlines, user pointers, arrays), the dispatch of a call through the op table
// (fuzz/ioctl_ops.h) and process exit. What each op does is in fuzz/ioctl_ops_<family>.cpp.
#include "fuzz/ioctl_program.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/ioctl_ops.h"
#include "hw/csf/cs_isa.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sim_abort.h"
#include "kernel_shim/task.h"
#include "kernel_shim/time.h"
#include "mock_hw/fault_plan.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

uint64_t cs_sanitize_word(uint64_t word) {
    const auto op = static_cast<uint8_t>(word >> 56);
    if (op == panthor::cs::JUMP || op == panthor::cs::CALL)
        return 0;  // NOP
    if (op == panthor::cs::BRANCH) {
        const auto off = static_cast<int16_t>(word & 0xffff);
        if (off < 0)
            word = (word & ~uint64_t{0xffff}) | static_cast<uint16_t>(off == INT16_MIN ? INT16_MAX : -off);
    }
    return word;
}

namespace {

constexpr size_t kArenaSize = 256 * 1024;
alignas(4096) uint8_t g_arena[kArenaSize];
alignas(64) uint8_t g_scratch[8192];  // where bytes meant for an unusable pointer are written

// WARNs that upstream's code gives too when an allocation it does not expect to fail fails:
// accepted from an input that injected allocation failures, a finding otherwise.
bool expected_under_alloc_failure(const kshim::Report& r) {
    if (r.kind != kshim::ReportKind::Warn)
        return false;
    const std::string where = r.title + "\n" + r.detail;
    // panthor_vm_destroy's drm_WARN_ON(panthor_vm_unmap_range(...)): the unmap preallocates its
    // page tables and gpuva ops, which may fail; the VM's mappings then go when it is freed.
    return where.find("panthor_vm_unmap_range") != std::string::npos &&
           where.find("panthor_vm_destroy") != std::string::npos;
}

// Known upstream WARNs that userspace can reach, kept as upstream has them (docs/fuzzing.md,
// "Findings"): not findings, so that a campaign looks past them.
//  - GROUP_SUBMIT / async VM_BIND where a job waits on a (syncobj, point) that a later job of
//    the same batch signals while the syncobj has no fence there yet:
//    panthor_submit_ctx_add_sync_deps_to_job's drm_WARN_ON(!sig_sync->fence), then -EINVAL.
bool known_upstream_warn(const kshim::Report& r) {
    if (r.kind != kshim::ReportKind::Warn)
        return false;
    const std::string where = r.title + "\n" + r.detail;
    return where.find("WARN_ON(!sig_sync->fence)") != std::string::npos &&
           where.find("panthor_submit_ctx_add_sync_deps_to_job") != std::string::npos;
}
bool expected_in_any_input(const kshim::Report& r) {
    return known_upstream_warn(r);
}
bool expected_with_alloc_failures(const kshim::Report& r) {
    return known_upstream_warn(r) || expected_under_alloc_failure(r);
}

// The program's task is the one that fails allocations in a failure window (task-filter).
struct MakeItFail {
    MakeItFail() { kshim::current()->make_it_fail = true; }
    ~MakeItFail() { kshim::current()->make_it_fail = false; }
    MakeItFail(const MakeItFail&) = delete;
    MakeItFail& operator=(const MakeItFail&) = delete;
};

}  // namespace

void IoctlUserMem::reset() {
    for (auto& [p, n] : regs_)
        drm::uaccess_unregister(p, n);
    regs_.clear();
    used_ = 0;
}

uint8_t* IoctlUserMem::alloc(size_t n, size_t* cap, size_t skew) {
    used_ = (used_ + 63) & ~size_t{63};
    used_ = std::min(used_ + skew, kArenaSize);
    const size_t k = std::min(n, kArenaSize - used_);
    uint8_t* p = g_arena + used_;
    std::memset(p, 0, k);
    used_ += k;
    *cap = k;
    return p;
}

void IoctlUserMem::reg(const void* p, size_t n) {
    if (!n)
        return;
    drm::uaccess_register(p, n);
    regs_.emplace_back(p, n);
}

void IoctlProgram::note(const char* name, int ret) {
    if (!opts_.trace)
        return;
    char line[160];
    std::snprintf(line, sizeof line, "%3d f%d %s = %d\n", call_no_, cur_file_, name, ret);
    *opts_.trace += line;
}

drm::drm_file* IoctlProgram::file_for_call(int* idx) {
    int i = static_cast<int>(in_.below(kIoctlMaxFiles));
    for (int k = 0; k < kIoctlMaxFiles && !files_[i]; k++)
        i = (i + 1) % kIoctlMaxFiles;
    if (!files_[i]) {  // every file closed: reopen one
        render_[i] = true;
        if (drm::drm_open(&w_.ptdev()->base, &files_[i], true))
            files_[i] = nullptr;
    }
    *idx = i;
    return files_[i];
}

u32 IoctlProgram::pick(const std::vector<Obj>& pool) {
    const uint8_t s = in_.u8();
    if (!pool.empty() && s < 208)
        return pool[s % pool.size()].id;
    switch (s & 3) {
    case 0: return 0;
    case 1: return 1 + ((s >> 2) & 7);
    case 2: return ~0u;
    default: return in_.u32();
    }
}

u64 IoctlProgram::pick_va() {
    const uint8_t s = in_.u8();
    if (!mapped_.empty() && s < 160) {
        const Mapped& m = mapped_[s % mapped_.size()];
        return m.va + (in_.u8() % 4 == 0 ? (in_.u16() & ~u64{7}) % std::max<u64>(m.size, 8) : 0);
    }
    if (s < 224)
        return u64{0x1000000} + u64{0x10000} * in_.u8();  // a low, aligned window
    return in_.edge_u64();
}

u64 IoctlProgram::deadline() {
    // Absolute, on the runtime clock: past, now, or a little ahead; never "forever".
    const kshim::ktime_t now = kshim::ktime_get();
    switch (in_.below(6)) {
    case 0: return 0;
    case 1: return static_cast<u64>(now);
    case 2: return static_cast<u64>(now) + kshim::NSEC_PER_MSEC * in_.u8();
    case 3: return static_cast<u64>(now) + 10 * kshim::NSEC_PER_MSEC;
    case 4: return static_cast<u64>(now > 1000 ? now - 1000 : 0);
    default: return static_cast<u64>(now) + kshim::NSEC_PER_USEC * in_.u16();
    }
}

u64 IoctlProgram::user_buffer(size_t n, uint8_t** host, size_t* cap) {
    const uint8_t mode = in_.below(16);
    if (mode < 13) {
        const size_t skew = in_.u8() % 16 == 0 ? 1 + in_.u8() % 7 : 0;
        uint8_t* p = mem_.alloc(n, cap, skew);
        // A valid buffer, or (mode 11) one whose last part is not mapped, or (12) none of it.
        if (mode < 11)
            mem_.reg(p, *cap);
        else if (mode == 11)
            mem_.reg(p, *cap / 2);
        *host = p;
        return drm::user_ptr(p);
    }
    *host = g_scratch;
    *cap = sizeof g_scratch;
    switch (mode) {
    case 13: return 0;
    case 14: return u64{0xdead0000} + in_.u8();
    default: return in_.edge_u64();
    }
}

u32 IoctlProgram::count_edge(u32 typical_max) {
    const uint8_t s = in_.u8();
    if (s < 224)
        return s % (typical_max + 1);
    return in_.edge_u32();
}

u64 IoctlProgram::handle_array(u32 count, const std::vector<Obj>& pool) {
    uint8_t* host = nullptr;
    size_t cap = 0;
    const u64 p = user_buffer(std::min<size_t>(size_t{count} * 4, 16 * 1024), &host, &cap);
    for (size_t i = 0; i < count && (i + 1) * 4 <= cap; i++) {
        const u32 h = pick(pool);
        std::memcpy(host + i * 4, &h, 4);
    }
    return p;
}

u64 IoctlProgram::point_array(u32 count) {
    uint8_t* host = nullptr;
    size_t cap = 0;
    const u64 p = user_buffer(std::min<size_t>(size_t{count} * 8, 32 * 1024), &host, &cap);
    for (size_t i = 0; i < count && (i + 1) * 8 <= cap; i++) {
        const u64 v = in_.u8() < 200 ? in_.u8() % 8 : in_.edge_u64();
        std::memcpy(host + i * 8, &v, 8);
    }
    return p;
}

int IoctlProgram::pick_fd() {
    // A descriptor the program got back (a syncobj, sync_file or dma-buf), or an edge value.
    if (!fds_.empty() && in_.u8() < 220)
        return fds_[in_.below(static_cast<u32>(fds_.size()))];
    return in_.pick<int>({-1, 0, 3, 4, static_cast<int>(in_.edge_u32())});
}

void IoctlProgram::call() {
    int fi = 0;
    drm::drm_file* f = file_for_call(&fi);
    cur_file_ = fi;
    const IoctlOp op = ioctl_op_of_byte(in_.u8());
    if (opts_.ops)
        opts_.ops->push_back(static_cast<uint8_t>(op));
    if (!f)
        return;
    const IoctlOpDesc& d = ioctl_op_desc(op);
    // A teardown op (ioctl_ops.cpp says which and why) runs outside an allocation-failure
    // window, and what it queued runs before failures are armed again.
    const bool suspend_failures = fail_calls_left_ && d.teardown;
    if (suspend_failures)
        kshim::fault_inject_disarm();
    (this->*d.handler)(IoctlOpCall{f, fi, op});
    if (suspend_failures) {
        // What the teardown queued (group_release_work, the VM's deferred cleanup...) runs now,
        // still without injected failures, before the window goes on.
        w_.rt().advance(0);
        kshim::fault_inject_arm(fail_plan_);
    }
}

void IoctlProgram::teardown() {
    for (drm::VmArea* v : vmas_)
        drm::drm_munmap(v);
    vmas_.clear();
    for (int fd : fds_)
        drm::drm_fd_close(fd);
    fds_.clear();
    // Process exit closes every fd, also those the program never learnt (an ioctl whose size
    // hid the fd field, a bad output pointer): fds are allocated lowest first from 3.
    for (int fd = 3; drm::drm_fd_count() > fds_before_ && fd < 3 + 4096; fd++)
        drm::drm_fd_close(fd);
    for (int efd : eventfds_)
        kshim::eventfd_fd_close(efd);
    eventfds_.clear();
    for (drm::drm_file*& f : files_) {
        if (f)
            drm::drm_release(f);
        f = nullptr;
    }
    mem_.reset();
}

std::string IoctlProgram::run() {
    const MakeItFail make_it_fail;
    {
        // The instruction budget (see the file comment).
        mock_hw::FaultSpec s;
        s.kind = mock_hw::FaultKind::CsFatal;
        s.cs_event = mock_hw::CsFaultEvent::Instruction;
        s.trigger = mock_hw::FaultTrigger::with_probability(1e-5);
        s.max_fires = 0;
        budget_spec_ = w_.gpu().faults().add(s);
    }
    const int nfiles = 1 + static_cast<int>(in_.below(kIoctlMaxFiles));
    const int ncalls = 1 + static_cast<int>(in_.below(kIoctlMaxCalls));
    for (int i = 0; i < nfiles; i++) {
        render_[i] = i == 0 || in_.u8() < 200;
        if (drm::drm_open(&w_.ptdev()->base, &files_[i], render_[i]))
            files_[i] = nullptr;
    }
    try {
        for (call_no_ = 0; call_no_ < ncalls; call_no_++) {
            call();
            mem_.reset();
            if (fail_calls_left_ && --fail_calls_left_ == 0)
                kshim::fault_inject_disarm();
        }
        // Process exit (and the checks) with allocations working again.
        kshim::fault_inject_disarm();
        teardown();
    } catch (const kshim::SimAbort&) {
        problems_ += "simulation deadlock during the program (see the report)\n";
        kshim::fault_inject_disarm();
        mem_.reset();
        return problems_;
    }
    w_.gpu().faults().clear();
    std::string out = problems_ + w_.check(alloc_failed_ ? expected_with_alloc_failures : expected_in_any_input);
    // A reset that fails (a fault hit the reset, an allocation failed in it) leaves the device
    // unplugged, as upstream; only an injected fault explains that. The next input gets a
    // freshly booted device either way.
    const bool lost = w_.device_lost();
    if (lost && !injected_reset_)
        out += "the device was lost (unplugged) without an injected fault or allocation failure\n";
    if (lost) {
        if (opts_.trace)
            *opts_.trace += "  (device lost: rebooting the world)\n";
        out += w_.reboot();
    }
    return out;
}

std::string run_ioctl_program(PanthorWorld& world, const uint8_t* data, size_t size, const IoctlProgramOptions& opts) {
    world.mark();
    FuzzInput in(data, size);
    IoctlProgram p(world, in, opts);
    return p.run();
}

std::string run_ioctl_history(PanthorWorld& world, const std::vector<std::vector<uint8_t>>& inputs,
                              const IoctlProgramOptions& opts) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string where = "history input " + std::to_string(i + 1) + " of " + std::to_string(inputs.size());
        if (opts.trace)
            *opts.trace += where + ":\n";
        const std::string problems = run_ioctl_program(world, inputs[i].data(), inputs[i].size(), opts);
        if (!problems.empty())
            return where + ": " + problems;
    }
    return "";
}

}  // namespace upanthor_fuzz
