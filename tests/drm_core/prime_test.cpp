// PRIME (drm/drm_prime.h): a GEM object exported as a dma_buf descriptor and imported again, in
// the same file and in another file of the device. What users rely on: one dma_buf per object,
// one handle per dma_buf and file, the same pages behind both handles, the object alive while a
// handle or a descriptor names it, and the kernel's errnos.
#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <vector>

#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_mmap.h"
#include "drm/drm_prime.h"
#include "kernel_shim/dma-buf/dma-buf.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

namespace {

// A GEM device (shmem objects with mmap offsets) and two independent files on it.
struct PrimeDevice {
    explicit PrimeDevice(const DriverDesc& d = full_driver()) : dev(d) {
        drm_vma_offset_manager_init(&mgr, DRM_FILE_PAGE_OFFSET_START, DRM_FILE_PAGE_OFFSET_SIZE);
        dev.vma_offset_manager = &mgr;
        EXPECT_EQ(drm_open(&dev, &a), 0);
        EXPECT_EQ(drm_open(&dev, &b), 0);
    }
    ~PrimeDevice() {
        if (a)
            drm_release(a);
        if (b)
            drm_release(b);
        drm_vma_offset_manager_destroy(&mgr);
    }
    void close_a() {
        drm_release(a);
        a = nullptr;
    }

    // A shmem object of `size` bytes of this device with a handle in `f` (its only reference).
    drm_gem_shmem_object* create(drm_file* f, u32* handle, u64 size = 2 * PAGE_SIZE) {
        drm_gem_shmem_object* shmem = nullptr;
        EXPECT_EQ(drm_gem_shmem_create(&mgr, size, &shmem), 0);
        shmem->base.dev = &dev;
        EXPECT_EQ(f->gem.handle_create(&shmem->base, handle), 0);
        drm_gem_object_put(&shmem->base);
        EXPECT_EQ(drm_gem_create_mmap_offset(&shmem->base), 0);
        return shmem;
    }

    drm_vma_offset_manager mgr;
    drm::drm_device dev;
    drm_file* a = nullptr;
    drm_file* b = nullptr;
};

int handle_to_fd(drm_file* f, u32 handle, int* fd, u32 flags = DRM_CLOEXEC | DRM_RDWR) {
    uapi::drm_prime_handle args{handle, flags, -1};
    const int ret = call(f, DRM_IOCTL_PRIME_HANDLE_TO_FD, &args);
    *fd = args.fd;
    return ret;
}

int fd_to_handle(drm_file* f, int fd, u32* handle) {
    uapi::drm_prime_handle args{0, 0, fd};
    const int ret = call(f, DRM_IOCTL_PRIME_FD_TO_HANDLE, &args);
    *handle = args.handle;
    return ret;
}

u32 refs(drm_gem_shmem_object* shmem) {
    return kref_read(&shmem->base.refcount);
}

// A GEM driver that imports other devices' dma_bufs (drm_gem_shmem_prime_import_sg_table).
const DriverDesc& importing_driver() {
    static const DriverDesc d = [] {
        DriverDesc x = full_driver();
        x.name = "upanthor-importer";
        x.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table;
        return x;
    }();
    return d;
}

int uapi_gem_close(drm_file* f, u32 handle) {
    uapi::drm_gem_close args{handle, 0};
    return call(f, DRM_IOCTL_GEM_CLOSE, &args);
}

}  // namespace

class DrmPrime : public kshim::testing::KernelTest {
protected:
    void TearDown() override {
        EXPECT_EQ(drm_fd_count(), 0u);
        EXPECT_EQ(dma_buf_live(), 0);
        EXPECT_EQ(dma_buf_attachments_live(), 0);
        EXPECT_EQ(drm_mmap_live(), 0);
        KernelTest::TearDown();
    }
};

TEST_F(DrmPrime, CapAnswersImportAndExport) {
    PrimeDevice p;
    uapi::drm_get_cap cap{DRM_CAP_PRIME, 0};
    ASSERT_EQ(call(p.a, DRM_IOCTL_GET_CAP, &cap), 0);
    EXPECT_EQ(cap.value, DRM_PRIME_CAP_IMPORT | DRM_PRIME_CAP_EXPORT);
}

