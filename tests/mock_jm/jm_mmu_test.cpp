// The JM flavour of the mock MMU as panfrost drives it (docs/hw/jm/mmu.md): a job's faulting
// access stalls the slot, the growable-heap path (clear, map, LOCK + FLUSH_PT) resumes it, an AS
// disabled after the fault fails the job, bus errors, a second AS, FaultPlan's MmuFaultAt, and a
// differential run on tables io-pgtable's ARM_MALI_LPAE writes.
#include <memory>

#include "kernel_shim/iommu/io_pgtable.h"
#include "mock_hw/fault_plan.h"
#include "tests/mock_jm/jm_test.h"

namespace mock_jm::testing {
namespace {

using mock_hw::FaultKind;
using mock_hw::FaultSpec;
using mock_hw::FaultTrigger;

constexpr u32 kSourceJobSlot = 0x3;
constexpr u64 kArenaEnd = 0x10000000 + (1 << 20);  // JmTest's kArenaVa + kArenaSize

class JmMmu : public JmTest {
protected:
    static_assert(kArenaEnd == kArenaVa + kArenaSize);
    bool slot_irq_pending(u32 js) { return d().r(JOB_INT_RAWSTAT) & MK_JS_MASK(js); }
    // What a stalled slot looks like: still active, no job interrupt.
    void expect_stalled(u32 js) {
        advance(5 * NSEC_PER_MSEC);
        EXPECT_FALSE(slot_irq_pending(js));
        EXPECT_EQ(d().r(JS_STATUS(js)), DRM_PANFROST_EXCEPTION_ACTIVE);
        EXPECT_TRUE(d().r(JOB_INT_JS_STATE) & (1u << js));
    }
    // panfrost_mmu_map_fault_addr's tail after mapping the page: LOCK the region, FLUSH_PT.
    void lock_and_flush(u32 as, u64 va) {
        d().w64(AS_LOCKADDR(as), (va & ~0xFFFull) | 14);  // 32 KiB region around va
        ASSERT_TRUE(jm_as_command(d(), as, AS_COMMAND_LOCK, waiter()));
        ASSERT_TRUE(jm_as_command(d(), as, AS_COMMAND_FLUSH_PT, waiter()));
    }
    // panfrost_mmu_disable: TRANSTAB = MEMATTR = TRANSCFG = 0, UPDATE.
    void disable_as(u32 as) {
        d().w64(AS_TRANSTAB(as), 0);
        d().w64(AS_MEMATTR(as), 0);
        d().w64(AS_TRANSCFG(as), 0);
        ASSERT_TRUE(jm_as_command(d(), as, AS_COMMAND_UPDATE, waiter()));
    }
};

// ---- Translation faults and the growable-heap path ----

struct LevelCase {
    u64 va;
    u32 level;
    const char* name;
};

void PrintTo(const LevelCase& c, std::ostream* os) {
    *os << c.name;
}

class JmMmuFaultLevel : public JmMmu, public ::testing::WithParamInterface<LevelCase> {};

// A WRITE_VALUE to an unmapped VA stalls with a write translation fault at the level whose
// descriptor was missing; mapping the page and LOCK + FLUSH_PT lets the job finish.
TEST_P(JmMmuFaultLevel, WriteStallsThenCompletesAfterTheHeapGrows) {
    bring_up();
    const LevelCase c = GetParam();
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().write_value(c.va + 0x10, kWriteValueImmediate32, 0x600DF00D, 2, j1);
    submit(0, j1);
    expect_stalled(0);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), MMU_INT_PAGE_FAULT(kAs));
    const u32 fs = d().r(AS_FAULTSTATUS(kAs));
    EXPECT_EQ(fs & 0xFF, DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_0 + c.level);
    EXPECT_EQ(fs & AS_FAULTSTATUS_ACCESS_TYPE_MASK, AS_FAULTSTATUS_ACCESS_TYPE_WRITE);
    EXPECT_EQ(fs >> 16, kSourceJobSlot);
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(kAs)), c.va + 0x10);
    EXPECT_EQ(d().r64(JS_HEAD_LO(0)), j2);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, 0u);

    // Clearing the interrupt alone does not resume the job.
    d().w(MMU_INT_CLEAR, MMU_INT_PAGE_FAULT(kAs));
    expect_stalled(0);

    PhysPages page(0x1000);
    pt().map_page(c.va, page.pa());
    lock_and_flush(kAs, c.va);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*reinterpret_cast<u32*>(page.ptr() + 0x10), 0x600DF00Du);
    EXPECT_EQ(arena().header(j2)->exception_status, kJobStatusDone);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), 0u);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
    pt().unmap_page(c.va);
}

