// The MMU: translation through hand-built LPAE tables (4 KiB pages, 2 MiB blocks), every fault
// kind with its latched status, stalls until clear + UPDATE, TLB staleness until a flush, AS
// commands with AS_ACTIVE and the command-complete interrupt.
#include "hw/csf/regs/exceptions.h"
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {
namespace {

using Mmu = MockHwTest;
using Status = MemResult::Status;

constexpr u64 kVa = 0x0000'0012'3400'0000ull;

u32 fault_status(u8 exc, Access acc, u32 source = kSourceTest) {
    return exc | (static_cast<u32>(acc) << 8) | (source << 16);
}

TEST_F(Mmu, TranslatesPagesThroughHandBuiltTables) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages a(0x1000), b(0x1000);
    pt.map_page(kVa, a.pa());
    pt.map_page(kVa + 0x1000, b.pa());  // not contiguous with a
    enable_as(d, 1, pt.root_pa());
    std::memcpy(a.ptr() + 0xFF8, "ABCDEFGH", 8);
    std::memcpy(b.ptr(), "IJKLMNOP", 8);
    char buf[17] = {};
    ASSERT_TRUE(gpu.mmu().read(1, kVa + 0xFF8, buf, 16, Access::Read, kSourceTest).ok());
    EXPECT_STREQ(buf, "ABCDEFGHIJKLMNOP");
    const u64 v = 0x1122334455667788ull;
    ASSERT_TRUE(gpu.mmu().write(1, kVa + 0x1010, &v, 8, kSourceTest).ok());
    EXPECT_EQ(std::memcmp(b.ptr() + 0x10, &v, 8), 0);
    // The same tables through another AS that is not enabled: nothing.
    EXPECT_EQ(gpu.mmu().read(2, kVa, buf, 4, Access::Read, kSourceTest).status, Status::Unmapped);
}

TEST_F(Mmu, TranslatesTwoMegabyteBlocks) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages mem(4 << 20);
    const u64 pa = (mem.pa() + (2 << 20) - 1) & ~u64{(2 << 20) - 1};
    u8* host = mem.ptr() + (pa - mem.pa());
    pt.map_block_2m(kVa, pa);
    enable_as(d, 3, pt.root_pa());
    u32 v = 0xC0FFEE;
    std::memcpy(host + 0x1ABCD0, &v, 4);
    u32 out = 0;
    ASSERT_TRUE(gpu.mmu().read(3, kVa + 0x1ABCD0, &out, 4, Access::Read, kSourceTest).ok());
    EXPECT_EQ(out, 0xC0FFEEu);
    kshim::SpinGuard g(gpu.lock());
    u64 phys = 0;
    ASSERT_TRUE(gpu.mmu().translate_locked(3, kVa + 0x1FFFFF, Access::Read, kSourceTest, &phys).ok());
    EXPECT_EQ(phys, pa + 0x1FFFFF);
}

