// `upanthor replay` (replay.h): a captured client session replayed on the simulated runtime.
#include "tools/upanthor/replay.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "drm/drm_file.h"
#include "drm/drm_gem.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "host/world.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/dma-buf/sw_sync.h"
#include "kernel_shim/err.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/signal.h"
#include "kernel_shim/sim_abort.h"
#include "kernel_shim/time.h"
#include "kernel_shim/wait.h"
#include "mock_hw/gpu.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_drv.h"
#include "tools/capture/capture_format.h"
#include "tools/capture/ioctl_layout.h"
#include "tools/preload/ioctl_answers.h"
#include "tools/upanthor/cli.h"
#include "tools/upanthor/run_state.h"
#include "tools/upanthor/scenario.h"
#include "uapi/drm/panthor_drm.h"

namespace upanthor {
namespace {

namespace cap = upanthor::capture;
using run_detail::json_str;
using u8 = std::uint8_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;

// A user pointer that is never registered: what an unreadable or read-only client buffer
// becomes, so the kernel's copy faults (EFAULT) as it did live.
constexpr u64 kBadUserPtr = 0x10;
// A descriptor number never open in the replay's table (a closed one in the capture).
constexpr int kClosedFd = 1 << 20;
// How long the replay may run in virtual time before it counts as stuck.
constexpr s64 kReplayLimitNs = 600 * kshim::NSEC_PER_SEC;

double wall_seconds() {
    return static_cast<double>(kshim::host_monotonic_ns()) * 1e-9;
}

// The kernel's -ERESTARTSYS: what an interrupted sleep gives the syscall layer.
constexpr int kErestartsys = 512;

std::string errstr(s64 v) {
    if (v >= 0)
        return std::to_string(v);
    if (v == -kErestartsys)
        return "-ERESTARTSYS";
    const char* n = strerrorname_np(static_cast<int>(-v));
    return std::string("-") + (n ? n : "E" + std::to_string(-v));
}

std::string hex(u64 v) {
    char b[24];
    std::snprintf(b, sizeof(b), "0x%" PRIx64, v);
    return b;
}

u64 load(const u8* p, std::size_t n) {
    u64 v = 0;
    std::memcpy(&v, p, n);
    return v;
}

void store(u8* p, std::size_t n, u64 v) {
    std::memcpy(p, &v, n);
}

const kshim::file_operations kForeignFops{};

// A name a call uses or makes: (file id, kind, captured value). Descriptors and the process's
// mmap offsets of exports are per process: file id 0 for descriptors.
using Name = std::tuple<u32, cap::Ref, u64>;
constexpr std::size_t kNoProducer = ~std::size_t{0};

Name name_of(const cap::Record& r, cap::Ref ref, u64 v) {
    return {ref == cap::Ref::Fd ? 0 : r.file_id, ref, ref == cap::Ref::Fd ? static_cast<u64>(static_cast<u32>(v)) : v};
}

// fn(rule, byte offset, the buffer's bytes) for every Ref field of the call's argument and buffers
// (`out`: the output bytes, else the input bytes), walking the layout over the recorded input.
void record_fields(const cap::Record& r, bool out,
                   const std::function<void(const cap::FieldRule&, std::size_t, const std::vector<u8>&)>& fn) {
    if (!r.arg_readable || r.arg_in.empty())
        return;
    const cap::TypeLayout* layout = cap::ioctl_layout(r.request);
    std::vector<cap::BufferRef> refs;
    cap::walk_buffers(
        layout, r.arg_in.data(), r.arg_in.size(),
        [&](cap::BufferRef& ref, std::size_t i) -> const u8* {
            if (i >= r.bufs.size() || !r.bufs[i].readable)
                return nullptr;
            ref.size = r.bufs[i].size;
            return r.bufs[i].in.data();
        },
        &refs);
    const std::vector<u8>& arg = out ? r.arg_out : r.arg_in;
    cap::for_each_field(layout, static_cast<u32>(r.arg_in.size()), 1, [&](const cap::FieldRule& f, std::size_t off) {
        if (off + f.size <= arg.size())
            fn(f, off, arg);
    });
    for (std::size_t i = 0; i < refs.size() && i < r.bufs.size(); i++) {
        const std::vector<u8>& data = out ? r.bufs[i].out : r.bufs[i].in;
        cap::for_each_field(refs[i].elem, refs[i].stride, refs[i].count, [&](const cap::FieldRule& f, std::size_t off) {
            if (off + f.size <= data.size())
                fn(f, off, data);
        });
    }
}

// The names record r reads (out == false) or makes (out == true).
void record_names(const cap::Record& r, bool out, const std::function<void(const Name&)>& fn) {
    using cap::RecType;
    const bool ok = r.result >= 0;
    if (r.type == RecType::Open) {
        if (out && ok)
            fn(name_of(r, cap::Ref::Fd, static_cast<u64>(r.fd)));
        return;
    }
    if (!out)
        fn(name_of(r, cap::Ref::Fd, static_cast<u64>(r.fd)));
    if (r.type == RecType::Dup) {
        if (!out || ok)
            fn(name_of(r, cap::Ref::Fd, static_cast<u64>(r.newfd)));
    } else if (r.type == RecType::Mmap) {
        if (!out)
            fn(name_of(r, cap::Ref::MmapOffset, r.offset));
    } else if (r.type == RecType::Ioctl) {
        if (!out)
            for (const cap::BoPage& p : r.bo_pages)
                fn(name_of(r, cap::Ref::Gem, p.handle));
        if (out && (!ok || !r.arg_writable))
            return;
        record_fields(r, out, [&](const cap::FieldRule& f, std::size_t off, const std::vector<u8>& data) {
            if (f.out == out && f.ref != cap::Ref::Volatile)
                fn(name_of(r, f.ref, load(data.data() + off, f.size)));
        });
    }
}

class Replayer {
public:
    Replayer(const cap::Capture& c, const ReplayOptions& o) : c_(c), o_(o) {}

    // Runs the whole replay inside the world; returns false when it could not be set up.
    void run(ReplayOutcome* out);

private:
    struct Thread {
        u32 tid;
        std::vector<std::size_t> recs;
        kshim::Task* task = nullptr;
    };

