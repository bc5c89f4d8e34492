// (no upstream counterpart) libFuzzer target: syzkaller-style programs of panthor and DRM core
// ioctls on one device (fuzz/ioctl_program.h). One device per process, booted at the first
// input; every input is checked for leaks, reports and blocked tasks once it released what it
// made. A finding aborts, so libFuzzer saves the input.
#include <cstdlib>
#include <memory>

#include "fuzz/ioctl_program.h"
#include "fuzz/panthor_world.h"

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
    upanthor_fuzz::fuzz_init_env(argv && *argv ? (*argv)[0] : nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static auto* world = [] {
        auto* w = new upanthor_fuzz::PanthorWorld(upanthor_fuzz::PanthorWorld::Kind::Driver);
        if (w->probe_result()) upanthor_fuzz::fuzz_fail("probe failed: " + std::to_string(w->probe_result()));
        return w;
    }();
    std::string trace;
    upanthor_fuzz::IoctlProgramOptions opts;
    if (std::getenv("UPANTHOR_FUZZ_TRACE")) opts.trace = &trace;
    const std::string problems = upanthor_fuzz::run_ioctl_program(*world, data, size, opts);
    if (!trace.empty()) std::fprintf(stderr, "%s", trace.c_str());
    if (!problems.empty()) upanthor_fuzz::fuzz_fail(problems);
    return 0;
}
