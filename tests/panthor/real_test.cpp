// The driver on the real-thread runtime (label real; the tsan preset runs it under
// ThreadSanitizer): IRQ threads, workqueues, the PM workqueue and the mock GPU's timers run on OS
// threads while the test thread probes, binds, maps and removes.
#include "drm/drm_syncobj.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/time.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {
namespace {

class PanthorReal : public PanthorTest {
protected:
    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o = kshim::options_from_env({});
        o.mode = kshim::Mode::Real;
        return o;
    }
};

constexpr u64 kVa = 0x1000000;

TEST_F(PanthorReal, BindMapAndReadBackThroughTheGpu) {
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(2 * 4096);
    ASSERT_EQ(vm_map(vm_id, bo, kVa, 2 * 4096), 0);
    auto* cpu = static_cast<u32*>(bo_cpu(bo, 2 * 4096));
    ASSERT_NE(cpu, nullptr);
    __atomic_store_n(&cpu[1024], 0xC0FFEEu, __ATOMIC_RELEASE);

    panthor_vm* vm = panthor_vm_pool_get_vm(static_cast<panthor_file*>(file->driver_priv)->vms, vm_id);
    ASSERT_NE(vm, nullptr);
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    ASSERT_EQ(panthor_vm_active(vm), 0);
    const int as = panthor_vm_as(vm);
    EXPECT_GT(as, 0);
    u32 seen = 0;
    EXPECT_TRUE(gpu().mmu().read(static_cast<u32>(as), kVa + 4096, &seen, sizeof(seen)).ok());
    EXPECT_EQ(seen, 0xC0FFEEu);
    panthor_vm_idle(vm);
    panthor_vm_put(vm);
    kshim::pm_runtime_put_autosuspend(dev());

    EXPECT_EQ(vm_unmap(vm_id, kVa, 2 * 4096), 0);
    vm_destroy(vm_id);
}

TEST_F(PanthorReal, AsyncBindSignalsItsSyncobj) {
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(4096);
    drm_syncobj_create create{};
    ASSERT_EQ(ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &create), 0);

    drm_panthor_sync_op sync{};
    sync.flags = DRM_PANTHOR_SYNC_OP_SIGNAL | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ;
    sync.handle = create.handle;
    drm_panthor_vm_bind_op op{};
    op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP;
    op.bo_handle = bo;
    op.va = kVa;
    op.size = 4096;
    op.syncs = DRM_PANTHOR_OBJ_ARRAY(1, &sync);
    drm_panthor_vm_bind bind{};
    bind.vm_id = vm_id;
    bind.flags = DRM_PANTHOR_VM_BIND_ASYNC;
    bind.ops = DRM_PANTHOR_OBJ_ARRAY(1, &op);
    drm::UserRange r1(op), r2(sync);
    ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_BIND, &bind), 0);

    u32 handles[1] = {create.handle};
    drm_syncobj_wait wait{};
    wait.handles = reinterpret_cast<u64>(handles);
    wait.count_handles = 1;
    wait.timeout_nsec = kshim::ktime_get() + 5 * kshim::NSEC_PER_SEC;
    drm::UserRange r3(handles);
    EXPECT_EQ(ioctl(DRM_IOCTL_SYNCOBJ_WAIT, &wait), 0);

    drm_panthor_vm_get_state state{};
    state.vm_id = vm_id;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_GET_STATE, &state), 0);
    EXPECT_EQ(state.state, DRM_PANTHOR_VM_STATE_USABLE);

    drm_syncobj_destroy destroy{};
    destroy.handle = create.handle;
    EXPECT_EQ(ioctl(DRM_IOCTL_SYNCOBJ_DESTROY, &destroy), 0);
    vm_destroy(vm_id);
}

TEST_F(PanthorReal, AutosuspendsAndResumesOnQuery) {
    EXPECT_TRUE(wait_autosuspend());
    drm_panthor_timestamp_info ts{};
    drm_panthor_dev_query q{};
    q.type = DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO;
    q.size = sizeof(ts);
    q.pointer = reinterpret_cast<u64>(&ts);
    drm::UserRange r(ts);
    ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &q), 0);
    EXPECT_EQ(ts.timestamp_frequency, 24'000'000u);
    EXPECT_TRUE(wait_autosuspend());
}

}  // namespace
}  // namespace panthor::testing
