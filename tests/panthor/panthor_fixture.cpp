// The panthor test fixture (panthor_test.h).
#include "tests/panthor/panthor_test.h"

#include "drm/drm_file.h"
#include "drm/drm_mmap.h"
#include "drm/drm_syncobj.h"
#include "kernel_shim/devcoredump.h"
#include "kernel_shim/time.h"

namespace panthor::testing {

void PanthorTest::SetUp() {
    KernelTest::SetUp();
    kshim::override_creds(&client_cred);
    upanthor::host::Machine::Options opts;
    opts.config.csf = gpu_config();
    ASSERT_EQ(upanthor::host::Machine::create(opts, &machine_), 0);
    if (probe_in_setup()) {
        ASSERT_EQ(probe(), 0);
        ASSERT_EQ(open_file(&file), 0);
    }
}

drm_panthor_vm_bind_op map_op(u32 bo, u64 va, u64 size, u64 bo_offset, u32 map_flags) {
    drm_panthor_vm_bind_op op{};
    op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP | map_flags;
    op.bo_handle = bo;
    op.bo_offset = bo_offset;
    op.va = va;
    op.size = size;
    return op;
}

drm_panthor_vm_bind_op unmap_op(u64 va, u64 size) {
    drm_panthor_vm_bind_op op{};
    op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP;
    op.va = va;
    op.size = size;
    return op;
}

void PanthorTest::count_soft_resets() {
    pdev()->desc.iomem->trace_hook = [this](bool write, u32 off, u32 value) {
        if (write && off == GPU_CMD && value == GPU_SOFT_RESET)
            soft_resets_++;
    };
}

void PanthorTest::TearDown() {
    if (machine_)
        pdev()->desc.iomem->trace_hook = nullptr;
    remove();
    machine_.reset();
    kshim::revert_creds(nullptr);
    KernelTest::TearDown();
}

void PanthorTest::set_cap_sys_nice(bool on) {
    client_cred.cap_effective = on ? kshim::cap_raise(kshim::CAP_EMPTY_SET, kshim::CAP_SYS_NICE) : kshim::CAP_EMPTY_SET;
}

int PanthorTest::probe() {
    int ret = machine_->probe();
    ptdev = ret ? nullptr : panthor_from_pdev(pdev());
    return ret;
}

void PanthorTest::remove() {
    for (drm::VmArea* vma : maps_)
        drm::drm_munmap(vma);
    maps_.clear();
    if (file) {
        drm::drm_release(file);
        file = nullptr;
    }
    if (machine_)
        machine_->remove();
    ptdev = nullptr;
}

int PanthorTest::open_file(drm::drm_file** out, bool render) {
    return machine_->open_file(out, render);
}

u32 PanthorTest::vm_create(u64 user_va_range, drm::drm_file* f) {
    drm_panthor_vm_create args{};
    args.user_va_range = user_va_range;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_CREATE, &args, f), 0);
    return args.id;
}

void PanthorTest::vm_destroy(u32 id, drm::drm_file* f) {
    drm_panthor_vm_destroy args{};
    args.id = id;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_DESTROY, &args, f), 0);
}

u32 PanthorTest::bo_create(u64 size, u32 flags, u32 exclusive_vm_id, drm::drm_file* f) {
    drm_panthor_bo_create args{};
    args.size = size;
    args.flags = flags;
    args.exclusive_vm_id = exclusive_vm_id;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_CREATE, &args, f), 0);
    return args.handle;
}

int PanthorTest::vm_bind(u32 vm_id, u32 flags, u32 bo, u64 bo_offset, u64 va, u64 size, drm::drm_file* f) {
    drm_panthor_vm_bind_op op = map_op(bo, va, size, bo_offset);
    op.flags = flags;
    drm_panthor_vm_bind args{};
    args.vm_id = vm_id;
    args.ops = DRM_PANTHOR_OBJ_ARRAY(1, &op);
    drm::UserRange r(op);
    return ioctl(DRM_IOCTL_PANTHOR_VM_BIND, &args, f);
}

void* PanthorTest::bo_cpu(u32 bo, u64 size) {
    drm_panthor_bo_mmap_offset args{};
    args.handle = bo;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &args), 0);
    drm::VmArea* vma = nullptr;
    EXPECT_EQ(drm::drm_mmap(file, args.offset, size, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), 0);
    if (!vma)
        return nullptr;
    maps_.push_back(vma);
    return vma->addr;
}

std::string PanthorTest::read_devcoredump() {
    std::string out;
    char buf[500];
    for (loff_t off = 0;;) {
        const ssize_t n = kshim::devcd_read(dev(), buf, off, sizeof(buf));
        if (n <= 0)
            break;
        out.append(buf, static_cast<size_t>(n));
        off += n;
    }
    return out;
}

bool PanthorTest::wait_autosuspend() {
    return run_until([&] { return kshim::pm_runtime_suspended(dev()); }, kshim::ms_to_ktime(1000));
}

u32 PanthorTest::syncobj_create(u32 flags) {
    drm_syncobj_create args{};
    args.flags = flags;
    EXPECT_EQ(ioctl(DRM_IOCTL_SYNCOBJ_CREATE, &args), 0);
    return args.handle;
}

int PanthorTest::syncobj_wait(std::vector<u32> handles, kshim::ktime_t timeout) {
    drm::UserRange r(handles.data(), handles.size() * sizeof(u32));
    drm_syncobj_wait args{};
    args.handles = reinterpret_cast<u64>(handles.data());
    args.count_handles = static_cast<u32>(handles.size());
    args.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    args.timeout_nsec = kshim::ktime_get() + timeout;
    return ioctl(DRM_IOCTL_SYNCOBJ_WAIT, &args);
}

int PanthorTest::syncobj_timeline_wait(u32 handle, u64 point, kshim::ktime_t timeout) {
    drm::UserRange rh(&handle, sizeof(handle));
    drm::UserRange rp(&point, sizeof(point));
    drm_syncobj_timeline_wait args{};
    args.handles = reinterpret_cast<u64>(&handle);
    args.points = reinterpret_cast<u64>(&point);
    args.count_handles = 1;
    args.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    args.timeout_nsec = kshim::ktime_get() + timeout;
    return ioctl(DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &args);
}

int PanthorTest::fence_status(u32 handle, u64 point) {
    kshim::dma_fence* f = nullptr;
    const int ret = drm::drm_syncobj_find_fence(file, handle, point, 0, &f);
    if (ret)
        return ret;
    const int st = kshim::dma_fence_get_status(f);
    kshim::dma_fence_put(f);
    return st;
}

}  // namespace panthor::testing
