// panthor's devcoredump on the mock G610: what a CS fatal, an MMU fault, a GPU fault and a
// firmware hang leave in the dump, one pending dump per device (read, then cleared), the 5-minute expiry and
// removal with a dump pending; the instruction marked as the faulting one (in a user stream and in
// the ring) and the reason a reset dump gives for the reset.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/devcoredump.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_runtime.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_fw.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;
using kshim::NSEC_PER_SEC;
using mock_hw::MockShader;

std::string hex16(u64 v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
    return buf;
}

class CoredumpTest : public SchedTest {
protected:
    void SetUp() override {
        SchedTest::SetUp();
        kshim::log_clear();
    }

    // A compute job holding a core for `duration`, then writing `value` at data offset `off`,
    // behind two recognisable MOVE32s.
    u64 compute_stream(u64 off, u64 value, ktime_t duration) {
        return put_stream({cs::move32(3, 0xabc), cs::move32(4, 0xdef),
                           cs::move48(16, put_shader(shader(MockShader::Write, duration, data_va(off), value))),
                           cs::run_compute(1)});
    }
    // A compute job reading `va` (unmapped: an MMU fault).
    u64 access_stream(u64 va) {
        return put_stream({cs::move48(16, put_shader(shader(MockShader::Access, 1 * kMs, va))), cs::run_compute(1)});
    }
    static u32 size_of(size_t instrs) { return static_cast<u32>(instrs * 8); }

    bool wait_signalled(u32 handle, ktime_t timeout) {
        kshim::dma_fence* fence = nullptr;
        if (drm::drm_syncobj_find_fence(file, handle, 0, 0, &fence))
            return false;
        const bool ok = run_until([&] { return kshim::dma_fence_is_signaled(fence); }, timeout);
        kshim::dma_fence_put(fence);
        return ok;
    }
    bool wait_dump(ktime_t timeout) {
        return run_until([&] { return kshim::dev_coredump_pending(dev()); }, timeout);
    }
    // The line of `text` holding `key` (from the key to the end of the line); empty if none.
    static std::string line_at(const std::string& text, const std::string& key) {
        const size_t at = text.find(key);
        return at == std::string::npos ? "" : text.substr(at, text.find('\n', at) - at);
    }
    static size_t count(const std::string& text, const std::string& key) {
        size_t n = 0;
        for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1))
            n++;
        return n;
    }
    // Runs until a dump is pending (a reset is the device's to do: keep it resumed).
    std::string reset_dump(ktime_t timeout) {
        if (!wait_dump(timeout))
            return "";
        return read_devcoredump();
    }
    // The value after `key` in the dump (the next whitespace-separated word).
    static std::string field(const std::string& dump, const std::string& key) {
        const size_t at = dump.find(key);
        if (at == std::string::npos)
            return "";
        const size_t start = at + key.size();
        return dump.substr(start, dump.find_first_of(" \n", start) - start);
    }
    int add_cs_fatal(u32 exception, int cs = -1) {
        mock_hw::FaultSpec spec;
        spec.kind = mock_hw::FaultKind::CsFatal;
        spec.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
        spec.cs = cs;
        spec.exception = exception;
        return gpu().faults().add(spec);
    }
};

