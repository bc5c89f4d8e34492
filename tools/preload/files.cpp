// The host-backed descriptor table of the preload library and its BO mappings (files.h).
//
// Locking: the kernel table has its own lock. The library's side tables (inode -> first
// descriptor, per-file poll watches, the mappings) are consulted by any thread of the client,
// including threads that never touched the device (close() of an unrelated fd), so they sit
// behind a POSIX mutex rather than a kernel lock; an atomic count of our descriptors lets every
// call on other descriptors skip all of it. No kernel code runs under that mutex.
#include "tools/preload/files.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <unordered_map>

#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "kernel_shim/err.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "tools/preload/device.h"
#include "tools/preload/libc_next.h"

namespace upanthor::preload {

using kshim::file;

namespace {

// A file's poll forwarding: an entry on the (first) wait queue its poll op names; a wake-up of
// that queue makes the host eventfd readable. Readiness is taken as final once reached (true of
// every file whose poll reports anything here: a sync_file's fence stays signalled).
struct Watch {
    kshim::poll_table pt;
    kshim::wait_queue_head::Entry entry{nullptr};
    kshim::wait_queue_head* wqh = nullptr;
    int host_fd = -1;  // a dup of the first descriptor's eventfd, owned by the watch
    int ndesc = 0;     // descriptors of ours naming the file
};

pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<int> g_tracked{0};  // our descriptors (lock-free early out)
// Under g_lock.
std::unordered_map<ino_t, int>* g_inos = new std::unordered_map<ino_t, int>();
std::unordered_map<file*, Watch*>* g_watches = new std::unordered_map<file*, Watch*>();
struct Map {
    size_t len;
    drm::VmArea* vma;
};
std::map<void*, Map>* g_maps = new std::map<void*, Map>();
std::atomic<int> g_nmaps{0};

kshim::files_struct* g_files = nullptr;

ino_t real_ino(int fd) {
    struct stat st {};
    return libc().fstat(fd, &st) == 0 ? st.st_ino : 0;
}

void host_ready(int host_fd) {
    const uint64_t one = 1;
    (void)!syscall(SYS_write, host_fd, &one, sizeof one);
}

void watch_woken(kshim::wait_queue_head::Entry* e) {
    Watch* w = reinterpret_cast<Watch*>(reinterpret_cast<char*>(e) - offsetof(Watch, entry));
    host_ready(w->host_fd);
}

void watch_queue(file*, kshim::wait_queue_head* wqh, kshim::poll_table* pt) {
    Watch* w = reinterpret_cast<Watch*>(reinterpret_cast<char*>(pt) - offsetof(Watch, pt));
    if (w->wqh)
        return;
    w->wqh = wqh;
    w->entry.func = watch_woken;
    wqh->add(&w->entry);
}

void watch_free(Watch* w) {
    if (w->wqh)
        w->wqh->remove(&w->entry);
    if (w->host_fd >= 0)
        libc().close(w->host_fd);
    delete w;
}

// ---- kshim::files_struct_ops ----
int ops_reserve(kshim::files_struct*, unsigned int flags) {
    const int fd = eventfd(0, EFD_NONBLOCK | ((flags & O_CLOEXEC) ? EFD_CLOEXEC : 0));
    if (fd < 0)
        return -errno;
    g_tracked.fetch_add(1, std::memory_order_acq_rel);
    return fd;
}

void ops_unreserve(kshim::files_struct*, int fd) {
    pthread_mutex_lock(&g_lock);
    for (auto it = g_inos->begin(); it != g_inos->end(); ++it) {
        if (it->second == fd) {
            g_inos->erase(it);
            break;
        }
    }
    pthread_mutex_unlock(&g_lock);
    g_tracked.fetch_sub(1, std::memory_order_acq_rel);
    libc().close(fd);
}

void ops_installed(kshim::files_struct*, int fd, file* f) {
    const ino_t ino = real_ino(fd);
    Watch* fresh = nullptr;
    pthread_mutex_lock(&g_lock);
    g_inos->emplace(ino, fd);
    auto it = g_watches->find(f);
    if (it != g_watches->end()) {
        it->second->ndesc++;
    } else {
        fresh = new Watch();
        fresh->ndesc = 1;
        (*g_watches)[f] = fresh;
    }
    pthread_mutex_unlock(&g_lock);
    if (!fresh)
        return;
    fresh->host_fd = static_cast<int>(syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 0));
    fresh->pt._qproc = watch_queue;
    if (kshim::vfs_poll(f, &fresh->pt) & kshim::EPOLLIN)
        host_ready(fresh->host_fd);
}

// A host descriptor of another kind than the kernel's files: what kernel code handed it finds
// is "not mine" (-EINVAL), as a pipe or a regular file would be.
const kshim::file_operations host_fops = {};

file* ops_lookup_miss(kshim::files_struct* files, int fd) {
    if (fd < 0 || libc().fcntl(fd, F_GETFD) < 0)
        return nullptr;
    (void)files;
    // The program's own eventfd (SYNCOBJ_EVENTFD), or a file of another kind.
    file* f = kshim::eventfd_host_file(fd);
    if (IS_ERR(f) && PTR_ERR(f) == -EINVAL)
        f = kshim::anon_inode_getfile("host", &host_fops, nullptr, O_RDWR);
    return IS_ERR(f) ? nullptr : f;
}

const kshim::files_struct_ops kOps = {
    .reserve = ops_reserve,
    .unreserve = ops_unreserve,
    .installed = ops_installed,
    .lookup_miss = ops_lookup_miss,
};

// The descriptor `fd` of file `f` went: the watch goes with the last one.
void desc_gone(int fd, file* f) {
    Watch* dead = nullptr;
    pthread_mutex_lock(&g_lock);
    for (auto it = g_inos->begin(); it != g_inos->end(); ++it) {
        if (it->second == fd) {
            g_inos->erase(it);
            break;
        }
    }
    auto it = g_watches->find(f);
    if (it != g_watches->end() && --it->second->ndesc == 0) {
        dead = it->second;
        g_watches->erase(it);
    }
    pthread_mutex_unlock(&g_lock);
    if (dead)
        watch_free(dead);
}

}  // namespace

