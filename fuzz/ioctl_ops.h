// (no upstream counterpart) fuzz_ioctl's ops: the op value each call's op byte decodes to, and
// the one table (fuzz/ioctl_ops.cpp) that gives every op its name, family, teardown flag and
// handler. The handlers are members of IoctlProgram (fuzz/ioctl_program.h), one file per family
// (fuzz/ioctl_ops_<family>.cpp).
//
// The op values are FROZEN. A saved input (fuzz/corpus/fuzz_ioctl/, fuzz/crashes/fuzz_ioctl/,
// a .history file) is only bytes: its op bytes name calls through these values, so renumbering
// an op silently turns every saved input into another program and the regression tests into
// tests of nothing. So each value is written out, the table is checked to be complete and in
// value order, and tests/fuzz/ioctl_ops_test.cpp pins value, name and teardown flag of every op
// and the op stream each saved input decodes to.
//
// Adding an op: every byte already selects one (bytes 248-255 repeat 240-247), so a new op
// (value 48 on) takes bytes away from an existing op, e.g. some of 248-255 in
// ioctl_op_of_byte. Never move an existing value; the saved inputs that used the bytes taken
// now decode to the new op: fuzz_ioctl_ops_test names them, and their pins are updated with
// the change that made it (the other inputs must not move).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace drm {
struct drm_file;
}

namespace upanthor_fuzz {

class IoctlProgram;

// Several values share a handler (SyncobjCreate/SyncobjCreate2...): that is how the decoder
// weights the common calls, and the value still tells which byte chose it.
enum class IoctlOp : uint8_t {
    // DRM core
    Version = 0,
    GetCap = 1,
    GemClose = 2,
    SyncobjCreate = 3,
    SyncobjCreate2 = 4,
    SyncobjDestroy = 5,
    SyncobjHandleToFd = 6,
    SyncobjFdToHandle = 7,
    SyncobjWait = 8,
    SyncobjReset = 9,
    SyncobjSignal = 10,
    SyncobjTimelineWait = 11,
    SyncobjQuery = 12,
    SyncobjTimelineSignal = 13,
    SyncobjTransfer = 14,
    RawIoctl = 15,
    // panthor
    DevQuery = 16,
    VmCreate = 17,
    VmCreate2 = 18,
    VmDestroy = 19,
    VmBind = 20,
    VmBind2 = 21,
    VmBind3 = 22,
    VmGetState = 23,
    BoCreate = 24,
    BoCreate2 = 25,
    BoMmapOffset = 26,
    GroupCreate = 27,
    GroupCreate2 = 28,
    GroupDestroy = 29,
    GroupSubmit = 30,
    GroupSubmit2 = 31,
    GroupSubmit3 = 32,
    GroupGetState = 33,
    TilerHeapCreate = 34,
    TilerHeapDestroyOrBoLabel = 35,  // also SET_USER_MMIO_OFFSET, BO_SYNC, BO_QUERY_INFO
    // mmap, files, time
    MmapOrMunmap = 36,
    CpuWrite = 37,
    CloseFile = 38,  // and maybe reopen it
    Advance = 39,
    // descriptors (op bytes 240-255, see ioctl_op_of_byte)
    PrimeHandleToFd = 40,
    PrimeFdToHandle = 41,
    SyncobjEventfd = 42,
    SyncFileIoctl = 43,
    DmaBufFd = 44,
    CloseFd = 45,
    // fault injection
    FailAllocations = 46,
    GpuFault = 47,
};
inline constexpr size_t kIoctlOpCount = 48;

// The op a call's op byte selects. Bytes 0-239 select ops 0-39 (byte % 40); 240-255 select the
// later additions 40-47, so that the inputs saved before those existed kept their meaning.
constexpr IoctlOp ioctl_op_of_byte(uint8_t byte) {
    return static_cast<IoctlOp>(byte >= 240 ? 40 + (byte - 240) % 8 : byte % 40);
}
static_assert(ioctl_op_of_byte(0) == IoctlOp::Version && ioctl_op_of_byte(39) == IoctlOp::Advance);
static_assert(ioctl_op_of_byte(40) == IoctlOp::Version && ioctl_op_of_byte(239) == IoctlOp::Advance);
static_assert(ioctl_op_of_byte(240) == IoctlOp::PrimeHandleToFd && ioctl_op_of_byte(247) == IoctlOp::GpuFault);
static_assert(ioctl_op_of_byte(248) == IoctlOp::PrimeHandleToFd && ioctl_op_of_byte(255) == IoctlOp::GpuFault);

// Which handler file an op lives in; for reading and printing only, decoding ignores it.
enum class IoctlOpFamily : uint8_t {
    Core,     // ioctl_ops_core.cpp: VERSION, GET_CAP, DEV_QUERY, any command number
    Sync,     // ioctl_ops_sync.cpp: syncobjs, SYNCOBJ_EVENTFD
    Vm,       // ioctl_ops_vm.cpp: VMs and VM_BIND
    Bo,       // ioctl_ops_bo.cpp: BOs, mmap/munmap, CPU writes through a mapping
    Group,    // ioctl_ops_group.cpp: groups, submits, tiler heaps
    Fd,       // ioctl_ops_fd.cpp: PRIME, sync_file and dma-buf descriptors, close(2)
    Process,  // ioctl_ops_process.cpp: close/reopen a DRM file, time passing
    Fault,    // ioctl_ops_fault.cpp: allocation failures, mock-GPU faults
};
const char* ioctl_op_family_name(IoctlOpFamily family);

// One call as the handler gets it: the file it goes through (its index in the program's files)
// and the op value, for the handlers that serve several.
struct IoctlOpCall {
    drm::drm_file* file;
    int file_idx;
    IoctlOp op;
};

struct IoctlOpDesc {
    IoctlOp op;
    const char* name;
    IoctlOpFamily family;
    // Runs outside an allocation-failure window (IoctlProgram::call): it tears something down
    // or lets time pass, i.e. runs what earlier calls left to deferred work.
    bool teardown;
    void (IoctlProgram::*handler)(const IoctlOpCall&);
};

// Every op, indexed by its value.
std::span<const IoctlOpDesc> ioctl_ops();
const IoctlOpDesc& ioctl_op_desc(IoctlOp op);

}  // namespace upanthor_fuzz
