/* A panfrost client against Debian's libdrm (plain C), run with libupanthor_preload.so in
 * LD_PRELOAD and UPANTHOR_GPU=g52 (tests/preload/CMakeLists.txt): it finds the G52 the way a
 * libdrm program does (drmGetDevices2 on an RK3568 platform device, drmGetVersion "panfrost"),
 * then drives job chains laid out by hand in a BO (panfrost_jobs.h):
 *   write  a WRITE_VALUE job stores a value the CPU reads back through its mapping, the out_sync's
 *          fence signals with success;
 *   hang   IGT's endless loop times out (500 ms), the reset fails its fence with an error while a
 *          job of another context queued behind it still completes, and the GPU runs jobs after;
 *          meanwhile a WAIT_BO with a 20 ms deadline (absolute CLOCK_MONOTONIC) times out;
 *   fault  a WRITE_VALUE to an unmapped VA is an unhandled page fault: that job's fence fails,
 *          a job of another file running meanwhile and the file's next job complete.
 * With an argument (write, hang, fault) only that part runs. Exit 0 on success. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"
#include "panfrost_jobs.h"
#include "panfrost_uapi.h"

#define BO_SIZE (64u * 1024u)
#define WAIT_NS (20ll * 1000000000ll) /* generous: the hang alone takes the 500 ms job timeout */

/* A BO mapped for the CPU, with jobs and the words they write laid out from its start. */
struct job_bo {
    uint32_t handle;
    uint64_t va;
    uint8_t* cpu;
    uint32_t used;
};

static void bo_create(int fd, struct job_bo* bo) {
    struct drm_panfrost_create_bo c = {.size = BO_SIZE};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANFROST_CREATE_BO, &c) == 0);
    CHECK(c.handle != 0 && c.offset != 0);
    struct drm_panfrost_mmap_bo m = {.handle = c.handle};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANFROST_MMAP_BO, &m) == 0);
    void* p = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m.offset);
    REQUIRE(p != MAP_FAILED);
    bo->handle = c.handle;
    bo->va = c.offset;
    bo->cpu = p;
    bo->used = 0;
}

static void bo_destroy(int fd, struct job_bo* bo) {
    CHECK(munmap(bo->cpu, BO_SIZE) == 0);
    struct drm_gem_close gc = {.handle = bo->handle};
    CHECK(drmIoctl(fd, DRM_IOCTL_GEM_CLOSE, &gc) == 0);
}

/* Room for `size` bytes at `align`: its GPU VA (*cpu its CPU address). */
static uint64_t bo_alloc(struct job_bo* bo, uint32_t size, uint32_t align, void** cpu) {
    bo->used = (bo->used + align - 1) & ~(align - 1);
    REQUIRE(bo->used + size <= BO_SIZE);
    *cpu = bo->cpu + bo->used;
    const uint64_t va = bo->va + bo->used;
    bo->used += size;
    return va;
}

/* A zeroed 64-bit word for a job to write. */
static uint64_t bo_slot(struct job_bo* bo, volatile uint64_t** cpu) {
    void* p;
    const uint64_t va = bo_alloc(bo, 8, 8, &p);
    *cpu = p;
    **cpu = 0;
    return va;
}

static uint64_t write_value_job(struct job_bo* bo, uint64_t target, uint64_t value, struct pan_write_value_job** job) {
    void* p;
    const uint64_t va = bo_alloc(bo, sizeof(struct pan_write_value_job), PAN_JOB_ALIGN, &p);
    pan_emit_write_value(p, target, value, 0);
    if (job)
        *job = p;
    return va;
}

/* SUBMIT of the chain at jc, its fence into a new syncobj (returned). */
static uint32_t submit(int fd, struct job_bo* bo, uint64_t jc, uint32_t requirements, uint32_t ctx) {
    uint32_t sync = 0;
    REQUIRE(drmSyncobjCreate(fd, 0, &sync) == 0);
    struct drm_panfrost_submit s = {
        .jc = jc,
        .out_sync = sync,
        .bo_handles = (uint64_t)(uintptr_t)&bo->handle,
        .bo_handle_count = 1,
        .requirements = requirements,
        .jm_ctx_handle = ctx,
    };
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_SUBMIT, &s) == 0);
    return sync;
}

/* Waits for the syncobj's fence and returns its status as a sync_file tells it: 1 signalled
 * with success, a negative errno when the job failed; -1000 when the wait or export failed. */
