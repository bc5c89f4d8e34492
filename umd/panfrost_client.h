// Mirrors Mesa's src/panfrost/lib/kmod/panfrost_kmod.c and the queue submit of panvk's JM backend
// (src/panfrost/vulkan/jm/panvk_vX_gpu_queue.c): a thin client over the panfrost ioctls.
//
// DOC: One PanfrostClient per open device, over a Backend (an fd, or the in-process
// DrmFileBackend), as PanthorClient is for panthor. Every call is one ioctl (or mmap) and returns
// the kernel's errno unchanged. open() reads the GET_PARAMs pan_kmod reads at device creation
// (product ID, revision, cores, JS_PRESENT, MMU features, timestamp frequency, allowed JM context
// priorities). panfrost has no VM_BIND: each BO gets its GPU VA in the file's VM at CREATE_BO.
//
// queue_submit() is panvk's panvk_queue_submit_batch: a batch holds a vertex/tiler/compute chain
// and a fragment chain. The first goes to SUBMIT without requirements (job slot 1), waiting on the
// batch's in-syncobjs; the second with PANFROST_JD_REQ_FS (job slot 0), waiting on the first
// through the queue's own syncobj (or on the in-syncobjs when there is no first chain). Each SUBMIT
// signals the queue syncobj, whose fence is then put into the batch's signal syncobjs. A batch
// with neither chain submits nothing (panvk gives an empty batch a NULL job: emit one).
#pragma once
#include <sys/mman.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "uapi/drm/drm.h"
#include "uapi/drm/panfrost_drm.h"
#include "umd/backend.h"
#include "umd/result.h"

namespace umd {

// What open() read with GET_PARAM.
struct PanfrostGpuInfo {
    std::uint64_t gpu_prod_id = 0;
    std::uint64_t gpu_revision = 0;
    std::uint64_t shader_present = 0;
    std::uint64_t js_present = 0;
    std::uint64_t mmu_features = 0;
    std::uint64_t timestamp_frequency = 0;
    std::uint64_t allowed_jm_ctx_priorities = 0;  // bit per drm_panfrost_jm_ctx_priority
};

struct PanfrostBo {
    std::uint32_t handle = 0;
    std::uint64_t size = 0;
    std::uint64_t va = 0;  // GPU VA in the file's VM
};

// One SUBMIT: a job chain and what it waits on and signals.
struct JmSubmit {
    std::uint64_t jc = 0;  // first job of the chain
    std::vector<std::uint32_t> in_syncs;
    std::uint32_t out_sync = 0;
    std::vector<std::uint32_t> bos;  // the BOs the chain uses (implicit sync, kept resident)
    std::uint32_t requirements = 0;  // PANFROST_JD_REQ_*
    std::uint32_t jm_ctx = 0;        // 0: the file's default context
};

// One batch of panvk's JM backend (queue_submit()).
struct JmBatch {
    std::uint64_t vtc_jc = 0;   // vertex/tiler/compute chain, 0 if none
    std::uint64_t frag_jc = 0;  // fragment chain, 0 if none
    std::vector<std::uint32_t> bos;
    std::vector<std::uint32_t> waits;    // syncobjs the batch waits on
    std::vector<std::uint32_t> signals;  // syncobjs that get the batch's completion
    bool cycle_count = false;            // the batch writes timestamps (PANFROST_JD_REQ_CYCLE_COUNT)
    std::uint32_t jm_ctx = 0;
};

class PanfrostClient {
public:
    // Reads the GET_PARAMs of PanfrostGpuInfo; `backend` must outlive the client.
    static Result<std::unique_ptr<PanfrostClient>> open(Backend& backend);
    ~PanfrostClient() = default;
    PanfrostClient(const PanfrostClient&) = delete;
    PanfrostClient& operator=(const PanfrostClient&) = delete;

    Backend& backend() { return *be_; }
    const PanfrostGpuInfo& gpu_info() const { return info_; }
    // Mesa's architecture number of the GPU (the G52 is 7; from the product ID's major).
    std::uint32_t arch() const;

    Result<std::uint64_t> get_param(std::uint32_t param);

    // ---- BOs ----
    Result<PanfrostBo> bo_create(std::uint32_t size, std::uint32_t flags = 0);
    Status bo_destroy(std::uint32_t handle);  // GEM_CLOSE
    Result<std::uint64_t> bo_mmap_offset(std::uint32_t handle);
    // MMAP_BO + mmap (MAP_SHARED); unmap with munmap().
    Result<void*> bo_mmap(std::uint32_t handle, std::uint64_t size, int prot = PROT_READ | PROT_WRITE);
    Status munmap(void* addr, std::uint64_t size);
    Result<std::uint64_t> bo_offset(std::uint32_t handle);  // GET_BO_OFFSET
    // WAIT_BO until the BO is idle or `abs_timeout_ns` (deadline_after()); -ETIMEDOUT then, and a
    // zero/past deadline polls (-EBUSY when busy).
    Status bo_wait(std::uint32_t handle, std::int64_t abs_timeout_ns);
    // MADVISE: PANFROST_MADV_*; whether the BO still has its pages.
    Result<bool> bo_madvise(std::uint32_t handle, std::uint32_t madv);

    // ---- JM contexts (1.5) ----
    Result<std::uint32_t> jm_ctx_create(std::uint32_t priority = PANFROST_JM_CTX_PRIORITY_MEDIUM);
    Status jm_ctx_destroy(std::uint32_t handle);

    // ---- submits ----
    Status submit(const JmSubmit& s);
    // panvk's queue submit of one batch (see above); `queue_sync` is the queue's binary syncobj.
    Status queue_submit(const JmBatch& b, std::uint32_t queue_sync);

    // ---- syncobjs (DRM core) ----
    Result<std::uint32_t> syncobj_create(std::uint32_t flags = 0);
    Status syncobj_destroy(std::uint32_t handle);
    // Index of the first signalled handle (without WAIT_ALL); -ETIME on timeout.
    Result<std::uint32_t> syncobj_wait(std::span<const std::uint32_t> handles, std::int64_t abs_timeout_ns,
                                       std::uint32_t flags = drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL);
    Result<std::uint32_t> syncobj_wait(std::uint32_t handle, std::int64_t abs_timeout_ns) {
        return syncobj_wait({&handle, 1}, abs_timeout_ns, 0);
    }
    Status syncobj_reset(std::span<const std::uint32_t> handles);
    Status syncobj_signal(std::span<const std::uint32_t> handles);
    // Puts `src`'s fence into `dst` through a sync_file (export, then import), as panvk's
    // panvk_queue_transfer_sync does: panfrost has no timeline syncobjs, so no SYNCOBJ_TRANSFER.
    Status transfer_sync(std::uint32_t dst, std::uint32_t src);
    // now + ns on the backend's clock (saturating).
    std::int64_t deadline_after(std::int64_t ns);

private:
    explicit PanfrostClient(Backend& be) : be_(&be) {}
    int ioctl(unsigned long cmd, void* arg) { return be_->ioctl(cmd, arg); }
    Status syncobj_array_op(unsigned long cmd, std::span<const std::uint32_t> handles);

    Backend* be_;
    PanfrostGpuInfo info_;
};

}  // namespace umd
