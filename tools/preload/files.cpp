// Descriptor and mapping tables of the preload library (files.h).
//
// Locking: the tables are consulted by any thread of the client, including threads that never
// touched the device (close() of an unrelated fd), so they sit behind a POSIX rwlock rather than
// a kernel lock; an atomic count lets every call on other descriptors skip the lock entirely.
// Kernel code (drm_open, drm_release, drm_munmap) never runs under it.
#include "tools/preload/files.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <map>
#include <unordered_map>
#include <vector>

#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "drm/sw_sync.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "tools/preload/device.h"
#include "tools/preload/libc_next.h"

namespace upanthor::preload {

enum class Kind { DrmFile, Export, SwSync };

struct Obj {
    std::atomic<int> refs{1};  // one per descriptor in the table, plus callers holding it
    Kind kind = Kind::DrmFile;
    ino_t ino = 0;
    // DRM file.
    drm::File* file = nullptr;
    int minor = 0;
    // /dev/sw_sync: the timeline this open created.
    drm::sync_timeline* timeline = nullptr;
    // Export: the number the DRM core's fd table knows it by (its first descriptor).
    int export_fd = -1;
    // sync_file export: the descriptor is an eventfd the fence's callback writes, so poll(POLLIN)
    // reports the fence signalled.
    kshim::dma_fence* fence = nullptr;
    kshim::dma_fence_cb cb{};
};

namespace {

pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
std::atomic<int> g_tracked{0};  // descriptors in g_fds (lock-free early out)
std::unordered_map<int, Obj*>* g_fds = new std::unordered_map<int, Obj*>();      // under g_lock
std::unordered_map<ino_t, Obj*>* g_inos = new std::unordered_map<ino_t, Obj*>();  // under g_lock
struct Map {
    size_t len;
    drm::VmArea* vma;
};
std::map<void*, Map>* g_maps = new std::map<void*, Map>();  // under g_lock
std::atomic<int> g_nmaps{0};  // entries of g_maps (lock-free early out for every munmap)

ino_t real_ino(int fd) {
    struct stat st {};
    return libc().fstat(fd, &st) == 0 ? st.st_ino : 0;
}

void track_locked(int fd, Obj* o) {
    auto [it, fresh] = g_fds->emplace(fd, o);
    if (!fresh) it->second = o;  // the number was reused behind our back: the old entry is stale
    else g_tracked.fetch_add(1, std::memory_order_release);
}

// Last reference gone: the object's kernel side goes too. Runs kernel code: needs a task.
void obj_release(Obj* o) {
    attach_thread();
    pthread_rwlock_wrlock(&g_lock);
    auto it = g_inos->find(o->ino);
    if (it != g_inos->end() && it->second == o) g_inos->erase(it);
    pthread_rwlock_unlock(&g_lock);
    if (o->kind == Kind::DrmFile) {
        drm::drm_release(o->file);
    } else if (o->kind == Kind::SwSync) {
        drm::sw_sync_debugfs_release(o->timeline);
    } else {
        if (o->fence) {
            kshim::dma_fence_remove_callback(o->fence, &o->cb);
            kshim::dma_fence_put(o->fence);
        }
        drm::drm_fd_forget(o->export_fd);
    }
    delete o;
}

Obj* lookup_locked(int fd) {
    auto it = g_fds->find(fd);
    return it == g_fds->end() ? nullptr : it->second;
}

// The fence callback of a sync_file export: the eventfd becomes readable.
void export_signalled(kshim::dma_fence*, kshim::dma_fence_cb* cb) {
    Obj* o = reinterpret_cast<Obj*>(reinterpret_cast<char*>(cb) - offsetof(Obj, cb));
    const uint64_t one = 1;
    (void)!write(o->export_fd, &one, sizeof(one));
}

// ---- drm::DrmFdOps ----
int ops_install(kshim::sync_file* sfile) {
    const int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd < 0) return -errno;
    auto* o = new Obj();
    o->kind = Kind::Export;
    o->export_fd = fd;
    o->ino = real_ino(fd);
    if (sfile && sfile->fence) {
        o->fence = kshim::dma_fence_get(sfile->fence);
        if (kshim::dma_fence_add_callback(o->fence, &o->cb, export_signalled) == -ENOENT) export_signalled(o->fence, &o->cb);
    }
    pthread_rwlock_wrlock(&g_lock);
    track_locked(fd, o);
    (*g_inos)[o->ino] = o;
    pthread_rwlock_unlock(&g_lock);
    return fd;
}

int ops_resolve(int fd) {
    pthread_rwlock_rdlock(&g_lock);
    Obj* o = lookup_locked(fd);
    if (!o) {
        // A dup the library did not see: same anonymous file, same inode.
        auto it = g_inos->find(real_ino(fd));
        if (it != g_inos->end()) o = it->second;
    }
    int ret = o && o->kind == Kind::Export ? o->export_fd : -EBADF;
    pthread_rwlock_unlock(&g_lock);
    // An open descriptor of another kind (a DRM file, a pipe, a regular file) is not closed: the
    // kernel's dma_buf_get tells the two apart (-EINVAL, -EBADF).
    if (ret == -EBADF && fd >= 0 && libc().fcntl(fd, F_GETFD) >= 0) ret = -EINVAL;
    return ret;
}

void ops_close(int fd) {
    // Kernel code closed an export it had installed (an error path): the descriptor goes, and
    // the object without releasing the entry again (the DRM core dropped it already).
    pthread_rwlock_wrlock(&g_lock);
    Obj* o = lookup_locked(fd);
    if (o) {
        g_fds->erase(fd);
        g_tracked.fetch_sub(1, std::memory_order_release);
        auto it = g_inos->find(o->ino);
        if (it != g_inos->end() && it->second == o) g_inos->erase(it);
    }
    pthread_rwlock_unlock(&g_lock);
    if (o) {
        if (o->fence) {
            kshim::dma_fence_remove_callback(o->fence, &o->cb);
            kshim::dma_fence_put(o->fence);
        }
        delete o;
    }
    libc().close(fd);
}

const drm::DrmFdOps kFdOps = {.install = ops_install, .resolve = ops_resolve, .close = ops_close};

// SYNCOBJ_EVENTFD's descriptor: the program's own eventfd. One of ours is not an eventfd to the
// kernel (a sync_file or a DRM file), whatever backs it here.
kshim::eventfd_ctx* eventfd_resolver(int fd) {
    if (Obj* o = files_get(fd)) {
        files_put(o);
        return kshim::ERR_PTR<kshim::eventfd_ctx>(-EINVAL);
    }
    return kshim::eventfd_host_ctx_fdget(fd);
}

}  // namespace

