// (no upstream counterpart) fuzz_panfrost_ioctl's decoder and executor: an input is a program of
// 1-48 calls on one panfrost device (the mock Mali-G52) through one or two open files. Each
// call's first byte picks the op (PanfrostOp, value = byte % kPanfrostOpCount), the next the
// file; the op's arguments follow, structure-aware: handles drawn from what earlier calls
// created (or anything), sizes and flags biased to edges, SUBMIT with a small job chain laid
// out in a CPU-mapped BO (valid WRITE_VALUE/NULL chains, an endless loop, an unmapped target,
// an already-DONE header, an unknown job type, a wild jc) and in/out syncobjs; plus JM contexts,
// syncobj create/destroy/wait, GEM close, closing and reopening a file, virtual time passing,
// the mock's JM faults (FaultPlan) and the shim's allocation failures. After the program every
// file is closed, every out fence must signal, and the world's checks run (leaks, reports,
// blocked tasks).
//
// The op values are FROZEN (a saved input is only bytes): append new ops at the end.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "drm/drm_file.h"
#include "fuzz/fuzz_input.h"
#include "fuzz/panfrost_world.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "testkit/panfrost_rig.h"

namespace upanthor_fuzz {

enum class PanfrostOp : uint8_t {
    CreateBo = 0,
    CreateJobBo = 1,
    MmapBo = 2,
    GetParam = 3,
    GetBoOffset = 4,
    WaitBo = 5,
    Submit = 6,
    Submit2 = 7,  // SUBMIT again: the calls that matter most get two values
    JmCtxCreate = 8,
    JmCtxDestroy = 9,
    SyncobjCreate = 10,
    SyncobjDestroy = 11,
    SyncobjWait = 12,
    GemClose = 13,
    CloseFile = 14,
    Advance = 15,
    Fault = 16,
    RawIoctl = 17,
};
inline constexpr uint32_t kPanfrostOpCount = 18;
const char* panfrost_op_name(PanfrostOp op);

struct PanfrostProgramOptions {
    // When set, one line per call ("  3 f1 SUBMIT(kind=2 jc=0x2000040) = 0") is appended.
    std::string* trace = nullptr;
};

// Runs the program `data` decodes to on `world` (probed), releases everything it made, checks
// that every out fence signalled, then runs world.check(). Returns "" or what went wrong.
std::string run_panfrost_program(PanfrostWorld& world, const uint8_t* data, size_t size,
                                 const PanfrostProgramOptions& opts = {});

// ---- internal: the state the op handlers share ----

inline constexpr int kPanfrostMaxFiles = 2;
inline constexpr int kPanfrostMaxCalls = 48;
// Non-heap BOs are backed (and zeroed) when created: bigger valid sizes are cut to this, so the
// fuzzer's RSS limit catches leaks rather than large requests.
inline constexpr uint32_t kPanfrostMaxBoBytes = 4u << 20;

class PanfrostProgram {
public:
    using u32 = kshim::u32;
    using u64 = kshim::u64;

    PanfrostProgram(PanfrostWorld& w, FuzzInput& in, const PanfrostProgramOptions& o) : w_(w), in_(in), opts_(o) {}
    std::string run();

    // The op handlers, by family: panfrost_ops_bo.cpp, panfrost_ops_job.cpp, panfrost_ops_misc.cpp.
    void op_create_bo(int f);
    void op_create_job_bo(int f);
    void op_mmap_bo(int f);
    void op_get_param(int f);
    void op_get_bo_offset(int f);
    void op_wait_bo(int f);
    void op_submit(int f);
    void op_jm_ctx_create(int f);
    void op_jm_ctx_destroy(int f);
    void op_syncobj_create(int f);
    void op_syncobj_destroy(int f);
    void op_syncobj_wait(int f);
    void op_gem_close(int f);
    void op_close_file(int f);
    void op_advance(int f);
    void op_fault(int f);
    void op_raw_ioctl(int f);

private:
    struct File {
        drm::drm_file* file = nullptr;
        std::vector<u32> bos;  // GEM handles CREATE_BO returned (some may be closed since)
        std::vector<panfrost::testing::PanfrostJobBo> job_bos;  // CPU-mapped BOs for job chains
        std::vector<u32> ctxs;                                  // JM context handles (0 is always there)
        std::vector<u32> syncobjs;                              // syncobj handles
    };

    // A handle from `pool`, 0, or any value.
    u32 pick_handle(const std::vector<u32>& pool);
    void trace(int f, const char* what, const std::string& args, long ret);
    void open_file(int f);
    void close_file(int f);
    std::string release();

    PanfrostWorld& w_;
    FuzzInput& in_;
    const PanfrostProgramOptions& opts_;
    File files_[kPanfrostMaxFiles];
    std::vector<kshim::dma_fence*> out_fences_;  // every accepted SUBMIT's out fence (references)
    int call_ = 0;
    bool alloc_armed_ = false;  // the shim's allocation failures were armed in this program
};

}  // namespace upanthor_fuzz
