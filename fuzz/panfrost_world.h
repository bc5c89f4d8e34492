// (no upstream counterpart) fuzz_panfrost_ioctl's world: the host library's World booted with the
// g52 model (the mock Mali-G52 and the panfrost driver probed on it) plus the per-input mark and
// checks, as PanthorWorld (fuzz/panthor_world.h) does for the G610: one world per process, each
// input checked against a mark taken before it for leaks, kshim reports and blocked tasks.
#pragma once
#include <memory>
#include <string>

#include "host/world.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "mock_jm/jm_platform.h"
#include "panfrost/panfrost_device.h"

namespace upanthor_fuzz {

class PanfrostWorld {
public:
    // Only one world (one runtime) may exist at a time in a process.
    explicit PanfrostWorld(kshim::u64 seed = 1);
    ~PanfrostWorld();
    PanfrostWorld(const PanfrostWorld&) = delete;
    PanfrostWorld& operator=(const PanfrostWorld&) = delete;

    kshim::Runtime& rt() { return world_->rt(); }
    upanthor::host::Machine& machine() { return *world_->machine(); }
    mock_jm::JmGpu& gpu() { return machine().jm()->gpu(); }
    panfrost::panfrost_device* pfdev() { return pfdev_; }
    int probe_result() const { return world_->status(); }

    // Lets the device settle (autosuspend), drains the runtime and returns what went wrong since
    // the last mark (taken at boot and after every check): leaks, reports, blocked tasks, a
    // runtime that does not go idle. "" when clean.
    // `expected` (optional) accepts reports the input explains (a WARN upstream also gives when
    // an injected allocation failure hits it); every other report is a finding.
    using ReportFilter = bool (*)(const kshim::Report&);
    std::string check(ReportFilter expected = nullptr);
    // Removes the driver and drains, then compares with the memory before the world existed.
    std::string finish();
    // finish(), then a fresh world in its place. Returns what finish() found.
    std::string reboot();
    unsigned boots() const { return boots_; }

private:
    void boot();

    kshim::u64 seed_;
    std::unique_ptr<upanthor::host::World> world_;
    panfrost::panfrost_device* pfdev_ = nullptr;
    upanthor::host::RunChecks input_;
    unsigned boots_ = 0;
};

}  // namespace upanthor_fuzz
