// Mirrors include/drm/drm_device.h and drm_drv.h: the device a driver registers, its feature
// flags and its ioctl table.
//
// DOC: A driver describes itself with a DriverDesc (name, version, features, the ioctl table
// indexed like the kernel's: entry i serves nr DRM_COMMAND_BASE + i, and open/postclose hooks)
// and creates one drm::drm_device from it. Files are opened on the device with drm_open() and
// closed with drm_release() (drm/drm_file.h); ioctls enter through drm::drm_ioctl()
// (drm/drm_ioctl.h).
#pragma once
#include <atomic>
#include <span>

#include "kernel_shim/mutex.h"
#include "kernel_shim/types.h"
#include "uapi/drm/drm.h"

namespace kshim {
struct file_operations;
struct dma_buf;
struct dma_buf_attachment;
struct sg_table;
}  // namespace kshim

namespace drm {

using kshim::u32;
using kshim::u64;

class drm_device;
struct drm_gem_object;
struct drm_file;
struct VmArea;
struct drm_printer;
struct drm_vma_offset_manager;
struct drm_master;

// enum drm_driver_feature.
enum DriverFeature : u32 {
    DRIVER_GEM = 1u << 0,
    DRIVER_MODESET = 1u << 1,
    DRIVER_RENDER = 1u << 3,
    DRIVER_ATOMIC = 1u << 4,
    DRIVER_SYNCOBJ = 1u << 5,
    DRIVER_SYNCOBJ_TIMELINE = 1u << 6,
    DRIVER_COMPUTE_ACCEL = 1u << 7,
    DRIVER_GEM_GPUVA = 1u << 8,
};

// enum drm_ioctl_flags.
enum IoctlFlags : u32 {
    DRM_AUTH = 1u << 0,
    DRM_MASTER = 1u << 1,
    DRM_ROOT_ONLY = 1u << 2,
    DRM_RENDER_ALLOW = 1u << 5,
};

// drm_ioctl_t: `data` is the kernel copy of the argument struct (zero-extended to the kernel's
// size); returns 0 or a negative errno.
using ioctl_t = int (*)(drm_device* dev, void* data, drm_file* file);

// struct drm_ioctl_desc. `cmd` carries the kernel's direction and struct size.
struct IoctlDesc {
    unsigned cmd = 0;
    u32 flags = 0;
    ioctl_t func = nullptr;
    const char* name = nullptr;
};
#define DRM_IOCTL_DEF_DRV(ioctl, _func, _flags)                   \
    ::drm::IoctlDesc {                                            \
        DRM_IOCTL_##ioctl, (_flags), (_func), "DRM_IOCTL_" #ioctl \
    }

// struct drm_driver (the parts we model).
struct DriverDesc {
    const char* name = nullptr;
    const char* desc = nullptr;
    const char* date = "0";  // upstream dropped per-driver dates; DRM_IOCTL_VERSION reports "0"
    int major = 0;
    int minor = 0;
    int patchlevel = 0;
    u32 driver_features = 0;
    // Driver ioctls: entry i serves nr DRM_COMMAND_BASE + i (holes have func == nullptr).
    std::span<const IoctlDesc> ioctls;
    // drm_driver.open: per-file driver setup; a non-zero return fails drm_open.
    int (*open)(drm_device* dev, drm_file* file) = nullptr;
    // drm_driver.postclose: per-file driver teardown, before the core drops GEM/syncobj handles.
    void (*postclose)(drm_device* dev, drm_file* file) = nullptr;
    // drm_driver.fops: the file operations of the device's files (drm_open_file). Null means the
    // DRM core's drm_fops (drm/drm_file.h), whose mmap calls `mmap` below.
    const kshim::file_operations* fops = nullptr;
    // What drm_fops' mmap does for this driver: null means drm_gem_mmap (drm/drm_mmap.h).
    int (*mmap)(drm_file* file, VmArea* vma) = nullptr;
    // drm_driver.show_fdinfo: the driver's fdinfo keys (drm/drm_fdinfo.h).
    void (*show_fdinfo)(drm_printer* p, drm_file* file) = nullptr;
    // drm_driver.gem_create_object: the driver's object (wrapping a drm_gem_shmem_object) for the
    // shmem helpers to initialise, or ERR_PTR. Unset: a plain drm_gem_shmem_object.
    drm_gem_object* (*gem_create_object)(drm_device* dev, size_t size) = nullptr;
    // drm_driver.gem_prime_import_sg_table: an object over another device's pages (PRIME import
    // of a foreign dma_buf), or ERR_PTR. Unset: such imports give -EINVAL (drm/drm_prime.h).
    drm_gem_object* (*gem_prime_import_sg_table)(drm_device* dev, kshim::dma_buf_attachment* attach,
                                                 kshim::sg_table* sgt) = nullptr;
    // drm_driver.gem_prime_import: PRIME_FD_TO_HANDLE's import (a driver with its own dma_buf
    // ops recognises its exports here). Unset: drm_gem_prime_import.
    drm_gem_object* (*gem_prime_import)(drm_device* dev, kshim::dma_buf* dma_buf) = nullptr;
};

class drm_device {
public:
    // WARNs when a driver ioctl sits at the wrong index (its nr must be DRM_COMMAND_BASE + i).
    explicit drm_device(const DriverDesc& driver, void* dev_private = nullptr);
    drm_device(const drm_device&) = delete;
    drm_device& operator=(const drm_device&) = delete;

    const DriverDesc& driver() const { return driver_; }
    bool check_feature(u32 feature) const { return (driver_.driver_features & feature) == feature; }
    void* dev_private() const { return dev_private_; }
    void set_dev_private(void* p) { dev_private_ = p; }

    // drm_dev_unplug: later ioctls fail with -ENODEV.
    void unplug() { unplugged_.store(true, std::memory_order_release); }
    bool is_unplugged() const { return unplugged_.load(std::memory_order_acquire); }

    // drm_device.vma_offset_manager: where GEM mmap offsets come from (set by the driver).
    drm_vma_offset_manager* vma_offset_manager = nullptr;

    // drm_device.master_mutex protects master and every file's master and magic
    // (drm/drm_auth.h); master is the current DRM master, or nullptr.
    kshim::Mutex master_mutex{"drm_device.master_mutex"};
    drm_master* master GUARDED_BY(master_mutex) = nullptr;

private:
    DriverDesc driver_;
    void* dev_private_;
    std::atomic<bool> unplugged_{false};
};

inline bool drm_core_check_feature(const drm_device* dev, u32 feature) {
    return dev->check_feature(feature);
}

// drm_dev_enter/drm_dev_exit: a section that touches the hardware runs only while the device is
// not unplugged. There is no SRCU here, so unplug does not wait for sections in progress; callers
// that need that (panthor) cancel or flush their work after drm_dev_unplug.
inline bool drm_dev_enter(const drm_device* dev, int* idx = nullptr) {
    if (idx)
        *idx = 0;
    return !dev->is_unplugged();
}
inline void drm_dev_exit(int) {}

}  // namespace drm
