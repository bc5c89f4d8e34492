// The panthor firmware on the mock G610 (simulated runtime): malformed mali_csffw.bin images are
// refused at probe with -EINVAL and leave nothing behind, a missing file and an MCU that does not
// boot fail the probe cleanly, the ping watchdog resets a FW that stops answering, and restarts
// are fast (FW memory kept) after a clean halt and slow (sections reloaded) otherwise.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "hw/csf/fw_iface.h"
#include "hw/csf/fw_image_format.h"
#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/mmu_regs.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/firmware.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/time.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/fw_image.h"
#include "mock_hw/gpu.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {
namespace {

using kshim::ktime_t;
using kshim::ms_to_ktime;

// Offsets in a written image: the 20-byte header, then the first entry (the .text section).
constexpr size_t kHdrMajor = 5;
constexpr size_t kHdrSize = 16;
constexpr size_t kEntry0 = 20;
constexpr size_t kEntry0Size = kEntry0 + 1;            // CSF_FW_BINARY_ENTRY_SIZE byte
constexpr size_t kEntry0DataStart = kEntry0 + 4 + 12;  // panthor_fw_binary_section_entry_hdr.data.start
constexpr size_t kEntry0DataEnd = kEntry0DataStart + 4;

void put32(std::vector<u8>& b, size_t off, u32 v) {
    std::memcpy(b.data() + off, &v, sizeof(v));
}
u32 get32(const std::vector<u8>& b, size_t off) {
    u32 v;
    std::memcpy(&v, b.data() + off, sizeof(v));
    return v;
}

mock_hw::FwSection* find_section(mock_hw::FwImage& img, u32 va_start) {
    for (auto& s : img.sections)
        if (s.va_start == va_start)
            return &s;
    return nullptr;
}

// Shared by the probe-failure fixtures: the image comes from a private folder, and a failed probe
// must leave the device as it found it.
class FwImageTest : public PanthorTest {
protected:
    bool probe_in_setup() const override { return false; }

    void SetUp() override {
        PanthorTest::SetUp();
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string leaf = std::string(info->test_suite_name()) + "." + info->name();
        for (char& c : leaf)
            if (c == '/')
                c = '_';
        dir_ = std::filesystem::temp_directory_path() / ("upanthor_fw_test." + std::to_string(::getpid())) / leaf;
        std::filesystem::remove_all(dir_);
        std::filesystem::create_directories(dir_);
        new_device();
    }
    void TearDown() override {
        kshim::firmware_set_search_path("");
        PanthorTest::TearDown();
        std::error_code ec;
        std::filesystem::remove_all(dir_.parent_path(), ec);
    }

    std::string fw_file() const { return (dir_ / "arm/mali/arch10.8/mali_csffw.bin").string(); }

    // Points request_firmware at an image holding `bytes`.
    void use_image(const std::vector<u8>& bytes) {
        std::filesystem::create_directories(dir_ / "arm/mali/arch10.8");
        std::ofstream out(fw_file(), std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        out.close();
        ASSERT_TRUE(out.good());
        kshim::firmware_set_search_path(dir_.string());
    }

    // A probe that must fail with `err`, and everything a failed probe must not leave behind.
    void expect_probe_fails_cleanly(int err) {
        const kshim::MemCounters before = kshim::mem_counters();
        ASSERT_EQ(probe(), err);
        EXPECT_EQ(ptdev, nullptr);
        EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "");

        // Clocks off, runtime PM back to disabled, the GPU powered down and the MCU not running.
        for (const char* name : {"core", "stacks", "coregroup"}) {
            kshim::Clk* clk = kshim::devm_clk_get_optional(dev(), name);
            if (!clk && std::strcmp(name, "core") == 0)
                clk = kshim::devm_clk_get(dev(), nullptr);
            ASSERT_NE(clk, nullptr) << name;
            EXPECT_EQ(clk->enable_count, 0) << name;
            EXPECT_EQ(clk->prepare_count, 0) << name;
        }
        EXPECT_FALSE(kshim::pm_runtime_enabled(dev()));
        EXPECT_EQ(kshim::pm_runtime_status(dev()), kshim::RPM_SUSPENDED);
        EXPECT_EQ(gpu().peek32(L2_READY).value_or(~0u), 0u);
        EXPECT_NE(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED);
        EXPECT_EQ(kshim::platform_get_drvdata(pdev()), nullptr);
        // No address space left translating (AS 0 is the MCU's).
        {
            kshim::SpinGuard g(gpu().lock());
            for (u32 as = 0; as < mock_hw::Mmu::kMaxAs; as++) {
                if (!gpu().mmu().present(as))
                    continue;
                EXPECT_EQ(gpu().mmu().config_locked(as).transcfg & AS_TRANSCFG_ADRMODE_MASK,
                          AS_TRANSCFG_ADRMODE_UNMAPPED)
                    << "AS " << as;
            }
        }

        // The three IRQ lines are free again.
        for (kshim::IrqLine* line : {&gpu().irq_job(), &gpu().irq_mmu(), &gpu().irq_gpu()}) {
            int cookie = 0;
            const int ret = kshim::request_threaded_irq(
                line, [](int, void*) { return kshim::IRQ_NONE; }, nullptr, 0, "probe-check", &cookie);
            EXPECT_EQ(ret, 0) << line->name() << " still requested";
            if (!ret)
                kshim::free_irq(line, &cookie);
        }
    }

