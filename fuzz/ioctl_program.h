// (no upstream counterpart) fuzz_ioctl's decoder and executor, syzkaller-style: an input is a
// program of 1-64 calls on one panthor device through one to three open files. Every panthor
// and DRM core ioctl is generated with structure-aware arguments (handles and ids drawn from
// what earlier calls created, in any file; sizes and flags biased to edges; obj_arrays with odd
// strides and counts; user pointers valid, short or unmapped in the uaccess registry), plus
// mmap/munmap, CPU writes through a mapping, close/reopen of a file and virtual time passing.
// After the program everything is released and the world's checks run.
//
// Kept apart from the libFuzzer entry point so that the regression tests replay a saved input
// through exactly this code (tests/fuzz/).
//
// Below the entry points: IoctlProgram, the state one program shares between its calls (files,
// pools of what earlier calls created, user memory) and the choices every op draws from the
// input. The ops themselves are one table (fuzz/ioctl_ops.h) whose handlers, members of
// IoctlProgram, live one family per file (fuzz/ioctl_ops_<family>.cpp).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/ioctl_ops.h"
#include "fuzz/panthor_world.h"
#include "kernel_shim/fault_inject.h"
#include "uapi/drm/panthor_drm.h"

namespace upanthor_fuzz {

struct IoctlProgramOptions {
    // When set, one line per call ("  3 f1 VM_BIND(vm=1 ops=2) = 0") is appended (triage).
    std::string* trace = nullptr;
    // When set, the op value each call decodes to is appended, also for a call that finds no
    // open file: tests/fuzz/ioctl_ops_test.cpp pins what the saved inputs decode to.
    std::vector<uint8_t>* ops = nullptr;
};

// Runs the program `data` decodes to on `world` (which must have a probed device), releases
// everything it made, then runs world.check(). Returns "" or what went wrong.
std::string run_ioctl_program(PanthorWorld& world, const uint8_t* data, size_t size,
                              const IoctlProgramOptions& opts = {});

// Runs a world's history (fuzz/world_history.h) on `world`, which must be freshly booted: each
// input as run_ioctl_program does, stopping at the first that goes wrong. Returns "" or what
// went wrong, naming the input ("history input 7 of 12: ...").
std::string run_ioctl_history(PanthorWorld& world, const std::vector<std::vector<uint8_t>>& inputs,
                              const IoctlProgramOptions& opts = {});

// Rewrites command-stream words so that a stream cannot loop or branch away on its own:
// BRANCH offsets become forward, JUMP and CALL become NOP. Shared with fuzz_cs's loop-free mode.
uint64_t cs_sanitize_word(uint64_t word);

// ---- internal: the program state the op handlers share ----

inline constexpr int kIoctlMaxFiles = 3;
inline constexpr int kIoctlMaxCalls = 64;
// What the host spends on one request is bounded, not the request's validation: pinning a BO
// allocates and zeroes all of it from the page arena, and a tiler heap allocates its initial
// chunks at once. Requests that would pass validation and cost more than this are cut to it, so
// the fuzzer's RSS limit catches leaks, not legitimately large requests (edge values that fail
// validation are kept as they are).
inline constexpr kshim::u64 kIoctlMaxHostBytes = kshim::u64{4} << 20;

// One call's user memory: a bump allocator in a static arena and the ranges registered for it.
class IoctlUserMem {
public:
    ~IoctlUserMem() { reset(); }
    void reset();
    // n zeroed bytes in the arena (fewer if it is full: *cap says how many), misaligned by `skew`.
    uint8_t* alloc(size_t n, size_t* cap, size_t skew = 0);
    void reg(const void* p, size_t n);

private:
    size_t used_ = 0;
    std::vector<std::pair<const void*, size_t>> regs_;
};

class IoctlProgram {
public:
    using u32 = kshim::u32;
    using u64 = kshim::u64;
    struct Obj {
        int file;
        u32 id;
    };
    struct Mapped {  // a VM_BIND map that succeeded: candidate stream addresses
        u64 va;
        u64 size;
    };

    IoctlProgram(PanthorWorld& w, FuzzInput& in, const IoctlProgramOptions& o) : w_(w), in_(in), opts_(o) {}
    std::string run();

