// (no upstream counterpart) The host's world (world.h).
#include "host/world.h"

#include <cstdio>

#include "drm/drm_mmap.h"
#include "kernel_shim/sim_abort.h"

namespace upanthor::host {

World::World(Options opts) : opts_(std::move(opts)) {
    boot();
}

void World::boot() {
    checks_.mark();
    rt_ = std::make_unique<kshim::Runtime>(opts_.runtime);
    if (opts_.boot == Boot::Runtime)
        return;
    if (int ret = Machine::create(opts_.machine, &machine_)) {
        status_ = ret;
        failed_step_ = "module init of the model's driver";
        return;
    }
    if (opts_.boot == Boot::Device)
        return;
    if (int ret = machine_->probe()) {
        status_ = ret;
        failed_step_ = std::string(machine_->driver().name) + " probe";
        return;
    }
    // panfrost leaves the MMU interrupts masked from probe until the GPU's first runtime resume, as
    // upstream, where probe runs at boot, long before a program opens the node: a booted JM device
    // autosuspends once here, as it would have by then (a page fault of the first jobs would
    // otherwise go unseen until the job timeout).
    if (machine_->jm())
        (void)machine_->settle();
}

World::~World() {
    if (finished())
        return;
    const std::string p = problems_text(finish());
    if (!p.empty())
        std::fprintf(stderr, "upanthor: at the end of the world:\n%s", p.c_str());
}

std::vector<Problem> World::finish(const CheckOptions& opts) {
    std::vector<Problem> out;
    if (!rt_)
        return out;
    try {
        // A JM device is removed once its GPU went idle, as it would be by the time a real module
        // unloads: a job whose fence the client saw signal may still wait in drm_sched's pending
        // list for its free_job work, and drm_sched_fini would find it there (real mode, a loaded
        // host: preload_panfrost_write at exit).
        if (machine_ && machine_->jm() && machine_->probed())
            (void)machine_->settle(kshim::NSEC_PER_SEC);
        machine_.reset();
    } catch (const kshim::SimAbort&) {
        out.push_back({Problem::Kind::Deadlock, "simulation deadlock while removing the driver"});
    }
    for (Problem& p : checks_.drain(*rt_, opts))
        out.push_back(std::move(p));
    // A release still finishing on another thread (real mode) gets the grace period to land.
    if (rt_->mode() == kshim::Mode::Real)
        for (int i = 0; i < 100 && !checks_.leaks(opts).empty(); i++) {
            rt_->advance(10 * kshim::NSEC_PER_MSEC);
            rt_->advance_until_idle(kshim::NSEC_PER_SEC);
        }
    rt_.reset();
    for (Problem& p : checks_.leaks(opts))
        out.push_back(std::move(p));
    for (Problem& p : RunChecks::reports(opts))
        out.push_back(std::move(p));
    if (long live = drm::drm_mmap_live(); live != 0)
        out.push_back({Problem::Kind::LiveMappings, std::to_string(live) + " mappings left at the end of the run"});
    return out;
}

}  // namespace upanthor::host
