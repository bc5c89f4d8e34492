// Mirrors fs/eventfd.c (see kernel_shim/eventfd.h).
#include "kernel_shim/eventfd.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/uaccess.h"

namespace kshim {

namespace {

void eventfd_free_ctx(kref* k) {
    eventfd_ctx* ctx = container_of(k, eventfd_ctx, refcount);
    if (ctx->ops && ctx->ops->release)
        ctx->ops->release(ctx);
    kdelete(ctx);
}

std::atomic<size_t> g_eventfd_files{0};

int eventfd_release(file* filp) {
    eventfd_ctx_put(static_cast<eventfd_ctx*>(filp->private_data));
    g_eventfd_files.fetch_sub(1, std::memory_order_relaxed);
    return 0;
}

long eventfd_read(file* filp, u64 buf, size_t count, kshim::loff_t*) {
    auto* ctx = static_cast<eventfd_ctx*>(filp->private_data);
    if (count < sizeof(u64))
        return -EINVAL;
    u64 cnt;
    const int ret = eventfd_ctx_read(ctx, (filp->f_flags & O_NONBLOCK) != 0, &cnt);
    if (ret)
        return ret;
    if (copy_to_user(buf, &cnt, sizeof cnt))
        return -EFAULT;
    return sizeof cnt;
}

__poll_t eventfd_poll(file* filp, poll_table* wait) {
    auto* ctx = static_cast<eventfd_ctx*>(filp->private_data);
    poll_wait(filp, &ctx->wqh, wait);
    if (ctx->ops)
        return 0;  // a host eventfd: its own descriptor answers poll
    const u64 count = eventfd_ctx_count(ctx);
    __poll_t events = 0;
    if (count > 0)
        events |= EPOLLIN;
    if (count != ULLONG_MAX)
        events |= EPOLLOUT;
    return events;
}

const file_operations eventfd_fops = {
    .release = eventfd_release,
    .poll = eventfd_poll,
    .read = eventfd_read,
};

file* eventfd_file_of(eventfd_ctx* ctx, int flags) {
    file* f = anon_inode_getfile("[eventfd]", &eventfd_fops, ctx, O_RDWR | (flags & O_NONBLOCK));
    if (!IS_ERR(f))
        g_eventfd_files.fetch_add(1, std::memory_order_relaxed);
    return f;
}

}  // namespace

void eventfd_ctx_put(eventfd_ctx* ctx) {
    if (ctx)
        kref_put(&ctx->refcount, eventfd_free_ctx);
}

void eventfd_signal_mask(eventfd_ctx* ctx, unsigned int) {
    if (ctx->ops) {
        ctx->ops->signal(ctx, 1);
        return;
    }
    {
        SpinGuard g(ctx->lock);
        // Saturate rather than wrap: a reader must never see the count go back to a small value.
        if (ctx->count < ULLONG_MAX)
            ctx->count++;
    }
    // After the unlock: readers queue themselves before testing the count, so the wake-up cannot
    // be lost, and wait_queue_head's own lock must not nest inside ours. No preemption point here:
    // callers signal from fence callbacks with spinlocks held.
    if (ctx->wqh.has_sleepers())
        ctx->wqh.wake_up_all();
}

void eventfd_signal(eventfd_ctx* ctx) {
    eventfd_signal_mask(ctx, 0);
}

void eventfd_ctx_do_read(eventfd_ctx* ctx, u64* cnt) {
    lockdep_assert_held(&ctx->lock);
    *cnt = (ctx->flags & EFD_SEMAPHORE) ? 1 : ctx->count;
    ctx->count -= *cnt;
}

eventfd_ctx* eventfd_ctx_create(unsigned int count, int flags) {
    if (flags & ~(EFD_SEMAPHORE | EFD_NONBLOCK | EFD_CLOEXEC))
        return ERR_PTR<eventfd_ctx>(-EINVAL);
    eventfd_ctx* ctx = knew<eventfd_ctx>(GFP_KERNEL);
    if (!ctx)
        return ERR_PTR<eventfd_ctx>(-ENOMEM);
    ctx->count = count;
    ctx->flags = static_cast<unsigned>(flags);
    return ctx;
}

eventfd_ctx* eventfd_ctx_create_ops(const eventfd_ctx_ops* ops, void* priv) {
    eventfd_ctx* ctx = knew<eventfd_ctx>(GFP_KERNEL);
    if (!ctx)
        return ERR_PTR<eventfd_ctx>(-ENOMEM);
    ctx->ops = ops;
    ctx->priv = priv;
    return ctx;
}

int eventfd_ctx_read(eventfd_ctx* ctx, bool nonblock, u64* cnt) {
    if (ctx->ops)
        return -EINVAL;
    for (;;) {
        {
            SpinGuard g(ctx->lock);
            if (ctx->count) {
                eventfd_ctx_do_read(ctx, cnt);
                return 0;
            }
        }
        if (nonblock)
            return -EAGAIN;
        // The count is re-read under the lock above: another reader may drain it first.
        wait_event(ctx->wqh, eventfd_ctx_count(ctx) != 0);
    }
}

u64 eventfd_ctx_count(eventfd_ctx* ctx) {
    SpinGuard g(ctx->lock);
    return ctx->count;
}

// ---- descriptors ----

eventfd_ctx* eventfd_ctx_fileget(file* f) {
    if (f->f_op != &eventfd_fops)
        return ERR_PTR<eventfd_ctx>(-EINVAL);
    return eventfd_ctx_get(static_cast<eventfd_ctx*>(f->private_data));
}

eventfd_ctx* eventfd_ctx_fdget(int fd) {
    file* f = fget(fd);
    if (!f)
        return ERR_PTR<eventfd_ctx>(-EBADF);
    eventfd_ctx* ctx = eventfd_ctx_fileget(f);
    fput(f);
    return ctx;
}

int eventfd_fd_create(unsigned int count, int flags) {
    eventfd_ctx* ctx = eventfd_ctx_create(count, flags);
    if (IS_ERR(ctx))
        return static_cast<int>(PTR_ERR(ctx));
    const int fd = get_unused_fd_flags(static_cast<unsigned int>(flags & EFD_CLOEXEC));
    if (fd < 0) {
        eventfd_ctx_put(ctx);
        return fd;
    }
    file* f = eventfd_file_of(ctx, flags);
    if (IS_ERR(f)) {
        put_unused_fd(fd);
        eventfd_ctx_put(ctx);
        return static_cast<int>(PTR_ERR(f));
    }
    fd_install(fd, f);
    return fd;
}

int eventfd_fd_read(int fd, u64* cnt, bool nonblock) {
    file* f = fget(fd);
    if (!f)
        return -EBADF;
    eventfd_ctx* ctx = eventfd_ctx_fileget(f);
    int ret;
    if (IS_ERR(ctx)) {
        ret = -EINVAL;
    } else {
        ret = eventfd_ctx_read(ctx, nonblock || (f->f_flags & O_NONBLOCK), cnt);
        eventfd_ctx_put(ctx);
    }
    fput(f);
    return ret;
}

int eventfd_fd_close(int fd) {
    return close_fd(fd);
}

size_t eventfd_fd_count() {
    return g_eventfd_files.load(std::memory_order_relaxed);
}

// ---- real descriptors ----
namespace {

long raw_syscall_result(long r) {
    return r < 0 ? -errno : r;
}

void host_signal(eventfd_ctx* ctx, u64 n) {
    int fd = static_cast<int>(reinterpret_cast<intptr_t>(ctx->priv));
    // A full counter (EAGAIN on a non-blocking eventfd) drops the increment, as the kernel's
    // saturation does; nothing useful can be done about other errors in atomic context.
    long r;
    do {
        r = syscall(SYS_write, fd, &n, sizeof n);
    } while (r < 0 && errno == EINTR);
}

void host_release(eventfd_ctx* ctx) {
    syscall(SYS_close, static_cast<int>(reinterpret_cast<intptr_t>(ctx->priv)));
}

const eventfd_ctx_ops host_ops = {.signal = host_signal, .release = host_release};

}  // namespace

eventfd_ctx* eventfd_host_ctx_fdget(int host_fd) {
    if (host_fd < 0)
        return ERR_PTR<eventfd_ctx>(-EBADF);
    if (syscall(SYS_fcntl, host_fd, F_GETFD) < 0)
        return ERR_PTR<eventfd_ctx>(-EBADF);
    char path[64];
    std::snprintf(path, sizeof path, "/proc/self/fd/%d", host_fd);
    char target[64] = {};
    long n = raw_syscall_result(syscall(SYS_readlinkat, AT_FDCWD, path, target, sizeof target - 1));
    if (n < 0)
        return ERR_PTR<eventfd_ctx>(n == -ENOENT ? -EBADF : n);
    if (std::strcmp(target, "anon_inode:[eventfd]") != 0)
        return ERR_PTR<eventfd_ctx>(-EINVAL);
    long dup = raw_syscall_result(syscall(SYS_fcntl, host_fd, F_DUPFD_CLOEXEC, 0));
    if (dup < 0)
        return ERR_PTR<eventfd_ctx>(dup);
    eventfd_ctx* ctx = eventfd_ctx_create_ops(&host_ops, reinterpret_cast<void*>(static_cast<intptr_t>(dup)));
    if (IS_ERR(ctx))
        syscall(SYS_close, static_cast<int>(dup));
    return ctx;
}

file* eventfd_host_file(int host_fd) {
    eventfd_ctx* ctx = eventfd_host_ctx_fdget(host_fd);
    if (IS_ERR(ctx))
        return reinterpret_cast<file*>(ctx);
    file* f = eventfd_file_of(ctx, 0);
    if (IS_ERR(f))
        eventfd_ctx_put(ctx);
    return f;
}

}  // namespace kshim
