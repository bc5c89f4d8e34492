// Mirrors include/linux/eventfd.h and fs/eventfd.c: the kernel side of eventfd(2).
//
// DOC: An eventfd_ctx is a 64-bit counter that kernel code bumps (eventfd_signal) and a reader
// drains. Kernel users hold a reference obtained from a descriptor (eventfd_ctx_fdget), so the
// context outlives the caller closing its fd, as the kernel's file reference does.
//
// There is no VFS. A descriptor resolves in this order:
//  1. the resolver hook (eventfd_set_fd_resolver), which the preload library sets to map the
//     program's real fds; eventfd_host_ctx_fdget() is the ready-made answer for a real eventfd:
//     its context writes the count to (a dup of) that fd instead of keeping it;
//  2. the in-process eventfd table (eventfd_fd_create / eventfd_fd_read / eventfd_fd_close), for
//     tests; its numbers start at EVENTFD_FD_BASE so they never collide with drm's fd table.
// Anything else is -EBADF, as a closed descriptor is.
#pragma once
#include <sys/eventfd.h>

#include "kernel_shim/err.h"
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
    WaitQueueHead wqh;
    u64 count = 0;
    unsigned int flags = 0;  // EFD_SEMAPHORE / EFD_NONBLOCK, as given to the creator
    const eventfd_ctx_ops* ops = nullptr;
    void* priv = nullptr;  // for ops
};

// First number of the in-process eventfd table.
inline constexpr int EVENTFD_FD_BASE = 1 << 24;

// ---- kernel API (include/linux/eventfd.h) ----
// A new reference to the context behind fd: ERR_PTR(-EBADF) for no such descriptor,
// ERR_PTR(-EINVAL) for a descriptor that is not an eventfd.
eventfd_ctx* eventfd_ctx_fdget(int fd);
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

// ---- the in-process eventfd table (tests) ----
// eventfd(2): a descriptor >= EVENTFD_FD_BASE, or -EINVAL (flags) / -ENOMEM / -EMFILE.
int eventfd_fd_create(unsigned int count, int flags);
// read(2) on it: 0 with *cnt; -EAGAIN if nonblock (or the fd's EFD_NONBLOCK) and the count is 0;
// -EBADF for an unknown descriptor.
int eventfd_fd_read(int fd, u64* cnt, bool nonblock);
// close(2): 0 or -EBADF.
int eventfd_fd_close(int fd);
// Open descriptors in the table (leak checks).
size_t eventfd_fd_count();

// ---- the resolver hook (preload library) ----
// Returns a new context reference for fd, ERR_PTR(errno) to fail the lookup with that errno, or
// nullptr or ERR_PTR(-EBADF) for "not one of mine" (the in-process table is tried next, then
// the lookup fails with -EBADF). Set once, before use; nullptr removes it.
using eventfd_fd_resolver_t = eventfd_ctx* (*)(int fd);
void eventfd_set_fd_resolver(eventfd_fd_resolver_t resolver);

// A context for a real descriptor of this process: dups it (close-on-exec) if it is an eventfd
// and signals by writing 8 bytes to the dup. ERR_PTR(-EBADF) for a closed descriptor,
// ERR_PTR(-EINVAL) for one that is not an eventfd, ERR_PTR(-ENOMEM/-EMFILE). Uses raw system
// calls, so a preload library's interposed libc functions are not re-entered.
eventfd_ctx* eventfd_host_ctx_fdget(int host_fd);

}  // namespace kshim