    void exec(std::size_t i);
    void exec_open(std::size_t i);
    void exec_ioctl(std::size_t i);
    void exec_mmap(std::size_t i);
    void restore_pages(std::size_t i, drm::drm_file* df);
    void restore_before_start(std::size_t i);
    void resolve_producers();
    void mismatch(const cap::Record& r, const std::string& what);
    // Outputs that differ only because the capture was made on an older panthor (minor version
    // below this driver's): the minor itself, and what later minors added where the older driver
    // answered with padding or a shorter struct. Everything else still compares.
    void mark_newer_driver(const cap::Record& r, bool is_arg, const std::vector<u8>& captured,
                           const std::vector<u8>& ours, std::vector<bool>* skip);
    int captured_minor_ = -1;  // the panthor minor the capture's VERSION calls gave
    // What name n, used by record i, is in this run: the value the call that made it (the last one
    // to return before record i started, in the capture) got here; nullopt when no call made it.
    std::optional<u64> resolve(std::size_t i, const Name& n) const {
        auto p = producers_[i].find(n);
        if (p == producers_[i].end() || p->second == kNoProducer)
            return std::nullopt;
        auto v = learned_[p->second].find(n);
        return v == learned_[p->second].end() ? std::nullopt : std::optional<u64>(v->second);
    }
    int map_fd(std::size_t i, int captured) const {
        auto v = resolve(i, {0, cap::Ref::Fd, static_cast<u32>(captured)});
        return v ? static_cast<int>(*v) : -1;
    }
    // A descriptor for one call: -1 and nothing to close for a closed one.
    int foreign_fd(const cap::Record& r);
    // A handle, id or offset used by record i: this run's, or the captured value when no call made
    // it (a wrong handle a client passes on purpose).
    u64 translate(std::size_t i, cap::Ref ref, u64 v) const {
        return resolve(i, name_of(c_.records[i], ref, v)).value_or(v);
    }
    void learn(std::size_t i, const Name& n, u64 v) { learned_[i][n] = v; }
    std::string call_name(const cap::Record& r) const {
        return r.type == cap::RecType::Ioctl ? cap::ioctl_name(r.request) : cap::rec_type_name(r.type);
    }
    void finish_process();
    // The end state of groups: queried before a group goes.
    struct LiveGroup {
        drm::drm_file* df;
        u32 handle;
    };
    void query_groups(drm::drm_file* df, std::optional<u32> handle);
    std::vector<LiveGroup> groups_;
    // BO contents: the hash of the last recorded content per (file id, captured handle) and page
    // (0: none yet, taken as zeroes), the base each record's pages are a delta against.
    kshim::Mutex page_lock_{"replay.page_lock"};
    std::map<std::pair<u32, u32>, std::vector<u64>> page_state_;
    const std::vector<u8> zero_page_ = std::vector<u8>(cap::kPageSize);
    std::size_t groups_created_ = 0, groups_timedout_ = 0, groups_faulted_ = 0, groups_innocent_ = 0;

