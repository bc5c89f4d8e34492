// (no upstream counterpart) fuzz_ioctl's decoder and executor (ioctl_program.h).
//
// Decoding and execution are one pass: each call reads its choices from the input as it runs,
// so a choice can depend on what earlier calls returned (the handles in the pools). Nothing the
// program does may hang the host: waits get finite deadlines, CPU-written command-stream words
// are made loop-free, and an instruction budget (a seeded CS_FATAL per ~100k instructions, via
// the mock's fault plan) ends any stream that the GPU itself rewrote into a loop.
#include "fuzz/ioctl_program.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/drm_prime.h"
#include "drm/sync_file_ioctl.h"
#include "drm/uaccess.h"
#include "drm/uapi/drm.h"
#include "drm/uapi/panthor_drm.h"
#include "drm/uapi/sync_file.h"
#include "fuzz/fuzz_input.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sim_abort.h"
#include "kernel_shim/task.h"
#include "kernel_shim/time.h"
#include "mock_hw/cs_formats.h"
#include "panthor/cs_isa.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

uint64_t cs_sanitize_word(uint64_t word) {
    const auto op = static_cast<uint8_t>(word >> 56);
    if (op == panthor::cs::JUMP || op == panthor::cs::CALL) return 0;  // NOP
    if (op == panthor::cs::BRANCH) {
        const auto off = static_cast<int16_t>(word & 0xffff);
        if (off < 0) word = (word & ~uint64_t{0xffff}) | static_cast<uint16_t>(off == INT16_MIN ? INT16_MAX : -off);
    }
    return word;
}

namespace {

constexpr size_t kArenaSize = 256 * 1024;
alignas(4096) uint8_t g_arena[kArenaSize];
alignas(64) uint8_t g_scratch[8192];  // where bytes meant for an unusable pointer are written

constexpr int kMaxFiles = 3;
constexpr int kMaxCalls = 64;
// What the host spends on one request is bounded, not the request's validation: pinning a BO
// allocates and zeroes all of it from the page arena, and a tiler heap allocates its initial
// chunks at once. Requests that would pass validation and cost more than this are cut to it, so
// the fuzzer's RSS limit catches leaks, not legitimately large requests (edge values that fail
// validation are kept as they are).
constexpr u64 kMaxHostBytes = u64{4} << 20;

struct Obj {
    int file;
    u32 id;
};
struct Mapped {  // a VM_BIND map that succeeded: candidate stream addresses
    u64 va;
    u64 size;
};

// WARNs that upstream's code gives too when an allocation it does not expect to fail fails:
// accepted from an input that injected allocation failures, a finding otherwise.
bool expected_under_alloc_failure(const kshim::Report& r) {
    if (r.kind != kshim::ReportKind::Warn) return false;
    const std::string where = r.title + "\n" + r.detail;
    // panthor_vm_destroy's drm_WARN_ON(panthor_vm_unmap_range(...)): the unmap preallocates its
    // page tables and gpuva ops, which may fail; the VM's mappings then go when it is freed.
    return where.find("panthor_vm_unmap_range") != std::string::npos && where.find("panthor_vm_destroy") != std::string::npos;
}

// Known upstream WARNs that userspace can reach, kept as upstream has them (docs/fuzzing.md,
// "Findings"): not findings, so that a campaign looks past them.
//  - GROUP_SUBMIT / async VM_BIND where a job waits on a (syncobj, point) that a later job of
//    the same batch signals while the syncobj has no fence there yet:
//    panthor_submit_ctx_add_sync_deps_to_job's drm_WARN_ON(!sig_sync->fence), then -EINVAL.
bool known_upstream_warn(const kshim::Report& r) {
    if (r.kind != kshim::ReportKind::Warn) return false;
    const std::string where = r.title + "\n" + r.detail;
    return where.find("WARN_ON(!sig_sync->fence)") != std::string::npos &&
           where.find("panthor_submit_ctx_add_sync_deps_to_job") != std::string::npos;
}
bool expected_in_any_input(const kshim::Report& r) { return known_upstream_warn(r); }
bool expected_with_alloc_failures(const kshim::Report& r) { return known_upstream_warn(r) || expected_under_alloc_failure(r); }

// One call's user memory: a bump allocator in the arena and the ranges registered for it.
class UserMem {
public:
    ~UserMem() { reset(); }
    void reset() {
        for (auto& [p, n] : regs_) drm::uaccess_unregister(p, n);
        regs_.clear();
        used_ = 0;
    }
    // n zeroed bytes in the arena (fewer if it is full: *cap says how many), misaligned by `skew`.
    uint8_t* alloc(size_t n, size_t* cap, size_t skew = 0) {
        used_ = (used_ + 63) & ~size_t{63};
        used_ = std::min(used_ + skew, kArenaSize);
        const size_t k = std::min(n, kArenaSize - used_);
        uint8_t* p = g_arena + used_;
        std::memset(p, 0, k);
        used_ += k;
        *cap = k;
        return p;
    }
    void reg(const void* p, size_t n) {
        if (!n) return;
        drm::uaccess_register(p, n);
        regs_.emplace_back(p, n);
    }

private:
    size_t used_ = 0;
    std::vector<std::pair<const void*, size_t>> regs_;
};

class Program {
public:
    Program(PanthorWorld& w, FuzzInput& in, const IoctlProgramOptions& o) : w_(w), in_(in), opts_(o) {}
    std::string run();

private:
    // ---- choices ----
    drm::File* file_for_call(int* idx);
    u32 pick(const std::vector<Obj>& pool);
    u64 pick_va();
    u64 deadline();
    // A user buffer of n bytes for the kernel to read or write: valid, short, unmapped, null or
    // wild. Returns the user address; *host (capacity *cap) is where its contents go.
    u64 user_buffer(size_t n, uint8_t** host, size_t* cap);
    // An obj_array of `elem` byte elements, each filled by fill(i, dst) (dst holds elem bytes).
    template <class Fill>
    drm_panthor_obj_array obj_array(size_t elem, u32 typical_max, Fill fill);
    // An array of u32 handles / u64 points with `count` entries.
    u64 handle_array(u32 count, const std::vector<Obj>& pool);
    u64 point_array(u32 count);
    u32 count_edge(u32 typical_max);

    // The ioctl with the argument struct in user memory (usually registered, exact size).
    template <class T>
    int ioctl(drm::File* f, unsigned cmd, T& arg, const char* name);
    // The same for an ioctl of another descriptor kind: do(cmd, user address of the struct).
    template <class T, class Do>
    int user_ioctl(unsigned cmd, T& arg, const char* name, Do&& do_ioctl);

