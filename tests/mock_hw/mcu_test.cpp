// The MCU: boot through AS 0, interface discovery by following the control blocks, the GLB
// req/ack protocol for each request, the IDLE event, halt/fast restart, reset/rebuild, disable.
#include <algorithm>

#include "hw/csf/regs/exceptions.h"
#include "tests/mock_hw/mock_test.h"

namespace mock_hw::testing {
namespace {

class Mcu : public MockHwTest {
protected:
    // panthor_fw_init's order: L2 on, MCU VM (AS 0) enabled, JOB IRQ unmasked, MCU_CONTROL AUTO.
    void start(Gpu& gpu, FwLoader& fw, bool expect_boot = true) {
        Drv d{gpu};
        d.w64(L2_PWRON, 1);
        ASSERT_TRUE(wait([&] { return d.r64(L2_READY) == 1; }));
        enable_as(d, 0, fw.pt.root_pa());
        d.w(JOB_INT_MASK, ~0u);
        d.w(MCU_CONTROL, MCU_CONTROL_AUTO);
        const bool booted = wait([&] { return d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF; }, 1000 * NSEC_PER_MSEC);
        EXPECT_EQ(booted, expect_boot);
        if (booted)
            d.w(JOB_INT_CLEAR, JOB_INT_GLOBAL_IF);
    }
    panthor_fw_global_control_iface* glb_ctrl(FwLoader& fw) {
        return fw.host<panthor_fw_global_control_iface>(CSF_MCU_SHARED_REGION_START);
    }
    panthor_fw_global_input_iface* glb_in(FwLoader& fw) {
        return fw.host<panthor_fw_global_input_iface>(glb_ctrl(fw)->input_va);
    }
    panthor_fw_global_output_iface* glb_out(FwLoader& fw) {
        return fw.host<panthor_fw_global_output_iface>(glb_ctrl(fw)->output_va);
    }
    // panthor_fw_toggle_reqs + ring doorbell 0.
    void toggle_and_ring(Drv& d, FwLoader& fw, u32 bits) {
        auto* in = glb_in(fw);
        auto* out = glb_out(fw);
        in->req = (in->req & ~bits) | ((out->ack ^ bits) & bits);
        d.w(CSF_DOORBELL(CSF_GLB_DOORBELL_ID), 1);
    }
    bool acked(FwLoader& fw, u32 bits) { return ((glb_in(fw)->req ^ glb_out(fw)->ack) & bits) == 0; }
};

TEST_F(Mcu, BootsThroughAs0AndRaisesGlobalIrq) {
    GpuConfig cfg;
    cfg.lat.mcu_boot = 200 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    d.w64(L2_PWRON, 1);
    enable_as(d, 0, fw.pt.root_pa());
    d.w(JOB_INT_MASK, ~0u);
    d.w(MCU_CONTROL, MCU_CONTROL_AUTO);
    EXPECT_EQ(d.r(MCU_CONTROL), MCU_CONTROL_AUTO);
    EXPECT_EQ(glb_ctrl(fw)->version, 0u);
    advance(199 * NSEC_PER_USEC);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_DISABLED);
    EXPECT_FALSE(gpu.irq_job().level());
    advance(NSEC_PER_USEC);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_ENABLED);
    EXPECT_TRUE(d.r(JOB_INT_STAT) & JOB_INT_GLOBAL_IF);
    EXPECT_TRUE(gpu.irq_job().level());
    EXPECT_EQ(glb_ctrl(fw)->version, CSF_IFACE_VERSION(1, 1, 0));
    EXPECT_EQ(d.r(AS_FAULTSTATUS(0)), 0u);
}