// A CS_FATAL: the dump names the reason, the group (state, priority, slot), the faulting queue's
// CS_FATAL with its exception, the ring and the decoded instructions around the faulting one.
TEST_F(CoredumpTest, CsFatalDumpsTheGroupAndTheFaultingInstructions) {
    const u32 g = group_create(2, PANTHOR_GROUP_PRIORITY_LOW);
    const int id = add_cs_fatal(0x44, 1);  // CS_ENDPOINT_FAULT on queue 1
    const u64 stream = compute_stream(0, 1, 10 * kMs);
    const u32 s = submit_stream(g, 1, stream, size_of(4));
    ASSERT_TRUE(wait_signalled(s, 1000 * kMs));
    ASSERT_EQ(gpu().faults().fired(id), 1u);
    ASSERT_TRUE(wait_dump(10 * kMs));

    const std::string d = read_devcoredump();
    ASSERT_FALSE(d.empty());
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: CS_FATAL\n", 0), 0u) << d;
    EXPECT_NE(d.find("time: "), std::string::npos);
    EXPECT_NE(d.find("\ngpu: id 0x"), std::string::npos);
    for (const char* reg : {"GPU_ID ", "GPU_STATUS ", "SHADER_READY ", "TILER_READY ", "L2_READY ", "MCU_STATUS ",
                            "MMU_INT_RAWSTAT ", "GPU_FAULTSTATUS ", "GPU_FAULTADDRESS ", "AS0 "})
        EXPECT_NE(d.find(reg), std::string::npos) << reg;
    EXPECT_NE(d.find("MCU_STATUS        0x00000001 (ENABLED)"), std::string::npos);
    EXPECT_NE(d.find("faulting: CSG slot "), std::string::npos);
    // The group as it was when the fault was processed: still active, its queue marked fatal.
    EXPECT_NE(d.find("state ACTIVE priority LOW csg_slot "), std::string::npos) << d;
    EXPECT_NE(d.find("fatal_queues 0x2 "), std::string::npos) << d;
    EXPECT_NE(d.find("[queue 0]\n"), std::string::npos);
    EXPECT_NE(d.find("[queue 1] (faulting)\n"), std::string::npos);
    EXPECT_NE(d.find("CS_FATAL 0x00000044 EXCEPTION_TYPE 0x44 (CS_ENDPOINT_FAULT)"), std::string::npos) << d;
    EXPECT_NE(d.find("CS_FATAL_INFO 0x"), std::string::npos);
    EXPECT_NE(d.find("CS_FAULT 0x"), std::string::npos);
    EXPECT_NE(d.find("CS_FAULT_INFO 0x"), std::string::npos);
    EXPECT_NE(d.find("ring: va 0x"), std::string::npos);
    EXPECT_NE(field(d.substr(d.find("[queue 1]")), "INSERT "), "0x0") << "queue 1 got a job";
    // The ring around EXTRACT holds the kernel's job instructions (the CALL of the user stream).
    EXPECT_NE(d.find("ring instructions around EXTRACT:"), std::string::npos);
    EXPECT_NE(d.find("CALL d"), std::string::npos) << d;

    // The faulting instruction is in the user stream: CS_STATUS_CMD_PTR names the RUN_COMPUTE
    // that retired with the fault (the 4th instruction), not the one after it, and the one "=>"
    // line of the dump is that RUN_COMPUTE.
    const std::string q1 = d.substr(d.find("[queue 1]"));
    const u64 cmd_ptr = std::stoull(field(q1, "CS_STATUS_CMD_PTR "), nullptr, 16);
    EXPECT_EQ(cmd_ptr, stream + size_of(3));
    EXPECT_NE(q1.find("stream instructions around CS_STATUS_CMD_PTR " + hex16(cmd_ptr)), std::string::npos) << q1;
    const std::string marked = line_at(q1, "=> " + hex16(cmd_ptr).substr(2) + ": ");
    EXPECT_NE(marked.find("RUN_COMPUTE"), std::string::npos) << q1;
    EXPECT_EQ(count(d, "  => "), 1u) << d;
    // In the ring, the CALL the stream runs under is marked "->" (EXTRACT is past it).
    EXPECT_NE(line_at(q1, "  -> ").find("CALL d"), std::string::npos) << q1;
    // Decoded with the CS printer: the stream's instructions, by mnemonic and operands.
    EXPECT_NE(q1.find("MOVE32 r3, #0xabc"), std::string::npos) << q1;
    EXPECT_NE(q1.find("MOVE32 r4, #0xdef"), std::string::npos);
    EXPECT_NE(q1.find("RUN_COMPUTE"), std::string::npos);
    EXPECT_NE(d.find("# end of dump\n"), std::string::npos);

    // Read, then cleared: nothing pending, and it is freed.
    EXPECT_EQ(kshim::dev_coredump_clear(dev()), 0);
    EXPECT_FALSE(kshim::dev_coredump_pending(dev()));
    EXPECT_TRUE(read_devcoredump().empty());
    advance_until_idle(NSEC_PER_SEC);
    EXPECT_EQ(kshim::devcoredump_live_count(), 0u);
}

