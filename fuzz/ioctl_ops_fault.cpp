// (no upstream counterpart) fuzz_ioctl's fault-injection ops (fuzz/ioctl_ops.h, family Fault):
// kernel allocation failures for a window of calls (kshim's failslab/fail_page_alloc), and one
// fault of the mock GPU (its fault plan). Both say so to the program (injected_reset_,
// alloc_failed_), which then accepts what only they explain: a lost device, the WARNs upstream
// gives under allocation failure (docs/fuzzing.md).
#include <cstdio>

#include "fuzz/ioctl_program.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/time.h"
#include "mock_hw/fault_plan.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

void IoctlProgram::op_fail_allocations(const IoctlOpCall&) {
    // failslab / fail_page_alloc for the next 1-8 calls (teardown and time passing exempt, see
    // call()), with the kernel's task-filter: only the program's own task fails (make-it-fail is
    // set for it in run()), so the work it leaves to workers and timers (group_release_work, the
    // VM's deferred cleanup, a reset) allocates normally, whichever call it runs inside.
    // The page allocator, xarray ids and scheduler fences fail as the Nth allocation or at a
    // rate. kmalloc, page-table pages and the gpuva index only as the Nth (one failure per
    // window): an unmap preallocates from them (panthor_vm_unmap_range: VMAs, tables, index
    // nodes), and upstream keeps a kernel BO whose unmap failed (panthor_kernel_bo_destroy: a leak
    // by design), so an error path that unwinds by unmapping must find its memory.
    kshim::FaultPlan plan;
    const uint8_t k = in_.u8();
    plan.only_cache =
        in_.pick<const char*>({"pages", "xarray", "drm_sched_fence", "kmalloc", "pt_pages", "drm_gpuva_index"});
    const bool unmap_cache =
        plan.only_cache == "kmalloc" || plan.only_cache == "pt_pages" || plan.only_cache == "drm_gpuva_index";
    if ((k & 1) || unmap_cache)
        plan.fail_nth = 1 + in_.u8() % 64;
    else
        plan.probability = in_.pick<double>({0.01, 0.05, 0.2, 0.5, 1.0});
    plan.seed = 1 + in_.u8();
    plan.ignore_blocking = (k & 2) != 0;
    plan.task_filter = true;
    kshim::fault_inject_arm(plan);
    fail_plan_ = plan;
    fail_calls_left_ = 1 + static_cast<int>(in_.below(8));
    injected_reset_ = true;
    alloc_failed_ = true;
    if (opts_.trace) {
        char what[96];
        std::snprintf(what, sizeof what, "fail_allocations(nth=%llu p=%g cache=%s calls=%d)",
                      static_cast<unsigned long long>(plan.fail_nth), plan.probability,
                      plan.only_cache.empty() ? "any" : plan.only_cache.c_str(), fail_calls_left_);
        note(what, 0);
    }
}

void IoctlProgram::op_gpu_fault(const IoctlOpCall&) {
    // A fault of the mock GPU (fault plan), armed for the rest of the program.
    mock_hw::FaultSpec s;
    const kshim::ktime_t soon = kshim::ktime_get() + kshim::NSEC_PER_USEC * in_.u16();
    const u64 nth = 1 + in_.u8() % 4;
    switch (in_.below(9)) {
    case 0:
        s.kind = mock_hw::FaultKind::GpuFault;
        s.trigger = mock_hw::FaultTrigger::at_time(soon);
        s.fault_addr = pick_va();
        s.fault_status = in_.u8() < 200 ? 0x80 : in_.u32();
        break;
    case 1:
    case 2:
        s.kind = in_.flag() ? mock_hw::FaultKind::CsFatal : mock_hw::FaultKind::CsFault;
        s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
        s.exception = in_.u8() < 200 ? in_.pick<u32>({0x44, 0x58, 0x4c, 0x48}) : in_.u32();
        break;
    case 3:
        s.kind = mock_hw::FaultKind::CsUnrecoverable;
        s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
        injected_reset_ = true;
        break;
    case 4:
        s.kind = mock_hw::FaultKind::MmuFaultAt;
        s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
        s.fault_addr = pick_va();
        break;
    case 5:
        s.kind = mock_hw::FaultKind::ShaderHang;
        s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
        break;
    case 6:
        s.kind = mock_hw::FaultKind::CsgAckDrop;
        s.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
        injected_reset_ = true;
        break;
    default:
        s.kind = in_.flag() ? mock_hw::FaultKind::FwHang : mock_hw::FaultKind::McuFatal;
        s.trigger = mock_hw::FaultTrigger::at_time(soon);
        injected_reset_ = true;
        break;
    }
    s.max_fires = 1;
    w_.gpu().faults().add(s);
    note(mock_hw::fault_kind_name(s.kind), 0);
}

}  // namespace upanthor_fuzz
