// The interposed libc entry points (docs/preload.md lists them). Each one first asks whether the
// call is about the fake device (a node path, one of our descriptors, one of our mappings, a
// path of the fake sysfs) and otherwise falls through to libc untouched.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

#include "drm/drm_fdinfo.h"
#include "drm/drm_file.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/drm_prime.h"
#include "drm/uaccess.h"
#include "kernel_shim/dma-buf/sw_sync.h"
#include "kernel_shim/err.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/page_alloc.h"
#include "tools/preload/caller_creds.h"
#include "tools/preload/capture_record.h"
#include "tools/preload/client_mapping.h"
#include "tools/preload/device.h"
#include "tools/preload/fake_fs.h"
#include "tools/preload/files.h"
#include "tools/preload/ioctl_answers.h"
#include "tools/preload/libc_next.h"
#include "tools/preload/remote_client.h"
#include "tools/preload/signals.h"
#include "uapi/drm/drm.h"

using namespace upanthor::preload;

namespace {

int fail(int err) {
    errno = err;
    return -1;
}

// An absolute path into the fake tree, rewritten; anything else as is.
struct Path {
    char buf[PATH_MAX];
    const char* p;
    explicit Path(const char* path) : p(fake_path(path, buf, sizeof(buf))) {}
};

int open_drm_fdinfo(const char* path, int flags);

int open_path(int dirfd, const char* path, int flags, mode_t mode) {
    if (remote_mode() && (is_sw_sync_path(path) || node_minor(path) >= 0))
        return remote_open(is_sw_sync_path(path) ? -1 : node_minor(path), flags);
    if (is_sw_sync_path(path)) {
        const int fd = deferring_signals([&] {
            if (!device_get())
                return -ENODEV;
            attach_thread();
            const ActAsCaller caller;
            kshim::file* f = kshim::sw_sync_open_file(flags);
            return kshim::IS_ERR(f) ? static_cast<int>(kshim::PTR_ERR(f)) : files_install(f, flags);
        });
        capture_open(fd, -1, flags);
        return fd < 0 ? fail(-fd) : fd;
    }
    const int minor = node_minor(path);
    if (minor >= 0) {
        const int fd = deferring_signals([&] {
            drm::drm_device* dev = device_get();
            if (!dev)
                return -ENODEV;
            attach_thread();
            const ActAsCaller caller;
            kshim::file* f = drm::drm_open_file(dev, minor >= 128, flags);
            return kshim::IS_ERR(f) ? static_cast<int>(kshim::PTR_ERR(f)) : files_install(f, flags);
        });
        capture_open(fd, minor, flags);
        return fd < 0 ? fail(-fd) : fd;
    }
    if (path && path[0] == '/' && path[1] == 'p') {
        const int fd = deferring_signals([&] { return open_drm_fdinfo(path, flags); });
        if (fd >= 0)
            return fd;
    }
    Path p(path);
    return libc().openat(dirfd, p.p, flags, mode);
}

mode_t open_mode(int flags, va_list ap) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

// A stat of a DRM descriptor: the node it was opened from. False when fd is not a DRM file.
bool drm_fd_stat(int fd, struct stat* st) {
    kshim::file* f = files_get(fd);
    if (!f)
        return false;
    const int minor = file_minor(f);
    if (minor >= 0)
        node_stat(minor, st);
    kshim::fput(f);
    return minor >= 0;
}

// The client's side of a kernel mapping: the mapped pages, or the I/O page's snapshot.
void* map_vma(drm::VmArea* vma, void* addr, size_t len, int prot, int flags) {
    // A BO's pages are one physically contiguous run of the arena; an I/O page (USER_FLUSH_ID)
    // is read through the mapping's fault path now (LATEST_FLUSH at offset 0).
    void* p = vma->addr ? map_client_side(addr, len, prot, flags, kshim::page_arena_memfd(),
                                          static_cast<off_t>(kshim::virt_to_phys(vma->addr) - kshim::kPhysBase), 0)
                        : map_client_side(addr, len, prot, flags, -1, -1, drm::vma_read32(vma, 0));
    if (p == MAP_FAILED) {
        const int err = errno;
        drm::drm_munmap(vma);
        errno = err;
        return MAP_FAILED;
    }
    files_add_map(p, len, vma);
    if (vma->addr)
        capture_cpu_mapping(vma->addr, len);  // the client may write these pages from now on
    return p;
}

// The kernel half of an mmap is `kernel_mmap(&vma)` (0 or -errno); the client's half follows.
template <class KernelMmap>
void* mmap_through(KernelMmap&& kernel_mmap, void* addr, size_t len, int prot, int flags) {
    drm::VmArea* vma = nullptr;
    const int ret = kernel_mmap(&vma);
    if (ret) {
        errno = -ret;
        return MAP_FAILED;
    }
    return map_vma(vma, addr, len, prot, flags);
}

// mmap(2) of one of ours: the file's own mmap (-ENODEV without one, as the kernel's).
void* mmap_file(kshim::file* f, void* addr, size_t len, int prot, int flags, off_t off) {
    attach_thread();
    return mmap_through(
        [&](drm::VmArea** vma) { return drm::do_mmap(f, static_cast<unsigned long long>(off), len, prot, flags, vma); },
        addr, len, prot, flags);
}

// "/proc/self/<dir>/N" or "/proc/<our pid>/<dir>/N" (dir "fd" or "fdinfo"): N, else -1.
int proc_fd_number(const char* path, const char* dir = "fd") {
    if (!path || std::strncmp(path, "/proc/", 6) != 0)
        return -1;
    const char* rest = path + 6;
    if (std::strncmp(rest, "self/", 5) == 0) {
        rest += 5;
    } else {
        char* end;
        const long pid = std::strtol(rest, &end, 10);
        if (end == rest || *end != '/' || pid != getpid())
            return -1;
        rest = end + 1;
    }
    const size_t dl = std::strlen(dir);
    if (std::strncmp(rest, dir, dl) != 0 || rest[dl] != '/')
        return -1;
    rest += dl + 1;
    char* end;
    const long fd = std::strtol(rest, &end, 10);
    return end == rest || *end ? -1 : static_cast<int>(fd);
}

// /proc/self/fdinfo/N of a DRM descriptor: what the kernel prints (pos, flags, ...) and then the
// DRM core's show_fdinfo, in a fresh memfd positioned at 0. -1 (errno untouched) when N is not a
// DRM descriptor, so the caller falls through to the real file.
int open_drm_fdinfo(const char* path, int flags) {
    const int fd = proc_fd_number(path, "fdinfo");
    if (fd < 0)
        return -1;
    if (remote_mode())
        return remote_open_fdinfo(fd, flags);
    kshim::file* filp = files_get(fd);
    if (!filp)
        return -1;
    drm::drm_file* f = drm::drm_file_from(filp);
    if (!f) {
        kshim::fput(filp);
        return -1;
    }
    attach_thread();
    const int fl = libc().fcntl(fd, F_GETFL);
    char head[128];
    std::snprintf(head, sizeof(head), "pos:\t0\nflags:\t0%o\nmnt_id:\t0\nino:\t0\n", fl < 0 ? 0 : fl);
    const std::string text = std::string(head) + drm::drm_show_fdinfo(f);
    kshim::fput(filp);
    const int out = memfd_create("upanthor-fdinfo", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (out < 0)
        return -1;
    if (write(out, text.data(), text.size()) != static_cast<ssize_t>(text.size()) || lseek(out, 0, SEEK_SET) != 0) {
        libc().close(out);
        return -1;
    }
    return out;
}

ssize_t readlink_drm(const char* path, char* buf, size_t size, bool* handled) {
    *handled = false;
    const int fd = proc_fd_number(path);
    if (fd < 0)
        return 0;
    if (remote_mode()) {
        const int minor = remote_minor(fd);
        if (minor < 0)
            return 0;
        *handled = true;
        const char* node = node_path(minor);
        const size_t n = std::min(size, std::strlen(node));
        std::memcpy(buf, node, n);
        return static_cast<ssize_t>(n);
    }
    kshim::file* f = files_get(fd);
    if (!f)
        return 0;
    ssize_t n = 0;
    if (const int minor = file_minor(f); minor >= 0) {
        *handled = true;
        const char* node = node_path(minor);
        n = static_cast<ssize_t>(std::min(size, std::strlen(node)));
        std::memcpy(buf, node, static_cast<size_t>(n));
    }
    kshim::fput(f);
    return n;
}

void fill_statx(int minor, struct statx* sx) {
    struct stat st;
    node_stat(minor, &st);
    std::memset(sx, 0, sizeof(*sx));
    sx->stx_mask = STATX_BASIC_STATS;
    sx->stx_mode = static_cast<__u16>(st.st_mode);
    sx->stx_nlink = 1;
    sx->stx_ino = st.st_ino;
    sx->stx_blksize = 4096;
    sx->stx_rdev_major = major(st.st_rdev);
    sx->stx_rdev_minor = minor;
    sx->stx_dev_major = major(st.st_dev);
    sx->stx_dev_minor = ::minor(st.st_dev);
}

int stat_path(const char* path, struct stat* st, bool follow) {
    if (is_sw_sync_path(path)) {
        sw_sync_stat(st);
        return 0;
    }
    const int minor = node_minor(path);
    if (minor >= 0) {
        node_stat(minor, st);
        return 0;
    }
    Path p(path);
    return follow ? libc().stat(p.p, st) : libc().lstat(p.p, st);
}

int fstatat_impl(int dirfd, const char* path, struct stat* st, int flags) {
    if ((flags & AT_EMPTY_PATH) && path && !path[0] && drm_fd_stat(dirfd, st))
        return 0;
    const int minor = node_minor(path);
    if (minor >= 0) {
        node_stat(minor, st);
        return 0;
    }
    Path p(path);
    return libc().fstatat(dirfd, p.p, st, flags);
}

}  // namespace

// The library is built with hidden visibility; these are its only exported names.
#pragma GCC visibility push(default)
extern "C" {

// ---- open ----
int open(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return open_path(AT_FDCWD, path, flags, mode);
}
int open64(const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return open_path(AT_FDCWD, path, flags, mode);
}
int openat(int dirfd, const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return open_path(dirfd, path, flags, mode);
}
int openat64(int dirfd, const char* path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    const mode_t mode = open_mode(flags, ap);
    va_end(ap);
    return open_path(dirfd, path, flags, mode);
}
// The _FORTIFY_SOURCE variants (no mode: O_CREAT is not allowed through them).
int __open_2(const char* path, int flags) {
    return open_path(AT_FDCWD, path, flags, 0);
}
int __open64_2(const char* path, int flags) {
    return open_path(AT_FDCWD, path, flags, 0);
}
int __openat_2(int dirfd, const char* path, int flags) {
    return open_path(dirfd, path, flags, 0);
}
int __openat64_2(int dirfd, const char* path, int flags) {
    return open_path(dirfd, path, flags, 0);
}

FILE* fopen(const char* path, const char* mode) {
    if (path && path[0] == '/' && path[1] == 'p') {
        const int fd = open_drm_fdinfo(path, O_CLOEXEC);
        if (fd >= 0)
            return fdopen(fd, "r");
    }
    Path p(path);
    return libc().fopen(p.p, mode);
}
FILE* fopen64(const char* path, const char* mode) {
    if (path && path[0] == '/' && path[1] == 'p') {
        const int fd = open_drm_fdinfo(path, O_CLOEXEC);
        if (fd >= 0)
            return fdopen(fd, "r");
    }
    Path p(path);
    return libc().fopen64(p.p, mode);
}
DIR* opendir(const char* path) {
    Path p(path);
    return libc().opendir(p.p);
}

// ---- descriptors ----
int close(int fd) {
    const int arena = kshim::page_arena_memfd();
    if (fd >= 0 && (fd == arena || remote_is_arena(fd)))
        return 0;  // the BO mappings' backing: not the program's to close
    if (remote_mode())
        return deferring_signals([&] { return remote_close(fd); });
    return deferring_signals([&] {
        const CaptureClose capture(fd);  // recorded when the close is done
        files_close(fd);
        return libc().close(fd);
    });
}
pid_t fork() {
    if (remote_mode())
        return remote_fork();
    return libc().fork();
}
int dup(int fd) {
    return deferring_signals([&] {
        const int r = libc().dup(fd);
        capture_dup(fd, r < 0 ? -errno : r);
        if (r >= 0)
            files_dup(fd, r);
        return r;
    });
}
int dup2(int oldfd, int newfd) {
    if (remote_mode())
        return deferring_signals([&] { return remote_dup_onto(oldfd, newfd, 0, false); });
    return deferring_signals([&] {
        const int r = libc().dup2(oldfd, newfd);
        capture_dup(oldfd, r < 0 ? -errno : r);
        if (r >= 0)
            files_dup(oldfd, r);
        return r;
    });
}
int dup3(int oldfd, int newfd, int flags) {
    if (remote_mode())
        return deferring_signals([&] { return remote_dup_onto(oldfd, newfd, flags, true); });
    return deferring_signals([&] {
        const int r = libc().dup3(oldfd, newfd, flags);
        capture_dup(oldfd, r < 0 ? -errno : r);
        if (r >= 0)
            files_dup(oldfd, r);
        return r;
    });
}
static int fcntl_impl(int fd, int cmd, va_list ap) {
    void* arg = va_arg(ap, void*);  // every fcntl argument fits a pointer-sized slot
    if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)
        return libc().fcntl(fd, cmd, arg);
    return deferring_signals([&] {
        const int r = libc().fcntl(fd, cmd, arg);
        capture_dup(fd, r < 0 ? -errno : r);
        if (r >= 0)
            files_dup(fd, r);
        return r;
    });
}
int fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    const int r = fcntl_impl(fd, cmd, ap);
    va_end(ap);
    return r;
}
int fcntl64(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    const int r = fcntl_impl(fd, cmd, ap);
    va_end(ap);
    return r;
}

