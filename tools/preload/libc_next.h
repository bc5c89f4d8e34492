// The libc functions the preload library interposes on, as the next definition in the lookup
// order (dlsym(RTLD_NEXT)): what a call that is not about the DRM device falls through to.
#pragma once
#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

namespace upanthor::preload {

struct LibcNext {
    int (*open)(const char*, int, ...);
    int (*openat)(int, const char*, int, ...);
    int (*close)(int);
    ssize_t (*read)(int, void*, size_t);
    int (*dup)(int);
    int (*dup2)(int, int);
    int (*dup3)(int, int, int);
    pid_t (*fork)();
    int (*fcntl)(int, int, ...);
    int (*ioctl)(int, unsigned long, ...);
    void* (*mmap)(void*, size_t, int, int, int, off_t);
    int (*munmap)(void*, size_t);
    int (*stat)(const char*, struct stat*);
    int (*lstat)(const char*, struct stat*);
    int (*fstat)(int, struct stat*);
    int (*fstatat)(int, const char*, struct stat*, int);
    int (*xstat)(int, const char*, struct stat*);
    int (*lxstat)(int, const char*, struct stat*);
    int (*fxstat)(int, int, struct stat*);
    int (*fxstatat)(int, int, const char*, struct stat*, int);
    int (*statx)(int, const char*, int, unsigned, struct statx*);
    int (*access)(const char*, int);
    int (*faccessat)(int, const char*, int, int);
    ssize_t (*readlink)(const char*, char*, size_t);
    ssize_t (*readlinkat)(int, const char*, char*, size_t);
    char* (*realpath)(const char*, char*);
    DIR* (*opendir)(const char*);
    FILE* (*fopen)(const char*, const char*);
    FILE* (*fopen64)(const char*, const char*);
};

// Resolved on first use (an interposer may run before the library's constructors).
const LibcNext& libc();

}  // namespace upanthor::preload