TEST_F(Mcu, InterfaceDiscoveryByFollowingControlBlocks) {
    Gpu gpu;
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    const u32 base = CSF_MCU_SHARED_REGION_START;
    const FwImage img = default_fw_image();
    const FwSection* shared = img.find(base);
    auto in_shared = [&](u32 va, u32 size) { return va >= base && va + size <= shared->va_end; };
    // Every block, to check that none overlaps another.
    std::vector<std::pair<u32, u32>> blocks;

    auto* glb = glb_ctrl(fw);
    EXPECT_EQ(glb->version, 0x01010000u);
    EXPECT_EQ(glb->instr_features, 0x71u);
    EXPECT_EQ(glb->group_num, 8u);
    EXPECT_TRUE(in_shared(glb->input_va, sizeof(panthor_fw_global_input_iface)));
    EXPECT_TRUE(in_shared(glb->output_va, sizeof(panthor_fw_global_output_iface)));
    blocks.push_back({base, sizeof(*glb)});
    blocks.push_back({glb->input_va, sizeof(panthor_fw_global_input_iface)});
    blocks.push_back({glb->output_va, sizeof(panthor_fw_global_output_iface)});
    for (u32 i = 0; i < glb->group_num; i++) {
        const u32 csg_va = base + CSF_GROUP_CONTROL_OFFSET + i * glb->group_stride;
        auto* csg = fw.host<panthor_fw_csg_control_iface>(csg_va);
        ASSERT_NE(csg, nullptr);
        EXPECT_EQ(csg->stream_num, 8u);
        EXPECT_EQ(csg->suspend_size, gpu.config().mcu.suspend_size);
        EXPECT_EQ(csg->protm_suspend_size, gpu.config().mcu.protm_suspend_size);
        EXPECT_GE(csg->stream_stride, sizeof(panthor_fw_cs_control_iface));
        EXPECT_TRUE(in_shared(csg->input_va, sizeof(panthor_fw_csg_input_iface)));
        EXPECT_TRUE(in_shared(csg->output_va, sizeof(panthor_fw_csg_output_iface)));
        blocks.push_back({csg_va, CSF_STREAM_CONTROL_OFFSET});
        blocks.push_back({csg->input_va, sizeof(panthor_fw_csg_input_iface)});
        blocks.push_back({csg->output_va, sizeof(panthor_fw_csg_output_iface)});
        for (u32 j = 0; j < csg->stream_num; j++) {
            const u32 cs_va = csg_va + CSF_STREAM_CONTROL_OFFSET + j * csg->stream_stride;
            auto* cs = fw.host<panthor_fw_cs_control_iface>(cs_va);
            EXPECT_EQ(CS_FEATURES_WORK_REGS(cs->features), 96u);
            EXPECT_EQ(CS_FEATURES_SCOREBOARDS(cs->features), 8u);
            EXPECT_EQ(cs->features & (CS_FEATURES_COMPUTE | CS_FEATURES_FRAGMENT | CS_FEATURES_TILER),
                      CS_FEATURES_COMPUTE | CS_FEATURES_FRAGMENT | CS_FEATURES_TILER);
            EXPECT_TRUE(in_shared(cs->input_va, sizeof(panthor_fw_cs_input_iface)));
            EXPECT_TRUE(in_shared(cs->output_va, sizeof(panthor_fw_cs_output_iface)));
            blocks.push_back({cs_va, sizeof(*cs)});
            blocks.push_back({cs->input_va, sizeof(panthor_fw_cs_input_iface)});
            blocks.push_back({cs->output_va, sizeof(panthor_fw_cs_output_iface)});
        }
    }
    std::sort(blocks.begin(), blocks.end());
    for (size_t k = 1; k < blocks.size(); k++)
        EXPECT_LE(blocks[k - 1].first + blocks[k - 1].second, blocks[k].first) << "blocks " << k - 1 << " and " << k;
}

TEST_F(Mcu, GroupCountIsConfigurable) {
    GpuConfig cfg;
    cfg.mcu.group_num = 3;
    Gpu gpu(cfg);
    FwLoader fw(default_fw_image(cfg.mcu));
    start(gpu, fw);
    EXPECT_EQ(glb_ctrl(fw)->group_num, 3u);
}

