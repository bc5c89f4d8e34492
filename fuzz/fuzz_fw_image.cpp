// (no upstream counterpart) libFuzzer target: arbitrary bytes as the firmware file given to
// probe (fuzz/fw_image_program.h). A finding aborts, so libFuzzer saves the input.
#include <cstdlib>

#include "fuzz/fw_image_program.h"
#include "fuzz/panthor_world.h"

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
    upanthor_fuzz::fuzz_init_env(argv && *argv ? (*argv)[0] : nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static auto* world = new upanthor_fuzz::PanthorWorld(upanthor_fuzz::PanthorWorld::Kind::Platform);
    const std::string problems = upanthor_fuzz::run_fw_image(*world, data, size);
    if (!problems.empty()) upanthor_fuzz::fuzz_fail(problems);
    return 0;
}
