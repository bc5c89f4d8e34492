// No upstream counterpart (upstream panthor has no devcoredump yet); see panthor_coredump.h.
//
// The snapshot is text, written once into one GFP_NOWAIT buffer (no sleeping, no allocation
// after the first), then handed to dev_coredumpv, which keeps it until it is read and cleared or
// DEVCD_TIMEOUT passes, and drops it if the device already has a dump pending. A buffer that
// turns out too small is truncated with a marker line, never overrun.
#include "panthor/panthor_coredump.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "hw/csf/cs_isa.h"
#include "hw/csf/cs_print.h"
#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/mmu_regs.h"
#include "kernel_shim/devcoredump.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/slab.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched_priv.h"

namespace panthor {

namespace {

// Big enough for the registers, 16 ASes and a group of 8 queues with their instruction windows.
constexpr size_t COREDUMP_BUF_SIZE = 64 * 1024;
// Instructions shown before and after the position of interest.
constexpr u32 INSTRS_BEFORE = 6;
constexpr u32 INSTRS_AFTER = 4;

constexpr const char TRUNCATED[] = "... (truncated)\n";

// drm_coredump_printer-like: appends formatted text, keeping room for the truncation marker.
struct coredump_buf {
    char* data = nullptr;
    size_t size = 0;
    size_t len = 0;
    bool truncated = false;
};

[[gnu::format(printf, 2, 3)]] void cd_printf(coredump_buf* b, const char* fmt, ...) {
    if (b->truncated)
        return;
    const size_t room = b->size - sizeof(TRUNCATED) - b->len;
    va_list ap;
    va_start(ap, fmt);
    const int n = std::vsnprintf(b->data + b->len, room, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (static_cast<size_t>(n) >= room) {
        b->len += room - 1;
        b->len += static_cast<size_t>(std::snprintf(b->data + b->len, sizeof(TRUNCATED), "%s", TRUNCATED));
        b->truncated = true;
        return;
    }
    b->len += static_cast<size_t>(n);
}

bool cd_begin(coredump_buf* b) {
    b->data = static_cast<char*>(kshim::kmalloc(COREDUMP_BUF_SIZE, kshim::GFP_NOWAIT));
    b->size = COREDUMP_BUF_SIZE;
    return b->data != nullptr;
}

void cd_commit(panthor_device* ptdev, coredump_buf* b) {
    cd_printf(b, "# end of dump\n");
    kshim::dev_coredumpv(ptdev->dev, b->data, b->len, kshim::GFP_NOWAIT);
    b->data = nullptr;
}

const char* mcu_status_name(u32 status) {
    switch (status) {
    case MCU_STATUS_DISABLED: return "DISABLED";
    case MCU_STATUS_ENABLED: return "ENABLED";
    case MCU_STATUS_HALT: return "HALT";
    case MCU_STATUS_FATAL: return "FATAL";
    default: return "UNKNOWN";
    }
}

const char* group_state_name(panthor_group_state state) {
    switch (state) {
    case PANTHOR_CS_GROUP_CREATED: return "CREATED";
    case PANTHOR_CS_GROUP_ACTIVE: return "ACTIVE";
    case PANTHOR_CS_GROUP_SUSPENDED: return "SUSPENDED";
    case PANTHOR_CS_GROUP_TERMINATED: return "TERMINATED";
    case PANTHOR_CS_GROUP_UNKNOWN_STATE: return "UNKNOWN_STATE";
    }
    return "?";
}

const char* group_priority_name(u8 prio) {
    switch (prio) {
    case PANTHOR_CSG_PRIORITY_LOW: return "LOW";
    case PANTHOR_CSG_PRIORITY_MEDIUM: return "MEDIUM";
    case PANTHOR_CSG_PRIORITY_HIGH: return "HIGH";
    case PANTHOR_CSG_PRIORITY_RT: return "RT";
    default: return "?";
    }
}

void dump_header(panthor_device* ptdev, coredump_buf* b, panthor_coredump_reason reason) {
    const kshim::ktime_t now = kshim::ktime_get();
    const drm_panthor_gpu_info& gi = ptdev->gpu_info;
    cd_printf(b, "# panthor devcoredump\n");
    cd_printf(b, "reason: %s\n", panthor_coredump_reason_name(reason));
    const char* reset = panthor_reset_reason_name(static_cast<panthor_reset_reason>(ptdev->reset.reason.load()));
    if (reason == PANTHOR_COREDUMP_RESET)
        cd_printf(b, "reset: %s\n", reset);
    else if (panthor_device_reset_is_pending(ptdev))
        cd_printf(b, "reset: %s (pending)\n", reset);  // e.g. CS_UNRECOVERABLE: this dump comes first
    cd_printf(b, "time: %lld.%09lld s (jiffies %lu)\n", static_cast<long long>(now / kshim::NSEC_PER_SEC),
              static_cast<long long>(now % kshim::NSEC_PER_SEC), jiffies);
    cd_printf(b, "device: %s\n", ptdev->dev->name.c_str());
    cd_printf(b, "gpu: id 0x%04x (arch %u.%u) rev 0x%x csf_id 0x%x shader_present 0x%" PRIx64 "\n", gi.gpu_id >> 16,
              (gi.gpu_id >> 28) & 0xF, (gi.gpu_id >> 24) & 0xF, gi.gpu_rev, gi.csf_id,
              static_cast<u64>(gi.shader_present));
}

void dump_registers(panthor_device* ptdev, coredump_buf* b, int faulty_as) {
    cd_printf(b, "\n[registers]\n");
    cd_printf(b, "GPU_ID            0x%08x\n", gpu_read(ptdev, GPU_ID));
    cd_printf(b, "GPU_STATUS        0x%08x\n", gpu_read(ptdev, GPU_STATUS));
    const u32 gpu_fault = gpu_read(ptdev, GPU_FAULT_STATUS);
    cd_printf(b, "GPU_FAULTSTATUS   0x%08x (%s)\n", gpu_fault,
              panthor_exception_name(ptdev, gpu_fault & GPU_FAULT_STATUS_EXCEPTION_TYPE_MASK));
    cd_printf(b, "GPU_FAULTADDRESS  0x%016" PRIx64 "\n", gpu_read64(ptdev, GPU_FAULT_ADDR));
    cd_printf(b, "GPU_INT_RAWSTAT   0x%08x\n", gpu_read(ptdev, GPU_INT_RAWSTAT));
    cd_printf(b, "SHADER_READY      0x%016" PRIx64 "\n", gpu_read64(ptdev, SHADER_READY));
    cd_printf(b, "TILER_READY       0x%016" PRIx64 "\n", gpu_read64(ptdev, TILER_READY));
    cd_printf(b, "L2_READY          0x%016" PRIx64 "\n", gpu_read64(ptdev, L2_READY));
    const u32 mcu = gpu_read(ptdev, MCU_STATUS);
    cd_printf(b, "MCU_STATUS        0x%08x (%s)\n", mcu, mcu_status_name(mcu));
    cd_printf(b, "JOB_INT_RAWSTAT   0x%08x\n", gpu_read(ptdev, JOB_INT_RAWSTAT));
    cd_printf(b, "MMU_INT_RAWSTAT   0x%08x\n", gpu_read(ptdev, MMU_INT_RAWSTAT));

    cd_printf(b, "\n[mmu]\n");
    for (u32 as = 0; as < 32; as++) {
        if (!(ptdev->gpu_info.as_present & (1u << as)))
            continue;
        const u32 fs = gpu_read(ptdev, AS_FAULTSTATUS(as));
        cd_printf(b, "AS%-2u%s STATUS 0x%08x FAULTSTATUS 0x%08x (%s) FAULTADDRESS 0x%016" PRIx64 "\n", as,
                  static_cast<int>(as) == faulty_as ? "*" : " ", gpu_read(ptdev, AS_STATUS(as)), fs,
                  panthor_exception_name(ptdev, fs & 0xFF), gpu_read64(ptdev, AS_FAULTADDRESS(as)));
    }
}

void dump_fw_global(panthor_device* ptdev, coredump_buf* b) {
    panthor_fw_global_iface* glb = panthor_fw_get_glb_iface(ptdev);
    if (!glb || !glb->input || !glb->output)
        return;
    cd_printf(b, "\n[firmware]\n");
    cd_printf(b, "GLB_REQ 0x%08x GLB_ACK 0x%08x GLB_HALT_STATUS 0x%08x\n", fw_read_once(glb->input->req),
              fw_read_once(glb->output->ack), fw_read_once(glb->output->halt_status));
}

// Markers of an instruction window: the instruction at CS_STATUS_CMD_PTR (the one a pending
// exception was raised by, else where the stream stands), and the ring's CALL of the stream the
// CS is executing.
constexpr const char MARK_CMD_PTR[] = "=>";
constexpr const char MARK_CALL[] = "->";

// One instruction of the window, marked with `mark` (nullptr: none).
void dump_instr(coredump_buf* b, u64 va, u64 raw, const char* mark) {
    char line[cs::CS_PRINT_LINE_MAX];
    cs::cs_print_line(line, sizeof(line), raw, va);
    cd_printf(b, "  %s %s\n", mark ? mark : "  ", line);
}

// The ring around byte position `pos` (a monotonic position: the ring index is pos % size), the
// instruction there marked `mark`.
void dump_ring_window(coredump_buf* b, panthor_queue* queue, u64 pos, const char* mark) {
    const u64 ring_va = panthor_kernel_bo_gpuva(queue->ringbuf);
    const u64 size = panthor_kernel_bo_size(queue->ringbuf);
    const u64* ring = static_cast<const u64*>(queue->ringbuf->kmap);
    if (!ring || size < sizeof(u64))
        return;
    const u64 count = size / sizeof(u64);
    const u64 at = (pos % size) / sizeof(u64);
    const u64 before = INSTRS_BEFORE < count ? INSTRS_BEFORE : count - 1;
    for (u64 k = 0; k <= before + INSTRS_AFTER && k < count; k++) {
        const u64 idx = (at + count - before + k) % count;
        dump_instr(b, ring_va + idx * sizeof(u64), fw_read_once(ring[idx]), idx == at ? mark : nullptr);
    }
}

// The user stream around `va`, read through the group's page tables (unmapped words are shown
// as such): the faulting instruction is usually in the stream the ring CALLs, not in the ring.
void dump_vm_window(coredump_buf* b, panthor_vm* vm, u64 va) {
    va &= ~u64{7};
    const u64 start = va >= INSTRS_BEFORE * sizeof(u64) ? va - INSTRS_BEFORE * sizeof(u64) : 0;
    for (u64 at = start; at <= va + INSTRS_AFTER * sizeof(u64); at += sizeof(u64)) {
        const kshim::phys_addr_t pa = panthor_vm_iova_to_phys(vm, at);
        if (!pa) {
            cd_printf(b, "  %s %016" PRIx64 ": <unmapped>\n", at == va ? MARK_CMD_PTR : "  ", at);
            continue;
        }
        dump_instr(b, at, fw_read_once(*static_cast<const u64*>(kshim::phys_to_virt(pa))),
                   at == va ? MARK_CMD_PTR : nullptr);
    }
}

void dump_exception(panthor_device* ptdev, coredump_buf* b, const char* name, u32 value, u64 info) {
    cd_printf(b, "  CS_%s 0x%08x EXCEPTION_TYPE 0x%02x (%s) EXCEPTION_DATA 0x%06x\n", name, value,
              CS_EXCEPTION_TYPE(value), panthor_exception_name(ptdev, CS_EXCEPTION_TYPE(value)),
              CS_EXCEPTION_DATA(value));
    cd_printf(b, "  CS_%s_INFO 0x%016" PRIx64 "\n", name, info);
}

void dump_queue_locked(panthor_device* ptdev, coredump_buf* b, panthor_group* group, u32 csg_id, u32 cs_id,
                       bool faulting) REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_queue* queue = group->queues[cs_id];
    panthor_fw_cs_iface* cs = panthor_fw_get_cs_iface(ptdev, csg_id, cs_id);
    cd_printf(b, "\n[queue %u]%s\n", cs_id, faulting ? " (faulting)" : "");
    cd_printf(b, "  priority %u fatal %s blocked %s idle %s\n", queue->priority,
              (group->fatal_queues & (1u << cs_id)) ? "yes" : "no",
              (group->blocked_queues & (1u << cs_id)) ? "yes" : "no",
              (group->idle_queues & (1u << cs_id)) ? "yes" : "no");
    if (cs && cs->output) {
        dump_exception(ptdev, b, "FAULT", fw_read_once(cs->output->fault), fw_read_once(cs->output->fault_info));
        dump_exception(ptdev, b, "FATAL", fw_read_once(cs->output->fatal), fw_read_once(cs->output->fatal_info));
        cd_printf(b, "  CS_STATUS_CMD_PTR 0x%016" PRIx64 " STATUS_WAIT 0x%08x BLOCKED_REASON %u\n",
                  fw_read_once(cs->output->status_cmd_ptr), fw_read_once(cs->output->status_wait),
                  fw_read_once(cs->output->status_blocked_reason));
    }
    const u64 insert = queue->iface.input ? fw_read_once(queue->iface.input->insert) : 0;
    const u64 extract = queue->iface.output ? fw_read_once(queue->iface.output->extract) : 0;
    const u64 ring_va = queue->ringbuf ? panthor_kernel_bo_gpuva(queue->ringbuf) : 0;
    const u64 ring_size = queue->ringbuf ? panthor_kernel_bo_size(queue->ringbuf) : 0;
    cd_printf(b, "  ring: va 0x%016" PRIx64 " size 0x%" PRIx64 " INSERT 0x%" PRIx64 " EXTRACT 0x%" PRIx64 "\n", ring_va,
              ring_size, insert, extract);
    // The instructions only of the faulting queue and of those with work in flight.
    if (!queue->ringbuf || (!faulting && insert == extract))
        return;
    // CS_STATUS_CMD_PTR names the instruction that raised a pending exception (an instruction
    // that retired with it, e.g. a RUN_*, is not the one after it), else the next one to run.
    const u64 cmd_ptr = cs && cs->output ? fw_read_once(cs->output->status_cmd_ptr) : 0;
    if (cmd_ptr >= ring_va && cmd_ptr < ring_va + ring_size) {
        cd_printf(b, "  ring instructions around CS_STATUS_CMD_PTR:\n");
        dump_ring_window(b, queue, cmd_ptr - ring_va, MARK_CMD_PTR);
        return;
    }
    // In a stream the ring CALLed: EXTRACT is the ring's return position, the CALL is before it.
    cd_printf(b, "  ring instructions around EXTRACT:\n");
    if (cmd_ptr && extract >= sizeof(u64))
        dump_ring_window(b, queue, extract - sizeof(u64), MARK_CALL);
    else
        dump_ring_window(b, queue, extract, nullptr);
    if (!cmd_ptr)
        return;
    cd_printf(b, "  stream instructions around CS_STATUS_CMD_PTR 0x%016" PRIx64 ":\n", cmd_ptr);
    if (group->vm)
        dump_vm_window(b, group->vm, cmd_ptr);
}

// `faulting_cs` < 0: no particular queue.
void dump_group_locked(panthor_device* ptdev, coredump_buf* b, u32 csg_id, int faulting_cs)
    REQUIRES(ptdev->scheduler->lock) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    panthor_group* group = ptdev->scheduler->csg_slots[csg_id].group;
    cd_printf(b, "\n[group on CSG slot %u]\n", csg_id);
    if (!group) {
        cd_printf(b, "  none\n");
        return;
    }
    cd_printf(b, "  pid %d comm %s\n", group->task_info.pid, group->task_info.comm);
    cd_printf(b, "  state %s priority %s csg_slot %d queues %u\n", group_state_name(group->state),
              group_priority_name(group->priority), group->csg_id, group->queue_count);
    cd_printf(b, "  fatal_queues 0x%x blocked_queues 0x%x idle_queues 0x%x timedout %s innocent %s\n",
              group->fatal_queues, group->blocked_queues, group->idle_queues, group->timedout ? "yes" : "no",
              group->innocent ? "yes" : "no");
    if (panthor_fw_csg_iface* csg = panthor_fw_get_csg_iface(ptdev, csg_id); csg && csg->input && csg->output)
        cd_printf(b, "  CSG_REQ 0x%08x CSG_ACK 0x%08x CSG_STATUS_STATE 0x%08x\n", fw_read_once(csg->input->req),
                  fw_read_once(csg->output->ack), fw_read_once(csg->output->status_state));
    for (u32 q = 0; q < group->queue_count; q++)
        if (group->queues[q])
            dump_queue_locked(ptdev, b, group, csg_id, q, static_cast<int>(q) == faulting_cs);
}

}  // namespace

