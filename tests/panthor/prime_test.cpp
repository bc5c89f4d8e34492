// PRIME on panthor: a shareable BO moves between two files of the device as a dma_buf and
// stays one BO (same pages, mappable in the importer's VM); a BO private to a VM cannot be
// exported (panthor_gem_prime_export: -EINVAL), as upstream.
#include <cstring>

#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "drm/uapi/drm.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {
namespace {

constexpr u64 SZ_4K = 4096;
constexpr u64 kVa = 0x100000;

class PanthorPrime : public PanthorTest {
protected:
    void TearDown() override {
        EXPECT_EQ(drm::drm_fd_count(), 0u);
        PanthorTest::TearDown();
        EXPECT_EQ(kshim::dma_buf_live(), 0);
    }

    int handle_to_fd(u32 handle, int* fd, drm::File* f = nullptr) {
        drm::uapi::drm_prime_handle args{handle, drm::uapi::DRM_CLOEXEC | drm::uapi::DRM_RDWR, -1};
        const int ret = ioctl(drm::uapi::DRM_IOCTL_PRIME_HANDLE_TO_FD, &args, f);
        *fd = args.fd;
        return ret;
    }
    int fd_to_handle(int fd, u32* handle, drm::File* f = nullptr) {
        drm::uapi::drm_prime_handle args{0, 0, fd};
        const int ret = ioctl(drm::uapi::DRM_IOCTL_PRIME_FD_TO_HANDLE, &args, f);
        *handle = args.handle;
        return ret;
    }
};

TEST_F(PanthorPrime, ExclusiveVmBoIsNotExported) {
    const u32 vm = vm_create();
    const u32 bo = bo_create(SZ_4K, 0, vm);
    int fd = -1;
    EXPECT_EQ(handle_to_fd(bo, &fd), -EINVAL);
    EXPECT_EQ(fd, -1);
    EXPECT_EQ(file->prime.handles.size(), 0u);
    // A shareable BO of the same file exports.
    const u32 shared = bo_create(SZ_4K);
    ASSERT_EQ(handle_to_fd(shared, &fd), 0);
    EXPECT_EQ(drm::drm_fd_close(fd), 0);
    vm_destroy(vm);
}

TEST_F(PanthorPrime, SharedBoMovesToAnotherFile) {
    drm::File* other = nullptr;
    ASSERT_EQ(open_file(&other), 0);
    const u32 bo = bo_create(SZ_4K);
    auto* cpu = static_cast<u32*>(bo_cpu(bo, SZ_4K));
    ASSERT_NE(cpu, nullptr);
    cpu[7] = 0xcafef00d;

    int fd = -1;
    ASSERT_EQ(handle_to_fd(bo, &fd), 0);
    u32 imported = 0;
    ASSERT_EQ(fd_to_handle(fd, &imported, other), 0);
    EXPECT_EQ(drm::drm_fd_close(fd), 0);

    // The importer maps the same pages, and may bind the BO in its own VM.
    drm_panthor_bo_mmap_offset off{};
    off.handle = imported;
    ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &off, other), 0);
    drm::VmArea* vma = nullptr;
    ASSERT_EQ(drm::drm_mmap(other, off.offset, SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    EXPECT_EQ(static_cast<u32*>(vma->addr)[7], 0xcafef00du);
    static_cast<u32*>(vma->addr)[8] = 0x600dcafe;
    EXPECT_EQ(cpu[8], 0x600dcafeu);
    drm::drm_munmap(vma);

    const u32 vm = vm_create(0, other);
    EXPECT_EQ(vm_bind(vm, DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, imported, 0, kVa, SZ_4K, other), 0);
    EXPECT_EQ(vm_bind(vm, DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP, 0, 0, kVa, SZ_4K, other), 0);
    vm_destroy(vm, other);
    drm::drm_release(other);
}

}  // namespace
}  // namespace panthor::testing
