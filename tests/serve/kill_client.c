/* A client of `upanthor serve` killed with SIGKILL while its jobs are in flight: a child runs a
 * job to completion, then queues jobs behind a sw_sync fence that never signals, keeps its BO
 * mapped, and is killed. The server releases its files as the kernel does on exit (the mapping
 * goes with the process, the DRM file's drm_release destroys the group and cancels its jobs, the
 * timeline's release signals its fence with an error) and says so, one line per file; the
 * parent, another client, runs its own job before and after. Leaks fail the server at exit
 * (with_server.sh). Exit 0 on success. */
#include "serve_util.h"

static uint32_t run_store(struct gpu_ctx* g, unsigned slot, uint32_t value) {
    uint32_t done = 0;
    REQUIRE(drmSyncobjCreate(g->fd, 0, &done) == 0);
    CHECK(gpu_submit_store(g, slot, value, 0, done) == 0);
    CHECK(drmSyncobjWait(g->fd, &done, 1, now_ns() + 5000000000ll, 0, NULL) == 0);
    drmSyncobjDestroy(g->fd, done);
    return *(volatile uint32_t*)(g->cpu + 0x10000 + 4 * slot);
}

static void victim(int ready) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct gpu_ctx g;
    gpu_ctx_init(&g, fd);
    CHECK(run_store(&g, 0, 0x11111111u) == 0x11111111u);
    int tl = open("/dev/sw_sync", O_RDWR | O_CLOEXEC);
    REQUIRE(tl >= 0);
    struct sw_sync_create_fence_data never = {.value = 1, .name = "never"};
    REQUIRE(ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &never) == 0);
    uint32_t gate = 0;
    REQUIRE(drmSyncobjCreate(fd, 0, &gate) == 0);
    REQUIRE(drmSyncobjImportSyncFile(fd, gate, never.fence) == 0);
    for (unsigned i = 1; i <= 8; i++) {
        uint32_t done = 0;
        REQUIRE(drmSyncobjCreate(fd, 0, &done) == 0);
        CHECK(gpu_submit_store(&g, i, 0x22222222u, gate, done) == 0);
    }
    const char c = 'r';
    REQUIRE(write(ready, &c, 1) == 1);
    for (;;)
        pause();
}

int main(void) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct gpu_ctx mine;
    gpu_ctx_init(&mine, fd);
    CHECK(run_store(&mine, 0, 0xaaaa0001u) == 0xaaaa0001u);

    int pipefd[2];
    REQUIRE(pipe(pipefd) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        close(pipefd[0]);
        victim(pipefd[1]);
        _exit(1);
    }
    close(pipefd[1]);
    char c = 0;
    REQUIRE(read(pipefd[0], &c, 1) == 1);
    REQUIRE(kill(pid, SIGKILL) == 0);
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st));
    printf("killed pid %d with its jobs in flight\n", pid);

    char who[32];
    snprintf(who, sizeof who, "pid %d: ", pid);
    CHECK(server_log_has(who, "renderD128: released (drm_release)", 20000));
    CHECK(server_log_has(who, "sw_sync: released", 20000));
    /* Its own mapping and its copy of the parent's (a fork's copy holds a reference). */
    CHECK(server_log_has(who, "exited: 2 mappings dropped", 20000));

    /* The other client goes on. */
    CHECK(run_store(&mine, 1, 0xaaaa0002u) == 0xaaaa0002u);
    munmap(mine.cpu, mine.size);
    close(fd);
    return client_result("kill_client");
}
