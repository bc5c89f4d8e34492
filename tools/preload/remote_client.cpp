// The thin client of `upanthor serve` (remote_client.h).
//
// Each client thread has its own connection to the server (a request and its call backs are one
// conversation), made on its first call and again in a forked child (the inherited one belongs
// to the parent's thread). A call made while the thread's connection is busy (a signal handler
// calling in the middle of a request) takes a connection of its own for that call.
//
// A descriptor is the server's when it is a stream socket whose peer credentials (a
// socketpair's: its creator) are the server's pid; no table is needed, so one inherited or
// received over a socket works as well as one opened here.
#include "tools/preload/remote_client.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "tools/preload/client_mapping.h"
#include "tools/preload/fake_fs.h"
#include "tools/preload/libc_next.h"
#include "tools/preload/remote_proto.h"
#include "tools/preload/signals.h"

namespace upanthor::preload {

using remote::Kind;
using remote::Msg;
using remote::Op;
using remote::Req;

namespace {

const char* server_path() {
    static const char* p = [] {
        const char* s = std::getenv("UPANTHOR_SERVER");
        return s && *s ? s : nullptr;
    }();
    return p;
}

std::atomic<int> g_server_pid{0};
std::atomic<int> g_ptracer_pid{0};  // the process that allowed the server to read its memory
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
int g_arena = -1;  // under g_lock; inherited by a forked child, as the mappings are
struct Map {
    size_t len;
    long long id;
    pid_t pid;  // the process whose mapping `id` is (a fork's copy the child could not claim:
                // the parent's, and it holds no reference)
};
std::map<void*, Map>* g_maps = new std::map<void*, Map>();  // under g_lock

int fail(int err) {
    errno = err;
    return -1;
}

int connect_server() {
    const char* path = server_path();
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (!path || std::strlen(path) >= sizeof sa.sun_path)
        return -ENODEV;
    std::strcpy(sa.sun_path, path);
    const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        libc().close(fd);
        return -ENODEV;
    }
    ucred cr{};
    socklen_t len = sizeof cr;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0)
        g_server_pid.store(cr.pid, std::memory_order_release);
    // The server copies the ioctl arguments from and to this process (process_vm_readv/writev):
    // under Yama's ptrace_scope 1 only a declared tracer may.
    if (g_ptracer_pid.exchange(getpid()) != getpid())
        prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    return fd;
}

struct Conn {
    int fd = -1;
    int irq = -1;  // the write end of the connection's interrupt pipe (Op::Hello)
    pid_t pid = 0;
    bool busy = false;
    unsigned long long seq = 0;  // the last request's number
    ~Conn() {
        if (pid == getpid()) {
            if (fd >= 0)
                libc().close(fd);
            if (irq >= 0)
                libc().close(irq);
        }
    }
};
thread_local Conn t_conn;
// The request this thread waits for, for the signal trampoline (remote_interrupt): its
// connection's interrupt pipe and seq (0: none). Static TLS, safe to read in a handler.
thread_local volatile int t_wait_irq = -1;
thread_local volatile unsigned long long t_wait_seq = 0;

// The conversation of one request: call backs answered until the reply. -errno, or the reply's
// ret (*reply filled, *fd_out the attached descriptor or -1).
long long converse(int sock, const Req& r, Msg* reply, int* fd_out, int attach) {
    if (remote::send_with_fd(sock, &r, sizeof r, attach) != 0)
        return -ENODEV;
    for (;;) {
        Msg m{};
        int fd = -1;
        const ssize_t n = remote::recv_with_fd(sock, &m, sizeof m, &fd, true);
        if (n != static_cast<ssize_t>(sizeof m)) {
            if (fd >= 0)
                libc().close(fd);
            return -ENODEV;
        }
        Req a{};
        a.op = Op::Answer;
        switch (m.kind) {
        case Kind::Reply:
            *reply = m;
            if (fd_out)
                *fd_out = fd;
            else if (fd >= 0)
                libc().close(fd);
            return m.ret;
        case Kind::InstallFd:
            // Received close-on-exec; the kernel's get_unused_fd_flags honours O_CLOEXEC only.
            if (fd >= 0 && !(m.flags & O_CLOEXEC))
                libc().fcntl(fd, F_SETFD, 0);
            a.a = fd >= 0 ? fd : -EMFILE;
            if (remote::send_with_fd(sock, &a, sizeof a, -1) != 0)
                return -ENODEV;
            break;
        case Kind::GetFd: {
            const int want = static_cast<int>(m.a);
            const bool open = want >= 0 && libc().fcntl(want, F_GETFD) >= 0;
            a.a = open ? 0 : -EBADF;
            if (remote::send_with_fd(sock, &a, sizeof a, open ? want : -1) != 0)
                return -ENODEV;
            break;
        }
        case Kind::CloseFd: libc().close(static_cast<int>(m.a)); break;
        }
        if (fd >= 0 && m.kind != Kind::InstallFd)
            libc().close(fd);
    }
}

