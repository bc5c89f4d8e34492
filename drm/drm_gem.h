// Mirrors include/drm/drm_gem.h: GEM buffer objects and the per-file handle table.
//
// DOC: GEM objects. A drm_gem_object is refcounted (kref); the last drm_gem_object_put() calls
// funcs->free, which releases what the object type added and then drm_gem_object_release().
// The size is page-aligned. Each object has a reservation object: its own (`_resv`) unless
// the owner points `resv` at a shared one before first use (panthor makes a BO private to a VM
// share the VM's resv, so locking the VM locks all its private BOs). An object may get a fake
// mmap offset from a drm_vma_offset_manager. The object also keeps the list of drm_gpuvm_bo
// connections to the VMs it is mapped in (`gpuva.list`), protected by `gpuva.lock` for VMs in
// immediate mode, by the resv otherwise (see drm/drm_gpuvm.h).
//
// drm_gem_private_object_init/_fini take the drm::drm_device as upstream does (its
// vma_offset_manager is where mmap offsets come from). drm_gem_object_init still takes the
// drm_vma_offset_manager directly (an older signature); its callers pass
// what the device owns.
#pragma once
#include <boost/intrusive/list.hpp>

#include "drm/drm_vma_manager.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/xarray.h"

namespace kshim {
struct dma_buf;
struct dma_buf_attachment;
struct sg_table;
}  // namespace kshim

namespace drm {

struct drm_file;

using kshim::u32;
using kshim::u64;

class drm_device;
struct drm_gem_object;
struct IosysMap;

// What a drm_gpuvm_bo embeds to sit on its object's gpuva list (the kernel's
// drm_gpuvm_bo.list.entry.gem); drm_gpuvm_bo derives from it.
struct DrmGemGpuvaEntry : boost::intrusive::list_base_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> {};
using DrmGemGpuvaList = boost::intrusive::list<DrmGemGpuvaEntry, boost::intrusive::constant_time_size<false>>;

// A CPU mapping (include/linux/iosys-map.h, system memory only).
struct IosysMap {
    void* vaddr = nullptr;
    bool is_null() const { return vaddr == nullptr; }
};

struct drm_gem_object_funcs {
    // Called when the last reference goes; must end with drm_gem_object_release() and free.
    void (*free)(drm_gem_object* obj) = nullptr;
    int (*pin)(drm_gem_object* obj) = nullptr;  // resv held
    void (*unpin)(drm_gem_object* obj) = nullptr;
    int (*vmap)(drm_gem_object* obj, IosysMap* map) = nullptr;  // resv held
    void (*vunmap)(drm_gem_object* obj, IosysMap* map) = nullptr;
    // DRM_GEM_OBJECT_* bits for fdinfo's memory stats (resident, purgeable, active); unset: 0.
    unsigned (*status)(drm_gem_object* obj) = nullptr;
    // drm_gem_object_funcs.export (a keyword here): PRIME export; unset: drm_gem_prime_export.
    // The dma_buf (one reference) or ERR_PTR(-errno).
    kshim::dma_buf* (*export_)(drm_gem_object* obj, int flags) = nullptr;
    // PRIME export to another device: a new sg table of the (pinned) pages, which the caller
    // frees. Unset: attaching to the export gives -ENOSYS.
    kshim::sg_table* (*get_sg_table)(drm_gem_object* obj) = nullptr;
    // Per-file hooks of a handle's life: open runs once the new handle exists (a non-zero return
    // deletes it and fails the creation), close before a deleted handle's reference goes.
    int (*open)(drm_gem_object* obj, drm_file* file) = nullptr;
    void (*close)(drm_gem_object* obj, drm_file* file) = nullptr;
};
inline constexpr unsigned DRM_GEM_OBJECT_RESIDENT = 1u << 0;
inline constexpr unsigned DRM_GEM_OBJECT_PURGEABLE = 1u << 1;
inline constexpr unsigned DRM_GEM_OBJECT_ACTIVE = 1u << 2;

struct drm_gem_object {
    kshim::kref refcount;
    // Handles pointing at the object from all handle tables (drm_gem_object.handle_count).
    std::atomic<unsigned> handle_count{0};
    u64 size = 0;
    drm_device* dev = nullptr;  // set by drm_gem_private_object_init; may be null
    const drm_gem_object_funcs* funcs = nullptr;
    drm_vma_offset_manager* vma_offset_manager = nullptr;  // the device's; may be null
    drm_vma_offset_node vma_node;
    // The reservation object in use: &_resv or a shared one set by the owner before first use.
    kshim::dma_resv* resv = nullptr;
    kshim::dma_resv _resv;
    // PRIME: the dma_buf exported from (or imported as) this object, with a reference held while
    // the object has handles (so re-exports give the same dma_buf). drm_gem_object_name_lock().
    kshim::dma_buf* dma_buf = nullptr;
    // PRIME import of another device's dma_buf: this device's attachment (and its mapped sg
    // table is the object's backing); nullptr for objects with pages of their own.
    kshim::dma_buf_attachment* import_attach = nullptr;
    struct {
        // Protects `list` for VMs in DRM_GPUVM_IMMEDIATE_MODE (which may link and unlink from
        // the fence-signalling path); other VMs protect it with `resv`.
        kshim::Mutex lock{"drm_gem_object.gpuva.lock"};
        DrmGemGpuvaList list;  // drm_gpuvm_bo of this object, one per VM
    } gpuva;