    void call();
    void op_write_stream();
    // The fd-level ops: PRIME, syncobj eventfd, sync_file and dma-buf descriptors, close(2).
    void op_prime_handle_to_fd(drm::File* f, int fi);
    void op_prime_fd_to_handle(drm::File* f, int fi);
    void op_syncobj_eventfd(drm::File* f);
    void op_sync_file_ioctl();
    void op_dma_buf_fd();
    void op_close_fd();
    // Fault injection: kernel allocations failing for a window of calls; a mock GPU fault.
    void op_fail_allocations();
    void op_gpu_fault();
    int pick_fd();
    void teardown();
    void note(const char* name, int ret);

    PanthorWorld& w_;
    FuzzInput& in_;
    const IoctlProgramOptions& opts_;
    UserMem mem_;
    drm::File* files_[kMaxFiles] = {};
    bool render_[kMaxFiles] = {};
    int cur_file_ = 0;
    int call_no_ = 0;
    std::vector<Obj> bos_, vms_, groups_, heaps_, syncobjs_;
    std::vector<int> fds_;
    std::vector<int> eventfds_;  // in-process eventfds (kshim's table), for SYNCOBJ_EVENTFD
    int fail_calls_left_ = 0;    // calls left in an allocation-failure window
    kshim::FaultPlan fail_plan_;  // ...and what fails in it
    bool injected_reset_ = false;  // a fault that brings a reset (or allocation failures) was injected
    bool alloc_failed_ = false;    // allocation failures were injected
    std::vector<u64> offsets_;  // mmap offsets from BO_MMAP_OFFSET (and the MMIO ones)
    std::vector<drm::VmArea*> vmas_;
    std::vector<Mapped> mapped_;
    std::string problems_;
    int budget_spec_ = -1;
    size_t fds_before_ = drm::drm_fd_count();
};

void Program::note(const char* name, int ret) {
    if (!opts_.trace) return;
    char line[160];
    std::snprintf(line, sizeof line, "%3d f%d %s = %d\n", call_no_, cur_file_, name, ret);
    *opts_.trace += line;
}

drm::File* Program::file_for_call(int* idx) {
    int i = static_cast<int>(in_.below(kMaxFiles));
    for (int k = 0; k < kMaxFiles && !files_[i]; k++) i = (i + 1) % kMaxFiles;
    if (!files_[i]) {  // every file closed: reopen one
        render_[i] = true;
        if (drm::drm_open(&w_.ptdev()->base, &files_[i], true)) files_[i] = nullptr;
    }
    *idx = i;
    return files_[i];
}

u32 Program::pick(const std::vector<Obj>& pool) {
    const uint8_t s = in_.u8();
    if (!pool.empty() && s < 208) return pool[s % pool.size()].id;
    switch (s & 3) {
        case 0: return 0;
        case 1: return 1 + ((s >> 2) & 7);
        case 2: return ~0u;
        default: return in_.u32();
    }
}

u64 Program::pick_va() {
    const uint8_t s = in_.u8();
    if (!mapped_.empty() && s < 160) {
        const Mapped& m = mapped_[s % mapped_.size()];
        return m.va + (in_.u8() % 4 == 0 ? (in_.u16() & ~u64{7}) % std::max<u64>(m.size, 8) : 0);
    }
    if (s < 224) return u64{0x1000000} + u64{0x10000} * in_.u8();  // a low, aligned window
    return in_.edge_u64();
}

u64 Program::deadline() {
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

u64 Program::user_buffer(size_t n, uint8_t** host, size_t* cap) {
    const uint8_t mode = in_.below(16);
    if (mode < 13) {
        const size_t skew = in_.u8() % 16 == 0 ? 1 + in_.u8() % 7 : 0;
        uint8_t* p = mem_.alloc(n, cap, skew);
        // A valid buffer, or (mode 11) one whose last part is not mapped, or (12) none of it.
        if (mode < 11) mem_.reg(p, *cap);
        else if (mode == 11) mem_.reg(p, *cap / 2);
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

u32 Program::count_edge(u32 typical_max) {
    const uint8_t s = in_.u8();
    if (s < 224) return s % (typical_max + 1);
    return in_.edge_u32();
}

template <class Fill>
drm_panthor_obj_array Program::obj_array(size_t elem, u32 typical_max, Fill fill) {
    drm_panthor_obj_array a{};
    a.count = count_edge(typical_max);
    a.stride = static_cast<u32>(elem);
    const uint8_t s = in_.u8();
    if (s >= 208) {
        switch (s & 7) {
            case 0: a.stride = 0; break;
            case 1: a.stride = static_cast<u32>(elem) - 4; break;
            case 2: a.stride = static_cast<u32>(elem) + 8; break;
            case 3: a.stride = static_cast<u32>(elem) + 1; break;
            case 4: a.stride = 4; break;
            case 5: a.stride = 0x10000; break;
            case 6: a.stride = ~0u; break;
            default: a.stride = in_.u16(); break;
        }
    }
    const size_t want = std::min<size_t>(size_t{a.count} * a.stride, 64 * 1024);
    uint8_t* host = nullptr;
    size_t cap = 0;
    a.array = user_buffer(want, &host, &cap);
    std::vector<uint8_t> e(elem);
    if (a.stride) {
        for (u32 i = 0; i < a.count && size_t{i} * a.stride < cap; i++) {
            std::fill(e.begin(), e.end(), 0);
            fill(i, e.data());
            std::memcpy(host + size_t{i} * a.stride, e.data(), std::min<size_t>({elem, a.stride, cap - size_t{i} * a.stride}));
        }
    }
    return a;
}

u64 Program::handle_array(u32 count, const std::vector<Obj>& pool) {
    uint8_t* host = nullptr;
    size_t cap = 0;
    const u64 p = user_buffer(std::min<size_t>(size_t{count} * 4, 16 * 1024), &host, &cap);
    for (size_t i = 0; i < count && (i + 1) * 4 <= cap; i++) {
        const u32 h = pick(pool);
        std::memcpy(host + i * 4, &h, 4);
    }
    return p;
}

u64 Program::point_array(u32 count) {
    uint8_t* host = nullptr;
    size_t cap = 0;
    const u64 p = user_buffer(std::min<size_t>(size_t{count} * 8, 32 * 1024), &host, &cap);
    for (size_t i = 0; i < count && (i + 1) * 8 <= cap; i++) {
        const u64 v = in_.u8() < 200 ? in_.u8() % 8 : in_.edge_u64();
        std::memcpy(host + i * 8, &v, 8);
    }
    return p;
}

template <class T>
int Program::ioctl(drm::File* f, unsigned cmd, T& arg, const char* name) {
    return user_ioctl(cmd, arg, name, [&](unsigned c, void* host) { return drm::ioctl(f, c, host); });
}

template <class T, class Do>
int Program::user_ioctl(unsigned cmd, T& arg, const char* name, Do&& do_ioctl) {
    // The size in the command: exact, or (rarely) older/newer userspace's.
    size_t size = sizeof(T);
    const uint8_t s = in_.u8();
    if (s >= 240) {
        switch (s & 7) {
            case 0: size = 0; break;
            case 1: size = sizeof(T) >= 8 ? sizeof(T) - 8 : 0; break;
            case 2: size = sizeof(T) + 8; break;
            case 3: size = sizeof(T) + 1; break;
            case 4: size = 4; break;
            case 5: size = 0x3fff; break;
            default: size = sizeof(T) > 1 ? sizeof(T) - 1 : 0; break;
        }
        cmd = (cmd & ~(0x3fffu << 16)) | (static_cast<unsigned>(size) << 16);
    }
    size_t cap = 0;
    uint8_t* host = mem_.alloc(std::max(size, sizeof(T)), &cap);
    std::memcpy(host, &arg, std::min(cap, sizeof(T)));
    const uint8_t how = in_.u8();
    if (how < 244) mem_.reg(host, std::min(cap, size));
    else if (how < 250) mem_.reg(host, std::min(cap, size) / 2);
    const int ret = static_cast<int>(do_ioctl(cmd, host));
    std::memcpy(&arg, host, std::min(cap, sizeof(T)));
    note(name, ret);
    return ret;
}

void Program::op_write_stream() {
    // Command-stream words (or data) written by the CPU through a mapping.
    std::vector<drm::VmArea*> mem;
    for (drm::VmArea* v : vmas_)
        if (v->addr) mem.push_back(v);
    if (mem.empty()) return;
    drm::VmArea* v = mem[in_.below(static_cast<u32>(mem.size()))];
    const size_t words = v->length / 8;
    size_t at = (in_.u16() % words);
    const u32 n = 1 + in_.below(16);
    auto* dst = static_cast<uint64_t*>(v->addr);
    for (u32 i = 0; i < n && at < words; i++, at++) {
        u64 word;
        switch (in_.below(8)) {
            case 0: word = panthor::cs::move48(static_cast<uint8_t>(in_.below(96)), pick_va()); break;
            case 1: word = panthor::cs::move32(static_cast<uint8_t>(in_.below(96)), in_.edge_u32()); break;
            case 2:
                word = panthor::cs::store_multiple(static_cast<uint8_t>(in_.below(96)), static_cast<uint8_t>(in_.below(96) & ~1u),
                                                   in_.u16());
                break;
            case 3:
                word = panthor::cs::sync_add64(static_cast<uint8_t>(in_.below(96) & ~1u), static_cast<uint8_t>(in_.below(96) & ~1u));
                break;
            case 4: word = panthor::cs::run_compute(1); break;
            case 5: {  // a mock shader descriptor (8 words) instead
                mock_hw::MockShader sh;
                sh.kind = in_.below(mock_hw::MockShader::kLastKind + 2);
                sh.duration_ns = kshim::NSEC_PER_USEC * in_.u8();
                sh.addr = pick_va();
                sh.value = in_.edge_u64();
                if (at + sizeof(sh) / 8 <= words) {
                    std::memcpy(dst + at, &sh, sizeof(sh));
                    at += sizeof(sh) / 8 - 1;
                }
                continue;
            }
            default: word = in_.u64(); break;
        }
        dst[at] = cs_sanitize_word(word);
    }
    note("cpu_write", 0);
}

void Program::call() {
    int fi = 0;
    drm::File* f = file_for_call(&fi);
    cur_file_ = fi;
    const uint8_t op = in_.u8();
    // Ops 240-255 are the later additions (fds, fault injection), so that most saved inputs keep
    // decoding to the programs they were found as.
    const int sel = op >= 240 ? 40 + (op - 240) % 8 : op % 40;
    if (opts_.ops) opts_.ops->push_back(static_cast<uint8_t>(sel));
    if (!f) return;
    // Teardown (GEM_CLOSE, SYNCOBJ_DESTROY, VM_DESTROY, GROUP_DESTROY, heap destroy, munmap, file
    // and fd close) and time passing (waits, advance: deferred frees run) are exempt from an
    // allocation-failure window: upstream's teardown allocates too (panthor_vm_unmap_range
    // preallocates its VMAs and page tables) and leaks what it cannot unmap when that fails
    // (panthor_kernel_bo_destroy silently, panthor_vm_destroy with a WARN), which is a known
    // limitation, not what this op is after. Creation and error paths stay covered. What the
    // teardown queued runs (advance(0)) before failures are armed again.
    bool teardown_op = false;
    for (int t : {2, 5, 8, 11, 19, 29, 35, 36, 38, 39, 45}) teardown_op |= sel == t;
    const bool suspend_failures = fail_calls_left_ && teardown_op;
    if (suspend_failures) kshim::fault_inject_disarm();
    switch (sel) {
        // ---------------- DRM core ----------------
        case 0: {
            drm::uapi::drm_version a{};
            uint8_t* host = nullptr;
            size_t cap = 0;
            a.name_len = in_.below(3) == 0 ? in_.edge_u64() : in_.u8() % 16;
            a.name = reinterpret_cast<char*>(user_buffer(std::min<size_t>(a.name_len, 256), &host, &cap));
            a.date_len = in_.u8() % 4;
            a.date = reinterpret_cast<char*>(user_buffer(a.date_len, &host, &cap));
            a.desc_len = in_.u8() % 32;
            a.desc = reinterpret_cast<char*>(user_buffer(a.desc_len, &host, &cap));
            ioctl(f, DRM_IOCTL_VERSION, a, "VERSION");
            break;
        }
        case 1: {
            drm_get_cap a{};
            a.capability = in_.pick<u64>({DRM_CAP_SYNCOBJ, DRM_CAP_SYNCOBJ_TIMELINE, DRM_CAP_TIMESTAMP_MONOTONIC,
                                          DRM_CAP_PRIME, 0, in_.edge_u64()});
            ioctl(f, DRM_IOCTL_GET_CAP, a, "GET_CAP");
            break;
        }
        case 2: {
            drm_gem_close a{};
            a.handle = pick(bos_);
            a.pad = in_.u8() < 250 ? 0 : 1;
            ioctl(f, DRM_IOCTL_GEM_CLOSE, a, "GEM_CLOSE");
            break;
        }
        case 3:
        case 4: {
            drm_syncobj_create a{};
            a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_CREATE_SIGNALED, 0, in_.edge_u32()});
            if (!ioctl(f, DRM_IOCTL_SYNCOBJ_CREATE, a, "SYNCOBJ_CREATE")) syncobjs_.push_back({fi, a.handle});
            break;
        }
        case 5: {
            drm_syncobj_destroy a{};
            a.handle = pick(syncobjs_);
            a.pad = in_.u8() < 250 ? 0 : 1;
            ioctl(f, DRM_IOCTL_SYNCOBJ_DESTROY, a, "SYNCOBJ_DESTROY");
            break;
        }
        case 6: {
            drm_syncobj_handle a{};
            a.handle = pick(syncobjs_);
            a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
                                     DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE | DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE,
                                     DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE, in_.edge_u32()});
            a.point = in_.u8() % 4;
            a.fd = -1;
            if (!ioctl(f, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, a, "SYNCOBJ_HANDLE_TO_FD") && a.fd >= 0) fds_.push_back(a.fd);
            break;
        }
        case 7: {
            drm_syncobj_handle a{};
            a.fd = !fds_.empty() && in_.u8() < 220 ? fds_[in_.below(static_cast<u32>(fds_.size()))]
                                                   : static_cast<int32_t>(in_.edge_u32());
            a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
                                     DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE | DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE,
                                     in_.edge_u32()});
            a.handle = (a.flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE) ? pick(syncobjs_) : 0;
            a.point = in_.u8() % 4;
            if (!ioctl(f, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, a, "SYNCOBJ_FD_TO_HANDLE") &&
                !(a.flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE))
                syncobjs_.push_back({fi, a.handle});
            break;
        }
        case 8: {
            drm_syncobj_wait a{};
            a.count_handles = count_edge(4);
            a.handles = handle_array(a.count_handles, syncobjs_);
            a.timeout_nsec = static_cast<int64_t>(deadline());
            a.flags = in_.u8() < 230 ? in_.u8() & 0xf : in_.edge_u32();
            a.deadline_nsec = deadline();
            ioctl(f, DRM_IOCTL_SYNCOBJ_WAIT, a, "SYNCOBJ_WAIT");
            break;
        }
        case 9:
        case 10: {
            drm_syncobj_array a{};
            a.count_handles = count_edge(4);
            a.handles = handle_array(a.count_handles, syncobjs_);
            a.pad = in_.u8() < 250 ? 0 : 1;
            if (sel == 9) ioctl(f, DRM_IOCTL_SYNCOBJ_RESET, a, "SYNCOBJ_RESET");
            else ioctl(f, DRM_IOCTL_SYNCOBJ_SIGNAL, a, "SYNCOBJ_SIGNAL");
            break;
        }
        case 11: {
            drm_syncobj_timeline_wait a{};
            a.count_handles = count_edge(4);
            a.handles = handle_array(a.count_handles, syncobjs_);
            a.points = point_array(a.count_handles);
            a.timeout_nsec = static_cast<int64_t>(deadline());
            a.flags = in_.u8() < 230 ? in_.u8() & 0xf : in_.edge_u32();
            a.deadline_nsec = deadline();
            ioctl(f, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, a, "SYNCOBJ_TIMELINE_WAIT");
            break;
        }
        case 12:
        case 13: {
            drm_syncobj_timeline_array a{};
            a.count_handles = count_edge(4);
            a.handles = handle_array(a.count_handles, syncobjs_);
            a.points = point_array(a.count_handles);
            a.flags = in_.u8() < 230 ? in_.u8() & 1 : in_.edge_u32();
            if (sel == 12) ioctl(f, DRM_IOCTL_SYNCOBJ_QUERY, a, "SYNCOBJ_QUERY");
            else ioctl(f, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, a, "SYNCOBJ_TIMELINE_SIGNAL");
            break;
        }
        case 14: {
            drm_syncobj_transfer a{};
            a.src_handle = pick(syncobjs_);
            a.dst_handle = pick(syncobjs_);
            a.src_point = in_.u8() % 4;
            a.dst_point = in_.u8() % 4;
            a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, in_.edge_u32()});
            ioctl(f, DRM_IOCTL_SYNCOBJ_TRANSFER, a, "SYNCOBJ_TRANSFER");
            break;
        }
        case 15: {  // any command number, any direction and size, arbitrary bytes
            uint8_t raw[256];
            in_.bytes(raw, sizeof raw);
            const unsigned nr = in_.u8();
            const unsigned dir = in_.u8() & 3;
            const unsigned size = in_.u8();
            const unsigned cmd = (dir << 30) | (size << 16) | ('d' << 8) | nr;
            size_t cap = 0;
            uint8_t* host = mem_.alloc(256, &cap);
            std::memcpy(host, raw, cap);
            mem_.reg(host, cap);
            note("raw_ioctl", drm::ioctl(f, cmd, host));
            break;
        }
        // ---------------- panthor ----------------
        case 16: {
            drm_panthor_dev_query a{};
            a.type = in_.u8() < 230 ? in_.u8() % 5 : in_.edge_u32();
            static constexpr u32 sizes[] = {sizeof(drm_panthor_gpu_info), sizeof(drm_panthor_csif_info),
                                            sizeof(drm_panthor_timestamp_info), sizeof(drm_panthor_group_priorities_info), 0};
            const uint8_t s = in_.u8();
            a.size = s < 128 ? sizes[a.type < 5 ? a.type : 4] : s < 160 ? 0 : s < 192 ? sizes[s % 4] + (s & 8) - 4 : in_.edge_u32();
            uint8_t* host = nullptr;
            size_t cap = 0;
            a.pointer = in_.u8() < 32 ? 0 : user_buffer(std::min<size_t>(a.size, 4096), &host, &cap);
            ioctl(f, DRM_IOCTL_PANTHOR_DEV_QUERY, a, "DEV_QUERY");
            break;
        }
        case 17:
        case 18: {
            drm_panthor_vm_create a{};
            a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
            a.user_va_range = in_.u8() < 128 ? 0 : in_.edge_u64();
            if (!ioctl(f, DRM_IOCTL_PANTHOR_VM_CREATE, a, "VM_CREATE")) vms_.push_back({fi, a.id});
            break;
        }
        case 19: {
            drm_panthor_vm_destroy a{};
            a.id = pick(vms_);
            a.pad = in_.u8() < 250 ? 0 : 1;
            ioctl(f, DRM_IOCTL_PANTHOR_VM_DESTROY, a, "VM_DESTROY");
            break;
        }
        case 20:
        case 21:
        case 22: {
            drm_panthor_vm_bind a{};
            a.vm_id = pick(vms_);
            a.flags = in_.pick<u32>({0, 0, DRM_PANTHOR_VM_BIND_ASYNC, in_.edge_u32()});
            std::vector<Mapped> maps;
            a.ops = obj_array(sizeof(drm_panthor_vm_bind_op), 3, [&](u32, uint8_t* dst) {
                drm_panthor_vm_bind_op o{};
                const uint8_t t = in_.u8();
                o.flags = t < 120   ? u32{DRM_PANTHOR_VM_BIND_OP_TYPE_MAP}
                          : t < 200 ? u32{DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP}
                          : t < 230 ? u32{DRM_PANTHOR_VM_BIND_OP_TYPE_SYNC_ONLY}
                                    : in_.edge_u32();
                if (in_.u8() >= 200) o.flags |= in_.u8() & 7;
                o.bo_handle = (o.flags & DRM_PANTHOR_VM_BIND_OP_TYPE_MASK) == DRM_PANTHOR_VM_BIND_OP_TYPE_MAP ? pick(bos_) : 0;
                o.bo_offset = in_.u8() < 200 ? 0x1000 * (in_.u8() % 4) : in_.edge_u64();
                o.va = pick_va();
                o.size = in_.u8() < 200 ? 0x1000 * (1 + in_.u8() % 64) : in_.edge_u64();
                o.syncs = obj_array(sizeof(drm_panthor_sync_op), 2, [&](u32, uint8_t* sd) {
                    drm_panthor_sync_op s{};
                    s.flags = in_.pick<u32>({DRM_PANTHOR_SYNC_OP_SIGNAL, DRM_PANTHOR_SYNC_OP_WAIT,
                                             DRM_PANTHOR_SYNC_OP_SIGNAL | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ,
                                             DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ, in_.edge_u32()});
                    s.handle = pick(syncobjs_);
                    s.timeline_value = in_.u8() % 4;
                    std::memcpy(sd, &s, sizeof s);
                });
                if ((o.flags & DRM_PANTHOR_VM_BIND_OP_TYPE_MASK) == DRM_PANTHOR_VM_BIND_OP_TYPE_MAP) maps.push_back({o.va, o.size});
                std::memcpy(dst, &o, sizeof o);
            });
            if (!ioctl(f, DRM_IOCTL_PANTHOR_VM_BIND, a, "VM_BIND"))
                for (const Mapped& m : maps)
                    if (mapped_.size() < 32) mapped_.push_back(m);
            break;
        }
        case 23: {
            drm_panthor_vm_get_state a{};
            a.vm_id = pick(vms_);
            ioctl(f, DRM_IOCTL_PANTHOR_VM_GET_STATE, a, "VM_GET_STATE");
            break;
        }
        case 24:
        case 25: {
            drm_panthor_bo_create a{};
            a.size = in_.u8() < 200 ? 0x1000 * (1 + in_.u8() % 64) : in_.edge_u64();
            // Pinning a BO allocates (and zeroes) all of it, page by page until the arena runs
            // out: sizes whose page array drm_gem_get_pages can allocate (up to 1 TiB: INT_MAX
            // bytes of page pointers) are cut to kMaxHostBytes; larger ones fail at once.
            if (a.size > kMaxHostBytes && a.size < (u64{1} << 40)) a.size = kMaxHostBytes;
            a.flags = in_.pick<u32>({0, 0, DRM_PANTHOR_BO_NO_MMAP, in_.edge_u32()});
            a.exclusive_vm_id = in_.u8() < 180 ? 0 : pick(vms_);
            a.pad = in_.u8() < 250 ? 0 : 1;
            if (!ioctl(f, DRM_IOCTL_PANTHOR_BO_CREATE, a, "BO_CREATE")) bos_.push_back({fi, a.handle});
            break;
        }
        case 26: {
            drm_panthor_bo_mmap_offset a{};
            a.handle = pick(bos_);
            a.pad = in_.u8() < 250 ? 0 : 1;
            if (!ioctl(f, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, a, "BO_MMAP_OFFSET") && offsets_.size() < 32)
                offsets_.push_back(a.offset);
            break;
        }
        case 27:
        case 28: {
            drm_panthor_group_create a{};
            const u64 shader = w_.ptdev()->gpu_info.shader_present;
            const u64 tiler = w_.ptdev()->gpu_info.tiler_present;
            a.queues = obj_array(sizeof(drm_panthor_queue_create), 3, [&](u32, uint8_t* dst) {
                drm_panthor_queue_create q{};
                q.priority = static_cast<uint8_t>(in_.u8() < 220 ? in_.u8() % 16 : in_.u8());
                q.ringbuf_size = in_.u8() < 200 ? in_.pick<u32>({4096, 8192, 16384, 65536}) : in_.edge_u32();
                if (in_.u8() >= 250) q.pad[0] = 1;
                std::memcpy(dst, &q, sizeof q);
            });
            const uint8_t m = in_.u8();
            a.compute_core_mask = m < 200 ? shader : in_.edge_u64();
            a.fragment_core_mask = m < 200 ? shader : in_.edge_u64();
            a.tiler_core_mask = m < 200 ? tiler : in_.edge_u64();
            a.max_compute_cores = static_cast<uint8_t>(m < 200 ? std::popcount(a.compute_core_mask) : in_.u8());
            a.max_fragment_cores = static_cast<uint8_t>(m < 200 ? std::popcount(a.fragment_core_mask) : in_.u8());
            a.max_tiler_cores = static_cast<uint8_t>(m < 200 ? std::popcount(a.tiler_core_mask) : in_.u8());
            a.priority = static_cast<uint8_t>(in_.u8() < 230 ? in_.u8() % 3 : in_.u8());
            a.vm_id = pick(vms_);
            if (!ioctl(f, DRM_IOCTL_PANTHOR_GROUP_CREATE, a, "GROUP_CREATE")) groups_.push_back({fi, a.group_handle});
            break;
        }
        case 29: {
            drm_panthor_group_destroy a{};
            a.group_handle = pick(groups_);
            ioctl(f, DRM_IOCTL_PANTHOR_GROUP_DESTROY, a, "GROUP_DESTROY");
            break;
        }
        case 30:
        case 31:
        case 32: {
            drm_panthor_group_submit a{};
            a.group_handle = pick(groups_);
            a.queue_submits = obj_array(sizeof(drm_panthor_queue_submit), 2, [&](u32, uint8_t* dst) {
                drm_panthor_queue_submit q{};
                q.queue_index = in_.u8() < 230 ? in_.u8() % 3 : in_.edge_u32();
                const uint8_t k = in_.u8();
                q.stream_addr = k < 32 ? 0 : pick_va();
                q.stream_size = k < 32 ? 0 : in_.u8() < 220 ? 8 * (1 + in_.u8() % 32) : in_.edge_u32();
                q.latest_flush = in_.u8() < 200 ? 0 : in_.u32();
                q.syncs = obj_array(sizeof(drm_panthor_sync_op), 3, [&](u32, uint8_t* sd) {
                    drm_panthor_sync_op s{};
                    s.flags = in_.pick<u32>({DRM_PANTHOR_SYNC_OP_SIGNAL, DRM_PANTHOR_SYNC_OP_WAIT,
                                             DRM_PANTHOR_SYNC_OP_SIGNAL | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ,
                                             DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ, in_.edge_u32()});
                    s.handle = pick(syncobjs_);
                    s.timeline_value = in_.u8() % 4;
                    std::memcpy(sd, &s, sizeof s);
                });
                std::memcpy(dst, &q, sizeof q);
            });
            ioctl(f, DRM_IOCTL_PANTHOR_GROUP_SUBMIT, a, "GROUP_SUBMIT");
            break;
        }
        case 33: {
            drm_panthor_group_get_state a{};
            a.group_handle = pick(groups_);
            ioctl(f, DRM_IOCTL_PANTHOR_GROUP_GET_STATE, a, "GROUP_GET_STATE");
            break;
        }
        case 34: {
            drm_panthor_tiler_heap_create a{};
            a.vm_id = pick(vms_);
            const uint8_t s = in_.u8();
            a.initial_chunk_count = s < 200 ? 1 + in_.u8() % 4 : in_.edge_u32();
            a.chunk_size = s < 200 ? in_.pick<u32>({128 * 1024, 256 * 1024, 2 * 1024 * 1024}) : in_.edge_u32();
            a.max_chunks = s < 200 ? 1 + in_.u8() % 16 : in_.edge_u32();
            a.target_in_flight = s < 200 ? in_.u8() % 8 : in_.edge_u32();
            // The initial chunks are allocated at once: a valid request for more than
            // kMaxHostBytes gets fewer chunks (invalid counts and sizes stay, for the errnos).
            const bool valid_size = a.chunk_size >= 128 * 1024 && a.chunk_size <= 8 * 1024 * 1024 && !(a.chunk_size & 0xfff);
            if (valid_size && a.initial_chunk_count && a.initial_chunk_count <= a.max_chunks &&
                u64{a.initial_chunk_count} * a.chunk_size > kMaxHostBytes)
                a.initial_chunk_count = static_cast<u32>(std::max<u64>(1, kMaxHostBytes / a.chunk_size));
            if (!ioctl(f, DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE, a, "TILER_HEAP_CREATE")) heaps_.push_back({fi, a.handle});
            break;
        }
        case 35: {
            const uint8_t k = in_.u8();
            if (k < 128) {
                drm_panthor_tiler_heap_destroy a{};
                a.handle = pick(heaps_);
                a.pad = in_.u8() < 250 ? 0 : 1;
                ioctl(f, DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY, a, "TILER_HEAP_DESTROY");
            } else if (k < 224) {
                drm_panthor_bo_set_label a{};
                a.handle = pick(bos_);
                const size_t len = in_.u8() < 220 ? in_.u8() % 24 : in_.pick<size_t>({4095, 4096, 4097, 8192});
                uint8_t* host = nullptr;
                size_t cap = 0;
                a.label = in_.u8() < 24 ? 0 : user_buffer(len, &host, &cap);
                for (size_t i = 0; i < cap && i < len; i++) host[i] = static_cast<uint8_t>('a' + i % 26);
                if (cap && cap <= len && in_.u8() < 200) host[cap - 1] = 0;  // usually terminated
                ioctl(f, DRM_IOCTL_PANTHOR_BO_SET_LABEL, a, "BO_SET_LABEL");
            } else {
                drm_panthor_set_user_mmio_offset a{};
                a.offset = in_.pick<u64>({DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, DRM_PANTHOR_USER_MMIO_OFFSET_64BIT, in_.edge_u64()});
                ioctl(f, DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET, a, "SET_USER_MMIO_OFFSET");
            }
            break;
        }
        // ---------------- mmap, files, time ----------------
        case 36: {
            const uint8_t k = in_.u8();
            if (k < 170) {
                u64 off = !offsets_.empty() && k < 150 ? offsets_[k % offsets_.size()]
                                                        : in_.pick<u64>({DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET,
                                                                         DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, in_.edge_u64()});
                const size_t len = in_.u8() < 220 ? 0x1000 * (1 + in_.u8() % 4) : in_.edge_u64();
                const int prot = in_.u8() < 230 ? (PROT_READ | PROT_WRITE) : static_cast<int>(in_.u8());
                const int flags = in_.u8() < 230 ? MAP_SHARED : in_.pick<int>({MAP_PRIVATE, 0, MAP_SHARED | MAP_PRIVATE});
                drm::VmArea* vma = nullptr;
                const int ret = drm::drm_mmap(f, off, len, prot, flags, &vma);
                note("mmap", ret);
                if (!ret && vma) {
                    vmas_.push_back(vma);
                    if (!vma->addr) drm::vma_read32(vma, 0);
                }
            } else if (!vmas_.empty()) {
                const size_t i = in_.below(static_cast<u32>(vmas_.size()));
                drm::drm_munmap(vmas_[i]);
                vmas_.erase(vmas_.begin() + static_cast<long>(i));
                note("munmap", 0);
            }
            break;
        }
        case 37:
            op_write_stream();
            break;
        case 38: {  // close, or close and reopen, a file
            const uint8_t k = in_.u8();
            drm::drm_release(f);
            files_[fi] = nullptr;
            note("close", 0);
            if (k & 1) {
                render_[fi] = (k & 2) == 0;
                const int ret = drm::drm_open(&w_.ptdev()->base, &files_[fi], render_[fi]);
                if (ret) files_[fi] = nullptr;
                note("reopen", ret);
            }
            break;
        }
        case 40: op_prime_handle_to_fd(f, fi); break;
        case 41: op_prime_fd_to_handle(f, fi); break;
        case 42: op_syncobj_eventfd(f); break;
        case 43: op_sync_file_ioctl(); break;
        case 44: op_dma_buf_fd(); break;
        case 45: op_close_fd(); break;
        case 46: op_fail_allocations(); break;
        case 47: op_gpu_fault(); break;
        default: {  // let virtual time pass: jobs run, timers fire, the device may autosuspend
            static constexpr kshim::ktime_t steps[] = {0, kshim::NSEC_PER_USEC, 100 * kshim::NSEC_PER_USEC,
                                                       kshim::NSEC_PER_MSEC, 20 * kshim::NSEC_PER_MSEC,
                                                       200 * kshim::NSEC_PER_MSEC, 6 * kshim::NSEC_PER_SEC};
            w_.rt().advance(steps[in_.below(7)]);
            note("advance", 0);
            break;
        }
    }
    if (suspend_failures) {
        // What the teardown queued (group_release_work, the VM's deferred cleanup...) runs now,
        // still without injected failures, before the window goes on.
        w_.rt().advance(0);
        kshim::fault_inject_arm(fail_plan_);
    }
}

