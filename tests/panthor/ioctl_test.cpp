// The panthor ioctls and mmap as a client sees them (simulated runtime): one table row per
// validation rule of docs/hw/csf/uapi.md with the kernel's errno (checked against upstream
// panthor_drv.c / panthor_mmu.c), the DRM core's size and numbering rules, and the mmap contract
// (a BO's CPU mapping is the memory the GPU reads; the USER_FLUSH_ID page).
#include <bit>
#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "drm/drm_gem.h"
#include "drm/drm_vma_manager.h"
#include "hw/csf/regs/csf_regs.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/err.h"
#include "kernel_shim/trace.h"
#include "mock_hw/lpae_walker.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_gpu.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"
#include "uapi/drm/drm.h"

namespace panthor::testing {
namespace {

using drm::user_ptr;
using drm::UserRange;
using Op = drm_panthor_vm_bind_op;
using SyncOp = drm_panthor_sync_op;

constexpr u64 SZ_4K = 4096;
constexpr u64 SZ_256M = u64{256} << 20;
constexpr u64 kVa = 0x100000;  // a user VA every VM has
constexpr u32 kBadHandle = 0x1234;
// An address no test registers as user memory.
constexpr u64 kBadUserPtr = 0x1000;

constexpr u32 OP_MAP = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP;
constexpr u32 OP_UNMAP = DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP;
constexpr u32 OP_SYNC_ONLY = DRM_PANTHOR_VM_BIND_OP_TYPE_SYNC_ONLY;
// What a valid sparse MAP carries besides the type.
constexpr u32 SPARSE = DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE | DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC;
constexpr u32 SYNC_SIGNAL = DRM_PANTHOR_SYNC_OP_SIGNAL;
constexpr u32 SYNC_WAIT = DRM_PANTHOR_SYNC_OP_WAIT;
constexpr u32 SYNC_BINARY = DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ;
constexpr u32 SYNC_TIMELINE = DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ;

// The same ioctl with another struct size in its encoding (an older or newer userspace).
constexpr unsigned with_size(unsigned cmd, unsigned size) {
    return (cmd & ~(((1u << drm::uapi::_IOC_SIZEBITS) - 1) << drm::uapi::_IOC_SIZESHIFT)) |
           (size << drm::uapi::_IOC_SIZESHIFT);
}

drm_panthor_obj_array obj_array(u32 stride, u32 count, const void* p) {
    return {stride, count, user_ptr(p)};
}

template <class T>
drm_panthor_obj_array obj_array(std::vector<T>& v) {
    return obj_array(sizeof(T), static_cast<u32>(v.size()), v.empty() ? nullptr : v.data());
}

class PanthorIoctl : public PanthorTest {
public:
    // The table rows run as free functions: they reach the fixture through these.
    using PanthorTest::bo_create;
    using PanthorTest::dev;
    using PanthorTest::file;
    using PanthorTest::gpu;
    using PanthorTest::ioctl;
    using PanthorTest::ptdev;
    using PanthorTest::vm_create;
    using PanthorTest::vm_destroy;
    using PanthorTest::wait_autosuspend;

    void TearDown() override {
        for (drm::VmArea* vma : vmas_)
            drm::drm_munmap(vma);
        vmas_.clear();
        PanthorTest::TearDown();
    }

    panthor_file* pfile() { return static_cast<panthor_file*>(file->driver_priv); }

    // VM_BIND on an array of ops (registered as user memory, with their sync arrays registered
    // by the caller); *count_out gets ops.count as the kernel left it.
    int bind(u32 vm_id, u32 flags, std::vector<Op> ops, u32* count_out = nullptr) {
        drm_panthor_vm_bind args{};
        args.vm_id = vm_id;
        args.flags = flags;
        args.ops = obj_array(ops);
        UserRange r(ops.data(), ops.size() * sizeof(Op));
        const int ret = ioctl(DRM_IOCTL_PANTHOR_VM_BIND, &args);
        if (count_out)
            *count_out = args.ops.count;
        return ret;
    }
    int bind_one(u32 vm_id, u32 flags, const Op& op) { return bind(vm_id, flags, {op}); }
    // VM_BIND whose ops array the caller laid out (and registered, or not).
    int bind_raw(u32 vm_id, u32 flags, drm_panthor_obj_array ops) {
        drm_panthor_vm_bind args{};
        args.vm_id = vm_id;
        args.flags = flags;
        args.ops = ops;
        return ioctl(DRM_IOCTL_PANTHOR_VM_BIND, &args);
    }
    // An asynchronous SYNC_ONLY op carrying `syncs`.
    // `tweak` sets the one field a row wants wrong.
    int sync_only(u32 vm_id, std::vector<SyncOp> syncs, const std::function<void(Op&)>& tweak = {}) {
        UserRange r(syncs.data(), syncs.size() * sizeof(SyncOp));
        Op op{};
        op.flags = OP_SYNC_ONLY;
        op.syncs = obj_array(syncs);
        if (tweak)
            tweak(op);
        return bind_one(vm_id, DRM_PANTHOR_VM_BIND_ASYNC, op);
    }
    // A SYNC_ONLY op signalling a fresh binary syncobj, with one field changed by `tweak`.
    int sync_only_signal_with(const std::function<void(Op&)>& tweak) {
        return sync_only(vm_create(), {{SYNC_SIGNAL | SYNC_BINARY, syncobj_create(), 0}}, tweak);
    }
    // An asynchronous SYNC_ONLY op whose sync array the caller laid out.
    int sync_only_raw(u32 vm_id, drm_panthor_obj_array syncs) {
        Op op{};
        op.flags = OP_SYNC_ONLY;
        op.syncs = syncs;
        return bind_one(vm_id, DRM_PANTHOR_VM_BIND_ASYNC, op);
    }

    u32 syncobj_create(bool signalled = false) {
        drm::uapi::drm_syncobj_create args{};
        args.flags = signalled ? drm::uapi::DRM_SYNCOBJ_CREATE_SIGNALED : 0;
        EXPECT_EQ(ioctl(drm::uapi::DRM_IOCTL_SYNCOBJ_CREATE, &args), 0);
        return args.handle;
    }

    int dev_query(u32 type, u32 size, u64 pointer, u32* size_out = nullptr) {
        drm_panthor_dev_query args{};
        args.type = type;
        args.size = size;
        args.pointer = pointer;
        const int ret = ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &args);
        if (size_out)
            *size_out = args.size;
        return ret;
    }

    int vm_create_args(drm_panthor_vm_create* args) { return ioctl(DRM_IOCTL_PANTHOR_VM_CREATE, args); }
    int vm_create_ret(u32 flags, u64 user_va_range) {
        drm_panthor_vm_create args{};
        args.flags = flags;
        args.user_va_range = user_va_range;
        return vm_create_args(&args);
    }
    int vm_destroy_ret(u32 id, u32 pad = 0) {
        drm_panthor_vm_destroy args{id, pad};
        return ioctl(DRM_IOCTL_PANTHOR_VM_DESTROY, &args);
    }
    int bo_create_ret(u64 size, u32 flags = 0, u32 exclusive_vm_id = 0, u32 pad = 0,
                      drm_panthor_bo_create* out = nullptr) {
        drm_panthor_bo_create args{};
        args.size = size;
        args.flags = flags;
        args.exclusive_vm_id = exclusive_vm_id;
        args.pad = pad;
        const int ret = ioctl(DRM_IOCTL_PANTHOR_BO_CREATE, &args);
        if (out)
            *out = args;
        return ret;
    }
    int bo_mmap_offset(u32 handle, u64* offset = nullptr, u32 pad = 0) {
        drm_panthor_bo_mmap_offset args{};
        args.handle = handle;
        args.pad = pad;
        const int ret = ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &args);
        if (offset)
            *offset = args.offset;
        return ret;
    }
    int bo_set_label(u32 handle, u64 label, u32 pad = 0) {
        drm_panthor_bo_set_label args{};
        args.handle = handle;
        args.pad = pad;
        args.label = label;
        return ioctl(DRM_IOCTL_PANTHOR_BO_SET_LABEL, &args);
    }
    // A BO's label as the driver holds it ("<none>" when unset).
    std::string bo_label(u32 handle) {
        drm::drm_gem_object* obj = file->gem.lookup(handle);
        if (!obj)
            return "<no bo>";
        panthor_gem_object* bo = to_panthor_bo(obj);
        std::string s;
        {
            kshim::MutexGuard g(bo->label.lock);
            s = bo->label.str ? bo->label.str : "<none>";
        }
        drm::drm_gem_object_put(obj);
        return s;
    }
    int bo_sync(std::vector<drm_panthor_bo_sync_op> ops) {
        UserRange r(ops.data(), ops.size() * sizeof(drm_panthor_bo_sync_op));
        return bo_sync_raw(obj_array(ops));
    }
    // BO_SYNC whose ops array the caller laid out (and registered, or not).
    int bo_sync_raw(drm_panthor_obj_array ops) {
        drm_panthor_bo_sync args{ops};
        return ioctl(DRM_IOCTL_PANTHOR_BO_SYNC, &args);
    }
    int bo_query_info(u32 handle, drm_panthor_bo_query_info* out = nullptr, u32 pad = 0) {
        drm_panthor_bo_query_info args{handle, ~0u, ~0u, pad};
        const int ret = ioctl(DRM_IOCTL_PANTHOR_BO_QUERY_INFO, &args);
        if (out)
            *out = args;
        return ret;
    }
    u32 wb_bo(u64 size = SZ_4K) { return bo_create(size, DRM_PANTHOR_BO_WB_MMAP); }
    int set_user_mmio_offset(u64 offset) {
        drm_panthor_set_user_mmio_offset args{offset};
        return ioctl(DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET, &args);
    }
    int vm_get_state(u32 vm_id, u32* state = nullptr) {
        drm_panthor_vm_get_state args{vm_id, ~0u};
        const int ret = ioctl(DRM_IOCTL_PANTHOR_VM_GET_STATE, &args);
        if (state)
            *state = args.state;
        return ret;
    }

    // mmap(2) on the fixture's file; the mapping is unmapped at teardown.
    int mmap(u64 offset, size_t length, int prot, int flags, drm::VmArea** out = nullptr) {
        drm::VmArea* vma = nullptr;
        const int ret = drm::drm_mmap(file, offset, length, prot, flags, &vma);
        if (vma)
            vmas_.push_back(vma);
        if (out)
            *out = vma;
        return ret;
    }
    u64 bo_offset_of(u32 bo) {
        u64 off = 0;
        EXPECT_EQ(bo_mmap_offset(bo, &off), 0);
        return off;
    }