int ioctl(int fd, unsigned long request, ...) {
    va_list ap;
    va_start(ap, request);
    void* arg = va_arg(ap, void*);
    va_end(ap);
    // The VFS answers these for every descriptor before the file's own ioctl (do_vfs_ioctl):
    // FIONCLEX, FIOCLEX, FIONBIO, FIOASYNC; the real descriptor does the same.
    if (request == 0x5450 || request == 0x5451 || request == 0x5421 || request == 0x5452)
        return libc().ioctl(fd, request, arg);
    if (remote_mode())
        return remote_ioctl(fd, request, arg);
    const unsigned cmd = static_cast<unsigned>(request);
    CaptureIoctl capture(fd, cmd, arg);  // records the call when UPANTHOR_CAPTURE is set
    // The descriptor is looked up inside the call, as each (re)started syscall does.
    bool ours = true;
    const int ret = driver_call([&]() -> int {
        kshim::file* f = files_get(fd);
        if (!f) {
            ours = false;
            return 0;
        }
        attach_thread();
        const ActAsCaller caller;
        int r = -ENOIOCTLCMD;
        if (drm::drm_file* df = drm::drm_file_from(f))
            r = drm_file_ioctl(df, cmd, arg, monotonic_offset_ns());
        if (r == -ENOIOCTLCMD)
            r = static_cast<int>(kshim::vfs_ioctl(f, cmd, reinterpret_cast<unsigned long>(arg)));
        kshim::fput(f);
        return r;
    });
    if (!ours)
        return libc().ioctl(fd, request, arg);
    capture.done(ret);
    return ret < 0 ? fail(-ret) : ret;
}