int Program::pick_fd() {
    // A descriptor the program got back (a syncobj, sync_file or dma-buf), or an edge value.
    if (!fds_.empty() && in_.u8() < 220) return fds_[in_.below(static_cast<u32>(fds_.size()))];
    return in_.pick<int>({-1, 0, 3, 4, static_cast<int>(in_.edge_u32())});
}

void Program::op_prime_handle_to_fd(drm::File* f, int fi) {
    (void)fi;
    drm_prime_handle a{};
    a.handle = pick(bos_);
    a.flags = in_.pick<u32>({DRM_CLOEXEC | DRM_RDWR, DRM_CLOEXEC, 0, DRM_RDWR, in_.edge_u32()});
    a.fd = -1;
    if (!ioctl(f, DRM_IOCTL_PRIME_HANDLE_TO_FD, a, "PRIME_HANDLE_TO_FD") && a.fd >= 0) fds_.push_back(a.fd);
}

void Program::op_prime_fd_to_handle(drm::File* f, int fi) {
    drm_prime_handle a{};
    a.fd = pick_fd();
    a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
    if (!ioctl(f, DRM_IOCTL_PRIME_FD_TO_HANDLE, a, "PRIME_FD_TO_HANDLE")) bos_.push_back({fi, a.handle});
}

void Program::op_syncobj_eventfd(drm::File* f) {
    drm_syncobj_eventfd a{};
    a.handle = pick(syncobjs_);
    a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, 0, in_.edge_u32()});
    a.point = in_.u8() % 4;
    const uint8_t k = in_.u8();
    if (k < 192) {  // an eventfd: a new one, or one made earlier
        if (eventfds_.empty() || k < 64) {
            const int efd = kshim::eventfd_fd_create(0, in_.flag() ? EFD_SEMAPHORE : 0);
            if (efd >= 0) eventfds_.push_back(efd);
        }
        a.fd = eventfds_.empty() ? -1 : eventfds_[in_.below(static_cast<u32>(eventfds_.size()))];
    } else {
        a.fd = pick_fd();  // not an eventfd: -EINVAL, or closed: -EBADF
    }
    a.pad = in_.u8() < 250 ? 0 : 1;
    ioctl(f, DRM_IOCTL_SYNCOBJ_EVENTFD, a, "SYNCOBJ_EVENTFD");
}

