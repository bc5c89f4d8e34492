// (no upstream counterpart) The capture file of a client session recorded by the preload library
// (UPANTHOR_CAPTURE) and replayed by `upanthor replay` (docs/capture.md describes the format).
//
// DOC: A capture is a gzip stream (zlib) of records. The first is the header: an 8-byte magic,
// the format version (kFormatVersion: a reader refuses any other) and the process it came from.
// Every other record is a type byte, a u32 payload length and the payload, little endian, so a
// reader can skip a record type it does not know. The calls (open, close, dup, ioctl, mmap,
// munmap) carry the calling thread and two numbers of one global sequence, taken when the call
// entered and when it returned: replay starts a call only after every call that had returned
// before it started. Page records hold 4 KiB of BO contents once per distinct content (keyed by
// its hash); an ioctl record that lets the GPU run (GROUP_SUBMIT, VM_BIND) lists the pages of the
// file's BOs that changed since the last such record, by hash. An end record closes a complete
// capture; a file without it (or with a broken gzip stream) is truncated.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace upanthor::capture {

inline constexpr char kMagic[8] = {'U', 'P', 'C', 'A', 'P', 'T', 'R', '\n'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::uint32_t kPageSize = 4096;

enum class RecType : std::uint8_t {
    Header = 1,
    Open = 2,
    Close = 3,
    Dup = 4,
    Ioctl = 5,
    Mmap = 6,
    Munmap = 7,
    Page = 8,
    End = 9,
};

// What an open gave (Record::kind of an Open).
enum class FileKind : std::uint8_t { DrmPrimary = 0, DrmRender = 1, SwSync = 2 };

// One user buffer an ioctl reads or writes behind a pointer field, in the order the ioctl's layout
// walk finds them (ioctl_layout.h): the bytes before the call and after it.
struct Buffer {
    std::uint64_t user_ptr = 0;
    std::uint32_t size = 0;
    bool readable = true;  // false: the client's pointer did not point at readable memory
    bool writable = true;  // false: a write to it faulted (only probed when the call gave EFAULT)
    std::vector<std::uint8_t> in, out;
};

// A page of one of the file's BOs, by content hash (its bytes are in a Page record).
struct BoPage {
    std::uint32_t handle = 0;
    std::uint32_t page = 0;
    std::uint64_t hash = 0;
};

struct Record {
    RecType type = RecType::End;
    std::uint64_t line = 0;  // 1-based number of the record in the file (the header is 1)
    std::uint64_t enter_seq = 0, exit_seq = 0;
    std::uint32_t tid = 0;
    std::string task;           // the kernel task's name the call ran as (sw_sync names timelines by it)
    std::int32_t fd = -1;       // the descriptor called on (Open: the one returned)
    std::uint32_t file_id = 0;  // the DRM file behind fd (unique per open of a node), 0 for others
    std::int64_t result = 0;    // the call's return value, or -errno
    std::uint32_t euid = 0;     // the caller's credentials at the call
    std::uint64_t caps = 0;
    // Open
    FileKind kind = FileKind::DrmRender;
    std::int32_t flags = 0;  // open(2) flags; Mmap: mmap flags
    // Dup: fd -> newfd
    std::int32_t newfd = -1;
    // Ioctl
    std::uint32_t request = 0;
    std::int64_t mono_ns = 0;  // the caller's CLOCK_MONOTONIC when the call entered
    std::uint64_t arg_ptr = 0;
    bool arg_readable = true, arg_writable = true;
    std::vector<std::uint8_t> arg_in, arg_out;
    std::vector<Buffer> bufs;
    std::vector<BoPage> bo_pages;
    // Mmap / Munmap
    std::uint64_t offset = 0, len = 0, addr = 0;
    std::int32_t prot = 0;
};

struct Header {
    std::uint32_t version = kFormatVersion;
    std::int32_t pid = 0;
    std::int64_t start_mono_ns = 0;
    std::string program;
};

struct Capture {
    Capture() = default;
    // Not copied: `pages` points into `storage`. Moving keeps the pointers valid (a moved vector
    // keeps its buffer).
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;
    Capture(Capture&&) = default;
    Capture& operator=(Capture&&) = default;

    Header header;
    std::vector<Record> records;  // without the header, the pages and the end record
    // Page contents by hash: kPageSize bytes each, inside `storage` (not copied out: a Mesa
    // session's pages were a third of the replay's page faults).
    std::unordered_map<std::uint64_t, const std::uint8_t*> pages;
    std::vector<std::uint8_t> storage;  // the decompressed file
};

// 64-bit content hash of a page (not cryptographic: equal contents are deduplicated by it).
std::uint64_t page_hash(const void* data, std::size_t n);

// Writes a capture. Not thread-safe: the caller serialises.
class Writer {
public:
    Writer() = default;
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;
    // Creates `path` and writes the header; false (errno set) on failure.
    bool open(const std::string& path, const Header& h);
    void write(const Record& r);
    void write_page(std::uint64_t hash, const void* data);
    // Writes the end record and closes; false when a write failed.
    bool close();
    bool is_open() const { return gz_ != nullptr; }

private:
    void put(RecType t, const std::vector<std::uint8_t>& payload);
    void* gz_ = nullptr;  // gzFile
    bool failed_ = false;
};

// Reads a whole capture. False with *err ("FILE: ...") when the file cannot be read, is not a
// capture, has another format version, is truncated or has a malformed record.
bool read_capture(const std::string& path, Capture* out, std::string* err);

// A record's type as a word ("ioctl").
const char* rec_type_name(RecType t);

}  // namespace upanthor::capture