// The connection's interrupt pipe: the read end goes to the server (Op::Hello), the write end
// stays in c->irq. Without it the connection works, and signals do not interrupt its requests.
void hello(Conn* c) {
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0)
        return;
    Req r{};
    r.op = Op::Hello;
    r.seq = ++c->seq;
    Msg m{};
    long long ret = -ENODEV;
    if (remote::send_with_fd(c->fd, &r, sizeof r, p[0]) == 0) {
        int fd = -1;
        if (remote::recv_with_fd(c->fd, &m, sizeof m, &fd, true) == static_cast<ssize_t>(sizeof m) &&
            m.kind == Kind::Reply)
            ret = m.ret;
        if (fd >= 0)
            libc().close(fd);
    }
    libc().close(p[0]);
    if (ret == 0)
        c->irq = p[1];
    else
        libc().close(p[1]);
}

// `attach`: the descriptor a request is about (the server takes the file from it), or -1.
long long call(const Req& r0, Msg* reply, int* fd_out = nullptr, int attach = -1) {
    Conn& c = t_conn;
    Req r = r0;
    if (c.busy) {
        // Re-entered (a signal handler): a connection for this call alone.
        const int fd = connect_server();
        if (fd < 0)
            return -ENODEV;
        const long long ret = converse(fd, r, reply, fd_out, attach);
        libc().close(fd);
        return ret;
    }
    if (c.fd >= 0 && c.pid != getpid()) {
        libc().close(c.fd);  // the parent's thread's, inherited by fork
        c.fd = -1;
        if (c.irq >= 0)
            libc().close(c.irq);
        c.irq = -1;
    }
    if (c.fd < 0) {
        c.fd = connect_server();
        c.pid = getpid();
        c.seq = 0;
        if (c.fd < 0) {
            c.fd = -1;
            return -ENODEV;
        }
        hello(&c);
    }
    c.busy = true;
    r.seq = ++c.seq;
    t_wait_irq = c.irq;
    t_wait_seq = r.seq;
    const long long ret = converse(c.fd, r, reply, fd_out, attach);
    t_wait_seq = 0;
    c.busy = false;
    if (ret == -ENODEV) {
        // The server is gone (or the conversation broke): the next call connects again.
        libc().close(c.fd);
        c.fd = -1;
        if (c.irq >= 0)
            libc().close(c.irq);
        c.irq = -1;
    }
    return ret;
}

// One of the server's descriptors: *ino names it in requests.
bool server_fd(int fd, unsigned long long* ino) {
    if (fd < 0)
        return false;
    struct stat st {};
    if (libc().fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return false;
    int spid = g_server_pid.load(std::memory_order_acquire);
    if (!spid) {
        // A process that never called the server yet (it received the descriptor).
        const int c = connect_server();
        if (c >= 0)
            libc().close(c);
        spid = g_server_pid.load(std::memory_order_acquire);
    }
    ucred cr{};
    socklen_t len = sizeof cr;
    int type = 0;
    socklen_t tlen = sizeof type;
    if (!spid || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || cr.pid != spid ||
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) != 0 || type != SOCK_STREAM)
        return false;
    *ino = st.st_ino;
    return true;
}

int arena_fd() {
    pthread_mutex_lock(&g_lock);
    int fd = g_arena;
    pthread_mutex_unlock(&g_lock);
    if (fd >= 0)
        return fd;
    Req r{};
    r.op = Op::Arena;
    Msg m{};
    int got = -1;
    const long long ret = call(r, &m, &got);
    if (ret < 0 || got < 0)
        return ret < 0 ? static_cast<int>(ret) : -ENODEV;
    pthread_mutex_lock(&g_lock);
    if (g_arena < 0) {
        g_arena = got;
        got = -1;
    }
    fd = g_arena;
    pthread_mutex_unlock(&g_lock);
    if (got >= 0)
        libc().close(got);
    return fd;
}

}  // namespace

