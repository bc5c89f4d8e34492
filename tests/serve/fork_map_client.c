/* A forked child's copy of a BO mapping holds a reference of its own, as the kernel's copy of a
 * VMA does (vm_ops->open): the parent maps a BO, forks, then unmaps it, closes the GEM handle and
 * its DRM file; the file is not released (the server's log says the close left it held by one
 * other reference), the child still reads and writes the BO through its copy, and the child's
 * munmap is what releases the file (drm_release). Exit 0 on success. */
#include "serve_util.h"

#define BO_SIZE (64 * 1024)

int main(void) {
    const char* log = getenv("UPANTHOR_SERVER_LOG");
    REQUIRE(log);
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    const uint32_t bo = bo_create(fd, BO_SIZE);
    uint8_t* cpu = bo_map(fd, bo, BO_SIZE);
    memset(cpu, 0xa5, BO_SIZE);

    int to_child[2], to_parent[2];
    REQUIRE(pipe2(to_child, O_CLOEXEC) == 0 && pipe2(to_parent, O_CLOEXEC) == 0);
    const pid_t child = fork();
    REQUIRE(child >= 0);
    char b = 0;
    if (child == 0) {
        /* Only the mapping keeps the parent's file: the inherited descriptor goes. */
        CHECK(close(fd) == 0);
        CHECK(write(to_parent[1], "c", 1) == 1);
        REQUIRE(read(to_child[0], &b, 1) == 1);
        int same = 1;
        for (int i = 0; i < BO_SIZE; i++)
            same &= cpu[i] == 0xa5;
        CHECK(same);
        memset(cpu, 0x5a, BO_SIZE);
        same = 1;
        for (int i = 0; i < BO_SIZE; i++)
            same &= cpu[i] == 0x5a;
        CHECK(same);
        char want[80];
        snprintf(want, sizeof want, "pid %d: unmapped the last mapping of /dev/dri/renderD128", (int)getpid());
        CHECK(!server_log_scan(log, want, "released"));
        CHECK(munmap(cpu, BO_SIZE) == 0);
        CHECK(server_log_has(want, "released (drm_release): 0 GEM handles", 30000));
        _exit(client_failures ? 1 : 0);
    }
    REQUIRE(read(to_parent[0], &b, 1) == 1);
    CHECK(munmap(cpu, BO_SIZE) == 0);
    struct drm_gem_close gc = {.handle = bo};
    CHECK(drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &gc) == 0);
    CHECK(close(fd) == 0);
    /* The close barrier: the line is there when close returns. */
    char want[64];
    snprintf(want, sizeof want, "pid %d: closed /dev/dri/renderD128", (int)getpid());
    CHECK(server_log_scan(log, want, "still held by 1 other references"));
    CHECK(!server_log_scan(log, want, "released"));
    CHECK(write(to_child[1], "p", 1) == 1);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return client_result("fork_map_client");
}
