// `upanthor serve` (server_main.h): the driver as a daemon shared by client processes.
//
// Locking: the server's tables (socket ends, processes and their mappings, connections) sit
// behind one POSIX mutex, taken by connection threads and the main thread for lookups only: no
// kernel code (fput, ioctl, munmap) runs under it.
#include "tools/preload/server_main.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "drm/drm_device.h"
#include "drm/drm_fdinfo.h"
#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "host/gpu_models.h"
#include "host/world.h"
#include "kernel_shim/backend.h"
#include "kernel_shim/dma-buf/sw_sync.h"
#include "kernel_shim/err.h"
#include "kernel_shim/eventfd.h"
#include "kernel_shim/fs/anon_inodes.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/signal.h"
#include "kernel_shim/task.h"
#include "kernel_shim/time.h"
#include "kernel_shim/uaccess.h"
#include "tools/preload/caller_creds.h"
#include "tools/preload/host_task.h"
#include "tools/preload/ioctl_answers.h"
#include "tools/preload/remote_proto.h"

namespace upanthor::preload {

using kshim::file;
using remote::Kind;
using remote::Msg;
using remote::Op;
using remote::Req;

namespace {

// A file a client process holds: the server's end of the socketpair whose other end is the
// client's descriptor, with one file reference. Poll forwarding as files.cpp's Watch: a wake-up
// of the queue the file's poll names writes a byte to the server's end, so the client's turns
// readable (taken as final once reached).
struct Entry {
    file* f = nullptr;
    int sock = -1;
    unsigned long long id = 0;      // epoll's key for the socket (never reused, unlike the number)
    unsigned long long ino = 0;     // the client end's inode (Op::Release names it)
    unsigned long long cookie = 0;  // the client end's SO_COOKIE: what a request's descriptor must have
    pid_t pid = 0;                  // the process it was handed to
    std::string what;               // "/dev/dri/renderD128", "sync_file", ...
    kshim::poll_table pt;
    kshim::wait_queue_head::Entry wq_entry{nullptr};
    kshim::wait_queue_head* wqh = nullptr;
    std::atomic<bool> readied{false};
};

struct Process {
    pid_t pid = 0;
    int pidfd = -1;
    std::unordered_map<unsigned long long, drm::VmArea*> vmas;  // by mapping id
    // Copies of the mappings made for a fork (Op::ForkMaps) that the child has not claimed yet,
    // by token; dropped with the process if the child never does.
    std::unordered_map<unsigned long long, std::vector<drm::VmArea*>> forks;
};

// A number reserved for the client during a request, not yet installed.
struct Pending {
    int sock;
    unsigned long long ino;
    unsigned long long cookie;
};

struct Conn {
    int fd = -1;
    pid_t pid = 0;
    uid_t uid = 0;  // the client's euid at connect (SO_PEERCRED)
    std::unordered_map<int, Pending> pending;
    kshim::Task* task = nullptr;
    unsigned long long id = 0;  // epoll's key for the interrupt pipe
    // Under the server's lock: the interrupt pipe (Op::Hello), the seq of the request being
    // served (0: none), the last seq an interrupt named.
    int irq = -1;
    unsigned long long cur_seq = 0;
    unsigned long long irq_seq = 0;
    // The client's memory as this connection's requests reach it; closed before the server drops
    // the connection, so that no copy-out lands after the client's call has ended.
    kshim::UaccessGate gate;
};

struct Server {
    upanthor::host::World* world = nullptr;
    drm::drm_device* ddev = nullptr;
    long long mono_offset = 0;
    std::FILE* out = nullptr;
    int epfd = -1;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    // Under lock.
    std::unordered_map<unsigned long long, Entry*> by_ino;
    std::unordered_map<unsigned long long, Entry*> by_id;
    unsigned long long next_id = 1;
    // Files whose reference is being dropped (taken out of the tables, fput not yet done), and
    // the condition a close barrier waits on until it is.
    std::unordered_map<unsigned long long, int> releasing;  // by ino
    pthread_cond_t released = PTHREAD_COND_INITIALIZER;
    std::unordered_map<pid_t, Process*> procs;
    std::unordered_map<int, Process*> by_pidfd;
    std::vector<int> conns;
    std::unordered_map<unsigned long long, Conn*> live;  // connections being served, by id
    bool stopping = false;
};
Server* g_srv = nullptr;

struct Lock {
    Lock() { pthread_mutex_lock(&g_srv->lock); }
    ~Lock() { pthread_mutex_unlock(&g_srv->lock); }
};

// epoll keys: the kind in the top byte, an id below. A socket end is keyed by its entry's id,
// not its number: a connection thread may release an entry (a close barrier) and its number be
// reused for a new socketpair while the main loop still holds an event for the old one.
constexpr unsigned long long kKeyEntry = 1ull << 56;
constexpr unsigned long long kKeyPidfd = 2ull << 56;
constexpr unsigned long long kKeyListen = 3ull << 56;
constexpr unsigned long long kKeySignal = 4ull << 56;
constexpr unsigned long long kKeyIrq = 5ull << 56;
constexpr unsigned long long kKeyMask = 0xffull << 56;

unsigned long long sock_ino(int fd) {
    struct stat st {};
    return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

// SO_COOKIE: a socket's number, never reused while the host runs (0: not a socket).
unsigned long long sock_cookie(int fd) {
    unsigned long long cookie = 0;
    socklen_t len = sizeof cookie;
    return getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &len) == 0 ? cookie : 0;
}

// ---- poll forwarding ----
void entry_ready(Entry* e) {
    if (!e->readied.exchange(true)) {
        const char b = 1;
        (void)!send(e->sock, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
}

void entry_woken(kshim::wait_queue_head::Entry* w) {
    entry_ready(reinterpret_cast<Entry*>(reinterpret_cast<char*>(w) - offsetof(Entry, wq_entry)));
}

void entry_queue(file*, kshim::wait_queue_head* wqh, kshim::poll_table* pt) {
    Entry* e = reinterpret_cast<Entry*>(reinterpret_cast<char*>(pt) - offsetof(Entry, pt));
    if (e->wqh)
        return;
    e->wqh = wqh;
    e->wq_entry.func = entry_woken;
    wqh->add(&e->wq_entry);
}

std::string describe(file* f) {
    if (drm::drm_file* df = drm::drm_file_from(f))
        return df->is_render ? "/dev/dri/renderD128" : "/dev/dri/card0";
    std::string n = f->f_name ? f->f_name : "";
    if (n.size() > 2 && n.front() == '[' && n.back() == ']')
        n = n.substr(1, n.size() - 2);
    return n.empty() ? "file" : n;
}

// What dropping the entry's reference releases, said before it is dropped.
std::string release_note(file* f) {
    const long others = kshim::file_count(f) - 1;
    if (others > 0)
        return "still held by " + std::to_string(others) + " other references (descriptors, mappings)";
    drm::drm_file* df = drm::drm_file_from(f);
    if (!df)
        return "released";
    return "released (drm_release): " + std::to_string(df->gem.count()) + " GEM handles, " +
           std::to_string(df->syncobj_idr.size()) + " syncobjs";
}

// The last descriptor of the entry's socket end closed (or the server stops): drop the reference.
void entry_release(Entry* e, bool report) {
    epoll_ctl(g_srv->epfd, EPOLL_CTL_DEL, e->sock, nullptr);
    if (e->wqh)
        e->wqh->remove(&e->wq_entry);
    close(e->sock);
    if (report) {
        std::fprintf(g_srv->out, "upanthor serve: pid %d: closed %s: %s\n", e->pid, e->what.c_str(),
                     release_note(e->f).c_str());
        std::fflush(g_srv->out);
    }
    kshim::fput(e->f);
    delete e;
}

// Takes the entry out of the tables (lock held); the caller then runs entry_release and
// entry_released. Between the two a close barrier on its inode waits.
void entry_take_locked(Entry* e) {
    g_srv->by_id.erase(e->id);
    g_srv->by_ino.erase(e->ino);
    g_srv->releasing[e->ino]++;
}

void entry_released(unsigned long long ino) {
    Lock l;
    if (--g_srv->releasing[ino] == 0)
        g_srv->releasing.erase(ino);
    pthread_cond_broadcast(&g_srv->released);
}

// Op::Release: the client closed a descriptor of the socket whose inode is `ino`. If that was
// the last one (the server's end sees the hang-up now: the host's close released the socket
// before returning), drop the file's reference here, in the closing process's request, as the
// kernel's fput of the last reference runs before close(2) returns; if the main loop is already
// dropping it, wait until it has. Only this file: other hang-ups stay the main loop's.
int entry_close_barrier(unsigned long long ino) {
    Entry* e = nullptr;
    {
        Lock l;
        for (;;) {
            if (g_srv->releasing.count(ino)) {
                pthread_cond_wait(&g_srv->released, &g_srv->lock);
                continue;
            }
            auto it = g_srv->by_ino.find(ino);
            if (it == g_srv->by_ino.end())
                return 0;
            pollfd p{it->second->sock, POLLRDHUP, 0};
            if (poll(&p, 1, 0) != 1 || !(p.revents & (POLLRDHUP | POLLHUP)))
                return 0;  // other descriptors remain
            e = it->second;
            entry_take_locked(e);
            break;
        }
    }
    entry_release(e, true);
    entry_released(ino);
    return 0;
}

void process_release(Process* p, bool report) {
    if (p->pidfd >= 0) {
        epoll_ctl(g_srv->epfd, EPOLL_CTL_DEL, p->pidfd, nullptr);
        close(p->pidfd);
    }
    if (report) {
        std::fprintf(g_srv->out, "upanthor serve: pid %d: exited: %zu mappings dropped\n", p->pid, p->vmas.size());
        std::fflush(g_srv->out);
    }
    for (auto& [id, vma] : p->vmas) {
        // The mapping's reference may be the file's last (its descriptors went first).
        if (report && vma->vm_file && kshim::file_count(vma->vm_file) == 1) {
            std::fprintf(g_srv->out, "upanthor serve: pid %d: unmapped the last mapping of %s: %s\n", p->pid,
                         describe(vma->vm_file).c_str(), release_note(vma->vm_file).c_str());
            std::fflush(g_srv->out);
        }
        drm::drm_munmap(vma);
    }
    for (auto& [token, vmas] : p->forks)
        for (drm::VmArea* vma : vmas)
            drm::drm_munmap(vma);
    delete p;
}

// The process's record, made on its first connection (lock held).
Process* process_get_locked(pid_t pid) {
    auto it = g_srv->procs.find(pid);
    if (it != g_srv->procs.end())
        return it->second;
    auto* p = new Process();
    p->pid = pid;
    p->pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    g_srv->procs[pid] = p;
    if (p->pidfd >= 0) {
        g_srv->by_pidfd[p->pidfd] = p;
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = kKeyPidfd | static_cast<unsigned>(p->pidfd);
        epoll_ctl(g_srv->epfd, EPOLL_CTL_ADD, p->pidfd, &ev);
    }
    return p;
}

void process_add_vma(pid_t pid, drm::VmArea* vma) {
    Lock l;
    process_get_locked(pid)->vmas[reinterpret_cast<unsigned long long>(vma)] = vma;
}

// The mapping `id` of the process, taken out of its record; nullptr if it has none such.
drm::VmArea* process_take_vma(pid_t pid, unsigned long long id) {
    Lock l;
    auto pit = g_srv->procs.find(pid);
    if (pit == g_srv->procs.end())
        return nullptr;
    Process* p = pit->second;
    auto it = p->vmas.find(id);
    if (it == p->vmas.end())
        return nullptr;
    drm::VmArea* vma = it->second;
    p->vmas.erase(it);
    return vma;
}

// The parent pid of `pid` (/proc/PID/stat's fourth field), or -1.
pid_t parent_of(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    const char* paren = std::strrchr(buf, ')');
    int ppid = -1;
    char state;
    if (!paren || std::sscanf(paren + 1, " %c %d", &state, &ppid) != 2)
        return -1;
    return ppid;
}

// Op::ForkMaps: the caller is about to fork. Each of its mappings named in the array at `uids`
// is copied (drm::vma_dup: the child's copy holds the object and the file, as the kernel's
// dup_mmap does through vm_ops->open), kept under a token until the child claims it.
long long fork_maps(pid_t pid, kshim::u64 uids, long long count) {
    if (count <= 0 || count > (1 << 20))
        return -EINVAL;
    std::vector<unsigned long long> ids(static_cast<size_t>(count));
    if (kshim::copy_from_user(ids.data(), uids, ids.size() * sizeof(ids[0])))
        return -EFAULT;
    // The originals are taken out of the process's record while they are copied, so that its
    // exit (the main loop) cannot unmap them under the copy; they go back afterwards.
    std::vector<drm::VmArea*> originals(ids.size(), nullptr);
    Process* owner = nullptr;
    {
        Lock l;
        auto pit = g_srv->procs.find(pid);
        if (pit == g_srv->procs.end())
            return -ESRCH;
        owner = pit->second;
        for (size_t i = 0; i < ids.size(); i++) {
            auto it = owner->vmas.find(ids[i]);
            if (it != owner->vmas.end()) {
                originals[i] = it->second;
                owner->vmas.erase(it);
            }
        }
    }
    std::vector<drm::VmArea*> copies;
    for (size_t i = 0; i < ids.size(); i++) {
        drm::VmArea* copy = originals[i] ? drm::vma_dup(originals[i]) : nullptr;
        ids[i] = reinterpret_cast<unsigned long long>(copy);
        if (copy)
            copies.push_back(copy);
    }
    const bool copied = kshim::copy_to_user(uids, ids.data(), ids.size() * sizeof(ids[0])) == 0;
    unsigned long long token = 0;
    {
        Lock l;
        auto pit = g_srv->procs.find(pid);
        if (pit != g_srv->procs.end() && pit->second == owner) {
            for (drm::VmArea* vma : originals)
                if (vma)
                    owner->vmas[reinterpret_cast<unsigned long long>(vma)] = vma;
            if (copied) {
                token = g_srv->next_id++;
                owner->forks[token] = copies;
            }
        } else {
            owner = nullptr;  // exited meanwhile: the originals are ours to unmap
        }
    }
    if (!owner)
        for (drm::VmArea* vma : originals)
            if (vma)
                drm::drm_munmap(vma);
    if (!token) {
        for (drm::VmArea* vma : copies)
            drm::drm_munmap(vma);
        return owner ? -EFAULT : -ESRCH;
    }
    return static_cast<long long>(token);
}

// The reserve `token` of process `owner`, taken out (empty when there is none).
std::vector<drm::VmArea*> fork_take(pid_t owner, unsigned long long token) {
    Lock l;
    auto pit = g_srv->procs.find(owner);
    if (pit == g_srv->procs.end())
        return {};
    auto it = pit->second->forks.find(token);
    if (it == pit->second->forks.end())
        return {};
    std::vector<drm::VmArea*> vmas = std::move(it->second);
    pit->second->forks.erase(it);
    return vmas;
}

// Op::ForkClaim: the caller must be a child of the reserve's owner.
long long fork_claim(pid_t pid, unsigned long long token, pid_t parent) {
    if (parent_of(pid) != parent)
        return -EPERM;
    std::vector<drm::VmArea*> vmas = fork_take(parent, token);
    if (vmas.empty())
        return -ESRCH;
    Lock l;
    Process* p = process_get_locked(pid);
    for (drm::VmArea* vma : vmas)
        p->vmas[reinterpret_cast<unsigned long long>(vma)] = vma;
    return 0;
}

long long fork_drop(pid_t pid, unsigned long long token) {
    for (drm::VmArea* vma : fork_take(pid, token))
        drm::drm_munmap(vma);
    return 0;
}

// ---- the client process's descriptor table (kshim::files_struct_ops) ----
// Waits for the client's Answer to a call back; the attached descriptor in *fd (or -1).
long long await_answer(Conn* c, int* fd) {
    Req a{};
    int got = -1;
    const ssize_t n = remote::recv_with_fd(c->fd, &a, sizeof a, &got, true);
    if (n != static_cast<ssize_t>(sizeof a) || a.op != Op::Answer) {
        if (got >= 0)
            close(got);
        return -ENODEV;
    }
    if (fd)
        *fd = got;
    else if (got >= 0)
        close(got);
    return a.a;
}

int ops_reserve(kshim::files_struct* files, unsigned int flags) {
    Conn* c = static_cast<Conn*>(files->ops_priv);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return -errno;
    fcntl(sv[0], F_SETFL, O_NONBLOCK);
    const unsigned long long ino = sock_ino(sv[1]);
    const unsigned long long cookie = sock_cookie(sv[1]);
    Msg m{};
    m.kind = Kind::InstallFd;
    m.flags = flags & O_CLOEXEC;
    int ret = remote::send_with_fd(c->fd, &m, sizeof m, sv[1]);
    close(sv[1]);
    if (ret == 0)
        ret = static_cast<int>(await_answer(c, nullptr));
    if (ret < 0) {
        close(sv[0]);
        return ret;
    }
    c->pending[ret] = Pending{sv[0], ino, cookie};
    return ret;
}

void ops_unreserve(kshim::files_struct* files, int fd) {
    Conn* c = static_cast<Conn*>(files->ops_priv);
    auto it = c->pending.find(fd);
    if (it == c->pending.end())
        return;
    close(it->second.sock);
    c->pending.erase(it);
    Msg m{};
    m.kind = Kind::CloseFd;
    m.a = fd;
    remote::send_with_fd(c->fd, &m, sizeof m, -1);
}

void ops_installed(kshim::files_struct* files, int fd, file* f) {
    Conn* c = static_cast<Conn*>(files->ops_priv);
    auto it = c->pending.find(fd);
    if (it == c->pending.end())
        return;
    auto* e = new Entry();
    e->f = kshim::get_file(f);
    e->sock = it->second.sock;
    e->ino = it->second.ino;
    e->cookie = it->second.cookie;
    e->pid = c->pid;
    e->what = describe(f);
    c->pending.erase(it);
    {
        Lock l;
        e->id = g_srv->next_id++;
        g_srv->by_ino[e->ino] = e;
        g_srv->by_id[e->id] = e;
    }
    e->pt._qproc = entry_queue;
    if (kshim::vfs_poll(f, &e->pt) & kshim::EPOLLIN)
        entry_ready(e);
    epoll_event ev{};
    ev.events = EPOLLRDHUP;
    ev.data.u64 = kKeyEntry | e->id;
    epoll_ctl(g_srv->epfd, EPOLL_CTL_ADD, e->sock, &ev);
}

// A client descriptor that kernel code was handed to look up (an import, SYNCOBJ_EVENTFD):
// the client sends it; one of the server's socket ends is its file, anything else is a host
// file as the in-process table's lookup_miss makes it (files.cpp).
const kshim::file_operations host_fops = {};

// The file of a client descriptor the server received: one of the socket ends it gave out (the
// same inode and cookie), with a reference; nullptr for any other descriptor. Holding the
// descriptor is what lets a process name the file: an inode alone could be guessed.
file* lookup_sock(int fd) {
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return nullptr;
    const unsigned long long cookie = sock_cookie(fd);
    Lock l;
    auto it = g_srv->by_ino.find(st.st_ino);
    if (it == g_srv->by_ino.end() || !cookie || it->second->cookie != cookie)
        return nullptr;
    return kshim::get_file(it->second->f);
}

file* ops_lookup_miss(kshim::files_struct* files, int fd) {
    Conn* c = static_cast<Conn*>(files->ops_priv);
    if (fd < 0)
        return nullptr;
    Msg m{};
    m.kind = Kind::GetFd;
    m.a = fd;
    if (remote::send_with_fd(c->fd, &m, sizeof m, -1) != 0)
        return nullptr;
    int got = -1;
    if (await_answer(c, &got) < 0 || got < 0)
        return nullptr;
    file* f = lookup_sock(got);
    if (!f) {
        f = kshim::eventfd_host_file(got);
        if (kshim::IS_ERR(f) && kshim::PTR_ERR(f) == -EINVAL)
            f = kshim::anon_inode_getfile("host", &host_fops, nullptr, O_RDWR);
        if (kshim::IS_ERR(f))
            f = nullptr;
    }
    close(got);
    return f;
}

const kshim::files_struct_ops kOps = {
    .reserve = ops_reserve,
    .unreserve = ops_unreserve,
    .installed = ops_installed,
    .lookup_miss = ops_lookup_miss,
};

// ---- requests ----
int file_minor(file* f) {
    drm::drm_file* df = drm::drm_file_from(f);
    return df ? (df->is_render ? 128 : 0) : -1;
}

int install(file* f, unsigned flags) {
    const int fd = kshim::get_unused_fd_flags(flags & O_CLOEXEC);
    if (fd < 0) {
        kshim::fput(f);
        return fd;
    }
    kshim::fd_install(fd, f);
    return fd;
}

long long handle(Conn* c, const Req& r, Msg* m, int* send_fd, int attached) {
    switch (r.op) {
    case Op::Open: {
        file* f = r.a < 0 ? kshim::sw_sync_open_file(static_cast<int>(r.flags))
                          : drm::drm_open_file(g_srv->ddev, r.a >= 128, static_cast<int>(r.flags));
        if (kshim::IS_ERR(f))
            return kshim::PTR_ERR(f);
        return install(f, r.flags);
    }
    case Op::Arena: *send_fd = kshim::page_arena_memfd(); return 0;
    case Op::Model: return &g_srv->world->machine()->model() - upanthor::host::gpu_models().data();
    case Op::Release: return entry_close_barrier(r.ino);
    case Op::ForkMaps: return fork_maps(c->pid, static_cast<kshim::u64>(r.a), r.b);
    case Op::ForkClaim: return fork_claim(c->pid, static_cast<unsigned long long>(r.a), static_cast<pid_t>(r.b));
    case Op::ForkDrop: return fork_drop(c->pid, static_cast<unsigned long long>(r.a));
    case Op::Munmap: {
        drm::VmArea* vma = process_take_vma(c->pid, static_cast<unsigned long long>(r.a));
        if (!vma)
            return -EINVAL;
        // The mapping's reference may be the file's last (its descriptors closed first).
        if (vma->vm_file && kshim::file_count(vma->vm_file) == 1) {
            std::fprintf(g_srv->out, "upanthor serve: pid %d: unmapped the last mapping of %s: %s\n", c->pid,
                         describe(vma->vm_file).c_str(), release_note(vma->vm_file).c_str());
            std::fflush(g_srv->out);
        }
        drm::drm_munmap(vma);
        return 0;
    }
    default: break;
    }
    file* f = lookup_sock(attached);
    if (!f)
        return -EBADF;
    long long ret = -EINVAL;
    switch (r.op) {
    case Op::Ioctl: {
        void* arg = reinterpret_cast<void*>(r.b);
        const unsigned cmd = static_cast<unsigned>(r.a);
        ret = -ENOIOCTLCMD;
        if (drm::drm_file* df = drm::drm_file_from(f))
            ret = drm_file_ioctl(df, cmd, arg, g_srv->mono_offset);
        if (ret == -ENOIOCTLCMD)
            ret = kshim::vfs_ioctl(f, cmd, static_cast<unsigned long>(r.b));
        break;
    }
    case Op::Read: ret = kshim::vfs_read(f, static_cast<kshim::u64>(r.a), static_cast<size_t>(r.b)); break;
    case Op::Minor: ret = file_minor(f); break;
    case Op::Fdinfo: {
        drm::drm_file* df = drm::drm_file_from(f);
        if (!df)
            break;
        char head[128];
        std::snprintf(head, sizeof(head), "pos:\t0\nflags:\t0%llo\nmnt_id:\t0\nino:\t0\n",
                      static_cast<unsigned long long>(r.a));
        const std::string text = std::string(head) + drm::drm_show_fdinfo(df);
        const int mfd = memfd_create("upanthor-fdinfo", MFD_CLOEXEC);
        if (mfd < 0 || write(mfd, text.data(), text.size()) != static_cast<ssize_t>(text.size()) ||
            lseek(mfd, 0, SEEK_SET) != 0) {
            ret = -ENOMEM;
            if (mfd >= 0)
                close(mfd);
            break;
        }
        *send_fd = mfd;
        ret = 0;
        break;
    }
    case Op::Mmap: {
        drm::VmArea* vma = nullptr;
        ret = drm::do_mmap(f, static_cast<kshim::u64>(r.a), static_cast<size_t>(r.b), static_cast<int>(r.c),
                           static_cast<int>(r.flags), &vma);
        if (ret)
            break;
        if (vma->addr) {
            m->v[0] = static_cast<long long>(kshim::virt_to_phys(vma->addr) - kshim::kPhysBase);
        } else {
            m->v[0] = -1;
            m->v[2] = drm::vma_read32(vma, 0);
        }
        m->v[1] = static_cast<long long>(reinterpret_cast<unsigned long long>(vma));
        process_add_vma(c->pid, vma);
        break;
    }
    default: break;
    }
    kshim::fput(f);
    return ret;
}

// Op::Hello: the connection's interrupt pipe, watched by the main loop.
long long conn_hello(Conn* c, int irq) {
    if (irq < 0)
        return -EINVAL;
    fcntl(irq, F_SETFL, O_NONBLOCK);
    Lock l;
    if (c->irq >= 0) {
        close(irq);
        return -EBUSY;
    }
    c->irq = irq;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kKeyIrq | c->id;
    epoll_ctl(g_srv->epfd, EPOLL_CTL_ADD, irq, &ev);
    return 0;
}

// The main loop: the interrupt pipe of connection `id` is readable. Each seq read interrupts
// that request if it is the one being served, or the next one if it has not started yet (the
// client wrote it before the server read the request). A hung-up pipe is no longer watched.
void conn_interrupt(unsigned long long id, unsigned events) {
    Lock l;
    auto it = g_srv->live.find(id);
    if (it == g_srv->live.end())
        return;
    Conn* c = it->second;
    unsigned long long seqs[16];
    ssize_t n;
    while ((n = read(c->irq, seqs, sizeof seqs)) > 0) {
        for (ssize_t i = 0; i < n / static_cast<ssize_t>(sizeof seqs[0]); i++) {
            if (seqs[i] > c->irq_seq)
                c->irq_seq = seqs[i];
            if (c->cur_seq && seqs[i] == c->cur_seq)
                kshim::signal_wake_up(c->task);
        }
    }
    if (n == 0 || (events & (EPOLLHUP | EPOLLERR))) {
        epoll_ctl(g_srv->epfd, EPOLL_CTL_DEL, c->irq, nullptr);
        close(c->irq);
        c->irq = -1;
    }
}

void serve_conn(int fd) {
    ucred cr{};
    socklen_t len = sizeof cr;
    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len);
    // Each message then carries its sender's credentials (checked per request).
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
    kshim::Task* task = host_task_attach("serve");
    Conn c;
    c.fd = fd;
    c.pid = cr.pid;
    c.uid = cr.uid;
    c.task = task;
    {
        Lock l;
        process_get_locked(c.pid);
        c.id = g_srv->next_id++;
        g_srv->live[c.id] = &c;
    }
    // The client process's table for the kernel code of each request (the numbers it installs
    // live in the client: the table only holds them until the request's end).
    kshim::files_struct table(0, &kOps, &c);
    kshim::uaccess_set_target(c.pid, &c.gate);
    {
        kshim::FilesScope scope(&table);
        for (;;) {
            Req r{};
            int stray = -1;
            ucred from{};
            const ssize_t n = remote::recv_with_fd(fd, &r, sizeof r, &stray, true, &from);
            if (n != static_cast<ssize_t>(sizeof r)) {
                if (stray >= 0)
                    close(stray);
                break;
            }
            // A new request: the previous one's interruption is over (the syscall layer's
            // delivery). A signal the client forwarded before the request got here still counts.
            kshim::clear_signal_pending(task);
            {
                Lock l;
                if (g_srv->stopping) {
                    if (stray >= 0)
                        close(stray);
                    break;
                }
                c.cur_seq = r.seq;
                if (r.seq && c.irq_seq == r.seq)
                    kshim::signal_wake_up(task);
            }
            Msg m{};
            m.kind = Kind::Reply;
            int send_fd = -1;
            if (from.pid != c.pid) {
                // Not the process that connected (a connection inherited or passed on): its
                // pointers are not in the memory the user copies reach. Refused.
                m.ret = -EPERM;
            } else if (r.op == Op::Hello) {
                m.ret = conn_hello(&c, stray);
                stray = -1;
            } else {
                // The request acts with the client process's credentials, as its syscall would.
                const ActAsCaller caller(c.pid, c.uid);
                m.ret = handle(&c, r, &m, &send_fd, stray);
            }
            if (stray >= 0)
                close(stray);
            {
                Lock l;
                c.cur_seq = 0;
            }
            kshim::close_files(&table);
            for (auto& [num, p] : c.pending)
                close(p.sock);
            c.pending.clear();
            const int sent = remote::send_with_fd(fd, &m, sizeof m, send_fd);
            if (send_fd >= 0 && r.op == Op::Fdinfo)
                close(send_fd);
            if (sent != 0)
                break;
        }
    }
    kshim::uaccess_set_target(0);
    {
        Lock l;
        std::erase(g_srv->conns, fd);
        g_srv->live.erase(c.id);
        if (c.irq >= 0) {
            epoll_ctl(g_srv->epfd, EPOLL_CTL_DEL, c.irq, nullptr);
            close(c.irq);
        }
    }
    host_task_detach(task);
    close(fd);
}

// ---- boot ----
bool boot(const ServeOptions& opts, std::FILE* err) {
    const upanthor::host::GpuModel* gm = upanthor::host::find_gpu_model(opts.gpu);
    if (!gm) {
        std::fprintf(err, "upanthor serve: --gpu %s: no such GPU model (models: %s)\n", opts.gpu.c_str(),
                     upanthor::host::gpu_model_names().c_str());
        return false;
    }
    if (kshim::page_arena_use_memfd() != 0) {
        std::fprintf(err, "upanthor serve: the page arena exists already without a memfd\n");
        return false;
    }
    // The clients' pointers, in the clients' memory.
    drm::uaccess_set_mode(drm::UaccessMode::ProcessVm);
    upanthor::host::World::Options wo;
    wo.runtime.mode = kshim::Mode::Real;
    if (!opts.trace.empty()) {
        wo.runtime.trace = true;
        wo.runtime.trace_path = opts.trace;
    }
    wo.machine.model = opts.gpu;
    auto* w = new upanthor::host::World(wo);
    if (const int ret = w->status()) {
        std::fprintf(err, "upanthor serve: %s failed: %s\n", w->failed_step().c_str(), std::strerror(-ret));
        delete w;
        return false;
    }
    g_srv->world = w;
    g_srv->ddev = w->machine()->drm_dev();
    g_srv->mono_offset = static_cast<long long>(kshim::host_monotonic_ns()) - kshim::ktime_get();
    return true;
}

int listen_on(const std::string& path, std::FILE* err) {
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path) {
        std::fprintf(err, "upanthor serve: socket path too long: %s\n", path.c_str());
        return -1;
    }
    std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    const int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one);
    unlink(path.c_str());
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, 64) != 0) {
        std::fprintf(err, "upanthor serve: %s: %s\n", path.c_str(), std::strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

}  // namespace

std::string serve_default_socket() {
    if (const char* d = std::getenv("XDG_RUNTIME_DIR"); d && *d)
        return std::string(d) + "/upanthor.sock";
    return "/tmp/upanthor-" + std::to_string(getuid()) + ".sock";
}

int serve_main(const ServeOptions& opts, std::FILE* out, std::FILE* err) {
    const std::string path = opts.socket.empty() ? serve_default_socket() : opts.socket;
    // Every thread (the runtime's too) leaves SIGTERM/SIGINT to the main loop's signalfd.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    signal(SIGPIPE, SIG_IGN);

    g_srv = new Server();
    g_srv->out = out;
    if (!boot(opts, err)) {
        delete g_srv;
        g_srv = nullptr;
        return 1;
    }
    g_srv->epfd = epoll_create1(EPOLL_CLOEXEC);
    const int lfd = listen_on(path, err);
    const int sfd = signalfd(-1, &stop, SFD_CLOEXEC);
    int status = 0;
    if (lfd < 0 || sfd < 0) {
        status = 1;
    } else {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = kKeyListen;
        epoll_ctl(g_srv->epfd, EPOLL_CTL_ADD, lfd, &ev);
        ev.data.u64 = kKeySignal;
        epoll_ctl(g_srv->epfd, EPOLL_CTL_ADD, sfd, &ev);
        std::fprintf(out, "upanthor serve: %s on %s (pid %d)\n", opts.gpu.c_str(), path.c_str(), getpid());
        std::fflush(out);
    }
    std::vector<std::thread> threads;
    bool running = status == 0;
    while (running) {
        epoll_event evs[16];
        const int n = epoll_wait(g_srv->epfd, evs, 16, -1);
        for (int i = 0; i < n; i++) {
            const unsigned long long key = evs[i].data.u64;
            if (key == kKeySignal) {
                running = false;
            } else if ((key & kKeyMask) == kKeyIrq) {
                conn_interrupt(key & ~kKeyMask, evs[i].events);
            } else if (key == kKeyListen) {
                const int c = accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
                if (c >= 0) {
                    {
                        Lock l;
                        g_srv->conns.push_back(c);
                    }
                    threads.emplace_back(serve_conn, c);
                }
            } else {
                Entry* e = nullptr;
                Process* p = nullptr;
                const unsigned long long id = key & ~kKeyMask;
                {
                    Lock l;
                    if ((key & kKeyMask) == kKeyEntry) {
                        // Gone already when a close barrier released it first.
                        if (auto it = g_srv->by_id.find(id); it != g_srv->by_id.end()) {
                            e = it->second;
                            entry_take_locked(e);
                        }
                    } else if (auto pt = g_srv->by_pidfd.find(static_cast<int>(id));
                               (key & kKeyMask) == kKeyPidfd && pt != g_srv->by_pidfd.end()) {
                        p = pt->second;
                        g_srv->by_pidfd.erase(pt);
                        if (auto pp = g_srv->procs.find(p->pid); pp != g_srv->procs.end() && pp->second == p)
                            g_srv->procs.erase(pp);
                    }
                }
                if (e) {
                    const unsigned long long ino = e->ino;
                    entry_release(e, true);
                    entry_released(ino);
                }
                if (p)
                    process_release(p, true);
            }
        }
    }
    // Stop: no new clients; every connection's calls fail (ENODEV in the client).
    if (lfd >= 0) {
        close(lfd);
        unlink(path.c_str());
    }
    // A connection thread asleep in the kernel (a long SYNCOBJ_WAIT) is interrupted as by a
    // signal: its interruptible sleep ends, and it finds the server stopping. The clients' memory
    // is closed to the requests first: a client whose connection drops sees its call fail at once
    // and moves on, while the request's copy-out would still be to come.
    {
        Lock l;
        g_srv->stopping = true;
        for (auto& [id, c] : g_srv->live)
            c->gate.close();
        for (int c : g_srv->conns)
            shutdown(c, SHUT_RDWR);
        for (auto& [id, c] : g_srv->live)
            kshim::signal_wake_up(c->task);
    }
    for (std::thread& t : threads)
        t.join();
    std::vector<Entry*> entries;
    std::vector<Process*> procs;
    {
        Lock l;
        for (auto& [id, e] : g_srv->by_id)
            entries.push_back(e);
        for (auto& [pid, p] : g_srv->procs)
            procs.push_back(p);
        g_srv->by_id.clear();
        g_srv->by_ino.clear();
        g_srv->procs.clear();
        g_srv->by_pidfd.clear();
    }
    for (Process* p : procs)
        process_release(p, false);
    for (Entry* e : entries)
        entry_release(e, false);
    if (sfd >= 0)
        close(sfd);
    close(g_srv->epfd);
    upanthor::host::CheckOptions checks;
    checks.drain_limit = kshim::NSEC_PER_SEC;
    const std::vector<upanthor::host::Problem> problems = g_srv->world->finish(checks);
    for (const upanthor::host::Problem& p : problems) {
        std::fprintf(err, "upanthor serve: %s\n", p.text.c_str());
        status = 1;
    }
    delete g_srv->world;
    delete g_srv;
    g_srv = nullptr;
    std::fprintf(out, "upanthor serve: stopped\n");
    std::fflush(out);
    return status;
}

}  // namespace upanthor::preload