TEST_F(Mcu, BootWithoutAs0MappingFails) {
    Gpu gpu;
    Drv d{gpu};
    d.w(JOB_INT_MASK, ~0u);
    d.w(MCU_CONTROL, MCU_CONTROL_AUTO);  // AS 0 never enabled
    EXPECT_FALSE(wait([&] { return d.r(JOB_INT_RAWSTAT) != 0; }, 1000 * NSEC_PER_MSEC));
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_FATAL);
    // The instruction fetch through the disabled AS 0 faulted there.
    EXPECT_TRUE(d.r(MMU_INT_RAWSTAT) & MMU_INT_PAGE_FAULT(0));
    EXPECT_EQ(d.r(AS_FAULTSTATUS(0)) & 0x3FF,
              DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0 | AS_FAULTSTATUS_ACCESS_TYPE_EX);
}

TEST_F(Mcu, BootWithoutSharedSectionFails) {
    Gpu gpu;
    Drv d{gpu};
    FwImage img = default_fw_image();
    img.sections.pop_back();  // the shared section
    FwLoader fw(img);
    start(gpu, fw, false);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_FATAL);
    EXPECT_EQ(d.r64(AS_FAULTADDRESS(0)), CSF_MCU_SHARED_REGION_START);
    EXPECT_EQ(d.r(AS_FAULTSTATUS(0)) & AS_FAULTSTATUS_ACCESS_TYPE_MASK, AS_FAULTSTATUS_ACCESS_TYPE_WRITE);
}

TEST_F(Mcu, BootWithoutFirmwareCodeFails) {
    Gpu gpu;
    Drv d{gpu};
    FwImage img = default_fw_image();
    img.sections[0].data.assign(16, 0);  // no mock firmware header
    FwLoader fw(img);
    start(gpu, fw, false);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_FATAL);
    EXPECT_EQ(d.r(MMU_INT_RAWSTAT) & 0xFFFF, 0u);
}

struct GlbRequest {
    const char* name;
    u32 bit;
};

class GlbReq : public Mcu, public ::testing::WithParamInterface<GlbRequest> {};

TEST_P(GlbReq, AckedWithIrqWhenInAckIrqMask) {
    GpuConfig cfg;
    cfg.lat.glb_request = 7 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    const u32 bit = GetParam().bit;
    auto* in = glb_in(fw);
    in->progress_timer = 0x271000;
    in->poweroff_timer = 235;
    in->core_en_mask = 0x50005;
    in->idle_timer = 19;
    for (bool in_mask : {true, false}) {
        in->ack_irq_mask = in_mask ? bit : 0;
        d.w(JOB_INT_CLEAR, ~0u);
        toggle_and_ring(d, fw, bit);
        EXPECT_FALSE(acked(fw, bit));
        advance(6 * NSEC_PER_USEC);
        EXPECT_FALSE(acked(fw, bit));
        advance(NSEC_PER_USEC);
        EXPECT_TRUE(acked(fw, bit));
        EXPECT_EQ((d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF) != 0, in_mask);
    }
    // Other request bits were not acked along the way.
    EXPECT_EQ((in->req ^ glb_out(fw)->ack) & GLB_REQ_MASK, 0u);
    kshim::SpinGuard g(gpu.lock());
    if (bit == GLB_CFG_PROGRESS_TIMER) {
        EXPECT_EQ(gpu.mcu().progress_timer_locked(), 0x271000u);
    }
    if (bit == GLB_CFG_POWEROFF_TIMER) {
        EXPECT_EQ(gpu.mcu().poweroff_timer_locked(), 235u);
    }
    if (bit == GLB_CFG_ALLOC_EN) {
        EXPECT_EQ(gpu.mcu().core_en_mask_locked(), 0x50005u);
    }
}

