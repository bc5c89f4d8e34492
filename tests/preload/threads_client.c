/* Several threads of one client on one DRM file at once (libupanthor_preload.so in LD_PRELOAD):
 * BOs created, mapped, written, read back and closed; syncobjs created, signalled from one thread
 * while another waits on them; DRM files opened and closed; all concurrently. Exit 0 on success. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"
#include "panthor_uapi.h"

enum { kThreads = 4, kRounds = 50 };
static int g_fd;

static void* bo_worker(void* arg) {
    const uint32_t tag = (uint32_t)(uintptr_t)arg;
    for (int i = 0; i < kRounds; i++) {
        struct drm_panthor_bo_create bo = {.size = 64 * 1024};
        if (drmIoctl(g_fd, DRM_IOCTL_PANTHOR_BO_CREATE, &bo)) {
            CHECK(0);
            continue;
        }
        struct drm_panthor_bo_mmap_offset mo = {.handle = bo.handle};
        CHECK(drmIoctl(g_fd, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo) == 0);
        uint32_t* p = mmap(NULL, bo.size, PROT_READ | PROT_WRITE, MAP_SHARED, g_fd, (off_t)mo.offset);
        CHECK(p != MAP_FAILED);
        if (p != MAP_FAILED) {
            for (unsigned w = 0; w < bo.size / 4; w += 1024)
                p[w] = tag ^ w;
            for (unsigned w = 0; w < bo.size / 4; w += 1024)
                CHECK(p[w] == (tag ^ w));
            CHECK(munmap(p, bo.size) == 0);
        }
        struct drm_gem_close gc = {.handle = bo.handle};
        CHECK(drmIoctl(g_fd, DRM_IOCTL_GEM_CLOSE, &gc) == 0);
    }
    return NULL;
}

struct pair {
    uint32_t handles[kRounds];
};

static void* signaller(void* arg) {
    struct pair* pr = arg;
    for (int i = 0; i < kRounds; i++) {
        sched_yield(); /* let the waiter get ahead now and then */
        CHECK(drmSyncobjSignal(g_fd, &pr->handles[i], 1) == 0);
    }
    return NULL;
}

static void* waiter(void* arg) {
    struct pair* pr = arg;
    for (int i = 0; i < kRounds; i++)
        CHECK(drmSyncobjWait(g_fd, &pr->handles[i], 1, now_ns() + 5000000000ll, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
                             NULL) == 0);
    return NULL;
}

static void* opener(void* arg) {
    (void)arg;
    for (int i = 0; i < kRounds; i++) {
        int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
        CHECK(fd >= 0);
        drmVersionPtr v = drmGetVersion(fd);
        CHECK(v && strcmp(v->name, "panthor") == 0);
        if (v)
            drmFreeVersion(v);
        CHECK(close(fd) == 0);
    }
    return NULL;
}

int main(void) {
    g_fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    if (g_fd < 0) {
        perror("open");
        return 1;
    }
    static struct pair pr;
    for (int i = 0; i < kRounds; i++)
        CHECK(drmSyncobjCreate(g_fd, 0, &pr.handles[i]) == 0);
    pthread_t th[kThreads + 3];
    for (int i = 0; i < kThreads; i++)
        pthread_create(&th[i], NULL, bo_worker, (void*)(uintptr_t)(0x1000 * (i + 1)));
    pthread_create(&th[kThreads], NULL, waiter, &pr);
    pthread_create(&th[kThreads + 1], NULL, signaller, &pr);
    pthread_create(&th[kThreads + 2], NULL, opener, NULL);
    for (int i = 0; i < kThreads + 3; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < kRounds; i++)
        drmSyncobjDestroy(g_fd, pr.handles[i]);
    CHECK(close(g_fd) == 0);
    return client_result("threads_client");
}