TEST_F(DrmPrime, ExportThenImportInTheSameFileGivesTheSameHandle) {
    PrimeDevice p;
    u32 h = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &h);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &fd), 0);
    EXPECT_GE(fd, 0);
    u32 again = 0;
    ASSERT_EQ(fd_to_handle(p.a, fd, &again), 0);
    EXPECT_EQ(again, h);
    EXPECT_EQ(p.a->gem.count(), 1u);
    EXPECT_EQ(shmem->base.handle_count.load(), 1u);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(DrmPrime, ReExportGivesTheSameDmaBuf) {
    PrimeDevice p;
    u32 h = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &h);
    dma_buf* first = drm_gem_prime_handle_to_dmabuf(&p.dev, p.a, h, 0);
    ASSERT_FALSE(IS_ERR(first));
    dma_buf* second = drm_gem_prime_handle_to_dmabuf(&p.dev, p.a, h, 0);
    EXPECT_EQ(first, second);
    EXPECT_EQ(shmem->base.dma_buf, first);
    EXPECT_EQ(first->priv, &shmem->base);
    EXPECT_EQ(first->size, 2 * PAGE_SIZE);
    EXPECT_EQ(first->resv, shmem->base.resv);
    dma_buf_put(first);
    dma_buf_put(second);

    // Two descriptors of one export name the same dma_buf: importing either gives one handle.
    int fd1 = -1, fd2 = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &fd1), 0);
    ASSERT_EQ(handle_to_fd(p.a, h, &fd2), 0);
    EXPECT_NE(fd1, fd2);
    dma_buf* d1 = drm_fd_get_dma_buf(fd1);
    dma_buf* d2 = drm_fd_get_dma_buf(fd2);
    EXPECT_EQ(d1, d2);
    dma_buf_put(d1);
    dma_buf_put(d2);
    u32 hb1 = 0, hb2 = 0;
    ASSERT_EQ(fd_to_handle(p.b, fd1, &hb1), 0);
    ASSERT_EQ(fd_to_handle(p.b, fd2, &hb2), 0);
    EXPECT_EQ(hb1, hb2);
    EXPECT_EQ(p.b->gem.count(), 1u);
    EXPECT_EQ(drm_fd_close(fd1), 0);
    EXPECT_EQ(drm_fd_close(fd2), 0);
}

TEST_F(DrmPrime, ImportIntoAnotherFileSharesTheObjectAndItsPages) {
    PrimeDevice p;
    u32 ha = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &ha);
    const u32 before = refs(shmem);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, ha, &fd), 0);
    // The dma_buf holds the object; the object caches the dma_buf while it has handles.
    EXPECT_EQ(refs(shmem), before + 1);

    u32 hb = 0;
    ASSERT_EQ(fd_to_handle(p.b, fd, &hb), 0);
    drm_gem_object* obj = p.b->gem.lookup(hb);
    EXPECT_EQ(obj, &shmem->base);  // the same object, not a copy
    drm_gem_object_put(obj);
    EXPECT_EQ(shmem->base.handle_count.load(), 2u);
    EXPECT_EQ(refs(shmem), before + 2);

    // Re-exporting from the importer gives back the very same dma_buf.
    int fd_b = -1;
    ASSERT_EQ(handle_to_fd(p.b, hb, &fd_b), 0);
    dma_buf* da = drm_fd_get_dma_buf(fd);
    dma_buf* db = drm_fd_get_dma_buf(fd_b);
    EXPECT_EQ(da, db);
    dma_buf_put(da);
    dma_buf_put(db);

    // A store through a's mapping is what b's mapping reads, and the other way round.
    const u64 offset = drm_vma_node_offset_addr(&shmem->base.vma_node);
    VmArea* va = nullptr;
    VmArea* vb = nullptr;
    ASSERT_EQ(drm_mmap(p.a, offset, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, &va), 0);
    ASSERT_EQ(drm_mmap(p.b, offset, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, &vb), 0);
    static_cast<u32*>(va->addr)[PAGE_SIZE / 4 + 3] = 0xdeadbeef;
    EXPECT_EQ(static_cast<u32*>(vb->addr)[PAGE_SIZE / 4 + 3], 0xdeadbeefu);
    static_cast<u8*>(vb->addr)[0] = 0x42;
    EXPECT_EQ(static_cast<u8*>(va->addr)[0], 0x42);
    drm_munmap(va);
    drm_munmap(vb);

    EXPECT_EQ(drm_fd_close(fd), 0);
    EXPECT_EQ(drm_fd_close(fd_b), 0);
    EXPECT_EQ(refs(shmem), before + 2);  // the handles' references and the cached dma_buf's
}

