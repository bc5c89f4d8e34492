// Mirrors include/linux/fdtable.h and fs/file.c: a client's descriptor table.
//
// DOC: A files_struct maps descriptor numbers to files; each installed descriptor holds one file
// reference. A new number is the lowest free one (get_unused_fd_flags, as alloc_fd does), is
// reserved until fd_install fills it or put_unused_fd gives it back, and close_fd frees it. The
// table of the running task is current_files(): the task's own (Task::files, set by whoever runs
// kernel code for a client: a test's client, a simulated process) or, without one, the process's
// table init_files(), whose numbers start at 3 (0-2 are the process's stdio).
//
// A table may be backed by a host's descriptors (the preload library: files_struct_ops): a new
// number is then a real descriptor of the process, made by the ops, so close, dup and poll of it
// work in the host kernel; the table maps it back to its file.
#pragma once
#include <vector>

#include "kernel_shim/fs/file.h"
#include "kernel_shim/spinlock.h"

namespace kshim {

struct files_struct;

// Host-descriptor backing of a table (all optional but reserve/unreserve go together).
struct files_struct_ops {
    // A new descriptor number for get_unused_fd_flags(flags): >= 0 or -errno. Called without the
    // table's lock.
    int (*reserve)(files_struct* files, unsigned int flags) = nullptr;
    // The number goes back (put_unused_fd, close_fd): release the host descriptor.
    void (*unreserve)(files_struct* files, int fd) = nullptr;
    // fd_install / replace_fd filled `fd` with `f` (the host side may arm poll forwarding).
    void (*installed)(files_struct* files, int fd, file* f) = nullptr;
    // fget of a number the table does not hold: a file reference (for instance a file standing
    // for a host descriptor), or nullptr (-EBADF).
    file* (*lookup_miss)(files_struct* files, int fd) = nullptr;
};

struct files_struct {
    explicit files_struct(int first_fd = 0, const files_struct_ops* ops = nullptr, void* ops_priv = nullptr)
        : first_fd(first_fd), ops(ops), ops_priv(ops_priv) {}
    ~files_struct();  // WARNs if descriptors are left (close_files first)
    files_struct(const files_struct&) = delete;
    files_struct& operator=(const files_struct&) = delete;

    // Protects fdt and next_fd. Never held across a file's operations or fput.
    SpinLock file_lock{"files_struct.file_lock"};
    // By number: nullptr free, a reserved marker between get_unused_fd_flags and fd_install.
    std::vector<file*> fdt;
    int next_fd = 0;  // no free number below it
    const int first_fd;
    const files_struct_ops* const ops;
    void* const ops_priv;
};

// The running task's table (see the DOC).
files_struct* current_files();
files_struct* init_files();
// Makes `files` the process's table (what init_files() returns); nullptr goes back to the
// built-in one. The preload library installs its host-backed table this way.
void files_set_process_table(files_struct* files);
// Makes `files` the calling task's table until the scope ends (a test's client).
class FilesScope {
public:
    explicit FilesScope(files_struct* files);
    ~FilesScope();
    FilesScope(const FilesScope&) = delete;
    FilesScope& operator=(const FilesScope&) = delete;

private:
    files_struct* prev_;
};

// ---- on the current table (fs/file.c) ----
// O_CLOEXEC is the only flag it looks at. The lowest free number (>= first_fd), reserved, or
// -EMFILE, or the host ops' error.
int get_unused_fd_flags(unsigned int flags);
void put_unused_fd(int fd);
// Fills a reserved number with f; consumes the caller's reference.
void fd_install(int fd, file* f);
// A new reference to the file at fd, or nullptr (closed, never opened, reserved only, < 0).
file* fget(int fd);
// close(2): 0, or -EBADF. The descriptor's reference is dropped (the file's release may run).
int close_fd(int fd);
// Takes fd out of the table and returns its reference (nullptr: -EBADF). The host descriptor is
// left alone (the preload's close(2) of it is what called this).
file* file_close_fd(int fd);
// dup2(2) onto fd: fd names f (a new reference) whatever it named before (dropped). 0 or -EBADF
// (fd < 0) / -ENOMEM.
int replace_fd(int fd, file* f);
// ioctl(2) / read(2) / write(2) / poll of a descriptor: -EBADF when it is not open, else the
// file's operation (kernel_shim/fs/file.h's vfs_*).
long ksys_ioctl(int fd, unsigned int cmd, unsigned long arg);
long ksys_read(int fd, u64 buf, size_t count);
long ksys_write(int fd, u64 buf, size_t count);
// Open descriptors of the current table (leak checks).
size_t fd_count();

// ---- on a given table ----
file* files_lookup(files_struct* files, int fd);  // fget on that table
// fget on that table without its lookup_miss: only what the table holds.
file* fget_table(files_struct* files, int fd);
size_t files_count(files_struct* files);
// Closes every descriptor (exit_files); the files' releases run outside the lock.
void close_files(files_struct* files);

}  // namespace kshim