bool remote_mode() {
    return server_path() != nullptr;
}

int remote_open(int minor, int flags) {
    Req r{};
    r.op = Op::Open;
    r.a = minor;
    r.flags = static_cast<uint32_t>(flags);
    Msg m{};
    const long long ret = call(r, &m);
    return ret < 0 ? fail(static_cast<int>(-ret)) : static_cast<int>(ret);
}

int remote_ioctl(int fd, unsigned long request, void* arg) {
    unsigned long long ino;
    if (!server_fd(fd, &ino))
        return libc().ioctl(fd, request, arg);
    Req r{};
    r.op = Op::Ioctl;
    r.ino = ino;
    r.a = static_cast<long long>(static_cast<unsigned>(request));
    r.b = reinterpret_cast<long long>(arg);
    // A signal during the call interrupts the server's sleep (remote_interrupt); -ERESTARTSYS
    // comes back, and the call restarts or fails with EINTR as in-process.
    const int ret = driver_call([&] {
        Msg m{};
        return static_cast<int>(call(r, &m, nullptr, fd));
    });
    return ret < 0 ? fail(-ret) : ret;
}

ssize_t remote_read(int fd, void* buf, size_t count) {
    unsigned long long ino;
    if (!server_fd(fd, &ino))
        return libc().read(fd, buf, count);
    Req r{};
    r.op = Op::Read;
    r.ino = ino;
    r.a = reinterpret_cast<long long>(buf);
    r.b = static_cast<long long>(count);
    const int ret = driver_call([&] {
        Msg m{};
        return static_cast<int>(call(r, &m, nullptr, fd));
    });
    return ret < 0 ? fail(-ret) : static_cast<ssize_t>(ret);
}

void* remote_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
    unsigned long long ino;
    if (!server_fd(fd, &ino))
        return libc().mmap(addr, len, prot, flags, fd, off);
    const int arena = arena_fd();
    if (arena < 0) {
        errno = -arena;
        return MAP_FAILED;
    }
    Req r{};
    r.op = Op::Mmap;
    r.ino = ino;
    r.a = off;
    r.b = static_cast<long long>(len);
    r.c = prot;
    r.flags = static_cast<uint32_t>(flags);
    Msg m{};
    const long long ret = call(r, &m, nullptr, fd);
    if (ret < 0) {
        errno = static_cast<int>(-ret);
        return MAP_FAILED;
    }
    // The BO's pages: that part of the server's arena memfd; an I/O page: the word the server read.
    void* p = map_client_side(addr, len, prot, flags, arena, static_cast<off_t>(m.v[0]), static_cast<unsigned>(m.v[2]));
    if (p == MAP_FAILED) {
        const int err = errno;
        Req u{};
        u.op = Op::Munmap;
        u.a = m.v[1];
        Msg um{};
        call(u, &um);
        errno = err;
        return MAP_FAILED;
    }
    pthread_mutex_lock(&g_lock);
    (*g_maps)[p] = Map{len, m.v[1], getpid()};
    pthread_mutex_unlock(&g_lock);
    return p;
}

int remote_munmap(void* addr, size_t len) {
    Map mp{};
    bool found = false;
    pthread_mutex_lock(&g_lock);
    if (auto it = g_maps->find(addr); it != g_maps->end()) {
        mp = it->second;
        found = true;
        g_maps->erase(it);
    }
    pthread_mutex_unlock(&g_lock);
    const int ret = libc().munmap(addr, len);
    if (found && mp.pid == getpid()) {
        const int err = errno;
        Req u{};
        u.op = Op::Munmap;
        u.a = mp.id;
        Msg m{};
        call(u, &m);
        errno = err;
    }
    return ret;
}

namespace {
void release_barrier(unsigned long long ino) {
    const int err = errno;
    Req r{};
    r.op = Op::Release;
    r.ino = ino;
    Msg m{};
    call(r, &m);
    errno = err;
}
}  // namespace

