/* An unmodified-style libdrm client (Debian's libdrm, plain C), run with libupanthor_preload.so
 * in LD_PRELOAD (tests/preload/CMakeLists.txt): device discovery, the DRM core and panthor
 * ioctls through drmIoctl, a BO mapped and written by the CPU, a command stream that stores to it,
 * a timeline syncobj wait, EFAULT for bad pointers, sync_file descriptors, PRIME between two
 * opened render nodes, and files that have nothing to do with the device. Exit 0 on success; each failed check prints its line. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"
#include "panthor_uapi.h"

/* v10 CS instructions (hw/csf/cs_isa.h, docs/hw/csf/cs-isa.md): opcode in [63:56]. */
static uint64_t cs_move48(unsigned dst, uint64_t imm) {
    return (1ull << 56) | ((uint64_t)dst << 48) | (imm & 0xffffffffffffull);
}
static uint64_t cs_move32(unsigned dst, uint32_t imm) {
    return (2ull << 56) | ((uint64_t)dst << 48) | imm;
}
static uint64_t cs_store_multiple(unsigned base, unsigned addr, uint16_t mask, int16_t off) {
    return (21ull << 56) | ((uint64_t)base << 48) | ((uint64_t)addr << 40) | ((uint64_t)mask << 16) | (uint16_t)off;
}

static void unrelated_files(void) {
    int fd = open("/proc/self/status", O_RDONLY);
    CHECK(fd >= 0);
    char buf[64];
    CHECK(read(fd, buf, sizeof(buf)) > 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
    CHECK(close(fd) == 0);
    FILE* f = fopen("/proc/self/cmdline", "r");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    CHECK(open("/dev/dri/renderD129", O_RDWR) < 0);
    CHECK(stat("/", &st) == 0 && S_ISDIR(st.st_mode));
}

static void discovery(void) {
    drmDevicePtr devs[8];
    int n = drmGetDevices2(0, devs, 8);
    CHECK(n >= 1);
    int found = 0;
    for (int i = 0; i < n; i++) {
        drmDevicePtr d = devs[i];
        if (d->bustype != DRM_BUS_PLATFORM)
            continue;
        CHECK(d->available_nodes & (1 << DRM_NODE_RENDER));
        CHECK(d->available_nodes & (1 << DRM_NODE_PRIMARY));
        CHECK(strcmp(d->nodes[DRM_NODE_RENDER], "/dev/dri/renderD128") == 0);
        CHECK(strcmp(d->nodes[DRM_NODE_PRIMARY], "/dev/dri/card0") == 0);
        int compatible = 0;
        for (char** c = d->deviceinfo.platform->compatible; c && *c; c++)
            if (strcmp(*c, "arm,mali-valhall-csf") == 0)
                compatible = 1;
        CHECK(compatible);
        found++;
    }
    CHECK(found == 1);
    if (n > 0)
        drmFreeDevices(devs, n);
    struct stat st;
    CHECK(stat("/dev/dri/renderD128", &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226 &&
          minor(st.st_rdev) == 128);
}

static void version_and_caps(int fd) {
    drmVersionPtr v = drmGetVersion(fd);
    REQUIRE(v != NULL);
    CHECK(strcmp(v->name, "panthor") == 0);
    CHECK(v->version_major == 1);
    printf("driver %s %d.%d.%d (%s)\n", v->name, v->version_major, v->version_minor, v->version_patchlevel, v->desc);
    drmFreeVersion(v);
    uint64_t cap = 0;
    CHECK(drmGetCap(fd, DRM_CAP_SYNCOBJ, &cap) == 0 && cap == 1);
    cap = 0;
    CHECK(drmGetCap(fd, DRM_CAP_SYNCOBJ_TIMELINE, &cap) == 0 && cap == 1);
    char* name = drmGetRenderDeviceNameFromFd(fd);
    CHECK(name && strcmp(name, "/dev/dri/renderD128") == 0);
    free(name);
    char path[64], link[64] = {0};
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    CHECK(readlink(path, link, sizeof(link) - 1) > 0 && strcmp(link, "/dev/dri/renderD128") == 0);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 226 && minor(st.st_rdev) == 128);
    CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    /* fdinfo: the DRM core's keys after the kernel's. */
    snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
    FILE* fi = fopen(path, "r");
    CHECK(fi != NULL);
    if (fi) {
        char line[256];
        int driver = 0;
        while (fgets(line, sizeof(line), fi))
            if (strcmp(line, "drm-driver:\tpanthor\n") == 0)
                driver = 1;
        CHECK(driver);
        fclose(fi);
    }
}

static void bad_pointers(int fd) {
    struct drm_panthor_dev_query q = {
        .type = DRM_PANTHOR_DEV_QUERY_GPU_INFO, .size = sizeof(struct drm_panthor_gpu_info), .pointer = 16};
    errno = 0;
    CHECK(drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q) == -1 && errno == EFAULT);
    errno = 0;
    CHECK(ioctl(fd, DRM_IOCTL_VERSION, (void*)8) == -1 && errno == EFAULT);
    /* A read-only page as the destination of a copy_to_user. */
    char* ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(ro != MAP_FAILED);
    drm_version_t v = {0};
    v.name_len = 16;
    v.name = ro;
    errno = 0;
    CHECK(ioctl(fd, DRM_IOCTL_VERSION, &v) == -1 && errno == EFAULT);
    munmap(ro, 4096);
    /* An ioctl the driver does not know: the kernel's answer, not an abort. */
    errno = 0;
    CHECK(ioctl(fd, DRM_IOWR(0x9f, struct drm_panthor_vm_get_state), &v) == -1 && errno == EINVAL);
}

