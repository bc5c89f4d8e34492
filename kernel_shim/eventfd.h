// Mirrors include/linux/eventfd.h and fs/eventfd.c: the kernel side of eventfd(2).
//
// DOC: An eventfd_ctx is a 64-bit counter that kernel code bumps (eventfd_signal) and a reader
// drains. Kernel users hold a reference obtained from a descriptor (eventfd_ctx_fdget), so the
// context outlives the caller closing its fd, as the kernel's file reference does.
//
// An eventfd descriptor is a file ("[eventfd]", eventfd_fops: read, poll, release) whose
// private_data is the context; eventfd_ctx_fdget finds it on the current descriptor table
// (kernel_shim/fs/fdtable.h): -EBADF for a closed descriptor, -EINVAL for a file of another kind.
// A context may instead be backed by a real eventfd of the process (eventfd_host_ctx_fdget: its
// signal writes that descriptor), which is how the preload library hands the program's own
// eventfds to kernel code.
#pragma once
#include <sys/eventfd.h>

#include "kernel_shim/err.h"
#include "kernel_shim/fs/file.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/types.h"
#include "kernel_shim/wait.h"

namespace kshim {

struct eventfd_ctx;

// A context whose count lives outside the shim (a real eventfd): signal replaces the counter
// update, release runs when the last reference goes.
struct eventfd_ctx_ops {
    void (*signal)(eventfd_ctx* ctx, u64 n);
    void (*release)(eventfd_ctx* ctx);
};

struct eventfd_ctx {
    kref refcount;
    // The kernel's wqh.lock: protects count; readers sleep on wqh.
    SpinLock lock{"eventfd_ctx.wqh.lock"};
    wait_queue_head wqh;
    u64 count = 0;
    unsigned int flags = 0;  // EFD_SEMAPHORE / EFD_NONBLOCK, as given to the creator
    const eventfd_ctx_ops* ops = nullptr;
    void* priv = nullptr;  // for ops
};

// ---- kernel API (include/linux/eventfd.h) ----
// A new reference to the context behind fd: ERR_PTR(-EBADF) for no such descriptor,
// ERR_PTR(-EINVAL) for a descriptor that is not an eventfd.
eventfd_ctx* eventfd_ctx_fdget(int fd);
// The same for a file: ERR_PTR(-EINVAL) unless it is an eventfd.
eventfd_ctx* eventfd_ctx_fileget(file* f);
inline eventfd_ctx* eventfd_ctx_get(eventfd_ctx* ctx) {
    kref_get(&ctx->refcount);
    return ctx;
}
void eventfd_ctx_put(eventfd_ctx* ctx);
// Adds 1 to the count (saturating at ULLONG_MAX, as the kernel) and wakes readers.
// The current upstream signature; callable in atomic context (fence callbacks, under spinlocks).
void eventfd_signal(eventfd_ctx* ctx);
void eventfd_signal_mask(eventfd_ctx* ctx, unsigned int mask);
// eventfd_ctx_do_read: takes what a read(2) returns (1 in semaphore mode, else all); lock held.
void eventfd_ctx_do_read(eventfd_ctx* ctx, u64* cnt);

// ---- contexts without a descriptor ----
// A new context (one reference) with `count` and EFD_SEMAPHORE/EFD_NONBLOCK/EFD_CLOEXEC flags:
// ERR_PTR(-EINVAL) for other flags, ERR_PTR(-ENOMEM).
eventfd_ctx* eventfd_ctx_create(unsigned int count, int flags);
// A context backed by ops (one reference), or ERR_PTR(-ENOMEM).
eventfd_ctx* eventfd_ctx_create_ops(const eventfd_ctx_ops* ops, void* priv);
// read(2) of the context: 0 with *cnt, or -EAGAIN when the count is 0 and nonblock; otherwise
// sleeps until it is not 0. Contexts with ops have no count here: -EINVAL.
int eventfd_ctx_read(eventfd_ctx* ctx, bool nonblock, u64* cnt);
// The count without consuming it (for tests and fdinfo).
u64 eventfd_ctx_count(eventfd_ctx* ctx);

// ---- descriptors of the current table (eventfd(2), read(2), close(2)) ----
// eventfd(2): a descriptor, or -EINVAL (flags) / -ENOMEM / -EMFILE.
int eventfd_fd_create(unsigned int count, int flags);
// read(2) on it: 0 with *cnt; -EAGAIN if nonblock (or the fd's EFD_NONBLOCK) and the count is 0;
// -EBADF for a closed descriptor, -EINVAL for one that is not an eventfd.
int eventfd_fd_read(int fd, u64* cnt, bool nonblock);
// close(2): 0 or -EBADF.
int eventfd_fd_close(int fd);
// Live eventfd files (leak checks).
size_t eventfd_fd_count();

// ---- real descriptors (preload library) ----
// A context for a real descriptor of this process: dups it (close-on-exec) if it is an eventfd
// and signals by writing 8 bytes to the dup. ERR_PTR(-EBADF) for a closed descriptor,
// ERR_PTR(-EINVAL) for one that is not an eventfd, ERR_PTR(-ENOMEM/-EMFILE). Uses raw system
// calls, so a preload library's interposed libc functions are not re-entered.
eventfd_ctx* eventfd_host_ctx_fdget(int host_fd);
// An eventfd file around eventfd_host_ctx_fdget(host_fd) (one reference), or its ERR_PTR.
file* eventfd_host_file(int host_fd);

}  // namespace kshim
