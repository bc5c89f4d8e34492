// Probe and remove of the panthor driver on the mock G610 (simulated runtime): what probe logs and
// reports, clocks/supply/devfreq, probe with an allocation failure or a stalled hardware wait at
// each step in turn, DEV_QUERY, unplug with a file open, and the reset work.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/arch_timer.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/err.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_opp.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/time.h"
#include "panthor/panthor_devfreq.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_gpu.h"
#include "panthor/panthor_mmu.h"
#include "tests/panthor/panthor_test.h"

namespace panthor::testing {
namespace {

using kshim::ms_to_ktime;
using kshim::us_to_ktime;

constexpr unsigned long kFastRate = 1'000'000'000;
constexpr u64 kVa = 0x1000000;

// Helpers shared by every fixture here: the platform's clocks and supply as the platform device
// holds them (devm_clk_get/devm_regulator_get return the platform's own objects).
class ProbeTestBase : public PanthorTest {
protected:
    kshim::Clk* clk(const char* id) { return kshim::devm_clk_get(dev(), id); }
    kshim::Regulator* supply() { return kshim::devm_regulator_get(dev(), "mali"); }

    // Every clock of the GPU gated and unprepared.
    void expect_clocks_off(const std::string& where) {
        for (const char* id : {"core", "stacks", "coregroup"}) {
            kshim::Clk* c = clk(id);
            ASSERT_FALSE(kshim::IS_ERR_OR_NULL(c)) << id;
            EXPECT_EQ(c->enable_count, 0) << id << " " << where;
            EXPECT_EQ(c->prepare_count, 0) << id << " " << where;
        }
    }
    void expect_clocks_on(const std::string& where) {
        for (const char* id : {"core", "stacks", "coregroup"}) {
            kshim::Clk* c = clk(id);
            ASSERT_FALSE(kshim::IS_ERR_OR_NULL(c)) << id;
            EXPECT_EQ(c->enable_count, 1) << id << " " << where;
            EXPECT_EQ(c->prepare_count, 1) << id << " " << where;
        }
    }
    // Nothing the driver got from the platform is still held: clocks, supply, IRQ lines.
    void expect_platform_released(const std::string& where) {
        expect_clocks_off(where);
        EXPECT_EQ(kshim::regulator_is_enabled(supply()), 0) << where;
        EXPECT_EQ(supply()->enable_count, 0) << where;
        int cookie = 0;
        for (kshim::IrqLine* line : {&gpu().irq_job(), &gpu().irq_mmu(), &gpu().irq_gpu()}) {
            // The lines take one handler: a request only succeeds on a free line.
            const int ret = kshim::request_irq(
                line, [](int, void*) { return kshim::IRQ_NONE; }, 0, "probe-test", &cookie);
            EXPECT_EQ(ret, 0) << line->name() << " still requested " << where;
            if (!ret)
                kshim::free_irq(line, &cookie);
        }
    }
    // The OPP voltage for `hz` in the platform's table.
    unsigned long opp_microvolt(unsigned long hz) {
        for (const mock_hw::OppConfig& o : gpu().config().platform.opps)
            if (o.hz == hz)
                return o.microvolt;
        ADD_FAILURE() << hz << " Hz is not an OPP";
        return 0;
    }
    bool is_opp_rate(unsigned long hz) {
        for (const mock_hw::OppConfig& o : gpu().config().platform.opps)
            if (o.hz == hz)
                return true;
        return false;
    }
    // Every report of the run so far, as text (and consumed).
    static std::string drain_reports() {
        std::string out;
        for (const kshim::Report& r : kshim::take_reports())
            out += std::string(kshim::report_kind_name(r.kind)) + ": " + r.title + "\n";
        return out;
    }
    panthor_file* pfile(drm::drm_file* f = nullptr) { return static_cast<panthor_file*>((f ? f : file)->driver_priv); }
};

// ---------------------------------------------------------------------------------------------
// 1. Probe on the mock and remove.

class PanthorProbe : public ProbeTestBase {};

TEST_F(PanthorProbe, ProbesAndAutosuspends) {
    ASSERT_NE(ptdev, nullptr);
    EXPECT_TRUE(kshim::log_contains("mali-g610 id 0xa867 major 0x0 minor 0x0 status 0x5"));
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanthorProbe, LogsTheDeviceAndFirmwareLikeUpstream) {
    const mock_hw::GpuIdentity id = mock_hw::GpuConfig().id;
    char features[160];
    std::snprintf(features, sizeof(features), "Features: L2:%#x Tiler:%#x Mem:%#x MMU:%#x AS:%#x", id.l2_features,
                  id.tiler_features, id.mem_features, id.mmu_features, id.as_present);
    EXPECT_TRUE(kshim::log_contains("mali-g610 id 0xa867 major 0x0 minor 0x0 status 0x5", kshim::LogLevel::Info));
    EXPECT_TRUE(kshim::log_contains(features, kshim::LogLevel::Info)) << features;
    EXPECT_TRUE(kshim::log_contains("Features: L2:0x7120306 Tiler:0x809 Mem:0x301 MMU:0x2830 AS:0xff"));
    EXPECT_TRUE(kshim::log_contains("CSF FW using interface v1.1.0, Features 0 Instrumentation features 0x71",
                                    kshim::LogLevel::Info));
    EXPECT_TRUE(kshim::log_contains("Firmware git sha: upanthor-mock-fw-1", kshim::LogLevel::Info));
    EXPECT_STREQ(panthor_fw_git_sha(ptdev), "upanthor-mock-fw-1");
    // Nothing went wrong on the way.
    EXPECT_FALSE(kshim::log_contains("", kshim::LogLevel::Warn));
}

TEST_F(PanthorProbe, DrmVersionIsPanthor1_9) {
    char name[32], desc[64];
    std::memset(name, 0x55, sizeof(name));
    drm::UserRange rn(name, sizeof(name)), rd(desc, sizeof(desc));
    drm::uapi::drm_version v{};
    v.name = name;
    v.name_len = sizeof(name);
    v.desc = desc;
    v.desc_len = sizeof(desc);
    ASSERT_EQ(ioctl(drm::uapi::DRM_IOCTL_VERSION, &v), 0);
    EXPECT_EQ(v.version_major, 1);
    EXPECT_EQ(v.version_minor, 9);
    EXPECT_EQ(v.version_patchlevel, 0);
    ASSERT_EQ(v.name_len, 7u);
    EXPECT_EQ(std::string(name, v.name_len), "panthor");
    EXPECT_EQ(name[7], 0x55) << "no terminator is written";
    EXPECT_EQ(std::string(desc, v.desc_len), "Panthor DRM driver");

    // A short buffer gets a truncated name and the full length.
    char small[3];
    drm::UserRange rs(small, sizeof(small));
    drm::uapi::drm_version v2{};
    v2.name = small;
    v2.name_len = sizeof(small);
    ASSERT_EQ(ioctl(drm::uapi::DRM_IOCTL_VERSION, &v2), 0);
    EXPECT_EQ(v2.name_len, 7u);
    EXPECT_EQ(std::string(small, 3), "pan");
}

TEST_F(PanthorProbe, GetCapAnswersTheRenderOnlyCaps) {
    struct Case {
        u64 cap;
        int ret;
        u64 value;
    };
    const Case cases[] = {
        {drm::uapi::DRM_CAP_SYNCOBJ, 0, 1},
        {drm::uapi::DRM_CAP_SYNCOBJ_TIMELINE, 0, 1},
        {drm::uapi::DRM_CAP_TIMESTAMP_MONOTONIC, 0, 1},
        {0x1 /* DRM_CAP_DUMB_BUFFER: KMS only */, -EOPNOTSUPP, 0},
    };
    for (const Case& c : cases) {
        drm::uapi::drm_get_cap cap{};
        cap.capability = c.cap;
        cap.value = 0xdead;
        EXPECT_EQ(ioctl(drm::uapi::DRM_IOCTL_GET_CAP, &cap), c.ret) << "cap " << c.cap;
        if (!c.ret) {
            EXPECT_EQ(cap.value, c.value) << "cap " << c.cap;
        }
    }
}

TEST_F(PanthorProbe, ClocksOnWhileActiveOffAfterAutosuspend) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    expect_clocks_on("while a PM reference is held");
    kshim::pm_runtime_put_autosuspend(dev());
    // The autosuspend delay is 50 ms: still on before, off after.
    advance(ms_to_ktime(20));
    EXPECT_TRUE(kshim::pm_runtime_active(dev()));
    expect_clocks_on("20 ms after the last put");
    ASSERT_TRUE(wait_autosuspend());
    expect_clocks_off("after autosuspend");
    // The supply stays on while suspended: the OPP core owns it until remove.
    EXPECT_EQ(kshim::regulator_is_enabled(supply()), 1);

