// The wire protocol between `upanthor serve` (server_main.h) and the preload library's thin
// client (remote_client.h), on a SOCK_SEQPACKET connection per client thread.
//
// DOC: Every server-side `struct file` a client process holds is a socketpair: the server keeps
// one end, the client's descriptor IS the other end (passed with SCM_RIGHTS). So fork, dup, close,
// close-on-exec and passing over a UNIX socket are the host kernel's, and the server sees the
// hang-up when the last descriptor of any process goes. A request about a file carries the
// client's descriptor itself (SCM_RIGHTS): the server takes it as the file's only when it is the
// socket the server gave out (its SO_COOKIE, unique for the boot), so a process cannot name a
// file it holds no descriptor to. (The inode in the request is only Op::Release's, which names a
// descriptor already closed and can do nothing but finish that file's release.) The client knows
// a descriptor is one of those (rather than any socket) by its peer: a socketpair's SO_PEERCRED
// is its creator, the server's pid. Every request also carries its sender's credentials
// (SO_PASSCRED); the server serves only the process that made the connection (the one whose
// memory its user copies reach).
//
// A request is a Req; the server answers with a Msg of kind Reply. While it serves one, the server
// may call back (the kernel handing out a descriptor, or looking one up): InstallFd carries a new
// socket end (the client answers with the number it got), GetFd asks for a descriptor of the
// client (the answer carries it, or an error). User pointers in requests are the client's: the
// server reads and writes them with process_vm_readv/writev.
#pragma once
#include <sys/socket.h>
#include <sys/types.h>

#include <cstdint>

namespace upanthor::preload::remote {

enum class Op : uint32_t {
    Open = 1,        // a = minor (0, 128) or -1 for sw_sync, flags: open flags. ret: fd
    Ioctl = 2,       // ino, a = cmd, b = arg (pointer)
    Read = 3,        // ino, a = buf, b = count
    Mmap = 4,        // ino, a = offset, b = length, c = prot, flags = mmap flags.
                     // ret 0, v[0] = arena offset or -1 (I/O page), v[1] = mapping id, v[2] = word 0
    Munmap = 5,      // a = mapping id
    Minor = 6,       // ino. ret: the node minor of a DRM file, -1 for another kind
    Arena = 7,       // ret 0 with the arena memfd attached
    Answer = 8,      // the client's answer to a call back: a = fd number or -errno
    Fdinfo = 9,      // ino, a = the descriptor's F_GETFL. ret 0 with a memfd of the text attached
    Model = 10,      // ret: the server's GPU model, an index into host::gpu_models()
    Release = 11,    // ino of a descriptor the client just closed: returns once the server has
                     // dropped the file's reference if that was the last descriptor (the close
                     // barrier: the kernel's last fput finishes before close(2) returns). ret 0
    ForkMaps = 12,   // before fork(2): a = pointer to b mapping ids of the caller; the server
                     // copies each mapping (as dup_mmap does, a reference of its own) into a
                     // reserve, writes the copies' ids over the array (0: no such mapping).
                     // ret: the reserve's token (> 0)
    ForkClaim = 13,  // the child, right after fork: a = the token, b = the parent's pid. The
                     // reserve's mappings become the caller's. ret 0, or -errno (-ESRCH: gone)
    ForkDrop = 14,   // the parent when fork failed: a = the token. ret 0
    Hello = 15,      // the connection's interrupt pipe (its read end attached): the client
                     // writes a request's seq (8 bytes) to it when a signal reaches the thread
                     // waiting for that request; the server then interrupts the request's
                     // kernel task (signal_wake_up: an interruptible sleep ends with
                     // -ERESTARTSYS, which the client turns into EINTR or a restart). ret 0
};

enum class Kind : uint32_t {
    Reply = 1,
    InstallFd = 2,  // a socket end attached; flags: O_CLOEXEC asked
    GetFd = 3,      // a = the client's descriptor number to send
    CloseFd = 4,    // a = a number InstallFd gave that the kernel put back unused: close it
};

struct Req {
    Op op;
    uint32_t flags;
    uint64_t ino;
    int64_t a, b, c;
    uint64_t seq;  // the connection's request number, from 1 (Op::Hello's interrupts name it)
};

struct Msg {
    Kind kind;
    uint32_t flags;
    int64_t ret;
    int64_t a;
    int64_t v[3];
};

// sendmsg of `len` bytes with `fd` attached (fd < 0: none). 0 or -errno. MSG_NOSIGNAL.
int send_with_fd(int sock, const void* buf, size_t len, int fd);
// recvmsg of at most `len` bytes; *fd gets an attached descriptor (or -1), received with
// MSG_CMSG_CLOEXEC when cloexec; *cred (if given) the sender's credentials when the socket has
// SO_PASSCRED (pid 0 when none came). Bytes received (0: hang-up) or -errno. EINTR is retried.
ssize_t recv_with_fd(int sock, void* buf, size_t len, int* fd, bool cloexec, struct ucred* cred = nullptr);

}  // namespace upanthor::preload::remote
