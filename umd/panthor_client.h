// Mirrors Mesa's src/panfrost/lib/kmod/panthor_kmod.c (and the libdrm syncobj wrappers): a thin
// client over the panthor and DRM core ioctls.
//
// DOC: One PanthorClient per open device, over a Backend (an fd, or the in-process DrmFileBackend).
// Every call is one ioctl (or mmap) and returns its result as a value: Status / Result<T> carry
// the kernel's errno unchanged, so a caller sees exactly what libdrm would. The client builds the
// nested argument arrays itself (VM_BIND ops and their sync ops, queue submits, syncobj handle
// arrays) and announces them to the backend for the duration of the call. open() queries GPU_INFO
// and CSIF_INFO once, as pan_kmod does at device creation: group creation defaults its core masks
// from them and cs_config() sizes a command-stream builder from them.
#pragma once
#include <sys/mman.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "uapi/drm/drm.h"
#include "uapi/drm/panthor_drm.h"
#include "umd/backend.h"
#include "umd/cs_builder.h"
#include "umd/drm_version.h"
#include "umd/result.h"

namespace umd {

using u8 = std::uint8_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;

// ---- sync operations (VM_BIND and GROUP_SUBMIT) ----
// Binary syncobj: wait for / replace its fence. Timeline syncobj: wait for / add `point`.
drm_panthor_sync_op sync_wait(u32 syncobj);
drm_panthor_sync_op sync_signal(u32 syncobj);
drm_panthor_sync_op timeline_wait(u32 syncobj, u64 point);
drm_panthor_sync_op timeline_signal(u32 syncobj, u64 point);

// One VM_BIND operation and its sync ops.
struct BindOp {
    u32 flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP;
    u32 bo_handle = 0;
    u64 bo_offset = 0;
    u64 va = 0;
    u64 size = 0;
    std::vector<drm_panthor_sync_op> syncs;

    static BindOp map(u32 bo, u64 va, u64 size, u64 bo_offset = 0, u32 map_flags = 0,
                      std::vector<drm_panthor_sync_op> syncs = {});
    static BindOp unmap(u64 va, u64 size, std::vector<drm_panthor_sync_op> syncs = {});
    // 1.9: [va, va + size) backed by the file's dummy object (MAP_SPARSE | MAP_NOEXEC, which the
    // kernel requires; `map_flags` may add READONLY or UNCACHED).
    static BindOp map_sparse(u64 va, u64 size, u32 map_flags = 0, std::vector<drm_panthor_sync_op> syncs = {});
    static BindOp sync_only(std::vector<drm_panthor_sync_op> syncs);
};

struct VmInfo {
    u32 id = 0;
    u64 user_va_range = 0;  // the kernel's answer: where its auto-VA range starts
};

struct Bo {
    u32 handle = 0;
    u64 size = 0;  // rounded up to pages by the kernel
};

struct QueueDesc {
    u8 priority = 0;  // 0..15
    u32 ringbuf_size = 64 * 1024;
};

struct GroupDesc {
    u32 vm_id = 0;
    std::vector<QueueDesc> queues;
    u8 priority = PANTHOR_GROUP_PRIORITY_MEDIUM;
    // Unset: every present shader core (compute, fragment) / tiler, as panvk does.
    std::optional<u64> compute_core_mask, fragment_core_mask, tiler_core_mask;
    // Unset: the number of cores in the mask.
    std::optional<u8> max_compute_cores, max_fragment_cores, max_tiler_cores;
};

struct QueueSubmit {
    u32 queue_index = 0;
    u64 stream_addr = 0;   // 64-byte aligned; 0 with size 0 = a synchronisation-only submit
    u32 stream_size = 0;   // bytes, multiple of 8
    u32 latest_flush = 0;  // PanthorClient::latest_flush_id() when the stream was written; 0 forces a flush
    std::vector<drm_panthor_sync_op> syncs;

