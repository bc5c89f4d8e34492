// The fixture of the panthor driver tests: a mock G610 platform device, the driver probed on it
// (simulated runtime), an open render-node file, and helpers that call the ioctls the way a
// client does (user buffers registered with the uaccess registry, so a bad pointer is a bad
// pointer). Teardown closes the file and removes the driver before the world's leak and report
// checks run.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "drm/drm_ioctl.h"
#include "drm/drm_mmap.h"
#include "drm/uaccess.h"
#include "host/machine.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/pm_runtime.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_drv.h"
#include "tests/support/kernel_test.h"
#include "uapi/drm/panthor_drm.h"

namespace panthor::testing {

using namespace drm::uapi;

// VM_BIND op builders.
drm_panthor_vm_bind_op map_op(u32 bo, u64 va, u64 size, u64 bo_offset = 0, u32 map_flags = 0);
drm_panthor_vm_bind_op unmap_op(u64 va, u64 size);

class PanthorTest : public kshim::testing::KernelTest {
protected:
    void SetUp() override;
    void TearDown() override;

    // The GPU configuration the next probe() uses (tests change it before probing).
    virtual mock_hw::GpuConfig gpu_config() const { return {}; }
    // Whether SetUp probes the driver and opens a file.
    virtual bool probe_in_setup() const { return true; }

    // Probes the driver on the machine's device; 0 or the probe's errno.
    int probe();
    // A fresh (unbound) device in place of the current one, from gpu_config().
    void new_device() { machine_->new_device(); }
    // Closes the file (if open) and removes the driver.
    void remove();
    int open_file(drm::drm_file** out, bool render = true);

    mock_hw::Gpu& gpu() { return machine_->csf()->gpu(); }
    kshim::PlatformDevice* pdev() { return machine_->pdev(); }
    kshim::Device* dev() { return &pdev()->dev; }

    // An ioctl on `file` (default: the fixture's) with `arg` registered as user memory.
    template <class T>
    int ioctl(unsigned cmd, T* arg, drm::drm_file* f = nullptr) {
        drm::UserRange r(arg, sizeof(T));
        return drm::ioctl(f ? f : file, cmd, arg);
    }

    // ---- client-side helpers (gtest failures on unexpected errors) ----
    u32 vm_create(u64 user_va_range = 0, drm::drm_file* f = nullptr);
    void vm_destroy(u32 id, drm::drm_file* f = nullptr);
    u32 bo_create(u64 size, u32 flags = 0, u32 exclusive_vm_id = 0, drm::drm_file* f = nullptr);
    // One synchronous VM_BIND op; returns the ioctl's result.
    int vm_bind(u32 vm_id, u32 flags, u32 bo, u64 bo_offset, u64 va, u64 size, drm::drm_file* f = nullptr);
    int vm_map(u32 vm_id, u32 bo, u64 va, u64 size, u32 map_flags = 0, u64 bo_offset = 0) {
        return vm_bind(vm_id, DRM_PANTHOR_VM_BIND_OP_TYPE_MAP | map_flags, bo, bo_offset, va, size);
    }
    int vm_unmap(u32 vm_id, u64 va, u64 size) {
        return vm_bind(vm_id, DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP, 0, 0, va, size);
    }
    // The CPU address of a BO through BO_MMAP_OFFSET + mmap (kept mapped until teardown).
    void* bo_cpu(u32 bo, u64 size);

    // ---- syncobjs (DRM core ioctls on the fixture's file) ----
    u32 syncobj_create(u32 flags = 0);
    // DRM_IOCTL_SYNCOBJ_WAIT (all of them) with a deadline `timeout` of virtual time from now.
    int syncobj_wait(std::vector<u32> handles, kshim::ktime_t timeout);
    int syncobj_timeline_wait(u32 handle, u64 point, kshim::ktime_t timeout);
    // dma_fence_get_status of the fence at (handle, point): 0 pending, 1 ok, -errno failed (or
    // the lookup's errno).
    int fence_status(u32 handle, u64 point = 0);

    // Lets virtual time pass until the device has autosuspended (false if it does not).
    bool wait_autosuspend();

    // The pending devcoredump, read whole in small pieces (devcd_read); empty if none.
    std::string read_devcoredump();

    u32 mcu_status() { return gpu().peek32(panthor::MCU_STATUS).value_or(~0u); }
    // Counts GPU_CMD soft resets from now on in soft_resets_ (an MMIO trace hook; removed at
    // teardown).
    void count_soft_resets();
    int soft_resets_ = 0;

    // The credentials the test body acts with (kernel_shim/cred.h), as a client process does: an
    // ordinary user without capabilities unless the test raises some. Tasks a test starts are
    // kernel threads and act as such (init_cred: every capability).
    kshim::cred client_cred = kshim::user_cred();
    // CAP_SYS_NICE for the test body: HIGH and REALTIME groups.
    void set_cap_sys_nice(bool on);

    // The host's machine: the G610 model's device and the panthor module, loaded in SetUp.
    std::unique_ptr<upanthor::host::Machine> machine_;
    panthor_device* ptdev = nullptr;
    drm::drm_file* file = nullptr;

private:
    std::vector<drm::VmArea*> maps_;  // bo_cpu mappings, unmapped at teardown
};

}  // namespace panthor::testing