TEST_F(DrmPrime, ClosingTheExportingFileFirstKeepsTheObjectForTheImporter) {
    PrimeDevice p;
    u32 ha = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &ha);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, ha, &fd), 0);
    u32 hb = 0;
    ASSERT_EQ(fd_to_handle(p.b, fd, &hb), 0);
    p.close_a();
    EXPECT_EQ(shmem->base.handle_count.load(), 1u);
    drm_gem_object* obj = p.b->gem.lookup(hb);
    ASSERT_EQ(obj, &shmem->base);
    drm_gem_object_put(obj);
    EXPECT_EQ(drm_fd_close(fd), 0);
    // b's handle is now the last user; closing it frees object and dma_buf (teardown checks).
    uapi::drm_gem_close close{hb, 0};
    EXPECT_EQ(call(p.b, DRM_IOCTL_GEM_CLOSE, &close), 0);
    EXPECT_EQ(dma_buf_live(), 0);
}

TEST_F(DrmPrime, DescriptorKeepsTheObjectAfterItsLastHandle) {
    PrimeDevice p;
    u32 ha = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &ha);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, ha, &fd), 0);
    uapi::drm_gem_close close{ha, 0};
    ASSERT_EQ(call(p.a, DRM_IOCTL_GEM_CLOSE, &close), 0);
    // No handle left: the object lives on the descriptor's dma_buf alone.
    EXPECT_EQ(shmem->base.handle_count.load(), 0u);
    EXPECT_EQ(shmem->base.dma_buf, nullptr);
    EXPECT_EQ(refs(shmem), 1u);
    EXPECT_EQ(dma_buf_live(), 1);

    // Imported again (here in b), it comes back with a handle and the same dma_buf.
    u32 hb = 0;
    ASSERT_EQ(fd_to_handle(p.b, fd, &hb), 0);
    dma_buf* d = drm_fd_get_dma_buf(fd);
    EXPECT_EQ(shmem->base.dma_buf, d);
    dma_buf_put(d);
    EXPECT_EQ(drm_fd_close(fd), 0);
    EXPECT_EQ(dma_buf_live(), 1);  // cached by the object while b's handle exists
}

TEST_F(DrmPrime, ClosingTheDescriptorFirstLeavesTheHandles) {
    PrimeDevice p;
    u32 ha = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &ha);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, ha, &fd), 0);
    u32 hb = 0;
    ASSERT_EQ(fd_to_handle(p.b, fd, &hb), 0);
    EXPECT_EQ(drm_fd_close(fd), 0);
    EXPECT_EQ(drm_fd_close(fd), -EBADF);
    EXPECT_EQ(shmem->base.handle_count.load(), 2u);
    // A new export of either handle still gives the cached dma_buf, under a new descriptor.
    int fd2 = -1;
    ASSERT_EQ(handle_to_fd(p.b, hb, &fd2), 0);
    u32 again = 0;
    ASSERT_EQ(fd_to_handle(p.a, fd2, &again), 0);
    EXPECT_EQ(again, ha);
    EXPECT_EQ(drm_fd_close(fd2), 0);
    p.close_a();
    uapi::drm_gem_close close{hb, 0};
    ASSERT_EQ(call(p.b, DRM_IOCTL_GEM_CLOSE, &close), 0);
    EXPECT_EQ(dma_buf_live(), 0);
}

TEST_F(DrmPrime, AHandleClosedAndReusedIsExportedAfresh) {
    PrimeDevice p;
    u32 h1 = 0;
    p.create(p.a, &h1);
    int fd1 = -1;
    ASSERT_EQ(handle_to_fd(p.a, h1, &fd1), 0);
    uapi::drm_gem_close close{h1, 0};
    ASSERT_EQ(call(p.a, DRM_IOCTL_GEM_CLOSE, &close), 0);
    // The file's pair went with the handle: the number reused by another object exports that one.
    u32 h2 = 0;
    drm_gem_shmem_object* other = p.create(p.a, &h2);
    ASSERT_EQ(h2, h1);
    int fd2 = -1;
    ASSERT_EQ(handle_to_fd(p.a, h2, &fd2), 0);
    dma_buf* d1 = drm_fd_get_dma_buf(fd1);
    dma_buf* d2 = drm_fd_get_dma_buf(fd2);
    EXPECT_NE(d1, d2);
    EXPECT_EQ(d2->priv, &other->base);
    dma_buf_put(d1);
    dma_buf_put(d2);
    EXPECT_EQ(drm_fd_close(fd1), 0);
    EXPECT_EQ(drm_fd_close(fd2), 0);
}