    // A DEV_QUERY that needs the hardware resumes it.
    drm_panthor_timestamp_info ts{};
    drm_panthor_dev_query q{};
    q.type = DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO;
    q.size = sizeof(ts);
    q.pointer = drm::user_ptr(&ts);
    drm::UserRange r(ts);
    ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &q), 0);
    EXPECT_TRUE(kshim::pm_runtime_active(dev()));
    expect_clocks_on("right after a timestamp query");
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanthorProbe, SupplyOnAtTheOppVoltageAndDevfreqAtAnOpp) {
    EXPECT_EQ(ptdev->fast_rate, kFastRate);
    const unsigned long rate = kshim::clk_get_rate(clk("core"));
    EXPECT_TRUE(is_opp_rate(rate)) << rate;
    EXPECT_EQ(ptdev->current_frequency, rate);
    // The DT's 200 MHz is not an OPP: devfreq starts at the next one up.
    EXPECT_EQ(rate, 300'000'000u);
    EXPECT_EQ(kshim::regulator_is_enabled(supply()), 1);
    EXPECT_EQ(kshim::regulator_get_voltage(supply()), static_cast<int>(opp_microvolt(rate)));
}

TEST_F(PanthorProbe, DevfreqFollowsBusyAndIdle) {
    // devfreq only polls while the device is resumed.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    // The resume's scheduler tick records the (idle) GPU's state first.
    advance(ms_to_ktime(1));
    const unsigned long start = kshim::clk_get_rate(clk("core"));
    ASSERT_LT(start, kFastRate);

    panthor_devfreq_record_busy(ptdev);
    // Polling every 50 ms: a fully busy GPU reaches the fast rate within two periods.
    EXPECT_TRUE(run_until([&] { return kshim::clk_get_rate(clk("core")) == kFastRate; }, ms_to_ktime(2 * 50 + 5)))
        << kshim::clk_get_rate(clk("core"));
    EXPECT_EQ(ptdev->current_frequency, kFastRate);
    EXPECT_EQ(kshim::regulator_get_voltage(supply()), static_cast<int>(opp_microvolt(kFastRate)));
    // And stays there while busy.
    advance(ms_to_ktime(200));
    EXPECT_EQ(kshim::clk_get_rate(clk("core")), kFastRate);

    panthor_devfreq_record_idle(ptdev);
    EXPECT_TRUE(run_until([&] { return kshim::clk_get_rate(clk("core")) < kFastRate; }, ms_to_ktime(2 * 50 + 5)));
    // Fully idle ends at the lowest OPP.
    EXPECT_TRUE(run_until([&] { return kshim::clk_get_rate(clk("core")) == 300'000'000u; }, ms_to_ktime(500)))
        << kshim::clk_get_rate(clk("core"));
    const unsigned long rate = kshim::clk_get_rate(clk("core"));
    EXPECT_TRUE(is_opp_rate(rate));
    EXPECT_EQ(kshim::regulator_get_voltage(supply()), static_cast<int>(opp_microvolt(rate)));
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(PanthorProbe, ConcurrentCacheFlushesBothCompleteWithoutAWarn) {
    // Two flushes at once (a VM's unmap and a reset's, say): the second waits for the first, as
    // upstream's cache_flush_lock has it, rather than finding its request pending (a WARN, and
    // the flush dropped). Found by fuzz_ioctl's campaign.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    int rets[2] = {1, 1};
    std::vector<kshim::Task*> tasks;
    for (int& ret : rets)
        tasks.push_back(kshim::kthread_run(
            [&] {
                ret = panthor_gpu_flush_caches(ptdev, CACHE_CLEAN | CACHE_INV, CACHE_CLEAN | CACHE_INV, CACHE_INV);
                return 0;
            },
            "flusher"));
    for (kshim::Task* t : tasks)
        kshim::kthread_stop(t);
    EXPECT_EQ(rets[0], 0);
    EXPECT_EQ(rets[1], 0);
    EXPECT_EQ(drain_reports(), "");
    kshim::pm_runtime_put(dev());
}

TEST_F(PanthorProbe, RemoveReleasesEverything) {
    ASSERT_TRUE(wait_autosuspend());
    remove();
    EXPECT_EQ(panthor_from_pdev(pdev()), nullptr);
    expect_platform_released("after remove");
    EXPECT_EQ(panthor_mmu_pt_cache_live(), 0u);
    // And the device can be probed again.
    ASSERT_EQ(probe(), 0);
    EXPECT_TRUE(wait_autosuspend());
}

TEST_F(PanthorProbe, RemoveWhileActive) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(kshim::pm_runtime_active(dev()));
    remove();
    expect_platform_released("after remove of an active device");
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_DISABLED);
}

// ---------------------------------------------------------------------------------------------
// 2. Probe with an allocation failure injected at each allocation in turn.

class PanthorProbeManual : public ProbeTestBase {
protected:
    bool probe_in_setup() const override { return false; }

    // Probes and removes once, so that what the first probe creates for good (kmem caches,
    // module-lifetime state) is not counted against the sweep.
    void warm_up() {
        ASSERT_EQ(probe(), 0);
        remove();
        advance_until_idle(ms_to_ktime(1000));
        ASSERT_EQ(drain_reports(), "");
        expect_platform_released("after the warm-up");
    }

    // The device a probe just returned: a client opens it, creates a VM, maps and unmaps a BO;
    // then it is removed.
    void use_and_remove(const std::string& where) {
        ptdev = panthor_from_pdev(pdev());
        ASSERT_NE(ptdev, nullptr) << where;
        ASSERT_EQ(open_file(&file), 0) << where;
        const u32 vm_id = vm_create();
        const u32 bo = bo_create(2 * 4096);
        EXPECT_EQ(vm_map(vm_id, bo, kVa, 2 * 4096), 0) << where;
        EXPECT_EQ(vm_unmap(vm_id, kVa, 4096), 0) << where;
        vm_destroy(vm_id);
        ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0) << where;
        EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED) << where;
        kshim::pm_runtime_put_autosuspend(dev());
        remove();
    }
};

struct AllocSweep {
    const char* name;
    bool ignore_blocking;
    u64 first;  // the first allocation to fail (1-based)
    u64 last;   // the last one this shard tries (0: until probe no longer reaches it)
};

void PrintTo(const AllocSweep& s, std::ostream* os) {
    *os << s.name;
}

class PanthorProbeAllocFailure : public PanthorProbeManual, public ::testing::WithParamInterface<AllocSweep> {};