void Program::op_sync_file_ioctl() {
    const int fd = pick_fd();
    auto on_fd = [fd](unsigned c, void* host) { return drm::sync_file_fd_ioctl(fd, c, drm::user_ptr(host)); };
    switch (in_.below(3)) {
        case 0: {
            sync_merge_data a{};
            std::snprintf(a.name, sizeof a.name, "fuzz");
            a.fd2 = pick_fd();
            a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
            a.pad = in_.u8() < 250 ? 0 : 1;
            a.fence = -1;
            if (!user_ioctl(SYNC_IOC_MERGE, a, "SYNC_IOC_MERGE", on_fd) && a.fence >= 0) fds_.push_back(a.fence);
            break;
        }
        case 1: {
            sync_file_info a{};
            a.num_fences = count_edge(3);
            a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
            a.pad = in_.u8() < 250 ? 0 : 1;
            uint8_t* host = nullptr;
            size_t cap = 0;
            a.sync_fence_info = user_buffer(std::min<size_t>(size_t{a.num_fences} * sizeof(sync_fence_info), 4096), &host, &cap);
            user_ioctl(SYNC_IOC_FILE_INFO, a, "SYNC_IOC_FILE_INFO", on_fd);
            break;
        }
        default: {
            sync_set_deadline a{};
            a.deadline_ns = deadline();
            a.pad = in_.u8() < 250 ? 0 : 1;
            user_ioctl(SYNC_IOC_SET_DEADLINE, a, "SYNC_IOC_SET_DEADLINE", on_fd);
            break;
        }
    }
}

