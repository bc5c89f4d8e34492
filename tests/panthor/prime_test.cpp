// PRIME on panthor: a shareable BO moves between two files of the device as a dma_buf and
// stays one BO (same pages, mappable in the importer's VM); a BO private to a VM cannot be
// exported (panthor_gem_prime_export: -EINVAL), as upstream. Between devices: another device's
// dma_buf becomes a panthor BO over the exporter's pages (what the GPU maps with VM_BIND and the
// CPU maps through the BO's offset), and a panthor BO exported to another device stays pinned
// while that device is attached.
#include <cstring>

#include "drm/drm_file.h"
#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_mmap.h"
#include "drm/drm_prime.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"
#include "uapi/drm/drm.h"

namespace panthor::testing {
namespace {

constexpr u64 SZ_4K = 4096;
constexpr u64 kVa = 0x100000;

// Another GEM device of the machine (a display controller, say): shmem objects, and imports of
// other devices' dma_bufs.
struct OtherDevice {
    static const drm::DriverDesc& driver() {
        static const drm::DriverDesc d = {
            .name = "other",
            .desc = "another GEM device",
            .driver_features = drm::DRIVER_GEM | drm::DRIVER_RENDER,
            .gem_prime_import_sg_table = drm::drm_gem_shmem_prime_import_sg_table,
        };
        return d;
    }
    OtherDevice() : dev(driver()) {
        drm::drm_vma_offset_manager_init(&mgr, drm::DRM_FILE_PAGE_OFFSET_START, drm::DRM_FILE_PAGE_OFFSET_SIZE);
        dev.vma_offset_manager = &mgr;
        EXPECT_EQ(drm::drm_open(&dev, &file), 0);
    }
    ~OtherDevice() {
        if (file)
            drm::drm_release(file);
        drm::drm_vma_offset_manager_destroy(&mgr);
    }
    // A BO with a handle in `file` (its only reference).
    drm::drm_gem_shmem_object* create(u64 size, u32* handle) {
        drm::drm_gem_shmem_object* shmem = nullptr;
        EXPECT_EQ(drm::drm_gem_shmem_create(&mgr, size, &shmem), 0);
        shmem->base.dev = &dev;
        EXPECT_EQ(file->gem.handle_create(&shmem->base, handle), 0);
        drm::drm_gem_object_put(&shmem->base);
        return shmem;
    }
    int prime(unsigned cmd, drm::uapi::drm_prime_handle* args) {
        drm::UserRange r(*args);
        return drm::ioctl(file, cmd, args);
    }

    drm::drm_vma_offset_manager mgr;
    drm::drm_device dev;
    drm::drm_file* file = nullptr;
};

class PanthorPrime : public PanthorTest {
protected:
    void TearDown() override {
        EXPECT_EQ(drm::drm_fd_count(), 0u);
        PanthorTest::TearDown();
        EXPECT_EQ(kshim::dma_buf_live(), 0);
    }

