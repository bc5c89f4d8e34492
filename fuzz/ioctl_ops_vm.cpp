// (no upstream counterpart) fuzz_ioctl's VM ops (fuzz/ioctl_ops.h, family Vm): panthor's
// VM_CREATE, VM_DESTROY, VM_BIND and VM_GET_STATE (panthor_drv.c, panthor_mmu.c). A map that
// VM_BIND accepted becomes a candidate address for streams and faults (IoctlProgram::pick_va).
#include <cstring>
#include <vector>

#include "fuzz/ioctl_program.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

void IoctlProgram::op_vm_create(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    drm_panthor_vm_create a{};
    a.flags = in_.u8() < 240 ? 0 : in_.edge_u32();
    a.user_va_range = in_.u8() < 128 ? 0 : in_.edge_u64();
    if (!ioctl(f, DRM_IOCTL_PANTHOR_VM_CREATE, a, "VM_CREATE"))
        vms_.push_back({fi, a.id});
}

void IoctlProgram::op_vm_destroy(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_panthor_vm_destroy a{};
    a.id = pick(vms_);
    a.pad = in_.u8() < 250 ? 0 : 1;
    ioctl(f, DRM_IOCTL_PANTHOR_VM_DESTROY, a, "VM_DESTROY");
}

void IoctlProgram::op_vm_bind(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
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
        if (in_.u8() >= 200)
            o.flags |= in_.u8() & 0xf;  // READONLY, NOEXEC, UNCACHED, SPARSE (1.9)
        const bool is_map = (o.flags & DRM_PANTHOR_VM_BIND_OP_TYPE_MASK) == DRM_PANTHOR_VM_BIND_OP_TYPE_MAP;
        const bool sparse = is_map && (o.flags & DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE);
        o.bo_handle = is_map && !sparse ? pick(bos_) : 0;
        o.bo_offset = in_.u8() < 200 ? 0x1000 * (in_.u8() % 4) : in_.edge_u64();
        // A sparse map is mostly well-formed (no BO offset, NOEXEC), so the dummy-BO path runs and
        // not only its checks.
        if (sparse && in_.u8() < 224) {
            o.bo_offset = 0;
            o.flags |= DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC;
        }
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
        if ((o.flags & DRM_PANTHOR_VM_BIND_OP_TYPE_MASK) == DRM_PANTHOR_VM_BIND_OP_TYPE_MAP)
            maps.push_back({o.va, o.size});
        std::memcpy(dst, &o, sizeof o);
    });
    if (!ioctl(f, DRM_IOCTL_PANTHOR_VM_BIND, a, "VM_BIND"))
        for (const Mapped& m : maps)
            if (mapped_.size() < 32)
                mapped_.push_back(m);
}

void IoctlProgram::op_vm_get_state(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_panthor_vm_get_state a{};
    a.vm_id = pick(vms_);
    ioctl(f, DRM_IOCTL_PANTHOR_VM_GET_STATE, a, "VM_GET_STATE");
}

}  // namespace upanthor_fuzz
