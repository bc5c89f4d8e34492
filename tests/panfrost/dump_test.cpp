// The devcoredump of a job timeout (panfrost_dump.c): an endless job times out, the dump is
// present on the device and decodes in upstream's PANFROSTDUMP format: one header per object,
// the REG object with the slot's and AS's registers, the BOMAP with every page's physical address,
// one BO object per BO with its bytes and GPU VA, the trailer. One dump per arming (dump_core).
#include <cstring>
#include <vector>

#include "hw/jm/regs/gpu_regs.h"
#include "hw/jm/regs/job_regs.h"
#include "hw/jm/regs/mmu_regs.h"
#include "kernel_shim/devcoredump.h"
#include "kernel_shim/log.h"
#include "kernel_shim/page_alloc.h"
#include "panfrost/panfrost_gem.h"
#include "tests/panfrost/pf_job_fixture.h"

namespace panfrost::testing {
namespace {

class PanfrostDumpTest : public PfJobTest {
protected:
    void TearDown() override {
        kshim::dev_coredump_put(dev());
        PfJobTest::TearDown();
    }
    std::vector<char> read_dump() {
        std::vector<char> out;
        const ssize_t size = kshim::devcd_size(dev());
        if (size <= 0)
            return out;
        out.resize(static_cast<size_t>(size));
        EXPECT_EQ(kshim::devcd_read(dev(), out.data(), 0, out.size()), size);
        return out;
    }
};

TEST_F(PanfrostDumpTest, JobTimeoutTakesADecodableCoredump) {
    JobBo bo = job_bo(64 * 1024);
    JobBo data = job_bo(8 * 1024);
    // Recognisable contents in the second BO.
    for (size_t i = 0; i < data.size; i++)
        data.cpu[i] = static_cast<kshim::u8>(i * 7 + 3);
    const u64 jc = bo.endless();
    EXPECT_FALSE(kshim::dev_coredump_pending(dev()));
    kshim::dma_fence* f = submit_fenced({.jc = jc, .bos = {bo.handle, data.handle}});
    ASSERT_TRUE(wait_signaled(f, 2 * kshim::NSEC_PER_SEC));
    ASSERT_TRUE(kshim::log_contains("gpu sched timeout, js=1"));
    ASSERT_TRUE(kshim::dev_coredump_pending(dev()));
    EXPECT_FALSE(pfdev->dump_core.load()) << "one dump until re-armed";

    const std::vector<char> d = read_dump();
    ASSERT_GT(d.size(), 5 * sizeof(panfrost_dump_object_header));
    auto hdr = [&](size_t i) {
        panfrost_dump_object_header h;
        std::memcpy(&h, d.data() + i * sizeof(h), sizeof(h));
        return h;
    };
    // REG, BOMAP, two BOs, TRAILER.
    const panfrost_dump_object_header reg_h = hdr(0);
    EXPECT_EQ(reg_h.magic, PANFROSTDUMP_MAGIC);
    EXPECT_EQ(reg_h.type, PANFROSTDUMP_BUF_REG);
    EXPECT_EQ(reg_h.file_offset, 5 * sizeof(panfrost_dump_object_header)) << "data after the five headers";
    EXPECT_EQ(reg_h.reghdr.jc, jc);
    EXPECT_EQ(reg_h.reghdr.gpu_id, pfdev->features.id);
    EXPECT_EQ(reg_h.reghdr.major, PANFROSTDUMP_MAJOR);
    EXPECT_EQ(reg_h.reghdr.minor, PANFROSTDUMP_MINOR);
    EXPECT_EQ(reg_h.reghdr.nbos, 2u);
    ASSERT_EQ(reg_h.file_size % sizeof(panfrost_dump_registers), 0u);
    const size_t nregs = reg_h.file_size / sizeof(panfrost_dump_registers);
    EXPECT_EQ(nregs, 31u);
    std::vector<panfrost_dump_registers> regs(nregs);
    std::memcpy(regs.data(), d.data() + reg_h.file_offset, reg_h.file_size);
    auto value_of = [&](u32 r) -> std::optional<u32> {
        for (const auto& e : regs)
            if (e.reg == r)
                return e.value;
        return std::nullopt;
    };
    // Slot 1's registers (relocated from slot 0's), the job's AS's.
    EXPECT_EQ(value_of(JS_HEAD_LO(0)), std::nullopt);
    ASSERT_TRUE(value_of(JS_CONFIG(1)));
    EXPECT_EQ(*value_of(JS_CONFIG(1)) & JS_CONFIG_AS_MASK, value_of(JS_CONFIG(1)).value() & 0xf);
    const u32 as = *value_of(JS_CONFIG(1)) & 0xf;
    ASSERT_TRUE(value_of(AS_TRANSTAB_LO(as))) << as;
    EXPECT_NE(*value_of(AS_TRANSTAB_LO(as)), 0u) << "the AS was bound when the dump was taken";
    EXPECT_EQ(value_of(SHADER_READY_LO), static_cast<u32>(pfdev->features.shader_present));
    EXPECT_TRUE(value_of(JOB_INT_MASK));
    EXPECT_TRUE(value_of(MMU_INT_STAT));
    const u64 head = *value_of(JS_HEAD_LO(1)) | (u64{*value_of(JS_HEAD_HI(1))} << 32);
    EXPECT_GE(head, bo.va);
    EXPECT_LT(head, bo.va + bo.size) << "the slot runs the endless chain";

    const panfrost_dump_object_header bomap_h = hdr(1);
    EXPECT_EQ(bomap_h.magic, PANFROSTDUMP_MAGIC);
    EXPECT_EQ(bomap_h.type, PANFROSTDUMP_BUF_BOMAP);
    EXPECT_EQ(bomap_h.file_offset, reg_h.file_offset + reg_h.file_size);
    const size_t npages = (bo.size + data.size) / kshim::PAGE_SIZE;
    ASSERT_EQ(bomap_h.file_size, npages * sizeof(u64));
    std::vector<u64> bomap(npages);
    std::memcpy(bomap.data(), d.data() + bomap_h.file_offset, bomap_h.file_size);

    u32 expect_offset = bomap_h.file_offset + bomap_h.file_size;
    const JobBo* bos[2] = {&bo, &data};
    for (size_t i = 0; i < 2; i++) {
        const panfrost_dump_object_header h = hdr(2 + i);
        EXPECT_EQ(h.magic, PANFROSTDUMP_MAGIC);
        EXPECT_EQ(h.type, PANFROSTDUMP_BUF_BO);
        EXPECT_EQ(h.file_offset, expect_offset);
        ASSERT_EQ(h.file_size, bos[i]->size);
        EXPECT_EQ(h.bomap.valid, 1u);
        EXPECT_EQ(h.bomap.iova, bos[i]->va);
        // The BO's bytes, and the BOMAP's physical address of each page holds them.
        EXPECT_EQ(std::memcmp(d.data() + h.file_offset, bos[i]->cpu, bos[i]->size), 0) << i;
        const u32 first = h.bomap.data[0];
        EXPECT_EQ(first, i == 0 ? 0u : bo.size / kshim::PAGE_SIZE);
        for (size_t p = 0; p < bos[i]->size / kshim::PAGE_SIZE; p++) {
            const void* page = kshim::phys_to_virt(bomap[first + p]);
            EXPECT_EQ(std::memcmp(page, d.data() + h.file_offset + p * kshim::PAGE_SIZE, kshim::PAGE_SIZE), 0)
                << i << "/" << p;
        }
        expect_offset += h.file_size;
    }
    const panfrost_dump_object_header trailer = hdr(4);
    EXPECT_EQ(trailer.magic, PANFROSTDUMP_MAGIC);
    EXPECT_EQ(trailer.type, PANFROSTDUMP_BUF_TRAILER);
    EXPECT_EQ(trailer.file_offset, expect_offset);
    EXPECT_EQ(trailer.file_size, 0u);
    EXPECT_EQ(d.size(), expect_offset);
}

TEST_F(PanfrostDumpTest, OnlyTheFirstTimeoutIsDumpedUntilRearmed) {
    JobBo bo = job_bo();
    kshim::dma_fence* f1 = submit_fenced({.jc = bo.endless(), .bos = {bo.handle}});
    ASSERT_TRUE(wait_signaled(f1, 2 * kshim::NSEC_PER_SEC));
    ASSERT_TRUE(kshim::dev_coredump_pending(dev()));
    ASSERT_EQ(kshim::dev_coredump_clear(dev()), 0);
    advance(kshim::NSEC_PER_MSEC);

    JobBo bo2 = job_bo();
    kshim::dma_fence* f2 = submit_fenced({.jc = bo2.endless(), .bos = {bo2.handle}});
    ASSERT_TRUE(wait_signaled(f2, 2 * kshim::NSEC_PER_SEC));
    EXPECT_FALSE(kshim::dev_coredump_pending(dev())) << "dump_core is one-shot";

    pfdev->dump_core.store(true);
    JobBo bo3 = job_bo();
    kshim::dma_fence* f3 = submit_fenced({.jc = bo3.endless(), .bos = {bo3.handle}});
    ASSERT_TRUE(wait_signaled(f3, 2 * kshim::NSEC_PER_SEC));
    EXPECT_TRUE(kshim::dev_coredump_pending(dev())) << "re-armed";
    const std::vector<char> d = read_dump();
    ASSERT_GE(d.size(), sizeof(panfrost_dump_object_header));
    panfrost_dump_object_header h;
    std::memcpy(&h, d.data(), sizeof(h));
    EXPECT_EQ(h.reghdr.nbos, 1u);
}

}  // namespace
}  // namespace panfrost::testing