    // After a failed probe: the real image probes on the same device.
    void expect_good_probe_works() {
        kshim::firmware_set_search_path("");
        gpu().faults().clear();
        ASSERT_EQ(probe(), 0);
        EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(0), MCU_STATUS_ENABLED);
        EXPECT_EQ(panthor_fw_section_count(ptdev), 3u);
        // The checks of expect_probe_fails_cleanly do see what a probed driver holds.
        {
            kshim::SpinGuard g(gpu().lock());
            EXPECT_EQ(gpu().mmu().config_locked(0).transcfg & AS_TRANSCFG_ADRMODE_MASK, AS_TRANSCFG_ADRMODE_AARCH64_4K);
        }
        EXPECT_EQ(ptdev->clks.core->enable_count, 1);
        int cookie = 0;
        EXPECT_EQ(kshim::request_threaded_irq(
                      &gpu().irq_job(), [](int, void*) { return kshim::IRQ_NONE; }, nullptr, 0, "probe-check", &cookie),
                  -EBUSY);
        EXPECT_TRUE(wait_autosuspend());
    }

    std::filesystem::path dir_;
};

struct MalformedImage {
    const char* name;
    std::function<void(mock_hw::FwImage&)> edit;  // on the model, before writing
    std::function<void(std::vector<u8>&)> patch;  // on the written bytes
    const char* log;                              // what the driver must say
};
void PrintTo(const MalformedImage& m, std::ostream* os) {
    *os << m.name;
}

class FwMalformedImage : public FwImageTest, public ::testing::WithParamInterface<MalformedImage> {};

TEST_P(FwMalformedImage, ProbeFailsWithEinvalAndLeavesNothingBehind) {
    mock_hw::FwImage img = mock_hw::default_fw_image();
    if (GetParam().edit)
        GetParam().edit(img);
    std::vector<u8> bytes = mock_hw::write_fw_image(img);
    if (GetParam().patch)
        GetParam().patch(bytes);
    use_image(bytes);

    expect_probe_fails_cleanly(-EINVAL);
    EXPECT_TRUE(kshim::log_contains(GetParam().log, kshim::LogLevel::Err)) << "expected log: " << GetParam().log;
    EXPECT_EQ(gpu().mcu().boots(), 0u) << "a rejected image is never booted";

    expect_good_probe_works();
}

constexpr u32 kShared = CSF_MCU_SHARED_REGION_START;
constexpr u32 kData = mock_hw::kMockFwDataVa;