    // The VM on an address space with the device powered (bench/panthor_bench.cpp's pattern).
    panthor_vm* activate(u32 vm_id) {
        panthor_vm* vm = panthor_vm_pool_get_vm(pfile()->vms, vm_id);
        if (!vm) {
            ADD_FAILURE() << "no VM " << vm_id;
            return nullptr;
        }
        EXPECT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
        EXPECT_EQ(panthor_vm_active(vm), 0);
        EXPECT_GE(panthor_vm_as(vm), 0);
        return vm;
    }
    void deactivate(panthor_vm* vm) {
        panthor_vm_idle(vm);
        panthor_vm_put(vm);
        kshim::pm_runtime_put_autosuspend(dev());
    }
    // Whether the page tables of the AS `vm` sits on translate `va` (the mock's own walker on
    // the latched AS configuration; no access is made, so nothing faults).
    bool gpu_maps(panthor_vm* vm, u64 va) {
        mock_hw::AsConfig cfg;
        {
            kshim::SpinGuard g(gpu().lock());
            cfg = gpu().mmu().config_locked(static_cast<u32>(panthor_vm_as(vm)));
        }
        return mock_hw::lpae_walk(cfg, va).ok;
    }

    u64 full_va_range() { return u64{1} << GPU_MMU_FEATURES_VA_BITS(ptdev->gpu_info.mmu_features); }

private:
    std::vector<drm::VmArea*> vmas_;
};

// ---------------------------------------------------------------------------------------------
// One row per validation rule: the call and the errno the kernel returns for it. Rows expecting
// 0 are the valid base of the rows around them, so a failing row fails for its one change.

struct ErrnoRow {
    const char* name;
    int expected;
    int (*run)(PanthorIoctl& t);
};

std::ostream& operator<<(std::ostream& os, const ErrnoRow& r) {
    return os << r.name;
}

class PanthorIoctlErrno : public PanthorIoctl, public ::testing::WithParamInterface<ErrnoRow> {};

TEST_P(PanthorIoctlErrno, ReturnsKernelErrno) {
    const ErrnoRow& row = GetParam();
    EXPECT_EQ(row.run(*this), row.expected) << row.name;
}

std::string row_name(const ::testing::TestParamInfo<ErrnoRow>& info) {
    return info.param.name;
}

#define ROWS(suite, ...) INSTANTIATE_TEST_SUITE_P(suite, PanthorIoctlErrno, ::testing::Values(__VA_ARGS__), row_name)

// ---- DRM core: ioctl numbers and the unplugged device ----
ROWS(DrmCore,
     // All-zero args reach the drivers' checks: zero queues, and VM 0 (no heap handle).
     ErrnoRow{"GroupCreate_ZeroedArgs", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_group_create args{};
                  return t.ioctl(DRM_IOCTL_PANTHOR_GROUP_CREATE, &args);
              }},
     ErrnoRow{"TilerHeapDestroy_ZeroedArgs", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_tiler_heap_destroy args{};
                  return t.ioctl(DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY, &args);
              }},
     ErrnoRow{"NrPastDriverTable", -EINVAL,
              [](PanthorIoctl& t) {
                  u64 arg[2] = {};
                  const unsigned cmd =
                      drm::uapi::_IOC(drm::uapi::_IOC_READ | drm::uapi::_IOC_WRITE, drm::uapi::DRM_IOCTL_BASE,
                                      drm::uapi::DRM_COMMAND_BASE + DRM_PANTHOR_BO_QUERY_INFO + 1, sizeof(arg));
                  return t.ioctl(cmd, &arg);
              }},
     ErrnoRow{"LastDriverNr", -EINVAL,
              [](PanthorIoctl& t) {
                  u64 arg[2] = {};
                  const unsigned cmd =
                      drm::uapi::_IOC(drm::uapi::_IOC_READ | drm::uapi::_IOC_WRITE, drm::uapi::DRM_IOCTL_BASE,
                                      drm::uapi::DRM_COMMAND_END - 1, sizeof(arg));
                  return t.ioctl(cmd, &arg);
              }},
     ErrnoRow{"ArgStructBadPointer", -EFAULT,
              [](PanthorIoctl& t) { return drm::drm_ioctl(t.file, DRM_IOCTL_PANTHOR_VM_CREATE, kBadUserPtr); }},
     ErrnoRow{"Unplugged_VmCreate", -ENODEV,
              [](PanthorIoctl& t) {
                  panthor_device_unplug(t.ptdev);
                  return t.vm_create_ret(0, 0);
              }},
     ErrnoRow{"Unplugged_VmBind", -ENODEV,
              [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  const u32 bo = t.bo_create(SZ_4K);
                  panthor_device_unplug(t.ptdev);
                  return t.bind_one(vm, 0, map_op(bo, kVa, SZ_4K));
              }},
     ErrnoRow{"Unplugged_VmBindAsync", -ENODEV,
              [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  const u32 bo = t.bo_create(SZ_4K);
                  panthor_device_unplug(t.ptdev);
                  return t.bind_one(vm, DRM_PANTHOR_VM_BIND_ASYNC, map_op(bo, kVa, SZ_4K));
              }},
     ErrnoRow{"Unplugged_BoCreate", -ENODEV, [](PanthorIoctl& t) {
                  panthor_device_unplug(t.ptdev);
                  return t.bo_create_ret(SZ_4K);
              }});

// ---- DEV_QUERY ----
ROWS(DevQuery,
     ErrnoRow{"GpuInfo_SizeQuery", 0,
              [](PanthorIoctl& t) {
                  u32 size = 0;
                  const int ret = t.dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, 0, 0, &size);
                  EXPECT_EQ(size, sizeof(drm_panthor_gpu_info));
                  return ret;
              }},
     ErrnoRow{"UnknownType_SizeQuery", -EINVAL,
              [](PanthorIoctl& t) { return t.dev_query(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO + 2, 0, 0); }},
     ErrnoRow{"UnknownType_WithPointer", -EINVAL,
              [](PanthorIoctl& t) {
                  u8 buf[256] = {};
                  UserRange r(buf, sizeof(buf));
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO + 2, sizeof(buf), user_ptr(buf));
              }},
     ErrnoRow{"GpuInfo_FullSize", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_gpu_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"GpuInfo_MinSize96", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_gpu_info info{};
                  UserRange r(&info, 96);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, 96, user_ptr(&info));
              }},
     ErrnoRow{"GpuInfo_BelowMinSize", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_gpu_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, 95, user_ptr(&info));
              }},
     ErrnoRow{"GpuInfo_BadPointer", -EFAULT,
              [](PanthorIoctl& t) {
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, sizeof(drm_panthor_gpu_info), kBadUserPtr);
              }},
     ErrnoRow{"GpuInfo_TailPastUserMemory", -EFAULT,
              [](PanthorIoctl& t) {
                  // The zero-fill of a bigger user object faults too.
                  u8 buf[sizeof(drm_panthor_gpu_info) + 8] = {};
                  UserRange r(buf, sizeof(drm_panthor_gpu_info));
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, sizeof(buf), user_ptr(buf));
              }},
     ErrnoRow{"CsifInfo_FullSize", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_csif_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_CSIF_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"CsifInfo_BelowMinSize", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_csif_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_CSIF_INFO, sizeof(info) - 1, user_ptr(&info));
              }},
     ErrnoRow{"TimestampInfo_MinSize16", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_timestamp_info info{};
                  UserRange r(&info, 16);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, 16, user_ptr(&info));
              }},
     ErrnoRow{"TimestampInfo_BelowMinSize", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_timestamp_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, 15, user_ptr(&info));
              }},
     // 1.8: the input flags (copy_struct_from_user of the user's size).
     ErrnoRow{"TimestampInfo_Pre18Size24", 0,
              [](PanthorIoctl& t) {
                  u8 buf[24] = {};
                  UserRange r(buf, sizeof(buf));
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(buf), user_ptr(buf));
              }},
     ErrnoRow{"TimestampInfo_FlagsAll", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_timestamp_info info{};
                  info.flags = DRM_PANTHOR_TIMESTAMP_GPU | DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC_RAW |
                               DRM_PANTHOR_TIMESTAMP_GPU_OFFSET | DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT |
                               DRM_PANTHOR_TIMESTAMP_FREQ | DRM_PANTHOR_TIMESTAMP_DURATION;
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"TimestampInfo_CpuType3", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_timestamp_info info{};
                  info.flags = DRM_PANTHOR_TIMESTAMP_GPU | (3u << 1);
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"TimestampInfo_CpuType7", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_timestamp_info info{};
                  info.flags = 7u << 1;
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"TimestampInfo_FlagBit8", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_timestamp_info info{};
                  info.flags = DRM_PANTHOR_TIMESTAMP_GPU | (1u << 8);
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"TimestampInfo_FlagBit31", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_timestamp_info info{};
                  info.flags = 1u << 31;
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"TimestampInfo_LongerZeroTail", 0,
              [](PanthorIoctl& t) {
                  u8 buf[sizeof(drm_panthor_timestamp_info) + 16] = {};
                  UserRange r(buf, sizeof(buf));
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(buf), user_ptr(buf));
              }},
     ErrnoRow{"TimestampInfo_LongerNonZeroTail", -E2BIG,
              [](PanthorIoctl& t) {
                  u8 buf[sizeof(drm_panthor_timestamp_info) + 16] = {};
                  buf[sizeof(drm_panthor_timestamp_info) + 3] = 1;
                  UserRange r(buf, sizeof(buf));
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(buf), user_ptr(buf));
              }},
     ErrnoRow{"TimestampInfo_InputUnreadable", -EFAULT,
              [](PanthorIoctl& t) {
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(drm_panthor_timestamp_info),
                                     kBadUserPtr);
              }},
     ErrnoRow{"PrioritiesInfo_FullSize", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_group_priorities_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, sizeof(info), user_ptr(&info));
              }},
     ErrnoRow{"PrioritiesInfo_SizeZeroWithPointer", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_group_priorities_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, 0, user_ptr(&info));
              }},
     // 1.9 MMU_INFO.
     ErrnoRow{"MmuInfo_SizeQuery", 0,
              [](PanthorIoctl& t) {
                  u32 size = 0;
                  const int ret = t.dev_query(DRM_PANTHOR_DEV_QUERY_MMU_INFO, 0, 0, &size);
                  EXPECT_EQ(size, 8u);
                  return ret;
              }},
     ErrnoRow{"MmuInfo_FullSize", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_mmu_info info{};
                  UserRange r(info);
                  const int ret = t.dev_query(DRM_PANTHOR_DEV_QUERY_MMU_INFO, sizeof(info), user_ptr(&info));
                  EXPECT_EQ(info.page_size_bitmap, 0x201000u);
                  return ret;
              }},
     ErrnoRow{"MmuInfo_BelowMinSize", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_mmu_info info{};
                  UserRange r(info);
                  return t.dev_query(DRM_PANTHOR_DEV_QUERY_MMU_INFO, 7, user_ptr(&info));
              }},
     ErrnoRow{"MmuInfo_BadPointer", -EFAULT,
              [](PanthorIoctl& t) { return t.dev_query(DRM_PANTHOR_DEV_QUERY_MMU_INFO, 8, kBadUserPtr); }},
     ErrnoRow{"MmuInfo_BiggerIsZeroFilled", 0, [](PanthorIoctl& t) {
                  u64 buf[2] = {~u64{0}, ~u64{0}};
                  UserRange r(buf, sizeof(buf));
                  const int ret = t.dev_query(DRM_PANTHOR_DEV_QUERY_MMU_INFO, sizeof(buf), user_ptr(buf));
                  EXPECT_EQ(buf[0], 0x201000u);
                  EXPECT_EQ(buf[1], 0u);
                  return ret;
              }});

