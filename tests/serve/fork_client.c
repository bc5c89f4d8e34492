/* A client of `upanthor serve` whose descriptors outlive the process boundary: a forked child
 * advances the parent's sw_sync timeline through the inherited descriptor (the parent's fence
 * signals) and creates a syncobj in the parent's DRM file (the parent then destroys it); another
 * child gets the timeline over a UNIX socket (SCM_RIGHTS), dups it and advances it. The files
 * stay the parent's after the children exit. Exit 0 on success. */
#include "serve_util.h"

static int child_status(pid_t pid) {
    int st = 0;
    return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int fence_signalled(int fence, int ms) {
    struct pollfd p = {.fd = fence, .events = POLLIN};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

int main(void) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    int tl = open("/dev/sw_sync", O_RDWR);
    REQUIRE(tl >= 0);
    struct sw_sync_create_fence_data f1 = {.value = 1, .name = "one"};
    struct sw_sync_create_fence_data f2 = {.value = 2, .name = "two"};
    REQUIRE(ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &f1) == 0 && f1.fence >= 0);
    REQUIRE(ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &f2) == 0 && f2.fence >= 0);
    CHECK(!fence_signalled(f1.fence, 0));

    /* fork: the child's descriptors are the parent's files. */
    int pipefd[2];
    REQUIRE(pipe(pipefd) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        uint32_t one = 1, handle = 0;
        if (ioctl(tl, SW_SYNC_IOC_INC, &one) != 0) {
            fprintf(stderr, "child: SW_SYNC_IOC_INC: %s\n", strerror(errno));
            _exit(2);
        }
        if (drmSyncobjCreate(fd, 0, &handle) != 0) {
            fprintf(stderr, "child: SYNCOBJ_CREATE: %s\n", strerror(errno));
            _exit(3);
        }
        _exit(write(pipefd[1], &handle, sizeof handle) == sizeof handle ? 0 : 4);
    }
    CHECK(child_status(pid) == 0);
    CHECK(fence_signalled(f1.fence, 5000));
    CHECK(!fence_signalled(f2.fence, 0));
    uint32_t handle = 0;
    CHECK(read(pipefd[0], &handle, sizeof handle) == sizeof handle && handle != 0);
    CHECK(drmSyncobjDestroy(fd, handle) == 0);
    errno = 0;
    CHECK(drmSyncobjDestroy(fd, handle) == -EINVAL || errno == EINVAL);
    close(pipefd[0]);
    close(pipefd[1]);

    /* SCM_RIGHTS: a child that dropped its inherited copy gets the timeline over a socket. */
    int sp[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(tl);
        close(sp[0]);
        const int got = recv_fd(sp[1]);
        if (got < 0)
            _exit(2);
        const int d = dup(got);
        close(got);
        uint32_t one = 1;
        _exit(d >= 0 && ioctl(d, SW_SYNC_IOC_INC, &one) == 0 ? 0 : 3);
    }
    close(sp[1]);
    CHECK(send_fd(sp[0], tl) == 0);
    CHECK(child_status(pid) == 0);
    CHECK(fence_signalled(f2.fence, 5000));
    close(sp[0]);

    /* The parent's files are still there. */
    drmVersionPtr v = drmGetVersion(fd);
    CHECK(v != NULL);
    if (v)
        drmFreeVersion(v);
    struct sw_sync_create_fence_data f3 = {.value = 3, .name = "three"};
    CHECK(ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &f3) == 0 && f3.fence >= 0);
    close(f1.fence);
    close(f2.fence);
    close(f3.fence);
    close(tl);
    close(fd);
    return client_result("fork_client");
}