TEST_F(Mmu, IdentityModeMapsVaToPa) {
    Gpu gpu;
    Drv d{gpu};
    PhysPages a(0x1000);
    enable_as(d, 1, 0, AS_TRANSCFG_ADRMODE_IDENTITY);
    a.ptr()[5] = 0x5A;
    u8 out = 0;
    ASSERT_TRUE(gpu.mmu().read(1, a.pa() + 5, &out, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(out, 0x5A);
}

struct FaultCase {
    const char* name;
    u8 exception;
    Access access;
    // Builds the tables; returns the VA to access.
    u64 (*setup)(PageTables& pt, PhysPages& mem);
    u64 memattr = kMemattr;
};

class MmuFault : public MockHwTest, public ::testing::WithParamInterface<FaultCase> {};

TEST_P(MmuFault, LatchesStatusAddressAndStallsUntilClearAndUpdate) {
    const FaultCase& c = GetParam();
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages mem(0x1000);
    const u64 va = c.setup(pt, mem);
    enable_as(d, 2, pt.root_pa(), kTranscfg48, c.memattr);
    d.w(MMU_INT_MASK, 0xFFFF);
    u64 buf = 0;
    MemResult r = c.access == Access::Write ? gpu.mmu().write(2, va, &buf, 8, kSourceTest)
                                            : gpu.mmu().read(2, va, &buf, 8, c.access, kSourceTest);
    EXPECT_EQ(r.status, Status::Fault);
    EXPECT_EQ(r.exception, c.exception);
    EXPECT_EQ(d.r(AS_FAULTSTATUS(2)), fault_status(c.exception, c.access));
    EXPECT_EQ(d.r64(AS_FAULTADDRESS(2)), va);
    EXPECT_EQ(d.r(MMU_INT_RAWSTAT), MMU_INT_PAGE_FAULT(2) | MMU_INT_REQ_COMPLETE(2));
    EXPECT_TRUE(gpu.irq_mmu().level());
    EXPECT_TRUE(d.r(GPU_STATUS) & GPU_STATUS_PAGE_FAULT);

    // The AS stops translating: even a good address stalls now.
    PhysPages good(0x1000);
    pt.map_page(0x10000, good.pa());
    EXPECT_EQ(gpu.mmu().read(2, 0x10000, &buf, 8, Access::Read, kSourceTest).status, Status::Stalled);
    // UPDATE alone does not resume while the fault interrupt is pending...
    as_command(d, 2, AS_COMMAND_UPDATE);
    EXPECT_EQ(gpu.mmu().read(2, 0x10000, &buf, 8, Access::Read, kSourceTest).status, Status::Stalled);
    // ...clear, then UPDATE, does.
    d.w(MMU_INT_CLEAR, MMU_INT_PAGE_FAULT(2));
    EXPECT_FALSE(gpu.irq_mmu().level());
    as_command(d, 2, AS_COMMAND_UPDATE);
    EXPECT_TRUE(gpu.mmu().read(2, 0x10000, &buf, 8, Access::Read, kSourceTest).ok());
}

u64 setup_l0(PageTables&, PhysPages&) {
    return kVa;
}
u64 setup_l1(PageTables& pt, PhysPages&) {
    pt.slot(kVa, 1);
    return kVa;
}
u64 setup_l2(PageTables& pt, PhysPages&) {
    pt.slot(kVa, 2);
    return kVa;
}
u64 setup_l3(PageTables& pt, PhysPages&) {
    pt.slot(kVa, 3);
    return kVa;
}
u64 setup_ro(PageTables& pt, PhysPages& m) {
    pt.map_page(kVa, m.pa(), kPteRw | kPteApRdonly);
    return kVa + 8;
}
u64 setup_xn(PageTables& pt, PhysPages& m) {
    pt.map_page(kVa, m.pa(), kPteRw | kPteXn);
    return kVa;
}
u64 setup_ro_block(PageTables& pt, PhysPages&) {
    pt.map_block_2m(kVa, 0x80000000ull + (64ull << 20), kPteRw | kPteApRdonly);  // never dereferenced
    return kVa + 0x100;
}
u64 setup_af(PageTables& pt, PhysPages& m) {
    pt.map_page(kVa, m.pa(), kPteRw & ~kPteAf);
    return kVa;
}
u64 setup_in(PageTables&, PhysPages&) {
    return 1ull << 48;
}
u64 setup_out(PageTables& pt, PhysPages&) {
    pt.map_page(kVa, 1ull << 41);  // beyond the 40-bit PA
    return kVa;
}
u64 setup_memattr(PageTables& pt, PhysPages& m) {
    pt.map_page(kVa, m.pa(), (kPteRw & ~(7ull << 2)) | (7ull << 2));  // AttrIndx 7
    return kVa;
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, MmuFault,
    ::testing::Values(FaultCase{"Translation0", DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0, Access::Read, setup_l0},
                      FaultCase{"Translation1", DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_1, Access::Read, setup_l1},
                      FaultCase{"Translation2", DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_2, Access::Write, setup_l2},
                      FaultCase{"Translation3", DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_3, Access::Read, setup_l3},
                      FaultCase{"PermWriteReadOnly", DRM_PANTHOR_EXCEPTION_PERM_FAULT_3, Access::Write, setup_ro},
                      FaultCase{"PermAtomicReadOnly", DRM_PANTHOR_EXCEPTION_PERM_FAULT_3, Access::Atomic, setup_ro},
                      FaultCase{"PermWriteReadOnlyBlock", DRM_PANTHOR_EXCEPTION_PERM_FAULT_2, Access::Write,
                                setup_ro_block},
                      FaultCase{"PermExecuteXn", DRM_PANTHOR_EXCEPTION_PERM_FAULT_3, Access::Execute, setup_xn},
                      FaultCase{"AccessFlag", DRM_PANTHOR_EXCEPTION_ACCESS_FLAG_3, Access::Read, setup_af},
                      FaultCase{"AddressSizeIn", DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_IN, Access::Read, setup_in},
                      FaultCase{"AddressSizeOut", DRM_PANTHOR_EXCEPTION_ADDR_SIZE_FAULT_OUT3, Access::Read, setup_out},
                      FaultCase{"MemAttr", DRM_PANTHOR_EXCEPTION_MEM_ATTR_FAULT_3, Access::Read, setup_memattr,
                                (kMemattr & ~(0xFFull << 56)) | (u64{AS_MEMATTR_AARCH64_FAULT} << 56)}),
    [](const auto& info) { return std::string(info.param.name); });

TEST_F(Mmu, ReadOnlyPageAllowsReadsAndXnAllowsData) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages m(0x1000);
    pt.map_page(kVa, m.pa(), kPteRw | kPteApRdonly | kPteXn);
    enable_as(d, 1, pt.root_pa());
    u32 v;
    EXPECT_TRUE(gpu.mmu().read(1, kVa, &v, 4, Access::Read, kSourceTest).ok());
    EXPECT_EQ(d.r(MMU_INT_RAWSTAT) & 0xFFFF, 0u);
}

TEST_F(Mmu, DisabledAddressSpaceTerminatesAccesses) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages m(0x1000);
    pt.map_page(kVa, m.pa());
    enable_as(d, 1, pt.root_pa());
    // panthor_mmu_as_disable: TRANSTAB 0, MEMATTR 0, TRANSCFG UNMAPPED, UPDATE.
    enable_as(d, 1, 0, AS_TRANSCFG_ADRMODE_UNMAPPED, 0);
    u32 v;
    MemResult r = gpu.mmu().read(1, kVa, &v, 4, Access::Read, kSourceTest);
    EXPECT_EQ(r.status, Status::Unmapped);
    EXPECT_EQ(d.r(AS_FAULTSTATUS(1)), fault_status(DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0, Access::Read));
    EXPECT_TRUE(d.r(MMU_INT_RAWSTAT) & MMU_INT_PAGE_FAULT(1));
    // Not a stall: the next access is terminated the same way.
    EXPECT_EQ(gpu.mmu().read(1, kVa, &v, 4, Access::Read, kSourceTest).status, Status::Unmapped);
}