    // ---- the op handlers (fuzz/ioctl_ops.cpp's table), by family ----
    // ioctl_ops_core.cpp
    void op_version(const IoctlOpCall& c);
    void op_get_cap(const IoctlOpCall& c);
    void op_raw_ioctl(const IoctlOpCall& c);
    void op_dev_query(const IoctlOpCall& c);
    // ioctl_ops_sync.cpp
    void op_syncobj_create(const IoctlOpCall& c);
    void op_syncobj_destroy(const IoctlOpCall& c);
    void op_syncobj_handle_to_fd(const IoctlOpCall& c);
    void op_syncobj_fd_to_handle(const IoctlOpCall& c);
    void op_syncobj_wait(const IoctlOpCall& c);
    void op_syncobj_array(const IoctlOpCall& c);  // RESET, SIGNAL
    void op_syncobj_timeline_wait(const IoctlOpCall& c);
    void op_syncobj_timeline_array(const IoctlOpCall& c);  // QUERY, TIMELINE_SIGNAL
    void op_syncobj_transfer(const IoctlOpCall& c);
    void op_syncobj_eventfd(const IoctlOpCall& c);
    // ioctl_ops_vm.cpp
    void op_vm_create(const IoctlOpCall& c);
    void op_vm_destroy(const IoctlOpCall& c);
    void op_vm_bind(const IoctlOpCall& c);
    void op_vm_get_state(const IoctlOpCall& c);
    // ioctl_ops_bo.cpp
    void op_gem_close(const IoctlOpCall& c);
    void op_bo_create(const IoctlOpCall& c);
    void op_bo_mmap_offset(const IoctlOpCall& c);
    void op_mmap_or_munmap(const IoctlOpCall& c);
    void op_cpu_write(const IoctlOpCall& c);
    // ioctl_ops_group.cpp
    void op_group_create(const IoctlOpCall& c);
    void op_group_destroy(const IoctlOpCall& c);
    void op_group_submit(const IoctlOpCall& c);
    void op_group_get_state(const IoctlOpCall& c);
    void op_tiler_heap_create(const IoctlOpCall& c);
    void op_tiler_heap_destroy_or_bo_label(const IoctlOpCall& c);
    // ioctl_ops_fd.cpp
    void op_prime_handle_to_fd(const IoctlOpCall& c);
    void op_prime_fd_to_handle(const IoctlOpCall& c);
    void op_sync_file_ioctl(const IoctlOpCall& c);
    void op_dma_buf_fd(const IoctlOpCall& c);
    void op_close_fd(const IoctlOpCall& c);
    // ioctl_ops_process.cpp
    void op_close_file(const IoctlOpCall& c);
    void op_advance(const IoctlOpCall& c);
    // ioctl_ops_fault.cpp
    void op_fail_allocations(const IoctlOpCall& c);
    void op_gpu_fault(const IoctlOpCall& c);

private:
    // ---- choices (ioctl_program.cpp) ----
    drm::drm_file* file_for_call(int* idx);
    u32 pick(const std::vector<Obj>& pool);
    u64 pick_va();
    int pick_fd();
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
    int ioctl(drm::drm_file* f, unsigned cmd, T& arg, const char* name);
    // The same for an ioctl of another descriptor kind: do(cmd, user address of the struct).
    template <class T, class Do>
    int user_ioctl(unsigned cmd, T& arg, const char* name, Do&& do_ioctl);

    void call();
    void teardown();
    void note(const char* name, int ret);

    PanthorWorld& w_;
    FuzzInput& in_;
    const IoctlProgramOptions& opts_;
    IoctlUserMem mem_;
    drm::drm_file* files_[kIoctlMaxFiles] = {};
    bool render_[kIoctlMaxFiles] = {};
    int cur_file_ = 0;
    int call_no_ = 0;
    std::vector<Obj> bos_, vms_, groups_, heaps_, syncobjs_;
    std::vector<int> fds_;
    std::vector<int> eventfds_;    // in-process eventfds (kshim's table), for SYNCOBJ_EVENTFD
    int fail_calls_left_ = 0;      // calls left in an allocation-failure window
    kshim::FaultPlan fail_plan_;   // ...and what fails in it
    bool injected_reset_ = false;  // a fault that brings a reset (or allocation failures) was injected
    bool alloc_failed_ = false;    // allocation failures were injected
    std::vector<u64> offsets_;     // mmap offsets from BO_MMAP_OFFSET (and the MMIO ones)
    std::vector<drm::VmArea*> vmas_;
    std::vector<Mapped> mapped_;
    std::string problems_;
    int budget_spec_ = -1;
    size_t fds_before_ = drm::drm_fd_count();
};

template <class Fill>
drm_panthor_obj_array IoctlProgram::obj_array(size_t elem, u32 typical_max, Fill fill) {
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
            std::memcpy(host + size_t{i} * a.stride, e.data(),
                        std::min<size_t>({elem, a.stride, cap - size_t{i} * a.stride}));
        }
    }
    return a;
}

template <class T>
int IoctlProgram::ioctl(drm::drm_file* f, unsigned cmd, T& arg, const char* name) {
    return user_ioctl(cmd, arg, name, [&](unsigned c, void* host) { return drm::ioctl(f, c, host); });
}

template <class T, class Do>
int IoctlProgram::user_ioctl(unsigned cmd, T& arg, const char* name, Do&& do_ioctl) {
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
    if (how < 244)
        mem_.reg(host, std::min(cap, size));
    else if (how < 250)
        mem_.reg(host, std::min(cap, size) / 2);
    const int ret = static_cast<int>(do_ioctl(cmd, host));
    std::memcpy(&arg, host, std::min(cap, sizeof(T)));
    note(name, ret);
    return ret;
}

}  // namespace upanthor_fuzz