    drm_gem_object() = default;
    drm_gem_object(const drm_gem_object&) = delete;
    drm_gem_object& operator=(const drm_gem_object&) = delete;
};

// Initialises an object of `size` bytes (page-aligned): -EINVAL otherwise. `mgr`
// (may be null) is where drm_gem_create_mmap_offset() will take the offset from. Upstream this
// also sets up the shmem file; here gem_shmem allocates its pages itself, so it is
// drm_gem_private_object_init() plus the offset manager.
int drm_gem_object_init(drm_vma_offset_manager* mgr, drm_gem_object* obj, u64 size);
// Upstream's: initialises an object without backing storage (refcount, size, own resv) for
// device `dev` (may be null; its vma_offset_manager becomes the object's). A size that is not
// page-aligned WARNs (upstream BUG()s) and leaves the object uninitialised.
void drm_gem_private_object_init(drm_device* dev, drm_gem_object* obj, size_t size);
// Undoes drm_gem_private_object_init() only: finalises the own resv. For an object whose
// init failed part-way; a fully set-up object goes through drm_gem_object_release().
void drm_gem_private_object_fini(drm_gem_object* obj);
// Undoes init: frees the mmap offset, then drm_gem_private_object_fini(). WARNs if the object
// still has handles or is still mapped in a VM.
void drm_gem_object_release(drm_gem_object* obj);

// An object whose pages are another device's (a foreign PRIME import).
inline bool drm_gem_is_imported(const drm_gem_object* obj) {
    return obj->import_attach != nullptr;
}

inline void drm_gem_object_get(drm_gem_object* obj) {
    kshim::kref_get(&obj->refcount);
}
void drm_gem_object_free(kshim::kref* kref);
inline void drm_gem_object_put(drm_gem_object* obj) {
    if (obj)
        kshim::kref_put(&obj->refcount, drm_gem_object_free);
}

// drm_device.object_name_lock (one for all devices here): serialises handle_count reaching 0
// against PRIME export/import, and protects drm_gem_object::dma_buf.
kshim::Mutex& drm_gem_object_name_lock();

int drm_gem_create_mmap_offset(drm_gem_object* obj);
int drm_gem_create_mmap_offset_size(drm_gem_object* obj, u64 size);
void drm_gem_free_mmap_offset(drm_gem_object* obj);
// The object owning the fake offset `offset` (bytes) for `size` bytes, referenced; or nullptr.
drm_gem_object* drm_gem_object_lookup_at_offset(drm_vma_offset_manager* mgr, u64 offset, u64 size);

// Pin / vmap through the object's funcs (drm_gem.c's drm_gem_pin & co).
int drm_gem_pin_locked(drm_gem_object* obj);
void drm_gem_unpin_locked(drm_gem_object* obj);
int drm_gem_pin(drm_gem_object* obj);
void drm_gem_unpin(drm_gem_object* obj);
int drm_gem_vmap_locked(drm_gem_object* obj, IosysMap* map);
void drm_gem_vunmap_locked(drm_gem_object* obj, IosysMap* map);
int drm_gem_vmap(drm_gem_object* obj, IosysMap* map);
void drm_gem_vunmap(drm_gem_object* obj, IosysMap* map);

// Locks the resvs of `objs` (a ww_acquire_ctx loop; drm_gem_lock_reservations).
int drm_gem_lock_reservations(drm_gem_object** objs, int count, kshim::WwAcquireCtx* acquire_ctx);
void drm_gem_unlock_reservations(drm_gem_object** objs, int count, kshim::WwAcquireCtx* acquire_ctx);

#define drm_gem_gpuva_assert_resv_held(obj) dma_resv_assert_held((obj)->resv)

// ---- handles (drm_gem.c: drm_gem_handle_create & co, the per-file object_idr) ----
//
// One per open file (embedded in drm::drm_file). Handles start at 1; each handle holds
// a reference on its object, so an object lives while a handle or any other user (a VM
// mapping) holds it.
class GemHandleTable {
public:
    GemHandleTable() = default;
    ~GemHandleTable();  // WARNs if release() was not called with handles left
    GemHandleTable(const GemHandleTable&) = delete;
    GemHandleTable& operator=(const GemHandleTable&) = delete;

    // drm_gem_handle_create: a new handle for obj (takes a reference). 0, or -ENOMEM/-ENOSPC.
    int handle_create(drm_gem_object* obj, u32* handlep);
    // drm_gem_object_lookup: the object, with a reference the caller must put; nullptr if none.
    drm_gem_object* lookup(u32 handle);
    // drm_gem_handle_delete (DRM_IOCTL_GEM_CLOSE): 0, or -EINVAL for an unknown handle.
    int handle_delete(u32 handle);
    // drm_gem_release: drops every handle (file close).
    void release();
    size_t count() const { return handles_.size(); }
    // The owning file's PRIME lookup: called with each deleted handle before the handle's
    // reference goes (drm_gem_remove_prime_handles). Set by drm_open.
    void (*prime_remove)(void* ctx, u32 handle) = nullptr;
    void* prime_ctx = nullptr;
    // The owning file, passed to drm_gem_object_funcs.open/close. Set by drm_open.
    drm_file* owner = nullptr;
    // fn(handle, obj) for every handle, under the table lock (fn must not sleep or touch the table).
    template <class Fn>
    void for_each(Fn&& fn) {
        kshim::SpinGuard g(table_lock_);
        handles_.for_each_locked(fn);
    }

private:
    // Protects the lookup-then-get against a concurrent delete (the kernel's table_lock).
    kshim::SpinLock table_lock_{"drm_file.table_lock"};
    kshim::XArray<drm_gem_object> handles_{kshim::XA_FLAGS_ALLOC1};
};

}  // namespace drm