INSTANTIATE_TEST_SUITE_P(Levels, JmMmuFaultLevel,
                         ::testing::Values(LevelCase{0x800000000000ull - 0x1000, 0, "Level0"},
                                           LevelCase{0x1'0000'0000ull, 1, "Level1"},
                                           LevelCase{kArenaEnd + 0x100000, 2, "Level2"},
                                           LevelCase{kArenaEnd, 3, "Level3"}),
                         [](const auto& info) { return std::string(info.param.name); });

// The chain head itself unmapped: the header read faults (read access) and resumes the same way.
TEST_F(JmMmu, HeaderReadFaultReportsReadAccessAndResumes) {
    bring_up();
    constexpr u64 kVa = kArenaVa + kArenaSize + 0x3000;
    submit(0, kVa + 0x40);
    expect_stalled(0);
    const u32 fs = d().r(AS_FAULTSTATUS(kAs));
    EXPECT_EQ(fs & 0xFF, DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_3);
    EXPECT_EQ(fs & AS_FAULTSTATUS_ACCESS_TYPE_MASK, AS_FAULTSTATUS_ACCESS_TYPE_READ);
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(kAs)), kVa + 0x40);

    PhysPages page(0x1000);
    auto* h = reinterpret_cast<JobHeader*>(page.ptr() + 0x40);
    h->control = job_control(kJobNull, 1);
    d().w(MMU_INT_CLEAR, ~0u);
    pt().map_page(kVa, page.pa());
    lock_and_flush(kAs, kVa);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(h->exception_status, kJobStatusDone);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
    pt().unmap_page(kVa);
}

// A FLUSH_PT while the fault is still unacknowledged leaves the AS stalled (panfrost clears first).
TEST_F(JmMmu, AsCommandBeforeTheClearDoesNotResume) {
    bring_up();
    constexpr u64 kVa = kArenaVa + kArenaSize;
    const u64 j = arena().write_value(kVa, kWriteValueImmediate32, 1);
    submit(0, j);
    expect_stalled(0);
    PhysPages page(0x1000);
    pt().map_page(kVa, page.pa());
    lock_and_flush(kAs, kVa);
    expect_stalled(0);
    d().w(MMU_INT_CLEAR, MMU_INT_PAGE_FAULT(kAs));
    ASSERT_TRUE(jm_as_command(d(), kAs, AS_COMMAND_FLUSH_MEM, waiter()));
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_DONE);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
    pt().unmap_page(kVa);
}

TEST_F(JmMmu, AsCommandsRaiseNoInterrupt) {
    bring_up();
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), 0u);
    lock_and_flush(kAs, kArenaVa);
    for (u32 cmd : {AS_COMMAND_UNLOCK, AS_COMMAND_FLUSH_MEM, AS_COMMAND_UPDATE, AS_COMMAND_NOP})
        ASSERT_TRUE(jm_as_command(d(), kAs, cmd, waiter()));
    advance(NSEC_PER_MSEC);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), 0u);
}

// ---- Permission faults ----

TEST_F(JmMmu, WriteToReadOnlyPageIsAPermissionFault) {
    bring_up();
    constexpr u64 kVa = kArenaVa + kArenaSize;
    PhysPages page(0x1000);
    pt().map_page(kVa, page.pa(), kMaliRw & ~kMaliWrite);
    const u64 j = arena().write_value(kVa + 8, kWriteValueImmediate64, ~0ull);
    submit(0, j);
    expect_stalled(0);
    const u32 fs = d().r(AS_FAULTSTATUS(kAs));
    EXPECT_EQ(fs & 0xFF, DRM_PANFROST_EXCEPTION_PERM_FAULT_3);
    EXPECT_EQ(fs & AS_FAULTSTATUS_ACCESS_TYPE_MASK, AS_FAULTSTATUS_ACCESS_TYPE_WRITE);
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(kAs)), kVa + 8);
    EXPECT_EQ(*reinterpret_cast<u64*>(page.ptr() + 8), 0u);

    // panfrost does not handle it: it disables the AS, and the stalled job fails.
    d().w(MMU_INT_CLEAR, MMU_INT_PAGE_FAULT(kAs));
    disable_as(kAs);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j);
    EXPECT_EQ(arena().header(j)->exception_status, 0u);
    EXPECT_EQ(*reinterpret_cast<u64*>(page.ptr() + 8), 0u);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
}

