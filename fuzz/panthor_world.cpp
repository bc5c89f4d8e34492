// (no upstream counterpart) The fuzz targets' world (panthor_world.h).
#include "fuzz/panthor_world.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "kernel_shim/devcoredump.h"
#include "kernel_shim/log.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sim_abort.h"
#include "panthor/panthor_drv.h"

namespace upanthor_fuzz {

namespace {
// The device autosuspends after its delay; a settled device is the state every input starts in.
constexpr kshim::ktime_t kSettle = 2 * kshim::NSEC_PER_SEC;

std::string drain_problems(kshim::Runtime& rt, PanthorWorld::ReportFilter expected = nullptr) {
    std::string out;
    bool idle = false;
    try {
        idle = rt.run_until_idle(60 * kshim::NSEC_PER_SEC);
    } catch (const kshim::SimAbort&) {
        out += "simulation deadlock while draining\n";
    }
    if (!idle) out += "the runtime did not go idle\n";
    for (const std::string& s : rt.stuck_tasks()) out += "task still blocked: " + s + "\n";
    for (const kshim::Report& r : kshim::take_reports())
        if (!expected || !expected(r))
            out += std::string("kshim report [") + kshim::report_kind_name(r.kind) + "]: " + r.title + "\n" + r.detail + "\n";
    return out;
}
}  // namespace

PanthorWorld::PanthorWorld(Kind kind, kshim::u64 seed) : kind_(kind), seed_(seed) { boot(); }

void PanthorWorld::boot() {
    const Kind kind = kind_;
    ++boots_;
    finished_ = false;
    probe_ret_ = 0;
    kshim::take_reports();
    kshim::log_clear();
    before_world_ = kshim::mem_counters();
    kshim::RuntimeOptions o;
    o.seed = seed_;
    rt_ = std::make_unique<kshim::Runtime>(o);
    if (kind != Kind::Runtime) {
        if (panthor::panthor_init() != 0) fuzz_fail("panthor_init failed");
        inited_ = true;
        plat_ = std::make_unique<mock_hw::MockPlatform>();
    }
    if (kind == Kind::Driver) {
        probe_ret_ = panthor::panthor_probe(plat_->pdev());
        if (probe_ret_ == 0) ptdev_ = panthor::panthor_from_pdev(plat_->pdev());
        // Start every input from a suspended, quiet device.
        rt_->run_until([&] { return kshim::pm_runtime_suspended(&plat_->pdev()->dev); }, kSettle);
    }
    kshim::log_clear();
    mark_ = kshim::mem_counters();
}

PanthorWorld::~PanthorWorld() {
    if (finished_) return;
    const std::string p = finish();
    if (!p.empty()) std::fprintf(stderr, "[fuzz] at world teardown:\n%s", p.c_str());
}

std::string PanthorWorld::finish() {
    finished_ = true;
    std::string out;
    try {
        if (ptdev_) panthor::panthor_remove(plat_->pdev());
    } catch (const kshim::SimAbort&) {
        out += "simulation deadlock while removing the driver\n";
    }
    ptdev_ = nullptr;
    plat_.reset();
    if (inited_) panthor::panthor_exit();
    out += drain_problems(*rt_);
    rt_.reset();
    const std::string leaks = kshim::mem_counters_diff(before_world_, kshim::mem_counters());
    if (!leaks.empty()) out += "leaked by the end of the world:\n" + leaks;
    return out;
}

void PanthorWorld::mark() { mark_ = kshim::mem_counters(); }

bool PanthorWorld::device_lost() const { return ptdev_ && ptdev_->base.is_unplugged(); }

std::string PanthorWorld::reboot() {
    std::string out = finish();
    inited_ = false;
    boot();
    if (kind_ == Kind::Driver && probe_ret_) out += "probe failed after a reboot: " + std::to_string(probe_ret_) + "\n";
    return out;
}

void PanthorWorld::new_platform() {
    plat_.reset();
    plat_ = std::make_unique<mock_hw::MockPlatform>();
}

std::string PanthorWorld::check(ReportFilter expected) {
    if (ptdev_) rt_->run_until([&] { return kshim::pm_runtime_suspended(&plat_->pdev()->dev); }, kSettle);
    if (plat_) {
        // What udev does with a devcoredump: read it all, then write to `data` to free it (it
        // would otherwise stay for DEVCD_TIMEOUT, a timer that keeps the runtime busy).
        kshim::Device* dev = &plat_->pdev()->dev;
        if (kshim::dev_coredump_pending(dev)) {
            char buf[4096];
            for (loff_t off = 0;;) {
                const ssize_t n = kshim::devcd_read(dev, buf, off, sizeof buf);
                if (n <= 0) break;
                off += n;
            }
            kshim::dev_coredump_clear(dev);
        }
    }
    std::string out = drain_problems(*rt_, expected);
    std::string leaks;
    std::istringstream diff(kshim::mem_counters_diff(mark_, kshim::mem_counters()));
    for (std::string line; std::getline(diff, line);)
        if (line.find("drm_gpuva_index") == std::string::npos) leaks += line + "\n";
    if (!leaks.empty()) out += "leaked:\n" + leaks;
    // The log keeps every line; an input's lines are of no use to the next one.
    kshim::log_clear();
    return out;
}

void fuzz_init_env(const char* argv0) {
    setenv("KSHIM_LOG", "none", 0);
    if (std::getenv("UPANTHOR_FIRMWARE_PATH") || !argv0) return;
    std::error_code ec;
    const auto dir = std::filesystem::absolute(argv0, ec).parent_path() / "firmware";
    if (!ec && std::filesystem::is_directory(dir, ec)) setenv("UPANTHOR_FIRMWARE_PATH", dir.c_str(), 0);
}

void fuzz_fail(const std::string& what) {
    std::fprintf(stderr, "[fuzz] FINDING:\n%s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace upanthor_fuzz