INSTANTIATE_TEST_SUITE_P(Requests, GlbReq,
                         ::testing::Values(GlbRequest{"CfgProgressTimer", GLB_CFG_PROGRESS_TIMER},
                                           GlbRequest{"CfgAllocEn", GLB_CFG_ALLOC_EN},
                                           GlbRequest{"CfgPoweroffTimer", GLB_CFG_POWEROFF_TIMER},
                                           GlbRequest{"Ping", GLB_PING}, GlbRequest{"IdleEn", GLB_IDLE_EN},
                                           GlbRequest{"CounterEn", GLB_COUNTER_EN},
                                           GlbRequest{"ProtmEnter", GLB_PROTM_ENTER},
                                           GlbRequest{"FwcfgUpdate", GLB_FWCFG_UPDATE}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST_F(Mcu, PanthorInitSequenceAcksAllAtOnce) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    auto* in = glb_in(fw);
    // panthor_fw_init_global_iface.
    in->core_en_mask = d.r64(GPU_SHADER_PRESENT);
    in->poweroff_timer = 235;
    in->progress_timer = 0x271000;
    in->idle_timer = 19;
    in->ack_irq_mask = 0x0400050E;
    in->req |= GLB_IDLE_EN;
    toggle_and_ring(d, fw, GLB_CFG_ALLOC_EN | GLB_CFG_POWEROFF_TIMER | GLB_CFG_PROGRESS_TIMER);
    ASSERT_TRUE(wait([&] { return acked(fw, GLB_REQ_MASK); }));
    EXPECT_TRUE(gpu.irq_job().level());
    kshim::SpinGuard g(gpu.lock());
    EXPECT_TRUE(gpu.mcu().idle_enabled_locked());
    EXPECT_EQ(gpu.mcu().core_en_mask_locked(), 0x50005u);
}

TEST_F(Mcu, CounterEnRunsTheCycleCounter) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    glb_in(fw)->req |= GLB_COUNTER_EN;
    d.w(CSF_DOORBELL(0), 1);
    ASSERT_TRUE(wait([&] { return acked(fw, GLB_COUNTER_EN); }));
    const u64 c0 = d.read_counter(GPU_CYCLE_COUNT);
    advance(NSEC_PER_USEC);
    EXPECT_EQ(d.read_counter(GPU_CYCLE_COUNT) - c0, 1000u);  // 1 GHz
}

TEST_F(Mcu, IdleEventAfterIdleTimer) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    auto* in = glb_in(fw);
    auto* out = glb_out(fw);
    in->idle_timer = 19;  // 800 us at 24 MHz -> 19 * 1024 ticks = 810.67 us
    in->ack_irq_mask = 0x0400050E;
    in->req |= GLB_IDLE_EN;
    d.w(CSF_DOORBELL(0), 1);
    ASSERT_TRUE(wait([&] { return acked(fw, GLB_IDLE_EN); }));
    const auto t0 = kshim::ktime_get();
    d.w(JOB_INT_CLEAR, ~0u);
    EXPECT_TRUE(wait([&] { return ((in->req ^ out->ack) & GLB_IDLE) != 0; }, 10 * NSEC_PER_MSEC));
    const auto waited = kshim::ktime_get() - t0;
    EXPECT_EQ(waited, static_cast<kshim::ktime_t>(19ull * 1024 * 1'000'000'000 / 24'000'000));
    EXPECT_TRUE(d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF);
    // The host acks the event by copying ack into req; no second IDLE while still idle.
    in->req = (in->req & ~GLB_IDLE) | (out->ack & GLB_IDLE);
    d.w(JOB_INT_CLEAR, ~0u);
    advance(10 * NSEC_PER_MSEC);
    EXPECT_EQ((in->req ^ out->ack) & GLB_IDLE, 0u);
    EXPECT_EQ(d.r(JOB_INT_RAWSTAT), 0u);
    // Work, then idle again: a new IDLE event (the CS engine reports busy/idle).
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.mcu().set_busy_locked(true);
    }
    advance(5 * NSEC_PER_MSEC);
    EXPECT_EQ((in->req ^ out->ack) & GLB_IDLE, 0u);
    EXPECT_TRUE(d.r(GPU_STATUS) & GPU_STATUS_ACTIVE);
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.mcu().set_busy_locked(false);
    }
    EXPECT_TRUE(wait([&] { return ((in->req ^ out->ack) & GLB_IDLE) != 0; }, 10 * NSEC_PER_MSEC));
    // IDLE_EN cleared: no more events.
    in->req = (in->req & ~(GLB_IDLE | GLB_IDLE_EN)) | (out->ack & GLB_IDLE);
    d.w(CSF_DOORBELL(0), 1);
    ASSERT_TRUE(wait([&] { return acked(fw, GLB_IDLE_EN); }));
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.mcu().set_busy_locked(true);
        gpu.mcu().set_busy_locked(false);
    }
    advance(10 * NSEC_PER_MSEC);
    EXPECT_EQ((in->req ^ out->ack) & GLB_IDLE, 0u);
}

