// Mirrors the mmap path of drivers/gpu/drm/drm_gem.c (drm_gem_mmap, drm_gem_mmap_obj) and
// drm_gem_shmem_helper.c (drm_gem_shmem_mmap, the vm_ops close), plus the part of mm/mmap.c's
// do_mmap that turns PROT_*/MAP_* into vm_flags.
//
// A GEM mapping keeps the object alive (one reference, as drm_gem_mmap_obj takes) and its pages
// in place: the shmem backing is CPU-linear (drm/drm_gem_shmem_helper.h), so the mapping is the object's
// vmap plus the page offset into it, and a CPU store through `addr` lands at the physical
// address the GPU reads. Upstream only counts the pages as used (get_pages) and lets faults
// install them; holding a vmap instead pins them, which changes nothing here as nothing evicts.
#include "drm/drm_mmap.h"

#include <atomic>

#include "drm/drm_gem.h"
#include "drm/drm_vma_manager.h"
#include "kernel_shim/fs/fdtable.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"

namespace drm {

using namespace kshim;

namespace {

std::atomic<long> g_mmap_live{0};

// The offset of the mapping inside its object, in bytes.
u64 drm_gem_mmap_obj_offset(const VmArea* vma, const drm_gem_object* obj) {
    return (vma->vm_pgoff - drm_vma_node_start(&obj->vma_node)) << PAGE_SHIFT;
}

void drm_gem_vm_close(VmArea* vma) {
    auto* obj = static_cast<drm_gem_object*>(vma->vm_private_data);
    IosysMap map{static_cast<char*>(vma->addr) - drm_gem_mmap_obj_offset(vma, obj)};
    dma_resv_lock(obj->resv, nullptr);
    drm_gem_vunmap_locked(obj, &map);
    dma_resv_unlock(obj->resv);
    vma->addr = nullptr;
    vma->vm_private_data = nullptr;
    drm_gem_object_put(obj);
}

// drm_gem_vm_open: a copy of the mapping (fork's dup_mmap) holds a reference of its own, and,
// as the close above undoes a vmap, a vmap of its own.
void drm_gem_vm_open(VmArea* vma) {
    auto* obj = static_cast<drm_gem_object*>(vma->vm_private_data);
    drm_gem_object_get(obj);
    IosysMap map;
    dma_resv_lock(obj->resv, nullptr);
    const int ret = drm_gem_vmap_locked(obj, &map);
    dma_resv_unlock(obj->resv);
    // The object is mapped already (the original holds a vmap), so this only counts one more.
    WARN_ON(ret || static_cast<char*>(map.vaddr) + drm_gem_mmap_obj_offset(vma, obj) != vma->addr);
}

const VmOperations drm_gem_vm_ops = {
    .open = drm_gem_vm_open,
    .close = drm_gem_vm_close,
    .io_read32 = nullptr,
};

// is_cow_mapping(): a private mapping that could become writable.
bool is_cow_mapping(unsigned long flags) {
    return (flags & (VM_SHARED | VM_MAYWRITE)) == VM_MAYWRITE;
}

}  // namespace

int drm_gem_mmap_obj(drm_gem_object* obj, u64 obj_size, VmArea* vma) {
    if (obj_size < vma->length)
        return -EINVAL;
    // Shmem pages cannot back a copy-on-write mapping (drm_gem_shmem_mmap); every GEM object
    // of this tree is shmem-backed.
    if (is_cow_mapping(vma->vm_flags))
        return -EINVAL;

    IosysMap map;
    dma_resv_lock(obj->resv, nullptr);
    int ret = drm_gem_vmap_locked(obj, &map);
    dma_resv_unlock(obj->resv);
    if (ret)
        return ret;

    vma->vm_private_data = obj;
    vma->vm_ops = &drm_gem_vm_ops;
    vma->addr = static_cast<char*>(map.vaddr) + drm_gem_mmap_obj_offset(vma, obj);
    vma->vm_flags |= VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP;
    return 0;
}

int drm_gem_mmap(VmArea* vma) {
    drm_device* dev = vma->file->dev;
    if (dev->is_unplugged())
        return -ENODEV;
    drm_vma_offset_manager* mgr = dev->vma_offset_manager;
    if (!mgr)
        return -EINVAL;

    // The lookup wants the whole range inside one object: a mapping overrunning its object
    // finds none, which upstream reports the same way.
    drm_gem_object* obj = drm_gem_object_lookup_at_offset(mgr, vma->vm_pgoff << PAGE_SHIFT, vma->length);
    if (!obj)
        return -EINVAL;

    // drm_vma_node_is_allowed: only files holding a handle on the object may map it. Handles
    // are not tracked per file on the node, so an object without any handle (a kernel BO that
    // got an offset) is what is refused.
    if (obj->handle_count.load(std::memory_order_acquire) == 0) {
        drm_gem_object_put(obj);
        return -EACCES;
    }

    int ret = drm_gem_mmap_obj(obj, drm_vma_node_size(&obj->vma_node) << PAGE_SHIFT, vma);
    if (ret)
        drm_gem_object_put(obj);
    return ret;
}

namespace {

template <class FopMmap>
int do_mmap_common(kshim::file* filp, drm_file* file, bool writable, u64 offset, size_t length, int prot, int flags,
                   FopMmap&& f_op_mmap, VmArea** out) {
    *out = nullptr;
    if (length == 0 || (offset & ~PAGE_MASK) || (length & ~PAGE_MASK))
        return -EINVAL;
    if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
        return -EINVAL;
    const u64 pgoff = offset >> PAGE_SHIFT;
    if (pgoff + (length >> PAGE_SHIFT) < pgoff)
        return -EOVERFLOW;

    // Every mapping may become writable (VM_MAYWRITE) unless a driver forbids it, except a shared
    // one of a read-only file: that one refuses PROT_WRITE and is never shared-writable.
    unsigned long vm_flags = VM_MAYWRITE | VM_MAYEXEC;
    if (prot & PROT_READ)
        vm_flags |= VM_READ;
    if (prot & PROT_WRITE)
        vm_flags |= VM_WRITE;
    if (prot & PROT_EXEC)
        vm_flags |= VM_EXEC;
    switch (flags & MAP_TYPE) {
    case MAP_SHARED:
    case MAP_SHARED_VALIDATE:
        if ((prot & PROT_WRITE) && !writable)
            return -EACCES;
        if (writable)
            vm_flags |= VM_SHARED;
        else
            vm_flags &= ~VM_MAYWRITE;
        break;
    case MAP_PRIVATE: break;
    default: return -EINVAL;
    }

    VmArea* vma = knew<VmArea>(GFP_KERNEL);
    if (!vma)
        return -ENOMEM;
    vma->file = file;
    vma->vm_pgoff = pgoff;
    vma->length = length;
    vma->vm_flags = vm_flags;
    g_mmap_live.fetch_add(1, std::memory_order_relaxed);

    int ret = f_op_mmap(vma);
    if (ret) {
        // A failed f_op->mmap leaves nothing to close (mmap_region frees the vma as is).
        kdelete(vma);
        g_mmap_live.fetch_sub(1, std::memory_order_relaxed);
        return ret;
    }
    if (filp)
        vma->vm_file = get_file(filp);
    *out = vma;
    return 0;
}

int drm_mmap_file(drm_file* file, VmArea* vma) {
    const DriverDesc& drv = file->dev->driver();
    vma->file = file;
    return drv.mmap ? drv.mmap(file, vma) : drm_gem_mmap(vma);
}

}  // namespace

int do_mmap(kshim::file* filp, u64 offset, size_t length, int prot, int flags, VmArea** out) {
    *out = nullptr;
    if (!filp->f_op || !filp->f_op->mmap)
        return -ENODEV;
    return do_mmap_common(
        filp, nullptr, (filp->f_mode & FMODE_WRITE) != 0, offset, length, prot, flags,
        [filp](VmArea* vma) { return filp->f_op->mmap(filp, vma); }, out);
}

int ksys_mmap(int fd, u64 offset, size_t length, int prot, int flags, VmArea** out) {
    *out = nullptr;
    kshim::file* filp = kshim::fget(fd);
    if (!filp)
        return -EBADF;
    const int ret = do_mmap(filp, offset, length, prot, flags, out);
    fput(filp);
    return ret;
}

int drm_fop_mmap(kshim::file* filp, kshim::vm_area_struct* vma) {
    auto* file = static_cast<drm_file*>(filp->private_data);
    if (file->dev->is_unplugged())
        return -ENODEV;
    return drm_mmap_file(file, static_cast<VmArea*>(vma));
}

int drm_mmap(drm_file* file, u64 offset, size_t length, int prot, int flags, VmArea** out) {
    *out = nullptr;
    if (file->dev->is_unplugged())
        return -ENODEV;
    return do_mmap_common(
        nullptr, file, true, offset, length, prot, flags, [file](VmArea* vma) { return drm_mmap_file(file, vma); },
        out);
}

void drm_munmap(VmArea* vma) {
    if (!vma)
        return;
    if (vma->vm_ops && vma->vm_ops->close)
        vma->vm_ops->close(vma);
    kshim::file* filp = vma->vm_file;
    kdelete(vma);
    fput(filp);
    g_mmap_live.fetch_sub(1, std::memory_order_relaxed);
}

VmArea* vma_dup(const VmArea* vma) {
    VmArea* copy = knew<VmArea>(GFP_KERNEL);
    if (!copy)
        return nullptr;
    *copy = *vma;
    if (copy->vm_file)
        get_file(copy->vm_file);
    g_mmap_live.fetch_add(1, std::memory_order_relaxed);
    if (copy->vm_ops && copy->vm_ops->open)
        copy->vm_ops->open(copy);
    return copy;
}

u32 vma_read32(VmArea* vma, u64 offset) {
    if (WARN_ON(offset + sizeof(u32) > vma->length || (offset & 3)))
        return 0;
    if (!vma->vm_ops || !vma->vm_ops->io_read32)
        return 0;
    return vma->vm_ops->io_read32(vma, offset);
}

long drm_mmap_live() {
    return g_mmap_live.load(std::memory_order_relaxed);
}

}  // namespace drm
