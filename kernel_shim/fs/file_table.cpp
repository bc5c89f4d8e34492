// Mirrors fs/file_table.c (alloc_file, fput, __fput, delayed_fput) and the dispatch of fs/ioctl.c,
// fs/read_write.c and fs/select.c's vfs_poll. See kernel_shim/fs/file.h for the reference rules.
#include <fcntl.h>

#include <cerrno>

#include "kernel_shim/err.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/file.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/task.h"

namespace kshim {

namespace {

std::atomic<long> g_files_live{0};

fmode_t flags_to_mode(unsigned int flags) {
    switch (flags & O_ACCMODE) {
    case O_RDONLY: return FMODE_READ;
    case O_WRONLY: return FMODE_WRITE;
    default: return FMODE_READ | FMODE_WRITE;
    }
}

void __fput(file* f) {
    if (f->f_op && f->f_op->release)
        f->f_op->release(f);
    kdelete(f);
    g_files_live.fetch_sub(1, std::memory_order_relaxed);
}

void delayed_fput(work_struct* w) {
    __fput(container_of(w, file, f_delayed_fput));
}

}  // namespace

file* alloc_file(const file_operations* fops, unsigned int flags, void* priv, const char* name) {
    file* f = knew<file>(GFP_KERNEL);
    if (!f)
        return nullptr;
    f->f_op = fops;
    f->private_data = priv;
    f->f_flags = flags & ~static_cast<unsigned int>(O_CLOEXEC);
    f->f_mode = flags_to_mode(flags);
    f->f_name = name ? name : "";
    INIT_WORK(&f->f_delayed_fput, delayed_fput);
    g_files_live.fetch_add(1, std::memory_order_relaxed);
    return f;
}

file* open_chrdev_file(const file_operations* fops, unsigned int flags, const char* name) {
    file* f = alloc_file(fops, flags, nullptr, name);
    if (!f)
        return ERR_PTR<file>(-ENOMEM);
    if (fops->open) {
        if (int ret = fops->open(f)) {
            // A failed open never reaches release (do_dentry_open frees the file as is).
            kdelete(f);
            g_files_live.fetch_sub(1, std::memory_order_relaxed);
            return ERR_PTR<file>(ret);
        }
    }
    return f;
}

bool get_file_unless_zero(file* f) {
    long c = f->f_count.load(std::memory_order_relaxed);
    while (c && !f->f_count.compare_exchange_weak(c, c + 1, std::memory_order_acquire)) {
    }
    return c != 0;
}

void fput(file* f) {
    if (!f)
        return;
    const long old = f->f_count.fetch_sub(1, std::memory_order_acq_rel);
    if (WARN_ON(old <= 0))
        return;
    if (old != 1)
        return;
    // The release may sleep (a DRM file's postclose waits for its jobs): from atomic context it
    // runs on a worker, as the kernel's delayed_fput.
    if (in_atomic())
        schedule_work(&f->f_delayed_fput);
    else
        __fput(f);
}

long files_live() {
    return g_files_live.load(std::memory_order_relaxed);
}

long vfs_ioctl(file* f, unsigned int cmd, unsigned long arg) {
    if (!f->f_op || !f->f_op->unlocked_ioctl)
        return -ENOTTY;
    return f->f_op->unlocked_ioctl(f, cmd, arg);
}

long vfs_read(file* f, u64 buf, size_t count) {
    if (!(f->f_mode & FMODE_READ))
        return -EBADF;
    if (!f->f_op || !f->f_op->read)
        return -EINVAL;
    return f->f_op->read(f, buf, count, &f->f_pos);
}

long vfs_write(file* f, u64 buf, size_t count) {
    if (!(f->f_mode & FMODE_WRITE))
        return -EBADF;
    if (!f->f_op || !f->f_op->write)
        return -EINVAL;
    return f->f_op->write(f, buf, count, &f->f_pos);
}

__poll_t vfs_poll(file* f, poll_table* pt) {
    if (!f->f_op || !f->f_op->poll)
        return DEFAULT_POLLMASK;
    return f->f_op->poll(f, pt);
}

// ---- fs/anon_inodes.c ----

file* anon_inode_getfile(const char* name, const file_operations* fops, void* priv, int flags) {
    file* f = alloc_file(fops, static_cast<unsigned int>(flags) & (O_ACCMODE | O_NONBLOCK), priv, name);
    return f ? f : ERR_PTR<file>(-ENOMEM);
}

}  // namespace kshim
