// Mirrors fs/anon_inodes.c: anon_inode_getfd (anon_inode_getfile is in file_table.cpp, beside
// alloc_file).
#include <fcntl.h>

#include "kernel_shim/err.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"

namespace kshim {

int anon_inode_getfd(const char* name, const file_operations* fops, void* priv, int flags) {
    const int fd = get_unused_fd_flags(static_cast<unsigned int>(flags));
    if (fd < 0)
        return fd;
    file* f = anon_inode_getfile(name, fops, priv, flags);
    if (IS_ERR(f)) {
        put_unused_fd(fd);
        return static_cast<int>(PTR_ERR(f));
    }
    fd_install(fd, f);
    return fd;
}

}  // namespace kshim