    int handle_to_fd(u32 handle, int* fd, drm::drm_file* f = nullptr) {
        drm::uapi::drm_prime_handle args{handle, drm::uapi::DRM_CLOEXEC | drm::uapi::DRM_RDWR, -1};
        const int ret = ioctl(drm::uapi::DRM_IOCTL_PRIME_HANDLE_TO_FD, &args, f);
        *fd = args.fd;
        return ret;
    }
    int fd_to_handle(int fd, u32* handle, drm::drm_file* f = nullptr) {
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
    drm::drm_file* other = nullptr;
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

TEST_F(PanthorPrime, ForeignDmaBufIsMappedByTheGpuAndTheCpu) {
    OtherDevice other;
    u32 oh = 0;
    drm::drm_gem_shmem_object* exp = other.create(2 * SZ_4K, &oh);
    drm::uapi::drm_prime_handle ex{oh, drm::uapi::DRM_CLOEXEC | drm::uapi::DRM_RDWR, -1};
    ASSERT_EQ(other.prime(drm::uapi::DRM_IOCTL_PRIME_HANDLE_TO_FD, &ex), 0);

    u32 bo = 0;
    ASSERT_EQ(fd_to_handle(ex.fd, &bo), 0);
    u32 again = 0;
    ASSERT_EQ(fd_to_handle(ex.fd, &again), 0);
    EXPECT_EQ(again, bo);  // one handle per dma_buf and file
    EXPECT_EQ(kshim::dma_buf_attachments_live(), 1);
    drm::drm_gem_object* obj = file->gem.lookup(bo);
    ASSERT_NE(obj, nullptr);
    EXPECT_EQ(obj->funcs, &panthor_gem_funcs);  // a panthor BO (gem_create_object)
    EXPECT_TRUE(drm::drm_gem_is_imported(obj));
    drm::drm_gem_object_put(obj);

    // The GPU: VM_BIND maps the exporter's pages, page for page.
    const u32 vm_id = vm_create();
    ASSERT_EQ(vm_bind(vm_id, DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, bo, 0, kVa, 2 * SZ_4K), 0);
    panthor_vm* vm = panthor_vm_pool_get_vm(static_cast<panthor_file*>(file->driver_priv)->vms, vm_id);
    ASSERT_NE(vm, nullptr);
    EXPECT_EQ(panthor_vm_iova_to_phys(vm, kVa), kshim::page_to_phys(exp->pages[0]));
    EXPECT_EQ(panthor_vm_iova_to_phys(vm, kVa + SZ_4K + 0x10), kshim::page_to_phys(exp->pages[1]) + 0x10);
    panthor_vm_put(vm);

    // The CPU: the BO's mmap offset maps the same pages.
    drm_panthor_bo_mmap_offset off{};
    off.handle = bo;
    ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &off), 0);
    drm::VmArea* vma = nullptr;
    ASSERT_EQ(drm::drm_mmap(file, off.offset, 2 * SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    static_cast<u32*>(vma->addr)[SZ_4K / 4 + 9] = 0xd00dfeed;
    EXPECT_EQ(static_cast<u32*>(kshim::page_address(exp->pages[1]))[9], 0xd00dfeedu);
    drm::drm_munmap(vma);

    // The exporter lets go of everything; the import keeps the buffer until its handle goes.
    EXPECT_EQ(drm::drm_fd_close(ex.fd), 0);
    drm::drm_release(other.file);
    other.file = nullptr;
    EXPECT_EQ(exp->pages_pin_count, 1u);
    EXPECT_EQ(vm_bind(vm_id, DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP, 0, 0, kVa, 2 * SZ_4K), 0);
    vm_destroy(vm_id);
    drm::uapi::drm_gem_close gc{bo, 0};
    EXPECT_EQ(ioctl(drm::uapi::DRM_IOCTL_GEM_CLOSE, &gc), 0);
    advance_until_idle();  // the VM's deferred cleanup drops its last BO reference
    EXPECT_EQ(kshim::dma_buf_attachments_live(), 0);
    EXPECT_EQ(kshim::dma_buf_live(), 0);
}

TEST_F(PanthorPrime, BoExportedToAnotherDeviceIsPinnedWhileAttached) {
    const u32 bo = bo_create(2 * SZ_4K);
    auto* cpu = static_cast<u32*>(bo_cpu(bo, 2 * SZ_4K));
    ASSERT_NE(cpu, nullptr);
    cpu[3] = 0xabad1dea;
    int fd = -1;
    ASSERT_EQ(handle_to_fd(bo, &fd), 0);
    auto* pbo = [&] {
        drm::drm_gem_object* obj = file->gem.lookup(bo);
        drm::drm_gem_object_put(obj);
        return to_panthor_bo(obj);
    }();
    const u32 pins = pbo->base.pages_pin_count;

    {
        OtherDevice other;
        drm::uapi::drm_prime_handle im{0, 0, fd};
        ASSERT_EQ(other.prime(drm::uapi::DRM_IOCTL_PRIME_FD_TO_HANDLE, &im), 0);
        EXPECT_EQ(pbo->base.pages_pin_count, pins + 1);
        drm::drm_gem_object* obj = other.file->gem.lookup(im.handle);
        ASSERT_NE(obj, nullptr);
        drm::SgTable* sgt = nullptr;
        ASSERT_EQ(drm::drm_gem_shmem_get_pages_sgt(drm::to_drm_gem_shmem_obj(obj), &sgt), 0);
        EXPECT_EQ(drm::sg_dma_address(&sgt->sgl[0]), kshim::page_to_phys(pbo->base.pages[0]));
        drm::IosysMap map;
        ASSERT_EQ(drm::drm_gem_vmap(obj, &map), 0);
        EXPECT_EQ(static_cast<u32*>(map.vaddr)[3], 0xabad1deau);
        drm::drm_gem_vunmap(obj, &map);
        drm::drm_gem_object_put(obj);
    }
    // The other device's file closed: detached, unpinned.
    EXPECT_EQ(pbo->base.pages_pin_count, pins);
    EXPECT_EQ(kshim::dma_buf_attachments_live(), 0);
    EXPECT_EQ(drm::drm_fd_close(fd), 0);
}

// 1.7: BO_QUERY_INFO tells a foreign import from our own export coming back; BO_SYNC leaves a
// foreign import to its exporter.
TEST_F(PanthorPrime, QueryInfoFlagsOnlyForeignImports) {
    auto query = [&](u32 handle, drm::drm_file* f = nullptr) {
        drm_panthor_bo_query_info info{handle, ~0u, ~0u, 0xdead};
        EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_QUERY_INFO, &info, f), 0);
        return info;
    };
    drm::drm_file* second = nullptr;
    ASSERT_EQ(open_file(&second), 0);
    const u32 bo = bo_create(SZ_4K, DRM_PANTHOR_BO_WB_MMAP);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(bo, &fd), 0);
    u32 same = 0;
    ASSERT_EQ(fd_to_handle(fd, &same, second), 0);
    EXPECT_EQ(drm::drm_fd_close(fd), 0);
    drm_panthor_bo_query_info info = query(same, second);
    EXPECT_EQ(info.extra_flags, 0u) << "our own export re-imported is the same BO";
    EXPECT_EQ(info.create_flags, u32{DRM_PANTHOR_BO_WB_MMAP});
    EXPECT_EQ(info.pad, 0u);
    drm_panthor_bo_sync_op op{same, DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH, 0, 64};
    drm::UserRange r(&op, sizeof(op));
    drm_panthor_bo_sync sync{{sizeof(op), 1, drm::user_ptr(&op)}};
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_SYNC, &sync, second), 0);
    drm::drm_release(second);

    OtherDevice other;
    u32 oh = 0;
    other.create(SZ_4K, &oh);
    drm::uapi::drm_prime_handle ex{oh, drm::uapi::DRM_CLOEXEC | drm::uapi::DRM_RDWR, -1};
    ASSERT_EQ(other.prime(drm::uapi::DRM_IOCTL_PRIME_HANDLE_TO_FD, &ex), 0);
    u32 foreign = 0;
    ASSERT_EQ(fd_to_handle(ex.fd, &foreign), 0);
    EXPECT_EQ(drm::drm_fd_close(ex.fd), 0);
    info = query(foreign);
    EXPECT_EQ(info.extra_flags, u32{DRM_PANTHOR_BO_IS_IMPORTED});
    EXPECT_EQ(info.create_flags, 0u);
    EXPECT_EQ(info.pad, 0u);
    op.handle = foreign;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_SYNC, &sync), -EINVAL) << "the exporter owns its caches";
    drm::uapi::drm_gem_close gc{foreign, 0};
    EXPECT_EQ(ioctl(drm::uapi::DRM_IOCTL_GEM_CLOSE, &gc), 0);
}