// read(2) of one of ours: the file's read (-EINVAL without one, as the kernel's).
ssize_t read(int fd, void* buf, size_t count) {
    if (remote_mode())
        return remote_read(fd, buf, count);
    bool ours = true;
    const ssize_t ret = driver_call([&]() -> int {
        kshim::file* f = files_get(fd);
        if (!f) {
            ours = false;
            return 0;
        }
        attach_thread();
        const long r = kshim::vfs_read(f, reinterpret_cast<kshim::u64>(buf), count);
        kshim::fput(f);
        return static_cast<int>(r);
    });
    if (!ours)
        return libc().read(fd, buf, count);
    if (ret < 0) {
        errno = static_cast<int>(-ret);
        return -1;
    }
    return ret;
}

// ---- mappings ----
void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
    if (fd < 0)
        return libc().mmap(addr, len, prot, flags, fd, off);
    if (remote_mode())
        return remote_mmap(addr, len, prot, flags, fd, off);
    return deferring_signals([&] {
        kshim::file* f = files_get(fd);
        if (!f)
            return libc().mmap(addr, len, prot, flags, fd, off);
        void* p = mmap_file(f, addr, len, prot, flags, off);
        capture_mmap(fd, off, len, prot, flags, p, errno);
        kshim::fput(f);
        return p;
    });
}
void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off64_t off) {
    return mmap(addr, len, prot, flags, fd, static_cast<off_t>(off));
}
int munmap(void* addr, size_t len) {
    if (remote_mode())
        return remote_munmap(addr, len);
    return deferring_signals([&] {
        size_t mapped = 0;
        drm::VmArea* vma = files_take_map(addr, &mapped);
        const int r = libc().munmap(addr, len);
        if (vma) {
            attach_thread();
            drm::drm_munmap(vma);
            capture_munmap(addr, len);
        }
        return r;
    });
}

