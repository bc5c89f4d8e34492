// mmap(2) of a DRM file: a GEM object's fake offset gives a CPU view of its pages (the bytes the
// GPU reads at the same physical address), the mapping keeps the object alive, every rejected
// request has the kernel's errno, and a driver mmap hook replaces the GEM path.
#include <gtest/gtest.h>

#include <cstring>

#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_mmap.h"
#include "kernel_shim/fault_inject.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

namespace {

constexpr u64 kPage = PAGE_SIZE;

// A device whose GEM objects take their mmap offsets from `mgr`, and one open file on it.
struct GemDevice {
    explicit GemDevice(const DriverDesc& d = full_driver()) : dev(d) {
        drm_vma_offset_manager_init(&mgr, DRM_FILE_PAGE_OFFSET_START, DRM_FILE_PAGE_OFFSET_SIZE);
        dev.vma_offset_manager = &mgr;
        EXPECT_EQ(drm_open(&dev, &file), 0);
    }
    ~GemDevice() {
        if (file)
            drm_release(file);
        drm_vma_offset_manager_destroy(&mgr);
    }

    // A shmem object of `size` bytes with a handle in `file` (the only reference) and an offset.
    drm_gem_shmem_object* create(u64 size, u64* offset, u32* handle = nullptr) {
        drm_gem_shmem_object* shmem = nullptr;
        EXPECT_EQ(drm_gem_shmem_create(&mgr, size, &shmem), 0);
        u32 h = 0;
        EXPECT_EQ(file->gem.handle_create(&shmem->base, &h), 0);
        drm_gem_object_put(&shmem->base);
        EXPECT_EQ(drm_gem_create_mmap_offset(&shmem->base), 0);
        *offset = drm_vma_node_offset_addr(&shmem->base.vma_node);
        if (handle)
            *handle = h;
        return shmem;
    }

    drm_vma_offset_manager mgr;
    drm::drm_device dev;
    drm_file* file = nullptr;
};

u8* page_bytes(drm_gem_shmem_object* shmem, u64 index) {
    return static_cast<u8*>(page_address(shmem->pages[index]));
}

}  // namespace

class DrmMmap : public kshim::testing::KernelTest {
protected:
    void TearDown() override {
        EXPECT_EQ(drm_mmap_live(), 0);
        KernelTest::TearDown();
    }
};

// drm_gem_private_object_init takes the device, as upstream: the object remembers it and takes
// its mmap offsets from the device's manager.
TEST_F(DrmMmap, PrivateObjectInitTakesTheDevicesOffsetManager) {
    GemDevice g;
    drm_gem_object obj;
    drm_gem_private_object_init(&g.dev, &obj, 4 * kPage);
    EXPECT_EQ(obj.dev, &g.dev);
    EXPECT_EQ(obj.vma_offset_manager, &g.mgr);
    ASSERT_EQ(drm_gem_create_mmap_offset(&obj), 0);
    EXPECT_GE(drm_vma_node_offset_addr(&obj.vma_node), DRM_FILE_PAGE_OFFSET_START * kPage);
    drm_gem_object_release(&obj);  // frees the offset, then the private part
    EXPECT_FALSE(drm_mm_node_allocated(&obj.vma_node.vm_node));
}

