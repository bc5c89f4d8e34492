// (no upstream counterpart) fuzz_gpuvm's decoder and executor: a sequence of map and unmap
// requests (map over existing mappings is a remap) on a drm_gpuvm, applied through the VM_BIND
// step flow of testkit/gpuvm_harness.h and mirrored into an ARM LPAE io-pgtable, both
// checked after every op against the interval model of testkit/gpuvm_model.h (the model of
// the seeded differential test). Invalid requests (empty, overflowing, outside the VA space)
// must be refused with -EINVAL and change nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/panthor_world.h"

namespace upanthor_fuzz {

// Runs the op sequence `data` decodes to; "" or the first disagreement / the world's findings.
std::string run_gpuvm_program(PanthorWorld& world, const uint8_t* data, size_t size);

}  // namespace upanthor_fuzz