TEST_P(PanthorProbeAllocFailure, EachFailureUnwindsCleanly) {
    const AllocSweep sweep = GetParam();
    warm_up();
    if (HasFatalFailure())
        return;

    u64 n = sweep.first;
    u64 failed_probes = 0;
    std::vector<u64> absorbed;  // allocations whose failure the probe survived
    bool reached_end = false;
    for (;; n++) {
        if (sweep.last && n > sweep.last)
            break;
        kshim::log_clear();
        const kshim::MemCounters before = kshim::mem_counters();
        kshim::fault_inject_arm({.fail_nth = n, .ignore_blocking = sweep.ignore_blocking});
        const int ret = panthor_probe(pdev());
        const u64 failures = kshim::fault_inject_failures();
        kshim::fault_inject_disarm();

        if (failures == 0) {
            // Probe made fewer than n allocations: the sweep is complete.
            EXPECT_EQ(ret, 0) << "probe failed with no allocation failed (n=" << n << ")";
            if (!ret)
                use_and_remove("with nothing failed");
            reached_end = true;
        } else if (ret == 0) {
            // A failure the driver may survive (an informative copy, a reserve asked for
            // again later): the device must then be fully usable.
            absorbed.push_back(n);
            use_and_remove("after allocation " + std::to_string(n) + " failed");
        } else {
            failed_probes++;
            EXPECT_EQ(ret, -ENOMEM) << "allocation " << n;
            EXPECT_EQ(panthor_from_pdev(pdev()), nullptr) << "allocation " << n;
            EXPECT_EQ(pdev()->dev.pm, nullptr) << "allocation " << n;
        }
        // Anything freed from a workqueue is freed by now.
        advance_until_idle(ms_to_ktime(1000));
        const kshim::MemCounters after = kshim::mem_counters();
        EXPECT_EQ(kshim::mem_counters_diff(before, after), "") << "allocation " << n;
        EXPECT_EQ(after.pages_live, before.pages_live) << "allocation " << n;
        EXPECT_EQ(panthor_mmu_pt_cache_live(), 0u) << "allocation " << n;
        EXPECT_EQ(drain_reports(), "") << "allocation " << n;
        expect_platform_released("after allocation " + std::to_string(n) + " failed");
        if (HasFailure() || reached_end)
            break;
    }
    if (HasFailure())
        return;
    EXPECT_GT(failed_probes, 0u) << "no allocation of this shard made probe fail";
    if (!sweep.last) {
        EXPECT_TRUE(reached_end);
    }
    std::string absorbed_list;
    for (u64 a : absorbed)
        absorbed_list += " " + std::to_string(a);
    RecordProperty("allocations", static_cast<int>(n - 1));
    RecordProperty("absorbed", absorbed_list);
    std::printf("[ probe   ] %s: allocations %llu..%llu, %llu failed probes, absorbed:%s\n", sweep.name,
                static_cast<unsigned long long>(sweep.first), static_cast<unsigned long long>(n - 1),
                static_cast<unsigned long long>(failed_probes),
                absorbed_list.empty() ? " none" : absorbed_list.c_str());

    // A probe with nothing injected still works on the same platform device.
    ASSERT_EQ(probe(), 0);
    EXPECT_TRUE(wait_autosuspend());
}

INSTANTIATE_TEST_SUITE_P(Sweep, PanthorProbeAllocFailure,
                         ::testing::Values(AllocSweep{"AnyAllocation", false, 1, 0},
                                           AllocSweep{"NonBlockingOnly", true, 1, 0}),
                         [](const ::testing::TestParamInfo<AllocSweep>& info) { return std::string(info.param.name); });

// drm_gpuvm_init cannot report that it could not reserve the VA index's first nodes; the VM
// creation asks again and fails cleanly when that fails too.
TEST_F(PanthorProbeManual, ProbeFailsCleanlyWithoutVaIndexNodes) {
    warm_up();
    const kshim::MemCounters before = kshim::mem_counters();
    kshim::fault_inject_arm({.probability = 1.0, .only_cache = "drm_gpuva_index"});
    const int ret = probe();
    const u64 failures = kshim::fault_inject_failures();
    kshim::fault_inject_disarm();
    EXPECT_EQ(ret, -ENOMEM);
    EXPECT_GE(failures, 2u) << "drm_gpuvm_init's reserve and the retry";
    advance_until_idle(ms_to_ktime(1000));
    EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "");
    EXPECT_EQ(drain_reports(), "");
    expect_platform_released("after the failed probe");
    ASSERT_EQ(probe(), 0);
}

class PanthorVmCreate : public ProbeTestBase {};

TEST_F(PanthorVmCreate, FailsWithEnomemWhenItsPageTableOrIndexCannotBeAllocated) {
    for (const char* cache : {"drm_gpuva_index", "pages"}) {
        drm_panthor_vm_create args{};
        kshim::fault_inject_arm({.probability = 1.0, .only_cache = cache});
        const int ret = ioctl(DRM_IOCTL_PANTHOR_VM_CREATE, &args);
        kshim::fault_inject_disarm();
        EXPECT_EQ(ret, -ENOMEM) << cache;
        EXPECT_EQ(drain_reports(), "") << cache;
    }
    // Nothing was left behind in the file's pool: the next VM works.
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(4096);
    EXPECT_EQ(vm_map(vm_id, bo, kVa, 4096), 0);
    vm_destroy(vm_id);
}

// ---------------------------------------------------------------------------------------------
// 3. Probe with each hardware wait it performs stalled in turn (mock FaultPlan).

struct HwWaitFault {
    const char* name;
    mock_hw::FaultSpec spec;  // the trigger is set per occurrence
    int probe_errno;          // what a probe that hits it returns (0: probe survives it)
    const char* error_log;    // what the driver says when it hits it
};

void PrintTo(const HwWaitFault& f, std::ostream* os) {
    *os << f.name;
}

mock_hw::FaultSpec fault(mock_hw::FaultKind kind) {
    mock_hw::FaultSpec s;
    s.kind = kind;
    return s;
}

class PanthorProbeHwWait : public PanthorProbeManual, public ::testing::WithParamInterface<HwWaitFault> {
protected:
    void fresh_platform() { new_device(); }
};

