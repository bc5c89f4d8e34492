// The process's descriptors that are ours: DRM files (one per open of a node) and the syncobj /
// sync_file exports of the DRM core, each a real kernel descriptor (a memfd or an eventfd) so
// close, dup, fcntl, poll and close-on-exec behave. Also the BO mappings handed out by mmap.
//
// Several descriptors may name one object (dup, dup2, fcntl(F_DUPFD)); the object goes when the
// last of them is closed: a DRM file is released (drm_release), an export drops its reference.
// A dup made behind the library's back (a raw system call) is still recognised by the inode of
// the anonymous file, but does not keep the object alive.
#pragma once
#include <sys/types.h>

#include <cstddef>

namespace drm {
struct File;
struct VmArea;
struct sync_timeline;
}

namespace upanthor::preload {

struct Obj;

// open(2) of node `minor`: a new DRM file behind a new descriptor; the fd or -errno.
int files_open_node(int minor, int flags);

// open(2) of /dev/sw_sync: a new sw_sync timeline behind a new descriptor; the fd or -errno.
int files_open_sw_sync(int flags);

// The object behind fd with a reference for the caller (files_put), or nullptr.
Obj* files_get(int fd);
void files_put(Obj* o);
drm::File* obj_drm_file(Obj* o);  // nullptr for an export
int obj_minor(Obj* o);            // the node of a DRM file
bool obj_is_export(Obj* o);
drm::sync_timeline* obj_sw_sync(Obj* o);  // nullptr unless an open of /dev/sw_sync

// close(2) of fd, before the real close: true when fd was ours (its reference dropped).
bool files_close(int fd);
// newfd now names what oldfd names (dup family), if oldfd is ours; newfd's old object is dropped.
void files_dup(int oldfd, int newfd);

// BO mappings handed out by mmap: remembered until munmap of the same address.
void files_add_map(void* addr, size_t len, drm::VmArea* vma);
// The mapping starting at addr, removed from the table; nullptr if none.
drm::VmArea* files_take_map(void* addr, size_t* len);

// Plugs the exports' real descriptors into the DRM core (drm_fd_set_ops).
void files_install_fd_ops();
// At exit: every mapping unmapped, every object released.
void files_release_all();

}  // namespace upanthor::preload
