// Mirrors fs/eventfd.c (see kernel_shim/eventfd.h for how descriptors resolve).
#include "kernel_shim/eventfd.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "kernel_shim/slab.h"
#include "kernel_shim/xarray.h"

namespace kshim {

namespace {

void eventfd_free_ctx(kref* k) {
    eventfd_ctx* ctx = container_of(k, eventfd_ctx, refcount);
    if (ctx->ops && ctx->ops->release) ctx->ops->release(ctx);
    kdelete(ctx);
}

// The in-process table: each entry holds one context reference (the "file").
XArray<eventfd_ctx>& fd_table() {
    static XArray<eventfd_ctx>* t = new XArray<eventfd_ctx>();
    return *t;
}

std::atomic<eventfd_fd_resolver_t> fd_resolver{nullptr};

eventfd_ctx* table_get(int fd) {
    if (fd < EVENTFD_FD_BASE) return nullptr;
    return fd_table().load_locked(static_cast<u32>(fd),
                                  [](eventfd_ctx* ctx) { return ctx ? eventfd_ctx_get(ctx) : nullptr; });
}

}  // namespace

void eventfd_ctx_put(eventfd_ctx* ctx) {
    if (ctx) kref_put(&ctx->refcount, eventfd_free_ctx);
}

void eventfd_signal_mask(eventfd_ctx* ctx, unsigned int) {
    if (ctx->ops) {
        ctx->ops->signal(ctx, 1);
        return;
    }
    {
        SpinGuard g(ctx->lock);
        // Saturate rather than wrap: a reader must never see the count go back to a small value.
        if (ctx->count < ULLONG_MAX) ctx->count++;
    }
    // After the unlock: readers queue themselves before testing the count, so the wake-up cannot
    // be lost, and WaitQueueHead's own lock must not nest inside ours. No preemption point here:
    // callers signal from fence callbacks with spinlocks held.
    if (ctx->wqh.has_sleepers()) ctx->wqh.wake_up_all();
}

void eventfd_signal(eventfd_ctx* ctx) { eventfd_signal_mask(ctx, 0); }

void eventfd_ctx_do_read(eventfd_ctx* ctx, u64* cnt) {
    lockdep_assert_held(&ctx->lock);
    *cnt = (ctx->flags & EFD_SEMAPHORE) ? 1 : ctx->count;
    ctx->count -= *cnt;
}

eventfd_ctx* eventfd_ctx_create(unsigned int count, int flags) {
    if (flags & ~(EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC)) return ERR_PTR<eventfd_ctx>(-EINVAL);
    eventfd_ctx* ctx = knew<eventfd_ctx>(GFP_KERNEL);
    if (!ctx) return ERR_PTR<eventfd_ctx>(-ENOMEM);
    ctx->count = count;
    ctx->flags = static_cast<unsigned>(flags);
    return ctx;
}

eventfd_ctx* eventfd_ctx_create_ops(const eventfd_ctx_ops* ops, void* priv) {
    eventfd_ctx* ctx = knew<eventfd_ctx>(GFP_KERNEL);
    if (!ctx) return ERR_PTR<eventfd_ctx>(-ENOMEM);
    ctx->ops = ops;
    ctx->priv = priv;
    return ctx;
}

int eventfd_ctx_read(eventfd_ctx* ctx, bool nonblock, u64* cnt) {
    if (ctx->ops) return -EINVAL;
    for (;;) {
        {
            SpinGuard g(ctx->lock);
            if (ctx->count) {
                eventfd_ctx_do_read(ctx, cnt);
                return 0;
            }
        }
        if (nonblock) return -EAGAIN;
        // The count is re-read under the lock above: another reader may drain it first.
        wait_event(ctx->wqh, eventfd_ctx_count(ctx) != 0);
    }
}

u64 eventfd_ctx_count(eventfd_ctx* ctx) {
    SpinGuard g(ctx->lock);
    return ctx->count;
}

// ---- descriptors ----

eventfd_ctx* eventfd_ctx_fdget(int fd) {
    if (eventfd_fd_resolver_t r = fd_resolver.load(std::memory_order_acquire)) {
        // -EBADF from the resolver means "no real descriptor by that number": try our table.
        eventfd_ctx* ctx = r(fd);
        if (ctx && !(IS_ERR(ctx) && PTR_ERR(ctx) == -EBADF)) return ctx;
    }
    if (eventfd_ctx* ctx = table_get(fd)) return ctx;
    return ERR_PTR<eventfd_ctx>(-EBADF);
}

int eventfd_fd_create(unsigned int count, int flags) {
    eventfd_ctx* ctx = eventfd_ctx_create(count, flags);
    if (IS_ERR(ctx)) return static_cast<int>(PTR_ERR(ctx));
    u32 fd;
    int ret = fd_table().alloc(&fd, ctx, XaLimit{static_cast<u32>(EVENTFD_FD_BASE), INT_MAX}, GFP_KERNEL);
    if (ret) {
        eventfd_ctx_put(ctx);
        return ret == -EBUSY ? -EMFILE : ret;
    }
    return static_cast<int>(fd);
}

int eventfd_fd_read(int fd, u64* cnt, bool nonblock) {
    eventfd_ctx* ctx = table_get(fd);
    if (!ctx) return -EBADF;
    int ret = eventfd_ctx_read(ctx, nonblock || (ctx->flags & EFD_NONBLOCK), cnt);
    eventfd_ctx_put(ctx);
    return ret;
}

int eventfd_fd_close(int fd) {
    if (fd < EVENTFD_FD_BASE) return -EBADF;
    eventfd_ctx* ctx = fd_table().erase(static_cast<u32>(fd));
    if (!ctx) return -EBADF;
    eventfd_ctx_put(ctx);
    return 0;
}

size_t eventfd_fd_count() { return fd_table().size(); }

void eventfd_set_fd_resolver(eventfd_fd_resolver_t resolver) { fd_resolver.store(resolver, std::memory_order_release); }

// ---- real descriptors ----
namespace {

long raw_syscall_result(long r) { return r < 0 ? -errno : r; }

void host_signal(eventfd_ctx* ctx, u64 n) {
    int fd = static_cast<int>(reinterpret_cast<intptr_t>(ctx->priv));
    // A full counter (EAGAIN on a non-blocking eventfd) drops the increment, as the kernel's
    // saturation does; nothing useful can be done about other errors in atomic context.
    long r;
    do {
        r = syscall(SYS_write, fd, &n, sizeof n);
    } while (r < 0 && errno == EINTR);
}

void host_release(eventfd_ctx* ctx) { syscall(SYS_close, static_cast<int>(reinterpret_cast<intptr_t>(ctx->priv))); }

const eventfd_ctx_ops host_ops = {.signal = host_signal, .release = host_release};

}  // namespace

eventfd_ctx* eventfd_host_ctx_fdget(int host_fd) {
    if (host_fd < 0) return ERR_PTR<eventfd_ctx>(-EBADF);
    if (syscall(SYS_fcntl, host_fd, F_GETFD) < 0) return ERR_PTR<eventfd_ctx>(-EBADF);
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", host_fd);
    char target[64] = {};
    long n = raw_syscall_result(syscall(SYS_readlinkat, AT_FDCWD, path, target, sizeof target - 1));
    if (n < 0) return ERR_PTR<eventfd_ctx>(n == -ENOENT ? -EBADF : n);
    if (std::strcmp(target, "anon_inode:[eventfd]") != 0) return ERR_PTR<eventfd_ctx>(-EINVAL);
    long dup = raw_syscall_result(syscall(SYS_fcntl, host_fd, F_DUPFD_CLOEXEC, 0));
    if (dup < 0) return ERR_PTR<eventfd_ctx>(dup);
    eventfd_ctx* ctx = eventfd_ctx_create_ops(&host_ops, reinterpret_cast<void*>(static_cast<intptr_t>(dup)));
    if (IS_ERR(ctx)) syscall(SYS_close, static_cast<int>(dup));
    return ctx;
}

}  // namespace kshim
