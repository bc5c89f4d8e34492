// (no upstream counterpart) fuzz_fw_image's executor (fw_image_program.h).
#include "fuzz/fw_image_program.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "kernel_shim/firmware.h"
#include "kernel_shim/sim_abort.h"
#include "mock_hw/fw_image.h"
#include "panthor/panthor_drv.h"

namespace upanthor_fuzz {

namespace {
// One folder per process (request_firmware reads a file; the path is what probe asks for).
const std::string& fw_dir() {
    static const std::string dir = [] {
        std::string tmpl = (std::filesystem::temp_directory_path() / "upanthor-fuzz-fw-XXXXXX").string();
        if (!mkdtemp(tmpl.data()))
            fuzz_fail("mkdtemp failed");
        std::filesystem::create_directories(tmpl + "/arm/mali/arch10.8");
        return tmpl;
    }();
    return dir;
}
}  // namespace

std::vector<uint8_t> default_fw_image_bytes() {
    return mock_hw::write_fw_image(mock_hw::default_fw_image());
}

std::string run_fw_image(PanthorWorld& world, const uint8_t* data, size_t size, int* probe_ret) {
    const std::string path = fw_dir() + "/arm/mali/arch10.8/mali_csffw.bin";
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
        if (size)
            std::fwrite(data, 1, size, f);
        std::fclose(f);
    } else {
        fuzz_fail("cannot write " + path);
    }
    const std::string saved = kshim::firmware_search_path();
    kshim::firmware_set_search_path(fw_dir());
    world.new_platform();
    world.mark();
    std::string problem;
    try {
        const int ret = panthor::panthor_probe(world.plat().pdev());
        if (probe_ret)
            *probe_ret = ret;
        if (ret > 0)
            problem += "probe returned a positive value " + std::to_string(ret) + "\n";
        if (ret == 0)
            panthor::panthor_remove(world.plat().pdev());
    } catch (const kshim::SimAbort&) {
        problem += "simulation deadlock during probe/remove\n";
    }
    kshim::firmware_set_search_path(saved);
    return problem + world.check();
}

}  // namespace upanthor_fuzz
