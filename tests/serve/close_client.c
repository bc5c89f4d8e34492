/* close(2) of a server descriptor is done when it returns (docs/preload.md "Two modes"): as the
 * kernel's last fput finishes the release before close returns, the server has dropped the file
 * by then. Checked with no waiting at all after the close, many times over (without the barrier
 * the server's own hang-up handling races the client's next call and loses most rounds):
 * - closing a sw_sync timeline signals its pending fence with an error: the fence's descriptor
 *   is readable at once (poll with a zero timeout);
 * - closing the DRM master's file makes the next opener of card0 master;
 * - the server's log already says the render file was released (drm_release);
 * - dup2 over the last descriptor of a timeline releases it as close does.
 * Exit 0 on success. */
#include "serve_util.h"

#define ROUNDS 40

static int fence_of(int tl, unsigned value) {
    struct sw_sync_create_fence_data d = {.value = value};
    strcpy(d.name, "close");
    return ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &d) == 0 ? d.fence : -1;
}

static int ready_now(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

int main(void) {
    int late_fence = 0, late_master = 0, late_dup2 = 0;
    for (int i = 0; i < ROUNDS; i++) {
        int tl = open("/dev/sw_sync", O_RDWR | O_CLOEXEC);
        REQUIRE(tl >= 0);
        int fence = fence_of(tl, 1);
        REQUIRE(fence >= 0);
        CHECK(!ready_now(fence));
        CHECK(close(tl) == 0);
        if (!ready_now(fence))
            late_fence++;
        CHECK(close(fence) == 0);

        int master = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
        REQUIRE(master >= 0);
        CHECK(drmIsMaster(master));
        CHECK(close(master) == 0);
        int next = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
        REQUIRE(next >= 0);
        if (!drmIsMaster(next))
            late_master++;
        CHECK(close(next) == 0);

        /* dup2 onto the timeline's only descriptor closes it. */
        tl = open("/dev/sw_sync", O_RDWR | O_CLOEXEC);
        REQUIRE(tl >= 0);
        fence = fence_of(tl, 1);
        REQUIRE(fence >= 0);
        int pipefd[2];
        REQUIRE(pipe2(pipefd, O_CLOEXEC) == 0);
        CHECK(dup2(pipefd[0], tl) == tl);
        if (!ready_now(fence))
            late_dup2++;
        CHECK(close(tl) == 0);
        CHECK(close(pipefd[0]) == 0);
        CHECK(close(pipefd[1]) == 0);
        CHECK(close(fence) == 0);
    }
    if (late_fence || late_master || late_dup2)
        fprintf(stderr, "close_client: released after close returned: %d fences, %d masters, %d dup2 of %d\n",
                late_fence, late_master, late_dup2, ROUNDS);
    CHECK(late_fence == 0);
    CHECK(late_master == 0);
    CHECK(late_dup2 == 0);

    /* The log line of the release is written before close returns. */
    int render = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(render >= 0);
    uint32_t h;
    REQUIRE(drmSyncobjCreate(render, 0, &h) == 0);
    char want[64];
    snprintf(want, sizeof want, "pid %d: closed /dev/dri/renderD128", (int)getpid());
    CHECK(close(render) == 0);
    const char* log = getenv("UPANTHOR_SERVER_LOG");
    REQUIRE(log);
    CHECK(server_log_scan(log, want, "released (drm_release): 0 GEM handles, 1 syncobjs"));
    return client_result("close_client");
}
