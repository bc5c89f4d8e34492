// dlsym(RTLD_NEXT) for every interposed libc function (libc_next.h).
#include "tools/preload/libc_next.h"

#include <dlfcn.h>

#include <unistd.h>
#include <cstdlib>
#include <cstring>

namespace upanthor::preload {
namespace {

template <class F>
void resolve(F& f, const char* name, bool required = true) {
    f = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
    if (!f && required) {
        static const char msg[] = "libupanthor_preload: a libc function is missing: ";
        (void)!write(2, msg, sizeof(msg) - 1);
        (void)!write(2, name, std::strlen(name));
        (void)!write(2, "\n", 1);
        std::abort();
    }
}

LibcNext load() {
    LibcNext l{};
    resolve(l.open, "open");
    resolve(l.openat, "openat");
    resolve(l.close, "close");
    resolve(l.read, "read");
    resolve(l.dup, "dup");
    resolve(l.dup2, "dup2");
    resolve(l.dup3, "dup3");
    resolve(l.fork, "fork");
    resolve(l.fcntl, "fcntl");
    resolve(l.ioctl, "ioctl");
    resolve(l.mmap, "mmap");
    resolve(l.munmap, "munmap");
    resolve(l.stat, "stat");
    resolve(l.lstat, "lstat");
    resolve(l.fstat, "fstat");
    resolve(l.fstatat, "fstatat");
    resolve(l.xstat, "__xstat", false);  // compat symbols of glibc < 2.33 binaries
    resolve(l.lxstat, "__lxstat", false);
    resolve(l.fxstat, "__fxstat", false);
    resolve(l.fxstatat, "__fxstatat", false);
    resolve(l.statx, "statx", false);
    resolve(l.access, "access");
    resolve(l.faccessat, "faccessat");
    resolve(l.readlink, "readlink");
    resolve(l.readlinkat, "readlinkat");
    resolve(l.realpath, "realpath");
    resolve(l.opendir, "opendir");
    resolve(l.fopen, "fopen");
    resolve(l.fopen64, "fopen64");
    return l;
}

}  // namespace

const LibcNext& libc() {
    static const LibcNext l = load();  // thread-safe static init; dlsym does not call back into us
    return l;
}

}  // namespace upanthor::preload