int files_open_node(int minor, int flags) {
    drm::Device* dev = device_get();
    if (!dev) return -ENODEV;
    attach_thread();
    const int fd = memfd_create(minor == 0 ? "upanthor-card0" : "upanthor-renderD128", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) return -errno;
    drm::File* file = nullptr;
    const int ret = drm::drm_open(dev, &file, minor >= 128);
    if (ret) {
        libc().close(fd);
        return ret;
    }
    auto* o = new Obj();
    o->file = file;
    o->minor = minor;
    o->ino = real_ino(fd);
    pthread_rwlock_wrlock(&g_lock);
    track_locked(fd, o);
    (*g_inos)[o->ino] = o;
    pthread_rwlock_unlock(&g_lock);
    return fd;
}

Obj* files_get(int fd) {
    if (g_tracked.load(std::memory_order_acquire) == 0 || fd < 0) return nullptr;
    pthread_rwlock_rdlock(&g_lock);
    Obj* o = lookup_locked(fd);
    if (o) o->refs.fetch_add(1, std::memory_order_relaxed);
    pthread_rwlock_unlock(&g_lock);
    return o;
}

void files_put(Obj* o) {
    if (o->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) obj_release(o);
}

drm::File* obj_drm_file(Obj* o) { return o->kind == Kind::DrmFile ? o->file : nullptr; }
int obj_minor(Obj* o) { return o->minor; }
bool obj_is_export(Obj* o) { return o->kind == Kind::Export; }

