// Mirrors drivers/gpu/drm/panthor/panthor_gem.h: user BOs on shmem GEM and kernel BOs (a BO, its
// VA in a VM, and a CPU mapping).
#pragma once
#include <atomic>
#include <string>

#include "drm/drm_gem_shmem_helper.h"
#include "drm/drm_mm.h"
#include "panthor/panthor_device.h"

namespace panthor {

struct panthor_gem_object {
    drm::drm_gem_shmem_object base;
    // The root GEM of the VM this BO is exclusive to (its resv is shared), or nullptr.
    drm::drm_gem_object* exclusive_vm_root_gem = nullptr;
    u32 flags = 0;  // DRM_PANTHOR_BO_* given at creation
    struct {
        kshim::Mutex lock{"panthor_gem.label.lock"};  // protects str
        const char* str = nullptr;                    // kmalloc'ed copy, or a static name for kernel BOs
        bool owned = false;                           // str was allocated by set_label
    } label;
};

inline panthor_gem_object* to_panthor_bo(drm::drm_gem_object* obj) {
    return container_of(to_drm_gem_shmem_obj(obj), panthor_gem_object, base);
}

// Flags of kernel BOs (as the kernel reuses DRM_PANTHOR_BO_*).
inline constexpr u32 DRM_PANTHOR_BO_NO_MMAP_FLAG = DRM_PANTHOR_BO_NO_MMAP;

// Sentinel VA: let the VM pick one in its auto-VA range.
inline constexpr u64 PANTHOR_VM_KERNEL_AUTO_VA = ~u64{0};

struct panthor_kernel_bo {
    drm::drm_gem_object* obj = nullptr;
    panthor_vm* vm = nullptr;
    drm::drm_mm_node va_node;
    void* kmap = nullptr;
};

inline u64 panthor_kernel_bo_gpuva(panthor_kernel_bo* bo) {
    return bo->va_node.start;
}
inline size_t panthor_kernel_bo_size(panthor_kernel_bo* bo) {
    return bo->obj->size;
}
int panthor_kernel_bo_vmap(panthor_kernel_bo* bo);
void panthor_kernel_bo_vunmap(panthor_kernel_bo* bo);

// A BO of `size` bytes exclusive to `vm`, mapped at `gpu_va` (or PANTHOR_VM_KERNEL_AUTO_VA) with
// `vm_map_flags` (DRM_PANTHOR_VM_BIND_OP_MAP_*). ERR_PTR(-errno) on failure.
panthor_kernel_bo* panthor_kernel_bo_create(panthor_device* ptdev, panthor_vm* vm, size_t size, u32 bo_flags,
                                            u32 vm_map_flags, u64 gpu_va, const char* name);
// Unmaps, frees the VA, vunmaps and drops the BO (null / ERR_PTR accepted).
void panthor_kernel_bo_destroy(panthor_kernel_bo* bo);

// BO_CREATE: a new user BO (size rounded up to pages, written back), exclusive to
// `exclusive_vm` if non-null, and a handle for it in `file`.
int panthor_gem_create_with_handle(drm::drm_file* file, panthor_device* ptdev, panthor_vm* exclusive_vm, u64* size,
                                   u32 flags, u32* handle);
// BO_SYNC's cache maintenance of [offset, offset + size) of a BO (and the scheduler's before it
// reads a syncobj): -EINVAL for a range past the BO (or overflowing), an imported BO (the
// exporter owns its caches) or an unknown `type`; 0 without effect for a WC-mapped BO or size 0.
int panthor_gem_sync(drm::drm_gem_object* obj, u32 type, u64 offset, u64 size);

// drm_driver.gem_prime_import: our own export on this device gives the same BO back (not an
// import); anything else goes through drm_gem_prime_import.
drm::drm_gem_object* panthor_gem_prime_import(drm::drm_device* dev, kshim::dma_buf* dma_buf);

// Takes ownership of `label` (kmalloc'ed, or nullptr to clear).
void panthor_gem_bo_set_label(drm::drm_gem_object* obj, const char* label);
void panthor_gem_kernel_bo_set_label(panthor_kernel_bo* bo, const char* label);

// 1.9: the object behind a file's sparse mappings (a kernel-owned BO of `size` bytes with no
// handle and no CPU mapping), one reference for the caller, or ERR_PTR(-errno).
panthor_gem_object* panthor_dummy_bo_create(panthor_device* ptdev, size_t size);

// drm_driver.gem_create_object: an uninitialised BO for the shmem helpers (PRIME imports of
// another device's dma_buf), or ERR_PTR(-ENOMEM).
drm::drm_gem_object* panthor_gem_create_object(drm::drm_device* ddev, size_t size);

// The GEM functions of every panthor BO (free, pin/unpin, vmap/vunmap on the shmem backing).
extern const drm::drm_gem_object_funcs panthor_gem_funcs;

// Upstream's module parameter transparent_hugepage (bool, read-only, default true): BOs get huge
// folios (drm_gem_shmem_object::huge), so the GPU maps their 2 MiB-aligned parts with 2 MiB
// blocks. Off: 4 KiB pages. Read when a BO is created.
extern std::atomic<bool> panthor_transparent_hugepage;

}  // namespace panthor