TEST_F(DrmPrime, Errnos) {
    PrimeDevice p;
    u32 h = 0;
    p.create(p.a, &h);
    int fd = -1;
    // HANDLE_TO_FD: flags beyond DRM_CLOEXEC | DRM_RDWR, an unknown handle.
    EXPECT_EQ(handle_to_fd(p.a, h, &fd, 0x1), -EINVAL);
    EXPECT_EQ(handle_to_fd(p.a, h, &fd, DRM_CLOEXEC | 0x4), -EINVAL);
    EXPECT_EQ(handle_to_fd(p.a, h + 1, &fd), -ENOENT);
    EXPECT_EQ(handle_to_fd(p.b, h, &fd), -ENOENT);  // handles are per file
    EXPECT_EQ(handle_to_fd(p.a, h, &fd, 0), 0);
    // FD_TO_HANDLE: a closed descriptor, a negative one, a descriptor of another kind.
    u32 out = 0;
    EXPECT_EQ(fd_to_handle(p.b, 1000, &out), -EBADF);
    EXPECT_EQ(fd_to_handle(p.b, -1, &out), -EBADF);
    uapi::drm_syncobj_create sc{0, 0};
    ASSERT_EQ(call(p.a, DRM_IOCTL_SYNCOBJ_CREATE, &sc), 0);
    uapi::drm_syncobj_handle sh{sc.handle, 0, -1, 0, 0};
    ASSERT_EQ(call(p.a, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh), 0);
    EXPECT_EQ(fd_to_handle(p.b, sh.fd, &out), -EINVAL);
    // ...and the dma_buf descriptor is not a syncobj.
    uapi::drm_syncobj_handle sh2{0, 0, fd, 0, 0};
    EXPECT_EQ(call(p.b, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &sh2), -EINVAL);
    EXPECT_EQ(drm_fd_close(sh.fd), 0);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(DrmPrime, DriverWithoutGemRefuses) {
    static const DriverDesc no_gem = {.name = "nogem", .desc = "no GEM", .driver_features = DRIVER_RENDER};
    drm::drm_device dev(no_gem);
    drm_file* f = nullptr;
    ASSERT_EQ(drm_open(&dev, &f), 0);
    int fd = -1;
    u32 h = 0;
    EXPECT_EQ(handle_to_fd(f, 1, &fd), -EOPNOTSUPP);
    EXPECT_EQ(fd_to_handle(f, 3, &h), -EOPNOTSUPP);
    drm_release(f);
}

TEST_F(DrmPrime, ForeignDmaBufWithoutImportHookIsRefused) {
    // Another device's export, on a driver without gem_prime_import_sg_table: -EINVAL, as
    // drm_gem_prime_import_dev; nothing stays attached.
    PrimeDevice p;
    PrimeDevice q;
    u32 h = 0;
    p.create(p.a, &h);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &fd), 0);
    u32 out = 0;
    EXPECT_EQ(fd_to_handle(q.a, fd, &out), -EINVAL);
    EXPECT_EQ(q.a->gem.count(), 0u);
    EXPECT_EQ(dma_buf_attachments_live(), 0);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(DrmPrime, ForeignImportMapsTheExportersPages) {
    PrimeDevice p;
    PrimeDevice q(importing_driver());
    u32 ha = 0;
    drm_gem_shmem_object* exp = p.create(p.a, &ha, 3 * PAGE_SIZE);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, ha, &fd), 0);
    EXPECT_EQ(exp->pages_pin_count, 0u);

    u32 hq = 0;
    ASSERT_EQ(fd_to_handle(q.a, fd, &hq), 0);
    drm_gem_object* obj = q.a->gem.lookup(hq);
    ASSERT_NE(obj, nullptr);
    // A new object of the importer, over the exporter's pages, synchronised on its resv.
    EXPECT_NE(obj, &exp->base);
    EXPECT_EQ(obj->dev, &q.dev);
    EXPECT_TRUE(drm_gem_is_imported(obj));
    EXPECT_EQ(obj->size, 3 * PAGE_SIZE);
    EXPECT_EQ(obj->resv, exp->base.resv);
    EXPECT_EQ(dma_buf_attachments_live(), 1);
    EXPECT_EQ(exp->pages_pin_count, 1u);  // pinned while attached
    SgTable* sgt = nullptr;
    ASSERT_EQ(drm_gem_shmem_get_pages_sgt(to_drm_gem_shmem_obj(obj), &sgt), 0);
    u64 covered = 0;
    for (u32 i = 0; i < sgt->nents; i++) {
        for (u64 off = 0; off < sg_dma_len(&sgt->sgl[i]); off += PAGE_SIZE, covered += PAGE_SIZE)
            EXPECT_EQ(sg_dma_address(&sgt->sgl[i]) + off, page_to_phys(exp->pages[covered / PAGE_SIZE]));
    }
    EXPECT_EQ(covered, 3 * PAGE_SIZE);
    drm_gem_object_put(obj);

    // The same dma_buf again in that file: the same handle, no second attachment.
    u32 again = 0;
    ASSERT_EQ(fd_to_handle(q.a, fd, &again), 0);
    EXPECT_EQ(again, hq);
    EXPECT_EQ(dma_buf_attachments_live(), 1);

    // The importer's CPU mapping (its own fake offset) is the exporter's pages.
    obj = q.a->gem.lookup(hq);
    ASSERT_EQ(drm_gem_create_mmap_offset(obj), 0);
    const u64 off_q = drm_vma_node_offset_addr(&obj->vma_node);
    drm_gem_object_put(obj);
    VmArea* vq = nullptr;
    ASSERT_EQ(drm_mmap(q.a, off_q + PAGE_SIZE, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, &vq), 0);
    static_cast<u32*>(vq->addr)[5] = 0xfeedf00d;
    EXPECT_EQ(static_cast<u32*>(page_address(exp->pages[1]))[5], 0xfeedf00du);
    drm_munmap(vq);

    // The descriptor and the exporter's file go; the import keeps the buffer (its own dma_buf
    // reference), until its handle goes: then it detaches, unpins and everything is freed.
    EXPECT_EQ(drm_fd_close(fd), 0);
    p.close_a();
    EXPECT_EQ(dma_buf_live(), 1);
    EXPECT_EQ(exp->pages_pin_count, 1u);
    EXPECT_EQ(uapi_gem_close(q.a, hq), 0);
    EXPECT_EQ(dma_buf_attachments_live(), 0);
    EXPECT_EQ(dma_buf_live(), 0);
}

