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

ssize_t recv_with_fd(int sock, void* buf, size_t len, int* fd, bool cloexec) {
    *fd = -1;
    iovec iov{buf, len};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
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
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(sizeof(int)))
            std::memcpy(fd, CMSG_DATA(c), sizeof(int));
    }
    return n;
}

}  // namespace upanthor::preload::remote
