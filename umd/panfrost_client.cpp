// Mirrors Mesa's src/panfrost/lib/kmod/panfrost_kmod.c, panvk's JM queue submit
// (src/panfrost/vulkan/jm/panvk_vX_gpu_queue.c) and libdrm's syncobj wrappers.
#include "umd/panfrost_client.h"

#include <cerrno>
#include <limits>

namespace umd {

using namespace drm::uapi;

namespace {

// The u32 arrays one ioctl's argument points at, announced to the backend for the call.
class UserArrays {
public:
    explicit UserArrays(Backend& be) : be_(be) {}
    ~UserArrays() {
        for (const auto& [p, n] : ranges_)
            be_.user_memory_remove(p, n);
    }
    UserArrays(const UserArrays&) = delete;
    UserArrays& operator=(const UserArrays&) = delete;

    // The array's user pointer (0 when empty).
    std::uint64_t add(std::span<const std::uint32_t> v) {
        if (v.empty())
            return 0;
        be_.user_memory_add(v.data(), v.size_bytes());
        ranges_.push_back({v.data(), v.size_bytes()});
        return reinterpret_cast<std::uint64_t>(v.data());
    }

private:
    Backend& be_;
    std::vector<std::pair<const void*, std::size_t>> ranges_;
};

}  // namespace

Result<std::unique_ptr<PanfrostClient>> PanfrostClient::open(Backend& backend) {
    std::unique_ptr<PanfrostClient> c(new PanfrostClient(backend));
    struct Param {
        std::uint32_t param;
        std::uint64_t PanfrostGpuInfo::*field;
        bool required;
    };
    // pan_kmod queries these at device creation; the 1.3/1.5 ones are optional there too.
    static constexpr Param kParams[] = {
        {DRM_PANFROST_PARAM_GPU_PROD_ID, &PanfrostGpuInfo::gpu_prod_id, true},
        {DRM_PANFROST_PARAM_GPU_REVISION, &PanfrostGpuInfo::gpu_revision, true},
        {DRM_PANFROST_PARAM_SHADER_PRESENT, &PanfrostGpuInfo::shader_present, true},
        {DRM_PANFROST_PARAM_JS_PRESENT, &PanfrostGpuInfo::js_present, true},
        {DRM_PANFROST_PARAM_MMU_FEATURES, &PanfrostGpuInfo::mmu_features, true},
        {DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP_FREQUENCY, &PanfrostGpuInfo::timestamp_frequency, false},
        {DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES, &PanfrostGpuInfo::allowed_jm_ctx_priorities, false},
    };
    for (const Param& p : kParams) {
        Result<std::uint64_t> v = c->get_param(p.param);
        if (v)
            c->info_.*p.field = *v;
        else if (p.required)
            return v.status();
    }
    return c;
}

std::uint32_t PanfrostClient::arch() const {
    const std::uint64_t id = info_.gpu_prod_id;
    if (id >= 0x1000)
        return static_cast<std::uint32_t>((id >> 12) & 0xF);
    return (id == 0x600 || id == 0x620) ? 4 : 5;  // Midgard: T60x/T62x are v4, the rest v5
}

Result<std::uint64_t> PanfrostClient::get_param(std::uint32_t param) {
    drm_panfrost_get_param args{};
    args.param = param;
    if (int ret = ioctl(DRM_IOCTL_PANFROST_GET_PARAM, &args))
        return err(ret);
    return args.value;
}

// ---- BOs ----

Result<PanfrostBo> PanfrostClient::bo_create(std::uint32_t size, std::uint32_t flags) {
    drm_panfrost_create_bo args{};
    args.size = size;
    args.flags = flags;
    if (int ret = ioctl(DRM_IOCTL_PANFROST_CREATE_BO, &args))
        return err(ret);
    return PanfrostBo{args.handle, size, args.offset};
}

Status PanfrostClient::bo_destroy(std::uint32_t handle) {
    drm_gem_close args{};
    args.handle = handle;
    return Status::from_ret(ioctl(DRM_IOCTL_GEM_CLOSE, &args));
}

Result<std::uint64_t> PanfrostClient::bo_mmap_offset(std::uint32_t handle) {
    drm_panfrost_mmap_bo args{};
    args.handle = handle;
    if (int ret = ioctl(DRM_IOCTL_PANFROST_MMAP_BO, &args))
        return err(ret);
    return args.offset;
}

Result<void*> PanfrostClient::bo_mmap(std::uint32_t handle, std::uint64_t size, int prot) {
    Result<std::uint64_t> off = bo_mmap_offset(handle);
    if (!off)
        return off.status();
    return be_->mmap(*off, size, prot, MAP_SHARED);
}

Status PanfrostClient::munmap(void* addr, std::uint64_t size) {
    return Status::from_ret(be_->munmap(addr, size));
}

Result<std::uint64_t> PanfrostClient::bo_offset(std::uint32_t handle) {
    drm_panfrost_get_bo_offset args{};
    args.handle = handle;
    if (int ret = ioctl(DRM_IOCTL_PANFROST_GET_BO_OFFSET, &args))
        return err(ret);
    return args.offset;
}

Status PanfrostClient::bo_wait(std::uint32_t handle, std::int64_t abs_timeout_ns) {
    drm_panfrost_wait_bo args{};
    args.handle = handle;
    args.timeout_ns = abs_timeout_ns;
    return Status::from_ret(ioctl(DRM_IOCTL_PANFROST_WAIT_BO, &args));
}

Result<bool> PanfrostClient::bo_madvise(std::uint32_t handle, std::uint32_t madv) {
    drm_panfrost_madvise args{};
    args.handle = handle;
    args.madv = madv;
    if (int ret = ioctl(DRM_IOCTL_PANFROST_MADVISE, &args))
        return err(ret);
    return args.retained != 0;
}

// ---- JM contexts ----

Result<std::uint32_t> PanfrostClient::jm_ctx_create(std::uint32_t priority) {
    drm_panfrost_jm_ctx_create args{};
    args.priority = priority;
    if (int ret = ioctl(DRM_IOCTL_PANFROST_JM_CTX_CREATE, &args))
        return err(ret);
    return args.handle;
}

Status PanfrostClient::jm_ctx_destroy(std::uint32_t handle) {
    drm_panfrost_jm_ctx_destroy args{};
    args.handle = handle;
    return Status::from_ret(ioctl(DRM_IOCTL_PANFROST_JM_CTX_DESTROY, &args));
}

// ---- submits ----

Status PanfrostClient::submit(const JmSubmit& s) {
    UserArrays mem(*be_);
    drm_panfrost_submit args{};
    args.jc = s.jc;
    args.in_syncs = mem.add(s.in_syncs);
    args.in_sync_count = static_cast<std::uint32_t>(s.in_syncs.size());
    args.out_sync = s.out_sync;
    args.bo_handles = mem.add(s.bos);
    args.bo_handle_count = static_cast<std::uint32_t>(s.bos.size());
    args.requirements = s.requirements;
    args.jm_ctx_handle = s.jm_ctx;
    return Status::from_ret(ioctl(DRM_IOCTL_PANFROST_SUBMIT, &args));
}

Status PanfrostClient::queue_submit(const JmBatch& b, std::uint32_t queue_sync) {
    const std::uint32_t base_reqs = b.cycle_count ? PANFROST_JD_REQ_CYCLE_COUNT : 0;
    if (b.vtc_jc) {
        JmSubmit s;
        s.jc = b.vtc_jc;
        s.in_syncs = b.waits;
        s.out_sync = queue_sync;
        s.bos = b.bos;
        s.requirements = base_reqs;
        s.jm_ctx = b.jm_ctx;
        if (Status st = submit(s); !st)
            return st;
    }
    if (b.frag_jc) {
        JmSubmit s;
        s.jc = b.frag_jc;
        // Fragment work reads what the tiler wrote: it waits for the vertex/tiler chain.
        s.in_syncs = b.vtc_jc ? std::vector<std::uint32_t>{queue_sync} : b.waits;
        s.out_sync = queue_sync;
        s.bos = b.bos;
        s.requirements = base_reqs | PANFROST_JD_REQ_FS;
        s.jm_ctx = b.jm_ctx;
        if (Status st = submit(s); !st)
            return st;
    }
    for (std::uint32_t sig : b.signals)
        if (Status st = transfer_sync(sig, queue_sync); !st)
            return st;
    return {};
}

// ---- syncobjs ----

Result<std::uint32_t> PanfrostClient::syncobj_create(std::uint32_t flags) {
    drm_syncobj_create args{};
    args.flags = flags;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &args))
        return err(ret);
    return args.handle;
}

