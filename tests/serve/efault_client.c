/* A client of `upanthor serve` passing bad pointers: the server reads and writes the caller's
 * memory (process_vm_readv/writev on its pid), so an unmapped pointer, NULL, or a read-only page
 * written to gives EFAULT, as copy_from_user / copy_to_user do, and the server lives on. Exit 0
 * on success. */
#include "serve_util.h"

int main(void) {
    int fd = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    struct drm_panthor_dev_query q = {
        .type = DRM_PANTHOR_DEV_QUERY_GPU_INFO, .size = sizeof(struct drm_panthor_gpu_info), .pointer = 0x10};
    errno = 0;
    CHECK(drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q) == -1 && errno == EFAULT);
    errno = 0;
    CHECK(ioctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, (void*)8) == -1 && errno == EFAULT);
    errno = 0;
    CHECK(ioctl(fd, DRM_IOCTL_VERSION, NULL) == -1 && errno == EFAULT);

    /* An output into a read-only page, and a pointer into a page just unmapped. */
    void* ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(ro != MAP_FAILED);
    q.pointer = (uint64_t)(uintptr_t)ro;
    errno = 0;
    CHECK(drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q) == -1 && errno == EFAULT);
    void* gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(gone != MAP_FAILED);
    munmap(gone, 4096);
    q.pointer = (uint64_t)(uintptr_t)gone;
    errno = 0;
    CHECK(drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q) == -1 && errno == EFAULT);
    /* An _IOWR struct in a read-only page: read fine, the copy back faults. */
    errno = 0;
    CHECK(ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, ro) == -1 && errno == EFAULT);
    munmap(ro, 4096);

    /* The same query with good memory works: nothing broke. */
    struct drm_panthor_gpu_info gpu = {0};
    q.pointer = (uint64_t)(uintptr_t)&gpu;
    CHECK(drmIoctl(fd, DRM_IOCTL_PANTHOR_DEV_QUERY, &q) == 0 && gpu.gpu_id != 0);
    close(fd);
    return client_result("efault_client");
}
