// (no upstream counterpart) fuzz_ioctl's group ops (fuzz/ioctl_ops.h, family Group): panthor's
// GROUP_CREATE, GROUP_DESTROY, GROUP_SUBMIT, GROUP_GET_STATE and the tiler heaps
// (panthor_drv.c, panthor_sched.c, panthor_heap.c). Op 35 also carries the small panthor
// ioctls BO_SET_LABEL, SET_USER_MMIO_OFFSET, BO_SYNC and BO_QUERY_INFO, chosen by its first byte
// behind the heap destroy; it is a teardown op whichever it runs (fuzz/ioctl_ops.cpp).
#include <algorithm>
#include <bit>
#include <cstring>

#include "fuzz/ioctl_program.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

void IoctlProgram::op_group_create(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    drm_panthor_group_create a{};
    const u64 shader = w_.ptdev()->gpu_info.shader_present;
    const u64 tiler = w_.ptdev()->gpu_info.tiler_present;
    a.queues = obj_array(sizeof(drm_panthor_queue_create), 3, [&](u32, uint8_t* dst) {
        drm_panthor_queue_create q{};
        q.priority = static_cast<uint8_t>(in_.u8() < 220 ? in_.u8() % 16 : in_.u8());
        q.ringbuf_size = in_.u8() < 200 ? in_.pick<u32>({4096, 8192, 16384, 65536}) : in_.edge_u32();
        if (in_.u8() >= 250)
            q.pad[0] = 1;
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
    if (!ioctl(f, DRM_IOCTL_PANTHOR_GROUP_CREATE, a, "GROUP_CREATE"))
        groups_.push_back({fi, a.group_handle});
}

void IoctlProgram::op_group_destroy(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_panthor_group_destroy a{};
    a.group_handle = pick(groups_);
    ioctl(f, DRM_IOCTL_PANTHOR_GROUP_DESTROY, a, "GROUP_DESTROY");
}

void IoctlProgram::op_group_submit(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
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
}

void IoctlProgram::op_group_get_state(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_panthor_group_get_state a{};
    a.group_handle = pick(groups_);
    ioctl(f, DRM_IOCTL_PANTHOR_GROUP_GET_STATE, a, "GROUP_GET_STATE");
}

void IoctlProgram::op_tiler_heap_create(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    drm_panthor_tiler_heap_create a{};
    a.vm_id = pick(vms_);
    const uint8_t s = in_.u8();
    a.initial_chunk_count = s < 200 ? 1 + in_.u8() % 4 : in_.edge_u32();
    a.chunk_size = s < 200 ? in_.pick<u32>({128 * 1024, 256 * 1024, 2 * 1024 * 1024}) : in_.edge_u32();
    a.max_chunks = s < 200 ? 1 + in_.u8() % 16 : in_.edge_u32();
    a.target_in_flight = s < 200 ? in_.u8() % 8 : in_.edge_u32();
    // The initial chunks are allocated at once: a valid request for more than
    // kIoctlMaxHostBytes gets fewer chunks (invalid counts and sizes stay, for the errnos).
    const bool valid_size = a.chunk_size >= 128 * 1024 && a.chunk_size <= 8 * 1024 * 1024 && !(a.chunk_size & 0xfff);
    if (valid_size && a.initial_chunk_count && a.initial_chunk_count <= a.max_chunks &&
        u64{a.initial_chunk_count} * a.chunk_size > kIoctlMaxHostBytes)
        a.initial_chunk_count = static_cast<u32>(std::max<u64>(1, kIoctlMaxHostBytes / a.chunk_size));
    if (!ioctl(f, DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE, a, "TILER_HEAP_CREATE"))
        heaps_.push_back({fi, a.handle});
}

// TILER_HEAP_DESTROY, BO_SET_LABEL, SET_USER_MMIO_OFFSET, BO_SYNC or BO_QUERY_INFO.
void IoctlProgram::op_tiler_heap_destroy_or_bo_label(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
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
        for (size_t i = 0; i < cap && i < len; i++)
            host[i] = static_cast<uint8_t>('a' + i % 26);
        if (cap && cap <= len && in_.u8() < 200)
            host[cap - 1] = 0;  // usually terminated
        ioctl(f, DRM_IOCTL_PANTHOR_BO_SET_LABEL, a, "BO_SET_LABEL");
    } else {
        // The input bytes SET_USER_MMIO_OFFSET always took; from 240 on they drive BO_SYNC or
        // BO_QUERY_INFO (1.7) instead, taking no more, so saved inputs keep their op streams.
        const u64 v =
            in_.pick<u64>({DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, DRM_PANTHOR_USER_MMIO_OFFSET_64BIT, in_.edge_u64()});
        const u32 bo = bos_.empty() ? static_cast<u32>(v) : bos_[v % bos_.size()].id;
        if (k < 240) {
            drm_panthor_set_user_mmio_offset a{};
            a.offset = v;
            ioctl(f, DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET, a, "SET_USER_MMIO_OFFSET");
        } else if (k < 250) {
            // One op (or none, or a short stride): a known BO, both types and invalid ones,
            // ranges inside and past the BO.
            size_t cap = 0;
            uint8_t* host = mem_.alloc(sizeof(drm_panthor_bo_sync_op), &cap, 0);
            mem_.reg(host, cap);
            drm_panthor_bo_sync_op op{};
            op.handle = bo;
            op.type = static_cast<u32>((v >> 8) & 3);
            op.offset = ((v >> 16) & 0xff) * 64;
            op.size = ((v >> 24) & 0xff) * 256;
            std::memcpy(host, &op, std::min(cap, sizeof(op)));
            drm_panthor_bo_sync a{};
            a.ops = {k == 249 ? 16u : u32{sizeof(op)}, k == 248 ? 0u : 1u, drm::user_ptr(host)};
            ioctl(f, DRM_IOCTL_PANTHOR_BO_SYNC, a, "BO_SYNC");
        } else {
            drm_panthor_bo_query_info a{};
            a.handle = bo;
            a.pad = static_cast<u32>(v >> 32);
            ioctl(f, DRM_IOCTL_PANTHOR_BO_QUERY_INFO, a, "BO_QUERY_INFO");
        }
    }
}

}  // namespace upanthor_fuzz