TEST_F(JmMmu, ReadOnlyPageCanBeRead) {
    bring_up();
    // The whole chain lives in a read-only arena; with write-back disabled nothing is written.
    constexpr u64 kVa = kArenaVa + kArenaSize;
    JobArena ro(pt(), kVa, 0x1000, kMaliRw & ~kMaliWrite);
    const u64 j = ro.null_job();
    EXPECT_EQ(run_chain(0, j, jm_js_config(kAs) | JS_CONFIG_DISABLE_DESCRIPTOR_WR_BK), DRM_PANFROST_EXCEPTION_DONE);
    // With write-back the DONE status cannot be written: the write-back faults.
    submit(0, j);
    expect_stalled(0);
    EXPECT_EQ(d().r(AS_FAULTSTATUS(kAs)) & 0x3FF,
              DRM_PANFROST_EXCEPTION_PERM_FAULT_3 | AS_FAULTSTATUS_ACCESS_TYPE_WRITE);
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(kAs)), j);
    d().w(MMU_INT_CLEAR, ~0u);
    disable_as(kAs);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
}

// ---- Disabled address spaces ----

TEST_F(JmMmu, DisablingTheStalledAsFailsTheJobWithoutWriteBack) {
    bring_up();
    constexpr u64 kVa = kArenaVa + kArenaSize;
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().write_value(kVa, kWriteValueImmediate32, 1, 2, j1);
    arena().null_job(3, j2);
    submit(0, j1);
    expect_stalled(0);
    d().w(MMU_INT_CLEAR, MMU_INT_PAGE_FAULT(kAs));
    disable_as(kAs);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    EXPECT_EQ(d().r(JOB_INT_RAWSTAT), JOB_INT_MASK_ERR(0));
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, 0u);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));

    // Re-enabling the same AS (FLUSH_MEM, tables, UPDATE) makes the next job on it work.
    d().w(MMU_INT_CLEAR, ~0u);
    ASSERT_TRUE(jm_as_command(d(), kAs, AS_COMMAND_FLUSH_MEM, waiter()));
    ASSERT_TRUE(jm_as_enable(d(), kAs, pt().transtab(), waiter()));
    const u64 target = arena().alloc(8);
    const u64 j = arena().write_value(target, kWriteValueImmediate32, 0xA5A5, 1);
    EXPECT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(target), 0xA5A5u);
}

TEST_F(JmMmu, DisabledAsStatusIsConfigurable) {
    JmConfig cfg;
    cfg.disabled_as_status = DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_1;
    make_gpu(cfg);
    bring_up();
    constexpr u64 kVa = kArenaVa + kArenaSize;
    const u64 j = arena().write_value(kVa, kWriteValueImmediate32, 1);
    submit(0, j);
    expect_stalled(0);
    d().w(MMU_INT_CLEAR, ~0u);
    disable_as(kAs);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_1);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
}

TEST_F(JmMmu, JobOnAnAsNeverEnabledFails) {
    bring_up();
    const u64 j = arena().null_job();
    EXPECT_EQ(run_chain(0, j, jm_js_config(2)), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j);
    // It walked AS 2 (disabled), not kAs: the header in kAs's memory is untouched.
    EXPECT_EQ(arena().header(j)->exception_status, 0u);
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(2)), j);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT) & MMU_INT_PAGE_FAULT(kAs), 0u);
}

// ---- Bus errors ----

TEST_F(JmMmu, TableOutsideMemoryRaisesTheBusErrorBit) {
    bring_up();
    constexpr u64 kBadTable = 0x40000000;  // below the physical arena
    ASSERT_TRUE(jm_as_enable(d(), 2, kBadTable | kMaliTranstabFlags, waiter()));
    const u64 j = arena().null_job();
    // A table walk that hits no memory: TRANSTAB_BUS_FAULT, reported in MMU_INT's upper half.
    jm_submit(d(), 1, j, jm_js_config(2));
    expect_stalled(1);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), MMU_INT_BUS_ERROR(2));
    EXPECT_EQ(d().r(AS_FAULTSTATUS(2)) & 0xFF, DRM_PANFROST_EXCEPTION_TRANSTAB_BUS_FAULT_0);
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(2)), j);
    // panfrost treats it as unhandled: disable the AS, the job fails.
    d().w(MMU_INT_CLEAR, MMU_INT_BUS_ERROR(2));
    disable_as(2);
    EXPECT_EQ(wait_slot(1), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(1));
}