TEST_F(DrmPrime, ForeignImportOfAnObjectWithoutPagesToShareIsRefused) {
    // The exporter's object cannot give an sg table: the attach fails (-ENOSYS, as
    // drm_gem_map_attach), and the import leaves nothing behind.
    PrimeDevice p;
    PrimeDevice q(importing_driver());
    u32 h = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &h);
    static drm_gem_object_funcs no_sg;
    no_sg = *shmem->base.funcs;
    no_sg.get_sg_table = nullptr;
    shmem->base.funcs = &no_sg;
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &fd), 0);
    u32 out = 0;
    EXPECT_EQ(fd_to_handle(q.a, fd, &out), -ENOSYS);
    EXPECT_EQ(q.a->gem.count(), 0u);
    EXPECT_EQ(q.a->prime.handles.size(), 0u);
    EXPECT_EQ(dma_buf_attachments_live(), 0);
    EXPECT_EQ(shmem->pages_pin_count, 0u);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(DrmPrime, ForeignImportReExportedGivesTheSameDmaBuf) {
    PrimeDevice p;
    PrimeDevice q(importing_driver());
    u32 ha = 0;
    p.create(p.a, &ha);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, ha, &fd), 0);
    u32 hq = 0;
    ASSERT_EQ(fd_to_handle(q.a, fd, &hq), 0);
    int fd_q = -1;
    ASSERT_EQ(handle_to_fd(q.a, hq, &fd_q), 0);
    dma_buf* d1 = drm_fd_get_dma_buf(fd);
    dma_buf* d2 = drm_fd_get_dma_buf(fd_q);
    EXPECT_EQ(d1, d2);
    dma_buf_put(d1);
    dma_buf_put(d2);
    // Back on the exporter's device: the exporter's own handle.
    u32 back = 0;
    ASSERT_EQ(fd_to_handle(p.a, fd_q, &back), 0);
    EXPECT_EQ(back, ha);
    // Another file of the importer imports it afresh (its own attachment).
    u32 hqb = 0;
    ASSERT_EQ(fd_to_handle(q.b, fd, &hqb), 0);
    EXPECT_EQ(dma_buf_attachments_live(), 2);
    EXPECT_EQ(drm_fd_close(fd), 0);
    EXPECT_EQ(drm_fd_close(fd_q), 0);
}

