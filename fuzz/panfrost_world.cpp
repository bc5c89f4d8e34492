// (no upstream counterpart) fuzz_panfrost_ioctl's world (panfrost_world.h).
#include "fuzz/panfrost_world.h"

#include <cstdio>

#include "fuzz/panthor_world.h"
#include "kernel_shim/log.h"
#include "panfrost/panfrost_drv.h"

namespace upanthor_fuzz {

namespace {
// The device autosuspends after 50 ms; a settled device is the state every input starts in.
constexpr kshim::ktime_t kSettle = 2 * kshim::NSEC_PER_SEC;
// How long a drain may take in virtual time (a 500 ms job timeout or two) before the runtime
// counts as not going idle.
constexpr kshim::ktime_t kDrainLimit = 60 * kshim::NSEC_PER_SEC;
}  // namespace

PanfrostWorld::PanfrostWorld(kshim::u64 seed) : seed_(seed) {
    boot();
}

void PanfrostWorld::boot() {
    ++boots_;
    pfdev_ = nullptr;
    upanthor::host::World::Options o;
    o.runtime.seed = seed_;
    o.machine.model = "g52";
    o.boot = upanthor::host::World::Boot::Driver;
    world_ = std::make_unique<upanthor::host::World>(o);
    if (!world_->machine())
        fuzz_fail("module init of the driver failed: " + std::to_string(world_->status()));
    if (world_->up()) {
        pfdev_ = panfrost::panfrost_from_pdev(machine().pdev());
        machine().settle(kSettle);
    }
    kshim::log_clear();
    input_.mark();
}

PanfrostWorld::~PanfrostWorld() {
    if (world_->finished())
        return;
    const std::string p = finish();
    if (!p.empty())
        std::fprintf(stderr, "[fuzz] at world teardown:\n%s", p.c_str());
}

std::string PanfrostWorld::finish() {
    pfdev_ = nullptr;
    upanthor::host::CheckOptions opts;
    opts.drain_limit = kDrainLimit;
    return upanthor::host::problems_text(world_->finish(opts));
}

std::string PanfrostWorld::reboot() {
    std::string out = finish();
    boot();
    if (world_->status())
        out += "probe failed after a reboot: " + std::to_string(world_->status()) + "\n";
    return out;
}

std::string PanfrostWorld::check(ReportFilter expected) {
    if (pfdev_)
        machine().settle(kSettle);
    // A job timeout leaves panfrost's devcoredump pending (with its 5 min expiry timer): read it
    // out and release it, as a user would, so the input ends idle and owning nothing.
    machine().consume_devcoredump();
    upanthor::host::CheckOptions opts;
    opts.drain_limit = kDrainLimit;
    if (expected)
        opts.accept_report = [expected](const kshim::Report& r) { return expected(r); };
    std::string out = upanthor::host::problems_text(input_.drain(rt(), opts));
    if (std::string leaks = upanthor::host::problems_text(input_.leaks(opts)); !leaks.empty())
        out += leaks;
    kshim::log_clear();
    input_.mark();
    return out;
}

}  // namespace upanthor_fuzz