static int fence_status(int fd, uint32_t sync) {
    if (drmSyncobjWait(fd, &sync, 1, now_ns() + WAIT_NS, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL) != 0) {
        CHECK(!"the job's fence signalled in time");
        return -1000;
    }
    int sf = -1;
    if (drmSyncobjExportSyncFile(fd, sync, &sf) != 0 || sf < 0)
        return -1000;
    struct sync_file_info info = {0};
    const int ret = ioctl(sf, SYNC_IOC_FILE_INFO, &info);
    close(sf);
    CHECK(drmSyncobjDestroy(fd, sync) == 0);
    return ret == 0 ? info.status : -1000;
}

static int open_panfrost(void) {
    const int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    return fd;
}

/* What a libdrm program looking for panfrost sees. */
static void discovery(void) {
    drmDevicePtr devs[8];
    const int n = drmGetDevices2(0, devs, 8);
    CHECK(n >= 1);
    int found = 0;
    for (int i = 0; i < n; i++) {
        drmDevicePtr d = devs[i];
        if (d->bustype != DRM_BUS_PLATFORM)
            continue;
        CHECK(d->available_nodes & (1 << DRM_NODE_RENDER));
        CHECK(strcmp(d->nodes[DRM_NODE_RENDER], "/dev/dri/renderD128") == 0);
        CHECK(strcmp(d->businfo.platform->fullname, "/gpu@fde60000") == 0);
        int soc = 0, bifrost = 0, csf = 0;
        for (char** c = d->deviceinfo.platform->compatible; c && *c; c++) {
            soc |= strcmp(*c, "rockchip,rk3568-mali") == 0;
            bifrost |= strcmp(*c, "arm,mali-bifrost") == 0;
            csf |= strcmp(*c, "arm,mali-valhall-csf") == 0;
        }
        CHECK(soc && bifrost && !csf);
        found++;
    }
    CHECK(found == 1);
    if (n > 0)
        drmFreeDevices(devs, n);

    const int fd = open_panfrost();
    drmVersionPtr v = drmGetVersion(fd);
    REQUIRE(v != NULL);
    CHECK(strcmp(v->name, "panfrost") == 0);
    CHECK(v->version_major == 1 && v->version_minor >= 6);
    drmFreeVersion(v);
    /* The G52 r1: product 0x7402, three job slots, eight address spaces. */
    struct drm_panfrost_get_param p = {.param = DRM_PANFROST_PARAM_GPU_PROD_ID};
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_GET_PARAM, &p) == 0 && p.value == 0x7402);
    p.param = DRM_PANFROST_PARAM_JS_PRESENT;
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_GET_PARAM, &p) == 0 && p.value == 0x7);
    p.param = DRM_PANFROST_PARAM_AS_PRESENT;
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_GET_PARAM, &p) == 0 && p.value == 0xff);
    close(fd);
}

static void write_value(void) {
    const int fd = open_panfrost();
    struct job_bo bo;
    bo_create(fd, &bo);
    volatile uint64_t* target;
    const uint64_t target_va = bo_slot(&bo, &target);
    struct pan_write_value_job* job;
    const uint64_t jc = write_value_job(&bo, target_va, 0xdeadbeefcafe0001ull, &job);
    const uint32_t sync = submit(fd, &bo, jc, 0, 0);
    CHECK(fence_status(fd, sync) == 1);
    CHECK(*target == 0xdeadbeefcafe0001ull);
    CHECK(job->header.exception_status == PAN_JOB_DONE);
    /* The BO is idle now: a WAIT_BO that only polls (deadline 0) says so. Like upstream, the
     * ioctl returns what dma_resv_wait_timeout left (positive), which Mesa takes as ready. */
    struct drm_panfrost_wait_bo wb = {.handle = bo.handle, .timeout_ns = 0};
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_WAIT_BO, &wb) >= 0);

    /* A chain of two on the fragment slot: both values land. */
    volatile uint64_t *t1, *t2;
    const uint64_t t1_va = bo_slot(&bo, &t1), t2_va = bo_slot(&bo, &t2);
    struct pan_write_value_job* first;
    const uint64_t j1 = write_value_job(&bo, t1_va, 11, &first);
    first->header.next = write_value_job(&bo, t2_va, 22, NULL);
    CHECK(fence_status(fd, submit(fd, &bo, j1, PANFROST_JD_REQ_FS, 0)) == 1);
    CHECK(*t1 == 11 && *t2 == 22);
    bo_destroy(fd, &bo);
    close(fd);
}

