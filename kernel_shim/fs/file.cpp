// Mirrors fs/file.c: descriptor tables (alloc_fd, fd_install, fget, close_fd, do_dup2's
// replace_fd, exit_files). See kernel_shim/fs/fdtable.h.
#include <fcntl.h>

#include <cerrno>
#include <climits>

#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/lockdep.h"
#include "kernel_shim/report.h"
#include "kernel_shim/task.h"

namespace kshim {

namespace {

// A number handed out by get_unused_fd_flags and not installed yet.
char g_reserved_marker;
file* const kReserved = reinterpret_cast<file*>(&g_reserved_marker);

std::atomic<files_struct*> g_process_files{nullptr};

bool is_file(file* f) {
    return f && f != kReserved;
}

// Takes fd's entry out (lock held); the caller drops what it returns.
file* take_locked(files_struct* files, int fd) {
    lockdep_assert_held(&files->file_lock);
    if (fd < 0 || static_cast<size_t>(fd) >= files->fdt.size())
        return nullptr;
    file* f = files->fdt[static_cast<size_t>(fd)];
    if (!is_file(f))
        return nullptr;
    files->fdt[static_cast<size_t>(fd)] = nullptr;
    if (fd < files->next_fd)
        files->next_fd = fd;
    return f;
}

void grow_locked(files_struct* files, int fd) {
    if (files->fdt.size() <= static_cast<size_t>(fd))
        files->fdt.resize(static_cast<size_t>(fd) + 1, nullptr);
}

}  // namespace

files_struct::~files_struct() {
    size_t left = 0;
    for (file* f : fdt)
        left += f != nullptr;
    WARN(left, "files_struct destroyed with %zu descriptors open", left);
}

files_struct* init_files() {
    if (files_struct* f = g_process_files.load(std::memory_order_acquire))
        return f;
    static files_struct* const process = new files_struct(3);
    return process;
}

void files_set_process_table(files_struct* files) {
    g_process_files.store(files, std::memory_order_release);
}

files_struct* current_files() {
    Task* t = current();
    return t && t->files ? t->files : init_files();
}

FilesScope::FilesScope(files_struct* files) {
    Task* t = current();
    BUG_ON(!t);
    prev_ = t->files;
    t->files = files;
}

FilesScope::~FilesScope() {
    current()->files = prev_;
}

int get_unused_fd_flags(unsigned int flags) {
    files_struct* files = current_files();
    if (files->ops && files->ops->reserve) {
        const int fd = files->ops->reserve(files, flags);
        if (fd < 0)
            return fd;
        file* stale;
        {
            SpinGuard g(files->file_lock);
            grow_locked(files, fd);
            stale = files->fdt[static_cast<size_t>(fd)];
            files->fdt[static_cast<size_t>(fd)] = kReserved;
        }
        // The host reused a number whose descriptor was closed behind the table's back.
        if (is_file(stale))
            fput(stale);
        return fd;
    }
    SpinGuard g(files->file_lock);
    int fd = std::max(files->next_fd, files->first_fd);
    while (static_cast<size_t>(fd) < files->fdt.size() && files->fdt[static_cast<size_t>(fd)])
        fd++;
    if (fd == INT_MAX)
        return -EMFILE;
    grow_locked(files, fd);
    files->fdt[static_cast<size_t>(fd)] = kReserved;
    files->next_fd = fd + 1;
    return fd;
}

void put_unused_fd(int fd) {
    files_struct* files = current_files();
    {
        SpinGuard g(files->file_lock);
        if (WARN_ON(fd < 0 || static_cast<size_t>(fd) >= files->fdt.size() ||
                    files->fdt[static_cast<size_t>(fd)] != kReserved))
            return;
        files->fdt[static_cast<size_t>(fd)] = nullptr;
        if (fd < files->next_fd)
            files->next_fd = fd;
    }
    if (files->ops && files->ops->unreserve)
        files->ops->unreserve(files, fd);
}

void fd_install(int fd, file* f) {
    files_struct* files = current_files();
    {
        SpinGuard g(files->file_lock);
        // Installing over anything but a reserved number is a caller bug (BUG_ON upstream).
        if (WARN_ON(fd < 0 || static_cast<size_t>(fd) >= files->fdt.size() ||
                    files->fdt[static_cast<size_t>(fd)] != kReserved)) {
            return;
        }
        files->fdt[static_cast<size_t>(fd)] = f;
    }
    if (files->ops && files->ops->installed)
        files->ops->installed(files, fd, f);
}

file* fget_table(files_struct* files, int fd) {
    if (fd < 0)
        return nullptr;
    SpinGuard g(files->file_lock);
    if (static_cast<size_t>(fd) >= files->fdt.size())
        return nullptr;
    file* f = files->fdt[static_cast<size_t>(fd)];
    return is_file(f) ? get_file(f) : nullptr;
}

file* files_lookup(files_struct* files, int fd) {
    if (fd < 0)
        return nullptr;
    file* f = nullptr;
    {
        SpinGuard g(files->file_lock);
        if (static_cast<size_t>(fd) < files->fdt.size())
            f = files->fdt[static_cast<size_t>(fd)];
        // The table's reference keeps the count above 0 while we hold its lock.
        if (is_file(f))
            get_file(f);
        else
            f = nullptr;
    }
    if (!f && files->ops && files->ops->lookup_miss)
        f = files->ops->lookup_miss(files, fd);
    return f;
}

file* fget(int fd) {
    return files_lookup(current_files(), fd);
}

file* file_close_fd(int fd) {
    files_struct* files = current_files();
    SpinGuard g(files->file_lock);
    return take_locked(files, fd);
}

int close_fd(int fd) {
    files_struct* files = current_files();
    file* f = file_close_fd(fd);
    if (!f)
        return -EBADF;
    if (files->ops && files->ops->unreserve)
        files->ops->unreserve(files, fd);
    fput(f);
    return 0;
}

int replace_fd(int fd, file* f) {
    if (fd < 0)
        return -EBADF;
    files_struct* files = current_files();
    file* old;
    {
        SpinGuard g(files->file_lock);
        grow_locked(files, fd);
        old = files->fdt[static_cast<size_t>(fd)];
        // do_dup2: a number being installed by someone else is busy.
        if (old == kReserved)
            return -EBUSY;
        files->fdt[static_cast<size_t>(fd)] = get_file(f);
    }
    if (old)
        fput(old);
    if (files->ops && files->ops->installed)
        files->ops->installed(files, fd, f);
    return 0;
}

size_t files_count(files_struct* files) {
    SpinGuard g(files->file_lock);
    size_t n = 0;
    for (file* f : files->fdt)
        n += is_file(f);
    return n;
}

long ksys_ioctl(int fd, unsigned int cmd, unsigned long arg) {
    file* f = fget(fd);
    if (!f)
        return -EBADF;
    const long ret = vfs_ioctl(f, cmd, arg);
    fput(f);
    return ret;
}

long ksys_read(int fd, u64 buf, size_t count) {
    file* f = fget(fd);
    if (!f)
        return -EBADF;
    const long ret = vfs_read(f, buf, count);
    fput(f);
    return ret;
}

long ksys_write(int fd, u64 buf, size_t count) {
    file* f = fget(fd);
    if (!f)
        return -EBADF;
    const long ret = vfs_write(f, buf, count);
    fput(f);
    return ret;
}

size_t fd_count() {
    return files_count(current_files());
}

void close_files(files_struct* files) {
    std::vector<file*> open;
    {
        SpinGuard g(files->file_lock);
        for (file*& f : files->fdt) {
            if (is_file(f))
                open.push_back(f);
            f = nullptr;
        }
        files->next_fd = 0;
    }
    for (file* f : open)
        fput(f);
}

}  // namespace kshim