INSTANTIATE_TEST_SUITE_P(
    Images, FwMalformedImage,
    ::testing::Values(
        MalformedImage{"BadMagic", nullptr, [](auto& b) { b[0] ^= 0xff; }, "Invalid firmware magic"},
        MalformedImage{"FileShorterThanHeader", nullptr, [](auto& b) { b.resize(12); }, "Firmware too small"},
        MalformedImage{"MajorVersion", [](auto& i) { i.major = 1; }, nullptr,
                       "Unsupported firmware binary header version 1.1 (expected 0.x)"},
        MalformedImage{"RawMajorByte", nullptr, [](auto& b) { b[kHdrMajor] = 0x80; },
                       "Unsupported firmware binary header version 128."},
        MalformedImage{"SizeBeyondFile", nullptr, [](auto& b) { put32(b, kHdrSize, static_cast<u32>(b.size()) + 4); },
                       "Firmware image is truncated"},
        MalformedImage{"EntryPastTheEnd", nullptr, [](auto& b) { b[kEntry0Size] = 0xfc; }, "Firmware entry too long"},
        MalformedImage{"EntrySizeNotMultipleOf4", nullptr, [](auto& b) { b[kEntry0Size] = 0x22; },
                       "Firmware entry isn't 32 bit aligned, offset=0x14 size=0x22"},
        MalformedImage{"EntrySizeZero", nullptr, [](auto& b) { b[kEntry0Size] = 0; }, "Firmware entry too short"},
        MalformedImage{"EntryCutInsideSectionHeader", nullptr, [](auto& b) { b[kEntry0Size] = 8; },
                       "Firmware too small"},
        MalformedImage{"SectionVaInverted", [](auto& i) { find_section(i, kData)->va_end = kData - 0x1000; }, nullptr,
                       "Firmware corrupted, hdr.va.end < hdr.va.start (0xff000 < 0x100000)"},
        MalformedImage{"SectionWrapsPastMcuVaSpace",
                       [](auto& i) {
                           // [0xfffff000, 4 GiB + 4 KiB) does not fit 32 bits: va.end wraps to 0x1000.
                           auto* s = find_section(i, kData);
                           s->va_start = 0xfffff000u;
                           s->va_end = 0x1000;
                       },
                       nullptr, "hdr.va.end < hdr.va.start"},
        MalformedImage{"SectionVaNotPageAligned", [](auto& i) { find_section(i, kData)->va_end += 0x10; }, nullptr,
                       "virtual addresses not page aligned: 0x100000-0x101010"},
        MalformedImage{"OverlappingSections",
                       [](auto& i) {
                           auto* s = find_section(i, kData);
                           s->va_start = 0x8000;  // inside .text [0, 0x10000)
                           s->va_end = 0x9000;
                       },
                       nullptr, "section 0x8000-0x9000 overlaps section 0x0-0x10000"},
        MalformedImage{"DataPastTheEnd", nullptr,
                       [](auto& b) { put32(b, kEntry0DataEnd, static_cast<u32>(b.size()) + 4); },
                       "Firmware corrupted, file truncated? data_end="},
        MalformedImage{"DataRangeInverted", nullptr,
                       [](auto& b) { put32(b, kEntry0DataEnd, get32(b, kEntry0DataStart) - 4); },
                       "Firmware corrupted, data.end < data.start"},
        MalformedImage{"DataLargerThanVaRange", [](auto& i) { find_section(i, kData)->data.resize(0x2000, 0xab); },
                       nullptr, "section data larger than its VA range (0x2000 > 0x1000)"},
        MalformedImage{"UnknownSectionFlags", [](auto& i) { find_section(i, kData)->flags |= 1u << 7; }, nullptr,
                       "Firmware contains interface with unsupported flags (0x8000008b)"},
        MalformedImage{"UnknownMandatoryEntry",
                       [](auto& i) {
                           i.others.push_back({9, false, {1, 2, 3, 4}});
                       },
                       nullptr, "Unsupported non-optional entry type 9 in firmware"},
        MalformedImage{"MissingSharedSection",
                       [](auto& i) { std::erase_if(i.sections, [](const auto& s) { return s.va_start == kShared; }); },
                       nullptr, "Shared interface region not found"},
        MalformedImage{"SharedSectionNotShared",
                       [](auto& i) { find_section(i, kShared)->flags &= ~CSF_FW_BINARY_IFACE_ENTRY_SHARED; }, nullptr,
                       "Interface at 0x4000000 must be shared"},
        MalformedImage{"SharedSectionEmpty", [](auto& i) { find_section(i, kShared)->va_end = kShared; }, nullptr,
                       "empty shared interface section"}),
    [](const auto& info) { return std::string(info.param.name); });

// Images panthor accepts although they carry something it does not use.
struct AcceptedImage {
    const char* name;
    std::function<void(mock_hw::FwImage&)> edit;
    std::function<void(std::vector<u8>&)> patch;
    const char* log;      // expected log line, or null
    const char* git_sha;  // what panthor_fw_git_sha must report (null: none)
};
void PrintTo(const AcceptedImage& a, std::ostream* os) {
    *os << a.name;
}

class FwAcceptedImage : public FwImageTest, public ::testing::WithParamInterface<AcceptedImage> {};