TEST_F(JmMmu, PhysicalAddressOutsideMemoryIsAGpuBusFault) {
    bring_up();
    constexpr u64 kVa = kArenaVa + kArenaSize;
    constexpr u64 kBadPa = 0x40000000;
    pt().map_page(kVa, kBadPa);
    const u64 j = arena().write_value(kVa + 0x20, kWriteValueImmediate32, 1);
    EXPECT_EQ(run_chain(0, j), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    EXPECT_TRUE(d().r(GPU_INT_RAWSTAT) & GPU_IRQ_FAULT);
    EXPECT_EQ(d().r64(GPU_FAULT_ADDRESS_LO), kBadPa + 0x20);
    EXPECT_EQ(d().r(GPU_FAULT_STATUS) & 0xFF, DRM_PANFROST_EXCEPTION_DELAYED_BUS_FAULT);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), 0u);
    EXPECT_EQ(arena().header(j)->exception_status, 0u);
    pt().unmap_page(kVa);
}

// ---- A second address space ----

TEST_F(JmMmu, SecondAsWalksItsOwnTables) {
    bring_up();
    // AS 3 maps the arena's VA range onto other memory with the same chain layout.
    MaliPageTables pt3;
    JobArena other(pt3, kArenaVa, kArenaSize);
    const u64 t1 = arena().alloc(8), t3 = other.alloc(8);
    ASSERT_EQ(t1, t3);
    const u64 j1 = arena().write_value(t1, kWriteValueImmediate32, 0x1111);
    const u64 j3 = other.write_value(t3, kWriteValueImmediate32, 0x3333);
    ASSERT_EQ(j1, j3);
    ASSERT_TRUE(jm_as_enable(d(), 3, pt3.transtab(), waiter()));

    EXPECT_EQ(run_chain(2, j3, jm_js_config(3)), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*other.at<u32>(t3), 0x3333u);
    EXPECT_EQ(other.header(j3)->exception_status, kJobStatusDone);
    EXPECT_EQ(*arena().at<u32>(t1), 0u);
    EXPECT_EQ(arena().header(j1)->exception_status, 0u);
    EXPECT_EQ(run_chain(0, j1), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(*arena().at<u32>(t1), 0x1111u);
}

// ---- FaultPlan MmuFaultAt ----

TEST_F(JmMmu, MmuFaultAtStallsTheNthJobUntilTheAddressIsMapped) {
    bring_up();
    constexpr u64 kVa = kArenaVa + kArenaSize + 0x5000;
    FaultSpec f;
    f.kind = FaultKind::MmuFaultAt;
    f.trigger = FaultTrigger::nth_occurrence(2);
    f.fault_addr = kVa + 0x44;
    f.js = 0;
    const int id = gpu().faults().add(f);
    const u64 j1 = arena().null_job(1);
    const u64 j2 = arena().null_job(2, j1);
    const u64 j3 = arena().null_job(3, j2);
    submit(0, j1);
    expect_stalled(0);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), MMU_INT_PAGE_FAULT(kAs));
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(kAs)), kVa + 0x44);
    EXPECT_EQ(d().r(AS_FAULTSTATUS(kAs)) & 0x3FF,
              DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_3 | AS_FAULTSTATUS_ACCESS_TYPE_READ);
    EXPECT_EQ(d().r64(JS_HEAD_LO(0)), j2);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(arena().header(j2)->exception_status, 0u);

    // Handled without mapping: the access faults again.
    d().w(MMU_INT_CLEAR, ~0u);
    lock_and_flush(kAs, kVa);
    expect_stalled(0);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), MMU_INT_PAGE_FAULT(kAs));

    PhysPages page(0x1000);
    d().w(MMU_INT_CLEAR, ~0u);
    pt().map_page(kVa, page.pa());
    lock_and_flush(kAs, kVa);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(arena().header(j3)->exception_status, kJobStatusDone);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
    pt().unmap_page(kVa);
}

