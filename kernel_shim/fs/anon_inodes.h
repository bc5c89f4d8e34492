// Mirrors include/linux/anon_inodes.h and fs/anon_inodes.c: files with no inode of their own.
#pragma once
#include "kernel_shim/fs/file.h"

namespace kshim {

// A new file named "[name]" on the shared anonymous inode, with fops and priv, f_flags from
// flags (O_ACCMODE | O_NONBLOCK kept). One reference for the caller, or ERR_PTR(-ENOMEM).
file* anon_inode_getfile(const char* name, const file_operations* fops, void* priv, int flags);
// anon_inode_getfile plus a descriptor on the current table (O_CLOEXEC honoured): the fd, or
// -errno (nothing is left behind then; the caller still owns priv).
int anon_inode_getfd(const char* name, const file_operations* fops, void* priv, int flags);

}  // namespace kshim