const char* panthor_coredump_reason_name(panthor_coredump_reason reason) {
    switch (reason) {
    case PANTHOR_COREDUMP_CS_FATAL: return "CS_FATAL";
    case PANTHOR_COREDUMP_CS_FAULT: return "CS_FAULT";
    case PANTHOR_COREDUMP_PROGRESS_TIMEOUT: return "PROGRESS_TIMEOUT";
    case PANTHOR_COREDUMP_MMU_FAULT: return "MMU_FAULT";
    case PANTHOR_COREDUMP_GPU_FAULT: return "GPU_FAULT";
    case PANTHOR_COREDUMP_RESET: return "GPU_RESET";
    }
    return "?";
}

int panthor_coredump_init(panthor_device* ptdev) {
    kshim::Device* dev = ptdev->dev;
    return kshim::devm_add_action_or_reset(dev, [dev] { kshim::dev_coredump_put(dev); });
}

void panthor_coredump_capture_group_locked(panthor_device* ptdev, panthor_coredump_reason reason, u32 csg_id,
                                           int cs_id) {
    lockdep_assert_held(&ptdev->scheduler->lock);
    // The kernel would drop it anyway: skip the register reads and the allocation.
    if (kshim::dev_coredump_pending(ptdev->dev))
        return;
    coredump_buf b;
    if (!cd_begin(&b))
        return;
    dump_header(ptdev, &b, reason);
    if (cs_id >= 0)
        cd_printf(&b, "faulting: CSG slot %u CS %d\n", csg_id, cs_id);
    else
        cd_printf(&b, "faulting: CSG slot %u\n", csg_id);
    dump_registers(ptdev, &b, -1);
    dump_fw_global(ptdev, &b);
    dump_group_locked(ptdev, &b, csg_id, cs_id);
    cd_commit(ptdev, &b);
}