    // The stream of `b` (which must know its GPU VA).
    static QueueSubmit of(u32 queue_index, const cs::Builder& b, u32 latest_flush,
                          std::vector<drm_panthor_sync_op> syncs = {});
};

struct GroupState {
    u32 state = 0;         // DRM_PANTHOR_GROUP_STATE_*
    u32 fatal_queues = 0;  // bit i: queue i hit a fatal error
};

struct TilerHeapDesc {
    u32 vm_id = 0;
    u32 initial_chunk_count = 1;
    u32 chunk_size = 128 * 1024;
    u32 max_chunks = 16;
    u32 target_in_flight = 1;
};

struct TilerHeap {
    u32 handle = 0;
    u64 ctx_gpu_va = 0;
    u64 first_chunk_gpu_va = 0;
};

// A builder configuration for this device's command streams.
cs::Config cs_config(const drm_panthor_csif_info& csif);

class PanthorClient {
public:
    // Queries GPU_INFO and CSIF_INFO; `backend` must outlive the client.
    static Result<std::unique_ptr<PanthorClient>> open(Backend& backend);
    ~PanthorClient();
    PanthorClient(const PanthorClient&) = delete;
    PanthorClient& operator=(const PanthorClient&) = delete;

    Backend& backend() { return *be_; }
    const drm_panthor_gpu_info& gpu_info() const { return gpu_info_; }
    const drm_panthor_csif_info& csif_info() const { return csif_info_; }
    cs::Config cs_config() const { return umd::cs_config(csif_info_); }

    // ---- DRM core ----
    Result<DriverVersion> version();
    Result<u64> get_cap(u64 capability);

    // ---- DEV_QUERY ----
    Result<drm_panthor_gpu_info> query_gpu_info();
    Result<drm_panthor_csif_info> query_csif_info();
    // flags 0: the pre-1.8 answer (GPU timestamp, offset, frequency); otherwise
    // DRM_PANTHOR_TIMESTAMP_* (1.8): each field only when asked for.
    Result<drm_panthor_timestamp_info> query_timestamp_info(u32 flags = 0);
    Result<drm_panthor_group_priorities_info> query_group_priorities();
    // 1.9 (-EINVAL before): the page sizes of the GPU page tables.
    Result<drm_panthor_mmu_info> query_mmu_info();
    // The page-size bitmap: MMU_INFO's, or 4K|2M (what every driver before 1.9 uses) when the
    // driver does not know the query.
    u64 page_size_bitmap();
    // The kernel's size of a query type's struct (the pointer == 0 form).
    Result<u32> query_size(u32 type);
    // The raw form: `size` bytes at `data` for `type`.
    Status dev_query(u32 type, void* data, u32 size);

    // ---- VMs ----
    Result<VmInfo> vm_create(u64 user_va_range = 0);
    Status vm_destroy(u32 vm_id);
    // DRM_PANTHOR_VM_STATE_USABLE or _UNUSABLE.
    Result<u32> vm_get_state(u32 vm_id);
    // flags: 0 (synchronous; sync ops not allowed) or DRM_PANTHOR_VM_BIND_ASYNC. On a synchronous
    // failure the kernel reports how many ops completed; `*done` gets it when non-null.
    Status vm_bind(u32 vm_id, std::span<const BindOp> ops, u32 flags = 0, u32* done = nullptr);
    Status vm_bind_async(u32 vm_id, std::span<const BindOp> ops) {
        return vm_bind(vm_id, ops, DRM_PANTHOR_VM_BIND_ASYNC);
    }
    Status vm_map(u32 vm_id, u32 bo, u64 va, u64 size, u64 bo_offset = 0, u32 map_flags = 0);
    Status vm_unmap(u32 vm_id, u64 va, u64 size);
    Status vm_map_sparse(u32 vm_id, u64 va, u64 size, u32 map_flags = 0);

