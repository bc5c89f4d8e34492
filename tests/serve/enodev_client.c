/* A client of `upanthor serve` whose server goes away: once the server stopped (SIGTERM), the
 * client's descriptors hang up and every call on them, and every new open, fails with ENODEV.
 * Closing them still works. Exit 0 on success. */
#include "serve_util.h"

int main(void) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    int tl = open("/dev/sw_sync", O_RDWR | O_CLOEXEC);
    REQUIRE(tl >= 0);
    drmVersionPtr v = drmGetVersion(fd);
    CHECK(v != NULL);
    if (v)
        drmFreeVersion(v);
    const pid_t server = server_pid();
    REQUIRE(server > 0);
    REQUIRE(kill(server, SIGTERM) == 0);
    /* The server's end of the descriptor goes when it stops. */
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    CHECK(poll(&p, 1, 30000) == 1 && (p.revents & (POLLHUP | POLLRDHUP)));

    errno = 0;
    CHECK(drmIoctl(fd, DRM_IOCTL_VERSION, &(struct drm_version){0}) == -1 && errno == ENODEV);
    uint32_t one = 1;
    errno = 0;
    CHECK(ioctl(tl, SW_SYNC_IOC_INC, &one) == -1 && errno == ENODEV);
    errno = 0;
    CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED && errno == ENODEV);
    errno = 0;
    CHECK(open("/dev/dri/renderD128", O_RDWR) == -1 && errno == ENODEV);
    CHECK(close(tl) == 0);
    CHECK(close(fd) == 0);
    return client_result("enodev_client");
}