TEST_P(PanthorProbeHwWait, EachStalledWaitFailsOrIsSurvivedCleanly) {
    const HwWaitFault c = GetParam();
    u64 failed = 0, survived = 0;
    bool reached_end = false;
    u64 nth = 1;
    for (; nth <= 64 && !reached_end; nth++) {
        const std::string where = std::string(c.name) + " #" + std::to_string(nth);
        fresh_platform();
        kshim::log_clear();
        mock_hw::FaultSpec spec = c.spec;
        spec.trigger = mock_hw::FaultTrigger::nth_occurrence(nth);
        const int id = gpu().faults().add(spec);
        const kshim::MemCounters before = kshim::mem_counters();

        const int ret = panthor_probe(pdev());
        const u64 fired = gpu().faults().fired(id);
        // Only probe's waits are under test: what follows runs on a well-behaved GPU.
        gpu().faults().clear();
        if (!fired) {
            // Probe no longer reaches the nth occurrence.
            EXPECT_EQ(ret, 0) << where;
            if (!ret)
                use_and_remove(where + " (not reached)");
            reached_end = true;
        } else if (ret) {
            failed++;
            EXPECT_EQ(ret, c.probe_errno) << where;
            EXPECT_TRUE(kshim::log_contains(c.error_log, kshim::LogLevel::Err)) << where << ": " << c.error_log;
            EXPECT_EQ(panthor_from_pdev(pdev()), nullptr) << where;
        } else {
            survived++;
            if (c.probe_errno == 0) {
                EXPECT_TRUE(kshim::log_contains(c.error_log, kshim::LogLevel::Warn)) << where << ": " << c.error_log;
            }
            // Nothing the probe left running turns it into a reset later on.
            ptdev = panthor_from_pdev(pdev());
            EXPECT_FALSE(panthor_device_reset_is_pending(ptdev)) << where;
            use_and_remove(where + " (survived)");
        }
        advance_until_idle(ms_to_ktime(2000));
        EXPECT_EQ(kshim::mem_counters_diff(before, kshim::mem_counters()), "") << where;
        EXPECT_EQ(panthor_mmu_pt_cache_live(), 0u) << where;
        EXPECT_EQ(drain_reports(), "") << where;
        expect_platform_released(where);
        if (ret) {
            // The platform device is not damaged for good: a fresh GPU probes fine.
            fresh_platform();
            ASSERT_EQ(panthor_probe(pdev()), 0) << "fresh platform after " << where;
            use_and_remove("fresh platform after " + where);
            advance_until_idle(ms_to_ktime(2000));
            EXPECT_EQ(drain_reports(), "") << "fresh platform after " << where;
        }
        if (HasFailure())
            break;
    }
    if (HasFailure())
        return;
    EXPECT_TRUE(reached_end) << "still hitting the fault at occurrence " << nth;
    if (c.probe_errno) {
        EXPECT_GT(failed, 0u) << "no occurrence made probe fail";
    } else {
        EXPECT_EQ(failed, 0u);
        EXPECT_GT(survived, 0u) << "probe never hit the fault";
    }
    std::printf("[ probe   ] %s: %llu occurrences in probe, %llu failed it, %llu survived\n", c.name,
                static_cast<unsigned long long>(nth - 2), static_cast<unsigned long long>(failed),
                static_cast<unsigned long long>(survived));
}

HwWaitFault slow_power() {
    mock_hw::FaultSpec s = fault(mock_hw::FaultKind::SlowPower);
    // 10 us x 5000 = 50 ms: past the driver's 20 ms L2 power-on timeout.
    s.slow_factor = 5000;
    return {"SlowPowerTransition", s, -ETIMEDOUT, "timeout waiting on L2:1 readiness"};
}
HwWaitFault as0_stuck() {
    mock_hw::FaultSpec s = fault(mock_hw::FaultKind::AsActiveStuck);
    s.as = 0;
    return {"As0ActiveStuck", s, -ETIMEDOUT, "AS_ACTIVE bit stuck"};
}

INSTANTIATE_TEST_SUITE_P(Sweep, PanthorProbeHwWait,
                         // No FlushNeverCompletes case: probe issues no cache flush since the MCU's AS is enabled
                         // without one, as upstream's newest MMU does (LostCacheFlushIsRecoveredByTheReset covers
                         // a lost flush).
                         ::testing::Values(slow_power(), as0_stuck(),
                                           HwWaitFault{"McuBootFails", fault(mock_hw::FaultKind::BootFail), -ETIMEDOUT,
                                                       "Failed to boot MCU (status=fatal)"},
                                           // The FW code only warns: a GLB configuration request left unanswered does
                                           // not fail the probe.
                                           HwWaitFault{"GlbAckDropped", fault(mock_hw::FaultKind::GlbAckDrop), 0,
                                                       "FW global interface configuration not acknowledged"}),
                         [](const ::testing::TestParamInfo<HwWaitFault>& info) {
                             return std::string(info.param.name);
                         });

// Probe does no soft reset (the GPU comes out of its power-on state): a reset that never
// completes does not concern it.
TEST_F(PanthorProbeManual, ProbeDoesNoSoftReset) {
    new_device();
    mock_hw::FaultSpec s = fault(mock_hw::FaultKind::ResetNeverCompletes);
    s.trigger = mock_hw::FaultTrigger::always();
    s.max_fires = 0;
    const int id = gpu().faults().add(s);
    ASSERT_EQ(probe(), 0);
    EXPECT_EQ(gpu().faults().fired(id), 0u);
    EXPECT_TRUE(wait_autosuspend());
    EXPECT_EQ(gpu().faults().fired(id), 0u) << "a suspend after a clean halt does not reset either";
}

// The FW code only warns about an unanswered global configuration request: probe succeeds, no
// reset is scheduled, and the ping watchdog keeps running (and keeps getting its answers).
// Only a reset clears the outstanding request.
TEST_F(PanthorProbeManual, GlbConfigAckDroppedIsOnlyWarnedAbout) {
    new_device();
    mock_hw::FaultSpec drop = fault(mock_hw::FaultKind::GlbAckDrop);
    drop.glb_req_mask = GLB_CFG_ALLOC_EN;
    drop.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    const int drop_id = gpu().faults().add(drop);
    // Counts the pings the FW answers (a zero delay changes nothing).
    mock_hw::FaultSpec pings = fault(mock_hw::FaultKind::GlbAckDelay);
    pings.glb_req_mask = GLB_PING;
    pings.trigger = mock_hw::FaultTrigger::always();
    pings.max_fires = 0;
    const int ping_id = gpu().faults().add(pings);

    ASSERT_EQ(probe(), 0);
    EXPECT_EQ(gpu().faults().fired(drop_id), 1u);
    EXPECT_TRUE(
        kshim::log_contains("FW global interface configuration not acknowledged (acked=0x48a)", kshim::LogLevel::Warn));
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));

    // Kept active past two ping periods: the watchdog pings, the FW answers, nothing resets.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    advance(ms_to_ktime(2 * PING_INTERVAL_MS + 100));
    EXPECT_GE(gpu().faults().fired(ping_id), 2u);
    EXPECT_FALSE(kshim::log_contains("FW ping timeout"));
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED);
    kshim::pm_runtime_put_autosuspend(dev());

    // The request stays outstanding across a suspend: the FW is halted and restarted with its
    // interface kept, and the driver's toggle (relative to the ack, as upstream) re-asks the
    // same request, so the next resume warns again, and again does not fail.
    ASSERT_TRUE(wait_autosuspend());
    kshim::log_clear();
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_TRUE(kshim::log_contains("FW global interface configuration not acknowledged (acked=0x48a)"));
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED);
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));

    // A reset rebuilds the interface: configured and answered again.
    kshim::log_clear();
    panthor_device_schedule_reset(ptdev);
    ASSERT_TRUE(run_until([&] { return !panthor_device_reset_is_pending(ptdev); }, ms_to_ktime(1000)));
    EXPECT_FALSE(kshim::log_contains("not acknowledged"));
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED);
    kshim::pm_runtime_put_autosuspend(dev());
    ASSERT_TRUE(wait_autosuspend());
    kshim::log_clear();
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_FALSE(kshim::log_contains("not acknowledged"));
    kshim::pm_runtime_put_autosuspend(dev());
}

// ---------------------------------------------------------------------------------------------
// 4. DEV_QUERY.

class PanthorDevQuery : public ProbeTestBase {
protected:
    int dev_query(u32 type, void* ptr, u32 size, u32* size_out = nullptr, drm::drm_file* f = nullptr) {
        drm_panthor_dev_query q{};
        q.type = type;
        q.size = size;
        q.pointer = ptr ? drm::user_ptr(ptr) : 0;
        const int ret = ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &q, f);
        if (size_out)
            *size_out = q.size;
        return ret;
    }
    template <class T>
    T query(u32 type, drm::drm_file* f = nullptr) {
        T out{};
        drm::UserRange r(out);
        EXPECT_EQ(dev_query(type, &out, sizeof(out), nullptr, f), 0) << "type " << type;
        return out;
    }
};