TEST_F(Mcu, FirmwarePowersShaderCoresWithPoweroffTimer) {
    Gpu gpu;
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    auto* in = glb_in(fw);
    in->core_en_mask = 0x5;
    in->poweroff_timer = 235;  // ~10 ms at 24 MHz
    toggle_and_ring(d, fw, GLB_CFG_ALLOC_EN | GLB_CFG_POWEROFF_TIMER);
    ASSERT_TRUE(wait([&] { return acked(fw, GLB_CFG_ALLOC_EN | GLB_CFG_POWEROFF_TIMER); }));
    EXPECT_EQ(d.r64(SHADER_READY), 0u);
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.mcu().set_busy_locked(true);
    }
    ASSERT_TRUE(wait([&] { return d.r64(SHADER_READY) == 0x5; }));
    EXPECT_EQ(d.r64(TILER_READY), 1u);
    {
        kshim::SpinGuard g(gpu.lock());
        gpu.mcu().set_busy_locked(false);
    }
    advance(9 * NSEC_PER_MSEC);
    EXPECT_EQ(d.r64(SHADER_READY), 0x5u);
    ASSERT_TRUE(wait([&] { return d.r64(SHADER_READY) == 0; }, 5 * NSEC_PER_MSEC));
}

TEST_F(Mcu, HaltThenFastRestartKeepsTheInterface) {
    GpuConfig cfg;
    cfg.lat.mcu_halt = 15 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    auto* out = glb_out(fw);
    auto* csg0_out = fw.host<panthor_fw_csg_output_iface>(
        fw.host<panthor_fw_csg_control_iface>(CSF_MCU_SHARED_REGION_START + CSF_GROUP_CONTROL_OFFSET)->output_va);
    csg0_out->status_state = 0xDEAD;  // FW-owned state that a fast restart must keep
    const u32 ack_before = out->ack;
    // panthor_fw_pre_reset: set HALT, ring, poll MCU_STATUS == HALT.
    glb_in(fw)->req |= GLB_HALT;
    d.w(CSF_DOORBELL(0), 1);
    ASSERT_TRUE(wait([&] { return d.r(MCU_STATUS) == MCU_STATUS_HALT; }));
    EXPECT_EQ(out->ack & GLB_HALT, 0u);  // HALT is not acked in GLB_ACK
    EXPECT_TRUE(d.r(GPU_INT_RAWSTAT) & GPU_IRQ_MCU_STATUS_CHANGED);
    // While halted, doorbells are not served.
    toggle_and_ring(d, fw, GLB_PING);
    advance(NSEC_PER_MSEC);
    EXPECT_FALSE(acked(fw, GLB_PING));
    // panthor_fw_post_reset (fast): clear HALT, start.
    glb_in(fw)->req &= ~GLB_HALT;
    d.w(MCU_CONTROL, MCU_CONTROL_AUTO);
    ASSERT_TRUE(wait([&] { return d.r(JOB_INT_RAWSTAT) & JOB_INT_GLOBAL_IF; }));
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_ENABLED);
    EXPECT_EQ(csg0_out->status_state, 0xDEADu);
    EXPECT_EQ(out->ack, ack_before);
    d.w(CSF_DOORBELL(0), 1);
    EXPECT_TRUE(wait([&] { return acked(fw, GLB_PING); }));
}