TEST_F(DrmMmap, MappingShowsTheObjectPages) {
    GemDevice g;
    u64 offset = 0;
    drm_gem_shmem_object* shmem = g.create(4 * kPage, &offset);
    ASSERT_GE(offset, DRM_FILE_PAGE_OFFSET_START << PAGE_SHIFT);

    VmArea* vma = nullptr;
    ASSERT_EQ(drm_mmap(g.file, offset, 4 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    ASSERT_NE(vma, nullptr);
    ASSERT_NE(vma->addr, nullptr);
    EXPECT_EQ(vma->vm_private_data, &shmem->base);
    EXPECT_EQ(vma->vm_flags & (VM_READ | VM_WRITE | VM_SHARED), VM_READ | VM_WRITE | VM_SHARED);
    EXPECT_FALSE(vma->vm_flags & VM_EXEC);

    // The mapping is the backing itself: a CPU write is what the GPU reads by physical address.
    auto* cpu = static_cast<u8*>(vma->addr);
    std::memset(cpu, 0xab, 4 * kPage);
    cpu[3 * kPage + 17] = 0x5c;
    ASSERT_NE(shmem->pages, nullptr);
    EXPECT_EQ(page_bytes(shmem, 0)[0], 0xab);
    EXPECT_EQ(page_bytes(shmem, 3)[17], 0x5c);
    EXPECT_EQ(*static_cast<u8*>(phys_to_virt(page_to_phys(shmem->pages[3]) + 17)), 0x5c);
    EXPECT_EQ(drm_mmap_live(), 1);

    drm_munmap(vma);
    EXPECT_EQ(drm_mmap_live(), 0);
    // The pages stay with the object until it goes (nothing evicts them), unpinned.
    EXPECT_EQ(shmem->pages_pin_count, 0u);
    EXPECT_EQ(shmem->vmap_use_count, 0u);
}

TEST_F(DrmMmap, OffsetInsideTheObjectMapsFromThatPage) {
    GemDevice g;
    u64 offset = 0;
    drm_gem_shmem_object* shmem = g.create(4 * kPage, &offset);

    VmArea* vma = nullptr;
    ASSERT_EQ(drm_mmap(g.file, offset + 2 * kPage, 2 * kPage, PROT_READ, MAP_SHARED, &vma), 0);
    static_cast<u8*>(vma->addr)[5] = 0x77;  // the backing is writable even through a read mapping
    EXPECT_EQ(page_bytes(shmem, 2)[5], 0x77);
    drm_munmap(vma);
}

TEST_F(DrmMmap, TwoMappingsShareThePages) {
    GemDevice g;
    u64 offset = 0;
    drm_gem_shmem_object* shmem = g.create(2 * kPage, &offset);
    VmArea* a = nullptr;
    VmArea* b = nullptr;
    ASSERT_EQ(drm_mmap(g.file, offset, 2 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED, &a), 0);
    ASSERT_EQ(drm_mmap(g.file, offset + kPage, kPage, PROT_READ, MAP_SHARED, &b), 0);
    static_cast<u8*>(a->addr)[kPage + 9] = 0x42;
    EXPECT_EQ(static_cast<u8*>(b->addr)[9], 0x42);
    EXPECT_EQ(shmem->vmap_use_count, 2u);
    drm_munmap(a);
    EXPECT_EQ(static_cast<u8*>(b->addr)[9], 0x42);  // still mapped: b holds its own vmap
    drm_munmap(b);
    EXPECT_EQ(shmem->vmap_use_count, 0u);
}

TEST_F(DrmMmap, MappingKeepsTheObjectAliveAfterItsHandleIsClosed) {
    GemDevice g;
    u64 offset = 0;
    u32 handle = 0;
    g.create(kPage, &offset, &handle);
    VmArea* vma = nullptr;
    ASSERT_EQ(drm_mmap(g.file, offset, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    ASSERT_EQ(g.file->gem.handle_delete(handle), 0);  // the handle held the only other reference

    std::memset(vma->addr, 1, kPage);  // still ours: ASan would flag a freed backing
    auto* obj = static_cast<drm_gem_object*>(vma->vm_private_data);
    EXPECT_EQ(kref_read(&obj->refcount), 1u);
    // The offset stays reserved while the object lives, but a new mapping needs a handle.
    VmArea* again = nullptr;
    EXPECT_EQ(drm_mmap(g.file, offset, kPage, PROT_READ, MAP_SHARED, &again), -EACCES);
    EXPECT_EQ(again, nullptr);
    drm_munmap(vma);  // frees the object: the leak check at teardown sees nothing left
}

TEST_F(DrmMmap, RejectedRequestsHaveTheKernelErrno) {
    GemDevice g;
    u64 offset = 0;
    g.create(2 * kPage, &offset);
    VmArea* vma = reinterpret_cast<VmArea*>(0x1);
    const int rw = PROT_READ | PROT_WRITE;

    EXPECT_EQ(drm_mmap(g.file, offset, 0, rw, MAP_SHARED, &vma), -EINVAL);
    EXPECT_EQ(vma, nullptr);
    EXPECT_EQ(drm_mmap(g.file, offset + 8, kPage, rw, MAP_SHARED, &vma), -EINVAL);
    EXPECT_EQ(drm_mmap(g.file, offset, kPage + 8, rw, MAP_SHARED, &vma), -EINVAL);
    EXPECT_EQ(drm_mmap(g.file, offset, kPage, rw, 0, &vma), -EINVAL);  // neither shared nor private
    EXPECT_EQ(drm_mmap(g.file, offset, kPage, rw | 0x100, MAP_SHARED, &vma), -EINVAL);
    // Past the object, or not an object's offset at all.
    EXPECT_EQ(drm_mmap(g.file, offset, 3 * kPage, rw, MAP_SHARED, &vma), -EINVAL);
    EXPECT_EQ(drm_mmap(g.file, offset + kPage, 2 * kPage, rw, MAP_SHARED, &vma), -EINVAL);
    EXPECT_EQ(drm_mmap(g.file, 0, kPage, rw, MAP_SHARED, &vma), -EINVAL);
    EXPECT_EQ(drm_mmap(g.file, offset + 64 * kPage, kPage, rw, MAP_SHARED, &vma), -EINVAL);
    // Shmem pages cannot back a copy-on-write mapping, even a read-only one.
    EXPECT_EQ(drm_mmap(g.file, offset, kPage, PROT_READ, MAP_PRIVATE, &vma), -EINVAL);
    EXPECT_EQ(drm_mmap_live(), 0);

    g.dev.unplug();
    EXPECT_EQ(drm_mmap(g.file, offset, kPage, rw, MAP_SHARED, &vma), -ENODEV);
    EXPECT_EQ(drm_mmap_live(), 0);
}

TEST_F(DrmMmap, ObjectWithoutAHandleCannotBeMapped) {
    GemDevice g;
    drm_gem_shmem_object* shmem = nullptr;
    ASSERT_EQ(drm_gem_shmem_create(&g.mgr, kPage, &shmem), 0);
    ASSERT_EQ(drm_gem_create_mmap_offset(&shmem->base), 0);
    VmArea* vma = nullptr;
    EXPECT_EQ(drm_mmap(g.file, drm_vma_node_offset_addr(&shmem->base.vma_node), kPage, PROT_READ, MAP_SHARED, &vma),
              -EACCES);
    EXPECT_EQ(kref_read(&shmem->base.refcount), 1u);  // the lookup's reference was dropped
    drm_gem_object_put(&shmem->base);
}

TEST_F(DrmMmap, AllocationFailureLeavesNothingBehind) {
    GemDevice g;
    u64 offset = 0;
    drm_gem_shmem_object* shmem = g.create(kPage, &offset);
    // Fail each allocation of the path in turn (the VmArea, the page array, the backing...).
    for (u64 nth = 1;; nth++) {
        ASSERT_LT(nth, 10u);
        kshim::FaultPlan plan;
        plan.fail_nth = nth;
        kshim::fault_inject_arm(plan);
        VmArea* vma = nullptr;
        const int ret = drm_mmap(g.file, offset, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, &vma);
        kshim::fault_inject_disarm();
        if (ret == 0) {
            // The VmArea, the page array, the block list and the pages came first.
            EXPECT_GT(nth, 3u);
            drm_munmap(vma);
            break;
        }
        EXPECT_EQ(ret, -ENOMEM) << "nth " << nth;
        EXPECT_EQ(vma, nullptr);
        EXPECT_EQ(drm_mmap_live(), 0);
        EXPECT_EQ(shmem->vmap_use_count, 0u);
        EXPECT_EQ(shmem->pages_pin_count, 0u);
    }
}

namespace {

// A driver with its own mmap hook: offsets from 1 TiB up are a register page read through
// io_read32; everything below goes to drm_gem_mmap.
constexpr u64 kIoOffset = u64{1} << 40;
int io_closes = 0;

u32 io_read32(VmArea* vma, u64 offset) {
    return static_cast<u32>(vma->vm_pgoff << 16) | static_cast<u32>(offset);
}
void io_close(VmArea*) {
    io_closes++;
}
const VmOperations io_ops = {.open = nullptr, .close = io_close, .io_read32 = io_read32};

int hook_mmap(drm_file*, VmArea* vma) {
    if ((vma->vm_pgoff << PAGE_SHIFT) < kIoOffset)
        return drm_gem_mmap(vma);
    if (vma->length != kPage || (vma->vm_flags & VM_WRITE))
        return -EINVAL;
    vma->vm_flags = (vma->vm_flags & ~VM_MAYWRITE) | VM_IO | VM_PFNMAP;
    vma->vm_ops = &io_ops;
    return 0;
}

DriverDesc hook_driver() {
    DriverDesc d = full_driver();
    d.mmap = hook_mmap;
    return d;
}

}  // namespace

TEST_F(DrmMmap, DriverHookServesIoMappings) {
    io_closes = 0;
    const DriverDesc d = hook_driver();
    GemDevice g(d);

    VmArea* io = nullptr;
    ASSERT_EQ(drm_mmap(g.file, kIoOffset, kPage, PROT_READ, MAP_SHARED, &io), 0);
    EXPECT_EQ(io->addr, nullptr);
    EXPECT_TRUE(io->vm_flags & VM_IO);
    EXPECT_FALSE(io->vm_flags & VM_MAYWRITE);
    EXPECT_EQ(vma_read32(io, 8), static_cast<u32>((kIoOffset >> PAGE_SHIFT) << 16) | 8u);
    VmArea* rejected = nullptr;
    EXPECT_EQ(drm_mmap(g.file, kIoOffset, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, &rejected), -EINVAL);
    EXPECT_EQ(io_closes, 0);  // a refused mapping is not closed
    drm_munmap(io);
    EXPECT_EQ(io_closes, 1);

    // Below the I/O range the hook hands over to GEM; a memory mapping reads 0 through vma_read32.
    u64 offset = 0;
    g.create(kPage, &offset);
    VmArea* mem = nullptr;
    ASSERT_EQ(drm_mmap(g.file, offset, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, &mem), 0);
    static_cast<u32*>(mem->addr)[0] = 0xdeadbeef;
    EXPECT_EQ(vma_read32(mem, 0), 0u);
    drm_munmap(mem);
}