TEST_F(DrmPrime, DmaBufDescriptorMapsTheObjectsPages) {
    PrimeDevice p;
    u32 h = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &h, 4 * PAGE_SIZE);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &fd), 0);
    VmArea* vd = nullptr;
    ASSERT_EQ(ksys_mmap(fd, PAGE_SIZE, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, &vd), 0);
    ASSERT_NE(vd->addr, nullptr);
    static_cast<u32*>(vd->addr)[1] = 0x12345678;
    // The GEM mapping of the same object reads it at the same place.
    VmArea* vg = nullptr;
    ASSERT_EQ(drm_mmap(p.a, drm_vma_node_offset_addr(&shmem->base.vma_node), 4 * PAGE_SIZE, PROT_READ, MAP_SHARED, &vg),
              0);
    EXPECT_EQ(static_cast<u32*>(vg->addr)[PAGE_SIZE / 4 + 1], 0x12345678u);
    drm_munmap(vg);
    // The mapping holds the object after the descriptor and the handle are gone.
    EXPECT_EQ(drm_fd_close(fd), 0);
    EXPECT_EQ(uapi_gem_close(p.a, h), 0);
    EXPECT_EQ(static_cast<u32*>(vd->addr)[1], 0x12345678u);
    drm_munmap(vd);
}

TEST_F(DrmPrime, DmaBufMmapErrnos) {
    PrimeDevice p;
    u32 h = 0;
    p.create(p.a, &h, 2 * PAGE_SIZE);
    int rw = -1, ro = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &rw), 0);
    VmArea* v = nullptr;
    // Past the end, unaligned, not MAP_SHARED/PRIVATE; a private writable mapping of shmem.
    EXPECT_EQ(ksys_mmap(rw, PAGE_SIZE, 2 * PAGE_SIZE, PROT_READ, MAP_SHARED, &v), -EINVAL);
    EXPECT_EQ(ksys_mmap(rw, 2 * PAGE_SIZE, PAGE_SIZE, PROT_READ, MAP_SHARED, &v), -EINVAL);
    EXPECT_EQ(ksys_mmap(rw, 100, PAGE_SIZE, PROT_READ, MAP_SHARED, &v), -EINVAL);
    EXPECT_EQ(ksys_mmap(rw, 0, PAGE_SIZE, PROT_READ, 0, &v), -EINVAL);
    EXPECT_EQ(ksys_mmap(rw, 0, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, &v), -EINVAL);
    // Not a dma_buf: closed, another kind.
    EXPECT_EQ(ksys_mmap(1000, 0, PAGE_SIZE, PROT_READ, MAP_SHARED, &v), -EBADF);
    uapi::drm_syncobj_create sc{0, 0};
    ASSERT_EQ(call(p.a, DRM_IOCTL_SYNCOBJ_CREATE, &sc), 0);
    uapi::drm_syncobj_handle sh{sc.handle, 0, -1, 0, 0};
    ASSERT_EQ(call(p.a, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &sh), 0);
    EXPECT_EQ(ksys_mmap(sh.fd, 0, PAGE_SIZE, PROT_READ, MAP_SHARED, &v), -ENODEV);  // no f_op->mmap
    EXPECT_EQ(v, nullptr);
    // An export without DRM_RDWR is read-only: no writable shared mapping, reading is fine.
    // (A second export of `h` would give its first dma_buf, read-write: another BO.)
    u32 h2 = 0;
    p.create(p.a, &h2, PAGE_SIZE);
    ASSERT_EQ(handle_to_fd(p.a, h2, &ro, DRM_CLOEXEC), 0);
    dma_buf* d = drm_fd_get_dma_buf(ro);
    ASSERT_FALSE(IS_ERR(d));
    EXPECT_FALSE(d->flags & DRM_RDWR);
    dma_buf_put(d);
    EXPECT_EQ(ksys_mmap(ro, 0, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, &v), -EACCES);
    ASSERT_EQ(ksys_mmap(ro, 0, PAGE_SIZE, PROT_READ, MAP_SHARED, &v), 0);
    EXPECT_FALSE(v->vm_flags & (VM_SHARED | VM_MAYWRITE));
    drm_munmap(v);
    EXPECT_EQ(drm_fd_close(sh.fd), 0);
    EXPECT_EQ(drm_fd_close(rw), 0);
    EXPECT_EQ(drm_fd_close(ro), 0);
}

