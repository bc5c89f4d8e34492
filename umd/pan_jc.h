// Mirrors Mesa's src/panfrost/lib/pan_jc.h: the job-chain builder of a Job Manager GPU.
//
// DOC: A job chain is a linked list of jobs in GPU memory (hw/jm/job_desc.h). Each job carries an
// index and up to two dependencies on earlier indices of the same chain; together they form the
// chain's scoreboard. JobChain (Mesa's struct pan_jc) assigns the indices, links each new job
// behind the previous one and keeps the scoreboard rules Mesa's pan_jc_add_job keeps:
//   - every job that uses the tiler (TILER, and the IDVS types: INDEXED_VERTEX on v6/v7,
//     MALLOC_VERTEX on v9) gets the previous tiling job as its dependency 2, so tiling stays in
//     order; dependency 1 is the caller's "local" dependency (the vertex job feeding a tiler job);
//   - on v5 (Midgard) the first tiling job also depends on a WRITE_VALUE job that zeroes the
//     polygon list; its index is reserved at the first tiling job and the job itself is put in
//     front of the chain by initialize_tiler();
//   - a dependency always names an earlier job of the chain (the hardware reads the list in order).
// Jobs are written through a GpuMemory, a CPU pointer for a GPU VA, so the same builder fills
// in-process BOs and the mmap'd BOs of a real render node. JobPool hands out job-sized pieces of
// one mapped range; the emit_* helpers write the job types the mock executes (NULL, WRITE_VALUE,
// CACHE_FLUSH, and the timed shader jobs COMPUTE/VERTEX/TILER/FRAGMENT sized by their invocation
// or tile bounds; docs/mock_jm.md "Job times").
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hw/jm/job_desc.h"
#include "umd/result.h"

namespace umd {

namespace jm_desc = panfrost::desc;

// The CPU's view of GPU memory: where the bytes of [va, va + len) are, or nullptr when that range
// is not mapped for the CPU.
class GpuMemory {
public:
    virtual ~GpuMemory() = default;
    virtual void* cpu(std::uint64_t va, std::size_t len) = 0;
};

// GpuMemory over a list of (GPU VA, CPU address, size) ranges: BO mappings.
class MappedRanges final : public GpuMemory {
public:
    void add(std::uint64_t va, void* cpu, std::size_t size) {
        ranges_.push_back({va, static_cast<std::uint8_t*>(cpu), size});
    }
    void* cpu(std::uint64_t va, std::size_t len) override;

private:
    struct Range {
        std::uint64_t va;
        std::uint8_t* cpu;
        std::size_t size;
    };
    std::vector<Range> ranges_;
};

// A piece of GPU memory and where the CPU sees it (Mesa's struct panfrost_ptr).
struct JobPtr {
    std::uint64_t gpu = 0;
    std::uint8_t* cpu = nullptr;
};

// A bump allocator over one GPU range the CPU can write (Mesa's pan_pool, without growth).
class JobPool {
public:
    JobPool(GpuMemory& mem, std::uint64_t va, std::uint64_t size) : mem_(&mem), base_(va), size_(size) {}
    // `size` bytes aligned to `align`, zeroed; -ENOMEM when the range is used up, -EFAULT when the
    // CPU cannot see it.
    Result<JobPtr> alloc(std::uint64_t size, std::uint64_t align);
    // Forgets every allocation (the jobs' memory is reused by the next chains).
    void reset() { used_ = 0; }
    std::uint64_t used() const { return used_; }
    GpuMemory& memory() { return *mem_; }

private:
    GpuMemory* mem_;
    std::uint64_t base_, size_;
    std::uint64_t used_ = 0;
};

// Job header flags of add_job().
struct JobFlags {
    bool barrier = false;
    bool suppress_prefetch = false;
};

// Mesa's job_uses_tiling(): the types that write the tiler's structures, for `arch`.
bool job_uses_tiling(std::uint32_t type, std::uint32_t arch);

// Mesa's struct pan_jc with pan_jc_add_job / pan_jc_initialize_tiler.
class JobChain {
public:
    // `arch`: Mesa's architecture number (5 Midgard, 6/7 Bifrost as the G52, 9 Valhall-JM); it
    // selects the header's 64-bit flag, the job alignment and the v5 write-value rule.
    explicit JobChain(GpuMemory& mem, std::uint32_t arch = 7) : mem_(&mem), arch_(arch) {}