TEST_F(PanthorDevQuery, NullPointerReturnsTheKernelSize) {
    struct Case {
        u32 type;
        u32 size;
    };
    for (const Case& c :
         {Case{DRM_PANTHOR_DEV_QUERY_GPU_INFO, sizeof(drm_panthor_gpu_info)},
          Case{DRM_PANTHOR_DEV_QUERY_CSIF_INFO, sizeof(drm_panthor_csif_info)},
          Case{DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, sizeof(drm_panthor_timestamp_info)},
          Case{DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, sizeof(drm_panthor_group_priorities_info)}}) {
        u32 size = 0;
        EXPECT_EQ(dev_query(c.type, nullptr, 0, &size), 0) << c.type;
        EXPECT_EQ(size, c.size) << c.type;
    }
    EXPECT_EQ(sizeof(drm_panthor_gpu_info), 112u);
    EXPECT_EQ(sizeof(drm_panthor_timestamp_info), 56u);
    u32 size = 77;
    EXPECT_EQ(dev_query(99, nullptr, size, &size), -EINVAL);
    EXPECT_EQ(size, 77u);
}

TEST_F(PanthorDevQuery, GpuInfoIsWhatTheGpuReports) {
    const mock_hw::GpuIdentity id = mock_hw::GpuConfig().id;
    const auto info = query<drm_panthor_gpu_info>(DRM_PANTHOR_DEV_QUERY_GPU_INFO);
    EXPECT_EQ(info.gpu_id, id.gpu_id);
    EXPECT_EQ(info.gpu_rev, id.revid);
    EXPECT_EQ(info.csf_id, id.csf_id);
    EXPECT_EQ(info.l2_features, id.l2_features);
    EXPECT_EQ(info.tiler_features, id.tiler_features);
    EXPECT_EQ(info.mem_features, id.mem_features);
    EXPECT_EQ(info.mmu_features, id.mmu_features);
    EXPECT_EQ(info.thread_features, id.thread_features);
    EXPECT_EQ(info.max_threads, id.thread_max_threads);
    EXPECT_EQ(info.thread_max_workgroup_size, id.thread_max_workgroup_size);
    EXPECT_EQ(info.thread_max_barrier_size, id.thread_max_barrier_size);
    EXPECT_EQ(info.coherency_features, id.coherency_features);
    for (int i = 0; i < 4; i++)
        EXPECT_EQ(info.texture_features[i], id.texture_features[i]) << i;
    EXPECT_EQ(info.as_present, id.as_present);
    EXPECT_EQ(info.shader_present, id.shader_present);
    EXPECT_EQ(info.l2_present, id.l2_present);
    EXPECT_EQ(info.tiler_present, id.tiler_present);
    EXPECT_EQ(info.core_features, id.core_features);
    // RK3588 is not IO-coherent: no protocol, and the register holds the same value.
    EXPECT_EQ(info.selected_coherency, static_cast<u32>(DRM_PANTHOR_GPU_COHERENCY_NONE));
    EXPECT_EQ(gpu().peek32(GPU_COHERENCY_PROTOCOL).value_or(0), GPU_COHERENCY_NONE);
    EXPECT_EQ(info.pad, 0u);
    EXPECT_EQ(info.gpu_features, id.gpu_features);
    EXPECT_EQ(info.gpu_features, 0u) << "GPU_FEATURES reads as 0 on arch 10";
    EXPECT_EQ(DRM_PANTHOR_ARCH_MAJOR(info.gpu_id), 10u);
    EXPECT_EQ(DRM_PANTHOR_ARCH_MINOR(info.gpu_id), 8u);
}

TEST_F(PanthorDevQuery, CsifInfoIsWhatTheFirmwareReports) {
    const auto info = query<drm_panthor_csif_info>(DRM_PANTHOR_DEV_QUERY_CSIF_INFO);
    EXPECT_EQ(info.csg_slot_count, 8u);
    EXPECT_EQ(info.cs_slot_count, 8u);
    EXPECT_EQ(info.cs_reg_count, 96u);
    EXPECT_EQ(info.scoreboard_slot_count, 8u);
    EXPECT_EQ(info.unpreserved_cs_reg_count, 4u);
    EXPECT_EQ(info.pad, 0u);
}

