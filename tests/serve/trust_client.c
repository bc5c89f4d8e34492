/* The server serves only what a process holds (docs/preload.md "Two modes"): a request about a
 * file carries the client's descriptor, and a file is not named by the socket inode alone. A
 * child opens a render node and tells the parent its socket's inode; the parent, speaking the
 * wire protocol on a connection of its own (tools/preload/remote_proto.h), asks about that file
 * by inode with no descriptor, and with a socket of its own attached: EBADF both times, where its
 * own descriptor is answered. A connection used by a process other than the one that made it
 * (a forked child on its parent's connection) is refused: EPERM. Exit 0 on success. */
#include "serve_util.h" /* first: it sets _GNU_SOURCE (pipe2) */

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>

/* remote_proto.h's Req and Msg. */
struct req {
    uint32_t op, flags;
    uint64_t ino;
    int64_t a, b, c;
    uint64_t seq;
};
struct msg {
    uint32_t kind, flags;
    int64_t ret, a, v[3];
};
enum { OP_MINOR = 6, KIND_REPLY = 1 };

static int raw_connect(void) {
    const char* path = getenv("UPANTHOR_SERVER");
    REQUIRE(path);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    REQUIRE(s >= 0 && connect(s, (struct sockaddr*)&sa, sizeof sa) == 0);
    return s;
}

/* Op::Minor about `ino`, with `fd` attached (or none): the reply's ret. */
static int64_t raw_minor(int s, uint64_t ino, int fd) {
    struct req r = {.op = OP_MINOR, .ino = ino, .seq = 1};
    struct iovec iov = {.iov_base = &r, .iov_len = sizeof r};
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        mh.msg_control = cbuf;
        mh.msg_controllen = sizeof cbuf;
        struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    REQUIRE(sendmsg(s, &mh, 0) == (ssize_t)sizeof r);
    struct msg m;
    REQUIRE(recv(s, &m, sizeof m, 0) == (ssize_t)sizeof m && m.kind == KIND_REPLY);
    return m.ret;
}

static uint64_t ino_of(int fd) {
    struct stat st;
    REQUIRE(syscall(SYS_fstat, fd, &st) == 0); /* the socket's own, not the node the library shows */
    return st.st_ino;
}

int main(void) {
    int to_parent[2], to_child[2];
    REQUIRE(pipe2(to_parent, O_CLOEXEC) == 0 && pipe2(to_child, O_CLOEXEC) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
        REQUIRE(fd >= 0);
        uint64_t ino = ino_of(fd);
        REQUIRE(write(to_parent[1], &ino, sizeof ino) == sizeof ino);
        char b;
        REQUIRE(read(to_child[0], &b, 1) == 1);
        CHECK(close(fd) == 0);
        _exit(client_failures ? 1 : 0);
    }
    uint64_t theirs = 0;
    REQUIRE(read(to_parent[0], &theirs, sizeof theirs) == sizeof theirs);
    int mine = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(mine >= 0);
    const int s = raw_connect();
    /* Its own descriptor is answered. */
    CHECK(raw_minor(s, ino_of(mine), mine) == 128);
    /* The child's file, named by inode only, or with another socket attached: not served. */
    CHECK(raw_minor(s, theirs, -1) == -EBADF);
    int sp[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
    CHECK(raw_minor(s, theirs, sp[0]) == -EBADF);
    /* A forked child on the parent's connection, with a descriptor it holds: refused. */
    const pid_t second = fork();
    REQUIRE(second >= 0);
    if (second == 0)
        _exit(raw_minor(s, ino_of(mine), mine) == -EPERM ? 0 : 1);
    int status = 0;
    REQUIRE(waitpid(second, &status, 0) == second);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The connection still serves its own process. */
    CHECK(raw_minor(s, ino_of(mine), mine) == 128);

    CHECK(write(to_child[1], "p", 1) == 1);
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(sp[0]);
    close(sp[1]);
    close(s);
    CHECK(close(mine) == 0);
    return client_result("trust_client");
}