// While a dump is pending, later faults do not replace it; once cleared, the next one is taken.
TEST_F(CoredumpTest, ASecondFaultWhileOneIsPendingDoesNotReplaceIt) {
    const u32 a = group_create();
    const u32 b = group_create();
    add_cs_fatal(0x44);
    ASSERT_TRUE(wait_signalled(submit_stream(a, 0, compute_stream(0, 1, 1 * kMs), size_of(4)), 1000 * kMs));
    ASSERT_TRUE(wait_dump(10 * kMs));
    const std::string first = read_devcoredump();
    ASSERT_NE(first.find("CS_ENDPOINT_FAULT"), std::string::npos);

    add_cs_fatal(0x58);  // DATA_INVALID_FAULT on the other group
    ASSERT_TRUE(wait_signalled(submit_stream(b, 0, compute_stream(8, 2, 1 * kMs), size_of(4)), 1000 * kMs));
    advance_until_idle(NSEC_PER_SEC);
    EXPECT_TRUE(kshim::log_contains("CS_FATAL.EXCEPTION_TYPE: 0x58"));
    EXPECT_EQ(read_devcoredump(), first);
    EXPECT_EQ(kshim::devcoredump_live_count(), 1u);

    ASSERT_EQ(kshim::dev_coredump_clear(dev()), 0);
    const u32 c = group_create();
    add_cs_fatal(0x58);
    ASSERT_TRUE(wait_signalled(submit_stream(c, 0, compute_stream(16, 3, 1 * kMs), size_of(4)), 1000 * kMs));
    ASSERT_TRUE(wait_dump(10 * kMs));
    const std::string next = read_devcoredump();
    EXPECT_NE(next.find("CS_FATAL 0x00000058 EXCEPTION_TYPE 0x58 (DATA_INVALID_FAULT)"), std::string::npos) << next;
}

// An access to an unmapped VA: an MMU_FAULT dump with the faulting AS's FAULTSTATUS and
// FAULTADDRESS, taken before the AS is disabled.
TEST_F(CoredumpTest, MmuFaultDumpsTheAsFaultRegisters) {
    const u32 g = group_create();
    const u64 unmapped = kVa + 64 * 1024 * 1024 + 0x128;
    const u32 s = submit_stream(g, 0, access_stream(unmapped), size_of(2));
    ASSERT_TRUE(wait_signalled(s, 1000 * kMs));
    ASSERT_TRUE(wait_dump(10 * kMs));
    const std::string d = read_devcoredump();
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: MMU_FAULT\n", 0), 0u) << d;
    const std::string as = field(d, "faulting: AS");
    ASSERT_FALSE(as.empty()) << d;
    const std::string line = d.substr(d.find("AS" + as + (as.size() == 1 ? " *" : "*")));
    const std::string faultstatus = field(line, "FAULTSTATUS ");
    EXPECT_NE(faultstatus, "0x00000000") << line;
    EXPECT_NE(line.find("TRANSLATION_FAULT"), std::string::npos) << line.substr(0, line.find('\n'));
    EXPECT_EQ(field(line, "FAULTADDRESS "), hex16(unmapped)) << line.substr(0, line.find('\n'));
    EXPECT_NE(field(d, "MMU_INT_RAWSTAT   "), "0x00000000") << "taken before the IRQ was cleared";
}

// A GPU fault IRQ: a GPU_FAULT dump with GPU_FAULTSTATUS/GPU_FAULTADDRESS as latched.
TEST_F(CoredumpTest, GpuFaultDumpsTheFaultRegisters) {
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::GpuFault;  // at the next GPU_CMD write
    f.fault_addr = 0xdead000;
    const int id = gpu().faults().add(f);
    // Unmapping flushes the GPU caches (a GPU_CMD).
    ASSERT_EQ(vm_unmap(vm_, kVa, kBoSize), 0);
    ASSERT_TRUE(wait_dump(100 * kMs));
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    const std::string d = read_devcoredump();
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: GPU_FAULT\n", 0), 0u) << d;
    EXPECT_EQ(field(d, "GPU_FAULTSTATUS   "), "0x00000080") << d;
    EXPECT_EQ(field(d, "GPU_FAULTADDRESS  "), hex16(0xdead000)) << d;
}