TEST_F(DrmPrime, DmaBufSyncChecksItsFlags) {
    PrimeDevice p;
    u32 h = 0;
    p.create(p.a, &h);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &fd), 0);
    dma_buf* d = drm_fd_get_dma_buf(fd);
    ASSERT_FALSE(IS_ERR(d));
    auto sync = [&](u64 flags) {
        uapi::dma_buf_sync s{flags};
        UserRange r(s);
        return static_cast<int>(dma_buf_ioctl(d, uapi::DMA_BUF_IOCTL_SYNC, user_ptr(&s)));
    };
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_START | uapi::DMA_BUF_SYNC_READ), 0);
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_END | uapi::DMA_BUF_SYNC_READ), 0);
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_START | uapi::DMA_BUF_SYNC_RW), 0);
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_END | uapi::DMA_BUF_SYNC_WRITE), 0);
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_START), -EINVAL);  // no direction
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_END), -EINVAL);
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_READ | 0x8), -EINVAL);
    EXPECT_EQ(sync(uapi::DMA_BUF_SYNC_READ | (u64{1} << 40)), -EINVAL);
    EXPECT_EQ(dma_buf_ioctl(d, uapi::DMA_BUF_IOCTL_SYNC, 0), -EFAULT);
    EXPECT_EQ(dma_buf_ioctl(d, 0x6201, 0), -ENOTTY);
    dma_buf_put(d);
    EXPECT_EQ(drm_fd_close(fd), 0);
}

TEST_F(DrmPrime, ExportHookDecides) {
    // A driver's export hook (panthor refuses BOs private to a VM) replaces the generic export.
    PrimeDevice p;
    u32 h = 0;
    drm_gem_shmem_object* shmem = p.create(p.a, &h);
    static drm_gem_object_funcs refusing;
    refusing = *shmem->base.funcs;
    refusing.export_ = [](drm_gem_object*, int) { return ERR_PTR<dma_buf>(-EINVAL); };
    shmem->base.funcs = &refusing;
    int fd = -1;
    EXPECT_EQ(handle_to_fd(p.a, h, &fd), -EINVAL);
    EXPECT_EQ(shmem->base.dma_buf, nullptr);
    EXPECT_EQ(p.a->prime.handles.size(), 0u);
}

TEST_F(DrmPrime, ReleasingTheFileDropsItsPrimeEntries) {
    PrimeDevice p;
    u32 h = 0;
    p.create(p.a, &h);
    int fd = -1;
    ASSERT_EQ(handle_to_fd(p.a, h, &fd), 0);
    u32 hb = 0;
    ASSERT_EQ(fd_to_handle(p.b, fd, &hb), 0);
    EXPECT_EQ(p.a->prime.handles.size(), 1u);
    EXPECT_EQ(p.b->prime.handles.size(), 1u);
    EXPECT_EQ(drm_fd_close(fd), 0);
    p.close_a();
    EXPECT_EQ(dma_buf_live(), 1);  // b's handle keeps the object, which caches the dma_buf
    drm_release(p.b);
    p.b = nullptr;
    EXPECT_EQ(dma_buf_live(), 0);
}

// Exports, imports, descriptor closes and GEM_CLOSEs of one object from three tasks at once,
// under random preemption: every call succeeds or fails with the errno of what it raced with,
// and at the end nothing leaks (dma_bufs, descriptors, objects; checked at teardown).
// Whether a racing call's result is success or one of the errnos the race may give.
static bool errno_allowed(int ret, std::initializer_list<int> errnos) {
    if (ret == 0)
        return true;
    for (int e : errnos)
        if (ret == e)
            return true;
    return false;
}

class DrmPrimePreempt : public DrmPrime {
protected:
    RuntimeOptions runtime_options() const override {
        RuntimeOptions o = DrmPrime::runtime_options();
        o.preempt_probability = 0.3;
        return o;
    }
};