// ---- VM_CREATE / VM_DESTROY / VM_GET_STATE ----
ROWS(VmCreate, ErrnoRow{"Default", 0, [](PanthorIoctl& t) { return t.vm_create_ret(0, 0); }},
     ErrnoRow{"FlagsNonZero", -EINVAL, [](PanthorIoctl& t) { return t.vm_create_ret(1, 0); }},
     ErrnoRow{"FlagsHighBit", -EINVAL, [](PanthorIoctl& t) { return t.vm_create_ret(1u << 31, 0); }},
     ErrnoRow{"UserVaRange_FullMinus256M", 0,
              [](PanthorIoctl& t) { return t.vm_create_ret(0, t.full_va_range() - SZ_256M); }},
     ErrnoRow{"UserVaRange_FullMinus256MPlusPage", -EINVAL,
              [](PanthorIoctl& t) { return t.vm_create_ret(0, t.full_va_range() - SZ_256M + SZ_4K); }},
     ErrnoRow{"UserVaRange_Full", -EINVAL, [](PanthorIoctl& t) { return t.vm_create_ret(0, t.full_va_range()); }},
     ErrnoRow{"UserVaRange_All64Bits", -EINVAL, [](PanthorIoctl& t) { return t.vm_create_ret(0, ~u64{0}); }},
     ErrnoRow{"Vm32_Allowed", 0,
              [](PanthorIoctl& t) {
                  for (int i = 0; i < 31; i++)
                      t.vm_create();
                  return t.vm_create_ret(0, 0);
              }},
     ErrnoRow{"Vm33_Busy", -EBUSY,
              [](PanthorIoctl& t) {
                  for (int i = 0; i < 32; i++)
                      t.vm_create();
                  return t.vm_create_ret(0, 0);
              }},
     ErrnoRow{"Vm33_AfterDestroyOneFits", 0, [](PanthorIoctl& t) {
                  for (int i = 0; i < 32; i++)
                      t.vm_create();
                  EXPECT_EQ(t.vm_destroy_ret(7), 0);
                  return t.vm_create_ret(0, 0);
              }});

ROWS(VmDestroy, ErrnoRow{"Valid", 0, [](PanthorIoctl& t) { return t.vm_destroy_ret(t.vm_create()); }},
     ErrnoRow{"PadNonZero", -EINVAL, [](PanthorIoctl& t) { return t.vm_destroy_ret(t.vm_create(), 1); }},
     ErrnoRow{"UnknownId", -EINVAL,
              [](PanthorIoctl& t) {
                  t.vm_create();
                  return t.vm_destroy_ret(2);
              }},
     ErrnoRow{"IdZero", -EINVAL,
              [](PanthorIoctl& t) {
                  t.vm_create();
                  return t.vm_destroy_ret(0);
              }},
     ErrnoRow{"Twice", -EINVAL, [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  EXPECT_EQ(t.vm_destroy_ret(vm), 0);
                  return t.vm_destroy_ret(vm);
              }});

ROWS(VmGetState,
     ErrnoRow{"Valid", 0,
              [](PanthorIoctl& t) {
                  u32 state = ~0u;
                  const int ret = t.vm_get_state(t.vm_create(), &state);
                  EXPECT_EQ(state, DRM_PANTHOR_VM_STATE_USABLE);
                  return ret;
              }},
     ErrnoRow{"UnknownVm", -EINVAL, [](PanthorIoctl& t) { return t.vm_get_state(3); }},
     ErrnoRow{"DestroyedVm", -EINVAL, [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  t.vm_destroy(vm);
                  return t.vm_get_state(vm);
              }});

// ---- VM_BIND (synchronous unless the name says Async) ----
ROWS(VmBind,
     ErrnoRow{"Map_Valid", 0,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa, SZ_4K)); }},
     ErrnoRow{"Map_AllMapFlags", 0,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0,
                                    map_op(t.bo_create(SZ_4K), kVa, SZ_4K, 0,
                                           DRM_PANTHOR_VM_BIND_OP_MAP_READONLY | DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC |
                                               DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED));
              }},
     ErrnoRow{"Map_UnknownFlagBit3", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa, SZ_4K, 0, 1u << 3));
              }},
     ErrnoRow{"Map_UnknownFlagBit27", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa, SZ_4K, 0, 1u << 27));
              }},
     // IGT's vm_bind_intersect_kbo_range (pending upstream): no user MAP in the kernel VA range.
     ErrnoRow{"Map_IntersectsKernelVaRange", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_vm_create args{};
                  EXPECT_EQ(t.vm_create_args(&args), 0);
                  const u64 va = (args.user_va_range + 0x1fffff) & ~u64{0x1fffff};
                  return t.bind_one(args.id, 0, map_op(t.bo_create(0x200000), va, 0x200000));
              }},
     ErrnoRow{"Map_StraddlesKernelVaStart", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_vm_create args{};
                  EXPECT_EQ(t.vm_create_args(&args), 0);
                  return t.bind_one(args.id, 0, map_op(t.bo_create(2 * SZ_4K), args.user_va_range - SZ_4K, 2 * SZ_4K));
              }},
     ErrnoRow{"Map_EndsAtKernelVaStart", 0,
              [](PanthorIoctl& t) {
                  drm_panthor_vm_create args{};
                  EXPECT_EQ(t.vm_create_args(&args), 0);
                  return t.bind_one(args.id, 0, map_op(t.bo_create(SZ_4K), args.user_va_range - SZ_4K, SZ_4K));
              }},
     ErrnoRow{"Sparse_IntersectsKernelVaRange", -EINVAL,
              [](PanthorIoctl& t) {
                  drm_panthor_vm_create args{};
                  EXPECT_EQ(t.vm_create_args(&args), 0);
                  return t.bind_one(args.id, 0, map_op(0, args.user_va_range, SZ_4K, 0, SPARSE));
              }},
     // 1.9 sparse maps (bit 3): MAP only, no BO, NOEXEC required.
     ErrnoRow{"Sparse_Valid", 0,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(0, kVa, 4 * SZ_4K, 0, SPARSE)); }},
     ErrnoRow{"Sparse_ReadonlyUncached", 0,
              [](PanthorIoctl& t) {
                  return t.bind_one(
                      t.vm_create(), 0,
                      map_op(0, kVa, SZ_4K, 0,
                             SPARSE | DRM_PANTHOR_VM_BIND_OP_MAP_READONLY | DRM_PANTHOR_VM_BIND_OP_MAP_UNCACHED));
              }},
     ErrnoRow{"Sparse_WithoutNoexec", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(0, kVa, SZ_4K, 0, DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE));
              }},
     ErrnoRow{"Sparse_BoHandle", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa, SZ_4K, 0, SPARSE));
              }},
     ErrnoRow{"Sparse_BoOffset", -EINVAL,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(0, kVa, SZ_4K, SZ_4K, SPARSE)); }},
     ErrnoRow{"Sparse_OnUnmap", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op = unmap_op(kVa, SZ_4K);
                  op.flags |= SPARSE;
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"Sparse_OnSyncOnly", -EINVAL,
              [](PanthorIoctl& t) { return t.sync_only_signal_with([](Op& op) { op.flags |= SPARSE; }); }},
     ErrnoRow{"Sparse_VaUnaligned", -EINVAL,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(0, kVa + 0x800, SZ_4K, 0, SPARSE)); }},
     ErrnoRow{"Sparse_SizeZeroIsNoop", 0,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(0, kVa, 0, 0, SPARSE)); }},
     ErrnoRow{"Sparse_VaSizeOverflow", -EINVAL,
              [](PanthorIoctl& t) {
                  // IGT's vm_bind_sparse_overflow: at 512 MiB, ALIGN_DOWN(U64_MAX, 2 MiB) - 6 MiB.
                  return t.bind_one(t.vm_create(), 0,
                                    map_op(0, u64{512} << 20, (~u64{0} & ~u64{0x1fffff}) - (u64{6} << 20), 0, SPARSE));
              }},
     ErrnoRow{"Sparse_PastTheVaSpace", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(0, t.full_va_range() - SZ_4K, 2 * SZ_4K, 0, SPARSE));
              }},
     ErrnoRow{"Unmap_VaSizeOverflow", -EINVAL,
              [](PanthorIoctl& t) {
                  // IGT's vm_unbind_sparse_overflow.
                  const u32 vm = t.vm_create();
                  EXPECT_EQ(t.bind_one(vm, 0, map_op(0, u64{512} << 20, u64{6} << 20, 0, SPARSE)), 0);
                  return t.bind_one(vm, 0, unmap_op(u64{512} << 20, (~u64{0} & ~u64{0x1fffff}) - (u64{6} << 20)));
              }},
     ErrnoRow{"Sparse_Async", 0,
              [](PanthorIoctl& t) {
                  std::vector<SyncOp> syncs{{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}};
                  UserRange r(syncs.data(), syncs.size() * sizeof(SyncOp));
                  Op op = map_op(0, kVa, SZ_4K, 0, SPARSE);
                  op.syncs = obj_array(syncs);
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, op);
              }},
     ErrnoRow{"Sparse_AsyncWithoutNoexec", -EINVAL,
              [](PanthorIoctl& t) {
                  std::vector<SyncOp> syncs{{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}};
                  UserRange r(syncs.data(), syncs.size() * sizeof(SyncOp));
                  Op op = map_op(0, kVa, SZ_4K, 0, DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE);
                  op.syncs = obj_array(syncs);
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, op);
              }},
     ErrnoRow{
         "Map_VaUnaligned", -EINVAL,
         [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa + 0x800, SZ_4K)); }},
     ErrnoRow{"Map_SizeUnaligned", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(2 * SZ_4K), kVa, SZ_4K + 0x800));
              }},
     ErrnoRow{"Map_BoOffsetUnaligned", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(2 * SZ_4K), kVa, SZ_4K, 0x800));
              }},
     ErrnoRow{"Map_SizeZeroIsNoop", 0,
              [](PanthorIoctl& t) {
                  // Nothing else is checked: not even the BO handle.
                  return t.bind_one(t.vm_create(), 0, map_op(kBadHandle, kVa, 0));
              }},
     ErrnoRow{"Map_UnknownBo", -EINVAL,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(kBadHandle, kVa, SZ_4K)); }},
     ErrnoRow{"Map_BoHandleZero", -EINVAL,
              [](PanthorIoctl& t) {
                  t.bo_create(SZ_4K);
                  return t.bind_one(t.vm_create(), 0, map_op(0, kVa, SZ_4K));
              }},
     ErrnoRow{"Map_WholeBoAtLastOffset", 0,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(4 * SZ_4K), kVa, SZ_4K, 3 * SZ_4K));
              }},
     ErrnoRow{"Map_SizeLargerThanBo", -EINVAL,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa, 2 * SZ_4K)); }},
     ErrnoRow{"Map_OffsetPlusSizePastBo", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(4 * SZ_4K), kVa, 2 * SZ_4K, 3 * SZ_4K));
              }},
     ErrnoRow{
         "Map_OffsetAtBoEnd", -EINVAL,
         [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa, SZ_4K, SZ_4K)); }},
     ErrnoRow{"Map_OffsetPlusSizeOverflows", -EINVAL,
              [](PanthorIoctl& t) {
                  // offset + size wraps to a value inside the BO: only offset > bo_size - size sees it.
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(2 * SZ_4K), kVa, SZ_4K, ~u64{0} - 0xfff));
              }},
     ErrnoRow{"Map_HugeSizeWraps", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), kVa, ~u64{0} - 0xfff));
              }},
     ErrnoRow{"Map_PastVaSpace", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), 0, map_op(t.bo_create(SZ_4K), t.full_va_range(), SZ_4K));
              }},
     ErrnoRow{"Map_ExclusiveBoInItsVm", 0,
              [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  return t.bind_one(vm, 0, map_op(t.bo_create(SZ_4K, 0, vm), kVa, SZ_4K));
              }},
     ErrnoRow{"Map_ExclusiveBoInAnotherVm", -EINVAL,
              [](PanthorIoctl& t) {
                  const u32 vm_a = t.vm_create();
                  const u32 vm_b = t.vm_create();
                  return t.bind_one(vm_b, 0, map_op(t.bo_create(SZ_4K, 0, vm_a), kVa, SZ_4K));
              }},
     ErrnoRow{"Map_SharedBoInTwoVms", 0,
              [](PanthorIoctl& t) {
                  const u32 bo = t.bo_create(SZ_4K);
                  EXPECT_EQ(t.bind_one(t.vm_create(), 0, map_op(bo, kVa, SZ_4K)), 0);
                  return t.bind_one(t.vm_create(), 0, map_op(bo, kVa, SZ_4K));
              }},
     ErrnoRow{"Map_SyncsOnSynchronousBind", -EINVAL,
              [](PanthorIoctl& t) {
                  std::vector<SyncOp> syncs = {{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}};
                  UserRange r(syncs.data(), sizeof(SyncOp));
                  Op op = map_op(t.bo_create(SZ_4K), kVa, SZ_4K);
                  op.syncs = obj_array(syncs);
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"UnknownVm", -EINVAL,
              [](PanthorIoctl& t) {
                  t.vm_create();
                  return t.bind_one(2, 0, map_op(t.bo_create(SZ_4K), kVa, SZ_4K));
              }},
     ErrnoRow{"DestroyedVm", -EINVAL,
              [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  const u32 bo = t.bo_create(SZ_4K);
                  t.vm_destroy(vm);
                  return t.bind_one(vm, 0, map_op(bo, kVa, SZ_4K));
              }},
     ErrnoRow{"UnknownFlagsIgnored", 0,
              [](PanthorIoctl& t) {
                  // Upstream never checks the VM_BIND flags beyond ASYNC.
                  return t.bind_one(t.vm_create(), 1u << 4, map_op(t.bo_create(SZ_4K), kVa, SZ_4K));
              }},
     ErrnoRow{"Unmap_Valid", 0,
              [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  EXPECT_EQ(t.bind_one(vm, 0, map_op(t.bo_create(SZ_4K), kVa, SZ_4K)), 0);
                  return t.bind_one(vm, 0, unmap_op(kVa, SZ_4K));
              }},
     ErrnoRow{"Unmap_NothingMapped", 0,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, unmap_op(kVa, SZ_4K)); }},
     ErrnoRow{"Unmap_MapFlag", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op = unmap_op(kVa, SZ_4K);
                  op.flags |= DRM_PANTHOR_VM_BIND_OP_MAP_READONLY;
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"Unmap_BoHandle", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op = unmap_op(kVa, SZ_4K);
                  op.bo_handle = t.bo_create(SZ_4K);
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"Unmap_BoOffset", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op = unmap_op(kVa, SZ_4K);
                  op.bo_offset = SZ_4K;
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"Unmap_VaUnaligned", -EINVAL,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, unmap_op(kVa + 0x10, SZ_4K)); }},
     ErrnoRow{"Unmap_SizeUnaligned", -EINVAL,
              [](PanthorIoctl& t) { return t.bind_one(t.vm_create(), 0, unmap_op(kVa, 0x10)); }},
     ErrnoRow{"UnknownType3", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op = unmap_op(kVa, SZ_4K);
                  op.flags = 3u << 28;
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"UnknownType15", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op = unmap_op(kVa, SZ_4K);
                  op.flags = 15u << 28;
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"SyncOnly_NoSyncsIsNoop", 0,
              [](PanthorIoctl& t) {
                  // A synchronous op of size 0 returns before the type checks (upstream).
                  Op op{};
                  op.flags = OP_SYNC_ONLY;
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"SyncOnly_WithSize", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op{};
                  op.flags = OP_SYNC_ONLY;
                  op.size = SZ_4K;
                  return t.bind_one(t.vm_create(), 0, op);
              }},
     ErrnoRow{"SyncOnly_WithSyncs", -EINVAL, [](PanthorIoctl& t) {
                  std::vector<SyncOp> syncs = {{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}};
                  UserRange r(syncs.data(), sizeof(SyncOp));
                  Op op{};
                  op.flags = OP_SYNC_ONLY;
                  op.syncs = obj_array(syncs);
                  return t.bind_one(t.vm_create(), 0, op);
              }});