TEST_F(Mcu, RestartAfterResetRebuildsAtTheSameAddresses) {
    Gpu gpu;
    Drv d{gpu};
    FwImage img = default_fw_image();
    FwLoader fw(img);
    start(gpu, fw);
    const panthor_fw_global_control_iface before = *glb_ctrl(fw);
    auto* out = glb_out(fw);
    toggle_and_ring(d, fw, GLB_PING);
    ASSERT_TRUE(wait([&] { return acked(fw, GLB_PING); }));
    ASSERT_NE(out->ack, 0u);
    // panthor's reset work: soft reset, L2 on, sections reloaded, AS 0, start.
    d.w(GPU_INT_CLEAR, GPU_IRQ_RESET_COMPLETED);
    d.w(GPU_CMD, GPU_SOFT_RESET);
    ASSERT_TRUE(wait([&] { return d.r(GPU_INT_RAWSTAT) & GPU_IRQ_RESET_COMPLETED; }));
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_DISABLED);
    fw.reload(img);
    EXPECT_EQ(glb_ctrl(fw)->version, 0u);
    start(gpu, fw);
    EXPECT_EQ(std::memcmp(glb_ctrl(fw), &before, sizeof(before)), 0);
    EXPECT_EQ(out->ack, 0u);
    toggle_and_ring(d, fw, GLB_PING);
    EXPECT_TRUE(wait([&] { return acked(fw, GLB_PING); }));
}

TEST_F(Mcu, DisableStopsTheMcu) {
    GpuConfig cfg;
    cfg.lat.mcu_disable = 12 * NSEC_PER_USEC;
    Gpu gpu(cfg);
    Drv d{gpu};
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    d.w(MCU_CONTROL, MCU_CONTROL_DISABLE);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_ENABLED);
    advance(12 * NSEC_PER_USEC);
    EXPECT_EQ(d.r(MCU_STATUS), MCU_STATUS_DISABLED);
    toggle_and_ring(d, fw, GLB_PING);
    advance(NSEC_PER_MSEC);
    EXPECT_FALSE(acked(fw, GLB_PING));
}

struct RecordingEngine : CsfEngine {
    std::vector<u32> csg_doorbells, user_doorbells;
    int started_cold = 0, started_warm = 0, stopped = 0;
    void csg_doorbell_locked(u32 m) override { csg_doorbells.push_back(m); }
    void user_doorbell_locked(u32 i) override { user_doorbells.push_back(i); }
    void mcu_started_locked(bool cold) override { (cold ? started_cold : started_warm)++; }
    void mcu_stopped_locked() override { stopped++; }
};

TEST_F(Mcu, CsgDoorbellReqIsAckedAndHandedToTheEngine) {
    Gpu gpu;
    Drv d{gpu};
    RecordingEngine eng;
    gpu.mcu().set_engine(&eng);
    FwLoader fw(default_fw_image());
    start(gpu, fw);
    EXPECT_EQ(eng.started_cold, 1);
    // panthor_csg_slots_ring: toggle doorbell_req bits, ring doorbell 0.
    glb_in(fw)->doorbell_req ^= 0x5;
    d.w(CSF_DOORBELL(0), 1);
    ASSERT_TRUE(wait([&] { return glb_out(fw)->doorbell_ack == glb_in(fw)->doorbell_req; }));
    ASSERT_EQ(eng.csg_doorbells, std::vector<u32>{0x5});
    d.w(CSF_DOORBELL(3), 1);
    EXPECT_EQ(eng.user_doorbells, std::vector<u32>{3});
    gpu.mcu().set_engine(nullptr);
}

}  // namespace
}  // namespace mock_hw::testing
