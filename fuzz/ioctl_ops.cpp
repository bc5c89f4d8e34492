// (no upstream counterpart) fuzz_ioctl's op table (fuzz/ioctl_ops.h): every op's value, name,
// family, teardown flag and handler in one place.
//
// Teardown: GEM_CLOSE, SYNCOBJ_DESTROY, VM_DESTROY, GROUP_DESTROY, the heap destroy, munmap, file
// and fd close, and what lets time pass (the waits, advance: deferred frees run in them) run
// outside an allocation-failure window (IoctlProgram::call). Upstream's teardown allocates too
// (panthor_vm_unmap_range preallocates its VMAs and page tables) and leaks what it cannot unmap
// when that fails (panthor_kernel_bo_destroy silently, panthor_vm_destroy with a WARN): a known
// limitation, not what op_fail_allocations is after. The flag belongs to the op value, not to
// what the call turns out to do: TilerHeapDestroyOrBoLabel is exempt also when it sets a label,
// MmapOrMunmap also when it maps, CloseFile also when it reopens (as before the table).
#include "fuzz/ioctl_ops.h"

#include "fuzz/ioctl_program.h"

namespace upanthor_fuzz {

namespace {

using F = IoctlOpFamily;
using P = IoctlProgram;
constexpr bool kTeardown = true;
constexpr bool kNot = false;

constexpr IoctlOpDesc kOps[] = {
    {IoctlOp::Version, "VERSION", F::Core, kNot, &P::op_version},
    {IoctlOp::GetCap, "GET_CAP", F::Core, kNot, &P::op_get_cap},
    {IoctlOp::GemClose, "GEM_CLOSE", F::Bo, kTeardown, &P::op_gem_close},
    {IoctlOp::SyncobjCreate, "SYNCOBJ_CREATE", F::Sync, kNot, &P::op_syncobj_create},
    {IoctlOp::SyncobjCreate2, "SYNCOBJ_CREATE", F::Sync, kNot, &P::op_syncobj_create},
    {IoctlOp::SyncobjDestroy, "SYNCOBJ_DESTROY", F::Sync, kTeardown, &P::op_syncobj_destroy},
    {IoctlOp::SyncobjHandleToFd, "SYNCOBJ_HANDLE_TO_FD", F::Sync, kNot, &P::op_syncobj_handle_to_fd},
    {IoctlOp::SyncobjFdToHandle, "SYNCOBJ_FD_TO_HANDLE", F::Sync, kNot, &P::op_syncobj_fd_to_handle},
    {IoctlOp::SyncobjWait, "SYNCOBJ_WAIT", F::Sync, kTeardown, &P::op_syncobj_wait},
    {IoctlOp::SyncobjReset, "SYNCOBJ_RESET", F::Sync, kNot, &P::op_syncobj_array},
    {IoctlOp::SyncobjSignal, "SYNCOBJ_SIGNAL", F::Sync, kNot, &P::op_syncobj_array},
    {IoctlOp::SyncobjTimelineWait, "SYNCOBJ_TIMELINE_WAIT", F::Sync, kTeardown, &P::op_syncobj_timeline_wait},
    {IoctlOp::SyncobjQuery, "SYNCOBJ_QUERY", F::Sync, kNot, &P::op_syncobj_timeline_array},
    {IoctlOp::SyncobjTimelineSignal, "SYNCOBJ_TIMELINE_SIGNAL", F::Sync, kNot, &P::op_syncobj_timeline_array},
    {IoctlOp::SyncobjTransfer, "SYNCOBJ_TRANSFER", F::Sync, kNot, &P::op_syncobj_transfer},
    {IoctlOp::RawIoctl, "raw_ioctl", F::Core, kNot, &P::op_raw_ioctl},
    {IoctlOp::DevQuery, "DEV_QUERY", F::Core, kNot, &P::op_dev_query},
    {IoctlOp::VmCreate, "VM_CREATE", F::Vm, kNot, &P::op_vm_create},
    {IoctlOp::VmCreate2, "VM_CREATE", F::Vm, kNot, &P::op_vm_create},
    {IoctlOp::VmDestroy, "VM_DESTROY", F::Vm, kTeardown, &P::op_vm_destroy},
    {IoctlOp::VmBind, "VM_BIND", F::Vm, kNot, &P::op_vm_bind},
    {IoctlOp::VmBind2, "VM_BIND", F::Vm, kNot, &P::op_vm_bind},
    {IoctlOp::VmBind3, "VM_BIND", F::Vm, kNot, &P::op_vm_bind},
    {IoctlOp::VmGetState, "VM_GET_STATE", F::Vm, kNot, &P::op_vm_get_state},
    {IoctlOp::BoCreate, "BO_CREATE", F::Bo, kNot, &P::op_bo_create},
    {IoctlOp::BoCreate2, "BO_CREATE", F::Bo, kNot, &P::op_bo_create},
    {IoctlOp::BoMmapOffset, "BO_MMAP_OFFSET", F::Bo, kNot, &P::op_bo_mmap_offset},
    {IoctlOp::GroupCreate, "GROUP_CREATE", F::Group, kNot, &P::op_group_create},
    {IoctlOp::GroupCreate2, "GROUP_CREATE", F::Group, kNot, &P::op_group_create},
    {IoctlOp::GroupDestroy, "GROUP_DESTROY", F::Group, kTeardown, &P::op_group_destroy},
    {IoctlOp::GroupSubmit, "GROUP_SUBMIT", F::Group, kNot, &P::op_group_submit},
    {IoctlOp::GroupSubmit2, "GROUP_SUBMIT", F::Group, kNot, &P::op_group_submit},
    {IoctlOp::GroupSubmit3, "GROUP_SUBMIT", F::Group, kNot, &P::op_group_submit},
    {IoctlOp::GroupGetState, "GROUP_GET_STATE", F::Group, kNot, &P::op_group_get_state},
    {IoctlOp::TilerHeapCreate, "TILER_HEAP_CREATE", F::Group, kNot, &P::op_tiler_heap_create},
    // The name stays as first pinned (tests/fuzz/ioctl_ops_test.cpp digests it); the op also
    // runs BO_SYNC and BO_QUERY_INFO (fuzz/ioctl_ops_group.cpp).
    {IoctlOp::TilerHeapDestroyOrBoLabel, "TILER_HEAP_DESTROY|BO_SET_LABEL|SET_USER_MMIO_OFFSET", F::Group, kTeardown,
     &P::op_tiler_heap_destroy_or_bo_label},
    {IoctlOp::MmapOrMunmap, "mmap|munmap", F::Bo, kTeardown, &P::op_mmap_or_munmap},
    {IoctlOp::CpuWrite, "cpu_write", F::Bo, kNot, &P::op_cpu_write},
    {IoctlOp::CloseFile, "close|reopen", F::Process, kTeardown, &P::op_close_file},
    {IoctlOp::Advance, "advance", F::Process, kTeardown, &P::op_advance},
    {IoctlOp::PrimeHandleToFd, "PRIME_HANDLE_TO_FD", F::Fd, kNot, &P::op_prime_handle_to_fd},
    {IoctlOp::PrimeFdToHandle, "PRIME_FD_TO_HANDLE", F::Fd, kNot, &P::op_prime_fd_to_handle},
    {IoctlOp::SyncobjEventfd, "SYNCOBJ_EVENTFD", F::Sync, kNot, &P::op_syncobj_eventfd},
    {IoctlOp::SyncFileIoctl, "SYNC_IOC", F::Fd, kNot, &P::op_sync_file_ioctl},
    {IoctlOp::DmaBufFd, "DMA_BUF_IOCTL_SYNC|dma_buf_mmap", F::Fd, kNot, &P::op_dma_buf_fd},
    {IoctlOp::CloseFd, "close_fd", F::Fd, kTeardown, &P::op_close_fd},
    {IoctlOp::FailAllocations, "fail_allocations", F::Fault, kNot, &P::op_fail_allocations},
    {IoctlOp::GpuFault, "gpu_fault", F::Fault, kNot, &P::op_gpu_fault},
};

// The table is indexed by value: complete, in order, so no value is missing or repeated, and
// every byte ioctl_op_of_byte decodes has a row.
constexpr bool table_is_indexed_by_value() {
    for (size_t i = 0; i < std::size(kOps); ++i)
        if (static_cast<size_t>(kOps[i].op) != i || !kOps[i].name)
            return false;
    return true;
}
static_assert(std::size(kOps) == kIoctlOpCount);
static_assert(table_is_indexed_by_value());
constexpr bool every_byte_has_an_op() {
    for (unsigned b = 0; b < 256; ++b)
        if (static_cast<size_t>(ioctl_op_of_byte(static_cast<uint8_t>(b))) >= kIoctlOpCount)
            return false;
    return true;
}
static_assert(every_byte_has_an_op());

}  // namespace

std::span<const IoctlOpDesc> ioctl_ops() {
    return kOps;
}

const IoctlOpDesc& ioctl_op_desc(IoctlOp op) {
    return kOps[static_cast<size_t>(op)];
}

const char* ioctl_op_family_name(IoctlOpFamily family) {
    switch (family) {
    case F::Core: return "core";
    case F::Sync: return "sync";
    case F::Vm: return "vm";
    case F::Bo: return "bo";
    case F::Group: return "group";
    case F::Fd: return "fd";
    case F::Process: return "process";
    case F::Fault: return "fault";
    }
    return "?";
}

}  // namespace upanthor_fuzz