Status PanfrostClient::syncobj_destroy(std::uint32_t handle) {
    drm_syncobj_destroy args{};
    args.handle = handle;
    return Status::from_ret(ioctl(DRM_IOCTL_SYNCOBJ_DESTROY, &args));
}

Result<std::uint32_t> PanfrostClient::syncobj_wait(std::span<const std::uint32_t> handles, std::int64_t abs_timeout_ns,
                                                   std::uint32_t flags) {
    UserArrays mem(*be_);
    drm_syncobj_wait args{};
    args.handles = mem.add(handles);
    args.count_handles = static_cast<std::uint32_t>(handles.size());
    args.timeout_nsec = abs_timeout_ns;
    args.flags = flags;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_WAIT, &args))
        return err(ret);
    return args.first_signaled;
}

Status PanfrostClient::syncobj_array_op(unsigned long cmd, std::span<const std::uint32_t> handles) {
    UserArrays mem(*be_);
    drm_syncobj_array args{};
    args.handles = mem.add(handles);
    args.count_handles = static_cast<std::uint32_t>(handles.size());
    return Status::from_ret(ioctl(cmd, &args));
}

Status PanfrostClient::syncobj_reset(std::span<const std::uint32_t> handles) {
    return syncobj_array_op(DRM_IOCTL_SYNCOBJ_RESET, handles);
}

Status PanfrostClient::syncobj_signal(std::span<const std::uint32_t> handles) {
    return syncobj_array_op(DRM_IOCTL_SYNCOBJ_SIGNAL, handles);
}

Status PanfrostClient::transfer_sync(std::uint32_t dst, std::uint32_t src) {
    drm_syncobj_handle exp{};
    exp.handle = src;
    exp.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
    exp.fd = -1;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &exp))
        return err(ret);
    drm_syncobj_handle imp{};
    imp.handle = dst;
    imp.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
    imp.fd = exp.fd;
    const int ret = ioctl(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp);
    (void)be_->close_fd(exp.fd);
    return Status::from_ret(ret);
}

std::int64_t PanfrostClient::deadline_after(std::int64_t ns) {
    const std::int64_t now = be_->monotonic_ns();
    if (ns > std::numeric_limits<std::int64_t>::max() - now)
        return std::numeric_limits<std::int64_t>::max();
    return now + ns;
}

}  // namespace umd
