// The session recorder of the preload library (capture_record.h, docs/capture.md).
//
// DOC: Recording happens around the interposed calls, in the calling thread. The client's memory
// is read with process_vm_readv on the own pid, so a wild pointer the client passes (a call meant
// to give EFAULT) is recorded as unreadable rather than crashing the recorder. A call takes one
// number of a global sequence when it enters and one when it returns; the record is written when
// it returns, under the writer's lock, so the file is in the order of the return numbers. BO pages
// are hashed per 4 KiB when a GROUP_SUBMIT, VM_BIND or host syncobj wait or signal enters: a page whose hash differs from what
// the capture last recorded for that (file, handle, page) is listed in the call's record, and its
// contents are written once per distinct hash.
#include "tools/preload/capture_record.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_gem.h"
#include "drm/drm_gem_shmem_helper.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/task.h"
#include "tools/capture/capture_format.h"
#include "tools/capture/ioctl_layout.h"
#include "tools/preload/caller_creds.h"
#include "tools/preload/device.h"
#include "tools/preload/files.h"
#include "tools/preload/remote_client.h"

namespace upanthor::preload {
namespace {

namespace cap = upanthor::capture;

struct Recorder {
    // Protects everything below (the writer and the page and file bookkeeping).
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    // Held across a call's BO snapshot and the taking of its entry number (taken before `lock`):
    // the snapshots' order is the calls' entry order, the order the replay restores them in.
    pthread_mutex_t snapshot_lock = PTHREAD_MUTEX_INITIALIZER;
    cap::Writer writer;
    std::unordered_set<std::uint64_t> pages_written;
    // The last hash recorded per (file id, handle): one per page.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::uint64_t>> bo_state;
    std::map<const kshim::file*, std::uint32_t> file_ids;
    // Kernel address ranges the client has mapped (start -> end): only BO pages in them can change
    // other than by the GPU, whose writes the replay's GPU makes again. Never shrunk: what the
    // client wrote before an munmap is still recorded at the next submission (and a range reused
    // by another BO only costs hashing).
    std::map<std::uintptr_t, std::uintptr_t> cpu_ranges;
    std::uint32_t next_file_id = 1;
};

std::atomic<std::uint64_t> g_seq{1};

// The hooks run inside interposed calls whose errno the client reads afterwards.
struct KeepErrno {
    int saved = errno;
    ~KeepErrno() { errno = saved; }
};
Recorder* g_rec = nullptr;  // set once by init; never freed (exit handlers may still call in)
pthread_once_t g_once = PTHREAD_ONCE_INIT;

std::int64_t mono_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

void finish_capture() {
    Recorder* r = g_rec;
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    if (r->writer.is_open() && !r->writer.close())
        std::fprintf(stderr, "libupanthor_preload: UPANTHOR_CAPTURE: writing the capture failed\n");
    pthread_mutex_unlock(&r->lock);
}

void init_capture() {
    const char* path = std::getenv("UPANTHOR_CAPTURE");
    if (!path || !*path)
        return;
    if (remote_mode()) {
        std::fprintf(stderr,
                     "libupanthor_preload: UPANTHOR_CAPTURE is not supported with UPANTHOR_SERVER (server mode): "
                     "nothing is captured\n");
        return;
    }
    auto* r = new Recorder;
    cap::Header h;
    h.pid = getpid();
    h.start_mono_ns = mono_ns();
    h.program = program_invocation_short_name ? program_invocation_short_name : "";
    if (!r->writer.open(path, h)) {
        std::fprintf(stderr, "libupanthor_preload: UPANTHOR_CAPTURE: cannot create '%s': %s\n", path,
                     std::strerror(errno));
        delete r;
        return;
    }
    g_rec = r;
    std::atexit(finish_capture);
}

Recorder* rec() {
    pthread_once(&g_once, init_capture);
    return g_rec && g_rec->writer.is_open() ? g_rec : nullptr;
}

// Copies n bytes of the process's memory at p; false if any of it is not readable.
bool read_mem(std::uint64_t p, std::size_t n, std::vector<std::uint8_t>* out) {
    out->assign(n, 0);
    if (n == 0)
        return true;
    iovec local{out->data(), n};
    iovec remote{reinterpret_cast<void*>(p), n};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

// Whether the n bytes at p can be written (writes back what they hold).
bool writable_mem(std::uint64_t p, const std::vector<std::uint8_t>& bytes) {
    if (bytes.empty())
        return true;
    iovec local{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};
    iovec remote{reinterpret_cast<void*>(p), bytes.size()};
    return process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes.size());
}

// A NUL-terminated string at p (at most 4096 bytes, the NUL included); false if unreadable.
bool read_cstring(std::uint64_t p, std::vector<std::uint8_t>* out) {
    out->clear();
    while (out->size() < 4096) {
        const std::size_t to_page = 4096 - (p + out->size()) % 4096;
        std::vector<std::uint8_t> chunk;
        if (!read_mem(p + out->size(), std::min<std::size_t>(to_page, 4096 - out->size()), &chunk))
            return false;
        for (std::uint8_t c : chunk) {
            out->push_back(c);
            if (c == 0)
                return true;
        }
    }
    return true;
}

void fill_call(cap::Record& r) {
    r.tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
    if (const kshim::Task* t = kshim::current())
        r.task = t->name;
    const kshim::cred c = host_creds();
    r.euid = c.euid;
    r.caps = c.cap_effective.val;
}

// The capture's id of a file (under the lock); a new one for a file not seen yet.
std::uint32_t file_id_locked(Recorder* rc, const kshim::file* f) {
    auto it = rc->file_ids.find(f);
    if (it != rc->file_ids.end())
        return it->second;
    const std::uint32_t id = rc->next_file_id++;
    rc->file_ids[f] = id;
    return id;
}

// The capture's id of the DRM file behind fd, 0 if fd is not one.
std::uint32_t drm_file_id(Recorder* rc, kshim::file* f) {
    if (!f || !drm::drm_file_from(f))
        return 0;
    pthread_mutex_lock(&rc->lock);
    const std::uint32_t id = file_id_locked(rc, f);
    pthread_mutex_unlock(&rc->lock);
    return id;
}

void write_record(Recorder* rc, cap::Record& r) {
    pthread_mutex_lock(&rc->lock);
    r.exit_seq = g_seq.fetch_add(1);
    rc->writer.write(r);
    pthread_mutex_unlock(&rc->lock);
}

// The pages of df's BOs that changed since the last record (written now if new).
void snapshot_bos(Recorder* rc, std::uint32_t file_id, drm::drm_file* df, std::vector<cap::BoPage>* out) {
    attach_thread();
    std::vector<std::pair<std::uint32_t, drm::drm_gem_object*>> objs;
    df->gem.for_each([&](std::uint32_t handle, drm::drm_gem_object* obj) {
        drm::drm_gem_object_get(obj);
        objs.emplace_back(handle, obj);
    });
    const std::uint64_t zero_hash = cap::page_hash(std::vector<std::uint8_t>(cap::kPageSize).data(), cap::kPageSize);
    for (auto& [handle, obj] : objs) {
        drm::drm_gem_shmem_object* shmem = drm::to_drm_gem_shmem_obj(obj);
        // Only pages that exist: a BO nothing has touched yet is all zeroes either way.
        if (!drm::drm_gem_is_imported(obj) && shmem->pages && shmem->pages[0]) {
            const auto* base = static_cast<const std::uint8_t*>(kshim::page_address(shmem->pages[0]));
            const std::size_t npages = obj->size / cap::kPageSize;
            // The pages the client has mapped (the rest only the GPU writes).
            std::vector<bool> mapped(npages, false);
            bool any = false;
            pthread_mutex_lock(&rc->lock);
            const auto b = reinterpret_cast<std::uintptr_t>(base);
            const std::uintptr_t e = b + obj->size;
            for (auto it = rc->cpu_ranges.begin(); it != rc->cpu_ranges.end() && it->first < e; ++it) {
                if (it->second <= b)
                    continue;
                const std::uintptr_t lo = std::max(it->first, b), hi = std::min(it->second, e);
                for (std::uintptr_t p = (lo - b) / cap::kPageSize; p * cap::kPageSize < hi - b && p < npages; p++)
                    mapped[p] = any = true;
            }
            pthread_mutex_unlock(&rc->lock);
            if (!any) {
                drm::drm_gem_object_put(obj);
                continue;
            }
            std::vector<std::uint64_t> hashes(npages, zero_hash);
            for (std::size_t i = 0; i < npages; i++)
                if (mapped[i])
                    hashes[i] = cap::page_hash(base + i * cap::kPageSize, cap::kPageSize);
            pthread_mutex_lock(&rc->lock);
            std::vector<std::uint64_t>& last = rc->bo_state[{file_id, handle}];
            if (last.size() != npages)
                last.assign(npages, zero_hash);
            for (std::size_t i = 0; i < npages; i++) {
                if (!mapped[i] || hashes[i] == last[i])
                    continue;
                last[i] = hashes[i];
                if (rc->pages_written.insert(hashes[i]).second)
                    rc->writer.write_page(hashes[i], base + i * cap::kPageSize);
                out->push_back({handle, static_cast<std::uint32_t>(i), hashes[i]});
            }
            pthread_mutex_unlock(&rc->lock);
        }
        drm::drm_gem_object_put(obj);
    }
}

// Server mode never reaches the hooks (its calls go to the server first): say so at load.
__attribute__((constructor)) void capture_refuse_server_mode() {
    const char* path = std::getenv("UPANTHOR_CAPTURE");
    if (path && *path && std::getenv("UPANTHOR_SERVER"))
        pthread_once(&g_once, init_capture);
}

}  // namespace

void capture_open(int fd_or_err, int minor, int flags) {
    const KeepErrno keep;
    Recorder* rc = rec();
    if (!rc)
        return;
    cap::Record r;
    r.type = cap::RecType::Open;
    r.enter_seq = g_seq.fetch_add(1);
    fill_call(r);
    r.fd = fd_or_err;
    r.result = fd_or_err;
    r.flags = flags;
    r.kind = minor < 0 ? cap::FileKind::SwSync : minor >= 128 ? cap::FileKind::DrmRender : cap::FileKind::DrmPrimary;
    if (fd_or_err >= 0) {
        if (kshim::file* f = files_get(fd_or_err)) {
            if (drm::drm_file_from(f)) {
                pthread_mutex_lock(&rc->lock);
                rc->file_ids[f] = rc->next_file_id++;  // a new open, even at a reused address
                r.file_id = rc->file_ids[f];
                pthread_mutex_unlock(&rc->lock);
            }
            attach_thread();
            kshim::fput(f);
        }
    }
    write_record(rc, r);
}

struct CaptureClose::State {
    Recorder* rc;
    cap::Record r;
};

CaptureClose::CaptureClose(int fd) {
    const KeepErrno keep;
    Recorder* rc = rec();
    if (!rc)
        return;
    kshim::file* f = files_get(fd);
    if (!f)
        return;
    s_ = std::make_unique<State>();
    s_->rc = rc;
    cap::Record& r = s_->r;
    r.type = cap::RecType::Close;
    r.enter_seq = g_seq.fetch_add(1);
    fill_call(r);
    r.fd = fd;
    r.file_id = drm_file_id(rc, f);
    attach_thread();
    kshim::fput(f);
}

CaptureClose::~CaptureClose() {
    if (!s_)
        return;
    const KeepErrno keep;
    write_record(s_->rc, s_->r);
}

void capture_dup(int oldfd, int newfd_or_err) {
    const KeepErrno keep;
    Recorder* rc = rec();
    if (!rc)
        return;
    kshim::file* f = files_get(oldfd);
    if (!f)
        return;
    cap::Record r;
    r.type = cap::RecType::Dup;
    r.enter_seq = g_seq.fetch_add(1);
    fill_call(r);
    r.fd = oldfd;
    r.newfd = newfd_or_err;
    r.result = newfd_or_err;
    r.file_id = drm_file_id(rc, f);
    attach_thread();
    kshim::fput(f);
    write_record(rc, r);
}

void capture_mmap(int fd, off_t off, size_t len, int prot, int flags, void* result, int err) {
    const KeepErrno keep;
    Recorder* rc = rec();
    if (!rc)
        return;
    kshim::file* f = files_get(fd);
    cap::Record r;
    r.type = cap::RecType::Mmap;
    r.enter_seq = g_seq.fetch_add(1);
    fill_call(r);
    r.fd = fd;
    r.file_id = f ? drm_file_id(rc, f) : 0;
    if (f) {
        attach_thread();
        kshim::fput(f);
    }
    r.offset = static_cast<std::uint64_t>(off);
    r.len = len;
    r.prot = prot;
    r.flags = flags;
    r.addr = result == MAP_FAILED ? 0 : reinterpret_cast<std::uint64_t>(result);
    r.result = result == MAP_FAILED ? -err : 0;
    write_record(rc, r);
}

void capture_cpu_mapping(const void* kaddr, size_t len) {
    Recorder* rc = rec();
    if (!rc)
        return;
    const KeepErrno keep;
    const auto b = reinterpret_cast<std::uintptr_t>(kaddr);
    pthread_mutex_lock(&rc->lock);
    std::uintptr_t& end = rc->cpu_ranges[b];
    end = std::max(end, b + len);
    pthread_mutex_unlock(&rc->lock);
}

void capture_munmap(void* addr, size_t len) {
    const KeepErrno keep;
    Recorder* rc = rec();
    if (!rc)
        return;
    cap::Record r;
    r.type = cap::RecType::Munmap;
    r.enter_seq = g_seq.fetch_add(1);
    fill_call(r);
    r.addr = reinterpret_cast<std::uint64_t>(addr);
    r.len = len;
    write_record(rc, r);
}

struct CaptureIoctl::State {
    Recorder* rc;
    cap::Record r;
    std::vector<cap::BufferRef> refs;
    const cap::TypeLayout* layout;
};

CaptureIoctl::CaptureIoctl(int fd, unsigned cmd, void* arg) {
    const KeepErrno keep;
    Recorder* rc = rec();
    if (!rc)
        return;
    kshim::file* f = files_get(fd);
    if (!f)
        return;
    s_ = std::make_unique<State>();
    s_->rc = rc;
    cap::Record& r = s_->r;
    r.type = cap::RecType::Ioctl;
    // A call that snapshots BO pages takes its entry number with the snapshot (below).
    const bool snapshots = cap::ioctl_snapshots_bos(cmd);
    if (!snapshots)
        r.enter_seq = g_seq.fetch_add(1);
    fill_call(r);
    r.mono_ns = mono_ns();
    r.fd = fd;
    r.request = cmd;
    r.file_id = drm_file_id(rc, f);
    r.arg_ptr = reinterpret_cast<std::uint64_t>(arg);
    const std::size_t size = (cmd >> 16) & 0x3FFF;  // _IOC_SIZE
    r.arg_readable = read_mem(r.arg_ptr, size, &r.arg_in);
    if (!r.arg_readable)
        r.arg_in.clear();
    s_->layout = cap::ioctl_layout(cmd);
    if (r.arg_readable)
        cap::walk_buffers(
            s_->layout, r.arg_in.data(), r.arg_in.size(),
            [&](cap::BufferRef& ref, std::size_t) -> const std::uint8_t* {
                cap::Buffer& b = r.bufs.emplace_back();
                b.user_ptr = ref.ptr;
                if (ref.size == 0) {  // a string: measured here
                    b.readable = read_cstring(ref.ptr, &b.in);
                    ref.size = b.in.size();
                } else {
                    b.readable = read_mem(ref.ptr, ref.size, &b.in);
                }
                b.size = static_cast<std::uint32_t>(ref.size);
                if (!b.readable) {
                    b.in.clear();
                    return nullptr;
                }
                return b.in.data();
            },
            &s_->refs);
    if (snapshots) {
        // The entry number is taken when the snapshot is, under one lock: a thread descheduled
        // between the two (with a number taken at the hook's start) let another thread's later
        // call snapshot first, and the replay, restoring in entry order, then ran a submission
        // without the command stream its snapshot had been taken by the other call.
        pthread_mutex_lock(&rc->snapshot_lock);
        if (r.file_id)
            if (drm::drm_file* df = drm::drm_file_from(f))
                snapshot_bos(rc, r.file_id, df, &r.bo_pages);
        r.enter_seq = g_seq.fetch_add(1);
        pthread_mutex_unlock(&rc->snapshot_lock);
    }
    attach_thread();
    kshim::fput(f);
}

CaptureIoctl::~CaptureIoctl() = default;

void CaptureIoctl::done(int ret) {
    const KeepErrno keep;
    if (!s_)
        return;
    cap::Record& r = s_->r;
    r.result = ret;
    if (r.arg_readable)
        read_mem(r.arg_ptr, r.arg_in.size(), &r.arg_out);
    for (cap::Buffer& b : r.bufs)
        if (b.readable && !read_mem(b.user_ptr, b.size, &b.out))
            b.out = b.in;
    if (ret == -EFAULT) {
        // Which of the client's memory the kernel could not write (a read-only buffer).
        r.arg_writable = r.arg_readable && writable_mem(r.arg_ptr, r.arg_out);
        for (cap::Buffer& b : r.bufs)
            b.writable = b.readable && writable_mem(b.user_ptr, b.out);
    }
    if (ret >= 0 && r.request == 0x40086409u && r.arg_in.size() >= 4) {  // GEM_CLOSE: the handle's pages go
        std::uint32_t handle;
        std::memcpy(&handle, r.arg_in.data(), 4);
        pthread_mutex_lock(&s_->rc->lock);
        s_->rc->bo_state.erase({r.file_id, handle});
        pthread_mutex_unlock(&s_->rc->lock);
    }
    write_record(s_->rc, r);
    s_.reset();
}

}  // namespace upanthor::preload
