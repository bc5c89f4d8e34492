/* sw_sync's uAPI (drivers/dma-buf/sync_debug.h, not exported to userspace headers) and the
 * calls the C clients make with it: a fence at a point of a timeline, and advancing it. */
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>

struct sw_sync_create_fence_data {
    uint32_t value;
    char name[32];
    int32_t fence;
};
#define SW_SYNC_IOC_CREATE_FENCE _IOWR('W', 0, struct sw_sync_create_fence_data)
#define SW_SYNC_IOC_INC _IOW('W', 1, uint32_t)

/* A sync_file fd for point `value` of `timeline`, or -1 (errno set). */
static inline int sw_sync_create_fence(int timeline, uint32_t value) {
    struct sw_sync_create_fence_data d = {.value = value};
    snprintf(d.name, sizeof(d.name), "fence-%u", value);
    return ioctl(timeline, SW_SYNC_IOC_CREATE_FENCE, &d) == 0 ? d.fence : -1;
}

/* Advances `timeline` by n: 0 or -1 (errno set). */
static inline int sw_sync_inc(int timeline, uint32_t n) {
    return ioctl(timeline, SW_SYNC_IOC_INC, &n);
}