ROWS(VmBindAsync,
     ErrnoRow{"Map_Valid", 0,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, map_op(t.bo_create(SZ_4K), kVa, SZ_4K));
              }},
     ErrnoRow{"Map_UnknownBo", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, map_op(kBadHandle, kVa, SZ_4K));
              }},
     ErrnoRow{"Map_VaUnaligned", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC,
                                    map_op(t.bo_create(SZ_4K), kVa + 0x800, SZ_4K));
              }},
     ErrnoRow{"Map_SizeLargerThanBo", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC,
                                    map_op(t.bo_create(SZ_4K), kVa, 2 * SZ_4K));
              }},
     ErrnoRow{"Map_ExclusiveBoInAnotherVm", -EINVAL,
              [](PanthorIoctl& t) {
                  const u32 vm_a = t.vm_create();
                  const u32 vm_b = t.vm_create();
                  return t.bind_one(vm_b, DRM_PANTHOR_VM_BIND_ASYNC, map_op(t.bo_create(SZ_4K, 0, vm_a), kVa, SZ_4K));
              }},
     ErrnoRow{"Unmap_BoHandle", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op = unmap_op(kVa, SZ_4K);
                  op.bo_handle = t.bo_create(SZ_4K);
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, op);
              }},
     ErrnoRow{"UnknownVm", -EINVAL,
              [](PanthorIoctl& t) { return t.bind_one(9, DRM_PANTHOR_VM_BIND_ASYNC, unmap_op(kVa, SZ_4K)); }},
     ErrnoRow{"UnknownType", -EINVAL,
              [](PanthorIoctl& t) {
                  Op op{};
                  op.flags = 3u << 28;
                  return t.bind_one(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, op);
              }},
     ErrnoRow{"SyncOnly_Signal", 0,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"SyncOnly_NoSyncs", -EINVAL, [](PanthorIoctl& t) { return t.sync_only(t.vm_create(), {}); }},
     ErrnoRow{"SyncOnly_MapFlag", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only_signal_with([](Op& op) { op.flags |= DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC; });
              }},
     ErrnoRow{"SyncOnly_BoHandle", -EINVAL,
              [](PanthorIoctl& t) {
                  const u32 bo = t.bo_create(SZ_4K);
                  return t.sync_only_signal_with([&](Op& op) { op.bo_handle = bo; });
              }},
     ErrnoRow{"SyncOnly_BoOffset", -EINVAL,
              [](PanthorIoctl& t) { return t.sync_only_signal_with([](Op& op) { op.bo_offset = SZ_4K; }); }},
     ErrnoRow{"SyncOnly_Va", -EINVAL,
              [](PanthorIoctl& t) { return t.sync_only_signal_with([](Op& op) { op.va = kVa; }); }},
     ErrnoRow{"SyncOnly_Size", -EINVAL,
              [](PanthorIoctl& t) { return t.sync_only_signal_with([](Op& op) { op.size = SZ_4K; }); }},
     ErrnoRow{"EmptyOpsArray", 0,
              [](PanthorIoctl& t) { return t.bind(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, {}); }});