int files_install(file* f, int flags) {
    attach_thread();
    const int fd = kshim::get_unused_fd_flags(static_cast<unsigned int>(flags) & O_CLOEXEC);
    if (fd < 0) {
        kshim::fput(f);
        return fd;
    }
    kshim::fd_install(fd, f);
    return fd;
}

file* files_get(int fd) {
    if (g_tracked.load(std::memory_order_acquire) == 0 || fd < 0 || !g_files)
        return nullptr;
    // Every host eventfd shares one anonymous inode, so a raw dup (behind the library's back)
    // cannot be told from the program's own eventfd: only the table's numbers are ours.
    return kshim::fget_table(g_files, fd);
}

int file_minor(file* f) {
    drm::drm_file* df = drm::drm_file_from(f);
    return df ? (df->is_render ? 128 : 0) : -1;
}

bool files_close(int fd) {
    if (g_tracked.load(std::memory_order_acquire) == 0 || fd < 0 || !g_files)
        return false;
    attach_thread();
    kshim::file* f = kshim::file_close_fd(fd);  // the process table is g_files
    if (!f)
        return false;
    g_tracked.fetch_sub(1, std::memory_order_acq_rel);
    desc_gone(fd, f);
    kshim::fput(f);
    return true;
}

void files_dup(int oldfd, int newfd) {
    if (oldfd == newfd)
        return;
    files_close(newfd);  // dup2 onto one of ours closes it first
    file* f = files_get(oldfd);
    if (!f)
        return;
    if (kshim::replace_fd(newfd, f) == 0)
        g_tracked.fetch_add(1, std::memory_order_acq_rel);
    kshim::fput(f);
}

void files_add_map(void* addr, size_t len, drm::VmArea* vma) {
    pthread_mutex_lock(&g_lock);
    if (g_maps->insert_or_assign(addr, Map{len, vma}).second)
        g_nmaps.fetch_add(1, std::memory_order_release);
    pthread_mutex_unlock(&g_lock);
}

drm::VmArea* files_take_map(void* addr, size_t* len) {
    if (g_nmaps.load(std::memory_order_acquire) == 0)
        return nullptr;
    pthread_mutex_lock(&g_lock);
    drm::VmArea* vma = nullptr;
    auto it = g_maps->find(addr);
    if (it != g_maps->end()) {
        vma = it->second.vma;
        *len = it->second.len;
        g_maps->erase(it);
        g_nmaps.fetch_sub(1, std::memory_order_release);
    }
    pthread_mutex_unlock(&g_lock);
    return vma;
}

void files_install_fd_ops() {
    if (!g_files)
        g_files = new kshim::files_struct(0, &kOps);
    kshim::files_set_process_table(g_files);
}

void files_release_all() {
    std::map<void*, Map> maps;
    std::unordered_map<file*, Watch*> watches;
    pthread_mutex_lock(&g_lock);
    maps.swap(*g_maps);
    watches.swap(*g_watches);
    g_inos->clear();
    g_nmaps.store(0, std::memory_order_release);
    pthread_mutex_unlock(&g_lock);
    for (auto& [addr, m] : maps) {
        libc().munmap(addr, m.len);
        drm::drm_munmap(m.vma);
    }
    // Off the files' queues before the files go.
    for (auto& [f, w] : watches)
        watch_free(w);
    if (g_files)
        kshim::close_files(g_files);
    g_tracked.store(0, std::memory_order_release);
    kshim::files_set_process_table(nullptr);
}

}  // namespace upanthor::preload