/* PRIME: a BO of one file shared with a second, independent file through a real descriptor. */
static void prime(void) {
    int a = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    int b = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(a >= 0 && b >= 0 && a != b);
    uint64_t cap = 0;
    CHECK(drmGetCap(a, DRM_CAP_PRIME, &cap) == 0 && cap == (DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT));

    const uint64_t size = 64 * 1024;
    struct drm_panthor_bo_create boc = {.size = size};
    REQUIRE(drmIoctl(a, DRM_IOCTL_PANTHOR_BO_CREATE, &boc) == 0);
    struct drm_panthor_bo_mmap_offset mo = {.handle = boc.handle};
    REQUIRE(drmIoctl(a, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo) == 0);
    uint32_t* ca = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, a, (off_t)mo.offset);
    REQUIRE(ca != MAP_FAILED);
    ca[100] = 0x5ca1ab1e;

    int pfd = -1;
    CHECK(drmPrimeHandleToFD(a, boc.handle, DRM_CLOEXEC | DRM_RDWR, &pfd) == 0 && pfd >= 0);
    CHECK(fcntl(pfd, F_GETFD) & FD_CLOEXEC);
    int inherit = -1; /* without DRM_CLOEXEC: a descriptor an exec'ed child keeps */
    CHECK(drmPrimeHandleToFD(a, boc.handle, DRM_RDWR, &inherit) == 0 && inherit >= 0 && inherit != pfd);
    CHECK(!(fcntl(inherit, F_GETFD) & FD_CLOEXEC));
    CHECK(close(inherit) == 0);
    uint32_t hb = 0, hb2 = 0, ha = 0;
    CHECK(drmPrimeFDToHandle(b, pfd, &hb) == 0 && hb != 0);
    CHECK(drmPrimeFDToHandle(b, pfd, &hb2) == 0 && hb2 == hb);       /* the file already has it */
    CHECK(drmPrimeFDToHandle(a, pfd, &ha) == 0 && ha == boc.handle); /* back home: its own handle */

    struct drm_panthor_bo_mmap_offset mob = {.handle = hb};
    REQUIRE(drmIoctl(b, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mob) == 0);
    uint32_t* cb = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, b, (off_t)mob.offset);
    REQUIRE(cb != MAP_FAILED);
    CHECK(cb[100] == 0x5ca1ab1eu);
    cb[101] = 0xfeedface;
    CHECK(ca[101] == 0xfeedfaceu);

    /* The dma-buf descriptor itself maps the BO's pages (the exporter's mmap). */
    uint32_t* cd = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
    REQUIRE(cd != MAP_FAILED);
    CHECK(cd[100] == 0x5ca1ab1eu);
    struct dma_buf_sync sync = {.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW};
    CHECK(ioctl(pfd, DMA_BUF_IOCTL_SYNC, &sync) == 0);
    cd[102] = 0x0ddba11;
    sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
    CHECK(ioctl(pfd, DMA_BUF_IOCTL_SYNC, &sync) == 0);
    CHECK(ca[102] == 0x0ddba11u && cb[102] == 0x0ddba11u);
    uint32_t* cd2 = mmap(NULL, 4096, PROT_READ, MAP_SHARED, pfd, 4096); /* a page offset into it */
    REQUIRE(cd2 != MAP_FAILED);
    ca[1024 + 7] = 0x7777;
    CHECK(cd2[7] == 0x7777u);
    CHECK(munmap(cd2, 4096) == 0);
    errno = 0;
    CHECK(mmap(NULL, size, PROT_READ, MAP_SHARED, pfd, 4096) == MAP_FAILED && errno == EINVAL); /* past the end */
    sync.flags = DMA_BUF_SYNC_START;                                                            /* no direction */
    errno = 0;
    CHECK(ioctl(pfd, DMA_BUF_IOCTL_SYNC, &sync) == -1 && errno == EINVAL);
    sync.flags = DMA_BUF_SYNC_RW | 0x100;
    errno = 0;
    CHECK(ioctl(pfd, DMA_BUF_IOCTL_SYNC, &sync) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(ioctl(pfd, DMA_BUF_IOCTL_SYNC, (void*)8) == -1 && errno == EFAULT);

    /* Descriptors that are not dma-bufs: dma_buf_get's EINVAL (a pipe, a regular file, the DRM
     * file itself), EBADF only for one that is not open. */
    int pp[2];
    REQUIRE(pipe(pp) == 0);
    uint32_t none = 0;
    errno = 0;
    CHECK(drmPrimeFDToHandle(b, pp[0], &none) == -1 && errno == EINVAL);
    int reg = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    REQUIRE(reg >= 0);
    errno = 0;
    CHECK(drmPrimeFDToHandle(b, reg, &none) == -1 && errno == EINVAL);
    errno = 0;
    CHECK(drmPrimeFDToHandle(b, a, &none) == -1 && errno == EINVAL);
    CHECK(close(reg) == 0 && close(pp[0]) == 0 && close(pp[1]) == 0);
    errno = 0;
    CHECK(drmPrimeFDToHandle(b, pp[0], &none) == -1 && errno == EBADF);

    /* The kernel's errnos through libdrm. */
    int bad = -1;
    errno = 0;
    CHECK(drmPrimeHandleToFD(a, 0x777, DRM_CLOEXEC, &bad) == -1 && errno == ENOENT);
    errno = 0;
    CHECK(drmPrimeHandleToFD(a, boc.handle, 0x1, &bad) == -1 && errno == EINVAL);

    /* Closing the descriptor leaves both handles; a closed descriptor imports nothing. */
    CHECK(close(pfd) == 0);
    CHECK(cb[100] == 0x5ca1ab1eu);
    uint32_t h = 0;
    errno = 0;
    CHECK(drmPrimeFDToHandle(b, pfd, &h) == -1 && errno == EBADF);

    /* Exporting the importer's handle gives a descriptor of the same buffer. */
    int pfd2 = -1;
    CHECK(drmPrimeHandleToFD(b, hb, DRM_CLOEXEC, &pfd2) == 0 && pfd2 >= 0);
    CHECK(drmPrimeFDToHandle(a, pfd2, &ha) == 0 && ha == boc.handle);
    CHECK(close(pfd2) == 0);

    /* The dma-buf mapping outlives the descriptor, the handles and the files. */
    CHECK(munmap(ca, size) == 0);
    CHECK(munmap(cb, size) == 0);
    CHECK(close(a) == 0);
    CHECK(close(b) == 0);
    CHECK(cd[102] == 0x0ddba11u);
    CHECK(munmap(cd, size) == 0);
}

