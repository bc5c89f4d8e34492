// (no upstream counterpart) libFuzzer target: map/unmap/remap sequences on drm_gpuvm and an
// io-pgtable against the reference model (fuzz/gpuvm_program.h).
#include "fuzz/gpuvm_program.h"
#include "fuzz/panthor_world.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static auto* world = new upanthor_fuzz::PanthorWorld(upanthor_fuzz::PanthorWorld::Kind::Runtime);
    const std::string problems = upanthor_fuzz::run_gpuvm_program(*world, data, size);
    if (!problems.empty())
        upanthor_fuzz::fuzz_fail(problems);
    return 0;
}