    // ---- BOs ----
    Result<Bo> bo_create(u64 size, u32 flags = 0, u32 exclusive_vm_id = 0);
    Status bo_destroy(u32 handle);  // GEM_CLOSE
    Result<u64> bo_mmap_offset(u32 handle);
    // BO_MMAP_OFFSET + mmap (MAP_SHARED). Unmap with munmap().
    Result<void*> bo_mmap(u32 handle, u64 size, int prot = PROT_READ | PROT_WRITE);
    Status munmap(void* addr, u64 size);
    // nullptr clears the label.
    Status bo_set_label(u32 handle, const char* label);
    // BO_SYNC (1.7): CPU cache maintenance of write-back BOs, in order (the first failing op
    // stops the batch).
    Status bo_sync(std::span<const drm_panthor_bo_sync_op> ops);
    Status bo_sync(u32 handle, u32 type, u64 offset, u64 size) {
        const drm_panthor_bo_sync_op op{handle, type, offset, size};
        return bo_sync({&op, 1});
    }
    // BO_QUERY_INFO (1.7): the creation flags, and whether the BO came from another device.
    Result<drm_panthor_bo_query_info> bo_query_info(u32 handle);

    // ---- groups ----
    Result<u32> group_create(const GroupDesc& desc);
    Status group_destroy(u32 group);
    Status group_submit(u32 group, std::span<const QueueSubmit> submits);
    Status group_submit(u32 group, const QueueSubmit& submit) { return group_submit(group, {&submit, 1}); }
    Result<GroupState> group_get_state(u32 group);

    // ---- tiler heaps ----
    Result<TilerHeap> tiler_heap_create(const TilerHeapDesc& desc);
    Status tiler_heap_destroy(u32 handle);

    // ---- the LATEST_FLUSH_ID page ----
    // Reads the GPU's latest flush ID through the USER_FLUSH_ID mmap (mapped on first use, kept
    // until the client goes), what a submit passes as latest_flush.
    Result<u32> latest_flush_id();
    // SET_USER_MMIO_OFFSET; later flush-page mappings use it.
    Status set_user_mmio_offset(u64 offset);

    // ---- syncobjs ----
    Result<u32> syncobj_create(u32 flags = 0);  // DRM_SYNCOBJ_CREATE_SIGNALED
    Status syncobj_destroy(u32 handle);
    // `abs_timeout_ns` on the backend's monotonic clock (deadline_after()). Returns the index of
    // the first signalled handle (without WAIT_ALL). -ETIME on timeout.
    Result<u32> syncobj_wait(std::span<const u32> handles, s64 abs_timeout_ns,
                             u32 flags = drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL);
    Result<u32> syncobj_wait(u32 handle, s64 abs_timeout_ns, u32 flags = 0) {
        return syncobj_wait({&handle, 1}, abs_timeout_ns, flags);
    }
    Result<u32> syncobj_timeline_wait(std::span<const u32> handles, std::span<const u64> points, s64 abs_timeout_ns,
                                      u32 flags = drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL);
    Status syncobj_reset(std::span<const u32> handles);
    Status syncobj_signal(std::span<const u32> handles);
    Status syncobj_timeline_signal(std::span<const u32> handles, std::span<const u64> points);
    // The last signalled point of each (flags: DRM_SYNCOBJ_QUERY_FLAGS_LAST_SUBMITTED).
    Result<std::vector<u64>> syncobj_query(std::span<const u32> handles, u32 flags = 0);
    Status syncobj_transfer(u32 dst, u64 dst_point, u32 src, u64 src_point, u32 flags = 0);
    // An fd for the syncobj (or, with EXPORT_SYNC_FILE, a sync_file of its fence); close it with
    // backend().close_fd().
    Result<int> syncobj_handle_to_fd(u32 handle, u32 flags = 0, u64 point = 0);
    // A handle for a syncobj fd; with IMPORT_SYNC_FILE, puts the sync_file's fence into the
    // existing `handle` (at `point` with the TIMELINE flag) and returns that handle.
    Result<u32> syncobj_fd_to_handle(int fd, u32 flags = 0, u32 handle = 0, u64 point = 0);
    // now + ns on the backend's clock (saturating), for the waits above.
    s64 deadline_after(s64 ns);

private:
    explicit PanthorClient(Backend& be) : be_(&be) {}
    int ioctl(unsigned long cmd, void* arg) { return be_->ioctl(cmd, arg); }

    Backend* be_;
    drm_panthor_gpu_info gpu_info_{};
    drm_panthor_csif_info csif_info_{};
    u64 user_mmio_offset_ = DRM_PANTHOR_USER_MMIO_OFFSET;
    void* flush_page_ = nullptr;
};

}  // namespace umd