    const cap::Capture& c_;
    const ReplayOptions& o_;
    drm::drm_device* dev_ = nullptr;
    kshim::files_struct table_{3};
    // Per record: which record made each name it uses, and what the names it made are here.
    std::vector<std::map<Name, std::size_t>> producers_;
    std::vector<std::map<Name, u64>> learned_;
    std::map<u64, drm::VmArea*> maps_;  // captured address -> our mapping
    std::vector<std::string> mismatches_;
    std::vector<std::string> races_;
    std::vector<bool> overlapped_;  // the call overlapped another thread's call in the capture
    // Ordering: need_[i] calls (in return order) must have returned before record i starts.
    std::vector<std::size_t> need_;
    std::vector<bool> done_;
    std::atomic<std::size_t> frontier_{0};  // how many records, in file order, have returned
    // And calls start in the order they entered: rank_[i] is record i's place in that order.
    std::vector<std::size_t> rank_;
    std::vector<bool> started_;
    std::atomic<std::size_t> start_frontier_{0};
    kshim::wait_queue_head wq_;
    std::atomic<std::size_t> threads_done_{0};
    std::atomic<bool> abort_{false};  // the replay is stuck: the threads stop
    std::size_t ioctls_ = 0;
};

void Replayer::mark_newer_driver(const cap::Record& r, bool is_arg, const std::vector<u8>& captured,
                                 const std::vector<u8>& ours, std::vector<bool>* skip) {
    auto mark = [&](std::size_t off, std::size_t n) {
        for (std::size_t k = off; k < off + n && k < skip->size(); k++)
            (*skip)[k] = true;
    };
    if (r.request == drm::uapi::DRM_IOCTL_VERSION && is_arg && captured.size() >= 8 && ours.size() >= 8) {
        const int cmajor = static_cast<int>(load(captured.data(), 4)),
                  cminor = static_cast<int>(load(captured.data() + 4, 4));
        const int major = static_cast<int>(load(ours.data(), 4)), minor = static_cast<int>(load(ours.data() + 4, 4));
        // Only this driver's own newer minor (a backward-compatible uAPI) is accepted.
        if (major == panthor::PANTHOR_DRIVER_MAJOR && minor == panthor::PANTHOR_DRIVER_MINOR && cmajor == major &&
            cminor < minor) {
            captured_minor_ = cminor;
            mark(offsetof(drm::uapi::drm_version, version_minor), 4);
        }
        return;
    }
    if (r.request != drm::uapi::DRM_IOCTL_PANTHOR_DEV_QUERY || captured_minor_ < 0 || r.arg_in.size() < 16)
        return;
    const u32 type = static_cast<u32>(load(r.arg_in.data(), 4));
    const u64 pointer = load(r.arg_in.data() + 8, 8);
    if (is_arg && pointer == 0 && captured.size() >= 8 && ours.size() >= 8) {
        // The size query: structs that grew after the captured version, from their old size.
        const u64 csize = load(captured.data() + 4, 4), size = load(ours.data() + 4, 4);
        const bool grown =
            (type == DRM_PANTHOR_DEV_QUERY_GPU_INFO && csize == 104 && size == sizeof(drm_panthor_gpu_info)) ||
            (type == DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO && captured_minor_ < 8 && csize == 24 &&
             size == sizeof(drm_panthor_timestamp_info));
        if (grown)
            mark(offsetof(drm_panthor_dev_query, size), 4);
        return;
    }
    // GPU_INFO's selected_coherency (1.7) was padding the older driver wrote as 0.
    constexpr std::size_t kCoh = offsetof(drm_panthor_gpu_info, selected_coherency);
    if (!is_arg && type == DRM_PANTHOR_DEV_QUERY_GPU_INFO && captured_minor_ < 7 && captured.size() >= kCoh + 4 &&
        load(captured.data() + kCoh, 4) == 0)
        mark(kCoh, 4);
}

void Replayer::mismatch(const cap::Record& r, const std::string& what) {
    // A query that ran alongside another thread's call live saw that call's effect or not,
    // depending on an order inside the calls that the capture cannot tell: a race, not a mismatch.
    const std::size_t i = static_cast<std::size_t>(&r - c_.records.data());
    std::vector<std::string>& to =
        r.type == cap::RecType::Ioctl && cap::ioctl_is_query(r.request) && overlapped_[i] ? races_ : mismatches_;
    to.push_back("line " + std::to_string(r.line) + ": " + call_name(r) + " (fd " + std::to_string(r.fd) + ", thread " +
                 std::to_string(r.tid) + "): " + what);
}

int Replayer::foreign_fd(const cap::Record& r) {
    // A descriptor the library did not make (the program's eventfd, a pipe), or a closed one. The
    // capture does not say which (the library never saw it); the call's answer tells them apart.
    if (r.result == -EBADF)
        return -1;
    if (r.request == drm::uapi::DRM_IOCTL_SYNCOBJ_EVENTFD)
        return kshim::eventfd_fd_create(0, 0);
    kshim::file* f = kshim::anon_inode_getfile("[foreign]", &kForeignFops, nullptr, O_RDWR);
    if (kshim::IS_ERR(f))
        return -1;
    const int fd = kshim::get_unused_fd_flags(0);
    if (fd < 0) {
        kshim::fput(f);
        return -1;
    }
    kshim::fd_install(fd, f);
    return fd;
}

void Replayer::exec_open(std::size_t i) {
    const cap::Record& r = c_.records[i];
    if (r.result < 0)
        return;  // failed live: nothing to replay
    kshim::file* f = r.kind == cap::FileKind::SwSync
                         ? kshim::sw_sync_open_file(r.flags)
                         : drm::drm_open_file(dev_, r.kind == cap::FileKind::DrmRender, r.flags);
    if (kshim::IS_ERR(f)) {
        mismatch(r, "open failed: " + errstr(kshim::PTR_ERR(f)));
        return;
    }
    const int fd = kshim::get_unused_fd_flags(r.flags & O_CLOEXEC);
    if (fd < 0) {
        kshim::fput(f);
        mismatch(r, "no descriptor: " + errstr(fd));
        return;
    }
    kshim::fd_install(fd, f);
    learn(i, {0, cap::Ref::Fd, static_cast<u32>(r.fd)}, static_cast<u64>(fd));
}

void Replayer::exec_mmap(std::size_t i) {
    const cap::Record& r = c_.records[i];
    const int fd = map_fd(i, r.fd);
    kshim::file* f = fd >= 0 ? kshim::fget(fd) : nullptr;
    if (!f) {
        if (r.result == 0)
            mismatch(r, "the descriptor is not open in the replay");
        return;
    }
    const u64 off = translate(i, cap::Ref::MmapOffset, r.offset);
    drm::VmArea* vma = nullptr;
    const int ret = drm::do_mmap(f, off, r.len, r.prot, r.flags, &vma);
    kshim::fput(f);
    if (ret != r.result)
        mismatch(r, "returned " + errstr(ret) + ", the capture has " + errstr(r.result));
    if (!ret) {
        if (auto it = maps_.find(r.addr); it != maps_.end())
            drm::drm_munmap(it->second);  // the address was reused live: the old one went
        maps_[r.addr] = vma;
    }
}

void Replayer::restore_pages(std::size_t i, drm::drm_file* df) {
    const cap::Record& r = c_.records[i];
    u32 cur = 0;
    drm::drm_gem_object* obj = nullptr;
    drm::IosysMap map;
    auto release = [&] {
        if (obj) {
            if (map.vaddr)
                drm::drm_gem_vunmap(obj, &map);
            drm::drm_gem_object_put(obj);
        }
        obj = nullptr;
        map = {};
    };
    // A wait or signal snapshots while other threads go on: a BO another thread was creating
    // (its handle not returned yet when the wait entered) or closing (here, possibly before this
    // call starts) is skipped: the GPU that call concerns is already running and was given its
    // BOs. A submission's BOs must all be there.
    const bool strict = cap::ioctl_runs_gpu(r.request);
    bool skip = false;
    for (const cap::BoPage& p : r.bo_pages) {
        if (p.handle != cur || (!obj && !skip)) {
            release();
            skip = false;
            cur = p.handle;
            const std::optional<u64> h = resolve(i, name_of(r, cap::Ref::Gem, p.handle));
            if (!strict && !h) {
                skip = true;
                continue;
            }
            obj = df->gem.lookup(static_cast<u32>(h.value_or(p.handle)));
            if (!obj && !strict) {
                skip = true;
                continue;
            }
            if (!obj) {
                mismatch(r, "BO handle " + std::to_string(p.handle) + " of the recorded pages does not exist");
                continue;
            }
            if (drm::drm_gem_vmap(obj, &map) || !map.vaddr) {
                mismatch(r, "cannot map BO handle " + std::to_string(p.handle) + " to restore its pages");
                map = {};
                continue;
            }
        }
        if (!map.vaddr || (u64{p.page} + 1) * cap::kPageSize > obj->size)
            continue;
        // A delta: only the bytes that changed between the page's previous record and this one
        // (what the CPU, or the live GPU, wrote in between), and only where this run's page does
        // not hold the new value already. The rest is this run's own (its GPU's writes).
        const u8* now = c_.pages.at(p.hash);
        const u8* prev = zero_page_.data();
        {
            const kshim::MutexGuard g(page_lock_);
            std::vector<u64>& last = page_state_[{r.file_id, p.handle}];
            if (last.size() <= p.page)
                last.resize(p.page + 1, 0);
            if (last[p.page])
                prev = c_.pages.at(last[p.page]);
            last[p.page] = p.hash;
        }
        // Eight bytes at a time: a byte mask of what changed between the records takes those
        // bytes from the new record and keeps the others (rewriting a byte with the value it
        // holds changes nothing; no other task runs while this one does).
        u8* dst = static_cast<u8*>(map.vaddr) + u64{p.page} * cap::kPageSize;
        for (std::size_t b = 0; b < cap::kPageSize; b += 8) {
            u64 pv, nv;
            std::memcpy(&pv, prev + b, 8);
            std::memcpy(&nv, now + b, 8);
            u64 diff = pv ^ nv;
            if (!diff)
                continue;
            diff |= diff >> 4;
            diff |= diff >> 2;
            diff |= diff >> 1;
            const u64 mask = (diff & 0x0101010101010101ull) * 0xFF;
            u64 dv;
            std::memcpy(&dv, dst + b, 8);
            dv = (dv & ~mask) | (nv & mask);
            std::memcpy(dst + b, &dv, 8);
        }
    }
    release();
}

void Replayer::restore_before_start(std::size_t i) {
    const cap::Record& r = c_.records[i];
    if (r.type != cap::RecType::Ioctl || r.bo_pages.empty())
        return;
    const int fd = map_fd(i, r.fd);
    kshim::file* f = fd >= 0 ? kshim::fget(fd) : nullptr;
    if (!f)
        return;  // the call reports the descriptor
    if (drm::drm_file* df = drm::drm_file_from(f))
        restore_pages(i, df);
    kshim::fput(f);
}

void Replayer::query_groups(drm::drm_file* df, std::optional<u32> handle) {
    for (auto it = groups_.begin(); it != groups_.end();) {
        if (it->df != df || (handle && it->handle != *handle)) {
            ++it;
            continue;
        }
        drm_panthor_group_get_state gs{};
        gs.group_handle = it->handle;
        const kshim::UserRange range(gs);
        if (drm::ioctl(df, drm::uapi::DRM_IOCTL_PANTHOR_GROUP_GET_STATE, &gs) == 0) {
            groups_timedout_ += (gs.state & DRM_PANTHOR_GROUP_STATE_TIMEDOUT) ? 1 : 0;
            groups_faulted_ += (gs.state & DRM_PANTHOR_GROUP_STATE_FATAL_FAULT) ? 1 : 0;
            groups_innocent_ += (gs.state & DRM_PANTHOR_GROUP_STATE_INNOCENT) ? 1 : 0;
        }
        it = groups_.erase(it);
    }
}

void Replayer::exec_ioctl(std::size_t ri) {
    const cap::Record& r = c_.records[ri];
    ioctls_++;
    const int fd = map_fd(ri, r.fd);
    kshim::file* f = fd >= 0 ? kshim::fget(fd) : nullptr;
    if (!f) {
        mismatch(r, "the descriptor is not open in the replay");
        return;
    }
    drm::drm_file* df = drm::drm_file_from(f);

    // The argument and the buffers behind it, rebuilt.
    const cap::TypeLayout* layout = cap::ioctl_layout(r.request);
    std::vector<u8> arg = r.arg_in;
    std::vector<cap::BufferRef> refs;
    if (r.arg_readable)
        cap::walk_buffers(
            layout, r.arg_in.data(), r.arg_in.size(),
            [&](cap::BufferRef& ref, std::size_t i) -> const u8* {
                if (i >= r.bufs.size() || !r.bufs[i].readable)
                    return nullptr;
                ref.size = r.bufs[i].size;
                return r.bufs[i].in.data();
            },
            &refs);
    if (refs.size() != r.bufs.size()) {
        kshim::fput(f);
        mismatch(r, "the record's buffers do not match the ioctl's layout (" + std::to_string(r.bufs.size()) +
                        " recorded, " + std::to_string(refs.size()) + " found)");
        return;
    }
    std::vector<std::vector<u8>> bufs(refs.size());
    for (std::size_t i = 0; i < refs.size(); i++)
        bufs[i] = r.bufs[i].readable ? r.bufs[i].in : std::vector<u8>();
    auto holder = [&](int parent) -> std::vector<u8>& {
        return parent < 0 ? arg : bufs[static_cast<std::size_t>(parent)];
    };
    for (std::size_t i = 0; i < refs.size(); i++) {
        const cap::Buffer& b = r.bufs[i];
        const u64 p = b.readable && b.writable ? reinterpret_cast<u64>(bufs[i].data()) : kBadUserPtr;
        std::vector<u8>& h = holder(refs[i].parent);
        if (refs[i].ptr_off + 8 <= h.size())
            store(h.data() + refs[i].ptr_off, 8, p);
    }
    // Inputs naming objects: this run's.
    std::vector<int> temp_fds;
    auto translate_in = [&](const cap::TypeLayout* l, u32 stride, u32 count, std::vector<u8>& data) {
        cap::for_each_field(l, stride, count, [&](const cap::FieldRule& fr, std::size_t off) {
            if (fr.out || fr.ref == cap::Ref::Volatile || off + fr.size > data.size())
                return;
            const u64 v = load(data.data() + off, fr.size);
            u64 t = translate(ri, fr.ref, v);
            if (fr.ref == cap::Ref::Fd && static_cast<int>(v) >= 0 && map_fd(ri, static_cast<int>(v)) < 0) {
                const int tf = foreign_fd(r);
                if (tf >= 0)
                    temp_fds.push_back(tf);
                t = static_cast<u64>(tf >= 0 ? tf : kClosedFd);
            }
            store(data.data() + off, fr.size, t);
        });
    };
    if (layout && !arg.empty())
        translate_in(layout, static_cast<u32>(arg.size()), 1, arg);
    for (std::size_t i = 0; i < refs.size(); i++)
        translate_in(refs[i].elem, refs[i].stride, refs[i].count, bufs[i]);

    if (df && r.request == drm::uapi::DRM_IOCTL_PANTHOR_GROUP_DESTROY && arg.size() >= 4)
        query_groups(df, static_cast<u32>(load(arg.data(), 4)));
    // The call, with the user memory it may touch registered.
    std::vector<std::unique_ptr<kshim::UserRange>> ranges;
    if (!arg.empty() && r.arg_readable && r.arg_writable)
        ranges.push_back(std::make_unique<kshim::UserRange>(arg.data(), arg.size()));
    for (std::size_t i = 0; i < refs.size(); i++)
        if (!bufs[i].empty() && r.bufs[i].readable && r.bufs[i].writable)
            ranges.push_back(std::make_unique<kshim::UserRange>(bufs[i].data(), bufs[i].size()));
    void* argp = arg.empty() ? nullptr
                             : (r.arg_readable && r.arg_writable ? static_cast<void*>(arg.data())
                                                                 : reinterpret_cast<void*>(kBadUserPtr));
    if (!r.arg_readable && r.arg_ptr == 0)
        argp = nullptr;
    // A call a signal interrupted live (EINTR) is interrupted here too: a signal is pending when
    // it starts, so its interruptible sleep ends at once, as the syscall layer turns it to EINTR.
    kshim::Task* self = kshim::current();
    const bool interrupted = r.result == -EINTR && self;
    if (interrupted)
        kshim::signal_wake_up(self);
    int ret = -preload::ENOIOCTLCMD;
    if (df)
        ret = preload::drm_file_ioctl(df, r.request, argp, r.mono_ns - kshim::ktime_get());
    if (ret == -preload::ENOIOCTLCMD)
        ret = static_cast<int>(kshim::vfs_ioctl(f, r.request, reinterpret_cast<unsigned long>(argp)));
    if (interrupted) {
        kshim::clear_signal_pending(self);
        if (ret == -kErestartsys)
            ret = -EINTR;
    }
    ranges.clear();
    kshim::fput(f);
    for (int tf : temp_fds)
        kshim::close_fd(tf);

    if (ret != r.result) {
        mismatch(r, "returned " + errstr(ret) + ", the capture has " + errstr(r.result));
        return;
    }
    if (ret < 0)
        return;
    if (r.request == drm::uapi::DRM_IOCTL_GEM_CLOSE && r.arg_in.size() >= 4) {  // a reused handle starts anew
        const kshim::MutexGuard g(page_lock_);
        page_state_.erase({r.file_id, static_cast<u32>(load(r.arg_in.data(), 4))});
    }
    if (df && r.request == drm::uapi::DRM_IOCTL_PANTHOR_GROUP_CREATE &&
        arg.size() >= sizeof(drm_panthor_group_create)) {
        groups_.push_back(
            {df, static_cast<u32>(load(arg.data() + offsetof(drm_panthor_group_create, group_handle), 4))});
        groups_created_++;
    }
    // Outputs naming objects: learnt.
    auto learn_out = [&](const cap::TypeLayout* l, u32 stride, u32 count, const std::vector<u8>& captured,
                         const std::vector<u8>& ours) {
        cap::for_each_field(l, stride, count, [&](const cap::FieldRule& fr, std::size_t off) {
            if (!fr.out || fr.ref == cap::Ref::Volatile || off + fr.size > captured.size() ||
                off + fr.size > ours.size())
                return;
            const u64 cv = load(captured.data() + off, fr.size);
            const u64 ov = load(ours.data() + off, fr.size);
            learn(ri, name_of(r, fr.ref, cv), fr.ref == cap::Ref::Fd ? static_cast<u64>(static_cast<u32>(ov)) : ov);
        });
    };
    // Then every other byte compared.
    auto compare = [&](const char* what, std::size_t index, const cap::TypeLayout* l, u32 stride, u32 count,
                       const std::vector<u8>& captured, const std::vector<u8>& ours, bool is_arg) {
        std::vector<bool> skip(captured.size(), false);
        cap::mark_uncompared(r.request, l, stride, count, r.arg_in.data(), &skip, is_arg);
        mark_newer_driver(r, is_arg, captured, ours, &skip);
        const std::size_t n = std::min(captured.size(), ours.size());
        for (std::size_t k = 0; k < n; k++) {
            if (skip[k] || captured[k] == ours[k])
                continue;
            const std::size_t w = k & ~std::size_t{7};
            const std::size_t wn = std::min<std::size_t>(8, n - w);
            std::string where = is_arg ? std::string("the argument (") + (l ? l->name : "struct") + ")"
                                       : std::string("buffer ") + std::to_string(index) + " (" + what + ")";
            mismatch(r, "output differs in " + where + " at byte " + std::to_string(k) + ": the capture has " +
                            hex(load(captured.data() + w, wn)) + ", the replay " + hex(load(ours.data() + w, wn)) +
                            " (bytes " + std::to_string(w) + ".." + std::to_string(w + wn - 1) + ")");
            return;
        }
    };
    if (r.arg_readable && r.arg_writable) {
        const auto asz = static_cast<u32>(arg.size());
        learn_out(layout, asz, 1, r.arg_out, arg);
        compare("", 0, layout, asz, 1, r.arg_out, arg, true);
    }
    for (std::size_t i = 0; i < refs.size(); i++) {
        if (!r.bufs[i].readable || !r.bufs[i].writable)
            continue;
        learn_out(refs[i].elem, refs[i].stride, refs[i].count, r.bufs[i].out, bufs[i]);
        compare(refs[i].elem ? refs[i].elem->name : "bytes", i, refs[i].elem, refs[i].stride, refs[i].count,
                r.bufs[i].out, bufs[i], false);
    }
}

void Replayer::exec(std::size_t i) {
    const cap::Record& r = c_.records[i];
    kshim::cred cred{r.euid, r.euid, kshim::kernel_cap_t{r.caps}};
    // The task name the call ran as (a sw_sync timeline is named after its opener).
    kshim::Task* task = kshim::current();
    std::string old_name;
    if (task && !r.task.empty()) {
        old_name = task->name;
        task->name = r.task;
    }
    const kshim::cred* old = kshim::override_creds(&cred);
    switch (r.type) {
    case cap::RecType::Open: exec_open(i); break;
    case cap::RecType::Close:
        if (const int fd = map_fd(i, r.fd); fd >= 0) {
            if (kshim::file* f = kshim::fget(fd)) {
                if (drm::drm_file* df = drm::drm_file_from(f))
                    query_groups(df, std::nullopt);
                kshim::fput(f);
            }
            kshim::close_fd(fd);
        }
        break;
    case cap::RecType::Dup:
        if (const int fd = map_fd(i, r.fd); fd >= 0 && r.newfd >= 0) {
            if (const int old_new = map_fd(i, r.newfd); old_new >= 0 && old_new != fd)
                kshim::close_fd(old_new);  // dup2 onto an open descriptor closes it
            kshim::file* f = kshim::fget(fd);
            const int nfd = f ? kshim::get_unused_fd_flags(0) : -EBADF;
            if (nfd >= 0) {
                kshim::fd_install(nfd, f);
                learn(i, {0, cap::Ref::Fd, static_cast<u32>(r.newfd)}, static_cast<u64>(nfd));
            } else if (f) {
                kshim::fput(f);
            }
        }
        break;
    case cap::RecType::Ioctl: exec_ioctl(i); break;
    case cap::RecType::Mmap: exec_mmap(i); break;
    case cap::RecType::Munmap:
        if (auto it = maps_.find(r.addr); it != maps_.end()) {
            drm::drm_munmap(it->second);
            maps_.erase(it);
        }
        break;
    default: break;
    }
    kshim::revert_creds(old);
    if (task && !r.task.empty())
        task->name = old_name;
}

// What the process's exit does: its mappings go, then its descriptors.
void Replayer::finish_process() {
    const kshim::FilesScope scope(&table_);
    while (!groups_.empty())
        query_groups(groups_.front().df, std::nullopt);
    for (auto& [addr, vma] : maps_)
        drm::drm_munmap(vma);
    maps_.clear();
    kshim::close_files(&table_);
}

void Replayer::resolve_producers() {
    // Every call's entry and return, in the capture's sequence: at an entry, the names the call
    // uses are bound to the calls that made them and had returned; at a return, its names are made.
    const std::vector<cap::Record>& recs = c_.records;
    struct Event {
        u64 seq;
        bool exit;
        std::size_t i;
    };
    std::vector<Event> evs;
    evs.reserve(recs.size() * 2);
    for (std::size_t i = 0; i < recs.size(); i++) {
        evs.push_back({recs[i].enter_seq, false, i});
        evs.push_back({recs[i].exit_seq, true, i});
    }
    std::stable_sort(evs.begin(), evs.end(), [](const Event& a, const Event& b) { return a.seq < b.seq; });
    std::map<Name, std::size_t> live;
    std::vector<std::size_t> inflight;
    overlapped_.assign(recs.size(), false);
    for (const Event& e : evs) {
        if (e.exit) {
            inflight.erase(std::find(inflight.begin(), inflight.end(), e.i));
            continue;
        }
        for (std::size_t j : inflight)
            if (recs[j].tid != recs[e.i].tid)
                overlapped_[j] = overlapped_[e.i] = true;
        inflight.push_back(e.i);
    }
    producers_.assign(recs.size(), {});
    learned_.assign(recs.size(), {});
    for (const Event& e : evs) {
        if (e.exit && recs[e.i].type == cap::RecType::Close) {
            // The number names nothing now, unless another thread got it again meanwhile.
            const Name n = name_of(recs[e.i], cap::Ref::Fd, static_cast<u64>(recs[e.i].fd));
            auto closed = producers_[e.i].find(n);
            auto it = live.find(n);
            if (it != live.end() && closed != producers_[e.i].end() && it->second == closed->second)
                live.erase(it);
        }
        record_names(recs[e.i], e.exit, [&](const Name& n) {
            if (e.exit) {
                live[n] = e.i;
            } else {
                auto it = live.find(n);
                producers_[e.i][n] = it == live.end() ? kNoProducer : it->second;
            }
        });
    }
}

void Replayer::run(ReplayOutcome* out) {
    const double wall0 = wall_seconds();
    const std::vector<cap::Record>& recs = c_.records;
    // Records are in return order; record i waits for every record that returned before it entered.
    std::vector<u64> exits(recs.size());
    for (std::size_t i = 0; i < recs.size(); i++)
        exits[i] = recs[i].exit_seq;
    need_.resize(recs.size());
    for (std::size_t i = 0; i < recs.size(); i++)
        need_[i] =
            static_cast<std::size_t>(std::lower_bound(exits.begin(), exits.end(), recs[i].enter_seq) - exits.begin());
    done_.assign(recs.size(), false);
    resolve_producers();
    // Calls start in the order they entered. A call a signal handler made inside another call of
    // its thread (it returned first, so it comes first in the file and in the thread's list)
    // counts as entering before the outer one: a thread's calls start in the order it runs them.
    //
    // A close takes effect when it returns: a call of another thread on the same descriptor that
    // entered while the close ran still found the file live, so such a close starts after it.
    std::vector<u64> start_key(recs.size());
    for (std::size_t i = 0; i < recs.size(); i++)
        start_key[i] = recs[i].enter_seq;
    {
        std::vector<std::pair<u64, std::size_t>> enters(recs.size());
        for (std::size_t i = 0; i < recs.size(); i++)
            enters[i] = {recs[i].enter_seq, i};
        std::sort(enters.begin(), enters.end());
        for (std::size_t c = 0; c < recs.size(); c++) {
            if (recs[c].type != cap::RecType::Close)
                continue;
            const Name n = name_of(recs[c], cap::Ref::Fd, static_cast<u64>(recs[c].fd));
            auto pc = producers_[c].find(n);
            for (auto it =
                     std::upper_bound(enters.begin(), enters.end(), std::make_pair(recs[c].enter_seq, recs.size()));
                 it != enters.end() && it->first < recs[c].exit_seq; ++it) {
                const std::size_t j = it->second;
                auto pj = producers_[j].find(n);
                if (recs[j].tid != recs[c].tid && pj != producers_[j].end() && pc != producers_[c].end() &&
                    pj->second == pc->second)
                    start_key[c] = std::max(start_key[c], recs[j].enter_seq + 1);
            }
        }
    }
    std::map<u32, u64> last_exit;
    for (std::size_t i = 0; i < recs.size(); i++) {
        u64& last = last_exit[recs[i].tid];
        start_key[i] = std::max(start_key[i], last);
        last = std::max(last, recs[i].exit_seq);
    }
    std::vector<std::size_t> by_enter(recs.size());
    for (std::size_t i = 0; i < recs.size(); i++)
        by_enter[i] = i;
    std::stable_sort(by_enter.begin(), by_enter.end(),
                     [&](std::size_t a, std::size_t b) { return start_key[a] < start_key[b]; });
    rank_.resize(recs.size());
    for (std::size_t k = 0; k < recs.size(); k++)
        rank_[by_enter[k]] = k;
    started_.assign(recs.size(), false);
    std::vector<Thread> threads;
    for (std::size_t i = 0; i < recs.size(); i++) {
        auto it = std::find_if(threads.begin(), threads.end(), [&](const Thread& t) { return t.tid == recs[i].tid; });
        if (it == threads.end()) {
            threads.push_back({recs[i].tid, {}});
            it = threads.end() - 1;
        }
        it->recs.push_back(i);
    }
    out->calls = recs.size();
    out->threads = threads.size();

    kshim::RuntimeOptions ro;
    ro.seed = out->seed;
    ro.preempt_probability = o_.preempt_probability;
    if (!o_.trace_path.empty()) {
        ro.trace = true;
        ro.trace_path = o_.trace_path;
    }
    s64 t0 = 0, t_end = 0;
    {
        host::World::Options wo;
        wo.runtime = ro;
        host::World world(wo);
        try {
            if (int ret = world.status()) {
                out->error = world.failed_step() + ": " + errstr(ret);
            } else {
                dev_ = world.machine()->drm_dev();
                mock_hw::MockPlatform& plat = *world.machine()->csf();
                t0 = kshim::ktime_get();
                for (mock_hw::FaultSpec spec : o_.injects) {
                    if (spec.trigger.type == mock_hw::FaultTrigger::Type::AtTime)
                        spec.trigger.at += t0;
                    plat.gpu().faults().add(spec);
                }
                for (Thread& t : threads) {
                    Thread* tp = &t;
                    t.task = kshim::kthread_run(
                        [this, tp] {
                            const kshim::FilesScope scope(&table_);
                            for (std::size_t i : tp->recs) {
                                wait_event(wq_, abort_.load() || (frontier_.load() >= need_[i] &&
                                                                  start_frontier_.load() >= rank_[i]));
                                if (abort_.load())
                                    break;
                                // Before the next call may start: pages are restored in the
                                // order the calls entered, the order they were snapshot in.
                                restore_before_start(i);
                                started_[rank_[i]] = true;
                                std::size_t sf = start_frontier_.load();
                                while (sf < started_.size() && started_[sf])
                                    sf++;
                                start_frontier_.store(sf);
                                kshim::wake_up_all(&wq_);
                                exec(i);
                                done_[i] = true;
                                std::size_t f = frontier_.load();
                                while (f < done_.size() && done_[f])
                                    f++;
                                frontier_.store(f);
                                kshim::wake_up_all(&wq_);
                            }
                            threads_done_.fetch_add(1);
                            while (!kshim::kthread_should_stop())
                                kshim::schedule_timeout(kshim::MAX_SCHEDULE_TIMEOUT);
                            return 0;
                        },
                        ("replay-" + std::to_string(t.tid)).c_str());
                }
                const bool all =
                    world.rt().run_until([&] { return threads_done_.load() == threads.size(); }, kReplayLimitNs);
                t_end = kshim::ktime_get();
                if (!all) {
                    out->stuck = true;
                    const std::size_t at = frontier_.load();
                    out->error = "the replay did not finish within " +
                                 std::to_string(kReplayLimitNs / kshim::NSEC_PER_SEC) + " s of virtual time" +
                                 (at < recs.size() ? " (stuck at line " + std::to_string(recs[at].line) + ": " +
                                                         call_name(recs[at]) + ")"
                                                   : std::string());
                    // Unwind: the threads stop taking calls, and a signal ends the interruptible
                    // waits they are blocked in (as a killed process's threads would be).
                    abort_.store(true);
                    kshim::wake_up_all(&wq_);
                    for (Thread& t : threads)
                        kshim::signal_wake_up(t.task);
                    world.rt().run_until([&] { return threads_done_.load() == threads.size(); }, kshim::NSEC_PER_SEC);
                }
                if (threads_done_.load() == threads.size())
                    for (Thread& t : threads)
                        kshim::kthread_stop(t.task);
                finish_process();
                out->real_jobs = plat.gpu().engine().real_jobs_completed();
            }
        } catch (const kshim::SimAbort&) {
            out->kernel.push_back("the simulation found a deadlock (see the report above)");
        }
        for (const host::Problem& p : world.finish())
            out->kernel.push_back(p.text);
    }
    out->mismatches = mismatches_;
    out->races = races_;
    out->groups = groups_created_;
    out->groups_timedout = groups_timedout_;
    out->groups_faulted = groups_faulted_;
    out->groups_innocent = groups_innocent_;
    out->ioctls = ioctls_;
    out->virtual_ns = t_end - t0;
    out->wall_s = wall_seconds() - wall0;
}

void report_text(const std::string& path, const cap::Capture& c, const ReplayOutcome& o, bool faults, std::FILE* out) {
    std::fprintf(out, "capture %s (%s, pid %d), seed %" PRIu64 "\n", c.header.program.c_str(), path.c_str(),
                 c.header.pid, o.seed);
    std::fprintf(out, "%zu calls replayed (%zu ioctls) on %zu thread(s), %zu BO page(s) in the file\n", o.calls,
                 o.ioctls, o.threads, c.pages.size());
    const double vms = static_cast<double>(o.virtual_ns) / 1e6;
    std::fprintf(out, "virtual time %.3f ms, wall %.3f s\n", vms, o.wall_s);
    std::fprintf(out, "groups: %zu created, %zu timed out, %zu fatal fault, %zu innocent\n", o.groups,
                 o.groups_timedout, o.groups_faulted, o.groups_innocent);
    if (o.real_jobs)
        std::fprintf(out,
                     "gpu: %" PRIu64 " job(s) on real shader descriptors completed without running their shaders\n",
                     o.real_jobs);
    const char* word = faults ? "divergence" : "mismatch";
    std::fprintf(out, "%zu %s(es)%s\n", o.mismatches.size(), word,
                 faults && !o.mismatches.empty() ? " (expected with --inject)" : "");
    const std::size_t shown = std::min<std::size_t>(o.mismatches.size(), 20);
    for (std::size_t i = 0; i < shown; i++)
        std::fprintf(out, "  %s: %s\n", word, o.mismatches[i].c_str());
    if (shown < o.mismatches.size())
        std::fprintf(out, "  ... %zu more\n", o.mismatches.size() - shown);
    if (!o.races.empty()) {
        std::fprintf(out,
                     "%zu racy query result(s) (the query ran alongside another thread's call live; not failures)\n",
                     o.races.size());
        for (std::size_t i = 0; i < std::min<std::size_t>(o.races.size(), 5); i++)
            std::fprintf(out, "  race: %s\n", o.races[i].c_str());
    }
    if (!o.stopped.empty())
        std::fprintf(out, "stopped after the injected fault: %s (the client saw its device lost live)\n",
                     o.stopped.c_str());
    if (!o.error.empty())
        std::fprintf(out, "error: %s\n", o.error.c_str());
    for (const std::string& k : o.kernel)
        std::fprintf(out, "kernel: %s\n", k.c_str());
    std::fprintf(out, "%s\n", o.passed ? "PASS" : "FAIL");
}

void report_json(const std::string& path, const cap::Capture& c, const ReplayOutcome& o, bool faults, std::FILE* out) {
    std::fprintf(out, "{\n  \"capture\": %s,\n  \"program\": %s,\n  \"seed\": %" PRIu64 ",\n", json_str(path).c_str(),
                 json_str(c.header.program).c_str(), o.seed);
    std::fprintf(
        out,
        "  \"calls\": %zu,\n  \"ioctls\": %zu,\n  \"threads\": %zu,\n  \"pages\": %zu,\n  \"virtual_ns\": %" PRId64
        ",\n  \"wall_s\": %.6f,\n",
        o.calls, o.ioctls, o.threads, c.pages.size(), o.virtual_ns, o.wall_s);
    std::fprintf(out, "  \"groups\": {\"created\": %zu, \"timedout\": %zu, \"fatal_fault\": %zu, \"innocent\": %zu},\n",
                 o.groups, o.groups_timedout, o.groups_faulted, o.groups_innocent);
    std::fprintf(out, "  \"real_descriptor_jobs\": %" PRIu64 ",\n", o.real_jobs);
    std::fprintf(out, "  \"%s\": [", faults ? "divergences" : "mismatches");
    for (std::size_t i = 0; i < o.mismatches.size(); i++)
        std::fprintf(out, "%s\n    %s", i ? "," : "", json_str(o.mismatches[i]).c_str());
    std::fprintf(out, "%s],\n  \"races\": [", o.mismatches.empty() ? "" : "\n  ");
    for (std::size_t i = 0; i < o.races.size(); i++)
        std::fprintf(out, "%s\n    %s", i ? "," : "", json_str(o.races[i]).c_str());
    std::fprintf(out, "%s],\n  \"kernel\": [", o.races.empty() ? "" : "\n  ");
    for (std::size_t i = 0; i < o.kernel.size(); i++)
        std::fprintf(out, "%s\n    %s", i ? "," : "", json_str(o.kernel[i]).c_str());
    std::fprintf(out, "%s],\n  \"error\": %s,\n  \"stopped\": %s,\n  \"passed\": %s\n}\n",
                 o.kernel.empty() ? "" : "\n  ", o.error.empty() ? "null" : json_str(o.error).c_str(),
                 o.stopped.empty() ? "null" : json_str(o.stopped).c_str(), o.passed ? "true" : "false");
}

}  // namespace

bool is_capture_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    unsigned char b[2] = {0, 0};
    f.read(reinterpret_cast<char*>(b), 2);
    return f.gcount() == 2 && b[0] == 0x1f && b[1] == 0x8b;  // gzip; read_capture checks the rest
}

