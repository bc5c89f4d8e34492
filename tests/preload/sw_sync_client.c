/* A client of sw_sync and syncobjs (what the syncobj conformance suites do), run with
 * libupanthor_preload.so in LD_PRELOAD: sw_sync timelines found by access(2) and opened, fences
 * created and advanced, polled and inspected as sync_files (SYNC_IOC_FILE_INFO, SYNC_IOC_MERGE),
 * imported into syncobjs, waited with WAIT_FOR_SUBMIT from another thread while the timeline
 * advances, and SYNCOBJ_EVENTFD on the program's own eventfd. Exit 0 on success. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"
#include "sw_sync_uapi.h"

/* DRM_IOCTL_SYNCOBJ_EVENTFD (Linux 6.6; newer than this libdrm's drm.h). */
struct upanthor_syncobj_eventfd {
    uint32_t handle;
    uint32_t flags;
    uint64_t point;
    int32_t fd;
    uint32_t pad;
};
#define UPANTHOR_IOCTL_SYNCOBJ_EVENTFD DRM_IOWR(0xCF, struct upanthor_syncobj_eventfd)

static int poll_in(int fd, int ms) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static int file_status(int fd) {
    struct sync_file_info info = {0};
    return ioctl(fd, SYNC_IOC_FILE_INFO, &info) == 0 ? info.status : -100;
}

struct waiter {
    int tid; /* set by the thread when it starts */
    int drm;
    uint32_t handle;
    uint64_t point;
    int ret;
};

static void* wait_thread(void* arg) {
    struct waiter* w = arg;
    __atomic_store_n(&w->tid, (int)gettid(), __ATOMIC_RELEASE);
    w->ret = drmSyncobjTimelineWait(w->drm, &w->handle, &w->point, 1, now_ns() + 5000000000ll,
                                    DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL);
    return NULL;
}

int main(void) {
    CHECK(access("/dev/sw_sync", R_OK | W_OK) == 0);
    int tl = open("/dev/sw_sync", O_RDWR | O_CLOEXEC);
    REQUIRE(tl >= 0);
    int drm = drmOpenWithType("panthor", NULL, DRM_NODE_RENDER);
    REQUIRE(drm >= 0);

    /* Fences on the timeline: pending, pollable, signalled by INC. */
    int f1 = sw_sync_create_fence(tl, 1), f2 = sw_sync_create_fence(tl, 2);
    REQUIRE(f1 >= 0 && f2 >= 0);
    CHECK(fcntl(f1, F_GETFD) >= 0);
    CHECK(file_status(f1) == 0);
    CHECK(!poll_in(f1, 0));
    struct sync_merge_data m = {.fd2 = f2};
    strcpy(m.name, "merged");
    CHECK(ioctl(f1, SYNC_IOC_MERGE, &m) == 0 && m.fence >= 0);
    CHECK(sw_sync_inc(tl, 1) == 0);
    CHECK(poll_in(f1, 1000));
    CHECK(file_status(f1) == 1);
    CHECK(file_status(f2) == 0);
    CHECK(file_status(m.fence) == 0);

    /* Into a syncobj: import the pending fence, wait for it while another INC signals it. */
    uint32_t so;
    REQUIRE(drmSyncobjCreate(drm, 0, &so) == 0);
    CHECK(drmSyncobjImportSyncFile(drm, so, f2) == 0);
    CHECK(drmSyncobjWait(drm, &so, 1, 0, 0, NULL) == -ETIME);
    CHECK(sw_sync_inc(tl, 1) == 0);
    CHECK(drmSyncobjWait(drm, &so, 1, now_ns() + 1000000000ll, 0, NULL) == 0);
    CHECK(poll_in(m.fence, 1000) && file_status(m.fence) == 1);

    /* A timeline syncobj waited with WAIT_FOR_SUBMIT before its point exists. */
    uint32_t tls;
    REQUIRE(drmSyncobjCreate(drm, 0, &tls) == 0);
    struct waiter w = {.drm = drm, .handle = tls, .point = 3};
    pthread_t th;
    REQUIRE(pthread_create(&th, NULL, wait_thread, &w) == 0);
    int f3 = sw_sync_create_fence(tl, 3);
    REQUIRE(f3 >= 0);
    uint32_t tmp;
    REQUIRE(drmSyncobjCreate(drm, 0, &tmp) == 0);
    CHECK(drmSyncobjImportSyncFile(drm, tmp, f3) == 0);
    CHECK(drmSyncobjTransfer(drm, tls, 3, tmp, 0, 0) == 0);
    /* The increment should find the waiter blocked on the transferred point. */
    while (!__atomic_load_n(&w.tid, __ATOMIC_ACQUIRE))
        sched_yield();
    CHECK(wait_until_blocked(w.tid, 5000) == 0);
    CHECK(sw_sync_inc(tl, 1) == 0);
    pthread_join(th, NULL);
    CHECK(w.ret == 0);

    /* SYNCOBJ_EVENTFD on the program's own eventfd. */
    int efd = eventfd(0, EFD_CLOEXEC);
    REQUIRE(efd >= 0);
    int f4 = sw_sync_create_fence(tl, 4);
    uint32_t ev;
    REQUIRE(drmSyncobjCreate(drm, 0, &ev) == 0);
    CHECK(drmSyncobjImportSyncFile(drm, ev, f4) == 0);
    struct upanthor_syncobj_eventfd e = {.handle = ev, .fd = efd};
    CHECK(drmIoctl(drm, UPANTHOR_IOCTL_SYNCOBJ_EVENTFD, &e) == 0);
    CHECK(!poll_in(efd, 0));
    CHECK(sw_sync_inc(tl, 1) == 0);
    CHECK(poll_in(efd, 1000));
    uint64_t count = 0;
    CHECK(read(efd, &count, sizeof(count)) == 8 && count == 1);

    /* Closing the timeline signals what is left with an error. */
    int f9 = sw_sync_create_fence(tl, 9);
    CHECK(close(tl) == 0);
    CHECK(poll_in(f9, 1000) && file_status(f9) < 0);

    int fds[] = {f1, f2, f3, f4, f9, m.fence, efd};
    for (unsigned i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
        CHECK(close(fds[i]) == 0);
    drmSyncobjDestroy(drm, so);
    drmSyncobjDestroy(drm, tls);
    drmSyncobjDestroy(drm, tmp);
    drmSyncobjDestroy(drm, ev);
    CHECK(close(drm) == 0);
    return client_result("sw_sync_client");
}
