// The probed device the panthor benchmarks drive (bench/panthor_bench.cpp,
// bench/panthor_sched_bench.cpp): the host's machine for the G610 model, the driver probed on it
// and one open render-node file, with the ioctls a client issues. The benchmark owns the runtime.
#pragma once
#include "drm/drm_ioctl.h"
#include "host/machine.h"
#include "kernel_shim/pm_runtime.h"
#include "panthor/panthor_drv.h"
#include "panthor/panthor_mmu.h"
#include "uapi/drm/panthor_drm.h"

namespace upanthor_bench {

using namespace drm::uapi;

// A probed device with an open file (the driver as a client sees it).
struct Device {
    explicit Device(mock_hw::GpuConfig cfg = {}) { opts.config.csf = cfg; }
    upanthor::host::Machine::Options opts;
    std::unique_ptr<upanthor::host::Machine> machine;
    panthor::panthor_device* ptdev = nullptr;
    drm::drm_file* file = nullptr;

    bool up() {
        if (upanthor::host::Machine::create(opts, &machine) || machine->probe())
            return false;
        ptdev = panthor::panthor_from_pdev(machine->pdev());
        return machine->open_file(&file) == 0;
    }
    ~Device() {
        if (file)
            drm::drm_release(file);
    }
    kshim::PlatformDevice* pdev() { return machine->pdev(); }
    kshim::u32 vm_create() {
        drm_panthor_vm_create a{};
        return drm::ioctl(file, DRM_IOCTL_PANTHOR_VM_CREATE, &a) ? 0 : a.id;
    }
    kshim::u32 bo_create(kshim::u64 size) {
        drm_panthor_bo_create a{};
        a.size = size;
        return drm::ioctl(file, DRM_IOCTL_PANTHOR_BO_CREATE, &a) ? 0 : a.handle;
    }
    int bind(kshim::u32 vm, kshim::u32 flags, kshim::u32 bo, kshim::u64 bo_off, kshim::u64 va, kshim::u64 size) {
        drm_panthor_vm_bind_op op{};
        op.flags = flags;
        op.bo_handle = bo;
        op.bo_offset = bo_off;
        op.va = va;
        op.size = size;
        drm_panthor_vm_bind b{};
        b.vm_id = vm;
        b.ops = DRM_PANTHOR_OBJ_ARRAY(1, &op);
        return drm::ioctl(file, DRM_IOCTL_PANTHOR_VM_BIND, &b);
    }
    // Keeps the VM on an address space so every bind pays for the TLB flush, as on a busy GPU.
    bool activate(kshim::u32 vm_id) {
        panthor::panthor_vm* vm =
            panthor::panthor_vm_pool_get_vm(static_cast<panthor::panthor_file*>(file->driver_priv)->vms, vm_id);
        if (!vm)
            return false;
        kshim::pm_runtime_resume_and_get(&pdev()->dev);
        int ret = panthor::panthor_vm_active(vm);
        active_vm = vm;
        return ret == 0;
    }
    void deactivate() {
        if (!active_vm)
            return;
        panthor::panthor_vm_idle(active_vm);
        panthor::panthor_vm_put(active_vm);
        kshim::pm_runtime_put_autosuspend(&pdev()->dev);
        active_vm = nullptr;
    }
    panthor::panthor_vm* active_vm = nullptr;
};

}  // namespace upanthor_bench