void Program::op_dma_buf_fd() {
    const int fd = pick_fd();
    if (in_.u8() < 128) {  // DMA_BUF_IOCTL_SYNC (begin/end CPU access)
        drm::uapi::dma_buf_sync a{};
        a.flags = in_.u8() < 220 ? in_.u8() & 7 : in_.edge_u64();
        kshim::dma_buf* buf = drm::drm_fd_get_dma_buf(fd);
        if (kshim::IS_ERR_OR_NULL(buf)) {
            note("DMA_BUF_IOCTL_SYNC", buf ? static_cast<int>(kshim::PTR_ERR(buf)) : -EBADF);
            return;
        }
        user_ioctl(drm::uapi::DMA_BUF_IOCTL_SYNC, a, "DMA_BUF_IOCTL_SYNC",
                   [buf](unsigned c, void* host) { return drm::dma_buf_ioctl(buf, c, drm::user_ptr(host)); });
        kshim::dma_buf_put(buf);
        return;
    }
    // mmap(2) of the descriptor.
    const u64 off = in_.u8() < 220 ? 0x1000 * (in_.u8() % 4) : in_.edge_u64();
    const size_t len = in_.u8() < 220 ? 0x1000 * (1 + in_.u8() % 4) : in_.edge_u64();
    const int prot = in_.u8() < 230 ? (PROT_READ | PROT_WRITE) : static_cast<int>(in_.u8());
    const int flags = in_.u8() < 230 ? MAP_SHARED : in_.pick<int>({MAP_PRIVATE, 0});
    drm::VmArea* vma = nullptr;
    const int ret = drm::dma_buf_fd_mmap(fd, off, len, prot, flags, &vma);
    note("dma_buf_mmap", ret);
    if (!ret && vma) vmas_.push_back(vma);
}