ReplayOutcome replay_file(const std::string& path, const ReplayOptions& opts, std::FILE* report_out) {
    cap::Capture c;
    std::string why;
    if (!cap::read_capture(path, &c, &why)) {
        ReplayOutcome o;
        o.seed = opts.seed.value_or(1);
        o.error = why;
        o.bad_file = true;
        return o;
    }
    return replay_capture(c, path, opts, report_out);
}

RunOutcome replay_outcome_as_run(const ReplayOutcome& o) {
    RunOutcome r;
    r.passed = o.passed;
    r.seed = o.seed;
    r.setup_error = o.error;
    for (const std::string& m : o.mismatches)
        r.failures.push_back("mismatch: " + m);
    for (const std::string& k : o.kernel)
        r.failures.push_back("kernel: " + k);
    r.virtual_ns = o.virtual_ns;
    r.wall_s = o.wall_s;
    return r;
}

ReplayOutcome replay_capture(const cap::Capture& c, const std::string& path, const ReplayOptions& opts,
                             std::FILE* report_out) {
    ReplayOutcome o;
    o.seed = opts.seed.value_or(1);
    Replayer rp(c, opts);
    rp.run(&o);
    const bool faults = !opts.injects.empty();
    if (faults && o.stuck && !o.mismatches.empty()) {
        o.stopped = o.error;
        o.error.clear();
    }
    o.passed = o.error.empty() && o.kernel.empty() && (faults || o.mismatches.empty());
    if (report_out) {
        if (opts.json)
            report_json(path, c, o, faults, report_out);
        else
            report_text(path, c, o, faults, report_out);
    }
    return o;
}

int cmd_replay(const std::string& path, ReplayOptions opts, const std::vector<std::string>& inject_specs,
               std::FILE* out, std::FILE* err) {
    const mock_hw::GpuConfig gpu;
    for (const std::string& spec : inject_specs) {
        scenario::InjectResult ir = scenario::parse_inject(spec, gpu);
        for (const scenario::Diagnostic& d : ir.diagnostics)
            std::fprintf(err, "upanthor replay: --inject '%s': %s\n", spec.c_str(), d.message.c_str());
        if (!ir.fault)
            return kExitUsage;
        opts.injects.push_back(ir.fault->spec);
    }
    const ReplayOutcome o = replay_file(path, opts, out);
    std::fflush(out);  // before the sanitizers' exit checks, which end the process without flushing
    if (o.bad_file) {
        std::fprintf(err, "upanthor replay: %s\n", o.error.c_str());
        return kExitUsage;
    }
    return o.passed ? kExitOk : kExitFailure;
}

}  // namespace upanthor
