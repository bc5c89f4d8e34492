/* Shared by the serve tests' clients (tests/serve/CMakeLists.txt): descriptor passing over a
 * UNIX socket, the server's pid and log (with_server.sh), and a GPU context that submits the
 * store job of tests/preload/libdrm_client.c through libdrm. */
#pragma once
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"
#include "panthor_uapi.h"
#include "sw_sync_uapi.h"

static inline int send_fd(int sock, int fd) {
    char byte = 0;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    char cbuf[CMSG_SPACE(sizeof(int))];
    memset(cbuf, 0, sizeof cbuf);
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    return sendmsg(sock, &mh, 0) == 1 ? 0 : -1;
}

static inline int recv_fd(int sock) {
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    char cbuf[CMSG_SPACE(sizeof(int))];
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != 1)
        return -1;
    struct cmsghdr* c = CMSG_FIRSTHDR(&mh);
    if (!c || c->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

static inline pid_t server_pid(void) {
    const char* s = getenv("UPANTHOR_SERVER_PID");
    return s ? (pid_t)atoi(s) : 0;
}

static inline int server_log_scan(const char* path, const char* a, const char* b) {
    FILE* f = fopen(path, "r");
    char line[512];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = strstr(line, a) && strstr(line, b);
    if (f)
        fclose(f);
    return found;
}

/* Whether the server's log has a line with both `a` and `b`, waiting up to `ms` for the server
 * (another process, on the host's clock) to write it. The wait wakes on each write to the log
 * (inotify) rather than polling on a timer. */
static inline int server_log_has(const char* a, const char* b, int ms) {
    const char* path = getenv("UPANTHOR_SERVER_LOG");
    if (!path)
        return 0;
    int ifd = inotify_init1(IN_CLOEXEC);
    if (ifd >= 0 && inotify_add_watch(ifd, path, IN_MODIFY | IN_CLOSE_WRITE) < 0) {
        close(ifd);
        ifd = -1;
    }
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int found = server_log_scan(path, a, b);
    while (!found && ifd >= 0) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        const long left = ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        struct pollfd p = {.fd = ifd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        char events[4096];
        if (read(ifd, events, sizeof events) < 0)
            break;
        found = server_log_scan(path, a, b);
    }
    if (ifd >= 0)
        close(ifd);
    return found;
}

/* v10 CS instructions (hw/csf/cs_isa.h): opcode in [63:56]. */
static inline uint64_t cs_move48(unsigned dst, uint64_t imm) {
    return (1ull << 56) | ((uint64_t)dst << 48) | (imm & 0xffffffffffffull);
}
static inline uint64_t cs_move32(unsigned dst, uint32_t imm) {
    return (2ull << 56) | ((uint64_t)dst << 48) | imm;
}
static inline uint64_t cs_store_multiple(unsigned base, unsigned addr, uint16_t mask, int16_t off) {
    return (21ull << 56) | ((uint64_t)base << 48) | ((uint64_t)addr << 40) | ((uint64_t)mask << 16) | (uint16_t)off;
}

/* A new BO of `size` bytes: its handle. */
static inline uint32_t bo_create(int fd, uint64_t size) {
    struct drm_panthor_bo_create boc = {.size = size};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_BO_CREATE, &boc) == 0);
    return boc.handle;
}

/* The BO `handle` of `fd` mapped shared and writable in the CPU. */
static inline void* bo_map(int fd, uint32_t handle, uint64_t size) {
    struct drm_panthor_bo_mmap_offset mo = {.handle = handle};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo) == 0);
    void* cpu = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)mo.offset);
    REQUIRE(cpu != MAP_FAILED);
    return cpu;
}

/* A VM with a 1 MiB BO mapped at `va` (and in the CPU), and a group with one queue. */
struct gpu_ctx {
    int fd;
    uint32_t vm, bo, group;
    uint8_t* cpu;
    uint64_t size, va;
};

static inline void gpu_ctx_init(struct gpu_ctx* g, int fd) {
    memset(g, 0, sizeof *g);
    g->fd = fd;
    g->size = 1 << 20;
    g->va = 0x1000000;
    struct drm_panthor_gpu_info gpu = {0};
    struct drm_panthor_dev_query q = {
        .type = DRM_PANTHOR_DEV_QUERY_GPU_INFO, .size = sizeof(gpu), .pointer = (uint64_t)(uintptr_t)&gpu};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q) == 0);
    struct drm_panthor_vm_create vmc = {0};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_VM_CREATE, &vmc) == 0);
    g->vm = vmc.id;
    g->bo = bo_create(fd, g->size);
    g->cpu = bo_map(fd, g->bo, g->size);
    memset(g->cpu, 0, g->size);
    struct drm_panthor_vm_bind_op op = {
        .flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, .bo_handle = g->bo, .va = g->va, .size = g->size};
    struct drm_panthor_vm_bind bind = {.vm_id = vmc.id, .ops = {sizeof(op), 1, (uint64_t)(uintptr_t)&op}};
    REQUIRE(drmIoctl(fd, DRM_IOCTL_PANTHOR_VM_BIND, &bind) == 0);
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
    g->group = gc.group_handle;
}

/* Submits a stream (at BO offset `slot` * 64) storing `value` at BO offset 0x10000 + 4 * slot;
 * waits on `wait_syncobj` first when non-zero, signals `signal_syncobj` (binary). */
static inline int gpu_submit_store(struct gpu_ctx* g, unsigned slot, uint32_t value, uint32_t wait_syncobj,
                                   uint32_t signal_syncobj) {
    uint64_t* cs = (uint64_t*)(g->cpu + slot * 64);
    cs[0] = cs_move48(0, g->va + 0x10000 + 4 * slot);
    cs[1] = cs_move32(2, value);
    cs[2] = cs_store_multiple(2, 0, 0x1, 0);
    struct drm_panthor_sync_op syncs[2];
    unsigned n = 0;
    if (wait_syncobj)
        syncs[n++] = (struct drm_panthor_sync_op){
            .flags = DRM_PANTHOR_SYNC_OP_WAIT | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ, .handle = wait_syncobj};
    syncs[n++] = (struct drm_panthor_sync_op){
        .flags = DRM_PANTHOR_SYNC_OP_SIGNAL | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ, .handle = signal_syncobj};
    struct drm_panthor_queue_submit qs = {.queue_index = 0,
                                          .stream_size = 3 * 8,
                                          .stream_addr = g->va + slot * 64,
                                          .syncs = {sizeof(syncs[0]), n, (uint64_t)(uintptr_t)syncs}};
    struct drm_panthor_group_submit gs = {.group_handle = g->group,
                                          .queue_submits = {sizeof(qs), 1, (uint64_t)(uintptr_t)&qs}};
    return drmIoctl(g->fd, DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &gs);
}
