// (no upstream counterpart) fuzz_panfrost_ioctl's other ops (fuzz/panfrost_ops.h): GET_PARAM, JM
// contexts, syncobjs, closing and reopening a file, virtual time, fault injection (the mock's
// JM faults, a requested reset, the shim's allocation failures) and raw ioctl numbers.
#include <cstring>

#include "drm/drm_ioctl.h"
#include "fuzz/panfrost_ops.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/pm_runtime.h"
#include "panfrost/panfrost_job.h"

namespace upanthor_fuzz {

using mock_hw::FaultKind;
using mock_hw::FaultSpec;
using mock_hw::FaultTrigger;
using panfrost::testing::pf_ioctl;

void PanfrostProgram::op_get_param(int f) {
    drm_panfrost_get_param args{};
    const uint8_t b = in_.u8();
    args.param = b < 240 ? b % 48 : in_.edge_u32();
    if (in_.u8() >= 240)
        args.pad = in_.edge_u32();
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_PANFROST_GET_PARAM, &args, sizeof(args));
    trace(f, "GET_PARAM", "param=" + std::to_string(args.param), ret);
}

void PanfrostProgram::op_jm_ctx_create(int f) {
    u32 handle = 0;
    const uint8_t b = in_.u8();
    const u32 prio = b < 240 ? b % 4 : in_.edge_u32();
    const int ret = panfrost::testing::pf_jm_ctx_create(files_[f].file, prio, &handle);
    if (ret == 0)
        files_[f].ctxs.push_back(handle);
    trace(f, "JM_CTX_CREATE", "prio=" + std::to_string(prio), ret);
}

void PanfrostProgram::op_jm_ctx_destroy(int f) {
    drm_panfrost_jm_ctx_destroy args{};
    args.handle = pick_handle(files_[f].ctxs);
    if (in_.u8() >= 248)
        args.pad = in_.edge_u32();
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_PANFROST_JM_CTX_DESTROY, &args, sizeof(args));
    trace(f, "JM_CTX_DESTROY", "handle=" + std::to_string(args.handle), ret);
}

void PanfrostProgram::op_syncobj_create(int f) {
    drm::uapi::drm_syncobj_create args{};
    args.flags = in_.u8() < 200 ? 0 : in_.pick<u32>({drm::uapi::DRM_SYNCOBJ_CREATE_SIGNALED, in_.edge_u32()});
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_SYNCOBJ_CREATE, &args, sizeof(args));
    if (ret == 0)
        files_[f].syncobjs.push_back(args.handle);
    trace(f, "SYNCOBJ_CREATE", "flags=" + std::to_string(args.flags), ret);
}

void PanfrostProgram::op_syncobj_destroy(int f) {
    const u32 h = pick_handle(files_[f].syncobjs);
    const int ret = panfrost::testing::pf_syncobj_destroy(files_[f].file, h);
    trace(f, "SYNCOBJ_DESTROY", "handle=" + std::to_string(h), ret);
}

void PanfrostProgram::op_syncobj_wait(int f) {
    u32 handles[2] = {pick_handle(files_[f].syncobjs), pick_handle(files_[f].syncobjs)};
    drm::uapi::drm_syncobj_wait args{};
    args.handles = drm::user_ptr(handles);
    args.count_handles = 1 + in_.below(2);
    args.flags = in_.pick<u32>({0, drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL,
                                drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, in_.edge_u32()});
    // Absolute: now, a little later, or past the 500 ms job timeout.
    args.timeout_nsec =
        kshim::ktime_get() + in_.pick<kshim::ktime_t>({0, kshim::NSEC_PER_MSEC, 700 * kshim::NSEC_PER_MSEC});
    drm::UserRange r(handles, sizeof(handles));
    const int ret = pf_ioctl(files_[f].file, drm::uapi::DRM_IOCTL_SYNCOBJ_WAIT, &args, sizeof(args));
    trace(f, "SYNCOBJ_WAIT", "count=" + std::to_string(args.count_handles), ret);
}