TEST_F(Mmu, StalledAccessSeesUnmappedAfterTheDriverDisablesTheAs) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    enable_as(d, 4, pt.root_pa());
    std::vector<u32> updates;
    gpu.mmu().set_command_listener([&](u32 as, u32 cmd) {
        if (cmd == AS_COMMAND_UPDATE)
            updates.push_back(as);
    });
    u32 v;
    EXPECT_EQ(gpu.mmu().read(4, kVa, &v, 4, Access::Read, kSourceTest).status, Status::Fault);
    // panthor's MMU IRQ path: clear, then disable the AS.
    d.w(MMU_INT_CLEAR, MMU_INT_PAGE_FAULT(4));
    enable_as(d, 4, 0, AS_TRANSCFG_ADRMODE_UNMAPPED, 0);
    ASSERT_EQ(updates, std::vector<u32>{4});
    EXPECT_EQ(gpu.mmu().read(4, kVa, &v, 4, Access::Read, kSourceTest).status, Status::Unmapped);
}

TEST_F(Mmu, BusFaultOutsideMemoryRaisesGpuFault) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    pt.map_page(kVa, 0x10000000);  // below the arena: no RAM there
    enable_as(d, 1, pt.root_pa());
    u32 v;
    MemResult r = gpu.mmu().read(1, kVa, &v, 4, Access::Read, kSourceTest);
    EXPECT_EQ(r.status, Status::BusFault);
    const u32 st = d.r(GPU_FAULT_STATUS);
    EXPECT_EQ(st & 0xFF, DRM_PANTHOR_EXCEPTION_GPU_BUS_FAULT);
    EXPECT_EQ((st >> 8) & 3, static_cast<u32>(Access::Read));
    EXPECT_TRUE(st & GPU_FAULT_STATUS_ADDRESS_VALID);
    EXPECT_EQ(d.r64(GPU_FAULT_ADDR), 0x10000000u);
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_FAULT);
}