void Program::op_close_fd() {
    if (fds_.empty()) return;
    const size_t i = in_.below(static_cast<u32>(fds_.size()));
    note("close_fd", drm::drm_fd_close(fds_[i]));
    fds_.erase(fds_.begin() + static_cast<long>(i));
}

void Program::op_fail_allocations() {
    // failslab / fail_page_alloc for the next 1-8 calls (teardown and time passing exempt, see
    // call()), with the kernel's task-filter: only the program's own task fails (make-it-fail is
    // set for it in run()), so the work it leaves to workers and timers (group_release_work, the
    // VM's deferred cleanup, a reset) allocates normally, whichever call it runs inside.
    // The page allocator, xarray ids and scheduler fences fail as the Nth allocation or at a
    // rate. kmalloc, page-table pages and the gpuva index only as the Nth (one failure per
    // window): an unmap preallocates from them (panthor_vm_unmap_range: VMAs, tables, index
    // nodes), and upstream keeps a kernel BO whose unmap failed (panthor_kernel_bo_destroy: a leak
    // by design), so an error path that unwinds by unmapping must find its memory.
    kshim::FaultPlan plan;
    const uint8_t k = in_.u8();
    plan.only_cache = in_.pick<const char*>({"pages", "xarray", "drm_sched_fence", "kmalloc", "pt_pages", "drm_gpuva_index"});
    const bool unmap_cache = plan.only_cache == "kmalloc" || plan.only_cache == "pt_pages" || plan.only_cache == "drm_gpuva_index";
    if ((k & 1) || unmap_cache) plan.fail_nth = 1 + in_.u8() % 64;
    else plan.probability = in_.pick<double>({0.01, 0.05, 0.2, 0.5, 1.0});
    plan.seed = 1 + in_.u8();
    plan.ignore_blocking = (k & 2) != 0;
    plan.task_filter = true;
    kshim::fault_inject_arm(plan);
    fail_plan_ = plan;
    fail_calls_left_ = 1 + static_cast<int>(in_.below(8));
    injected_reset_ = true;
    alloc_failed_ = true;
    if (opts_.trace) {
        char what[96];
        std::snprintf(what, sizeof what, "fail_allocations(nth=%llu p=%g cache=%s calls=%d)",
                      static_cast<unsigned long long>(plan.fail_nth), plan.probability,
                      plan.only_cache.empty() ? "any" : plan.only_cache.c_str(), fail_calls_left_);
        note(what, 0);
    }
}

