// The ioctl layouts of captures (ioctl_layout.h): the panthor uAPI (uapi/drm/panthor_drm.h), the
// DRM core's (uapi/drm/drm.h), sync_file and sw_sync (uapi/linux/sync_file.h).
#include "tools/capture/ioctl_layout.h"

#include <cstdio>
#include <cstring>

#include "uapi/drm/drm.h"
#include "uapi/drm/panthor_drm.h"
#include "uapi/linux/sync_file.h"

namespace upanthor::capture {
namespace {

using C = PtrRule::Count;
namespace u = drm::uapi;

// Elements.
const TypeLayout kU32Syncobjs{"u32 syncobj handle", 4, {{0, 4, Ref::Syncobj, false}}, {}};
const TypeLayout kU64Points{"u64 point", 8, {}, {}};
const TypeLayout kSyncOp{"drm_panthor_sync_op", sizeof(drm_panthor_sync_op), {{4, 4, Ref::Syncobj, false}}, {}};
const TypeLayout kVmBindOp{"drm_panthor_vm_bind_op",
                           sizeof(drm_panthor_vm_bind_op),
                           {{offsetof(drm_panthor_vm_bind_op, bo_handle), 4, Ref::Gem, false}},
                           {{offsetof(drm_panthor_vm_bind_op, syncs) + 8, C::ObjArray, 0, 0, &kSyncOp}}};
const TypeLayout kBoSyncOp{"drm_panthor_bo_sync_op",
                           sizeof(drm_panthor_bo_sync_op),
                           {{offsetof(drm_panthor_bo_sync_op, handle), 4, Ref::Gem, false}},
                           {}};
const TypeLayout kQueueCreate{"drm_panthor_queue_create", sizeof(drm_panthor_queue_create), {}, {}};
const TypeLayout kQueueSubmit{"drm_panthor_queue_submit",
                              sizeof(drm_panthor_queue_submit),
                              {},
                              {{offsetof(drm_panthor_queue_submit, syncs) + 8, C::ObjArray, 0, 0, &kSyncOp}}};
const TypeLayout kSyncFenceInfo{"sync_fence_info",
                                sizeof(u::sync_fence_info),
                                {{offsetof(u::sync_fence_info, timestamp_ns), 8, Ref::Volatile, false}},
                                {}};

// Panthor.
const TypeLayout kDevQuery{
    "drm_panthor_dev_query",
    sizeof(drm_panthor_dev_query),
    {},
    {{offsetof(drm_panthor_dev_query, pointer), C::Bytes32, offsetof(drm_panthor_dev_query, size)}}};
const TypeLayout kVmCreate{"drm_panthor_vm_create",
                           sizeof(drm_panthor_vm_create),
                           {{offsetof(drm_panthor_vm_create, id), 4, Ref::Vm, true}},
                           {}};
const TypeLayout kVmDestroy{"drm_panthor_vm_destroy", sizeof(drm_panthor_vm_destroy), {{0, 4, Ref::Vm, false}}, {}};
const TypeLayout kVmBind{"drm_panthor_vm_bind",
                         sizeof(drm_panthor_vm_bind),
                         {{0, 4, Ref::Vm, false}},
                         {{offsetof(drm_panthor_vm_bind, ops) + 8, C::ObjArray, 0, 0, &kVmBindOp}}};
const TypeLayout kVmGetState{
    "drm_panthor_vm_get_state", sizeof(drm_panthor_vm_get_state), {{0, 4, Ref::Vm, false}}, {}};
const TypeLayout kBoCreate{"drm_panthor_bo_create",
                           sizeof(drm_panthor_bo_create),
                           {{offsetof(drm_panthor_bo_create, exclusive_vm_id), 4, Ref::Vm, false},
                            {offsetof(drm_panthor_bo_create, handle), 4, Ref::Gem, true}},
                           {}};
const TypeLayout kBoMmapOffset{
    "drm_panthor_bo_mmap_offset",
    sizeof(drm_panthor_bo_mmap_offset),
    {{0, 4, Ref::Gem, false}, {offsetof(drm_panthor_bo_mmap_offset, offset), 8, Ref::MmapOffset, true}},
    {}};
const TypeLayout kBoSetLabel{"drm_panthor_bo_set_label",
                             sizeof(drm_panthor_bo_set_label),
                             {{0, 4, Ref::Gem, false}},
                             {{offsetof(drm_panthor_bo_set_label, label), C::CString}}};
const TypeLayout kBoSync{"drm_panthor_bo_sync",
                         sizeof(drm_panthor_bo_sync),
                         {},
                         {{offsetof(drm_panthor_bo_sync, ops) + 8, C::ObjArray, 0, 0, &kBoSyncOp}}};
const TypeLayout kBoQueryInfo{
    "drm_panthor_bo_query_info", sizeof(drm_panthor_bo_query_info), {{0, 4, Ref::Gem, false}}, {}};
const TypeLayout kSetUserMmio{"drm_panthor_set_user_mmio_offset", sizeof(drm_panthor_set_user_mmio_offset), {}, {}};
const TypeLayout kGroupCreate{"drm_panthor_group_create",
                              sizeof(drm_panthor_group_create),
                              {{offsetof(drm_panthor_group_create, vm_id), 4, Ref::Vm, false},
                               {offsetof(drm_panthor_group_create, group_handle), 4, Ref::Group, true}},
                              {{offsetof(drm_panthor_group_create, queues) + 8, C::ObjArray, 0, 0, &kQueueCreate}}};
const TypeLayout kGroupDestroy{
    "drm_panthor_group_destroy", sizeof(drm_panthor_group_destroy), {{0, 4, Ref::Group, false}}, {}};
const TypeLayout kGroupSubmit{
    "drm_panthor_group_submit",
    sizeof(drm_panthor_group_submit),
    {{0, 4, Ref::Group, false}},
    {{offsetof(drm_panthor_group_submit, queue_submits) + 8, C::ObjArray, 0, 0, &kQueueSubmit}}};
const TypeLayout kGroupGetState{
    "drm_panthor_group_get_state", sizeof(drm_panthor_group_get_state), {{0, 4, Ref::Group, false}}, {}};
const TypeLayout kHeapCreate{
    "drm_panthor_tiler_heap_create",
    sizeof(drm_panthor_tiler_heap_create),
    {{0, 4, Ref::Vm, false}, {offsetof(drm_panthor_tiler_heap_create, handle), 4, Ref::Heap, true}},
    {}};
const TypeLayout kHeapDestroy{
    "drm_panthor_tiler_heap_destroy", sizeof(drm_panthor_tiler_heap_destroy), {{0, 4, Ref::Heap, false}}, {}};

// DRM core.
const TypeLayout kVersion{"drm_version",
                          sizeof(u::drm_version),
                          {},
                          {{offsetof(u::drm_version, name), C::Bytes64, offsetof(u::drm_version, name_len)},
                           {offsetof(u::drm_version, date), C::Bytes64, offsetof(u::drm_version, date_len)},
                           {offsetof(u::drm_version, desc), C::Bytes64, offsetof(u::drm_version, desc_len)}}};
struct drm_unique {  // DRM_IOCTL_GET_UNIQUE
    std::size_t unique_len;
    char* unique;
};
const TypeLayout kUnique{"drm_unique", sizeof(drm_unique), {}, {{offsetof(drm_unique, unique), C::Bytes64, 0}}};
const TypeLayout kGemClose{"drm_gem_close", sizeof(u::drm_gem_close), {{0, 4, Ref::Gem, false}}, {}};
const TypeLayout kPrimeToFd{"drm_prime_handle",
                            sizeof(u::drm_prime_handle),
                            {{0, 4, Ref::Gem, false}, {offsetof(u::drm_prime_handle, fd), 4, Ref::Fd, true}},
                            {}};
const TypeLayout kPrimeFromFd{"drm_prime_handle",
                              sizeof(u::drm_prime_handle),
                              {{0, 4, Ref::Gem, true}, {offsetof(u::drm_prime_handle, fd), 4, Ref::Fd, false}},
                              {}};
const TypeLayout kSyncobjCreate{"drm_syncobj_create", sizeof(u::drm_syncobj_create), {{0, 4, Ref::Syncobj, true}}, {}};
const TypeLayout kSyncobjDestroy{
    "drm_syncobj_destroy", sizeof(u::drm_syncobj_destroy), {{0, 4, Ref::Syncobj, false}}, {}};
const TypeLayout kSyncobjToFd{"drm_syncobj_handle",
                              sizeof(u::drm_syncobj_handle),
                              {{0, 4, Ref::Syncobj, false}, {offsetof(u::drm_syncobj_handle, fd), 4, Ref::Fd, true}},
                              {}};
const TypeLayout kSyncobjFromFd{"drm_syncobj_handle",
                                sizeof(u::drm_syncobj_handle),
                                {{0, 4, Ref::Syncobj, true}, {offsetof(u::drm_syncobj_handle, fd), 4, Ref::Fd, false}},
                                {}};
const TypeLayout kSyncobjWait{"drm_syncobj_wait",
                              sizeof(u::drm_syncobj_wait),
                              {},
                              {{0, C::Elems32, offsetof(u::drm_syncobj_wait, count_handles), 4, &kU32Syncobjs}}};
const TypeLayout kSyncobjTimelineWait{
    "drm_syncobj_timeline_wait",
    sizeof(u::drm_syncobj_timeline_wait),
    {},
    {{0, C::Elems32, offsetof(u::drm_syncobj_timeline_wait, count_handles), 4, &kU32Syncobjs},
     {offsetof(u::drm_syncobj_timeline_wait, points), C::Elems32, offsetof(u::drm_syncobj_timeline_wait, count_handles),
      8, &kU64Points}}};
const TypeLayout kSyncobjArray{"drm_syncobj_array",
                               sizeof(u::drm_syncobj_array),
                               {},
                               {{0, C::Elems32, offsetof(u::drm_syncobj_array, count_handles), 4, &kU32Syncobjs}}};
const TypeLayout kSyncobjTimelineArray{
    "drm_syncobj_timeline_array",
    sizeof(u::drm_syncobj_timeline_array),
    {},
    {{0, C::Elems32, offsetof(u::drm_syncobj_timeline_array, count_handles), 4, &kU32Syncobjs},
     {offsetof(u::drm_syncobj_timeline_array, points), C::Elems32,
      offsetof(u::drm_syncobj_timeline_array, count_handles), 8, &kU64Points}}};
const TypeLayout kSyncobjTransfer{"drm_syncobj_transfer",
                                  sizeof(u::drm_syncobj_transfer),
                                  {{0, 4, Ref::Syncobj, false}, {4, 4, Ref::Syncobj, false}},
                                  {}};
const TypeLayout kSyncobjEventfd{
    "drm_syncobj_eventfd",
    sizeof(u::drm_syncobj_eventfd),
    {{0, 4, Ref::Syncobj, false}, {offsetof(u::drm_syncobj_eventfd, fd), 4, Ref::Fd, false}},
    {}};

// sync_file, sw_sync.
const TypeLayout kSyncMerge{
    "sync_merge_data",
    sizeof(u::sync_merge_data),
    {{offsetof(u::sync_merge_data, fd2), 4, Ref::Fd, false}, {offsetof(u::sync_merge_data, fence), 4, Ref::Fd, true}},
    {}};
const TypeLayout kSyncFileInfo{
    "sync_file_info",
    sizeof(u::sync_file_info),
    {},
    {{offsetof(u::sync_file_info, sync_fence_info), C::Elems32, offsetof(u::sync_file_info, num_fences),
      sizeof(u::sync_fence_info), &kSyncFenceInfo}}};
const TypeLayout kSwSyncCreate{"sw_sync_create_fence_data",
                               sizeof(u::sw_sync_create_fence_data),
                               {{offsetof(u::sw_sync_create_fence_data, fence), 4, Ref::Fd, true}},
                               {}};

constexpr std::uint32_t kGetUnique = 0xC0106401u;

struct Known {
    std::uint32_t request;
    const char* name;
    const TypeLayout* layout;
};

const Known kKnown[] = {
    {u::DRM_IOCTL_PANTHOR_DEV_QUERY, "PANTHOR_DEV_QUERY", &kDevQuery},
    {u::DRM_IOCTL_PANTHOR_VM_CREATE, "PANTHOR_VM_CREATE", &kVmCreate},
    {u::DRM_IOCTL_PANTHOR_VM_DESTROY, "PANTHOR_VM_DESTROY", &kVmDestroy},
    {u::DRM_IOCTL_PANTHOR_VM_BIND, "PANTHOR_VM_BIND", &kVmBind},
    {u::DRM_IOCTL_PANTHOR_VM_GET_STATE, "PANTHOR_VM_GET_STATE", &kVmGetState},
    {u::DRM_IOCTL_PANTHOR_BO_CREATE, "PANTHOR_BO_CREATE", &kBoCreate},
    {u::DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, "PANTHOR_BO_MMAP_OFFSET", &kBoMmapOffset},
    {u::DRM_IOCTL_PANTHOR_GROUP_CREATE, "PANTHOR_GROUP_CREATE", &kGroupCreate},
    {u::DRM_IOCTL_PANTHOR_GROUP_DESTROY, "PANTHOR_GROUP_DESTROY", &kGroupDestroy},
    {u::DRM_IOCTL_PANTHOR_GROUP_SUBMIT, "PANTHOR_GROUP_SUBMIT", &kGroupSubmit},
    {u::DRM_IOCTL_PANTHOR_GROUP_GET_STATE, "PANTHOR_GROUP_GET_STATE", &kGroupGetState},
    {u::DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE, "PANTHOR_TILER_HEAP_CREATE", &kHeapCreate},
    {u::DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY, "PANTHOR_TILER_HEAP_DESTROY", &kHeapDestroy},
    {u::DRM_IOCTL_PANTHOR_BO_SET_LABEL, "PANTHOR_BO_SET_LABEL", &kBoSetLabel},
    {u::DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET, "PANTHOR_SET_USER_MMIO_OFFSET", &kSetUserMmio},
    {u::DRM_IOCTL_PANTHOR_BO_SYNC, "PANTHOR_BO_SYNC", &kBoSync},
    {u::DRM_IOCTL_PANTHOR_BO_QUERY_INFO, "PANTHOR_BO_QUERY_INFO", &kBoQueryInfo},
    {u::DRM_IOCTL_VERSION, "VERSION", &kVersion},
    {kGetUnique, "GET_UNIQUE", &kUnique},
    {u::DRM_IOCTL_GET_MAGIC, "GET_MAGIC", nullptr},
    {u::DRM_IOCTL_AUTH_MAGIC, "AUTH_MAGIC", nullptr},
    {u::DRM_IOCTL_SET_MASTER, "SET_MASTER", nullptr},
    {u::DRM_IOCTL_DROP_MASTER, "DROP_MASTER", nullptr},
    {u::DRM_IOCTL_GET_CAP, "GET_CAP", nullptr},
    {u::DRM_IOCTL_GEM_CLOSE, "GEM_CLOSE", &kGemClose},
    {u::DRM_IOCTL_PRIME_HANDLE_TO_FD, "PRIME_HANDLE_TO_FD", &kPrimeToFd},
    {u::DRM_IOCTL_PRIME_FD_TO_HANDLE, "PRIME_FD_TO_HANDLE", &kPrimeFromFd},
    {u::DRM_IOCTL_SYNCOBJ_CREATE, "SYNCOBJ_CREATE", &kSyncobjCreate},
    {u::DRM_IOCTL_SYNCOBJ_DESTROY, "SYNCOBJ_DESTROY", &kSyncobjDestroy},
    {u::DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, "SYNCOBJ_HANDLE_TO_FD", &kSyncobjToFd},
    {u::DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, "SYNCOBJ_FD_TO_HANDLE", &kSyncobjFromFd},
    {u::DRM_IOCTL_SYNCOBJ_WAIT, "SYNCOBJ_WAIT", &kSyncobjWait},
    {u::DRM_IOCTL_SYNCOBJ_RESET, "SYNCOBJ_RESET", &kSyncobjArray},
    {u::DRM_IOCTL_SYNCOBJ_SIGNAL, "SYNCOBJ_SIGNAL", &kSyncobjArray},
    {u::DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, "SYNCOBJ_TIMELINE_WAIT", &kSyncobjTimelineWait},
    {u::DRM_IOCTL_SYNCOBJ_QUERY, "SYNCOBJ_QUERY", &kSyncobjTimelineArray},
    {u::DRM_IOCTL_SYNCOBJ_TRANSFER, "SYNCOBJ_TRANSFER", &kSyncobjTransfer},
    {u::DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, "SYNCOBJ_TIMELINE_SIGNAL", &kSyncobjTimelineArray},
    {u::DRM_IOCTL_SYNCOBJ_EVENTFD, "SYNCOBJ_EVENTFD", &kSyncobjEventfd},
    {u::SYNC_IOC_MERGE, "SYNC_IOC_MERGE", &kSyncMerge},
    {u::SYNC_IOC_FILE_INFO, "SYNC_IOC_FILE_INFO", &kSyncFileInfo},
    {u::SW_SYNC_IOC_CREATE_FENCE, "SW_SYNC_IOC_CREATE_FENCE", &kSwSyncCreate},
    {u::SW_SYNC_IOC_INC, "SW_SYNC_IOC_INC", nullptr},
    {0x40086200u, "DMA_BUF_IOCTL_SYNC", nullptr},
};

// The entry for `request`: exact, else the same type and number (an older, shorter struct).
const Known* find(std::uint32_t request) {
    for (const Known& k : kKnown)
        if (k.request == request)
            return &k;
    for (const Known& k : kKnown)
        if ((k.request & 0xFFFFu) == (request & 0xFFFFu) && ((k.request >> 30) == (request >> 30)))
            return &k;
    return nullptr;
}

std::uint64_t load(const std::uint8_t* p, std::size_t n) {
    std::uint64_t v = 0;
    std::memcpy(&v, p, n);
    return v;
}

void walk_in(const TypeLayout* layout, std::uint32_t stride, std::uint32_t count, int self, const std::uint8_t* data,
             std::size_t data_size, const std::function<const std::uint8_t*(BufferRef& ref, std::size_t index)>& fetch,
             std::vector<BufferRef>* out) {
    if (!layout || !data)
        return;
    for (std::uint32_t e = 0; e < count; e++) {
        const std::size_t base = std::size_t{e} * stride;
        for (const PtrRule& pr : layout->ptrs) {
            if (base + pr.ptr_off + 8 > data_size || base + pr.count_off + 4 > data_size)
                continue;
            BufferRef ref{};
            ref.parent = self;
            ref.ptr_off = static_cast<std::uint32_t>(base + pr.ptr_off);
            ref.ptr = load(data + base + pr.ptr_off, 8);
            ref.elem = pr.elem;
            switch (pr.count) {
            case C::ObjArray:
                ref.stride = static_cast<std::uint32_t>(load(data + base + pr.ptr_off - 8, 4));
                ref.count = static_cast<std::uint32_t>(load(data + base + pr.ptr_off - 4, 4));
                ref.size = std::uint64_t{ref.stride} * ref.count;
                break;
            case C::Elems32:
                ref.stride = pr.elem_size;
                ref.count = static_cast<std::uint32_t>(load(data + base + pr.count_off, 4));
                ref.size = std::uint64_t{ref.stride} * ref.count;
                break;
            case C::Bytes32: ref.size = load(data + base + pr.count_off, 4); break;
            case C::Bytes64: ref.size = load(data + base + pr.count_off, 8); break;
            case C::CString: ref.size = 0; break;
            }
            if (!ref.ptr || ref.size > kMaxBuffer || (ref.size == 0 && pr.count != C::CString))
                continue;
            const std::size_t index = out->size();
            out->push_back(ref);
            const std::uint8_t* child = fetch((*out)[index], index);
            const BufferRef got = (*out)[index];
            if (child && got.elem && got.stride >= got.elem->size)
                walk_in(got.elem, got.stride, got.count, static_cast<int>(index), child, got.size, fetch, out);
        }
    }
}

}  // namespace

const char* ref_name(Ref r) {
    switch (r) {
    case Ref::Gem: return "GEM handle";
    case Ref::Syncobj: return "syncobj handle";
    case Ref::Vm: return "VM id";
    case Ref::Group: return "group handle";
    case Ref::Heap: return "tiler heap handle";
    case Ref::Fd: return "descriptor";
    case Ref::MmapOffset: return "mmap offset";
    case Ref::Volatile: return "volatile value";
    }
    return "?";
}

std::string ioctl_name(std::uint32_t request) {
    if (const Known* k = find(request))
        return k->name;
    char buf[32];
    std::snprintf(buf, sizeof(buf), "ioctl 0x%08x", request);
    return buf;
}

const TypeLayout* ioctl_layout(std::uint32_t request) {
    const Known* k = find(request);
    return k ? k->layout : nullptr;
}

bool ioctl_runs_gpu(std::uint32_t request) {
    return request == u::DRM_IOCTL_PANTHOR_GROUP_SUBMIT || request == u::DRM_IOCTL_PANTHOR_VM_BIND;
}

bool ioctl_snapshots_bos(std::uint32_t request) {
    const std::uint32_t nr = request & 0xFFFFu;
    return ioctl_runs_gpu(request) || ioctl_is_syncobj_wait(request) || nr == (u::DRM_IOCTL_SYNCOBJ_SIGNAL & 0xFFFFu) ||
           nr == (u::DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL & 0xFFFFu);
}

bool ioctl_is_query(std::uint32_t request) {
    const Known* k = find(request);
    if (!k)
        return false;
    const std::uint32_t r = k->request;
    return r == u::DRM_IOCTL_VERSION || r == kGetUnique || r == u::DRM_IOCTL_GET_CAP || r == u::DRM_IOCTL_GET_MAGIC ||
           r == u::DRM_IOCTL_PANTHOR_DEV_QUERY || r == u::DRM_IOCTL_PANTHOR_VM_GET_STATE ||
           r == u::DRM_IOCTL_PANTHOR_GROUP_GET_STATE || r == u::DRM_IOCTL_SYNCOBJ_QUERY || r == u::SYNC_IOC_FILE_INFO;
}

bool ioctl_is_syncobj_wait(std::uint32_t request) {
    const std::uint32_t nr = request & 0xFFFFu;
    return nr == (u::DRM_IOCTL_SYNCOBJ_WAIT & 0xFFFFu) || nr == (u::DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT & 0xFFFFu);
}

void walk_buffers(const TypeLayout* root, const std::uint8_t* arg, std::size_t arg_size,
                  const std::function<const std::uint8_t*(BufferRef& ref, std::size_t index)>& fetch,
                  std::vector<BufferRef>* out) {
    // An older client's shorter struct: the pointer fields it has are followed.
    if (root && arg_size)
        walk_in(root, static_cast<std::uint32_t>(arg_size), 1, -1, arg, arg_size, fetch, out);
}

void for_each_field(const TypeLayout* layout, std::uint32_t stride, std::uint32_t count,
                    const std::function<void(const FieldRule&, std::size_t)>& fn) {
    if (!layout || (stride < layout->size && count != 1))
        return;
    for (std::uint32_t e = 0; e < count; e++)
        for (const FieldRule& f : layout->fields)
            if (count != 1 || f.off + f.size <= stride)
                fn(f, std::size_t{e} * stride + f.off);
}

void mark_uncompared(std::uint32_t request, const TypeLayout* layout, std::uint32_t stride, std::uint32_t count,
                     const std::uint8_t* in, std::vector<bool>* skip, bool is_arg) {
    auto mark = [&](std::size_t off, std::size_t n) {
        for (std::size_t i = off; i < off + n && i < skip->size(); i++)
            (*skip)[i] = true;
    };
    if (layout && (stride >= layout->size || count == 1)) {
        for (std::uint32_t e = 0; e < count; e++) {
            const std::size_t base = std::size_t{e} * stride;
            for (const FieldRule& f : layout->fields)
                mark(base + f.off, f.size);
            for (const PtrRule& p : layout->ptrs)
                mark(base + p.ptr_off, 8);
        }
    }
    // SYNCOBJ waits with WAIT_ALL: first_signaled is left undefined by the uAPI (it says which
    // fence was signalled already when the wait began, a matter of timing).
    if (is_arg && in && ioctl_is_syncobj_wait(request)) {
        const bool timeline = (request & 0xFFu) == (u::DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT & 0xFFu);
        const std::size_t flags_off =
            timeline ? offsetof(u::drm_syncobj_timeline_wait, flags) : offsetof(u::drm_syncobj_wait, flags);
        const std::size_t first_off = timeline ? offsetof(u::drm_syncobj_timeline_wait, first_signaled)
                                               : offsetof(u::drm_syncobj_wait, first_signaled);
        if (flags_off + 4 <= skip->size() && (load(in + flags_off, 4) & u::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL))
            mark(first_off, 4);
    }
    // DEV_QUERY(TIMESTAMP_INFO): the samples of moving clocks (its buffer is the only one): the
    // GPU's current timestamp, and since 1.8 the cycle count, CPU time and sampling duration.
    if (!is_arg && request == u::DRM_IOCTL_PANTHOR_DEV_QUERY && in &&
        load(in, 4) == DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO) {
        mark(offsetof(drm_panthor_timestamp_info, current_timestamp), 8);
        mark(offsetof(drm_panthor_timestamp_info, duration_nsec), 4);
        mark(offsetof(drm_panthor_timestamp_info, cycle_count), 24);
    }
}

}  // namespace upanthor::capture