// ---- stat ----
int stat(const char* path, struct stat* st) {
    return stat_path(path, st, true);
}
int stat64(const char* path, struct stat64* st) {
    return stat_path(path, reinterpret_cast<struct stat*>(st), true);
}
int lstat(const char* path, struct stat* st) {
    return stat_path(path, st, false);
}
int lstat64(const char* path, struct stat64* st) {
    return stat_path(path, reinterpret_cast<struct stat*>(st), false);
}
int fstat(int fd, struct stat* st) {
    if (remote_mode())
        return remote_fstat(fd, st);
    return deferring_signals([&] { return drm_fd_stat(fd, st); }) ? 0 : libc().fstat(fd, st);
}
int fstat64(int fd, struct stat64* st) {
    return fstat(fd, reinterpret_cast<struct stat*>(st));
}
int fstatat(int dirfd, const char* path, struct stat* st, int flags) {
    return fstatat_impl(dirfd, path, st, flags);
}
int fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
    return fstatat_impl(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}
// glibc < 2.33 binaries call the versioned forms.
int __xstat(int ver, const char* path, struct stat* st) {
    const int minor = node_minor(path);
    if (minor >= 0) {
        node_stat(minor, st);
        return 0;
    }
    Path p(path);
    return libc().xstat ? libc().xstat(ver, p.p, st) : libc().stat(p.p, st);
}
int __xstat64(int ver, const char* path, struct stat64* st) {
    return __xstat(ver, path, reinterpret_cast<struct stat*>(st));
}
int __lxstat(int ver, const char* path, struct stat* st) {
    const int minor = node_minor(path);
    if (minor >= 0) {
        node_stat(minor, st);
        return 0;
    }
    Path p(path);
    return libc().lxstat ? libc().lxstat(ver, p.p, st) : libc().lstat(p.p, st);
}
int __lxstat64(int ver, const char* path, struct stat64* st) {
    return __lxstat(ver, path, reinterpret_cast<struct stat*>(st));
}
int __fxstat(int ver, int fd, struct stat* st) {
    if (drm_fd_stat(fd, st))
        return 0;
    return libc().fxstat ? libc().fxstat(ver, fd, st) : libc().fstat(fd, st);
}
int __fxstat64(int ver, int fd, struct stat64* st) {
    return __fxstat(ver, fd, reinterpret_cast<struct stat*>(st));
}
int __fxstatat(int ver, int dirfd, const char* path, struct stat* st, int flags) {
    (void)ver;
    return fstatat_impl(dirfd, path, st, flags);
}
int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* st, int flags) {
    (void)ver;
    return fstatat_impl(dirfd, path, reinterpret_cast<struct stat*>(st), flags);
}
// glibc declares statx's path nonnull, yet with AT_EMPTY_PATH a NULL path means dirfd (Linux 6.11)
// as "" does: test it outside that declaration, where the compiler may not assume it away.
[[gnu::noinline]] static bool path_is_empty(const char* path) {
    return !path || !path[0];
}