// DMA_BUF_IOCTL_SYNC on a panthor export runs panthor's hooks: begin syncs for the CPU, end for
// the devices, each importer's mapping included.
TEST_F(PanthorPrime, DmaBufCpuAccessSyncsEveryMapping) {
    const u32 bo = bo_create(2 * SZ_4K, DRM_PANTHOR_BO_WB_MMAP);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(bo, &fd), 0);
    auto& cs = ptdev->cache_sync;
    auto sync = [&](u64 flags) {
        kshim::dma_buf_sync args{flags};
        drm::UserRange r(&args, sizeof(args));
        kshim::dma_buf* dmabuf = kshim::dma_buf_get(fd);
        const long ret = kshim::dma_buf_ioctl(dmabuf, kshim::DMA_BUF_IOCTL_SYNC, drm::user_ptr(&args));
        kshim::dma_buf_put(dmabuf);
        return ret;
    };
    ASSERT_EQ(sync(kshim::DMA_BUF_SYNC_START | kshim::DMA_BUF_SYNC_READ), 0);
    EXPECT_EQ(cs.for_cpu.load(), 0u) << "no mapping of the BO yet";

    {
        OtherDevice other;
        drm::uapi::drm_prime_handle im{0, 0, fd};
        ASSERT_EQ(other.prime(drm::uapi::DRM_IOCTL_PRIME_FD_TO_HANDLE, &im), 0);
        ASSERT_EQ(sync(kshim::DMA_BUF_SYNC_START | kshim::DMA_BUF_SYNC_READ), 0);
        EXPECT_GE(cs.for_cpu.load(), 1u) << "the attachment's mapping, for the CPU";
        EXPECT_EQ(cs.for_device.load(), 0u);
        const u64 for_cpu = cs.for_cpu.load();
        ASSERT_EQ(sync(kshim::DMA_BUF_SYNC_END | kshim::DMA_BUF_SYNC_WRITE), 0);
        EXPECT_EQ(cs.for_device.load(), for_cpu) << "the same mappings, for the device";
    }
    EXPECT_EQ(drm::drm_fd_close(fd), 0);
}

}  // namespace
}  // namespace panthor::testing
