/* A server stopped while clients wait in it ends their calls at once: one thread sleeps in a
 * SYNCOBJ_WAIT with a deadline an hour away, another polls a sw_sync fence that never signals;
 * once both are asleep the client stops the server (SIGTERM). The server must exit promptly (its
 * pidfd turns readable), the wait fail with ENODEV and the poll end with a hang-up, and nothing of
 * the failed call be written into the client afterwards: as a syscall that has returned, the
 * server copies no result out once the call has ended (a late copy-out of the wait's arguments
 * once overwrote a thread's stack as it exited). Exit 0 on success. */
#include <pthread.h>
#include <sys/syscall.h>

#include "serve_util.h"

static int g_drm, g_fence;
static uint32_t g_syncobj;
static volatile int g_wait_tid, g_poll_tid;
static int g_wait_ret, g_wait_errno, g_poll_ret;
static short g_poll_revents;
/* The wait's arguments, where the client can look at them after the call: filled with a pattern
 * once the call has failed, they must still hold it when the server has exited. */
static struct drm_syncobj_wait g_wait;
static const unsigned char kAfterCall = 0xA5;

static int wait_args_untouched(void) {
    const unsigned char* b = (const unsigned char*)&g_wait;
    for (size_t i = 0; i < sizeof g_wait; i++)
        if (b[i] != kAfterCall)
            return 0;
    return 1;
}

static void* waiter(void* arg) {
    (void)arg;
    /* The thread's first call connects it; only the wait's own reply is awaited after the tid
     * is published. */
    drmVersionPtr v = drmGetVersion(g_drm);
    REQUIRE(v);
    drmFreeVersion(v);
    g_wait = (struct drm_syncobj_wait){.handles = (uintptr_t)&g_syncobj,
                                       .count_handles = 1,
                                       .flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
                                       .timeout_nsec = now_ns() + 3600ll * 1000000000ll};
    g_wait_tid = (int)syscall(SYS_gettid);
    g_wait_ret = ioctl(g_drm, DRM_IOCTL_SYNCOBJ_WAIT, &g_wait);
    g_wait_errno = errno;
    memset(&g_wait, kAfterCall, sizeof g_wait);
    return NULL;
}

static void* poller(void* arg) {
    (void)arg;
    g_poll_tid = (int)syscall(SYS_gettid);
    struct pollfd p = {.fd = g_fence, .events = POLLIN};
    g_poll_ret = poll(&p, 1, -1);
    g_poll_revents = p.revents;
    return NULL;
}

int main(void) {
    g_drm = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(g_drm >= 0);
    int tl = open("/dev/sw_sync", O_RDWR | O_CLOEXEC);
    REQUIRE(tl >= 0);
    struct sw_sync_create_fence_data never = {.value = 1, .name = "never"};
    REQUIRE(ioctl(tl, SW_SYNC_IOC_CREATE_FENCE, &never) == 0);
    g_fence = never.fence;
    REQUIRE(drmSyncobjCreate(g_drm, 0, &g_syncobj) == 0);

    const pid_t server = server_pid();
    REQUIRE(server > 0);
    const int pidfd = (int)syscall(SYS_pidfd_open, server, 0);
    REQUIRE(pidfd >= 0);
    pthread_t a, b;
    REQUIRE(pthread_create(&a, NULL, waiter, NULL) == 0);
    REQUIRE(pthread_create(&b, NULL, poller, NULL) == 0);
    while (!g_wait_tid || !g_poll_tid)
        sched_yield();
    /* Asleep: the waiter for the server's reply to its SYNCOBJ_WAIT, the poller in poll. */
    REQUIRE(wait_until_blocked(g_poll_tid, 30000) == 0);
    REQUIRE(wait_until_blocked(g_wait_tid, 30000) == 0);
    REQUIRE(kill(server, SIGTERM) == 0);

    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    const int64_t t0 = now_ns();
    const int exited = poll(&p, 1, 20000) == 1;
    CHECK(exited);
    if (!exited) {
        fprintf(stderr, "stop_wait_client: the server did not exit in 20 s; killing it\n");
        kill(server, SIGKILL);
    } else {
        printf("stop_wait_client: the server exited %.1f ms after SIGTERM\n", (now_ns() - t0) / 1e6);
    }
    REQUIRE(pthread_join(a, NULL) == 0);
    REQUIRE(pthread_join(b, NULL) == 0);
    CHECK(g_wait_ret == -1 && g_wait_errno == ENODEV);
    /* The server has exited (or was killed): any copy-out it was going to make has landed. */
    if (!wait_args_untouched())
        fprintf(stderr, "stop_wait_client: the server wrote the wait's arguments after the call failed\n");
    CHECK(wait_args_untouched());
    CHECK(g_poll_ret == 1 && (g_poll_revents & (POLLHUP | POLLERR | POLLIN)));
    CHECK(close(g_fence) == 0);
    CHECK(close(tl) == 0);
    CHECK(close(g_drm) == 0);
    close(pidfd);
    return client_result("stop_wait_client");
}
