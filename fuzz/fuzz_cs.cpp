// (no upstream counterpart) libFuzzer target: arbitrary instruction words executed by the mock's
// command-stream engine in a group of the driver (fuzz/cs_program.h).
#include <cstdlib>

#include "fuzz/cs_program.h"
#include "fuzz/panthor_world.h"

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
    upanthor_fuzz::fuzz_init_env(argv && *argv ? (*argv)[0] : nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static auto* world = new upanthor_fuzz::PanthorWorld(upanthor_fuzz::PanthorWorld::Kind::Driver);
    static auto* runner = new upanthor_fuzz::CsRunner(*world);
    const std::string problems = runner->run(data, size);
    if (!problems.empty())
        upanthor_fuzz::fuzz_fail(problems);
    return 0;
}