bool files_close(int fd) {
    if (g_tracked.load(std::memory_order_acquire) == 0 || fd < 0) return false;
    pthread_rwlock_wrlock(&g_lock);
    Obj* o = lookup_locked(fd);
    if (o) {
        g_fds->erase(fd);
        g_tracked.fetch_sub(1, std::memory_order_release);
    }
    pthread_rwlock_unlock(&g_lock);
    if (!o) return false;
    files_put(o);
    return true;
}

void files_dup(int oldfd, int newfd) {
    if (oldfd == newfd) return;
    files_close(newfd);  // dup2 onto one of ours closes it first
    if (g_tracked.load(std::memory_order_acquire) == 0 || oldfd < 0 || newfd < 0) return;
    pthread_rwlock_wrlock(&g_lock);
    Obj* o = lookup_locked(oldfd);
    if (o) {
        o->refs.fetch_add(1, std::memory_order_relaxed);
        track_locked(newfd, o);
    }
    pthread_rwlock_unlock(&g_lock);
}

void files_add_map(void* addr, size_t len, drm::VmArea* vma) {
    pthread_rwlock_wrlock(&g_lock);
    if (g_maps->insert_or_assign(addr, Map{len, vma}).second) g_nmaps.fetch_add(1, std::memory_order_release);
    pthread_rwlock_unlock(&g_lock);
}

drm::VmArea* files_take_map(void* addr, size_t* len) {
    if (g_nmaps.load(std::memory_order_acquire) == 0) return nullptr;
    pthread_rwlock_wrlock(&g_lock);
    drm::VmArea* vma = nullptr;
    auto it = g_maps->find(addr);
    if (it != g_maps->end()) {
        vma = it->second.vma;
        *len = it->second.len;
        g_maps->erase(it);
        g_nmaps.fetch_sub(1, std::memory_order_release);
    }
    pthread_rwlock_unlock(&g_lock);
    return vma;
}

void files_install_fd_ops() {
    drm::drm_fd_set_ops(&kFdOps);
    kshim::eventfd_set_fd_resolver(eventfd_resolver);
}

int files_open_sw_sync(int flags) {
    if (!device_get()) return -ENODEV;
    attach_thread();
    const int fd = memfd_create("upanthor-sw_sync", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) return -errno;
    drm::sync_timeline* tl = nullptr;
    const int ret = drm::sw_sync_debugfs_open(&tl);
    if (ret) {
        libc().close(fd);
        return ret;
    }
    auto* o = new Obj();
    o->kind = Kind::SwSync;
    o->timeline = tl;
    o->ino = real_ino(fd);
    pthread_rwlock_wrlock(&g_lock);
    track_locked(fd, o);
    (*g_inos)[o->ino] = o;
    pthread_rwlock_unlock(&g_lock);
    return fd;
}

drm::sync_timeline* obj_sw_sync(Obj* o) { return o->kind == Kind::SwSync ? o->timeline : nullptr; }

void files_release_all() {
    std::map<void*, Map> maps;
    std::vector<std::pair<int, Obj*>> fds;
    pthread_rwlock_wrlock(&g_lock);
    maps.swap(*g_maps);
    g_nmaps.store(0, std::memory_order_release);
    for (auto& [fd, o] : *g_fds) fds.emplace_back(fd, o);
    g_fds->clear();
    g_tracked.store(0, std::memory_order_release);
    pthread_rwlock_unlock(&g_lock);
    for (auto& [addr, m] : maps) {
        libc().munmap(addr, m.len);
        drm::drm_munmap(m.vma);
    }
    // Exports first: a syncobj export holds a syncobj whose file may be going too.
    for (int pass = 0; pass < 2; pass++) {
        for (auto& [fd, o] : fds) {
            if ((pass == 0) != (o->kind == Kind::Export)) continue;
            files_put(o);
        }
    }
}

}  // namespace upanthor::preload