TEST_P(FwAcceptedImage, ProbeSucceeds) {
    mock_hw::FwImage img = mock_hw::default_fw_image();
    if (GetParam().edit)
        GetParam().edit(img);
    std::vector<u8> bytes = mock_hw::write_fw_image(img);
    if (GetParam().patch)
        GetParam().patch(bytes);
    use_image(bytes);

    ASSERT_EQ(probe(), 0);
    EXPECT_EQ(panthor_fw_section_count(ptdev), 3u);
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(0), MCU_STATUS_ENABLED);
    if (GetParam().log) {
        EXPECT_TRUE(kshim::log_contains(GetParam().log)) << GetParam().log;
    }
    if (GetParam().git_sha) {
        EXPECT_STREQ(panthor_fw_git_sha(ptdev), GetParam().git_sha);
    } else {
        EXPECT_EQ(panthor_fw_git_sha(ptdev), nullptr);
    }
    EXPECT_TRUE(wait_autosuspend());
}

INSTANTIATE_TEST_SUITE_P(
    Images, FwAcceptedImage,
    ::testing::Values(
        AcceptedImage{"Default", nullptr, nullptr, "Firmware git sha: upanthor-mock-fw-1", "upanthor-mock-fw-1"},
        AcceptedImage{"UnknownOptionalEntrySkipped",
                      [](auto& i) {
                          i.others.push_back({9, true, {1, 2, 3, 4}});
                      },
                      nullptr, nullptr, "upanthor-mock-fw-1"},
        AcceptedImage{"UnusedEntryTypesSkipped",
                      [](auto& i) {
                          i.others.push_back({CSF_FW_BINARY_ENTRY_TYPE_CONFIG, false, {0, 0, 0, 0}});
                          i.others.push_back({CSF_FW_BINARY_ENTRY_TYPE_TRACE_BUFFER, false, {}});
                      },
                      nullptr, nullptr, "upanthor-mock-fw-1"},
        AcceptedImage{"ProtectedSectionIgnored",
                      [](auto& i) {
                          mock_hw::FwSection s = *find_section(i, kData);
                          s.flags |= CSF_FW_BINARY_IFACE_ENTRY_PROT;
                          s.va_start = 0x200000;
                          s.va_end = 0x201000;
                          i.sections.push_back(s);
                      },
                      nullptr, "Firmware protected mode entry not be supported, ignoring", "upanthor-mock-fw-1"},
        AcceptedImage{"NoBuildInfo", [](auto& i) { i.git_sha.reset(); }, nullptr, nullptr, nullptr},
        AcceptedImage{"BuildInfoOutOfFile", nullptr,
                      [](auto& b) {
                          // The build-info entry (type 6) follows the three sections.
                          for (size_t off = kEntry0; off + 12 <= get32(b, kHdrSize);) {
                              const u32 ehdr = get32(b, off);
                              if (CSF_FW_BINARY_ENTRY_TYPE(ehdr) == CSF_FW_BINARY_ENTRY_TYPE_BUILD_INFO_METADATA) {
                                  put32(b, off + 8, 0x7fffffff);  // meta_size
                                  return;
                              }
                              off += CSF_FW_BINARY_ENTRY_SIZE(ehdr);
                          }
                          FAIL() << "no build-info entry";
                      },
                      "Firmware build info corrupt", nullptr}),
    [](const auto& info) { return std::string(info.param.name); });

class FwProbe : public FwImageTest {};

TEST_F(FwProbe, MissingFileFailsWithEnoentNamingThePath) {
    kshim::firmware_set_search_path(dir_.string());  // an empty folder
    expect_probe_fails_cleanly(-ENOENT);
    EXPECT_TRUE(kshim::log_contains(fw_file(), kshim::LogLevel::Err)) << fw_file();
    EXPECT_TRUE(kshim::log_contains("Failed to load firmware image 'mali_csffw.bin'"));
    expect_good_probe_works();
}

TEST_F(FwProbe, McuThatDoesNotBootFailsWithEtimedout) {
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::BootFail;
    const int id = gpu().faults().add(f);
    const ktime_t t0 = kshim::ktime_get();

    expect_probe_fails_cleanly(-ETIMEDOUT);
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_TRUE(kshim::log_contains("Failed to boot MCU (status=fatal)", kshim::LogLevel::Err));
    // The boot wait is upstream's 1 s.
    EXPECT_GE(kshim::ktime_get() - t0, ms_to_ktime(1000));
    expect_good_probe_works();
}

// ---- running firmware: watchdog and restarts ----

class FwRuntime : public PanthorTest {
protected:
    void SetUp() override {
        PanthorTest::SetUp();
        if (ptdev)
            count_soft_resets();
    }
    int fw_as() { return panthor_vm_as(panthor_fw_vm(ptdev)); }