int statx(int dirfd, const char* path, int flags, unsigned int mask, struct statx* sx) {
    if ((flags & AT_EMPTY_PATH) && path_is_empty(path)) {
        if (kshim::file* f = files_get(dirfd)) {
            const int minor = file_minor(f);
            if (minor >= 0)
                fill_statx(minor, sx);
            kshim::fput(f);
            if (minor >= 0)
                return 0;
        }
    }
    const int minor = node_minor(path);
    if (minor >= 0) {
        fill_statx(minor, sx);
        return 0;
    }
    if (!libc().statx)
        return fail(ENOSYS);
    Path p(path);
    return libc().statx(dirfd, p.p, flags, mask, sx);
}

int access(const char* path, int mode) {
    if (node_minor(path) >= 0 || is_sw_sync_path(path))
        return 0;
    Path p(path);
    return libc().access(p.p, mode);
}
int faccessat(int dirfd, const char* path, int mode, int flags) {
    if (node_minor(path) >= 0 || is_sw_sync_path(path))
        return 0;
    Path p(path);
    return libc().faccessat(dirfd, p.p, mode, flags);
}

// ---- links ----
ssize_t readlink(const char* path, char* buf, size_t size) {
    bool handled;
    const ssize_t n = readlink_drm(path, buf, size, &handled);
    if (handled)
        return n;
    Path p(path);
    return libc().readlink(p.p, buf, size);
}
ssize_t readlinkat(int dirfd, const char* path, char* buf, size_t size) {
    bool handled;
    const ssize_t n = readlink_drm(path, buf, size, &handled);
    if (handled)
        return n;
    Path p(path);
    return libc().readlinkat(dirfd, p.p, buf, size);
}
char* realpath(const char* path, char* resolved) {
    if (node_minor(path) >= 0) {
        if (!resolved)
            return strdup(path);
        std::strcpy(resolved, path);
        return resolved;
    }
    Path p(path);
    if (p.p == path)
        return libc().realpath(path, resolved);
    // Resolved inside the fake tree, then shown without the tree's folder.
    char* r = libc().realpath(p.p, resolved);
    if (!r)
        return r;
    const size_t root = std::strlen(p.buf) - std::strlen(path);
    std::memmove(r, r + root, std::strlen(r + root) + 1);
    return r;
}