// ---- drm_panthor_obj_array (VM_BIND's ops; the sync-op arrays are below) ----
ROWS(ObjArray,
     ErrnoRow{"CountZeroIsEmpty_Sync", 0,
              [](PanthorIoctl& t) {
                  // count 0: the array pointer and stride are not looked at.
                  return t.bind_raw(t.vm_create(), 0, {0, 0, kBadUserPtr});
              }},
     ErrnoRow{"CountZeroIsEmpty_Async", 0,
              [](PanthorIoctl& t) {
                  return t.bind_raw(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, {0, 0, kBadUserPtr});
              }},
     ErrnoRow{"StrideBelowMinimum", -EINVAL,
              [](PanthorIoctl& t) {
                  std::vector<Op> ops = {map_op(t.bo_create(SZ_4K), kVa, SZ_4K)};
                  UserRange r(ops.data(), sizeof(Op));
                  return t.bind_raw(t.vm_create(), 0, obj_array(sizeof(Op) - 8, 1, ops.data()));
              }},
     ErrnoRow{"StrideZero", -EINVAL,
              [](PanthorIoctl& t) {
                  std::vector<Op> ops = {map_op(t.bo_create(SZ_4K), kVa, SZ_4K)};
                  UserRange r(ops.data(), sizeof(Op));
                  return t.bind_raw(t.vm_create(), 0, obj_array(0, 1, ops.data()));
              }},
     ErrnoRow{"LongerStrideZeroTail", 0,
              [](PanthorIoctl& t) {
                  constexpr u32 stride = sizeof(Op) + 16;
                  std::vector<u8> buf(2 * stride, 0);
                  const u32 bo = t.bo_create(2 * SZ_4K);
                  const Op op0 = map_op(bo, kVa, SZ_4K);
                  const Op op1 = map_op(bo, kVa + SZ_4K, SZ_4K, SZ_4K);
                  std::memcpy(&buf[0], &op0, sizeof(Op));
                  std::memcpy(&buf[stride], &op1, sizeof(Op));
                  UserRange r(buf.data(), buf.size());
                  return t.bind_raw(t.vm_create(), 0, obj_array(stride, 2, buf.data()));
              }},
     ErrnoRow{"LongerStrideNonZeroTail", -E2BIG,
              [](PanthorIoctl& t) {
                  constexpr u32 stride = sizeof(Op) + 16;
                  std::vector<u8> buf(2 * stride, 0);
                  const u32 bo = t.bo_create(2 * SZ_4K);
                  const Op op0 = map_op(bo, kVa, SZ_4K);
                  const Op op1 = map_op(bo, kVa + SZ_4K, SZ_4K, SZ_4K);
                  std::memcpy(&buf[0], &op0, sizeof(Op));
                  std::memcpy(&buf[stride], &op1, sizeof(Op));
                  buf[2 * stride - 1] = 1;  // the last byte of the second element's tail
                  UserRange r(buf.data(), buf.size());
                  return t.bind_raw(t.vm_create(), 0, obj_array(stride, 2, buf.data()));
              }},
     ErrnoRow{"LongerStrideTailPastUserMemory", -EFAULT,
              [](PanthorIoctl& t) {
                  constexpr u32 stride = sizeof(Op) + 16;
                  std::vector<u8> buf(stride, 0);
                  const Op op0 = map_op(t.bo_create(SZ_4K), kVa, SZ_4K);
                  std::memcpy(&buf[0], &op0, sizeof(Op));
                  UserRange r(buf.data(), sizeof(Op));
                  return t.bind_raw(t.vm_create(), 0, obj_array(stride, 1, buf.data()));
              }},
     ErrnoRow{"BadArrayPointer", -EFAULT,
              [](PanthorIoctl& t) {
                  return t.bind_raw(t.vm_create(), 0, {sizeof(Op), 1, kBadUserPtr});
              }},
     ErrnoRow{"ArrayPastUserMemory", -EFAULT,
              [](PanthorIoctl& t) {
                  std::vector<Op> ops = {map_op(t.bo_create(SZ_4K), kVa, SZ_4K), unmap_op(kVa, SZ_4K)};
                  UserRange r(ops.data(), sizeof(Op));  // only the first element
                  return t.bind_raw(t.vm_create(), 0, obj_array(ops));
              }},
     ErrnoRow{"BadArrayPointer_Async", -EFAULT, [](PanthorIoctl& t) {
                  return t.bind_raw(t.vm_create(), DRM_PANTHOR_VM_BIND_ASYNC, {sizeof(Op), 1, kBadUserPtr});
              }});

// ---- drm_panthor_sync_op (on an asynchronous SYNC_ONLY op) ----
ROWS(SyncOp,
     ErrnoRow{"SignalBinary", 0,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"SignalTimelinePoint", 0,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_SIGNAL | SYNC_TIMELINE, t.syncobj_create(), 5}});
              }},
     ErrnoRow{"WaitSignalledBinary", 0,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_WAIT | SYNC_BINARY, t.syncobj_create(true), 0},
                                                     {SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"UnknownFlagBit8", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_SIGNAL | SYNC_BINARY | (1u << 8), t.syncobj_create(), 0}});
              }},
     ErrnoRow{"UnknownFlagBit30_Wait", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_WAIT | SYNC_BINARY | (1u << 30), t.syncobj_create(true), 0},
                                                     {SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"HandleType2", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_SIGNAL | 2u, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"HandleType255_Wait", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_WAIT | 0xffu, t.syncobj_create(true), 0},
                                                     {SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"BinaryWithTimelineValue", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 1}});
              }},
     ErrnoRow{"BinaryWaitWithTimelineValue", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_WAIT | SYNC_BINARY, t.syncobj_create(true), 1},
                                                     {SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"SignalUnknownSyncobj", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_SIGNAL | SYNC_BINARY, kBadHandle, 0}});
              }},
     ErrnoRow{"WaitUnknownSyncobj", -ENOENT,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_WAIT | SYNC_BINARY, kBadHandle, 0},
                                                     {SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"WaitSyncobjWithoutFence", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.sync_only(t.vm_create(), {{SYNC_WAIT | SYNC_BINARY, t.syncobj_create(), 0},
                                                     {SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}});
              }},
     ErrnoRow{"StrideBelowMinimum", -EINVAL,
              [](PanthorIoctl& t) {
                  SyncOp s{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0};
                  UserRange r(s);
                  return t.sync_only_raw(t.vm_create(), obj_array(sizeof(SyncOp) - 8, 1, &s));
              }},
     ErrnoRow{"LongerStrideZeroTail", 0,
              [](PanthorIoctl& t) {
                  struct {
                      SyncOp op;
                      u64 tail;
                  } s{{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}, 0};
                  UserRange r(s);
                  return t.sync_only_raw(t.vm_create(), obj_array(sizeof(s), 1, &s));
              }},
     ErrnoRow{"LongerStrideNonZeroTail", -E2BIG,
              [](PanthorIoctl& t) {
                  struct {
                      SyncOp op;
                      u64 tail;
                  } s{{SYNC_SIGNAL | SYNC_BINARY, t.syncobj_create(), 0}, 1};
                  UserRange r(s);
                  return t.sync_only_raw(t.vm_create(), obj_array(sizeof(s), 1, &s));
              }},
     ErrnoRow{"BadArrayPointer", -EFAULT, [](PanthorIoctl& t) {
                  return t.sync_only_raw(t.vm_create(), {sizeof(SyncOp), 1, kBadUserPtr});
              }});

// ---- BO_CREATE / BO_MMAP_OFFSET / BO_SET_LABEL / SET_USER_MMIO_OFFSET ----
ROWS(BoCreate, ErrnoRow{"Valid", 0, [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K); }},
     ErrnoRow{"NoMmap", 0, [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, DRM_PANTHOR_BO_NO_MMAP); }},
     ErrnoRow{"SizeZero", -EINVAL, [](PanthorIoctl& t) { return t.bo_create_ret(0); }},
     ErrnoRow{"PadNonZero", -EINVAL, [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, 0, 0, 1); }},
     ErrnoRow{"WbMmap", 0, [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, DRM_PANTHOR_BO_WB_MMAP); }},
     ErrnoRow{"NoMmapAndWbMmap", -EINVAL,
              [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, DRM_PANTHOR_BO_NO_MMAP | DRM_PANTHOR_BO_WB_MMAP); }},
     ErrnoRow{
         "NoMmapAndWbMmapBeforeUnknownVm", -EINVAL,
         [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, DRM_PANTHOR_BO_NO_MMAP | DRM_PANTHOR_BO_WB_MMAP, 7); }},
     ErrnoRow{"UnknownFlagBit2", -EINVAL, [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, 1u << 2); }},
     ErrnoRow{"UnknownFlagBit31", -EINVAL, [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, 1u << 31); }},
     ErrnoRow{"ExclusiveVm", 0, [](PanthorIoctl& t) { return t.bo_create_ret(SZ_4K, 0, t.vm_create()); }},
     ErrnoRow{"UnknownExclusiveVm", -EINVAL,
              [](PanthorIoctl& t) {
                  t.vm_create();
                  return t.bo_create_ret(SZ_4K, 0, 5);
              }},
     ErrnoRow{"DestroyedExclusiveVm", -EINVAL, [](PanthorIoctl& t) {
                  const u32 vm = t.vm_create();
                  t.vm_destroy(vm);
                  return t.bo_create_ret(SZ_4K, 0, vm);
              }});

ROWS(BoMmapOffset, ErrnoRow{"Valid", 0, [](PanthorIoctl& t) { return t.bo_mmap_offset(t.bo_create(SZ_4K)); }},
     ErrnoRow{"PadNonZero", -EINVAL, [](PanthorIoctl& t) { return t.bo_mmap_offset(t.bo_create(SZ_4K), nullptr, 1); }},
     ErrnoRow{"UnknownHandle", -ENOENT,
              [](PanthorIoctl& t) {
                  t.bo_create(SZ_4K);
                  return t.bo_mmap_offset(kBadHandle);
              }},
     ErrnoRow{"HandleZero", -ENOENT, [](PanthorIoctl& t) { return t.bo_mmap_offset(0); }},
     ErrnoRow{"NoMmapBo", -EPERM,
              [](PanthorIoctl& t) { return t.bo_mmap_offset(t.bo_create(SZ_4K, DRM_PANTHOR_BO_NO_MMAP)); }});

ROWS(BoSetLabel,
     ErrnoRow{"Valid", 0,
              [](PanthorIoctl& t) {
                  static const char label[] = "vertex buffer";
                  UserRange r(label, sizeof(label));
                  return t.bo_set_label(t.bo_create(SZ_4K), user_ptr(label));
              }},
     ErrnoRow{"PadNonZero", -EINVAL,
              [](PanthorIoctl& t) {
                  static const char label[] = "x";
                  UserRange r(label, sizeof(label));
                  return t.bo_set_label(t.bo_create(SZ_4K), user_ptr(label), 1);
              }},
     ErrnoRow{"UnknownHandle", -ENOENT,
              [](PanthorIoctl& t) {
                  static const char label[] = "x";
                  UserRange r(label, sizeof(label));
                  return t.bo_set_label(kBadHandle, user_ptr(label));
              }},
     ErrnoRow{"MaxLength4096WithNul", 0,
              [](PanthorIoctl& t) {
                  std::vector<char> s(PANTHOR_BO_LABEL_MAXLEN, 'a');
                  s.back() = '\0';
                  UserRange r(s.data(), s.size());
                  return t.bo_set_label(t.bo_create(SZ_4K), user_ptr(s.data()));
              }},
     ErrnoRow{"TooLong4097WithNul", -E2BIG,
              [](PanthorIoctl& t) {
                  std::vector<char> s(PANTHOR_BO_LABEL_MAXLEN + 1, 'a');
                  s.back() = '\0';
                  UserRange r(s.data(), s.size());
                  return t.bo_set_label(t.bo_create(SZ_4K), user_ptr(s.data()));
              }},
     ErrnoRow{"BadPointer", -EFAULT, [](PanthorIoctl& t) { return t.bo_set_label(t.bo_create(SZ_4K), kBadUserPtr); }},
     ErrnoRow{"UnterminatedAtEndOfUserMemory", -EFAULT,
              [](PanthorIoctl& t) {
                  static const char label[4] = {'a', 'b', 'c', 'd'};
                  UserRange r(label, sizeof(label));
                  return t.bo_set_label(t.bo_create(SZ_4K), user_ptr(label));
              }},
     ErrnoRow{"NullClears", 0, [](PanthorIoctl& t) { return t.bo_set_label(t.bo_create(SZ_4K), 0); }});