    // The first word of the FW's .data section (RD|WR|ZERO) as the MCU sees it through AS 0.
    u32 fw_data_word() {
        u32 v = ~0u;
        EXPECT_EQ(fw_as(), 0);
        const auto r =
            gpu().mmu().read(0, mock_hw::kMockFwDataVa, &v, sizeof(v), mock_hw::Access::Read, mock_hw::kSourceTest);
        EXPECT_TRUE(r.ok());
        return v;
    }
    void set_fw_data_word(u32 v) {
        ASSERT_EQ(fw_as(), 0);
        const auto r = gpu().mmu().write(0, mock_hw::kMockFwDataVa, &v, sizeof(v), mock_hw::kSourceTest);
        ASSERT_TRUE(r.ok());
    }

    bool ping_answered() {
        panthor_fw_global_iface* glb = panthor_fw_get_glb_iface(ptdev);
        return (glb->input->req & GLB_PING) == (glb->output->ack & GLB_PING);
    }

    // The interface blocks hold what the FW advertised at the first boot (a restart that reloaded
    // the shared section must have rebuilt them).
    void expect_iface_intact() {
        EXPECT_EQ(panthor_fw_get_glb_iface(ptdev)->control->version, panthor_fw_iface_version(ptdev));
        EXPECT_EQ(panthor_fw_get_glb_iface(ptdev)->control->group_num, panthor_fw_csg_count(ptdev));
        for (u32 i = 0; i < panthor_fw_csg_count(ptdev); i++)
            EXPECT_EQ(panthor_fw_get_csg_iface(ptdev, i)->control->stream_num, panthor_fw_cs_count(ptdev)) << i;
    }

    int log_count(const std::string& needle) {
        int n = 0;
        for (const auto& l : kshim::log_lines())
            if (l.text.find(needle) != std::string::npos)
                n++;
        return n;
    }
};

