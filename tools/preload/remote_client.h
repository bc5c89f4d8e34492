// The preload library as a thin client of `upanthor serve` (server_main.h): with
// UPANTHOR_SERVER=PATH in the environment the process boots no driver; opens of the nodes and of
// /dev/sw_sync, and ioctl, read, mmap, munmap and fstat of the descriptors the server handed out,
// become requests to the server (remote_proto.h). Everything else (close, dup, fork, poll,
// passing a descriptor over a socket) is the host kernel's own: the descriptors are sockets.
//
// Each entry point has libc's contract (a result, or -1 / MAP_FAILED with errno), and passes a
// descriptor that is not the server's to libc. A server that is gone gives ENODEV.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>

namespace upanthor::preload {

// UPANTHOR_SERVER is set (read once).
bool remote_mode();

// open(2) of a node (minor 0 or 128) or of sw_sync (minor -1).
int remote_open(int minor, int flags);
int remote_ioctl(int fd, unsigned long request, void* arg);
ssize_t remote_read(int fd, void* buf, size_t count);
void* remote_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off);
int remote_munmap(void* addr, size_t len);
// fstat(2): a DRM descriptor of the server is its node (a character device).
int remote_fstat(int fd, struct stat* st);
// The node minor of one of the server's DRM descriptors, else -1.
int remote_minor(int fd);
// /proc/self/fdinfo/N of one of the server's DRM descriptors: a memfd with the kernel's text, or
// -1 (errno untouched) when N is not one.
int remote_open_fdinfo(int fd, int flags);
// The server's GPU model: an index into host::gpu_models(), or -errno (no server).
int remote_model();
// close(2): a descriptor of the server is closed, then the server is asked to finish dropping
// the file if that was its last descriptor (Op::Release), so the release is done on return.
int remote_close(int fd);
// dup2/dup3 onto `newfd`: the same barrier for the descriptor the duplication closes.
int remote_dup_onto(int oldfd, int newfd, int flags, bool is_dup3);
// fork(2): the child's copies of the process's BO mappings hold references of their own, as
// the kernel's dup_mmap gives them (vm_ops->open): the server copies the mappings before the
// fork and the child claims the copies before fork returns in it.
pid_t remote_fork();
// From the signal trampoline (async-signal-safe): a signal reached the calling thread while a
// driver call is deferring handlers; if it waits for a request, the server interrupts it.
void remote_interrupt();
// The arena memfd the BO mappings come from: not the program's to close.
bool remote_is_arena(int fd);

}  // namespace upanthor::preload
