/* Two processes of `upanthor serve` sharing a BO through PRIME and a syncobj through its
 * descriptor: the first writes the BO through its mapping and exports both; the second (a child
 * that drops everything it inherited and opens its own render node) gets the two descriptors over
 * a UNIX socket, imports them, reads the first's data through its own mapping (of the GEM handle
 * and of the dma-buf), writes an answer, and signals the syncobj, which the first then sees. Exit 0
 * on success. */
#include "serve_util.h"

#define BO_SIZE (64 * 1024)

static int second(int sock) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const int dmabuf = recv_fd(sock);
    const int sobj = recv_fd(sock);
    REQUIRE(dmabuf >= 0 && sobj >= 0);
    uint32_t h = 0;
    REQUIRE(drmPrimeFDToHandle(fd, dmabuf, &h) == 0 && h != 0);
    uint32_t* p = bo_map(fd, h, BO_SIZE);
    CHECK(p[0] == 0x5a5a5a5au && p[BO_SIZE / 4 - 1] == 0xa5a5a5a5u);
    p[100] = 0x0c0ffee0u;
    uint32_t* q = mmap(NULL, BO_SIZE, PROT_READ, MAP_SHARED, dmabuf, 0);
    CHECK(q != MAP_FAILED && q[0] == 0x5a5a5a5au && q[100] == 0x0c0ffee0u);
    if (q != MAP_FAILED)
        CHECK(munmap(q, BO_SIZE) == 0);
    CHECK(munmap(p, BO_SIZE) == 0);
    uint32_t s = 0;
    REQUIRE(drmSyncobjFDToHandle(fd, sobj, &s) == 0 && s != 0);
    CHECK(drmSyncobjSignal(fd, &s, 1) == 0);
    close(dmabuf);
    close(sobj);
    close(fd);
    return __atomic_load_n(&client_failures, __ATOMIC_RELAXED) ? 1 : 0;
}

int main(void) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const uint32_t bo = bo_create(fd, BO_SIZE);
    uint32_t* cpu = bo_map(fd, bo, BO_SIZE);
    for (int i = 0; i < BO_SIZE / 4; i++)
        cpu[i] = i < BO_SIZE / 8 ? 0x5a5a5a5au : 0xa5a5a5a5u;
    int dmabuf = -1, sobj = -1;
    REQUIRE(drmPrimeHandleToFD(fd, bo, DRM_CLOEXEC | DRM_RDWR, &dmabuf) == 0 && dmabuf >= 0);
    uint32_t s = 0;
    REQUIRE(drmSyncobjCreate(fd, 0, &s) == 0);
    REQUIRE(drmSyncobjHandleToFD(fd, s, &sobj) == 0 && sobj >= 0);

    int sp[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        /* Nothing of the first process's: its files and its mapping go. */
        munmap(cpu, BO_SIZE);
        close(fd);
        close(dmabuf);
        close(sobj);
        close(sp[0]);
        _exit(second(sp[1]));
    }
    close(sp[1]);
    CHECK(send_fd(sp[0], dmabuf) == 0);
    CHECK(send_fd(sp[0], sobj) == 0);
    int st = 0;
    CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(cpu[100] == 0x0c0ffee0u);
    CHECK(drmSyncobjWait(fd, &s, 1, now_ns() + 1000000000ll, 0, NULL) == 0);
    close(sp[0]);
    close(dmabuf);
    close(sobj);
    drmSyncobjDestroy(fd, s);
    CHECK(munmap(cpu, BO_SIZE) == 0);
    close(fd);
    return client_result("share_client");
}
