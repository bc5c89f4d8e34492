// hw/jm/: the Job Manager contract decodes what a driver and the GPU exchange (docs/hw/jm/):
// register addresses, command numbers, job headers and payloads built from raw bytes as they sit
// in GPU memory, exception names and the identity of the reference parts. Every expected value is
// computed by hand from the documentation pages, not from the header under test.
#include <gtest/gtest.h>

#include <cstring>

#include "hw/jm/job_desc.h"
#include "hw/jm/models.h"
#include "hw/jm/regs/exceptions.h"
#include "hw/jm/regs/gpu_regs.h"
#include "hw/jm/regs/job_regs.h"
#include "hw/jm/regs/mmu_regs.h"

namespace panfrost {
namespace {

template <typename T>
T from_bytes(const uint8_t* bytes) {
    T v;
    std::memcpy(&v, bytes, sizeof(T));
    return v;
}

TEST(HwJmRegs, JobSlotRegistersSitAtTheirSlotStride) {
    EXPECT_EQ(JS_HEAD_LO(0), 0x1800u);
    EXPECT_EQ(JS_STATUS(0), 0x1824u);
    EXPECT_EQ(JS_HEAD_NEXT_LO(1), 0x18C0u);
    EXPECT_EQ(JS_FLUSH_ID_NEXT(1), 0x18F0u);
    EXPECT_EQ(JS_CONFIG_NEXT(2), 0x1958u);
    EXPECT_EQ(JS_TAIL_HI(2), 0x190Cu);
    EXPECT_EQ(JS_XAFFINITY_NEXT(2), 0x195Cu);
    EXPECT_EQ(JOB_INT_JS_STATE, 0x1010u);
    EXPECT_EQ(MK_JS_MASK(0) | MK_JS_MASK(1) | MK_JS_MASK(2), 0x00070007u) << "panfrost's JOB_INT_MASK";
    EXPECT_EQ(JOB_INT_MASK_ERR(1), 0x00020000u);
}

TEST(HwJmRegs, JsCommandNumbersAndTheStopVariants) {
    const uint32_t expected[] = {0, 1, 2, 3, 4, 5, 6, 7};
    const uint32_t cmds[] = {JS_COMMAND_NOP,         JS_COMMAND_START,       JS_COMMAND_SOFT_STOP,
                             JS_COMMAND_HARD_STOP,   JS_COMMAND_SOFT_STOP_0, JS_COMMAND_HARD_STOP_0,
                             JS_COMMAND_SOFT_STOP_1, JS_COMMAND_HARD_STOP_1};
    for (size_t i = 0; i < 8; i++)
        EXPECT_EQ(cmds[i], expected[i]);
    // cmd: is stop, is hard, is conditional, flag required (for conditional ones)
    struct Row {
        uint32_t cmd;
        bool stop, hard, cond;
        uint32_t flag;
    };
    const Row rows[] = {{0, false, false, false, 0}, {1, false, false, false, 0}, {2, true, false, false, 0},
                        {3, true, true, false, 0},   {4, true, false, true, 0},   {5, true, true, true, 0},
                        {6, true, false, true, 1},   {7, true, true, true, 1},    {8, false, false, false, 0}};
    for (const Row& r : rows) {
        EXPECT_EQ(JS_COMMAND_IS_STOP(r.cmd), r.stop) << r.cmd;
        EXPECT_EQ(JS_COMMAND_IS_HARD_STOP(r.cmd), r.hard) << r.cmd;
        EXPECT_EQ(JS_COMMAND_IS_CONDITIONAL(r.cmd), r.cond) << r.cmd;
        if (r.cond) {
            EXPECT_EQ(JS_COMMAND_REQUIRED_FLAG(r.cmd), r.flag) << r.cmd;
        }
    }
}

TEST(HwJmRegs, JsConfigAsPanfrostWritesIt) {
    // AS 1, clean+invalidate at start and end, chain flag set, priority 8.
    const uint32_t cfg = 0x00083B01;
    EXPECT_EQ(JS_CONFIG_AS(cfg), 1u);
    EXPECT_EQ(JS_CONFIG_START_FLUSH(cfg), 3u);
    EXPECT_EQ(JS_CONFIG_END_FLUSH(cfg), 3u);
    EXPECT_EQ(JS_CONFIG_CHAIN_FLAG(cfg), 1u);
    EXPECT_EQ(cfg & JS_CONFIG_DISABLE_DESCRIPTOR_WR_BK, 0u);
    EXPECT_EQ(cfg >> JS_CONFIG_THREAD_PRI_SHIFT, 8u);
    EXPECT_EQ(JS_CONFIG_CHAIN_FLAG(0x00083301), 0u);
}

TEST(HwJmRegs, GpuControl) {
    EXPECT_EQ(GPU_CMD_SOFT_RESET, 1u);
    EXPECT_EQ(GPU_CMD_HARD_RESET, 2u);
    EXPECT_EQ(GPU_CMD_CYCLE_COUNT_START, 5u);
    EXPECT_EQ(GPU_CMD_CLEAN_INV_CACHES, 8u);
    EXPECT_EQ(GPU_IRQ_MASK_ALL, 0x00030781u);
    EXPECT_EQ(GPU_IRQ_MASK_ERROR | GPU_IRQ_PERFCNT_SAMPLE_COMPLETED | GPU_IRQ_CLEAN_CACHES_COMPLETED, 0x00030081u)
        << "the mask panfrost sets after a reset";
    EXPECT_EQ(L2_PWRON_LO, 0x1A0u);
    EXPECT_EQ(TILER_PWRTRANS_LO, 0x210u);
    EXPECT_EQ(SHADER_READY_HI, 0x144u);
    EXPECT_EQ(GPU_JS_FEATURES(2), 0xC8u);
    EXPECT_EQ(GPU_LATEST_FLUSH_ID, 0x38u);
    EXPECT_EQ(GPU_JM_CONFIG, 0xF00u);
    const uint32_t id = 0x74021000;  // Mali-G52 r1
    EXPECT_EQ(GPU_ARCH_MAJOR(id), 7u);
    EXPECT_EQ(GPU_ARCH_MINOR(id), 4u);
    EXPECT_EQ(GPU_PROD_MAJOR(id), 2u);
    EXPECT_EQ(GPU_VER_MAJOR(id), 1u);
    EXPECT_EQ(GPU_ID_PRODUCT(id), 0x7402u);
    EXPECT_EQ(GPU_ID_REVISION(0x08602000), 0x2000u);
    EXPECT_EQ(GPU_MMU_FEATURES_VA_BITS(0x2823), 35u);
}

TEST(HwJmRegs, MmuSharedWithCsfPlusMaliLpae) {
    EXPECT_EQ(AS_TRANSTAB_LO(3), 0x24C0u);
    EXPECT_EQ(AS_COMMAND(7), 0x25D8u);
    EXPECT_EQ(AS_TRANSCFG_HI(15), 0x27F4u);
    EXPECT_EQ(MMU_INT_PAGE_FAULT(2), 0x4u);
    EXPECT_EQ(MMU_INT_BUS_ERROR(2), 0x40000u);
    // An AS_FAULTSTATUS a mock raises for a write to an unmapped level-3 entry.
    const uint32_t fs = 0xC3 | AS_FAULTSTATUS_ACCESS_TYPE_WRITE;
    EXPECT_EQ(fs, 0x3C3u);
    EXPECT_EQ(fs & AS_FAULTSTATUS_EXCEPTION_TYPE_MASK, 0xC3u);
    // TRANSTAB as panfrost programs Mali-LPAE: table, inner-cacheable and outer-shareable walks.
    const uint64_t transtab =
        0x12345000 | AS_TRANSTAB_LPAE_ADRMODE_TABLE | AS_TRANSTAB_LPAE_READ_INNER | AS_TRANSTAB_LPAE_SHARE_OUTER;
    EXPECT_EQ(transtab, 0x12345017ull);
    EXPECT_EQ(transtab & AS_TRANSTAB_LPAE_ADDR_SPACE_MASK, 0x12345000ull);
    const uint64_t va = 0x8080604000ull;  // indices 1, 2, 3, 4
    for (uint32_t level = 0; level < MALI_LPAE_LEVELS; level++)
        EXPECT_EQ(MALI_LPAE_INDEX(va, level), level + 1);
    // A level-3 read/write page at PA 0xABCDE000, AttrIndx 1.
    const uint64_t pte = 0xABCDE000ull | MALI_LPAE_PTE_TYPE_BLOCK | (1ull << MALI_LPAE_PTE_ATTRINDX_SHIFT) |
                         MALI_LPAE_PTE_READ | MALI_LPAE_PTE_WRITE | (2ull << MALI_LPAE_PTE_SH_SHIFT);
    EXPECT_EQ(pte, 0xABCDE2C5ull);
    EXPECT_EQ(pte & MALI_LPAE_PTE_ADDR_MASK, 0xABCDE000ull);
}

TEST(HwJmExceptions, CodesAndNames) {
    EXPECT_EQ(DRM_PANFROST_EXCEPTION_STOPPED, 0x03);
    EXPECT_EQ(DRM_PANFROST_EXCEPTION_TERMINATED, 0x04);
    EXPECT_EQ(DRM_PANFROST_EXCEPTION_ACTIVE, 0x08);
    EXPECT_EQ(DRM_PANFROST_EXCEPTION_JOB_BUS_FAULT, 0x48);
    EXPECT_EQ(DRM_PANFROST_EXCEPTION_MEM_ATTR_NONCACHE_3, 0xEF);
    EXPECT_EQ(exception_name(0x40), "JOB_CONFIG_FAULT");
    EXPECT_EQ(exception_name(0x04), "TERMINATED");
    EXPECT_EQ(exception_name(0xC7), "TRANSLATION_FAULT_IDENTITY");
    EXPECT_EQ(exception_name(0xEC), "MEM_ATTR_NONCACHE_0");
    EXPECT_TRUE(exception_name(0x49).empty()) << "a CSF-only code";
    EXPECT_EQ(translation_fault_at_level(2), 0xC2);
    EXPECT_EQ(perm_fault_at_level(3), 0xCB);
    EXPECT_FALSE(exception_is_fault(0x3F));
    EXPECT_TRUE(exception_is_fault(0x40));
}

TEST(HwJmJobDesc, HeaderDecodedFromRawBytes) {
    // IGT's loop job: WRITE_VALUE, barrier, invalidate cache, suppress prefetch, index 1; depends on
    // jobs 2 and 3; next at 0x1_0000_2040.
    const uint8_t raw[32] = {0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
                             0,    0,    0,    0,    0,    0x05, 0x0B, 0x01, 0x00, 0x02, 0x00,
                             0x03, 0x00, 0x40, 0x20, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00};
    const auto h = from_bytes<desc::JobHeader>(raw);
    EXPECT_EQ(h.control, 0x00010B05u);
    EXPECT_EQ(desc::job_type(h.control), desc::kJobWriteValue);
    EXPECT_TRUE(desc::job_barrier(h.control));
    EXPECT_TRUE(desc::job_is_64b(h.control));
    EXPECT_EQ(desc::job_index(h.control), 1u);
    EXPECT_NE(h.control & desc::kJobSuppressPrefetch, 0u);
    EXPECT_NE(h.control & desc::kJobInvalidateCache, 0u);
    EXPECT_EQ(h.dependency_1, 2u);
    EXPECT_EQ(h.dependency_2, 3u);
    EXPECT_EQ(desc::job_next(h, false), 0x100002040ull);

    // The same header with a 32-bit next pointer: only the word at 0x18 counts (not on v9).
    desc::JobHeader h32 = h;
    h32.control &= ~desc::kJobIs64b;
    EXPECT_EQ(desc::job_next(h32, false), 0x2040ull);
    EXPECT_EQ(desc::job_next(h32, true), 0x100002040ull);

    // Built with the helper, a fragment job with index 7 reads back as such.
    const uint32_t c = desc::job_control(desc::kJobFragment, 7, false, true);
    EXPECT_EQ(c, 0x00070013u);
    EXPECT_EQ(desc::job_type(c), 9u);
}

TEST(HwJmJobDesc, JobTypesPerArchitecture) {
    EXPECT_TRUE(desc::job_type_exists(desc::kJobIndexedVertex, 7));
    EXPECT_FALSE(desc::job_type_exists(desc::kJobIndexedVertex, 5));
    EXPECT_FALSE(desc::job_type_exists(desc::kJobVertex, 9));
    EXPECT_TRUE(desc::job_type_exists(desc::kJobMallocVertex, 9));
    EXPECT_FALSE(desc::job_type_exists(desc::kJobMallocVertex, 7));
    EXPECT_FALSE(desc::job_type_exists(12, 7));
    EXPECT_FALSE(desc::job_type_exists(0x7F, 9));
}

TEST(HwJmJobDesc, WriteValueAndCacheFlushPayloads) {
    // job + 0x20: address 0x8000_1000, type Immediate 32 (6), immediate 0x1122334455667788.
    const uint8_t raw[24] = {0x00, 0x10, 0x00, 0x80, 0,    0,    0,    0,    0x06, 0,    0,    0,
                             0,    0,    0,    0,    0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
    const auto wv = from_bytes<desc::WriteValuePayload>(raw);
    EXPECT_EQ(wv.address, 0x80001000ull);
    EXPECT_EQ(wv.type, desc::kWriteValueImmediate32);
    EXPECT_EQ(wv.immediate, 0x1122334455667788ull);
    const uint32_t widths[] = {0, 8, 8, 8, 1, 2, 4, 8, 0};
    for (uint32_t t = 0; t < 9; t++)
        EXPECT_EQ(desc::write_value_width(t), widths[t]) << t;
    EXPECT_EQ(desc::kWriteValueJobSize, 56u);

    // CACHE_FLUSH: clean+invalidate everything.
    const uint8_t flush_raw[8] = {0x03, 0x00, 0x03, 0x03, 0x03, 0x00, 0x00, 0x00};
    const auto cf = from_bytes<desc::CacheFlushPayload>(flush_raw);
    EXPECT_EQ(cf.word0, desc::kFlushCleanShaderCoreLs | desc::kFlushInvalidateShaderCoreLs |
                            desc::kFlushJobManagerClean | desc::kFlushJobManagerInvalidate | desc::kFlushTilerClean |
                            desc::kFlushTilerInvalidate);
    EXPECT_EQ(cf.word1, desc::kFlushL2Clean | desc::kFlushL2Invalidate);
}

TEST(HwJmJobDesc, InvocationSizesAComputeJob) {
    // Workgroup 8x4x1, 16x2x3 workgroups, packed as Mesa does: fields one after the other, each
    // as wide as its largest value minus one needs (3, 2, 0, 4, 1 and 2 bits).
    const desc::Invocation inv{0x00000BFF, 0x028914A3};
    EXPECT_EQ(desc::invocation_field(inv, desc::kSizeX), 8u);
    EXPECT_EQ(desc::invocation_field(inv, desc::kSizeY), 4u);
    EXPECT_EQ(desc::invocation_field(inv, desc::kSizeZ), 1u);
    EXPECT_EQ(desc::invocation_field(inv, desc::kCountX), 16u);
    EXPECT_EQ(desc::invocation_field(inv, desc::kCountY), 2u);
    EXPECT_EQ(desc::invocation_field(inv, desc::kCountZ), 3u);
    EXPECT_EQ(desc::invocation_total(inv), 3072u);
    EXPECT_EQ(desc::invocation_total(desc::Invocation{0, 0}), 1u) << "a zero invocation word is one thread";
}

TEST(HwJmJobDesc, FragmentTileBounds) {
    // A 1920x1088 frame in 16x16 tiles: tiles (0,0)..(119,67).
    desc::FragmentPayload f{};
    f.bound_min = desc::fragment_bound(0, 0);
    f.bound_max = desc::fragment_bound(119, 67);
    EXPECT_EQ(f.bound_max, 0x00430077u);
    EXPECT_EQ(desc::fragment_tile_count(f), 8160u);
    f.bound_min = desc::fragment_bound(120, 0);
    EXPECT_EQ(desc::fragment_tile_count(f), 0u);
}

TEST(HwJmModels, ReferencePartsIdentity) {
    EXPECT_EQ(kG52R1.gpu_id, 0x74021000u);
    EXPECT_EQ(kModelG52.features, 0xCF7u);
    EXPECT_EQ(kModelG52.issues | kHwIssuesAll, 0x400u);
    EXPECT_EQ(kModelG57.features, 0x19F7u);
    EXPECT_EQ(kModelT860.issues | kHwIssuesAll, 0x24040400u);
    EXPECT_EQ(kT860R2p0.shader_present, 0xFu);
    EXPECT_EQ(gpu_revision(1, 0), 0x1000u);
    EXPECT_EQ(issue_bit(HW_ISSUE_TTRX_3076), 0x100000000ull);
}

}  // namespace
}  // namespace panfrost