using BoSyncOp = drm_panthor_bo_sync_op;
constexpr u32 FLUSH = DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH;
constexpr u32 FLUSH_INV = DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE;

ROWS(BoSync,
     ErrnoRow{"Flush", 0,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(), FLUSH, 0, SZ_4K}});
              }},
     ErrnoRow{"FlushAndInvalidate", 0,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(), FLUSH_INV, 64, 64}});
              }},
     ErrnoRow{"WholeBoEndsAtBoSize", 0,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(2 * SZ_4K), FLUSH, SZ_4K, SZ_4K}});
              }},
     ErrnoRow{"CountZeroStrideNotChecked", 0,
              [](PanthorIoctl& t) {
                  return t.bo_sync_raw({0, 0, kBadUserPtr});
              }},
     ErrnoRow{"StrideBelowOp", -EINVAL,
              [](PanthorIoctl& t) {
                  static BoSyncOp op{};
                  op = {t.wb_bo(), FLUSH, 0, 64};
                  UserRange r(&op, sizeof(op));
                  return t.bo_sync_raw(obj_array(16, 1, &op));
              }},
     ErrnoRow{"StrideLongerZeroTail", 0,
              [](PanthorIoctl& t) {
                  static u64 raw[4];
                  const BoSyncOp op{t.wb_bo(), FLUSH, 0, 64};
                  std::memcpy(raw, &op, sizeof(op));
                  raw[3] = 0;
                  UserRange r(raw, sizeof(raw));
                  return t.bo_sync_raw(obj_array(32, 1, raw));
              }},
     ErrnoRow{"StrideLongerNonZeroTail", -E2BIG,
              [](PanthorIoctl& t) {
                  static u64 raw[4];
                  const BoSyncOp op{t.wb_bo(), FLUSH, 0, 64};
                  std::memcpy(raw, &op, sizeof(op));
                  raw[3] = 1;
                  UserRange r(raw, sizeof(raw));
                  return t.bo_sync_raw(obj_array(32, 1, raw));
              }},
     ErrnoRow{"BadArrayPointer", -EFAULT,
              [](PanthorIoctl& t) {
                  return t.bo_sync_raw({sizeof(BoSyncOp), 1, kBadUserPtr});
              }},
     ErrnoRow{"UnknownHandle", -ENOENT,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{kBadHandle, FLUSH, 0, 64}});
              }},
     ErrnoRow{"SecondOpUnknownHandle", -ENOENT,
              [](PanthorIoctl& t) {
                  const u32 bo = t.wb_bo();
                  return t.bo_sync({{bo, FLUSH, 0, 64}, {kBadHandle, FLUSH, 0, 64}});
              }},
     ErrnoRow{"PastTheEnd", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(), FLUSH, SZ_4K, 1}});
              }},
     ErrnoRow{"SizePastTheEnd", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(), FLUSH, 0, SZ_4K + 1}});
              }},
     ErrnoRow{"OffsetPlusSizeOverflows", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(), FLUSH, ~u64{0}, 2}});
              }},
     ErrnoRow{"UnknownType", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(), 2, 0, 64}});
              }},
     ErrnoRow{"UnknownTypeOnWcBo", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.bo_create(SZ_4K), 2, 0, 64}});
              }},
     ErrnoRow{"PastTheEndOnWcBo", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.bo_create(SZ_4K), FLUSH, 0, 2 * SZ_4K}});
              }},
     ErrnoRow{"WcBoIsANoOp", 0,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.bo_create(SZ_4K), FLUSH_INV, 0, 64}});
              }},
     ErrnoRow{"NoMmapBo", 0,
              [](PanthorIoctl& t) {
                  return t.bo_sync({{t.bo_create(SZ_4K, DRM_PANTHOR_BO_NO_MMAP), FLUSH, 0, 64}});
              }},
     ErrnoRow{"SizeZero", 0, [](PanthorIoctl& t) {
                  return t.bo_sync({{t.wb_bo(), FLUSH, SZ_4K, 0}});
              }});

ROWS(BoQueryInfo, ErrnoRow{"Valid", 0, [](PanthorIoctl& t) { return t.bo_query_info(t.bo_create(SZ_4K)); }},
     ErrnoRow{"PadNotChecked", 0, [](PanthorIoctl& t) { return t.bo_query_info(t.bo_create(SZ_4K), nullptr, 7); }},
     ErrnoRow{"UnknownHandle", -ENOENT,
              [](PanthorIoctl& t) {
                  t.bo_create(SZ_4K);
                  return t.bo_query_info(kBadHandle);
              }},
     ErrnoRow{"HandleZero", -ENOENT, [](PanthorIoctl& t) { return t.bo_query_info(0); }});

ROWS(SetUserMmioOffset,
     ErrnoRow{"Offset32Bit", 0, [](PanthorIoctl& t) { return t.set_user_mmio_offset(u64{1} << 43); }},
     ErrnoRow{"Offset64Bit", 0, [](PanthorIoctl& t) { return t.set_user_mmio_offset(u64{1} << 56); }},
     ErrnoRow{"Zero", -EINVAL, [](PanthorIoctl& t) { return t.set_user_mmio_offset(0); }},
     ErrnoRow{"Bit44", -EINVAL, [](PanthorIoctl& t) { return t.set_user_mmio_offset(u64{1} << 44); }},
     ErrnoRow{"Offset32BitPlusPage", -EINVAL,
              [](PanthorIoctl& t) { return t.set_user_mmio_offset((u64{1} << 43) + SZ_4K); }},
     ErrnoRow{"BothBits", -EINVAL,
              [](PanthorIoctl& t) { return t.set_user_mmio_offset((u64{1} << 43) | (u64{1} << 56)); }});

