// Mirrors Mesa's src/panfrost/lib/kmod/panthor_kmod.c and libdrm's xf86drm.c syncobj wrappers.
#include "umd/panthor_client.h"

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>

namespace umd {

using namespace drm::uapi;

namespace {

constexpr size_t kPageSize = 4096;

// The buffers one ioctl's argument points at, announced to the backend for the call's duration.
class UserMem {
public:
    explicit UserMem(Backend& be) : be_(be) {}
    ~UserMem() {
        for (const Range& r : ranges_)
            be_.user_memory_remove(r.p, r.n);
    }
    UserMem(const UserMem&) = delete;
    UserMem& operator=(const UserMem&) = delete;

    void add(const void* p, size_t n) {
        if (!p || !n)
            return;
        be_.user_memory_add(p, n);
        ranges_.push_back({p, n});
    }
    template <class T>
    void add_array(const std::vector<T>& v) {
        add(v.data(), v.size() * sizeof(T));
    }

private:
    struct Range {
        const void* p;
        size_t n;
    };
    Backend& be_;
    std::vector<Range> ranges_;
};

template <class T>
drm_panthor_obj_array obj_array(const std::vector<T>& v) {
    return {sizeof(T), static_cast<u32>(v.size()), v.empty() ? 0 : reinterpret_cast<u64>(v.data())};
}

drm_panthor_sync_op make_sync(u32 type, u32 dir, u32 handle, u64 point) {
    drm_panthor_sync_op op{};
    op.flags = type | dir;
    op.handle = handle;
    op.timeline_value = point;
    return op;
}

}  // namespace

// ---- sync ops, bind ops, submits ----

drm_panthor_sync_op sync_wait(u32 syncobj) {
    return make_sync(DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ, DRM_PANTHOR_SYNC_OP_WAIT, syncobj, 0);
}
drm_panthor_sync_op sync_signal(u32 syncobj) {
    return make_sync(DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ, DRM_PANTHOR_SYNC_OP_SIGNAL, syncobj, 0);
}
drm_panthor_sync_op timeline_wait(u32 syncobj, u64 point) {
    return make_sync(DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ, DRM_PANTHOR_SYNC_OP_WAIT, syncobj, point);
}
drm_panthor_sync_op timeline_signal(u32 syncobj, u64 point) {
    return make_sync(DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ, DRM_PANTHOR_SYNC_OP_SIGNAL, syncobj, point);
}

BindOp BindOp::map(u32 bo, u64 va, u64 size, u64 bo_offset, u32 map_flags, std::vector<drm_panthor_sync_op> syncs) {
    BindOp op;
    op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP | map_flags;
    op.bo_handle = bo;
    op.bo_offset = bo_offset;
    op.va = va;
    op.size = size;
    op.syncs = std::move(syncs);
    return op;
}

BindOp BindOp::unmap(u64 va, u64 size, std::vector<drm_panthor_sync_op> syncs) {
    BindOp op;
    op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP;
    op.va = va;
    op.size = size;
    op.syncs = std::move(syncs);
    return op;
}

BindOp BindOp::map_sparse(u64 va, u64 size, u32 map_flags, std::vector<drm_panthor_sync_op> syncs) {
    return map(0, va, size, 0, map_flags | DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE | DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC,
               std::move(syncs));
}

BindOp BindOp::sync_only(std::vector<drm_panthor_sync_op> syncs) {
    BindOp op;
    op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_SYNC_ONLY;
    op.syncs = std::move(syncs);
    return op;
}

QueueSubmit QueueSubmit::of(u32 queue_index, const cs::Builder& b, u32 latest_flush,
                            std::vector<drm_panthor_sync_op> syncs) {
    QueueSubmit s;
    s.queue_index = queue_index;
    s.stream_addr = b.gpu_va();
    s.stream_size = static_cast<u32>(b.size_bytes());
    s.latest_flush = latest_flush;
    s.syncs = std::move(syncs);
    return s;
}

cs::Config cs_config(const drm_panthor_csif_info& csif) {
    cs::Config c;
    c.nr_registers = csif.cs_reg_count;
    c.nr_kernel_registers = csif.unpreserved_cs_reg_count;
    c.nr_scoreboards = csif.scoreboard_slot_count;
    return c;
}

// ---- open / close ----

Result<std::unique_ptr<PanthorClient>> PanthorClient::open(Backend& backend) {
    std::unique_ptr<PanthorClient> c(new PanthorClient(backend));
    Result<drm_panthor_gpu_info> gpu = c->query_gpu_info();
    if (!gpu)
        return gpu.status();
    Result<drm_panthor_csif_info> csif = c->query_csif_info();
    if (!csif)
        return csif.status();
    c->gpu_info_ = *gpu;
    c->csif_info_ = *csif;
    return c;
}

PanthorClient::~PanthorClient() {
    if (flush_page_)
        (void)be_->munmap(flush_page_, kPageSize);
}

// ---- DRM core ----

Result<DriverVersion> PanthorClient::version() {
    return drm_get_version(*be_);
}

Result<u64> PanthorClient::get_cap(u64 capability) {
    drm_get_cap args{};
    args.capability = capability;
    if (int ret = ioctl(DRM_IOCTL_GET_CAP, &args))
        return err(ret);
    return args.value;
}

// ---- DEV_QUERY ----

Status PanthorClient::dev_query(u32 type, void* data, u32 size) {
    drm_panthor_dev_query args{};
    args.type = type;
    args.size = size;
    args.pointer = reinterpret_cast<u64>(data);
    UserMem mem(*be_);
    mem.add(data, size);
    return Status::from_ret(ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &args));
}

