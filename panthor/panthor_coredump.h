// No upstream counterpart: upstream panthor has no devcoredump yet. Modelled on the GPU drivers
// that have one (xe_devcoredump.c, msm_gpu.c's crashstate, etnaviv_dump.c): capture a text
// snapshot of the GPU and the faulting group when something goes wrong, hand it to
// dev_coredumpv (kernel_shim/devcoredump.h), one pending dump per device.
//
// DOC: When: a CS_FATAL, CS_FAULT or progress timeout of a group (processed in
// process_fw_events_work, scheduler lock held), a GPU fault (the GPU IRQ thread), an MMU fault
// (the MMU IRQ thread, AS slots lock held) and a GPU reset (the reset work, before anything is
// torn down, so the registers still show the hang). The capture
// allocates with GFP_NOWAIT (it may run in the fence-signalling path, under locks that path
// takes) and reads only what has no side effect: status registers, the FW interface output
// blocks, the ring buffers through their kernel mappings and the faulting stream through the
// VM's page tables. The format is described in docs/panthor.md ("devcoredump").
#pragma once
#include "panthor/panthor_device.h"

namespace panthor {

enum panthor_coredump_reason {
    PANTHOR_COREDUMP_CS_FATAL,
    PANTHOR_COREDUMP_CS_FAULT,
    PANTHOR_COREDUMP_PROGRESS_TIMEOUT,
    PANTHOR_COREDUMP_MMU_FAULT,
    PANTHOR_COREDUMP_GPU_FAULT,
    PANTHOR_COREDUMP_RESET,
};

const char* panthor_coredump_reason_name(panthor_coredump_reason reason);

// Registers the removal action that frees a dump still pending when the device goes. 0 or -errno.
int panthor_coredump_init(panthor_device* ptdev);

// A group fault: registers, then the group on `csg_id` with every queue, `cs_id` marked as the
// faulting one (-1: the group as a whole, e.g. a progress timeout). Scheduler lock held.
void panthor_coredump_capture_group_locked(panthor_device* ptdev, panthor_coredump_reason reason, u32 csg_id,
                                           int cs_id);
// Registers (with `as` marked as the faulting AS when >= 0). Takes no lock: callable under the
// AS slots lock or the scheduler lock.
void panthor_coredump_capture(panthor_device* ptdev, panthor_coredump_reason reason, int as);
// A reset: registers, the FW global interface, then every group resident on a CSG slot. Takes
// the scheduler lock: call with no driver lock held.
void panthor_coredump_capture_reset(panthor_device* ptdev);

}  // namespace panthor
