/* The caller's credentials, run with libupanthor_preload.so in LD_PRELOAD: what the driver
 * answers depends on the calling process as the kernel's does. GROUP_PRIORITIES_INFO and
 * GROUP_CREATE follow capable(CAP_SYS_NICE) at the time of each call (checked with the
 * capability raised and dropped when the process holds it, otherwise without it only); the DRM
 * master on the primary node: the first opener is master, another primary client is
 * authenticated through drmGetMagic/drmAuthMagic, DROP/SET_MASTER by the former master, and a
 * render node has no master. Exit 0 on success. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xf86drm.h>

#include "client_check.h"
#include "panthor_uapi.h"

#define DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO 3u
#define ALL_PRIORITIES 0xFu
#define LOW_MEDIUM 0x3u

static struct __user_cap_data_struct g_caps[2];

static int caps_get(void) {
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    return (int)syscall(SYS_capget, &h, g_caps);
}

/* Raises or drops CAP_SYS_NICE in the effective set (it stays permitted). */
static int cap_sys_nice_effective(int on) {
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    if (on)
        g_caps[0].effective |= 1u << CAP_SYS_NICE;
    else
        g_caps[0].effective &= ~(1u << CAP_SYS_NICE);
    return (int)syscall(SYS_capset, &h, g_caps);
}

static unsigned allowed_mask(int fd) {
    uint8_t info[4] = {0xff, 0xff, 0xff, 0xff};
    struct drm_panthor_dev_query q = {
        .type = DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, .size = sizeof(info), .pointer = (uintptr_t)info};
    if (drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q))
        return 0x100;
    return info[0];
}

/* GROUP_CREATE at `priority`: 0 or errno. */
static int group_create(int fd, uint32_t vm, uint8_t priority) {
    struct drm_panthor_queue_create qc = {.priority = 0, .ringbuf_size = 4096};
    struct drm_panthor_group_create g = {
        .queues = {.stride = sizeof(qc), .count = 1, .array = (uintptr_t)&qc},
        .max_compute_cores = 1,
        .max_fragment_cores = 1,
        .max_tiler_cores = 1,
        .priority = priority,
        .compute_core_mask = 1,
        .fragment_core_mask = 1,
        .tiler_core_mask = 1,
        .vm_id = vm,
    };
    if (drmIoctl(fd, DRM_IOCTL_PANTHOR_GROUP_CREATE, &g))
        return errno;
    struct drm_panthor_group_destroy d = {.group_handle = g.group_handle};
    CHECK(drmIoctl(fd, DRM_IOCTL_PANTHOR_GROUP_DESTROY, &d) == 0);
    return 0;
}

/* What a render file may do with CAP_SYS_NICE effective or not. */
static void priorities(int fd, uint32_t vm, int nice) {
    const unsigned want = nice ? ALL_PRIORITIES : LOW_MEDIUM;
    CHECK(allowed_mask(fd) == want);
    CHECK(group_create(fd, vm, 1) == 0);
    CHECK(group_create(fd, vm, 2) == (nice ? 0 : EACCES));
    CHECK(group_create(fd, vm, 3) == (nice ? 0 : EACCES));
}

int main(void) {
    REQUIRE(caps_get() == 0);
    const int have_nice = (g_caps[0].permitted >> CAP_SYS_NICE) & 1;
    printf("creds_client: uid %d, CAP_SYS_NICE %s\n", (int)geteuid(), have_nice ? "permitted" : "not held");

    int render = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(render >= 0);
    struct drm_panthor_vm_create vc = {0};
    REQUIRE(drmIoctl(render, DRM_IOCTL_PANTHOR_VM_CREATE, &vc) == 0);
    if (have_nice) {
        REQUIRE(cap_sys_nice_effective(1) == 0);
        priorities(render, vc.id, 1);
        /* Dropped: the next call no longer has it (checked per call, as capable() is). */
        REQUIRE(cap_sys_nice_effective(0) == 0);
        priorities(render, vc.id, 0);
        REQUIRE(cap_sys_nice_effective(1) == 0);
        priorities(render, vc.id, 1);
    } else {
        priorities(render, vc.id, 0);
    }

    /* The DRM master. */
    int master = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
    int client = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
    REQUIRE(master >= 0 && client >= 0);
    CHECK(drmIsMaster(master));
    CHECK(!drmIsMaster(client));
    CHECK(!drmIsMaster(render));
    /* The master gets every priority whatever the caller's capabilities. */
    if (have_nice)
        REQUIRE(cap_sys_nice_effective(0) == 0);
    CHECK(allowed_mask(master) == ALL_PRIORITIES);
    CHECK(allowed_mask(client) == LOW_MEDIUM);
    drm_magic_t magic = 0;
    CHECK(drmGetMagic(client, &magic) == 0 && magic != 0);
    CHECK(drmAuthMagic(client, magic) != 0); /* only the master authenticates */
    CHECK(drmAuthMagic(master, magic) == 0);
    CHECK(drmAuthMagic(master, magic) != 0); /* once */
    CHECK(drmGetMagic(render, &magic) != 0 && errno == EACCES);
    /* The former master gives the role up and takes it back, without privileges. */
    CHECK(drmDropMaster(master) == 0);
    CHECK(!drmIsMaster(master));
    CHECK(allowed_mask(master) == LOW_MEDIUM);
    CHECK(drmSetMaster(master) == 0);
    CHECK(drmIsMaster(master));
    /* The master's file closes: the next primary opener becomes master. */
    CHECK(close(master) == 0);
    int next = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);
    REQUIRE(next >= 0);
    CHECK(drmIsMaster(next));
    CHECK(!drmIsMaster(client));

    CHECK(close(next) == 0);
    CHECK(close(client) == 0);
    CHECK(close(render) == 0);
    return client_result("creds_client");
}