Result<u32> PanthorClient::query_size(u32 type) {
    drm_panthor_dev_query args{};
    args.type = type;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &args))
        return err(ret);
    return args.size;
}

namespace {
template <class T>
Result<T> query(PanthorClient& c, u32 type) {
    T out{};
    Status s = c.dev_query(type, &out, sizeof(out));
    if (!s)
        return s;
    return out;
}
}  // namespace

Result<drm_panthor_gpu_info> PanthorClient::query_gpu_info() {
    return query<drm_panthor_gpu_info>(*this, DRM_PANTHOR_DEV_QUERY_GPU_INFO);
}
Result<drm_panthor_csif_info> PanthorClient::query_csif_info() {
    return query<drm_panthor_csif_info>(*this, DRM_PANTHOR_DEV_QUERY_CSIF_INFO);
}
Result<drm_panthor_timestamp_info> PanthorClient::query_timestamp_info(u32 flags) {
    drm_panthor_timestamp_info out{};
    out.flags = flags;  // an input since 1.8; the rest must be zero for the kernel's tail check
    Status s = dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, &out, sizeof(out));
    if (!s)
        return s;
    return out;
}
Result<drm_panthor_group_priorities_info> PanthorClient::query_group_priorities() {
    return query<drm_panthor_group_priorities_info>(*this, DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO);
}

Result<drm_panthor_mmu_info> PanthorClient::query_mmu_info() {
    return query<drm_panthor_mmu_info>(*this, DRM_PANTHOR_DEV_QUERY_MMU_INFO);
}

u64 PanthorClient::page_size_bitmap() {
    // Mesa's fallback for drivers before 1.9.
    constexpr u64 kDefault = (u64{1} << 12) | (u64{1} << 21);
    const auto info = query_mmu_info();
    return info.ok() ? info->page_size_bitmap : kDefault;
}

// ---- VMs ----

Result<VmInfo> PanthorClient::vm_create(u64 user_va_range) {
    drm_panthor_vm_create args{};
    args.user_va_range = user_va_range;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_VM_CREATE, &args))
        return err(ret);
    return VmInfo{args.id, args.user_va_range};
}

Status PanthorClient::vm_destroy(u32 vm_id) {
    drm_panthor_vm_destroy args{};
    args.id = vm_id;
    return Status::from_ret(ioctl(DRM_IOCTL_PANTHOR_VM_DESTROY, &args));
}

Result<u32> PanthorClient::vm_get_state(u32 vm_id) {
    drm_panthor_vm_get_state args{};
    args.vm_id = vm_id;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_VM_GET_STATE, &args))
        return err(ret);
    return args.state;
}