// Static destructors are registered here. One registered after the driver booted belongs to an
// object kernel code created lazily (a registry on first use); exit runs registrations last
// first, so the driver's removal is registered again behind it and runs before it is destroyed.
// Sanitizer runtimes call this from their own initialisation, before they can take instrumented
// code: nothing here is instrumented, and it calls nothing that is (no static-local guard).
__attribute__((no_sanitize("address", "thread", "undefined"))) int __cxa_atexit(void (*func)(void*), void* arg,
                                                                                void* dso) {
    using cxa_atexit_t = int (*)(void (*)(void*), void*, void*);
    static cxa_atexit_t next_fn;  // zero-initialised, no guard
    cxa_atexit_t next = __atomic_load_n(&next_fn, __ATOMIC_ACQUIRE);
    if (!next) {
        next = reinterpret_cast<cxa_atexit_t>(dlsym(RTLD_NEXT, "__cxa_atexit"));
        __atomic_store_n(&next_fn, next, __ATOMIC_RELEASE);
    }
    const int ret = next(func, arg, dso);
    if (ret == 0 && func != device_exit_handler && __atomic_load_n(&g_device_up, __ATOMIC_ACQUIRE))
        next(device_exit_handler, nullptr, nullptr);
    return ret;
}

}  // extern "C"
#pragma GCC visibility pop
