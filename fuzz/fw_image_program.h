// (no upstream counterpart) fuzz_fw_image's executor: the input bytes become
// arm/mali/arch10.8/mali_csffw.bin in a private firmware folder and the driver is probed on a
// fresh mock platform. Probe must either fail cleanly or succeed (then the driver is removed);
// either way nothing may leak, WARN, or stay blocked.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/panthor_world.h"

namespace upanthor_fuzz {

// `world` must be a Kind::Platform world. *probe_ret (if given) gets the probe's result.
std::string run_fw_image(PanthorWorld& world, const uint8_t* data, size_t size, int* probe_ret = nullptr);

// The mock GPU's default firmware image (the seed every corpus starts from).
std::vector<uint8_t> default_fw_image_bytes();

}  // namespace upanthor_fuzz