void PanfrostProgram::op_close_file(int f) {
    // Closing a file with jobs in flight hard-stops them; the next call on it reopens.
    const bool was_open = files_[f].file != nullptr;
    if (was_open)
        close_file(f);
    else
        open_file(f);
    trace(f, was_open ? "CLOSE" : "OPEN", "", 0);
}

void PanfrostProgram::op_advance(int f) {
    const kshim::ktime_t d = in_.pick<kshim::ktime_t>(
        {0, 10 * kshim::NSEC_PER_USEC, kshim::NSEC_PER_MSEC, 60 * kshim::NSEC_PER_MSEC, 600 * kshim::NSEC_PER_MSEC});
    w_.rt().advance(d);
    trace(f, "ADVANCE", std::to_string(d), 0);
}

void PanfrostProgram::op_fault(int f) {
    const uint32_t sel = in_.below(10);
    if (sel == 8) {
        // The n-th kernel allocation from now fails (the plan ends with the program).
        kshim::FaultPlan plan;
        plan.fail_nth = 1 + in_.below(32);
        kshim::fault_inject_arm(plan);
        alloc_armed_ = true;
        trace(f, "FAULT", "alloc fail_nth=" + std::to_string(plan.fail_nth), 0);
        return;
    }
    if (sel == 9) {
        // A reset, as the job IRQ requests one (only with the GPU awake, as there).
        const bool awake = !kshim::pm_runtime_suspended(w_.machine().dev());
        if (awake)
            panfrost::panfrost_device_schedule_reset(w_.pfdev());
        trace(f, "FAULT", awake ? "reset" : "reset skipped (suspended)", 0);
        return;
    }
    // One of the mock's JM faults, on the n-th event it counts, on any slot or one.
    FaultSpec s;
    switch (sel) {
    case 0: s.kind = FaultKind::JobHang; break;
    case 1:
        s.kind = FaultKind::JobFault;
        s.exception = in_.pick<u32>({0x40, 0x58, 0x50, 0x04, in_.u8()});
        break;
    case 2:
        s.kind = FaultKind::JobBusFault;
        s.fault_addr = in_.edge_u64();
        break;
    case 3: s.kind = FaultKind::JobIrqLost; break;
    case 4: s.kind = FaultKind::SoftStopIgnored; break;
    case 5:
        s.kind = FaultKind::MmuFaultAt;
        s.fault_addr = in_.edge_u64();
        break;
    case 6: s.kind = FaultKind::ResetNeverCompletes; break;
    default: s.kind = FaultKind::SlowPower; break;
    }
    s.trigger = FaultTrigger::nth_occurrence(1 + in_.below(4));
    s.js = in_.pick<int>({-1, 0, 1});
    w_.gpu().faults().add(s);
    trace(f, "FAULT", mock_hw::fault_kind_name(s.kind), 0);
}

void PanfrostProgram::op_raw_ioctl(int f) {
    // Any command number of the driver's range (DRM_COMMAND_BASE + 0..31), any direction and
    // size, on a zeroed argument the size covers (up to 64 bytes) or not.
    alignas(8) uint8_t arg[64] = {};
    in_.bytes(arg, in_.below(sizeof(arg) + 1));
    const u32 nr = 0x40 + in_.below(32);
    const u32 size = in_.pick<u32>({8, 16, 24, 32, 48, 64, in_.below(0x4000)});
    const u32 dir = in_.below(4);
    const unsigned cmd = (dir << 30) | (size << 16) | ('d' << 8) | nr;
    drm::UserRange r(arg, sizeof(arg));
    const int ret = drm::ioctl(files_[f].file, cmd, arg);
    trace(f, "RAW_IOCTL", "nr=" + std::to_string(nr) + " size=" + std::to_string(size), ret);
}

}  // namespace upanthor_fuzz