TEST_F(Mmu, TableOutsideMemoryIsATranstabBusFault) {
    Gpu gpu;
    Drv d{gpu};
    enable_as(d, 1, 0x10000000);
    u32 v;
    MemResult r = gpu.mmu().read(1, kVa, &v, 4, Access::Read, kSourceTest);
    EXPECT_EQ(r.status, Status::Fault);
    EXPECT_EQ(r.exception, kTranstabBusFault0);
}

TEST_F(Mmu, TlbKeepsStaleTranslationUntilFlushed) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages a(0x1000), b(0x1000);
    a.ptr()[0] = 'A';
    b.ptr()[0] = 'B';
    pt.map_page(kVa, a.pa());
    enable_as(d, 1, pt.root_pa());
    char c = 0;
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'A');
    // Remap without telling the MMU: the TLB still has the old page.
    pt.map_page(kVa, b.pa());
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'A');
    // A flush of an unrelated region keeps it stale.
    lock_and(d, 1, kVa + (1 << 20), 0x1000, AS_COMMAND_UNLOCK);
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'A');
    // Current panthor: LOCK, GPU_CMD flush, UNLOCK.
    lock_and(d, 1, kVa, 0x1000, AS_COMMAND_UNLOCK);
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'B');
    // Older panthor: LOCK then FLUSH_PT.
    pt.map_page(kVa, a.pa());
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'B');
    lock_and(d, 1, kVa, 0x1000, AS_COMMAND_FLUSH_PT);
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'A');
    // FLUSH_MEM and UPDATE invalidate too.
    pt.map_page(kVa, b.pa());
    lock_and(d, 1, kVa, 0x1000, AS_COMMAND_FLUSH_MEM);
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'B');
    pt.map_page(kVa, a.pa());
    as_command(d, 1, AS_COMMAND_UPDATE);
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'A');
}

// The newest panthor recycles a slot without unmapping it (disable = GPU_CMD FLUSH_CACHES only)
// and enables the next VM without a flush: the UPDATE that programs the new tables is what drops
// the previous VM's translations. FLUSH_CACHES alone (a data-cache operation) keeps them.
TEST_F(Mmu, RecycledSlotTranslatesWithTheNewTablesAfterUpdate) {
    Gpu gpu;
    Drv d{gpu};
    PageTables vm_a, vm_b;
    PhysPages a(0x1000), b(0x1000);
    a.ptr()[0] = 'A';
    b.ptr()[0] = 'B';
    vm_a.map_page(kVa, a.pa());
    vm_b.map_page(kVa, b.pa());
    enable_as(d, 1, vm_a.root_pa());
    char c = 0;
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'A');

    d.w(GPU_CMD, GPU_FLUSH_CACHES(CACHE_CLEAN | CACHE_INV, CACHE_CLEAN | CACHE_INV, CACHE_INV));
    ASSERT_TRUE(wait([&] { return (d.r(GPU_INT_RAWSTAT) & GPU_IRQ_CLEAN_CACHES_COMPLETED) != 0; }));
    d.w(GPU_INT_CLEAR, GPU_IRQ_CLEAN_CACHES_COMPLETED);
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'A');  // still VM A's: nothing told the MMU yet

    enable_as(d, 1, vm_b.root_pa());
    ASSERT_TRUE(gpu.mmu().read(1, kVa, &c, 1, Access::Read, kSourceTest).ok());
    EXPECT_EQ(c, 'B');
}