// A job retried after an MMU stall is still one job for FaultPlan's Nth-job triggers.
TEST_F(JmMmu, RetriedJobCountsOnceForNthJobTriggers) {
    bring_up();
    FaultSpec f;
    f.kind = FaultKind::JobFault;
    f.exception = DRM_PANFROST_EXCEPTION_INSTR_INVALID_PC;
    f.trigger = FaultTrigger::nth_occurrence(2);
    gpu().faults().add(f);
    const u64 j1 = arena().write_value(kArenaEnd, kWriteValueImmediate32, 9, 1);
    const u64 j2 = arena().null_job(2, j1);
    submit(0, j1);
    expect_stalled(0);
    PhysPages page(0x1000);
    d().w(MMU_INT_CLEAR, ~0u);
    pt().map_page(kArenaEnd, page.pa());
    lock_and_flush(kAs, kArenaEnd);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_INSTR_INVALID_PC);
    EXPECT_EQ(d().r64(JS_TAIL_LO(0)), j2);
    EXPECT_EQ(arena().header(j1)->exception_status, kJobStatusDone);
    EXPECT_EQ(*reinterpret_cast<u32*>(page.ptr()), 9u);
    EXPECT_EQ(arena().header(j2)->exception_status, DRM_PANFROST_EXCEPTION_INSTR_INVALID_PC);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
    pt().unmap_page(kArenaEnd);
}

TEST_F(JmMmu, MmuFaultAtNarrowedToOneSlot) {
    bring_up();
    FaultSpec f;
    f.kind = FaultKind::MmuFaultAt;
    f.fault_addr = kArenaVa + kArenaSize;
    f.js = 2;
    gpu().faults().add(f);
    EXPECT_EQ(run_chain(0, arena().null_job()), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(run_chain(1, arena().null_job()), DRM_PANFROST_EXCEPTION_DONE);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), 0u);
    submit(2, arena().null_job());
    expect_stalled(2);
    EXPECT_EQ(d().r(MMU_INT_RAWSTAT), MMU_INT_PAGE_FAULT(kAs));
    d().w(MMU_INT_CLEAR, ~0u);
    disable_as(kAs);
    EXPECT_EQ(wait_slot(2), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(2));
}

// ---- Differential: tables written by io-pgtable ARM_MALI_LPAE ----

