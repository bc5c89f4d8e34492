// (no upstream counterpart) A host's whole world: a kshim runtime owned by the calling thread
// (which becomes its main task), a Machine booted on it, and the end-of-run checks against the
// memory before the world existed. The programs that host the driver (the fuzz targets,
// `upanthor run` and `info`, the benchmarks, the preload library) each keep one; the gtest
// fixtures keep the same pieces (tests/support, tests/panthor).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "host/machine.h"
#include "host/run_checks.h"
#include "kernel_shim/runtime.h"

namespace upanthor::host {

class World {
public:
    enum class Boot {
        Runtime,  // the runtime only (library-level work)
        Device,   // the machine: driver module loaded, device created, not probed
        Driver,   // the driver probed on the device
    };
    struct Options {
        kshim::RuntimeOptions runtime;
        Machine::Options machine;
        Boot boot = Boot::Driver;
    };
    explicit World(Options opts);
    // finish() unless done; its problems go to stderr.
    ~World();
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    kshim::Runtime& rt() { return *rt_; }
    // nullptr for Boot::Runtime.
    Machine* machine() { return machine_.get(); }
    // 0, or the errno of the step that failed (failed_step() names it).
    int status() const { return status_; }
    const std::string& failed_step() const { return failed_step_; }
    // The driver is bound (Boot::Driver and the probe succeeded).
    bool up() const { return machine_ && machine_->probed(); }

    // Removes the driver, destroys the machine, drains the runtime and destroys it, then checks
    // against the memory before the world: leaks, reports, blocked tasks, an idle runtime. The
    // world is unusable after (except for the destructor).
    std::vector<Problem> finish(const CheckOptions& opts = {});
    bool finished() const { return !rt_; }

private:
    void boot();

    Options opts_;
    RunChecks checks_;
    std::unique_ptr<kshim::Runtime> rt_;
    std::unique_ptr<Machine> machine_;
    int status_ = 0;
    std::string failed_step_;
};

}  // namespace upanthor::host