TEST_F(FwRuntime, PingTimeoutResetsTheGpuAndTheFwAnswersAgain) {
    ASSERT_GE(kshim::pm_runtime_get_sync(dev()), 0);
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::GlbAckDrop;
    f.glb_req_mask = GLB_PING;
    const int id = gpu().faults().add(f);
    const u64 boots = gpu().mcu().boots();

    // The watchdog pings every 12 s; the ping is dropped and times out 100 ms later.
    advance(ms_to_ktime(11'900));
    EXPECT_FALSE(kshim::log_contains("FW ping timeout"));
    EXPECT_EQ(gpu().faults().fired(id), 0u);
    ASSERT_TRUE(
        run_until([&] { return kshim::log_contains("FW ping timeout, scheduling a reset"); }, ms_to_ktime(300)));
    EXPECT_EQ(gpu().faults().fired(id), 1u);

    // The reset work: a soft reset, sections reloaded, the FW booted again.
    ASSERT_TRUE(
        run_until([&] { return !panthor_device_reset_is_pending(ptdev) && soft_resets_ > 0; }, ms_to_ktime(1000)));
    advance_until_idle(ms_to_ktime(10));
    EXPECT_EQ(soft_resets_, 1);
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);
    EXPECT_EQ(mcu_status(), MCU_STATUS_ENABLED);
    EXPECT_FALSE(kshim::log_contains("Failed to boot MCU after reset"));
    expect_iface_intact();
    EXPECT_TRUE(kshim::pm_runtime_active(dev()));

    // The next pings are answered: no new timeout, no new reset.
    const u64 scans = gpu().mcu().glb_scans();
    advance(ms_to_ktime(12'000 + 200));
    EXPECT_GT(gpu().mcu().glb_scans(), scans) << "the watchdog pinged again";
    EXPECT_TRUE(ping_answered());
    EXPECT_EQ(log_count("FW ping timeout"), 1);
    EXPECT_EQ(soft_resets_, 1);
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);

    kshim::pm_runtime_put_autosuspend(dev());
    EXPECT_TRUE(wait_autosuspend());
}

// Driver 1.6: the global init sets COUNTER_EN as a level bit beside IDLE_EN, and the firmware
// keeps it across a suspend and resume.
TEST_F(FwRuntime, GlobalInitEnablesTimestampPropagation) {
    auto counter_enabled = [&] {
        kshim::SpinGuard g(gpu().lock());
        return gpu().mcu().counter_enabled_locked();
    };
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    panthor_fw_global_iface* glb = panthor_fw_get_glb_iface(ptdev);
    EXPECT_TRUE(glb->input->req & GLB_COUNTER_EN);
    EXPECT_TRUE(glb->input->req & GLB_IDLE_EN);
    EXPECT_TRUE(counter_enabled());
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_TRUE(counter_enabled());
    EXPECT_TRUE(glb->input->req & GLB_COUNTER_EN);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
}

TEST_F(FwRuntime, IdleDeviceIsNotPinged) {
    ASSERT_TRUE(wait_autosuspend());
    const u64 scans = gpu().mcu().glb_scans();
    const u64 boots = gpu().mcu().boots();
    advance(ms_to_ktime(25'000));
    EXPECT_TRUE(kshim::pm_runtime_suspended(dev())) << "the watchdog must not wake the GPU";
    EXPECT_EQ(gpu().mcu().glb_scans(), scans);
    EXPECT_EQ(gpu().mcu().boots(), boots);
}

TEST_F(FwRuntime, ResumeAfterACleanHaltIsAFastRestart) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    set_fw_data_word(0xc0ffee00);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
    EXPECT_EQ(mcu_status(), MCU_STATUS_HALT);
    EXPECT_TRUE(ptdev->reset.fast);
    EXPECT_EQ(soft_resets_, 0);

    const u64 boots = gpu().mcu().boots();
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);
    EXPECT_EQ(mcu_status(), MCU_STATUS_ENABLED);
    // FW memory is as the FW left it: the sections were not reloaded.
    EXPECT_EQ(fw_data_word(), 0xc0ffee00u);
    expect_iface_intact();
    EXPECT_FALSE(kshim::log_contains("slow reset"));
    EXPECT_TRUE(ping_answered());
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
}

TEST_F(FwRuntime, ResetPendingAtSuspendMakesTheResumeASlowRestart) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    set_fw_data_word(0xc0ffee01);

    // The reset is queued but the device suspends before the reset work runs.
    panthor_device_schedule_reset(ptdev);
    ASSERT_EQ(kshim::pm_runtime_put_sync_suspend(dev()), 0);
    ASSERT_TRUE(kshim::pm_runtime_suspended(dev()));
    EXPECT_TRUE(panthor_device_reset_is_pending(ptdev));

    const u64 boots = gpu().mcu().boots();
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));
    EXPECT_FALSE(ptdev->reset.fast);
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);
    EXPECT_EQ(mcu_status(), MCU_STATUS_ENABLED);
    // Slow: the .data section went back to its initial (zero) contents.
    EXPECT_EQ(fw_data_word(), 0u);
    EXPECT_TRUE(ping_answered());
    // The reload zeroed the shared section: the FW must have rebuilt its interface blocks.
    expect_iface_intact();

    // The cancelled reset work does not run after all.
    advance_until_idle(ms_to_ktime(100));
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);
    EXPECT_EQ(soft_resets_, 0);

    // The FW works: the next ping is answered.
    advance(ms_to_ktime(12'200));
    EXPECT_FALSE(kshim::log_contains("FW ping timeout"));
    EXPECT_TRUE(ping_answered());
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
}

TEST_F(FwRuntime, FailedHaltMakesTheNextResumeASlowRestart) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    set_fw_data_word(0xc0ffee02);
    mock_hw::FaultSpec f;
    f.kind = mock_hw::FaultKind::FwHang;  // fires at the next GLB doorbell: the HALT request
    const int id = gpu().faults().add(f);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());

    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_TRUE(kshim::log_contains("Failed to cleanly suspend MCU"));
    EXPECT_FALSE(ptdev->reset.fast);
    // No clean halt: the GPU was reset instead of just powering L2 down.
    EXPECT_EQ(soft_resets_, 1);
    EXPECT_EQ(mcu_status(), MCU_STATUS_DISABLED);

    const u64 boots = gpu().mcu().boots();
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(gpu().mcu().boots(), boots + 1);
    EXPECT_EQ(mcu_status(), MCU_STATUS_ENABLED);
    EXPECT_EQ(fw_data_word(), 0u) << "a slow restart reloads the sections";
    expect_iface_intact();
    EXPECT_TRUE(ping_answered());
    EXPECT_FALSE(kshim::log_contains("reset failed")) << "no fast restart was attempted";

    // And the following suspend is clean again, so the resume after it is fast.
    set_fw_data_word(0xc0ffee03);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
    EXPECT_TRUE(ptdev->reset.fast);
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(fw_data_word(), 0xc0ffee03u);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
}

}  // namespace
}  // namespace panthor::testing