// The firmware stops answering: the ping watchdog resets the GPU and the reset work dumps first,
// MCU_STATUS and the firmware's global interface included, with the groups on slots.
TEST_F(CoredumpTest, FirmwareHangResetDumpsMcuStatus) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    const u32 g = group_create();
    ASSERT_TRUE(wait_signalled(submit_stream(g, 0, compute_stream(0, 1, 1 * kMs), size_of(4)), 1000 * kMs));
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::FwHang;
    const int id = gpu().faults().add(f);
    ASSERT_TRUE(wait_dump(3 * static_cast<ktime_t>(PING_INTERVAL_MS) * kMs));
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    const std::string d = read_devcoredump();
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: GPU_RESET\n", 0), 0u) << d;
    // The silent firmware is noticed by whichever request it misses first: the scheduler's CSG
    // request for the idle group, or the watchdog's ping.
    const std::string why = field(d, "\nreset: ");
    EXPECT_TRUE(why == "CSG_ACK_TIMEOUT" || why == "FW_PING_TIMEOUT") << why;
    EXPECT_NE(d.find("MCU_STATUS        0x"), std::string::npos);
    EXPECT_NE(d.find("[firmware]\nGLB_REQ 0x"), std::string::npos) << d;
    EXPECT_NE(d.find("MMU_INT_RAWSTAT "), std::string::npos);
    ASSERT_EQ(kshim::dev_coredump_clear(dev()), 0);
    // The reset brought the firmware back.
    advance_until_idle(NSEC_PER_SEC);
    const u32 fresh = group_create();
    EXPECT_TRUE(wait_signalled(submit_stream(fresh, 0, compute_stream(8, 2, 1 * kMs), size_of(4)), 1000 * kMs));
    EXPECT_EQ(read_data(8), 2u);
    kshim::pm_runtime_put_autosuspend(dev());
}

// A fault raised by an instruction of the ring itself (the first instruction of the job, which
// retires with it): the ring window is centred on CS_STATUS_CMD_PTR, which is the instruction
// before EXTRACT, and that instruction is the one marked.
TEST_F(CoredumpTest, FaultOnARingInstructionMarksItInTheRing) {
    const u32 g = group_create();
    mock_hw::FaultSpec spec;
    spec.kind = mock_hw::FaultKind::CsFatal;
    spec.cs_event = mock_hw::CsFaultEvent::Instruction;
    spec.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    spec.exception = 0x44;
    const int id = gpu().faults().add(spec);
    ASSERT_TRUE(wait_signalled(submit_stream(g, 0, compute_stream(0, 1, 1 * kMs), size_of(4)), 1000 * kMs));
    ASSERT_EQ(gpu().faults().fired(id), 1u);
    ASSERT_TRUE(wait_dump(10 * kMs));
    const std::string d = read_devcoredump();
    const std::string q0 = d.substr(d.find("[queue 0]"));
    const u64 cmd_ptr = std::stoull(field(q0, "CS_STATUS_CMD_PTR "), nullptr, 16);
    const u64 ring_va = std::stoull(field(q0, "ring: va "), nullptr, 16);
    const u64 ring_size = std::stoull(field(q0, " size "), nullptr, 16);
    const u64 extract = std::stoull(field(q0, "EXTRACT "), nullptr, 16);
    ASSERT_GE(extract, 8u) << q0;
    EXPECT_EQ(cmd_ptr, ring_va + (extract - 8) % ring_size) << q0;
    EXPECT_NE(q0.find("ring instructions around CS_STATUS_CMD_PTR:\n"), std::string::npos) << q0;
    EXPECT_EQ(q0.find("stream instructions around"), std::string::npos) << q0;
    EXPECT_NE(line_at(q0, "  => ").find(hex16(cmd_ptr).substr(2) + ": "), std::string::npos) << q0;
    EXPECT_EQ(count(d, "  => "), 1u) << d;
}