TEST_F(DrmPrimePreempt, ExportImportAndCloseRace) {
    for (int round = 0; round < 8; round++) {
        PrimeDevice p;
        u32 h = 0;
        p.create(p.a, &h);
        drm_file* a = p.a;
        drm_file* b = p.b;
        int unexpected = 0;
        auto allowed = [&](int ret, std::initializer_list<int> errnos) { unexpected += !errno_allowed(ret, errnos); };
        std::vector<Task*> tasks;
        // a exports and hands the descriptor to b, then closes it.
        tasks.push_back(kthread_run(
            [&] {
                for (int i = 0; i < 6; i++) {
                    int fd = -1;
                    const int ret = handle_to_fd(a, h, &fd);
                    allowed(ret, {-ENOENT});
                    if (ret)
                        continue;
                    u32 hb = 0;
                    allowed(fd_to_handle(b, fd, &hb), {});
                    allowed(drm_fd_close(fd), {});
                }
                return 0;
            },
            "exporter"));
        // b re-exports whatever it holds and drops its handle again.
        tasks.push_back(kthread_run(
            [&] {
                for (int i = 0; i < 6; i++) {
                    int fd = -1;
                    const int ret = handle_to_fd(b, 1, &fd);
                    allowed(ret, {-ENOENT});
                    if (!ret)
                        allowed(drm_fd_close(fd), {});
                    uapi::drm_gem_close close{1, 0};
                    allowed(call(b, DRM_IOCTL_GEM_CLOSE, &close), {-EINVAL});
                }
                return 0;
            },
            "importer"));
        // a's handle goes in the middle of it all.
        tasks.push_back(kthread_run(
            [&] {
                uapi::drm_gem_close close{h, 0};
                allowed(call(a, DRM_IOCTL_GEM_CLOSE, &close), {});
                return 0;
            },
            "closer"));
        for (Task* t : tasks)
            kthread_stop(t);
        EXPECT_EQ(unexpected, 0) << "round " << round;
        EXPECT_EQ(drm_fd_count(), 0u);
        EXPECT_EQ(a->gem.count(), 0u);
        EXPECT_EQ(a->prime.handles.size(), 0u);
        EXPECT_EQ(b->prime.handles.size(), b->gem.count());
    }
    EXPECT_EQ(dma_buf_live(), 0);
}

TEST_F(DrmPrimePreempt, ForeignImportMapAndCloseRace) {
    // Another device imports while the exporter drops its handle and the importer maps, closes
    // and re-imports: no lockdep report, nothing left attached or alive at the end.
    for (int round = 0; round < 6; round++) {
        PrimeDevice p;
        PrimeDevice q(importing_driver());
        u32 h = 0;
        p.create(p.a, &h);
        int fd = -1;
        ASSERT_EQ(handle_to_fd(p.a, h, &fd), 0);
        drm_file* a = p.a;
        drm_file* qa = q.a;
        drm_file* qb = q.b;
        int unexpected = 0;
        auto allowed = [&](int ret, std::initializer_list<int> errnos) { unexpected += !errno_allowed(ret, errnos); };
        std::vector<Task*> tasks;
        for (drm_file* f : {qa, qb}) {
            tasks.push_back(kthread_run(
                [&, f] {
                    for (int i = 0; i < 4; i++) {
                        u32 hq = 0;
                        allowed(fd_to_handle(f, fd, &hq), {});
                        drm_gem_object* obj = f->gem.lookup(hq);
                        if (obj) {
                            IosysMap map;
                            allowed(drm_gem_vmap(obj, &map), {});
                            if (map.vaddr) {
                                static_cast<volatile u8*>(map.vaddr)[i] = static_cast<u8>(i);
                                drm_gem_vunmap(obj, &map);
                            }
                            drm_gem_object_put(obj);
                        }
                        allowed(uapi_gem_close(f, hq), {-EINVAL});
                    }
                    return 0;
                },
                "importer"));
        }
        tasks.push_back(kthread_run(
            [&] {
                allowed(uapi_gem_close(a, h), {});
                return 0;
            },
            "closer"));
        for (Task* t : tasks)
            kthread_stop(t);
        EXPECT_EQ(unexpected, 0) << "round " << round;
        EXPECT_EQ(qa->gem.count(), 0u);
        EXPECT_EQ(qb->gem.count(), 0u);
        EXPECT_EQ(dma_buf_attachments_live(), 0);
        EXPECT_EQ(drm_fd_close(fd), 0);
    }
    EXPECT_EQ(dma_buf_live(), 0);
}