void panthor_coredump_capture(panthor_device* ptdev, panthor_coredump_reason reason, int as) {
    if (kshim::dev_coredump_pending(ptdev->dev))
        return;
    coredump_buf b;
    if (!cd_begin(&b))
        return;
    dump_header(ptdev, &b, reason);
    if (as >= 0)
        cd_printf(&b, "faulting: AS%d\n", as);
    dump_registers(ptdev, &b, as);
    dump_fw_global(ptdev, &b);
    cd_commit(ptdev, &b);
}

void panthor_coredump_capture_reset(panthor_device* ptdev) {
    panthor_scheduler* sched = ptdev->scheduler;
    if (!sched || kshim::dev_coredump_pending(ptdev->dev))
        return;
    coredump_buf b;
    if (!cd_begin(&b))
        return;
    dump_header(ptdev, &b, PANTHOR_COREDUMP_RESET);
    dump_registers(ptdev, &b, -1);
    dump_fw_global(ptdev, &b);
    {
        kshim::MutexGuard g(sched->lock);
        for (u32 csg_id = 0; csg_id < sched->csg_slot_count; csg_id++)
            if (sched->csg_slots[csg_id].group)
                dump_group_locked(ptdev, &b, csg_id, -1);
    }
    cd_commit(ptdev, &b);
}

}  // namespace panthor