Status PanthorClient::vm_bind(u32 vm_id, std::span<const BindOp> ops, u32 flags, u32* done) {
    UserMem mem(*be_);
    std::vector<drm_panthor_vm_bind_op> arr;
    arr.reserve(ops.size());
    for (const BindOp& o : ops) {
        drm_panthor_vm_bind_op op{};
        op.flags = o.flags;
        op.bo_handle = o.bo_handle;
        op.bo_offset = o.bo_offset;
        op.va = o.va;
        op.size = o.size;
        op.syncs = obj_array(o.syncs);
        mem.add_array(o.syncs);
        arr.push_back(op);
    }
    mem.add_array(arr);
    drm_panthor_vm_bind args{};
    args.vm_id = vm_id;
    args.flags = flags;
    args.ops = obj_array(arr);
    const int ret = ioctl(DRM_IOCTL_PANTHOR_VM_BIND, &args);
    if (done)
        *done = ret ? args.ops.count : static_cast<u32>(ops.size());
    return Status::from_ret(ret);
}

Status PanthorClient::vm_map(u32 vm_id, u32 bo, u64 va, u64 size, u64 bo_offset, u32 map_flags) {
    const BindOp op = BindOp::map(bo, va, size, bo_offset, map_flags);
    return vm_bind(vm_id, {&op, 1});
}

Status PanthorClient::vm_unmap(u32 vm_id, u64 va, u64 size) {
    const BindOp op = BindOp::unmap(va, size);
    return vm_bind(vm_id, {&op, 1});
}

Status PanthorClient::vm_map_sparse(u32 vm_id, u64 va, u64 size, u32 map_flags) {
    const BindOp op = BindOp::map_sparse(va, size, map_flags);
    return vm_bind(vm_id, {&op, 1});
}

// ---- BOs ----

Result<Bo> PanthorClient::bo_create(u64 size, u32 flags, u32 exclusive_vm_id) {
    drm_panthor_bo_create args{};
    args.size = size;
    args.flags = flags;
    args.exclusive_vm_id = exclusive_vm_id;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_BO_CREATE, &args))
        return err(ret);
    return Bo{args.handle, args.size};
}

Status PanthorClient::bo_destroy(u32 handle) {
    drm_gem_close args{};
    args.handle = handle;
    return Status::from_ret(ioctl(DRM_IOCTL_GEM_CLOSE, &args));
}

Result<u64> PanthorClient::bo_mmap_offset(u32 handle) {
    drm_panthor_bo_mmap_offset args{};
    args.handle = handle;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &args))
        return err(ret);
    return args.offset;
}

Result<void*> PanthorClient::bo_mmap(u32 handle, u64 size, int prot) {
    Result<u64> off = bo_mmap_offset(handle);
    if (!off)
        return off.status();
    return be_->mmap(*off, size, prot, MAP_SHARED);
}

Status PanthorClient::munmap(void* addr, u64 size) {
    return Status::from_ret(be_->munmap(addr, size));
}

Status PanthorClient::bo_sync(std::span<const drm_panthor_bo_sync_op> ops) {
    drm_panthor_bo_sync args{};
    args.ops = {sizeof(drm_panthor_bo_sync_op), static_cast<u32>(ops.size()),
                ops.empty() ? 0 : reinterpret_cast<u64>(ops.data())};
    UserMem mem(*be_);
    mem.add(ops.data(), ops.size_bytes());
    return Status::from_ret(ioctl(DRM_IOCTL_PANTHOR_BO_SYNC, &args));
}

Result<drm_panthor_bo_query_info> PanthorClient::bo_query_info(u32 handle) {
    drm_panthor_bo_query_info args{};
    args.handle = handle;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_BO_QUERY_INFO, &args))
        return err(ret);
    return args;
}

Status PanthorClient::bo_set_label(u32 handle, const char* label) {
    drm_panthor_bo_set_label args{};
    args.handle = handle;
    args.label = reinterpret_cast<u64>(label);
    UserMem mem(*be_);
    if (label)
        mem.add(label, std::strlen(label) + 1);
    return Status::from_ret(ioctl(DRM_IOCTL_PANTHOR_BO_SET_LABEL, &args));
}

// ---- groups ----

