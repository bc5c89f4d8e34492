// Mirrors the mmap path of a DRM file (drm_gem_mmap in drm_gem.c, mm_types.h's vm_area_struct):
// mmap(2) of a DRM file at an offset gives a VmArea.
//
// DOC: There is no process page table to edit, so a mapping is described rather than installed:
// a memory mapping (a GEM object's pages) gives `addr`, the CPU address of the mapped bytes in the
// physical page arena, so a CPU write through it is what the GPU reads at the same physical
// address; an I/O mapping (a register page) has no `addr` and is read through vma_read32(), which
// calls the mapping's io_read32 op (what a page fault on real MMIO would reach). The preload
// library maps the same arena ranges into the client's address space.
#pragma once
#include <sys/mman.h>

#include <cstddef>

#include "drm/drm_file.h"
#include "kernel_shim/fs/file.h"

namespace drm {

struct VmArea;

// vm_area_struct.vm_flags subset.
inline constexpr unsigned long VM_READ = 0x1;
inline constexpr unsigned long VM_WRITE = 0x2;
inline constexpr unsigned long VM_EXEC = 0x4;
inline constexpr unsigned long VM_SHARED = 0x8;
inline constexpr unsigned long VM_MAYWRITE = 0x20;
inline constexpr unsigned long VM_MAYEXEC = 0x40;
inline constexpr unsigned long VM_IO = 0x4000;
inline constexpr unsigned long VM_DONTEXPAND = 0x40000;
inline constexpr unsigned long VM_DONTDUMP = 0x4000000;
inline constexpr unsigned long VM_PFNMAP = 0x400;

struct VmOperations {
    void (*open)(VmArea* vma) = nullptr;
    void (*close)(VmArea* vma) = nullptr;
    // I/O mappings: a 32-bit read at byte `offset` into the mapping (the fault path).
    u32 (*io_read32)(VmArea* vma, u64 offset) = nullptr;
};

// vm_area_struct: the VFS's part (vm_file, vm_pgoff, length, vm_flags) and the mapping's.
struct VmArea : kshim::vm_area_struct {
    drm_file* file = nullptr;  // the DRM file mapped through, if any (not a reference)
    void* addr = nullptr;      // memory mappings: CPU address of byte 0
    void* vm_private_data = nullptr;
    const VmOperations* vm_ops = nullptr;
};

// mmap(2) on a DRM file: `offset` and `length` page-aligned (else -EINVAL), `prot` PROT_*,
// `flags` MAP_SHARED/MAP_PRIVATE. Runs the driver's mmap hook (DriverDesc::mmap) if any, else
// drm_gem_mmap. 0 and *out, or -errno (-ENODEV when unplugged).
int drm_mmap(drm_file* file, u64 offset, size_t length, int prot, int flags, VmArea** out);
// mm's do_mmap for any file: checks and vm_flags as drm_mmap says, then filp->f_op->mmap
// (-ENODEV without one). A file not open for writing gives -EACCES for PROT_WRITE with
// MAP_SHARED, and its shared mappings get neither VM_SHARED nor VM_MAYWRITE. The mapping holds
// a reference to filp until drm_munmap.
int do_mmap(kshim::file* filp, u64 offset, size_t length, int prot, int flags, VmArea** out);
// mmap(2) of a descriptor of the current table: -EBADF when it is not open, else do_mmap.
int ksys_mmap(int fd, u64 offset, size_t length, int prot, int flags, VmArea** out);
// The DRM file's f_op->mmap (drm_fops): the driver's mmap hook, else drm_gem_mmap.
int drm_fop_mmap(kshim::file* filp, kshim::vm_area_struct* vma);
// munmap(2): the mapping's close op runs and the VmArea is freed.
void drm_munmap(VmArea* vma);
// fork's copy of a mapping (dup_mmap: vm_area_dup, a reference on vm_file, vm_ops->open): a
// VmArea of its own that drm_munmap ends, holding what the original holds. nullptr: -ENOMEM.
VmArea* vma_dup(const VmArea* vma);
// Reads a 32-bit word of an I/O mapping (0 for memory mappings: read vma->addr instead).
u32 vma_read32(VmArea* vma, u64 offset);

// The GEM part: the object owning [vm_pgoff, vm_pgoff + length) in the device's offset space
// (-EINVAL if none or the range overruns it; -EACCES for a handle-less object as upstream's
// drm_vma_node_is_allowed check is not modelled), a reference held by the mapping, pages pinned,
// addr set. -ENOMEM if the object's backing is not CPU-linear.
int drm_gem_mmap(VmArea* vma);
// drm_gem_mmap_obj: maps `obj` (the caller's reference, which the mapping keeps on success) at
// byte (vm_pgoff - the object's offset node start) << PAGE_SHIFT of it. -EINVAL for a mapping
// longer than obj_size or a private writable one (shmem), the vmap's error.
int drm_gem_mmap_obj(drm_gem_object* obj, u64 obj_size, VmArea* vma);
// Number of live VmAreas (tests: munmap'ed everything).
long drm_mmap_live();

}  // namespace drm