int remote_close(int fd) {
    unsigned long long ino;
    const bool ours = server_fd(fd, &ino);
    const int ret = libc().close(fd);
    if (ours && ret == 0)
        release_barrier(ino);
    return ret;
}

int remote_dup_onto(int oldfd, int newfd, int flags, bool is_dup3) {
    unsigned long long ino;
    const bool ours = oldfd != newfd && server_fd(newfd, &ino);
    const int ret = is_dup3 ? libc().dup3(oldfd, newfd, flags) : libc().dup2(oldfd, newfd);
    if (ours && ret >= 0)
        release_barrier(ino);
    return ret;
}

int remote_minor(int fd) {
    unsigned long long ino;
    if (!server_fd(fd, &ino))
        return -1;
    Req r{};
    r.op = Op::Minor;
    r.ino = ino;
    Msg m{};
    const long long minor = call(r, &m, nullptr, fd);
    return minor >= 0 ? static_cast<int>(minor) : -1;
}

int remote_fstat(int fd, struct stat* st) {
    const int minor = remote_minor(fd);
    if (minor >= 0) {
        node_stat(minor, st);
        return 0;
    }
    return libc().fstat(fd, st);
}

int remote_open_fdinfo(int fd, int flags) {
    unsigned long long ino;
    if (!server_fd(fd, &ino))
        return -1;
    const int err = errno;
    Req r{};
    r.op = Op::Fdinfo;
    r.ino = ino;
    const int fl = libc().fcntl(fd, F_GETFL);
    r.a = fl < 0 ? 0 : fl;
    Msg m{};
    int got = -1;
    if (call(r, &m, &got, fd) < 0 || got < 0) {
        errno = err;
        return -1;
    }
    if (!(flags & O_CLOEXEC))
        libc().fcntl(got, F_SETFD, 0);
    return got;
}

int remote_model() {
    Req r{};
    r.op = Op::Model;
    Msg m{};
    return static_cast<int>(call(r, &m));
}

pid_t remote_fork() {
    // g_lock is held across the fork so that the child's copy of the table is whole (and the
    // mappings it lists are those the server copied).
    pthread_mutex_lock(&g_lock);
    const pid_t parent = getpid();
    std::vector<unsigned long long> ids;
    std::vector<void*> addrs;
    for (auto& [addr, mp] : *g_maps) {
        if (mp.pid == parent) {
            ids.push_back(static_cast<unsigned long long>(mp.id));
            addrs.push_back(addr);
        }
    }
    long long token = 0;
    if (!ids.empty()) {
        Req r{};
        r.op = Op::ForkMaps;
        r.a = reinterpret_cast<long long>(ids.data());
        r.b = static_cast<long long>(ids.size());
        Msg m{};
        token = call(r, &m);  // on failure the child's copies hold nothing, as before
    }
    const pid_t pid = libc().fork();
    const int err = errno;
    if (pid == 0) {
        if (token > 0) {
            Req r{};
            r.op = Op::ForkClaim;
            r.a = token;
            r.b = parent;
            Msg m{};
            if (call(r, &m) == 0) {
                for (size_t i = 0; i < ids.size(); i++) {
                    if (!ids[i])
                        continue;
                    Map& mp = (*g_maps)[addrs[i]];
                    mp.id = static_cast<long long>(ids[i]);
                    mp.pid = getpid();
                }
            }
        }
        pthread_mutex_unlock(&g_lock);
        errno = err;
        return 0;
    }
    pthread_mutex_unlock(&g_lock);
    if (pid < 0 && token > 0) {
        Req r{};
        r.op = Op::ForkDrop;
        r.a = token;
        Msg m{};
        call(r, &m);
    }
    errno = err;
    return pid;
}

void remote_interrupt() {
    const unsigned long long seq = t_wait_seq;
    const int irq = t_wait_irq;
    if (seq && irq >= 0) {
        const int err = errno;
        (void)!syscall(SYS_write, irq, &seq, sizeof seq);
        errno = err;
    }
}

bool remote_is_arena(int fd) {
    if (fd < 0)
        return false;
    pthread_mutex_lock(&g_lock);
    const bool is = fd == g_arena;
    pthread_mutex_unlock(&g_lock);
    return is;
}

}  // namespace upanthor::preload