Result<u32> PanthorClient::group_create(const GroupDesc& desc) {
    std::vector<drm_panthor_queue_create> queues;
    queues.reserve(desc.queues.size());
    for (const QueueDesc& q : desc.queues) {
        drm_panthor_queue_create qc{};
        qc.priority = q.priority;
        qc.ringbuf_size = q.ringbuf_size;
        queues.push_back(qc);
    }
    UserMem mem(*be_);
    mem.add_array(queues);

    drm_panthor_group_create args{};
    args.queues = obj_array(queues);
    args.priority = desc.priority;
    args.compute_core_mask = desc.compute_core_mask.value_or(gpu_info_.shader_present);
    args.fragment_core_mask = desc.fragment_core_mask.value_or(gpu_info_.shader_present);
    args.tiler_core_mask = desc.tiler_core_mask.value_or(gpu_info_.tiler_present);
    args.max_compute_cores = desc.max_compute_cores.value_or(static_cast<u8>(std::popcount(args.compute_core_mask)));
    args.max_fragment_cores = desc.max_fragment_cores.value_or(static_cast<u8>(std::popcount(args.fragment_core_mask)));
    args.max_tiler_cores = desc.max_tiler_cores.value_or(static_cast<u8>(std::popcount(args.tiler_core_mask)));
    args.vm_id = desc.vm_id;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_GROUP_CREATE, &args))
        return err(ret);
    return args.group_handle;
}

Status PanthorClient::group_destroy(u32 group) {
    drm_panthor_group_destroy args{};
    args.group_handle = group;
    return Status::from_ret(ioctl(DRM_IOCTL_PANTHOR_GROUP_DESTROY, &args));
}

Status PanthorClient::group_submit(u32 group, std::span<const QueueSubmit> submits) {
    UserMem mem(*be_);
    std::vector<drm_panthor_queue_submit> arr;
    arr.reserve(submits.size());
    for (const QueueSubmit& s : submits) {
        drm_panthor_queue_submit qs{};
        qs.queue_index = s.queue_index;
        qs.stream_size = s.stream_size;
        qs.stream_addr = s.stream_addr;
        qs.latest_flush = s.latest_flush;
        qs.syncs = obj_array(s.syncs);
        mem.add_array(s.syncs);
        arr.push_back(qs);
    }
    mem.add_array(arr);
    drm_panthor_group_submit args{};
    args.group_handle = group;
    args.queue_submits = obj_array(arr);
    return Status::from_ret(ioctl(DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &args));
}

Result<GroupState> PanthorClient::group_get_state(u32 group) {
    drm_panthor_group_get_state args{};
    args.group_handle = group;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &args))
        return err(ret);
    return GroupState{args.state, args.fatal_queues};
}

// ---- tiler heaps ----

Result<TilerHeap> PanthorClient::tiler_heap_create(const TilerHeapDesc& desc) {
    drm_panthor_tiler_heap_create args{};
    args.vm_id = desc.vm_id;
    args.initial_chunk_count = desc.initial_chunk_count;
    args.chunk_size = desc.chunk_size;
    args.max_chunks = desc.max_chunks;
    args.target_in_flight = desc.target_in_flight;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE, &args))
        return err(ret);
    return TilerHeap{args.handle, args.tiler_heap_ctx_gpu_va, args.first_heap_chunk_gpu_va};
}

Status PanthorClient::tiler_heap_destroy(u32 handle) {
    drm_panthor_tiler_heap_destroy args{};
    args.handle = handle;
    return Status::from_ret(ioctl(DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY, &args));
}

// ---- LATEST_FLUSH_ID ----

Result<u32> PanthorClient::latest_flush_id() {
    if (!flush_page_) {
        // panvk maps it read-only, shared, one page: the kernel refuses anything else.
        Result<void*> p =
            be_->mmap(user_mmio_offset_ + (DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET - DRM_PANTHOR_USER_MMIO_OFFSET),
                      kPageSize, PROT_READ, MAP_SHARED);
        if (!p)
            return p.status();
        flush_page_ = *p;
    }
    return be_->read32(flush_page_, 0);
}

Status PanthorClient::set_user_mmio_offset(u64 offset) {
    drm_panthor_set_user_mmio_offset args{};
    args.offset = offset;
    if (int ret = ioctl(DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET, &args))
        return err(ret);
    user_mmio_offset_ = offset;
    return {};
}

// ---- syncobjs ----

Result<u32> PanthorClient::syncobj_create(u32 flags) {
    drm_syncobj_create args{};
    args.flags = flags;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &args))
        return err(ret);
    return args.handle;
}

Status PanthorClient::syncobj_destroy(u32 handle) {
    drm_syncobj_destroy args{};
    args.handle = handle;
    return Status::from_ret(ioctl(DRM_IOCTL_SYNCOBJ_DESTROY, &args));
}