int main(void) {
    unrelated_files();
    discovery();

    int fd = drmOpenWithType("panthor", NULL, DRM_NODE_RENDER);
    REQUIRE(fd >= 0);
    version_and_caps(fd);
    bad_pointers(fd);
    prime();

    struct drm_panthor_gpu_info gpu = {0};
    struct drm_panthor_dev_query q = {
        .type = DRM_PANTHOR_DEV_QUERY_GPU_INFO, .size = sizeof(gpu), .pointer = (uint64_t)(uintptr_t)&gpu};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q) == 0);
    CHECK(gpu.gpu_id != 0 && gpu.shader_present != 0);
    printf("gpu_id 0x%08x shader_present 0x%llx\n", gpu.gpu_id, (unsigned long long)gpu.shader_present);

    struct drm_panthor_vm_create vmc = {0};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_VM_CREATE, &vmc) == 0);

    const uint64_t size = 1 << 20, va = 0x1000000;
    struct drm_panthor_bo_create boc = {.size = size};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_BO_CREATE, &boc) == 0);
    struct drm_panthor_bo_mmap_offset mo = {.handle = boc.handle};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo) == 0);
    /* The kernel's fake offsets start at DRM_FILE_PAGE_OFFSET_START (4 GiB on 64-bit): a valid
     * offset is never 0, which clients take for "none". */
    CHECK(mo.offset >= (1ull << 32) && (mo.offset & 4095) == 0);
    uint8_t* cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mo.offset);
    REQUIRE(cpu != MAP_FAILED);
    memset(cpu, 0, size);

    struct drm_panthor_vm_bind_op op = {
        .flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, .bo_handle = boc.handle, .va = va, .size = size};
    struct drm_panthor_vm_bind bind = {.vm_id = vmc.id, .ops = {sizeof(op), 1, (uint64_t)(uintptr_t)&op}};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_VM_BIND, &bind) == 0);

    /* The stream, written through the mapping: store 0xdeadbeef at va + 64 KiB. */
    uint64_t* cs = (uint64_t*)cpu;
    cs[0] = cs_move48(0, va + 0x10000);
    cs[1] = cs_move32(2, 0xdeadbeef);
    cs[2] = cs_store_multiple(2, 0, 0x1, 0);

    /* The flush-ID page. */
    uint32_t* flush = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET);
    CHECK(flush != MAP_FAILED);
    uint32_t flush_id = flush != MAP_FAILED ? *flush : 0;

    struct drm_panthor_queue_create qc = {.priority = 0, .ringbuf_size = 64 * 1024};
    struct drm_panthor_group_create gc = {.queues = {sizeof(qc), 1, (uint64_t)(uintptr_t)&qc},
                                          .max_compute_cores = (uint8_t)__builtin_popcountll(gpu.shader_present),
                                          .max_fragment_cores = (uint8_t)__builtin_popcountll(gpu.shader_present),
                                          .max_tiler_cores = (uint8_t)__builtin_popcountll(gpu.tiler_present),
                                          .priority = PANTHOR_GROUP_PRIORITY_MEDIUM,
                                          .compute_core_mask = gpu.shader_present,
                                          .fragment_core_mask = gpu.shader_present,
                                          .tiler_core_mask = gpu.tiler_present,
                                          .vm_id = vmc.id};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_GROUP_CREATE, &gc) == 0);

    uint32_t timeline;
    REQUIRE(drmSyncobjCreate(fd, 0, &timeline) == 0);
    struct drm_panthor_sync_op sig = {
        .flags = DRM_PANTHOR_SYNC_OP_SIGNAL | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ,
        .handle = timeline,
        .timeline_value = 1};
    struct drm_panthor_queue_submit qs = {.queue_index = 0,
                                          .stream_size = 3 * 8,
                                          .stream_addr = va,
                                          .latest_flush = flush_id,
                                          .syncs = {sizeof(sig), 1, (uint64_t)(uintptr_t)&sig}};
    struct drm_panthor_group_submit gs = {.group_handle = gc.group_handle,
                                          .queue_submits = {sizeof(qs), 1, (uint64_t)(uintptr_t)&qs}};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &gs) == 0);

    uint64_t point = 1;
    CHECK(drmSyncobjTimelineWait(fd, &timeline, &point, 1, now_ns() + 5000000000ll, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
                                 NULL) == 0);
    CHECK(*(volatile uint32_t*)(cpu + 0x10000) == 0xdeadbeefu);
    printf("stored by the GPU: 0x%08x\n", *(volatile uint32_t*)(cpu + 0x10000));

    /* A wait that must time out, on the host's clock: 50 ms for a point never submitted. */
    uint64_t never = 2;
    const int64_t t0 = now_ns();
    errno = 0;
    CHECK(drmSyncobjTimelineWait(fd, &timeline, &never, 1, t0 + 50000000,
                                 DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL | DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
                                 NULL) == -ETIME);
    CHECK(now_ns() - t0 >= 40000000 && now_ns() - t0 < 3000000000ll);

    /* A sync_file export is a real, pollable descriptor. */
    uint32_t bin;
    REQUIRE(drmSyncobjCreate(fd, DRM_SYNCOBJ_CREATE_SIGNALED, &bin) == 0);
    int sf = -1;
    CHECK(drmSyncobjExportSyncFile(fd, bin, &sf) == 0 && sf >= 0);
    if (sf >= 0) {
        CHECK(fcntl(sf, F_GETFD) >= 0);
        struct pollfd p = {.fd = sf, .events = POLLIN};
        CHECK(poll(&p, 1, 1000) == 1 && (p.revents & POLLIN));
        uint32_t imported;
        REQUIRE(drmSyncobjCreate(fd, 0, &imported) == 0);
        CHECK(drmSyncobjImportSyncFile(fd, imported, sf) == 0);
        CHECK(drmSyncobjWait(fd, &imported, 1, now_ns() + 1000000000ll, 0, NULL) == 0);
        CHECK(close(sf) == 0);
        drmSyncobjDestroy(fd, imported);
    }
    int sobj = -1;
    CHECK(drmSyncobjHandleToFD(fd, bin, &sobj) == 0 && sobj >= 0);
    int fd2 = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    CHECK(fd2 >= 0 && fd2 != fd);
    uint32_t in2 = 0;
    CHECK(drmSyncobjFDToHandle(fd2, sobj, &in2) == 0 && in2 != 0);
    CHECK(drmSyncobjWait(fd2, &in2, 1, now_ns() + 1000000000ll, 0, NULL) == 0);
    close(sobj);
    /* An independent file: fd's BO handle means nothing in fd2. */
    struct drm_gem_close gcl = {.handle = boc.handle};
    errno = 0;
    CHECK(drmIoctl(fd2, DRM_IOCTL_GEM_CLOSE, &gcl) == -1 && errno == EINVAL);

    /* dup: the same file under another number, alive until the last descriptor is closed. */
    int d = dup(fd);
    CHECK(d >= 0);
    struct drm_panthor_group_destroy gd = {.group_handle = gc.group_handle};
    CHECK(drmIoctl(d, DRM_IOCTL_PANTHOR_GROUP_DESTROY, &gd) == 0);
    drmSyncobjDestroy(fd, timeline);
    drmSyncobjDestroy(fd, bin);
    CHECK(munmap(cpu, size) == 0);
    if (flush != MAP_FAILED)
        CHECK(munmap(flush, 4096) == 0);
    CHECK(close(fd) == 0);
    drmVersionPtr v = drmGetVersion(d);
    CHECK(v != NULL);
    if (v)
        drmFreeVersion(v);
    CHECK(close(d) == 0);
    CHECK(close(fd2) == 0);
    errno = 0;
    CHECK(ioctl(d, DRM_IOCTL_VERSION, NULL) == -1 && errno == EBADF);

    return client_result("libdrm_client");
}