    // Writes the header of the job at `job` (its payload is the caller's, already in place) and
    // links it at the end of the chain, or at the front with `inject` (a tiler job only, Mesa's
    // wallpaper reload). Returns its index, or a negative errno if the CPU cannot see the job or
    // the previous one. `local_dep`/`global_dep` become dependency 1/2; a tiling job's dependency
    // 2 is overridden by the scoreboard as described above.
    int add_job(std::uint32_t type, JobFlags flags, std::uint32_t local_dep, std::uint32_t global_dep, JobPtr job,
                bool inject = false);

    // v5 only: emits the WRITE_VALUE job that zeroes `polygon_list` at the reserved index in front
    // of the chain (nothing on v6+ or without a tiling job). The job's pointer, or gpu == 0.
    Result<JobPtr> initialize_tiler(JobPool& pool, std::uint64_t polygon_list);

    // What a submit passes as `jc`: the first job's VA (0: the chain is empty).
    std::uint64_t first_job() const { return first_job_; }
    std::uint64_t last_job() const { return prev_job_; }
    // The number of indices handed out (Mesa's job_index).
    std::uint32_t job_index() const { return job_index_; }
    // The index of the last tiling job, 0 if none (Mesa's tiler_dep).
    std::uint32_t tiler_dep() const { return tiler_dep_; }
    std::uint32_t write_value_index() const { return write_value_index_; }
    std::uint32_t arch() const { return arch_; }
    std::uint32_t job_align() const { return arch_ >= 9 ? jm_desc::kJobAlignV9 : jm_desc::kJobAlignV7; }
    bool empty() const { return first_job_ == 0; }
    // Starts a new, empty chain (the jobs already written stay as they are).
    void reset();

private:
    jm_desc::JobHeader* header(std::uint64_t va) {
        return static_cast<jm_desc::JobHeader*>(mem_->cpu(va, sizeof(jm_desc::JobHeader)));
    }

    GpuMemory* mem_;
    std::uint32_t arch_;
    std::uint64_t first_job_ = 0;
    std::uint32_t job_index_ = 0;
    std::uint64_t prev_job_ = 0;     // for next-pointer linking
    std::uint64_t first_tiler_ = 0;  // for the dependency update of an injected tiler job
    std::uint32_t first_tiler_dep1_ = 0;
    std::uint32_t tiler_dep_ = 0;
    std::uint32_t write_value_index_ = 0;
};

// ---- job emitters: allocate the job from `pool`, write its payload, add it to `jc` ----
// Each returns the job's index (> 0) or a negative errno.

int emit_null_job(JobPool& pool, JobChain& jc, JobFlags flags = {}, std::uint32_t dep1 = 0, std::uint32_t dep2 = 0);
// WRITE_VALUE: `type` is a jm_desc::WriteValueType; `immediate` is used by the Immediate types.
int emit_write_value(JobPool& pool, JobChain& jc, std::uint64_t address, std::uint32_t type,
                     std::uint64_t immediate = 0, JobFlags flags = {}, std::uint32_t dep1 = 0, std::uint32_t dep2 = 0);
int emit_cache_flush(JobPool& pool, JobChain& jc, std::uint32_t word0, std::uint32_t word1, JobFlags flags = {},
                     std::uint32_t dep1 = 0, std::uint32_t dep2 = 0);

// A packed invocation (Mesa's panfrost_pack_work_groups_compute): workgroup size and count per axis.
jm_desc::Invocation pack_invocation(std::uint32_t size_x, std::uint32_t size_y, std::uint32_t size_z,
                                    std::uint32_t count_x, std::uint32_t count_y, std::uint32_t count_z);

// COMPUTE, VERTEX (v5-v7) or TILER (v6/v7 layout): the invocation at +0x20, the rest of the
// payload zero (no shader runs on the mock). A tiler job's dep1 is normally its vertex job.
int emit_shader_job(JobPool& pool, JobChain& jc, std::uint32_t type, const jm_desc::Invocation& inv,
                    JobFlags flags = {}, std::uint32_t dep1 = 0, std::uint32_t dep2 = 0);
// A FRAGMENT job over the inclusive tile bounds [x0, x1] x [y0, y1], for framebuffer `fbd`.
int emit_fragment_job(JobPool& pool, JobChain& jc, std::uint32_t x0, std::uint32_t y0, std::uint32_t x1,
                      std::uint32_t y1, std::uint64_t fbd = 0, JobFlags flags = {}, std::uint32_t dep1 = 0,
                      std::uint32_t dep2 = 0);

// One draw as panvk's JM backend emits it: a VERTEX job and a TILER job depending on it (the
// scoreboard orders the tiler job after the previous one). The tiler job's index, or -errno.
int emit_draw(JobPool& pool, JobChain& jc, const jm_desc::Invocation& vertices);

}  // namespace umd