TEST_F(Mmu, LockRegionEncodingCoversTheRequestedRange) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages a(0x1000), b(0x1000);
    const u64 base = 0x4000000;
    pt.map_page(base + 0x3F000, a.pa());  // last page of a 256 KiB region
    pt.map_page(base + 0x40000, a.pa());  // first page after it
    enable_as(d, 1, pt.root_pa());
    char c;
    gpu.mmu().read(1, base + 0x3F000, &c, 1, Access::Read, kSourceTest);
    gpu.mmu().read(1, base + 0x40000, &c, 1, Access::Read, kSourceTest);
    pt.map_page(base + 0x3F000, b.pa());
    pt.map_page(base + 0x40000, b.pa());
    // w = 17: 2^18 = 256 KiB starting at base.
    d.w64(AS_LOCKADDR(1), base | 17);
    as_command(d, 1, AS_COMMAND_LOCK);
    as_command(d, 1, AS_COMMAND_UNLOCK);
    kshim::SpinGuard g(gpu.lock());
    u64 pa;
    ASSERT_TRUE(gpu.mmu().translate_locked(1, base + 0x3F000, Access::Read, kSourceTest, &pa).ok());
    EXPECT_EQ(pa, b.pa());
    ASSERT_TRUE(gpu.mmu().translate_locked(1, base + 0x40000, Access::Read, kSourceTest, &pa).ok());
    EXPECT_EQ(pa, a.pa());  // outside the locked region: still stale
}

TEST_F(Mmu, AsActiveDuringCommandAndCompletionInterrupt) {
    GpuConfig cfg;
    cfg.lat.as_command = 20 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    d.w(AS_COMMAND(5), AS_COMMAND_UPDATE);
    EXPECT_EQ(d.r(AS_STATUS(5)), AS_STATUS_AS_ACTIVE);
    // A command while active is ignored (the driver must wait_ready first).
    d.w(AS_COMMAND(5), AS_COMMAND_LOCK);
    EXPECT_EQ(gpu.mmu().ignored_commands(), 1u);
    advance(19 * NSEC_PER_USEC);
    EXPECT_EQ(d.r(AS_STATUS(5)), AS_STATUS_AS_ACTIVE);
    EXPECT_EQ(d.r(MMU_INT_RAWSTAT), 0u);
    advance(NSEC_PER_USEC);
    EXPECT_EQ(d.r(AS_STATUS(5)), 0u);
    EXPECT_EQ(d.r(MMU_INT_RAWSTAT), MMU_INT_REQ_COMPLETE(5));
    // panthor's mask (faults only) keeps the line low for command completion.
    d.w(MMU_INT_MASK, 0xFFFF);
    EXPECT_FALSE(gpu.irq_mmu().level());
}

TEST_F(Mmu, RegistersTakeEffectOnlyOnUpdate) {
    Gpu gpu;
    Drv d{gpu};
    PageTables pt;
    PhysPages a(0x1000);
    pt.map_page(kVa, a.pa());
    d.w64(AS_TRANSTAB(1), pt.root_pa());
    d.w64(AS_MEMATTR(1), kMemattr);
    d.w64(AS_TRANSCFG(1), kTranscfg48);
    u32 v;
    EXPECT_EQ(gpu.mmu().read(1, kVa, &v, 4, Access::Read, kSourceTest).status, Status::Unmapped);
    d.w(MMU_INT_CLEAR, ~0u);
    as_command(d, 1, AS_COMMAND_UPDATE);
    EXPECT_TRUE(gpu.mmu().read(1, kVa, &v, 4, Access::Read, kSourceTest).ok());
    EXPECT_EQ(d.r64(AS_TRANSCFG(1)), kTranscfg48);
}

}  // namespace
}  // namespace mock_hw::testing