TEST_F(PanthorDevQuery, TimestampRunsAt24MHzOfVirtualTime) {
    // Kept resumed, so no PM transition moves the clock between the two reads.
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    const auto t0 = query<drm_panthor_timestamp_info>(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO);
    const kshim::ktime_t now0 = kshim::ktime_get();
    EXPECT_EQ(t0.timestamp_frequency, 24'000'000u);
    EXPECT_EQ(t0.timestamp_offset, 0u);
    EXPECT_NEAR(static_cast<double>(t0.current_timestamp), static_cast<double>(now0) * 24 / 1000, 1.0);

    advance(us_to_ktime(1000));
    const auto t1 = query<drm_panthor_timestamp_info>(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO);
    EXPECT_NEAR(static_cast<double>(t1.current_timestamp - t0.current_timestamp), 24'000.0, 1.0);
    advance(ms_to_ktime(500));
    const auto t2 = query<drm_panthor_timestamp_info>(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO);
    EXPECT_NEAR(static_cast<double>(t2.current_timestamp - t1.current_timestamp), 12'000'000.0, 1.0);
    kshim::pm_runtime_put_autosuspend(dev());
}

// 1.8: each requested source, sampled at the same instant of virtual time; nothing else.
TEST_F(PanthorDevQuery, TimestampFlagsSampleTheMockClocks) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    advance(ms_to_ktime(1234));
    auto sample = [&](u32 flags) {
        drm_panthor_timestamp_info info{};
        std::memset(&info, 0xAB, sizeof(info));
        info.flags = flags;
        drm::UserRange r(info);
        EXPECT_EQ(dev_query(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, &info, sizeof(info)), 0) << flags;
        return info;
    };
    u64 gpu_cc = 0, gpu_ts = 0;
    auto regs = [&] {
        kshim::SpinGuard g(gpu().lock());
        gpu_cc = gpu().control().cycle_count_locked();
        gpu_ts = gpu().control().timestamp_locked();
    };

    const u32 all = DRM_PANTHOR_TIMESTAMP_GPU | DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC | DRM_PANTHOR_TIMESTAMP_GPU_OFFSET |
                    DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT | DRM_PANTHOR_TIMESTAMP_FREQ | DRM_PANTHOR_TIMESTAMP_DURATION;
    auto t = sample(all);
    const kshim::ktime_t now = kshim::ktime_get();
    regs();
    EXPECT_EQ(t.flags, all) << "the input goes back as given";
    EXPECT_EQ(t.current_timestamp, gpu_ts);
    EXPECT_EQ(t.cycle_count, gpu_cc);
    EXPECT_GT(t.cycle_count, 0u) << "the MCU keeps the cycle counter running";
    EXPECT_EQ(t.timestamp_frequency, 24'000'000u);
    EXPECT_EQ(t.timestamp_offset, 0u);
    EXPECT_EQ(t.cpu_timestamp_sec * 1'000'000'000 + t.cpu_timestamp_nsec, static_cast<u64>(now));
    EXPECT_LT(t.cpu_timestamp_nsec, 1'000'000'000u);
    EXPECT_EQ(t.duration_nsec, 0u) << "MMIO reads take no virtual time";

    t = sample(DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC_RAW);
    EXPECT_EQ(t.cpu_timestamp_sec * 1'000'000'000 + t.cpu_timestamp_nsec, static_cast<u64>(kshim::ktime_get()));
    EXPECT_EQ(t.current_timestamp | t.cycle_count | t.timestamp_frequency | t.timestamp_offset | t.duration_nsec, 0u)
        << "fields not asked for read 0";

    t = sample(DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT);
    regs();
    EXPECT_EQ(t.cycle_count, gpu_cc);
    EXPECT_EQ(t.current_timestamp | t.cpu_timestamp_sec | t.cpu_timestamp_nsec | t.timestamp_frequency, 0u);

    // Flags 0: the pre-1.8 answer (GPU | GPU_OFFSET | FREQ).
    t = sample(0);
    regs();
    EXPECT_EQ(t.flags, 0u);
    EXPECT_EQ(t.current_timestamp, gpu_ts);
    EXPECT_EQ(t.timestamp_frequency, 24'000'000u);
    EXPECT_EQ(t.cycle_count | t.cpu_timestamp_sec | t.cpu_timestamp_nsec | t.duration_nsec, 0u);
    kshim::pm_runtime_put_autosuspend(dev());
}

TEST_F(PanthorDevQuery, GroupPrioritiesFollowCapSysNice) {
    constexpr u8 kLowMedium = (1u << PANTHOR_GROUP_PRIORITY_LOW) | (1u << PANTHOR_GROUP_PRIORITY_MEDIUM);
    constexpr u8 kAll = kLowMedium | (1u << PANTHOR_GROUP_PRIORITY_HIGH) | (1u << PANTHOR_GROUP_PRIORITY_REALTIME);
    auto prio = query<drm_panthor_group_priorities_info>(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO);
    EXPECT_EQ(prio.allowed_mask, kLowMedium);
    EXPECT_EQ(prio.pad[0] | prio.pad[1] | prio.pad[2], 0);

    set_cap_sys_nice(true);
    prio = query<drm_panthor_group_priorities_info>(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO);
    EXPECT_EQ(prio.allowed_mask, kAll);
    set_cap_sys_nice(false);

    // Another render file without the capability is not affected; a primary-node file (the DRM
    // master here) gets every priority.
    drm::drm_file* other = nullptr;
    ASSERT_EQ(open_file(&other), 0);
    EXPECT_EQ(query<drm_panthor_group_priorities_info>(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, other).allowed_mask,
              kLowMedium);
    drm::drm_release(other);
    drm::drm_file* primary = nullptr;
    ASSERT_EQ(open_file(&primary, false), 0);
    EXPECT_EQ(
        query<drm_panthor_group_priorities_info>(DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, primary).allowed_mask,
        kAll);
    drm::drm_release(primary);
}

TEST_F(PanthorDevQuery, UnknownTypeIsEinvalAndBadPointerEfault) {
    u8 buf[128] = {};
    drm::UserRange r(buf, sizeof(buf));
    EXPECT_EQ(dev_query(DRM_PANTHOR_DEV_QUERY_MMU_INFO + 1, buf, sizeof(buf)), -EINVAL);
    EXPECT_EQ(dev_query(~0u, buf, sizeof(buf)), -EINVAL);

    u8 unregistered[128];
    for (u32 type :
         {DRM_PANTHOR_DEV_QUERY_GPU_INFO, DRM_PANTHOR_DEV_QUERY_CSIF_INFO, DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO,
          DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, DRM_PANTHOR_DEV_QUERY_MMU_INFO}) {
        u32 size = 0;
        ASSERT_EQ(dev_query(type, nullptr, 0, &size), 0);
        EXPECT_EQ(dev_query(type, unregistered, size), -EFAULT) << type;
        // A buffer shorter than what the size says is a bad pointer too.
        EXPECT_EQ(dev_query(type, buf + sizeof(buf) - size + 1, size), -EFAULT) << type;
        EXPECT_EQ(dev_query(type, buf + sizeof(buf) - size, size), 0) << type;
    }
}

// Size negotiation, per query type: below the first release's struct -EINVAL; between that and
// the kernel's struct only `size` bytes are written; beyond it the tail is zeroed.
struct SizeCase {
    const char* name;
    u32 type;
    u32 min_size;
    u32 kernel_size;
    u32 stable_bytes;  // leading bytes that do not change between two queries
    // Input fields the kernel reads ([in_begin, in_end)) and a tail that must be zero: the
    // test writes zeros there instead of poison.
    u32 in_begin = 0, in_end = 0;
    bool zero_tail = false;
};

void PrintTo(const SizeCase& c, std::ostream* os) {
    *os << c.name;
}

class PanthorDevQuerySize : public PanthorDevQuery, public ::testing::WithParamInterface<SizeCase> {
protected:
    static constexpr u32 kBuf = 256;
    static constexpr u8 kPoison = 0xAB;
    // Queries with `size` into a poisoned buffer.
    int query_sized(u32 size, std::vector<u8>* out) {
        out->assign(kBuf, kPoison);
        const SizeCase& c = GetParam();
        for (u32 i = c.in_begin; i < std::min(c.in_end, size); i++)
            (*out)[i] = 0;
        for (u32 i = c.kernel_size; c.zero_tail && i < size; i++)
            (*out)[i] = 0;
        drm::UserRange r(out->data(), out->size());
        return dev_query(GetParam().type, out->data(), size);
    }
};

TEST_P(PanthorDevQuerySize, NegotiatesTheObjectSize) {
    const SizeCase c = GetParam();
    std::vector<u8> full, buf;
    ASSERT_EQ(query_sized(c.kernel_size, &full), 0);
    for (u32 i = c.kernel_size; i < kBuf; i++)
        ASSERT_EQ(full[i], kPoison) << "exact size wrote byte " << i;

    // Too short for the mandatory fields.
    EXPECT_EQ(query_sized(c.min_size - 1, &buf), -EINVAL);
    EXPECT_EQ(query_sized(0, &buf), -EINVAL) << "size 0 with a pointer";
    for (u32 i = 0; i < kBuf; i++)
        ASSERT_EQ(buf[i], kPoison) << "a refused query wrote byte " << i;

    // Every size from the minimum to the kernel's: exactly that many bytes.
    for (u32 size = c.min_size; size <= c.kernel_size; size++) {
        ASSERT_EQ(query_sized(size, &buf), 0) << size;
        for (u32 i = 0; i < std::min(size, c.stable_bytes); i++)
            ASSERT_EQ(buf[i], full[i]) << "size " << size << " byte " << i;
        for (u32 i = size; i < kBuf; i++)
            ASSERT_EQ(buf[i], kPoison) << "size " << size << " wrote byte " << i;
    }

    // A newer userspace's bigger struct: the fields this kernel does not know read as zero.
    const u32 big = c.kernel_size + 40;
    ASSERT_EQ(query_sized(big, &buf), 0);
    for (u32 i = 0; i < c.stable_bytes; i++)
        ASSERT_EQ(buf[i], full[i]) << "byte " << i;
    for (u32 i = c.kernel_size; i < big; i++)
        ASSERT_EQ(buf[i], 0) << "tail byte " << i;
    for (u32 i = big; i < kBuf; i++)
        ASSERT_EQ(buf[i], kPoison) << "past the user's size: byte " << i;
}

INSTANTIATE_TEST_SUITE_P(
    Types, PanthorDevQuerySize,
    ::testing::Values(SizeCase{"GpuInfo", DRM_PANTHOR_DEV_QUERY_GPU_INFO, 96, 112, 112},
                      SizeCase{"CsifInfo", DRM_PANTHOR_DEV_QUERY_CSIF_INFO, 24, 24, 24},
                      // current_timestamp moves: only the frequency is compared.
                      SizeCase{"TimestampInfo", DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO, 16, 56, 8, 24, 28, true},
                      SizeCase{"GroupPrioritiesInfo", DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO, 4, 4, 4}),
    [](const ::testing::TestParamInfo<SizeCase>& info) { return std::string(info.param.name); });

// The answers follow the GPU and firmware the driver finds, not constants.
class PanthorDevQueryOtherGpu : public PanthorDevQuery {
protected:
    mock_hw::GpuConfig gpu_config() const override {
        mock_hw::GpuConfig cfg;
        cfg.id.shader_present = 0x5;
        cfg.id.l2_features = 0x07110206;
        cfg.mcu.group_num = 4;
        cfg.mcu.stream_num = 16;
        cfg.mcu.work_regs = 80;
        cfg.mcu.scoreboards = 6;
        return cfg;
    }
};

TEST_F(PanthorDevQueryOtherGpu, AnswersFollowTheConfiguration) {
    const auto gpu_info = query<drm_panthor_gpu_info>(DRM_PANTHOR_DEV_QUERY_GPU_INFO);
    EXPECT_EQ(gpu_info.shader_present, 0x5u);
    EXPECT_EQ(gpu_info.l2_features, 0x07110206u);
    const auto csif = query<drm_panthor_csif_info>(DRM_PANTHOR_DEV_QUERY_CSIF_INFO);
    EXPECT_EQ(csif.csg_slot_count, 4u);
    EXPECT_EQ(csif.cs_slot_count, 16u);
    EXPECT_EQ(csif.cs_reg_count, 80u);
    EXPECT_EQ(csif.scoreboard_slot_count, 6u);
    EXPECT_EQ(csif.unpreserved_cs_reg_count, 4u);
    EXPECT_TRUE(kshim::log_contains("shader_present=0x5 l2_present=0x1 tiler_present=0x1"));
}

// An IO-coherent platform: the driver selects ACE-Lite (0), reports it and programs it; a
// GPU_FEATURES value the hardware reports reaches userspace unchanged.
class PanthorDevQueryCoherent : public PanthorDevQuery {
protected:
    mock_hw::GpuConfig gpu_config() const override {
        mock_hw::GpuConfig cfg;
        cfg.platform.dma_coherent = true;
        cfg.id.gpu_features = 0x123456789abcdef0ull;
        return cfg;
    }
};

TEST_F(PanthorDevQueryCoherent, SelectsAceLiteAndReportsGpuFeatures) {
    const auto info = query<drm_panthor_gpu_info>(DRM_PANTHOR_DEV_QUERY_GPU_INFO);
    EXPECT_EQ(info.selected_coherency, static_cast<u32>(DRM_PANTHOR_GPU_COHERENCY_ACE_LITE));
    EXPECT_EQ(info.gpu_features, 0x123456789abcdef0ull);
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_EQ(gpu().peek32(GPU_COHERENCY_PROTOCOL).value_or(~0u), GPU_COHERENCY_ACE_LITE);
    kshim::pm_runtime_put_autosuspend(dev());

    // A coherent device maps every BO cached (should_map_wc), WB_MMAP or not.
    for (const u32 flags : {0u, u32{DRM_PANTHOR_BO_WB_MMAP}}) {
        drm::drm_gem_object* obj = file->gem.lookup(bo_create(4096, flags));
        ASSERT_NE(obj, nullptr);
        EXPECT_FALSE(to_panthor_bo(obj)->base.map_wc) << flags;
        drm::drm_gem_object_put(obj);
    }
}

// Coherent, but the GPU offers no ACE-Lite: probe refuses the device.
class PanthorProbeCoherentWithoutAceLite : public PanthorDevQuery {
protected:
    bool probe_in_setup() const override { return false; }
    mock_hw::GpuConfig gpu_config() const override {
        mock_hw::GpuConfig cfg;
        cfg.platform.dma_coherent = true;
        cfg.id.coherency_features = GPU_COHERENCY_PROT_BIT(GPU_COHERENCY_ACE);
        return cfg;
    }
};

TEST_F(PanthorProbeCoherentWithoutAceLite, ProbeFailsWithEnotsupp) {
    EXPECT_EQ(probe(), -ENOTSUPP);
    EXPECT_TRUE(kshim::log_contains("Coherency not supported by the device"));
}

// A SoC whose system counter runs at 1 GHz: the reported frequency is the CPU's CNTFRQ (which the
// platform programs), and the GPU's timestamps count at that rate.
class PanthorDevQueryGigahertzCounter : public PanthorDevQuery {
protected:
    mock_hw::GpuConfig gpu_config() const override {
        mock_hw::GpuConfig cfg;
        cfg.timestamp_hz = 1'000'000'000;
        return cfg;
    }
};

TEST_F(PanthorDevQueryGigahertzCounter, TimestampFrequencyIsTheRateTheGpuCounts) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    const auto t0 = query<drm_panthor_timestamp_info>(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO);
    EXPECT_EQ(t0.timestamp_frequency, 1'000'000'000u);
    EXPECT_EQ(kshim::arch_timer_get_cntfrq(), 1'000'000'000u);
    advance(us_to_ktime(1000));
    const auto t1 = query<drm_panthor_timestamp_info>(DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO);
    EXPECT_NEAR(static_cast<double>(t1.current_timestamp - t0.current_timestamp), 1'000'000.0, 1.0);
    kshim::pm_runtime_put_autosuspend(dev());
}

// ---------------------------------------------------------------------------------------------
// 5. Unplug with a file open, then close and remove.

TEST_F(PanthorProbe, UnplugWithAFileOpenRefusesEverythingThenReleasesCleanly) {
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(4096);
    ASSERT_EQ(vm_map(vm_id, bo, kVa, 4096), 0);
    drm_panthor_bo_mmap_offset mo{};
    mo.handle = bo;
    ASSERT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo), 0);

    panthor_device_unplug(ptdev);
    EXPECT_TRUE(ptdev->base.is_unplugged());
    expect_clocks_off("after unplug");

    drm_panthor_dev_query q{};
    q.type = DRM_PANTHOR_DEV_QUERY_GPU_INFO;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &q), -ENODEV);
    drm_panthor_vm_create vc{};
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_CREATE, &vc), -ENODEV);
    drm_panthor_bo_create bc{};
    bc.size = 4096;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_CREATE, &bc), -ENODEV);
    EXPECT_EQ(vm_unmap(vm_id, kVa, 4096), -ENODEV);
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo), -ENODEV);
    drm_panthor_vm_destroy vd{};
    vd.id = vm_id;
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_DESTROY, &vd), -ENODEV);
    drm::uapi::drm_version v{};
    EXPECT_EQ(ioctl(drm::uapi::DRM_IOCTL_VERSION, &v), -ENODEV);

    drm::VmArea* vma = nullptr;
    EXPECT_EQ(drm::drm_mmap(file, mo.offset, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, &vma), -ENODEV);
    EXPECT_EQ(vma, nullptr);
    drm::VmArea* mmio = nullptr;
    EXPECT_EQ(drm::drm_mmap(file, DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET, 4096, PROT_READ, MAP_SHARED, &mmio), -ENODEV);

    // A second unplug (remove's) is harmless; closing the file and removing leak nothing (the
    // fixture's teardown checks).
    panthor_device_unplug(ptdev);
    remove();
    expect_platform_released("after remove of the unplugged device");
}

