// Descriptor passing for the server protocol (remote_proto.h). Raw system calls only: the
// library's interposed libc entry points must not be re-entered from here.
#include "tools/preload/remote_proto.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace upanthor::preload::remote {

int send_with_fd(int sock, const void* buf, size_t len, int fd) {
    iovec iov{const_cast<void*>(buf), len};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
    if (fd >= 0) {
        std::memset(cbuf, 0, sizeof cbuf);
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof cbuf;
        cmsghdr* c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    for (;;) {
        const long n = syscall(SYS_sendmsg, sock, &mh, MSG_NOSIGNAL);
        if (n >= 0)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

ssize_t recv_with_fd(int sock, void* buf, size_t len, int* fd, bool cloexec, ucred* cred) {
    *fd = -1;
    if (cred)
        *cred = ucred{};
    iovec iov{buf, len};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(ucred))];
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    long n;
    for (;;) {
        n = syscall(SYS_recvmsg, sock, &mh, cloexec ? MSG_CMSG_CLOEXEC : 0);
        if (n >= 0)
            break;
        if (errno != EINTR)
            return -errno;
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET)
            continue;
        if (c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            // One is expected; any more are closed.
            const size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < n; i++) {
                int got;
                std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
                if (*fd < 0)
                    *fd = got;
                else
                    syscall(SYS_close, got);
            }
        } else if (c->cmsg_type == SCM_CREDENTIALS && cred && c->cmsg_len >= CMSG_LEN(sizeof(ucred))) {
            std::memcpy(cred, CMSG_DATA(c), sizeof(ucred));
        }
    }
    return n;
}

}  // namespace upanthor::preload::remote
