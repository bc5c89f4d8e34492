// (no upstream counterpart) fuzz_ioctl's syncobj ops (fuzz/ioctl_ops.h, family Sync): every
// DRM_IOCTL_SYNCOBJ_* of drm_syncobj.c, on handles of the program's syncobj pool (any file's) or
// edge values. The fds SYNCOBJ_HANDLE_TO_FD exports join the program's fd pool (ioctl_ops_fd.cpp).
#include "fuzz/ioctl_program.h"
#include "kernel_shim/eventfd.h"
#include "uapi/drm/drm.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

void IoctlProgram::op_syncobj_create(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    drm_syncobj_create a{};
    a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_CREATE_SIGNALED, 0, in_.edge_u32()});
    if (!ioctl(f, DRM_IOCTL_SYNCOBJ_CREATE, a, "SYNCOBJ_CREATE"))
        syncobjs_.push_back({fi, a.handle});
}

void IoctlProgram::op_syncobj_destroy(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_destroy a{};
    a.handle = pick(syncobjs_);
    a.pad = in_.u8() < 250 ? 0 : 1;
    ioctl(f, DRM_IOCTL_SYNCOBJ_DESTROY, a, "SYNCOBJ_DESTROY");
}

void IoctlProgram::op_syncobj_handle_to_fd(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_handle a{};
    a.handle = pick(syncobjs_);
    a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
                             DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE | DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE,
                             DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_TIMELINE, in_.edge_u32()});
    a.point = in_.u8() % 4;
    a.fd = -1;
    if (!ioctl(f, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, a, "SYNCOBJ_HANDLE_TO_FD") && a.fd >= 0)
        fds_.push_back(a.fd);
}

void IoctlProgram::op_syncobj_fd_to_handle(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    const int fi = c.file_idx;
    drm_syncobj_handle a{};
    a.fd = !fds_.empty() && in_.u8() < 220 ? fds_[in_.below(static_cast<u32>(fds_.size()))]
                                           : static_cast<int32_t>(in_.edge_u32());
    a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE,
                             DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE | DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_TIMELINE,
                             in_.edge_u32()});
    a.handle = (a.flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE) ? pick(syncobjs_) : 0;
    a.point = in_.u8() % 4;
    if (!ioctl(f, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, a, "SYNCOBJ_FD_TO_HANDLE") &&
        !(a.flags & DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE))
        syncobjs_.push_back({fi, a.handle});
}

void IoctlProgram::op_syncobj_wait(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_wait a{};
    a.count_handles = count_edge(4);
    a.handles = handle_array(a.count_handles, syncobjs_);
    a.timeout_nsec = static_cast<int64_t>(deadline());
    a.flags = in_.u8() < 230 ? in_.u8() & 0xf : in_.edge_u32();
    a.deadline_nsec = deadline();
    ioctl(f, DRM_IOCTL_SYNCOBJ_WAIT, a, "SYNCOBJ_WAIT");
}

// SYNCOBJ_RESET and SYNCOBJ_SIGNAL: the same argument, told apart by the op value.
void IoctlProgram::op_syncobj_array(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_array a{};
    a.count_handles = count_edge(4);
    a.handles = handle_array(a.count_handles, syncobjs_);
    a.pad = in_.u8() < 250 ? 0 : 1;
    if (c.op == IoctlOp::SyncobjReset)
        ioctl(f, DRM_IOCTL_SYNCOBJ_RESET, a, "SYNCOBJ_RESET");
    else
        ioctl(f, DRM_IOCTL_SYNCOBJ_SIGNAL, a, "SYNCOBJ_SIGNAL");
}

void IoctlProgram::op_syncobj_timeline_wait(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_timeline_wait a{};
    a.count_handles = count_edge(4);
    a.handles = handle_array(a.count_handles, syncobjs_);
    a.points = point_array(a.count_handles);
    a.timeout_nsec = static_cast<int64_t>(deadline());
    a.flags = in_.u8() < 230 ? in_.u8() & 0xf : in_.edge_u32();
    a.deadline_nsec = deadline();
    ioctl(f, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, a, "SYNCOBJ_TIMELINE_WAIT");
}

// SYNCOBJ_QUERY and SYNCOBJ_TIMELINE_SIGNAL: the same argument, told apart by the op value.
void IoctlProgram::op_syncobj_timeline_array(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_timeline_array a{};
    a.count_handles = count_edge(4);
    a.handles = handle_array(a.count_handles, syncobjs_);
    a.points = point_array(a.count_handles);
    a.flags = in_.u8() < 230 ? in_.u8() & 1 : in_.edge_u32();
    if (c.op == IoctlOp::SyncobjQuery)
        ioctl(f, DRM_IOCTL_SYNCOBJ_QUERY, a, "SYNCOBJ_QUERY");
    else
        ioctl(f, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, a, "SYNCOBJ_TIMELINE_SIGNAL");
}

void IoctlProgram::op_syncobj_transfer(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_transfer a{};
    a.src_handle = pick(syncobjs_);
    a.dst_handle = pick(syncobjs_);
    a.src_point = in_.u8() % 4;
    a.dst_point = in_.u8() % 4;
    a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, in_.edge_u32()});
    ioctl(f, DRM_IOCTL_SYNCOBJ_TRANSFER, a, "SYNCOBJ_TRANSFER");
}

void IoctlProgram::op_syncobj_eventfd(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_syncobj_eventfd a{};
    a.handle = pick(syncobjs_);
    a.flags = in_.pick<u32>({0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_AVAILABLE, 0, in_.edge_u32()});
    a.point = in_.u8() % 4;
    const uint8_t k = in_.u8();
    if (k < 192) {  // an eventfd: a new one, or one made earlier
        if (eventfds_.empty() || k < 64) {
            const int efd = kshim::eventfd_fd_create(0, in_.flag() ? EFD_SEMAPHORE : 0);
            if (efd >= 0)
                eventfds_.push_back(efd);
        }
        a.fd = eventfds_.empty() ? -1 : eventfds_[in_.below(static_cast<u32>(eventfds_.size()))];
    } else {
        a.fd = pick_fd();  // not an eventfd: -EINVAL, or closed: -EBADF
    }
    a.pad = in_.u8() < 250 ? 0 : 1;
    ioctl(f, DRM_IOCTL_SYNCOBJ_EVENTFD, a, "SYNCOBJ_EVENTFD");
}

}  // namespace upanthor_fuzz