// ---- mmap ----
ROWS(Mmap,
     ErrnoRow{"Bo_SharedReadWrite", 0,
              [](PanthorIoctl& t) {
                  return t.mmap(t.bo_offset_of(t.bo_create(SZ_4K)), SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED);
              }},
     ErrnoRow{"Bo_SharedReadOnly", 0,
              [](PanthorIoctl& t) { return t.mmap(t.bo_offset_of(t.bo_create(SZ_4K)), SZ_4K, PROT_READ, MAP_SHARED); }},
     ErrnoRow{"Bo_PrivateReadOnly", -EINVAL,
              [](PanthorIoctl& t) {
                  // Private mappings of shmem GEM objects are refused even read-only: the file
                  // is open for writing, so the mapping could become a writable COW one.
                  return t.mmap(t.bo_offset_of(t.bo_create(SZ_4K)), SZ_4K, PROT_READ, MAP_PRIVATE);
              }},
     ErrnoRow{"Bo_PrivateReadWrite", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.mmap(t.bo_offset_of(t.bo_create(SZ_4K)), SZ_4K, PROT_READ | PROT_WRITE, MAP_PRIVATE);
              }},
     ErrnoRow{"Bo_LongerThanBo", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.mmap(t.bo_offset_of(t.bo_create(SZ_4K)), 2 * SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED);
              }},
     ErrnoRow{"Bo_SecondPageOnly", 0,
              [](PanthorIoctl& t) {
                  return t.mmap(t.bo_offset_of(t.bo_create(2 * SZ_4K)) + SZ_4K, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"MadeUpOffset", -EINVAL,
              [](PanthorIoctl& t) {
                  t.bo_offset_of(t.bo_create(SZ_4K));
                  return t.mmap(u64{1} << 40, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{
         "UnalignedOffset", -EINVAL,
         [](PanthorIoctl& t) { return t.mmap(t.bo_offset_of(t.bo_create(SZ_4K)) + 16, SZ_4K, PROT_READ, MAP_SHARED); }},
     ErrnoRow{"Unplugged", -ENODEV,
              [](PanthorIoctl& t) {
                  const u64 off = t.bo_offset_of(t.bo_create(SZ_4K));
                  panthor_device_unplug(t.ptdev);
                  return t.mmap(off, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{
         "FlushId64_SharedReadOnePage", 0,
         [](PanthorIoctl& t) { return t.mmap(DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET, SZ_4K, PROT_READ, MAP_SHARED); }},
     ErrnoRow{
         "FlushId64_Private", -EINVAL,
         [](PanthorIoctl& t) { return t.mmap(DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET, SZ_4K, PROT_READ, MAP_PRIVATE); }},
     ErrnoRow{"FlushId64_TwoPages", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.mmap(DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET, 2 * SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"FlushId64_Write", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.mmap(DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET, SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED);
              }},
     ErrnoRow{"FlushId64_Exec", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.mmap(DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET, SZ_4K, PROT_READ | PROT_EXEC, MAP_SHARED);
              }},
     ErrnoRow{"FlushId64_NextPage", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.mmap(DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET + SZ_4K, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"FlushId64_FarAboveBase", -EINVAL,
              [](PanthorIoctl& t) {
                  return t.mmap(DRM_PANTHOR_USER_MMIO_OFFSET_64BIT + (u64{1} << 30), SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"Offset32_BeforeSetIsGemSpace", -EINVAL,
              [](PanthorIoctl& t) {
                  // Below the 64-bit base, 1 << 43 is a GEM offset nobody owns.
                  return t.mmap(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"FlushId32_AfterSet", 0,
              [](PanthorIoctl& t) {
                  EXPECT_EQ(t.set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT), 0);
                  return t.mmap(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"FlushId32_Old64BitOffset", -EINVAL,
              [](PanthorIoctl& t) {
                  EXPECT_EQ(t.set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT), 0);
                  return t.mmap(DRM_PANTHOR_USER_MMIO_OFFSET_64BIT, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"FlushId32_NextPage", -EINVAL,
              [](PanthorIoctl& t) {
                  EXPECT_EQ(t.set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT), 0);
                  return t.mmap(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT + SZ_4K, SZ_4K, PROT_READ, MAP_SHARED);
              }},
     ErrnoRow{"FlushId32_Write", -EINVAL,
              [](PanthorIoctl& t) {
                  EXPECT_EQ(t.set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT), 0);
                  return t.mmap(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, SZ_4K, PROT_WRITE, MAP_SHARED);
              }},
     ErrnoRow{"FlushId32_Private", -EINVAL,
              [](PanthorIoctl& t) {
                  EXPECT_EQ(t.set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT), 0);
                  return t.mmap(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, SZ_4K, PROT_READ, MAP_PRIVATE);
              }},
     ErrnoRow{"FlushId32_BoStillMappable", 0, [](PanthorIoctl& t) {
                  EXPECT_EQ(t.set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT), 0);
                  return t.mmap(t.bo_offset_of(t.bo_create(SZ_4K)), SZ_4K, PROT_READ | PROT_WRITE, MAP_SHARED);
              }});

#undef ROWS

// ---------------------------------------------------------------------------------------------
// What the successful calls give back.

TEST_F(PanthorIoctl, DevQuerySizeQueryGivesKernelSizes) {
    const std::pair<u32, u32> expected[] = {
        {DRM_PANTHOR_DEV_QUERY_GPU_INFO, sizeof(drm_panthor_gpu_info)},
        {DRM_PANTHOR_DEV_QUERY_CSIF_INFO, sizeof(drm_panthor_csif_info)},
        {DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(drm_panthor_timestamp_info)},
        {DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, sizeof(drm_panthor_group_priorities_info)},
        {DRM_PANTHOR_DEV_QUERY_MMU_INFO, sizeof(drm_panthor_mmu_info)},
    };
    for (auto [type, size] : expected) {
        u32 got = 0;
        EXPECT_EQ(dev_query(type, 1234, 0, &got), 0) << type;
        EXPECT_EQ(got, size) << type;
    }
}

TEST_F(PanthorIoctl, DevQueryCopiesUserSizeAndZeroFillsBeyondKernelStruct) {
    constexpr size_t k = sizeof(drm_panthor_gpu_info);
    std::vector<u8> buf(k + 16, 0xAA);
    UserRange r(buf.data(), buf.size());

    // An older userspace (the minimum size): its bytes only, nothing past them.
    ASSERT_EQ(dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, 96, user_ptr(buf.data())), 0);
    EXPECT_EQ(std::memcmp(buf.data(), &ptdev->gpu_info, 96), 0);
    for (size_t i = 96; i < buf.size(); i++)
        ASSERT_EQ(buf[i], 0xAA) << "byte " << i << " written past the user's size";

    // A newer userspace: the kernel struct, then zeroes for the fields it does not know.
    ASSERT_EQ(dev_query(DRM_PANTHOR_DEV_QUERY_GPU_INFO, static_cast<u32>(buf.size()), user_ptr(buf.data())), 0);
    EXPECT_EQ(std::memcmp(buf.data(), &ptdev->gpu_info, k), 0);
    for (size_t i = k; i < buf.size(); i++)
        ASSERT_EQ(buf[i], 0) << "byte " << i << " not zero-filled";
    EXPECT_NE(reinterpret_cast<drm_panthor_gpu_info*>(buf.data())->gpu_id, 0u);
}

// The fake mmap offsets come from the kernel's offset space (DRM_FILE_PAGE_OFFSET_START, 4 GiB
// on 64-bit): a valid offset is never 0, which clients take for "no offset", and each BO has its
// own, stable across calls.
TEST_F(PanthorIoctl, MmapOffsetsStartAtTheKernelsFakeOffsetBase) {
    const u32 a = bo_create(SZ_4K), b = bo_create(SZ_4K);
    const u64 off_a = bo_offset_of(a), off_b = bo_offset_of(b);
    EXPECT_EQ(off_a, drm::DRM_FILE_PAGE_OFFSET_START << kshim::PAGE_SHIFT);
    EXPECT_EQ(off_a, u64{1} << 32);
    EXPECT_GE(off_b, off_a + SZ_4K);
    EXPECT_EQ(off_b % SZ_4K, 0u);
    EXPECT_EQ(bo_offset_of(a), off_a);
}

TEST_F(PanthorIoctl, VmCreateIdsStartAtOneAndUserVaRangeIsKernelVaStart) {
    const u64 full = full_va_range();
    drm_panthor_vm_create a{};
    a.user_va_range = full - SZ_256M;
    ASSERT_EQ(vm_create_args(&a), 0);
    EXPECT_EQ(a.id, 1u);
    // The kernel keeps exactly the minimum 256 MiB at the top.
    EXPECT_EQ(a.user_va_range, full - SZ_256M);

    drm_panthor_vm_create b{};
    b.user_va_range = u64{1} << 32;
    ASSERT_EQ(vm_create_args(&b), 0);
    EXPECT_EQ(b.id, 2u);
    // The kernel range is rounded down to a power of two, so the user gets more than asked.
    EXPECT_EQ(b.user_va_range, full / 2);

    drm_panthor_vm_create c{};
    ASSERT_EQ(vm_create_args(&c), 0);
    EXPECT_EQ(c.id, 3u);
    EXPECT_GT(c.user_va_range, 0u);
    EXPECT_LE(c.user_va_range, full - SZ_256M);
    EXPECT_TRUE(std::has_single_bit(full - c.user_va_range)) << std::hex << c.user_va_range;
}

TEST_F(PanthorIoctl, VmBindFailingOpRewritesCountAndEarlierOpsStay) {
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(SZ_4K);
    const u64 va0 = kVa, va2 = kVa + 0x10000;
    std::vector<Op> ops = {map_op(bo, va0, SZ_4K), map_op(kBadHandle, kVa + 0x8000, SZ_4K), map_op(bo, va2, SZ_4K)};
    u32 count = 0;
    EXPECT_EQ(bind(vm_id, 0, ops, &count), -EINVAL);
    EXPECT_EQ(count, 1u) << "ops.count must name the failing op";

    panthor_vm* vm = activate(vm_id);
    ASSERT_NE(vm, nullptr);
    // The driver's view...
    u64 off = ~u64{0};
    panthor_gem_object* got = panthor_vm_get_bo_for_va(vm, va0, &off);
    ASSERT_FALSE(kshim::IS_ERR(got)) << "op 0 did not take effect";
    EXPECT_EQ(off, 0u);
    drm::drm_gem_object_put(&got->base.base);
    EXPECT_TRUE(kshim::IS_ERR(panthor_vm_get_bo_for_va(vm, va2, &off))) << "op 2 ran after op 1 failed";
    // ...and the page tables the GPU walks.
    EXPECT_TRUE(gpu_maps(vm, va0));
    EXPECT_FALSE(gpu_maps(vm, va2));
    deactivate(vm);

    // A success leaves ops.count alone.
    std::vector<Op> ok = {unmap_op(va0, SZ_4K), map_op(bo, va2, SZ_4K)};
    EXPECT_EQ(bind(vm_id, 0, ok, &count), 0);
    EXPECT_EQ(count, 2u);
}

TEST_F(PanthorIoctl, BoCreateRoundsSizeUpToPages) {
    drm_panthor_bo_create out{};
    ASSERT_EQ(bo_create_ret(1, 0, 0, 0, &out), 0);
    EXPECT_EQ(out.size, SZ_4K);
    EXPECT_NE(out.handle, 0u);
    const u32 first = out.handle;
    ASSERT_EQ(bo_create_ret(SZ_4K + 1, 0, 0, 0, &out), 0);
    EXPECT_EQ(out.size, 2 * SZ_4K);
    EXPECT_NE(out.handle, first);
    ASSERT_EQ(bo_create_ret(3 * SZ_4K, 0, 0, 0, &out), 0);
    EXPECT_EQ(out.size, 3 * SZ_4K);
    // The rounded size is the BO's: mapping all of it works, one page more does not.
    const u32 vm = vm_create();
    EXPECT_EQ(vm_map(vm, first, kVa, SZ_4K), 0);
    EXPECT_EQ(vm_map(vm, first, kVa + SZ_4K, 2 * SZ_4K), -EINVAL);
}

TEST_F(PanthorIoctl, BoSetLabelSetsReplacesAndClears) {
    const u32 bo = bo_create(SZ_4K);
    EXPECT_EQ(bo_label(bo), "<none>");

    const char first[] = "first";
    UserRange r1(first, sizeof(first));
    ASSERT_EQ(bo_set_label(bo, user_ptr(first)), 0);
    EXPECT_EQ(bo_label(bo), "first");

    std::vector<char> longest(PANTHOR_BO_LABEL_MAXLEN, 'x');
    longest.back() = '\0';
    UserRange r2(longest.data(), longest.size());
    ASSERT_EQ(bo_set_label(bo, user_ptr(longest.data())), 0);
    EXPECT_EQ(bo_label(bo), std::string(PANTHOR_BO_LABEL_MAXLEN - 1, 'x'));

    // A refused label leaves the old one.
    std::vector<char> too_long(PANTHOR_BO_LABEL_MAXLEN + 1, 'y');
    too_long.back() = '\0';
    UserRange r3(too_long.data(), too_long.size());
    ASSERT_EQ(bo_set_label(bo, user_ptr(too_long.data())), -E2BIG);
    EXPECT_EQ(bo_label(bo), std::string(PANTHOR_BO_LABEL_MAXLEN - 1, 'x'));

    // An empty string is a label; a null pointer clears it.
    const char empty[] = "";
    UserRange r4(empty, sizeof(empty));
    ASSERT_EQ(bo_set_label(bo, user_ptr(empty)), 0);
    EXPECT_EQ(bo_label(bo), "");
    ASSERT_EQ(bo_set_label(bo, 0), 0);
    EXPECT_EQ(bo_label(bo), "<none>");
}

TEST_F(PanthorIoctl, ShorterCallerStructIsZeroExtendedAndTruncated) {
    // A VM_CREATE caller that knows only flags and id: user_va_range reads as 0 (the default)
    // and nothing is written past its 8 bytes.
    struct {
        u32 flags = 0;
        u32 id = 0;
        u64 beyond = 0x5A5A5A5A5A5A5A5Aull;
    } arg;
    UserRange r(arg);
    ASSERT_EQ(drm::ioctl(file, with_size(DRM_IOCTL_PANTHOR_VM_CREATE, 8), &arg), 0);
    EXPECT_EQ(arg.id, 1u);
    EXPECT_EQ(arg.beyond, 0x5A5A5A5A5A5A5A5Aull);

    // BO_CREATE with only its size: flags/exclusive/pad are zero, the rounded size comes back.
    struct {
        u64 size = 100;
        u32 beyond[4] = {7, 7, 7, 7};
    } bo;
    UserRange r2(bo);
    ASSERT_EQ(drm::ioctl(file, with_size(DRM_IOCTL_PANTHOR_BO_CREATE, 8), &bo), 0);
    EXPECT_EQ(bo.size, SZ_4K);
    EXPECT_EQ(bo.beyond[2], 7u) << "the handle was written past the caller's struct";
}

TEST_F(PanthorIoctl, LongerCallerStructTailIsIgnoredAndKept) {
    struct {
        drm_panthor_vm_create args{};
        u64 tail[2] = {0x1111, 0x2222};
    } arg;
    UserRange r(arg);
    ASSERT_EQ(drm::ioctl(file, with_size(DRM_IOCTL_PANTHOR_VM_CREATE, sizeof(arg)), &arg), 0);
    EXPECT_EQ(arg.args.id, 1u);
    EXPECT_NE(arg.args.user_va_range, 0u);
    EXPECT_EQ(arg.tail[0], 0x1111u);
    EXPECT_EQ(arg.tail[1], 0x2222u);

    // A bigger struct whose extra bytes are not user memory: the copy-in faults.
    drm_panthor_vm_create only{};
    UserRange r2(only);
    EXPECT_EQ(drm::ioctl(file, with_size(DRM_IOCTL_PANTHOR_VM_CREATE, sizeof(only) + 8), &only), -EFAULT);
}

TEST_F(PanthorIoctl, WriteOnlyEncodingGetsNothingBack) {
    // DRM_IOW: the kernel copies in but not out, so the caller never learns the id.
    drm_panthor_vm_create arg{};
    arg.id = 0xdead;
    UserRange r(arg);
    const unsigned cmd = DRM_IOCTL_PANTHOR_VM_CREATE & ~drm::uapi::IOC_OUT;
    ASSERT_EQ(drm::ioctl(file, cmd, &arg), 0);
    EXPECT_EQ(arg.id, 0xdeadu);
    // The VM exists all the same: the next one gets id 2.
    EXPECT_EQ(vm_create(), 2u);
}

// ---------------------------------------------------------------------------------------------
// mmap.

TEST_F(PanthorIoctl, BoCpuMappingIsWhatTheGpuReadsAndWrites) {
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(2 * SZ_4K);
    ASSERT_EQ(vm_map(vm_id, bo, kVa, 2 * SZ_4K), 0);
    // The second page alone, elsewhere: the BO offset is honoured.
    ASSERT_EQ(vm_map(vm_id, bo, kVa + 0x100000, SZ_4K, 0, SZ_4K), 0);
    auto* cpu = static_cast<u8*>(bo_cpu(bo, 2 * SZ_4K));
    ASSERT_NE(cpu, nullptr);

    for (size_t i = 0; i < 2 * SZ_4K; i++)
        cpu[i] = static_cast<u8>(i * 7 + 3);

    panthor_vm* vm = activate(vm_id);
    ASSERT_NE(vm, nullptr);
    const u32 as = static_cast<u32>(panthor_vm_as(vm));

    std::vector<u8> seen(2 * SZ_4K);
    ASSERT_TRUE(gpu().mmu().read(as, kVa, seen.data(), seen.size()).ok());
    EXPECT_EQ(std::memcmp(seen.data(), cpu, seen.size()), 0);
    std::vector<u8> page1(SZ_4K);
    ASSERT_TRUE(gpu().mmu().read(as, kVa + 0x100000, page1.data(), page1.size()).ok());
    EXPECT_EQ(std::memcmp(page1.data(), cpu + SZ_4K, SZ_4K), 0);

    // The other way: a GPU store is what the CPU mapping reads.
    const u64 magic = 0x0123456789abcdefull;
    ASSERT_TRUE(gpu().mmu().write(as, kVa + SZ_4K + 64, &magic, sizeof(magic)).ok());
    u64 cpu_seen;
    std::memcpy(&cpu_seen, cpu + SZ_4K + 64, sizeof(cpu_seen));
    EXPECT_EQ(cpu_seen, magic);
    deactivate(vm);

    // A read-only CPU mapping of the same BO at the second page sees the same bytes.
    drm::VmArea* ro = nullptr;
    ASSERT_EQ(mmap(bo_offset_of(bo) + SZ_4K, SZ_4K, PROT_READ, MAP_SHARED, &ro), 0);
    std::memcpy(&cpu_seen, static_cast<u8*>(ro->addr) + 64, sizeof(cpu_seen));
    EXPECT_EQ(cpu_seen, magic);
}

TEST_F(PanthorIoctl, FlushIdPageReadsLatestFlushIdWhileActiveAndOneWhileSuspended) {
    drm::VmArea* vma = nullptr;
    ASSERT_EQ(mmap(DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET, SZ_4K, PROT_READ, MAP_SHARED, &vma), 0);
    ASSERT_NE(vma, nullptr);
    // An I/O mapping that can never be made writable.
    EXPECT_EQ(vma->addr, nullptr);
    EXPECT_TRUE(vma->vm_flags & drm::VM_IO);
    EXPECT_FALSE(vma->vm_flags & (drm::VM_MAYWRITE | drm::VM_WRITE));

    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    // A full L2 flush (what every bind on a live AS ends with) moves the live value away from
    // the suspended one.
    ASSERT_EQ(panthor_gpu_flush_caches(ptdev, CACHE_CLEAN | CACHE_INV, CACHE_CLEAN | CACHE_INV, CACHE_INV), 0);
    const auto reg = gpu().peek32(CSF_GPU_LATEST_FLUSH_ID);
    ASSERT_TRUE(reg.has_value());
    EXPECT_NE(*reg, 1u);
    EXPECT_EQ(drm::vma_read32(vma, 0), *reg);
    kshim::pm_runtime_put_autosuspend(dev());

    ASSERT_TRUE(wait_autosuspend());
    EXPECT_EQ(drm::vma_read32(vma, 0), 1u);

    // Powered again: the register once more.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(drm::vma_read32(vma, 0), *gpu().peek32(CSF_GPU_LATEST_FLUSH_ID));
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(PanthorIoctl, FlushIdPageMovesWithSetUserMmioOffset) {
    ASSERT_EQ(set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT), 0);
    drm::VmArea* vma = nullptr;
    ASSERT_EQ(mmap(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, SZ_4K, PROT_READ, MAP_SHARED, &vma), 0);
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(drm::vma_read32(vma, 0), *gpu().peek32(CSF_GPU_LATEST_FLUSH_ID));
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
    EXPECT_EQ(drm::vma_read32(vma, 0), 1u);

    // And back: the 64-bit base works again, the 32-bit one is GEM space once more.
    ASSERT_EQ(set_user_mmio_offset(DRM_PANTHOR_USER_MMIO_OFFSET_64BIT), 0);
    EXPECT_EQ(mmap(DRM_PANTHOR_USER_MMIO_OFFSET_64BIT, SZ_4K, PROT_READ, MAP_SHARED), 0);
    EXPECT_EQ(mmap(DRM_PANTHOR_USER_MMIO_OFFSET_32BIT, SZ_4K, PROT_READ, MAP_SHARED), -EINVAL);
}

TEST_F(PanthorIoctl, NoMmapBoHasNoCpuMapping) {
    const u32 bo = bo_create(SZ_4K, DRM_PANTHOR_BO_NO_MMAP);
    u64 off = 0;
    EXPECT_EQ(bo_mmap_offset(bo, &off), -EPERM);
    // Still a GPU buffer.
    EXPECT_EQ(vm_map(vm_create(), bo, kVa, SZ_4K), 0);
    // No offset was handed out: the first offsets of the GEM space map nothing.
    EXPECT_EQ(mmap(u64{1} << 32, SZ_4K, PROT_READ, MAP_SHARED), -EINVAL);
}

// ---- BO_SYNC / BO_QUERY_INFO behaviour ----

TEST_F(PanthorIoctl, BoSyncCountsTheCacheMaintenanceOfWriteBackBos) {
    ASSERT_FALSE(ptdev->coherent) << "the RK3588 platform is not DMA-coherent: BOs are WC by default";
    const u32 wb = wb_bo(3 * SZ_4K);
    const u32 wc = bo_create(3 * SZ_4K);
    auto& cs = ptdev->cache_sync;
    kshim::trace::start(true);

    ASSERT_EQ(bo_sync({{wb, FLUSH, 100, 5000}}), 0);
    EXPECT_EQ(cs.for_device.load(), 1u) << "one segment, cleaned";
    EXPECT_EQ(cs.for_cpu.load(), 0u);
    EXPECT_EQ(cs.bytes.load(), 5000u);

    ASSERT_EQ(bo_sync({{wb, FLUSH_INV, 0, 3 * SZ_4K}}), 0);
    EXPECT_EQ(cs.for_device.load(), 2u);
    EXPECT_EQ(cs.for_cpu.load(), 1u) << "and invalidated";
    EXPECT_EQ(cs.bytes.load(), 5000u + 3 * SZ_4K);

    // Nothing to do: a write-combined BO, a zero size, no ops.
    ASSERT_EQ(bo_sync({{wc, FLUSH_INV, 0, SZ_4K}}), 0);
    ASSERT_EQ(bo_sync({{wb, FLUSH, 8, 0}}), 0);
    ASSERT_EQ(bo_sync({}), 0);
    EXPECT_EQ(cs.for_device.load(), 2u);
    EXPECT_EQ(cs.for_cpu.load(), 1u);

    // The first failing op stops the array; the ones before it are done.
    EXPECT_EQ(bo_sync({{wb, FLUSH, 0, 64}, {kBadHandle, FLUSH, 0, 64}, {wb, FLUSH, 0, 64}}), -ENOENT);
    EXPECT_EQ(cs.for_device.load(), 3u);

    const std::string json = kshim::trace::to_json();
    kshim::trace::stop();
    EXPECT_NE(json.find("dma_sync_single_for_device"), std::string::npos);
    EXPECT_NE(json.find("dma_sync_single_for_cpu"), std::string::npos);
}

TEST_F(PanthorIoctl, BoQueryInfoGivesTheCreateFlags) {
    for (const u32 flags : {0u, u32{DRM_PANTHOR_BO_NO_MMAP}, u32{DRM_PANTHOR_BO_WB_MMAP}}) {
        drm_panthor_bo_query_info info{};
        ASSERT_EQ(bo_query_info(bo_create(SZ_4K, flags), &info, 0xdead), 0);
        EXPECT_EQ(info.create_flags, flags);
        EXPECT_EQ(info.extra_flags, 0u) << "not imported";
        EXPECT_EQ(info.pad, 0u) << "written back as 0";
    }
}

TEST_F(PanthorIoctl, WbMmapChoosesACachedCpuMapping) {
    auto map_wc = [&](u32 handle) {
        drm::drm_gem_object* obj = file->gem.lookup(handle);
        const bool wc = to_panthor_bo(obj)->base.map_wc;
        drm::drm_gem_object_put(obj);
        return wc;
    };
    EXPECT_TRUE(map_wc(bo_create(SZ_4K))) << "non-coherent default: write-combined";
    EXPECT_FALSE(map_wc(wb_bo())) << "WB_MMAP: write-back";
    EXPECT_TRUE(map_wc(bo_create(SZ_4K, DRM_PANTHOR_BO_NO_MMAP)));
}

}  // namespace
}  // namespace panthor::testing