// ---------------------------------------------------------------------------------------------
// 6. Reset.

TEST_F(PanthorProbe, ResetRestartsTheFirmwareAndTheDeviceKeepsWorking) {
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(2 * 4096);
    ASSERT_EQ(vm_map(vm_id, bo, kVa, 4096), 0);
    auto* cpu = static_cast<u32*>(bo_cpu(bo, 2 * 4096));
    ASSERT_NE(cpu, nullptr);
    cpu[0] = 0x600DF00D;
    cpu[1024] = 0xC0FFEE;

    // What the reset does to the GPU, from the register writes.
    bool soft_reset = false, mcu_started = false;
    ptdev->iomem->trace_hook = [&](bool is_write, u32 off, u32 value) {
        if (is_write && off == GPU_CMD && value == GPU_SOFT_RESET)
            soft_reset = true;
        if (is_write && off == MCU_CONTROL && value == MCU_CONTROL_AUTO && soft_reset)
            mcu_started = true;
    };

    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    panthor_device_schedule_reset(ptdev);
    EXPECT_TRUE(panthor_device_reset_is_pending(ptdev));
    // A second request while one is pending is the same reset.
    panthor_device_schedule_reset(ptdev);
    ASSERT_TRUE(run_until([&] { return !panthor_device_reset_is_pending(ptdev); }, ms_to_ktime(1000)));
    ptdev->iomem->trace_hook = nullptr;
    EXPECT_TRUE(soft_reset);
    EXPECT_TRUE(mcu_started);
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED);
    EXPECT_FALSE(ptdev->base.is_unplugged());
    EXPECT_FALSE(kshim::log_contains("", kshim::LogLevel::Err));

    // VM_BIND still works, and the GPU sees the old and the new mapping through the VM's AS.
    ASSERT_EQ(vm_map(vm_id, bo, kVa + 4096, 4096, 0, 4096), 0);
    panthor_vm* vm = panthor_vm_pool_get_vm(pfile()->vms, vm_id);
    ASSERT_NE(vm, nullptr);
    ASSERT_EQ(panthor_vm_active(vm), 0);
    const int as = panthor_vm_as(vm);
    EXPECT_GT(as, 0);
    u32 seen[2] = {};
    EXPECT_TRUE(gpu().mmu().read(static_cast<u32>(as), kVa, &seen[0], sizeof(u32)).ok());
    EXPECT_TRUE(gpu().mmu().read(static_cast<u32>(as), kVa + 4096, &seen[1], sizeof(u32)).ok());
    EXPECT_EQ(seen[0], 0x600DF00Du);
    EXPECT_EQ(seen[1], 0xC0FFEEu);
    panthor_vm_idle(vm);
    panthor_vm_put(vm);
    kshim::pm_runtime_put_autosuspend(dev());

    EXPECT_EQ(vm_unmap(vm_id, kVa, 2 * 4096), 0);
    vm_destroy(vm_id);
    // And it still suspends and resumes.
    EXPECT_TRUE(wait_autosuspend());
    drm_panthor_timestamp_info ts{};
    drm_panthor_dev_query q{};
    q.type = DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO;
    q.size = sizeof(ts);
    q.pointer = drm::user_ptr(&ts);
    drm::UserRange r(ts);
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_DEV_QUERY, &q), 0);
}