Result<u32> PanthorClient::syncobj_wait(std::span<const u32> handles, s64 abs_timeout_ns, u32 flags) {
    UserMem mem(*be_);
    mem.add(handles.data(), handles.size_bytes());
    drm_syncobj_wait args{};
    args.handles = reinterpret_cast<u64>(handles.data());
    args.count_handles = static_cast<u32>(handles.size());
    args.timeout_nsec = abs_timeout_ns;
    args.flags = flags;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_WAIT, &args))
        return err(ret);
    return args.first_signaled;
}

Result<u32> PanthorClient::syncobj_timeline_wait(std::span<const u32> handles, std::span<const u64> points,
                                                 s64 abs_timeout_ns, u32 flags) {
    if (points.size() != handles.size())
        return err(-EINVAL);
    UserMem mem(*be_);
    mem.add(handles.data(), handles.size_bytes());
    mem.add(points.data(), points.size_bytes());
    drm_syncobj_timeline_wait args{};
    args.handles = reinterpret_cast<u64>(handles.data());
    args.points = reinterpret_cast<u64>(points.data());
    args.count_handles = static_cast<u32>(handles.size());
    args.timeout_nsec = abs_timeout_ns;
    args.flags = flags;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &args))
        return err(ret);
    return args.first_signaled;
}

namespace {
Status syncobj_array_op(Backend& be, unsigned long cmd, std::span<const u32> handles) {
    UserMem mem(be);
    mem.add(handles.data(), handles.size_bytes());
    drm_syncobj_array args{};
    args.handles = reinterpret_cast<u64>(handles.data());
    args.count_handles = static_cast<u32>(handles.size());
    return Status::from_ret(be.ioctl(cmd, &args));
}
}  // namespace

Status PanthorClient::syncobj_reset(std::span<const u32> handles) {
    return syncobj_array_op(*be_, DRM_IOCTL_SYNCOBJ_RESET, handles);
}

Status PanthorClient::syncobj_signal(std::span<const u32> handles) {
    return syncobj_array_op(*be_, DRM_IOCTL_SYNCOBJ_SIGNAL, handles);
}

Status PanthorClient::syncobj_timeline_signal(std::span<const u32> handles, std::span<const u64> points) {
    if (points.size() != handles.size())
        return err(-EINVAL);
    UserMem mem(*be_);
    mem.add(handles.data(), handles.size_bytes());
    mem.add(points.data(), points.size_bytes());
    drm_syncobj_timeline_array args{};
    args.handles = reinterpret_cast<u64>(handles.data());
    args.points = reinterpret_cast<u64>(points.data());
    args.count_handles = static_cast<u32>(handles.size());
    return Status::from_ret(ioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &args));
}

Result<std::vector<u64>> PanthorClient::syncobj_query(std::span<const u32> handles, u32 flags) {
    std::vector<u64> points(handles.size());
    UserMem mem(*be_);
    mem.add(handles.data(), handles.size_bytes());
    mem.add_array(points);
    drm_syncobj_timeline_array args{};
    args.handles = reinterpret_cast<u64>(handles.data());
    args.points = reinterpret_cast<u64>(points.data());
    args.count_handles = static_cast<u32>(handles.size());
    args.flags = flags;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_QUERY, &args))
        return err(ret);
    return points;
}

Status PanthorClient::syncobj_transfer(u32 dst, u64 dst_point, u32 src, u64 src_point, u32 flags) {
    drm_syncobj_transfer args{};
    args.src_handle = src;
    args.dst_handle = dst;
    args.src_point = src_point;
    args.dst_point = dst_point;
    args.flags = flags;
    return Status::from_ret(ioctl(DRM_IOCTL_SYNCOBJ_TRANSFER, &args));
}

Result<int> PanthorClient::syncobj_handle_to_fd(u32 handle, u32 flags, u64 point) {
    drm_syncobj_handle args{};
    args.handle = handle;
    args.flags = flags;
    args.fd = -1;
    args.point = point;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &args))
        return err(ret);
    return args.fd;
}

Result<u32> PanthorClient::syncobj_fd_to_handle(int fd, u32 flags, u32 handle, u64 point) {
    drm_syncobj_handle args{};
    args.fd = fd;
    args.flags = flags;
    args.handle = handle;
    args.point = point;
    if (int ret = ioctl(DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &args))
        return err(ret);
    return args.handle;
}

s64 PanthorClient::deadline_after(s64 ns) {
    const s64 now = be_->monotonic_ns();
    if (ns > std::numeric_limits<s64>::max() - now)
        return std::numeric_limits<s64>::max();
    return now + ns;
}

}  // namespace umd
