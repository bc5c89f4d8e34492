/* Two processes on one panfrost device served by `upanthor serve --gpu g52`: the first creates a
 * BO, maps it and exports it (PRIME); a forked child opens its own render node (its own VM),
 * imports the inherited dma-buf, and has the GPU write a value into it with a WRITE_VALUE job laid
 * out in a BO of its own; the first reads the value through its mapping, then runs a job of its
 * own on its file. Exit 0 on success. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"
#include "panfrost_jobs.h"
#include "panfrost_uapi.h"

#define BO_SIZE (64u * 1024u)
#define WAIT_NS (10ll * 1000000000ll)

static void create_bo(int fd, uint32_t* handle, uint64_t* va, void** cpu) {
    struct drm_panfrost_create_bo c = {.size = BO_SIZE};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANFROST_CREATE_BO, &c) == 0);
    struct drm_panfrost_mmap_bo m = {.handle = c.handle};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANFROST_MMAP_BO, &m) == 0);
    *cpu = mmap(NULL, BO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m.offset);
    REQUIRE(*cpu != MAP_FAILED);
    memset(*cpu, 0, BO_SIZE);
    *handle = c.handle;
    *va = c.offset;
}

/* Runs `job` (at jc, in the BOs named) and waits for its fence. */
static int run_job(int fd, uint64_t jc, uint32_t* bos, uint32_t nbos) {
    uint32_t sync = 0;
    REQUIRE(drmSyncobjCreate(fd, 0, &sync) == 0);
    struct drm_panfrost_submit s = {
        .jc = jc, .out_sync = sync, .bo_handles = (uint64_t)(uintptr_t)bos, .bo_handle_count = nbos};
    int ret = drmIoctl(fd, DRM_IOCTL_PANFROST_SUBMIT, &s);
    if (ret == 0)
        ret = drmSyncobjWait(fd, &sync, 1, now_ns() + WAIT_NS, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL, NULL);
    drmSyncobjDestroy(fd, sync);
    return ret;
}

/* The child: its own file and VM, the shared BO imported from the inherited dma-buf. */
static int child(int dmabuf) {
    const int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    uint32_t shared = 0;
    REQUIRE(drmPrimeFDToHandle(fd, dmabuf, &shared) == 0 && shared != 0);
    struct drm_panfrost_get_bo_offset o = {.handle = shared};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANFROST_GET_BO_OFFSET, &o) == 0 && o.offset != 0);
    uint32_t jobs = 0;
    uint64_t jobs_va = 0;
    void* cpu = NULL;
    create_bo(fd, &jobs, &jobs_va, &cpu);
    pan_emit_write_value(cpu, o.offset + 0x100, 0x600d600d600dull, 0);
    uint32_t bos[2] = {jobs, shared};
    CHECK(run_job(fd, jobs_va, bos, 2) == 0);
    CHECK(((struct pan_write_value_job*)cpu)->header.exception_status == PAN_JOB_DONE);
    CHECK(munmap(cpu, BO_SIZE) == 0);
    close(dmabuf);
    close(fd);
    return __atomic_load_n(&client_failures, __ATOMIC_RELAXED) ? 1 : 0;
}

int main(void) {
    const int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    drmVersionPtr v = drmGetVersion(fd);
    REQUIRE(v != NULL);
    CHECK(strcmp(v->name, "panfrost") == 0);
    drmFreeVersion(v);

    uint32_t shared = 0;
    uint64_t shared_va = 0;
    void* cpu = NULL;
    create_bo(fd, &shared, &shared_va, &cpu);
    volatile uint64_t* words = cpu;
    int dmabuf = -1;
    REQUIRE(drmPrimeHandleToFD(fd, shared, DRM_CLOEXEC | DRM_RDWR, &dmabuf) == 0 && dmabuf >= 0);

    fflush(NULL);
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0)
        _exit(child(dmabuf));
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(words[0x100 / 8] == 0x600d600d600dull);

    /* The first process's own job, in its own VM, on the same device. */
    pan_emit_write_value((struct pan_write_value_job*)((uint8_t*)cpu + 0x1000), shared_va + 0x108, 7, 0);
    CHECK(run_job(fd, shared_va + 0x1000, &shared, 1) == 0);
    CHECK(words[0x108 / 8] == 7);

    close(dmabuf);
    CHECK(munmap(cpu, BO_SIZE) == 0);
    close(fd);
    return client_result("serve_panfrost_share_client");
}