void Program::op_gpu_fault() {
    // A fault of the mock GPU (fault plan), armed for the rest of the program.
    mock_hw::FaultSpec s;
    const kshim::ktime_t soon = kshim::ktime_get() + kshim::NSEC_PER_USEC * in_.u16();
    const u64 nth = 1 + in_.u8() % 4;
    switch (in_.below(9)) {
        case 0:
            s.kind = mock_hw::FaultKind::GpuFault;
            s.trigger = mock_hw::FaultTrigger::at_time(soon);
            s.fault_addr = pick_va();
            s.fault_status = in_.u8() < 200 ? 0x80 : in_.u32();
            break;
        case 1:
        case 2:
            s.kind = in_.flag() ? mock_hw::FaultKind::CsFatal : mock_hw::FaultKind::CsFault;
            s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
            s.exception = in_.u8() < 200 ? in_.pick<u32>({0x44, 0x58, 0x4c, 0x48}) : in_.u32();
            break;
        case 3:
            s.kind = mock_hw::FaultKind::CsUnrecoverable;
            s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
            injected_reset_ = true;
            break;
        case 4:
            s.kind = mock_hw::FaultKind::MmuFaultAt;
            s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
            s.fault_addr = pick_va();
            break;
        case 5:
            s.kind = mock_hw::FaultKind::ShaderHang;
            s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
            break;
        case 6:
            s.kind = mock_hw::FaultKind::CsgAckDrop;
            s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
            injected_reset_ = true;
            break;
        default:
            s.kind = in_.flag() ? mock_hw::FaultKind::FwHang : mock_hw::FaultKind::McuFatal;
            s.trigger = mock_hw::FaultTrigger::at_time(soon);
            injected_reset_ = true;
            break;
    }
    s.max_fires = 1;
    w_.gpu().faults().add(s);
    note(mock_hw::fault_kind_name(s.kind), 0);
}