static void hang(void) {
    const int fd = open_panfrost();
    struct job_bo bo;
    bo_create(fd, &bo);
    void *a, *b;
    const uint64_t a_va = bo_alloc(&bo, sizeof(struct pan_write_value_job), PAN_JOB_ALIGN, &a);
    const uint64_t b_va = bo_alloc(&bo, sizeof(struct pan_write_value_job), PAN_JOB_ALIGN, &b);
    pan_emit_endless_loop(a, a_va, b, b_va);

    /* The innocent job comes from another context, which the guilty one's karma spares. */
    struct drm_panfrost_jm_ctx_create cc = {.priority = PANFROST_JM_CTX_PRIORITY_MEDIUM};
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_JM_CTX_CREATE, &cc) == 0 && cc.handle != 0);
    volatile uint64_t* target;
    const uint64_t target_va = bo_slot(&bo, &target);
    const uint64_t innocent = write_value_job(&bo, target_va, 42, NULL);

    const int64_t start = now_ns();
    const uint32_t guilty_sync = submit(fd, &bo, a_va, 0, 0);
    const uint32_t innocent_sync = submit(fd, &bo, innocent, 0, cc.handle);
    /* WAIT_BO's deadline is absolute CLOCK_MONOTONIC: 20 ms from now ends in ETIMEDOUT long
     * before the timeout's reset would make the BO idle. */
    struct drm_panfrost_wait_bo wb = {.handle = bo.handle, .timeout_ns = now_ns() + 20ll * 1000000ll};
    const int64_t wait_start = now_ns();
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_WAIT_BO, &wb) == -1 && errno == ETIMEDOUT);
    CHECK(now_ns() - wait_start < 400ll * 1000000ll);
    const int guilty = fence_status(fd, guilty_sync);
    const int64_t took = now_ns() - start;
    CHECK(guilty < 0 && guilty != -1000);
    if (guilty != -ECANCELED)
        fprintf(stderr, "hang: the endless job's fence status is %d (expected -ECANCELED)\n", guilty);
    CHECK(guilty == -ECANCELED);
    /* Not before the 500 ms timeout (less a tick or so). */
    CHECK(took >= 450ll * 1000000ll);
    CHECK(fence_status(fd, innocent_sync) == 1);
    CHECK(*target == 42);

    /* The GPU runs jobs after the reset, on the guilty context too. */
    volatile uint64_t* after;
    const uint64_t after_va = bo_slot(&bo, &after);
    CHECK(fence_status(fd, submit(fd, &bo, write_value_job(&bo, after_va, 9, NULL), 0, 0)) == 1);
    CHECK(*after == 9);

    struct drm_panfrost_jm_ctx_destroy cd = {.handle = cc.handle};
    CHECK(drmIoctl(fd, DRM_IOCTL_PANFROST_JM_CTX_DESTROY, &cd) == 0);
    bo_destroy(fd, &bo);
    close(fd);
}

static void fault(void) {
    const int fd = open_panfrost();
    struct job_bo bo;
    bo_create(fd, &bo);
    /* Another file's chain of 50 writes on the fragment slot runs meanwhile, in its own VM. */
    const int other = open_panfrost();
    struct job_bo obo;
    bo_create(other, &obo);
    volatile uint64_t* ot;
    const uint64_t ot_va = bo_slot(&obo, &ot);
    uint64_t ofirst = 0;
    struct pan_write_value_job* prev = NULL;
    for (int i = 0; i < 50; i++) {
        struct pan_write_value_job* j;
        const uint64_t va = write_value_job(&obo, ot_va, (uint64_t)i + 1, &j);
        if (prev)
            prev->header.next = va;
        else
            ofirst = va;
        prev = j;
    }
    const uint32_t osync = submit(other, &obo, ofirst, PANFROST_JD_REQ_FS, 0);

    /* 16 MiB: below panfrost's VA window (it starts at 32 MiB), never mapped. */
    struct pan_write_value_job* bad;
    const uint64_t bad_va = write_value_job(&bo, 0x1000000, 1, &bad);
    const int status = fence_status(fd, submit(fd, &bo, bad_va, 0, 0));
    CHECK(status < 0 && status != -1000);
    if (status != -EINVAL)
        fprintf(stderr, "fault: the faulting job's fence status is %d (expected -EINVAL)\n", status);
    CHECK(status == -EINVAL);
    CHECK(bad->header.exception_status != PAN_JOB_DONE);

    CHECK(fence_status(other, osync) == 1);
    CHECK(*ot == 50);

    /* The file's address space comes back for its next job. */
    volatile uint64_t* t;
    const uint64_t t_va = bo_slot(&bo, &t);
    CHECK(fence_status(fd, submit(fd, &bo, write_value_job(&bo, t_va, 3, NULL), 0, 0)) == 1);
    CHECK(*t == 3);
    bo_destroy(other, &obo);
    close(other);
    bo_destroy(fd, &bo);
    close(fd);
}

int main(int argc, char** argv) {
    const char* only = argc > 1 ? argv[1] : NULL;
    discovery();
    if (!only || strcmp(only, "write") == 0)
        write_value();
    if (!only || strcmp(only, "hang") == 0)
        hang();
    if (!only || strcmp(only, "fault") == 0)
        fault();
    return client_result("panfrost_client");
}