// A reset asked for while the device is suspended does not run then; the next resume does a
// slow restart instead.
TEST_F(PanthorProbe, ResetRequestedWhileSuspendedBecomesASlowResume) {
    ASSERT_TRUE(wait_autosuspend());
    panthor_device_schedule_reset(ptdev);
    EXPECT_TRUE(panthor_device_reset_is_pending(ptdev));
    advance(ms_to_ktime(100));
    EXPECT_TRUE(kshim::pm_runtime_suspended(dev()));
    EXPECT_TRUE(panthor_device_reset_is_pending(ptdev));
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED);
    kshim::pm_runtime_put_autosuspend(dev());
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(4096);
    EXPECT_EQ(vm_map(vm_id, bo, kVa, 4096), 0);
}

// A cache flush that never completes while the kernel maps a BO in the FW's VM (bound to AS 0):
// a reset is scheduled, and it brings the device back: its own flushes are issued and complete.
TEST_F(PanthorProbe, LostCacheFlushIsRecoveredByTheReset) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    mock_hw::FaultSpec lost = fault(mock_hw::FaultKind::FlushNeverCompletes);
    lost.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    const int id = gpu().faults().add(lost);

    panthor_kernel_bo* kbo = panthor_fw_alloc_suspend_buf_mem(ptdev, 4096);
    ASSERT_FALSE(kshim::IS_ERR_OR_NULL(kbo));
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_TRUE(kshim::log_contains("Flush caches timeout"));
    ASSERT_TRUE(run_until([&] { return !panthor_device_reset_is_pending(ptdev); }, ms_to_ktime(2000)));
    EXPECT_FALSE(ptdev->base.is_unplugged()) << "the reset failed";
    EXPECT_FALSE(kshim::log_contains("after reset"));
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_ENABLED);
    EXPECT_EQ(panthor_vm_as(panthor_fw_vm(ptdev)), 0);

    // Later flushes complete: the BO goes, and a user VM bound to an AS maps fine.
    kshim::log_clear();
    panthor_kernel_bo_destroy(kbo);
    const u32 vm_id = vm_create();
    const u32 bo = bo_create(4096);
    panthor_vm* vm = panthor_vm_pool_get_vm(pfile()->vms, vm_id);
    ASSERT_NE(vm, nullptr);
    ASSERT_EQ(panthor_vm_active(vm), 0);
    EXPECT_EQ(vm_map(vm_id, bo, kVa, 4096), 0);
    EXPECT_FALSE(kshim::log_contains("timeout"));
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));
    panthor_vm_idle(vm);
    panthor_vm_put(vm);
    kshim::pm_runtime_put_autosuspend(dev());
}

// Where a soft reset does happen (the reset work), one that never completes: the FW cannot be
// restarted on a GPU that was not reset, and the device is declared unusable (as upstream):
// unplugged, its MCU stopped, every ioctl -ENODEV; close and remove still release everything.
TEST_F(PanthorProbe, SoftResetThatNeverCompletesMakesTheDeviceUnusable) {
    ASSERT_EQ(kshim::pm_runtime_resume_and_get(dev()), 0);
    mock_hw::FaultSpec lost = fault(mock_hw::FaultKind::ResetNeverCompletes);
    lost.trigger = mock_hw::FaultTrigger::nth_occurrence(1);
    const int id = gpu().faults().add(lost);
    panthor_device_schedule_reset(ptdev);
    // The reset work says so once its unplug (which stops the MCU) is done.
    ASSERT_TRUE(run_until(
        [&] {
            return kshim::log_contains("Failed to boot MCU after reset, making device unusable.", kshim::LogLevel::Err);
        },
        ms_to_ktime(5000)));
    EXPECT_TRUE(ptdev->base.is_unplugged());
    EXPECT_EQ(gpu().faults().fired(id), 1u);
    EXPECT_TRUE(kshim::log_contains("Soft reset timeout", kshim::LogLevel::Err));
    EXPECT_FALSE(panthor_device_reset_is_pending(ptdev));
    EXPECT_EQ(gpu().peek32(MCU_STATUS).value_or(~0u), MCU_STATUS_DISABLED);

    drm_panthor_vm_create vc{};
    EXPECT_EQ(ioctl(DRM_IOCTL_PANTHOR_VM_CREATE, &vc), -ENODEV);
    kshim::pm_runtime_put_autosuspend(dev());
    advance(ms_to_ktime(100));
    expect_clocks_off("after the unusable device's last PM reference went");
    remove();
    expect_platform_released("after remove of the unusable device");
}

}  // namespace
}  // namespace panthor::testing
