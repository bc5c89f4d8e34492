// The process's descriptor table as the kernel sees it: a kernel_shim files_struct
// (kernel_shim/fs/fdtable.h) whose numbers are real descriptors of the process. A number the
// kernel hands out (get_unused_fd_flags: an open of a node, an export, a MERGE) is a new eventfd
// of the host, so close, dup, fcntl, poll and close-on-exec behave; the table maps it to its
// `struct file`, and every call on it (ioctl, mmap, read, close) goes to that file's operations.
// poll(2) works natively: when a file is first installed the library polls it with a poll table
// whose entry, woken by the file's wait queue, makes the host eventfd readable.
//
// Several descriptors may name one file (dup, dup2, fcntl(F_DUPFD)): each holds a reference and
// the file is released when the last goes. A dup made behind the library's back (a raw system
// call) is not recognised: every host eventfd shares one anonymous inode.
// Also the BO mappings handed out by mmap.
#pragma once
#include <sys/types.h>

#include <cstddef>

namespace kshim {
struct file;
}
namespace drm {
struct VmArea;
}

namespace upanthor::preload {

// Installs `f` (the caller's reference is consumed) on a new descriptor (O_CLOEXEC in flags
// honoured): the fd or -errno (f is released then).
int files_install(kshim::file* f, int flags);
// The file behind one of our descriptors (a reference: kshim::fput), or nullptr. Only the
// table's numbers: never a host descriptor of another kind.
kshim::file* files_get(int fd);
// The node minor of a DRM file (0 primary, 128 render), or -1 for a file of another kind.
int file_minor(kshim::file* f);

// close(2) of fd, before the real close: true when fd was ours (its reference dropped).
bool files_close(int fd);
// newfd now names what oldfd names (dup family), if oldfd is ours; newfd's old file is dropped.
void files_dup(int oldfd, int newfd);

// BO mappings handed out by mmap: remembered until munmap of the same address.
void files_add_map(void* addr, size_t len, drm::VmArea* vma);
// The mapping starting at addr, removed from the table; nullptr if none.
drm::VmArea* files_take_map(void* addr, size_t* len);

// Makes the host-backed table the process's (kshim::files_set_process_table).
void files_install_fd_ops();
// At exit: every mapping unmapped, every descriptor closed, the built-in table back.
void files_release_all();

}  // namespace upanthor::preload
