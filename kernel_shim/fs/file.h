// Mirrors include/linux/fs.h (struct file, struct file_operations), include/linux/file.h
// (fget/fput/get_file, fd_install) and include/linux/poll.h (poll_table, poll_wait).
//
// DOC: A `file` is what a descriptor names: an object of some kind (a DRM file, a sync_file, a
// dma-buf, a syncobj, a sw_sync timeline, an eventfd) reached only through its file_operations.
// Kernel code never asks what kind a file is, except to check that a descriptor it was handed is
// one of its own (f_op == &its_fops), which is how dma_buf_get, sync_file_fdget or
// eventfd_ctx_fdget tell "not mine" (-EINVAL) from "not open" (-EBADF).
//
// References follow the kernel: f_count starts at 1 (the creator's), every descriptor that names
// the file holds one (fd_install consumes the caller's), fget/get_file take one, fput drops one,
// and the last fput runs f_op->release and frees the file. Upstream defers that final __fput to
// task_work (run when the syscall returns to userspace) or, from interrupt context and kernel
// threads, to the delayed_fput work. Here the callers that drop the last reference from process
// context are the syscall paths themselves (close, the end of an ioctl) and hold no lock then,
// so the release runs at once, which is what task_work would do a moment later; from atomic
// context (a spinlock held, IRQ, softirq) the release is queued on system_wq, as delayed_fput.
//
// Descriptor tables are in kernel_shim/fs/fdtable.h; anonymous-inode files in
// kernel_shim/fs/anon_inodes.h.
#pragma once
#include <atomic>
#include <cstddef>

#include <sys/types.h>

#include "kernel_shim/types.h"
#include "kernel_shim/wait.h"
#include "kernel_shim/workqueue.h"

namespace kshim {

struct file;
struct poll_table_struct;
using poll_table = poll_table_struct;
using __poll_t = unsigned int;
// The libc loff_t (sys/types.h), as every other kshim header that names it uses it: one type
// for all translation units.
using ::loff_t;
using fmode_t = unsigned int;

// include/uapi/linux/eventpoll.h
inline constexpr __poll_t EPOLLIN = 0x001;
inline constexpr __poll_t EPOLLPRI = 0x002;
inline constexpr __poll_t EPOLLOUT = 0x004;
inline constexpr __poll_t EPOLLERR = 0x008;
inline constexpr __poll_t EPOLLHUP = 0x010;
inline constexpr __poll_t EPOLLRDNORM = 0x040;
inline constexpr __poll_t EPOLLWRNORM = 0x100;
// What a file without a poll op reports: always ready (fs/select.c's DEFAULT_POLLMASK).
inline constexpr __poll_t DEFAULT_POLLMASK = EPOLLIN | EPOLLOUT | EPOLLRDNORM | EPOLLWRNORM;

inline constexpr fmode_t FMODE_READ = 0x1;
inline constexpr fmode_t FMODE_WRITE = 0x2;

// The part of vm_area_struct the VFS and the file's mmap op share; the mm of this tree
// (drm/drm_mmap.h, drm::VmArea) extends it with the mapping's pages and ops.
struct vm_area_struct {
    file* vm_file = nullptr;     // one reference, for the mapping's lifetime (when set)
    u64 vm_pgoff = 0;            // mmap offset in pages
    size_t length = 0;           // bytes, page multiple
    unsigned long vm_flags = 0;  // VM_* (drm/drm_mmap.h)
};

// Only the operations some file of this tree has. `arg`, `buf`: user pointers
// (kernel_shim/uaccess.h).
struct file_operations {
    // open(2) of a device node (char-device files; anonymous files have none): 0 or -errno,
    // private_data set.
    int (*open)(file* filp) = nullptr;
    // The last reference went. Its return value is ignored, as upstream.
    int (*release)(file* filp) = nullptr;
    long (*unlocked_ioctl)(file* filp, unsigned int cmd, unsigned long arg) = nullptr;
    // mmap(2): `vma` has vm_pgoff, length and vm_flags set.
    int (*mmap)(file* filp, vm_area_struct* vma) = nullptr;
    // The events ready now; calls poll_wait() on every queue whose wake-up can change them.
    __poll_t (*poll)(file* filp, poll_table* wait) = nullptr;
    long (*read)(file* filp, u64 buf, size_t count, loff_t* pos) = nullptr;
    long (*write)(file* filp, u64 buf, size_t count, loff_t* pos) = nullptr;
};

struct file {
    std::atomic<long> f_count{1};
    const file_operations* f_op = nullptr;
    void* private_data = nullptr;
    unsigned int f_flags = 0;  // O_* of the open (O_ACCMODE, O_NONBLOCK); never O_CLOEXEC
    fmode_t f_mode = 0;        // FMODE_READ / FMODE_WRITE, from O_ACCMODE
    loff_t f_pos = 0;
    // The anonymous inode's name ("[sync_file]", "[eventfd]", ...; readlink of /proc/self/fd/N
    // shows "anon_inode:" and it), or the device node's name for a char-device file.
    const char* f_name = "";
    work_struct f_delayed_fput;  // the final fput from atomic context
};

// A new file with one reference (the caller's): f_op, private_data and f_flags as given, f_mode
// from flags' access mode. nullptr on -ENOMEM (kmalloc accounting and fault injection apply).
file* alloc_file(const file_operations* fops, unsigned int flags, void* priv, const char* name);
// A char-device open: alloc_file, then fops->open (the file is freed again if that fails).
// The file or ERR_PTR(-errno).
file* open_chrdev_file(const file_operations* fops, unsigned int flags, const char* name);

inline file* get_file(file* f) {
    f->f_count.fetch_add(1, std::memory_order_relaxed);
    return f;
}
// get_file unless the count already dropped to 0 (the lookup side of fget).
bool get_file_unless_zero(file* f);
// Drops a reference; the last runs f_op->release and frees the file (see the DOC).
void fput(file* f);
inline long file_count(const file* f) {
    return f->f_count.load(std::memory_order_relaxed);
}
// Files alive (leak checks).
long files_live();

// ---- the file operations as the syscalls reach them ----
// ioctl(2) past do_vfs_ioctl: f_op->unlocked_ioctl, -ENOTTY without one.
long vfs_ioctl(file* f, unsigned int cmd, unsigned long arg);
// read(2) / write(2): -EINVAL without the op (and -EBADF for a file not opened for it).
long vfs_read(file* f, u64 buf, size_t count);
long vfs_write(file* f, u64 buf, size_t count);

// ---- poll (include/linux/poll.h) ----
using poll_queue_proc = void (*)(file* filp, wait_queue_head* wqh, poll_table* pt);
struct poll_table_struct {
    poll_queue_proc _qproc = nullptr;
    __poll_t _key = ~0u;
};
inline void poll_wait(file* filp, wait_queue_head* wqh, poll_table* p) {
    if (p && p->_qproc && wqh)
        p->_qproc(filp, wqh, p);
}
// f_op->poll, or DEFAULT_POLLMASK for a file without one.
__poll_t vfs_poll(file* f, poll_table* pt);

}  // namespace kshim