void Program::teardown() {
    for (drm::VmArea* v : vmas_) drm::drm_munmap(v);
    vmas_.clear();
    for (int fd : fds_) drm::drm_fd_close(fd);
    fds_.clear();
    // Process exit closes every fd, also those the program never learnt (an ioctl whose size
    // hid the fd field, a bad output pointer): fds are allocated lowest first from 3.
    for (int fd = 3; drm::drm_fd_count() > fds_before_ && fd < 3 + 4096; fd++) drm::drm_fd_close(fd);
    for (int efd : eventfds_) kshim::eventfd_fd_close(efd);
    eventfds_.clear();
    for (drm::File*& f : files_) {
        if (f) drm::drm_release(f);
        f = nullptr;
    }
    mem_.reset();
}

// The program's task is the one that fails allocations in a failure window (task-filter).
struct MakeItFail {
    MakeItFail() { kshim::current()->make_it_fail = true; }
    ~MakeItFail() { kshim::current()->make_it_fail = false; }
    MakeItFail(const MakeItFail&) = delete;
    MakeItFail& operator=(const MakeItFail&) = delete;
};

std::string Program::run() {
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
    const int nfiles = 1 + static_cast<int>(in_.below(kMaxFiles));
    const int ncalls = 1 + static_cast<int>(in_.below(kMaxCalls));
    for (int i = 0; i < nfiles; i++) {
        render_[i] = i == 0 || in_.u8() < 200;
        if (drm::drm_open(&w_.ptdev()->base, &files_[i], render_[i])) files_[i] = nullptr;
    }
    try {
        for (call_no_ = 0; call_no_ < ncalls; call_no_++) {
            call();
            mem_.reset();
            if (fail_calls_left_ && --fail_calls_left_ == 0) kshim::fault_inject_disarm();
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
    if (lost && !injected_reset_) out += "the device was lost (unplugged) without an injected fault or allocation failure\n";
    if (lost) {
        if (opts_.trace) *opts_.trace += "  (device lost: rebooting the world)\n";
        out += w_.reboot();
    }
    return out;
}

}  // namespace

std::string run_ioctl_program(PanthorWorld& world, const uint8_t* data, size_t size, const IoctlProgramOptions& opts) {
    world.mark();
    FuzzInput in(data, size);
    Program p(world, in, opts);
    return p.run();
}

std::string run_ioctl_history(PanthorWorld& world, const std::vector<std::vector<uint8_t>>& inputs,
                              const IoctlProgramOptions& opts) {
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::string where = "history input " + std::to_string(i + 1) + " of " + std::to_string(inputs.size());
        if (opts.trace) *opts.trace += where + ":\n";
        const std::string problems = run_ioctl_program(world, inputs[i].data(), inputs[i].size(), opts);
        if (!problems.empty()) return where + ": " + problems;
    }
    return "";
}

}  // namespace upanthor_fuzz
