// (no upstream counterpart) libFuzzer target: programs of panfrost and DRM core ioctls on one
// panfrost device, the mock Mali-G52 (fuzz/panfrost_ops.h). One device per process, booted at
// the first input; every input is checked, once it released what it made, for out fences that
// never signal, leaks, kshim reports and blocked tasks. A finding aborts, so libFuzzer saves
// the input. UPANTHOR_FUZZ_TRACE=1 prints each program's calls (triage).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/panfrost_ops.h"
#include "fuzz/panfrost_world.h"
#include "fuzz/panthor_world.h"

namespace {

using upanthor_fuzz::PanfrostWorld;

// The device is rebooted every so many inputs: what one input leaves in the device (an AS
// assignment, the cycle counter's state) is fine, but a bounded past keeps findings replayable
// from a handful of inputs.
constexpr unsigned kInputsPerBoot = 256;

PanfrostWorld& the_world() {
    static auto* world = [] {
        auto* w = new PanfrostWorld();
        if (w->probe_result())
            upanthor_fuzz::fuzz_fail("probe failed: " + std::to_string(w->probe_result()));
        return w;
    }();
    return *world;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
    upanthor_fuzz::fuzz_init_env(argv && *argv ? (*argv)[0] : nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static unsigned inputs = 0;
    PanfrostWorld& world = the_world();
    if (++inputs % kInputsPerBoot == 0) {
        if (const std::string p = world.reboot(); !p.empty())
            upanthor_fuzz::fuzz_fail(p);
    }
    std::string trace;
    upanthor_fuzz::PanfrostProgramOptions opts;
    if (std::getenv("UPANTHOR_FUZZ_TRACE"))
        opts.trace = &trace;
    const std::string problems = upanthor_fuzz::run_panfrost_program(world, data, size, opts);
    if (!trace.empty())
        std::fprintf(stderr, "%s", trace.c_str());
    if (!problems.empty())
        upanthor_fuzz::fuzz_fail(problems + (trace.empty() ? "" : "program:\n" + trace));
    return 0;
}
