// (no upstream counterpart) The fuzz targets' world (panthor_world.h).
#include "fuzz/panthor_world.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "kernel_shim/log.h"
#include "panthor/panthor_drv.h"

namespace upanthor_fuzz {

namespace {
// The device autosuspends after its delay; a settled device is the state every input starts in.
constexpr kshim::ktime_t kSettle = 2 * kshim::NSEC_PER_SEC;
// How long a drain may take in virtual time before the runtime counts as not going idle.
constexpr kshim::ktime_t kDrainLimit = 60 * kshim::NSEC_PER_SEC;
}  // namespace

PanthorWorld::PanthorWorld(Kind kind, kshim::u64 seed) : kind_(kind), seed_(seed) {
    boot();
}

void PanthorWorld::boot() {
    ++boots_;
    ptdev_ = nullptr;
    upanthor::host::World::Options o;
    o.runtime.seed = seed_;
    o.boot = kind_ == Kind::Runtime    ? upanthor::host::World::Boot::Runtime
             : kind_ == Kind::Platform ? upanthor::host::World::Boot::Device
                                       : upanthor::host::World::Boot::Driver;
    world_ = std::make_unique<upanthor::host::World>(o);
    if (kind_ != Kind::Runtime && !world_->machine())
        fuzz_fail("module init of the driver failed: " + std::to_string(world_->status()));
    if (kind_ == Kind::Driver && world_->up()) {
        ptdev_ = panthor::panthor_from_pdev(plat().pdev());
        // Start every input from a suspended, quiet device.
        machine().settle(kSettle);
    }
    kshim::log_clear();
    input_.mark();
}

PanthorWorld::~PanthorWorld() {
    if (world_->finished())
        return;
    const std::string p = finish();
    if (!p.empty())
        std::fprintf(stderr, "[fuzz] at world teardown:\n%s", p.c_str());
}

std::string PanthorWorld::finish() {
    ptdev_ = nullptr;
    upanthor::host::CheckOptions opts;
    opts.drain_limit = kDrainLimit;
    return upanthor::host::problems_text(world_->finish(opts));
}

void PanthorWorld::mark() {
    input_.mark();
}

bool PanthorWorld::device_lost() const {
    return ptdev_ && world_->machine()->device_lost();
}

std::string PanthorWorld::reboot() {
    std::string out = finish();
    boot();
    if (kind_ == Kind::Driver && world_->status())
        out += "probe failed after a reboot: " + std::to_string(world_->status()) + "\n";
    return out;
}

void PanthorWorld::new_platform() {
    machine().new_device();
}

std::string PanthorWorld::check(ReportFilter expected) {
    upanthor::host::Machine* m = world_->machine();
    if (ptdev_)
        m->settle(kSettle);
    if (m)
        m->consume_devcoredump();
    upanthor::host::CheckOptions opts;
    opts.drain_limit = kDrainLimit;
    if (expected)
        opts.accept_report = [expected](const kshim::Report& r) { return expected(r); };
    // The index of a VM that outlives the input (the MCU's) keeps emptied nodes in a reserve.
    opts.ignore_leak = [](std::string_view line) { return line.find("drm_gpuva_index") != std::string_view::npos; };
    std::string out = upanthor::host::problems_text(input_.drain(rt(), opts));
    if (std::string leaks = upanthor::host::problems_text(input_.leaks(opts)); !leaks.empty())
        out += leaks;
    // The log keeps every line; an input's lines are of no use to the next one.
    kshim::log_clear();
    return out;
}

void fuzz_init_env(const char* argv0) {
    setenv("KSHIM_LOG", "none", 0);
    if (std::getenv("UPANTHOR_FIRMWARE_PATH") || !argv0)
        return;
    std::error_code ec;
    const auto dir = std::filesystem::absolute(argv0, ec).parent_path() / "firmware";
    if (!ec && std::filesystem::is_directory(dir, ec))
        setenv("UPANTHOR_FIRMWARE_PATH", dir.c_str(), 0);
}

void fuzz_fail(const std::string& what) {
    std::fprintf(stderr, "[fuzz] FINDING:\n%s\n", what.c_str());
    std::fflush(stderr);
    std::abort();
}

}  // namespace upanthor_fuzz
