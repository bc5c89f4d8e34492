// (no upstream counterpart) What each ioctl of a capture reads and writes: its argument struct,
// the user buffers behind its pointer fields (recursively: VM_BIND's ops and each op's syncs,
// GROUP_SUBMIT's queue submits and each one's syncs), and which fields name a per-file object
// (GEM handle, syncobj, VM, group, tiler heap), a descriptor, a fake mmap offset, or a value that
// legitimately differs from run to run (a timestamp). The preload library walks it to record a
// call; `upanthor replay` walks the same layout over the recorded input to rebuild the call with
// its own buffers and remapped handles, and to compare the outputs (docs/capture.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace upanthor::capture {

// What a field names.
enum class Ref : std::uint8_t {
    Gem,         // a GEM handle of the call's file
    Syncobj,     // a syncobj handle of the call's file
    Vm,          // a VM id of the call's file
    Group,       // a group handle of the call's file
    Heap,        // a tiler heap handle of the call's file
    Fd,          // a descriptor of the process
    MmapOffset,  // a fake offset for mmap (differs between runs)
    Volatile,    // a value that differs between runs (timestamps): not compared
};
const char* ref_name(Ref r);

// A field of a struct (the argument or an array element). `out`: the call writes it (a new
// handle, an fd, an offset: learnt from the replay's answer); otherwise the call reads it (mapped
// to the replay's own handle before the call). size is 4 or 8.
struct FieldRule {
    std::uint32_t off;
    std::uint8_t size;
    Ref ref;
    bool out;
};

struct TypeLayout;

// A pointer field and how big its buffer is.
struct PtrRule {
    enum class Count : std::uint8_t {
        ObjArray,  // drm_panthor_obj_array at ptr_off - 8: {u32 stride; u32 count; u64 array}
        Elems32,   // u32 element count at count_off, elements of elem_size bytes
        Bytes32,   // u32 byte count at count_off
        Bytes64,   // u64 byte count at count_off
        CString,   // a NUL-terminated string (at most 4096 bytes)
    };
    std::uint32_t ptr_off;
    Count count;
    std::uint32_t count_off = 0;
    std::uint32_t elem_size = 1;
    const TypeLayout* elem = nullptr;  // the elements' own fields and pointers, if any
};

struct TypeLayout {
    const char* name;
    std::uint32_t size;
    std::vector<FieldRule> fields;
    std::vector<PtrRule> ptrs;
};

// The ioctl's name ("PANTHOR_GROUP_SUBMIT"), or "ioctl 0x...".
std::string ioctl_name(std::uint32_t request);
// The layout of `request`'s argument, or nullptr (then only the argument struct, of the size the
// request encodes, is recorded, and no field is remapped).
const TypeLayout* ioctl_layout(std::uint32_t request);
// Calls that let the GPU read memory: the file's BO contents are recorded before them.
bool ioctl_runs_gpu(std::uint32_t request);
// Calls before which the file's mapped BO pages are recorded (docs/capture.md, BO contents): those
// that run the GPU, and the host's syncobj waits and signals, the points at which what the CPU
// wrote through a mapping (a VkEvent set by the host) can be what releases the GPU.
bool ioctl_snapshots_bos(std::uint32_t request);
// Calls that only read state and never block or wake anyone (VERSION, GET_CAP, DEV_QUERY, the
// GET_STATEs, SYNCOBJ_QUERY, SYNC_IOC_FILE_INFO): replay orders them by when they returned.
bool ioctl_is_query(std::uint32_t request);
// The SYNCOBJ waits (absolute CLOCK_MONOTONIC timeouts).
bool ioctl_is_syncobj_wait(std::uint32_t request);

// One buffer the walk found: which buffer holds its pointer (-1: the argument) and where.
struct BufferRef {
    int parent;
    std::uint32_t ptr_off;  // offset of the pointer field in the parent buffer
    std::uint64_t ptr;
    std::uint64_t size;
    const TypeLayout* elem;
    std::uint32_t stride;  // element stride (0: no elements)
    std::uint32_t count;
};

// Walks the pointer tree of a call. `fetch(ref, index)` is given each buffer found, in order, and
// returns its input bytes (ref.size of them), or nullptr when they are not available (then the
// buffer's own pointers are not followed). Pointers that are 0, and buffers of size 0 or larger
// than kMaxBuffer, are not buffers. CString buffers are given with size 0: fetch measures them and
// returns the bytes with the measured size set through the reference.
inline constexpr std::uint64_t kMaxBuffer = 256ull << 20;
void walk_buffers(const TypeLayout* root, const std::uint8_t* arg, std::size_t arg_size,
                  const std::function<const std::uint8_t*(BufferRef& ref, std::size_t index)>& fetch,
                  std::vector<BufferRef>* out);

// Calls fn(field, byte offset in the buffer) for every field rule of every element of a buffer
// (`layout` the buffer's element layout, `stride`/`count` as in BufferRef; the argument is one
// element of the struct's size).
void for_each_field(const TypeLayout* layout, std::uint32_t stride, std::uint32_t count,
                    const std::function<void(const FieldRule&, std::size_t)>& fn);
// Marks the bytes of a buffer that are not compared as-is: its pointer fields, its Ref fields
// (remapped or volatile), and what depends on the input (DEV_QUERY's timestamp). `skip` has the
// buffer's size.
void mark_uncompared(std::uint32_t request, const TypeLayout* layout, std::uint32_t stride, std::uint32_t count,
                     const std::uint8_t* in, std::vector<bool>* skip, bool is_arg);

}  // namespace upanthor::capture