TEST_F(JmMmu, JobsRunThroughIoPgtableMaliLpaeTables) {
    using namespace iommu;
    bring_up();
    // panfrost_mmu_ctx_create on a G52: ias/oas from MMU_FEATURES, 4K pages and 2M blocks.
    const u32 mmu_features = d().r(GPU_MMU_FEATURES);
    IoPgtableCfg cfg;
    cfg.pgsize_bitmap = SZ_4K | SZ_2M;
    cfg.ias = mmu_features & 0xFF;
    cfg.oas = (mmu_features >> 8) & 0xFF;
    cfg.coherent_walk = false;
    IoPgtableOps* ops = alloc_io_pgtable_ops(IoPgtableFmt::ARM_MALI_LPAE, &cfg, nullptr);
    ASSERT_NE(ops, nullptr);

    constexpr u32 kAs2 = 4;
    constexpr u64 kJobsVa = 0x4000000;    // the chain: 4K pages, read/write, no-exec
    constexpr u64 kBlockVa = 0x6000000;   // a 2M block target
    constexpr u64 kRoVa = 0x7000000;      // a read-only page
    constexpr u64 kSparseVa = 0x7400000;  // pages with holes between them
    MaliPageTables unused;
    JobArena jobs(unused, kJobsVa, 0x4000);
    PhysPages block(SZ_2M);
    PhysPages ro(0x1000), sparse(0x2000);
    ASSERT_EQ(block.pa() % SZ_2M, 0u);
    size_t mapped = 0;
    const int rw = IOMMU_READ | IOMMU_WRITE | IOMMU_NOEXEC;
    ASSERT_EQ(ops->map_pages(kJobsVa, jobs.pa(), SZ_4K, jobs.size() / SZ_4K, rw, kshim::GFP_KERNEL, &mapped), 0);
    ASSERT_EQ(ops->map_pages(kBlockVa, block.pa(), SZ_2M, 1, rw, kshim::GFP_KERNEL, &mapped), 0);
    ASSERT_EQ(ops->map_pages(kRoVa, ro.pa(), SZ_4K, 1, IOMMU_READ | IOMMU_NOEXEC, kshim::GFP_KERNEL, &mapped), 0);
    ASSERT_EQ(ops->map_pages(kSparseVa, sparse.pa(), SZ_4K, 1, rw, kshim::GFP_KERNEL, &mapped), 0);
    ASSERT_EQ(ops->map_pages(kSparseVa + 0x2000, sparse.pa() + 0x1000, SZ_4K, 1, rw, kshim::GFP_KERNEL, &mapped), 0);
    ASSERT_TRUE(jm_as_enable(d(), kAs2, cfg.arm_mali_lpae_cfg.transtab, waiter(), cfg.arm_mali_lpae_cfg.memattr));

    // Each target written through the GPU lands where io-pgtable's iova_to_phys says.
    const u64 targets[] = {kBlockVa, kBlockVa + 0x1FFFF8, kBlockVa + 0x123450, kSparseVa + 0x18, kSparseVa + 0x2FF0};
    u64 prev = 0, first = 0;
    for (u32 i = 0; i < std::size(targets); i++) {
        prev = jobs.write_value(targets[i], kWriteValueImmediate64, 0xD1FF000000000000ull | i, i + 1, prev);
        if (!first)
            first = prev;
    }
    ASSERT_EQ(run_chain(0, first, jm_js_config(kAs2)), DRM_PANFROST_EXCEPTION_DONE);
    for (u32 i = 0; i < std::size(targets); i++) {
        const u64 pa = ops->iova_to_phys(targets[i]);
        ASSERT_NE(pa, 0u) << i;
        EXPECT_EQ(*static_cast<u64*>(kshim::phys_to_virt(pa)), 0xD1FF000000000000ull | i) << i;
    }
    EXPECT_EQ(*reinterpret_cast<u64*>(block.ptr() + 0x123450), 0xD1FF000000000002ull);
    EXPECT_EQ(*reinterpret_cast<u64*>(sparse.ptr() + 0x1FF0), 0xD1FF000000000004ull);

    // The hole between the sparse pages faults at level 3; the read-only page with a permission fault.
    const struct {
        u64 va;
        u32 status;
    } faults[] = {{kSparseVa + 0x1000, DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_3},
                  {kRoVa + 8, DRM_PANFROST_EXCEPTION_PERM_FAULT_3},
                  {0x9000000, DRM_PANFROST_EXCEPTION_TRANSLATION_FAULT_2}};
    for (const auto& fc : faults) {
        const u64 j = jobs.write_value(fc.va, kWriteValueImmediate32, 1);
        jm_submit(d(), 0, j, jm_js_config(kAs2));
        expect_stalled(0);
        EXPECT_EQ(d().r(AS_FAULTSTATUS(kAs2)) & 0x3FF, fc.status | AS_FAULTSTATUS_ACCESS_TYPE_WRITE)
            << std::hex << fc.va;
        EXPECT_EQ(d().r64(AS_FAULTADDRESS(kAs2)), fc.va);
        // Handle it as panfrost would a fault outside a heap: disable, fail, re-enable.
        d().w(MMU_INT_CLEAR, ~0u);
        disable_as(kAs2);
        EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
        d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
        d().w(MMU_INT_CLEAR, ~0u);
        ASSERT_TRUE(jm_as_enable(d(), kAs2, cfg.arm_mali_lpae_cfg.transtab, waiter(), cfg.arm_mali_lpae_cfg.memattr));
    }
    EXPECT_EQ(*reinterpret_cast<u64*>(ro.ptr() + 8), 0u);

    // Unmapping through io-pgtable (with the LOCK + FLUSH_PT panfrost issues) takes the page away.
    ASSERT_EQ(ops->unmap_pages(kSparseVa, SZ_4K, 1, nullptr), SZ_4K);
    lock_and_flush(kAs2, kSparseVa);
    const u64 j = jobs.write_value(kSparseVa + 0x18, kWriteValueImmediate32, 2);
    jm_submit(d(), 0, j, jm_js_config(kAs2));
    expect_stalled(0);
    EXPECT_EQ(d().r64(AS_FAULTADDRESS(kAs2)), kSparseVa + 0x18);
    d().w(MMU_INT_CLEAR, ~0u);
    disable_as(kAs2);
    EXPECT_EQ(wait_slot(0), DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT);
    d().w(JOB_INT_CLEAR, MK_JS_MASK(0));
    free_io_pgtable_ops(ops);
}

}  // namespace
}  // namespace mock_jm::testing