// Each reset dump says why the reset was scheduled.
TEST_F(CoredumpTest, ResetDumpNamesAnExplicitRequest) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    panthor_device_schedule_reset(ptdev);
    const std::string d = reset_dump(100 * kMs);
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: GPU_RESET\nreset: REQUESTED\n", 0), 0u) << d;
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(CoredumpTest, ResetDumpNamesAFirmwarePingTimeout) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::FwHang;  // no group: the watchdog's ping is the first request missed
    gpu().faults().add(f);
    const std::string d = reset_dump(3 * static_cast<ktime_t>(PING_INTERVAL_MS) * kMs);
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: GPU_RESET\nreset: FW_PING_TIMEOUT\n", 0), 0u) << d;
    EXPECT_NE(d.find("MCU_STATUS        0x00000001 (ENABLED)"), std::string::npos) << d;
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(CoredumpTest, ResetDumpNamesAnMcuFatal) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::McuFatal;  // at the next GLB doorbell: the watchdog's ping
    const int id = gpu().faults().add(f);
    const std::string d = reset_dump(3 * static_cast<ktime_t>(PING_INTERVAL_MS) * kMs);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: GPU_RESET\nreset: MCU_FATAL\n", 0), 0u) << d;
    EXPECT_NE(d.find("MCU_STATUS        0x00000003 (FATAL)"), std::string::npos) << d;
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(CoredumpTest, ResetDumpNamesACsgAckTimeout) {
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::CsgAckDrop;  // the group's START is never acked
    f.csg_req_mask = CSG_STATE_MASK;
    f.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    const int id = gpu().faults().add(f);
    const u32 g = group_create();
    submit_stream(g, 0, compute_stream(0, 1, 1 * kMs), size_of(4));
    const std::string d = reset_dump(1000 * kMs);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: GPU_RESET\nreset: CSG_ACK_TIMEOUT\n", 0), 0u) << d;
}

// CS_UNRECOVERABLE: the CS_FATAL dump comes first (one pending dump per device) and says the
// reset it scheduled is pending, and why.
TEST_F(CoredumpTest, CsUnrecoverableDumpNamesThePendingReset) {
    const u32 g = group_create();
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::CsUnrecoverable;
    f.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    const int id = gpu().faults().add(f);
    ASSERT_TRUE(wait_signalled(submit_stream(g, 0, compute_stream(0, 1, 1 * kMs), size_of(4)), 1000 * kMs));
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    ASSERT_TRUE(wait_dump(10 * kMs));
    const std::string d = read_devcoredump();
    EXPECT_EQ(d.rfind("# panthor devcoredump\nreason: CS_FATAL\nreset: CS_UNRECOVERABLE (pending)\n", 0), 0u) << d;
}

// Nobody reads it: the dump goes by itself after DEVCD_TIMEOUT of virtual time.
TEST_F(CoredumpTest, DumpExpiresAfterFiveMinutes) {
    const u32 g = group_create();
    add_cs_fatal(0x44);
    ASSERT_TRUE(wait_signalled(submit_stream(g, 0, compute_stream(0, 1, 1 * kMs), size_of(4)), 1000 * kMs));
    ASSERT_TRUE(wait_dump(10 * kMs));
    const ktime_t taken = kshim::ktime_get();
    advance(299 * NSEC_PER_SEC);
    EXPECT_TRUE(kshim::dev_coredump_pending(dev()));
    EXPECT_TRUE(run_until([&] { return !kshim::dev_coredump_pending(dev()); }, 2 * NSEC_PER_SEC));
    EXPECT_GE(kshim::ktime_get() - taken, 300 * NSEC_PER_SEC - 10 * kMs);
    advance_until_idle(NSEC_PER_SEC);
    EXPECT_EQ(kshim::devcoredump_live_count(), 0u);
}

// Removing the device with a dump pending frees it (the fixture's leak check sees the rest).
TEST_F(CoredumpTest, RemovalWithADumpPendingFreesIt) {
    const u32 g = group_create();
    add_cs_fatal(0x44);
    ASSERT_TRUE(wait_signalled(submit_stream(g, 0, compute_stream(0, 1, 1 * kMs), size_of(4)), 1000 * kMs));
    ASSERT_TRUE(wait_dump(10 * kMs));
    EXPECT_EQ(kshim::devcoredump_live_count(), 1u);
    remove();
    EXPECT_EQ(kshim::devcoredump_live_count(), 0u);
    EXPECT_FALSE(kshim::dev_coredump_pending(dev()));
}

}  // namespace
}  // namespace panthor::testing
