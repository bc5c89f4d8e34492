// What the preload library does to and says about the mock GPU behind it: faults armed from
// UPANTHOR_INJECT at boot, and one line at exit about what the client's work really did on the
// GPU (jobs on real descriptors ran no shader; injected faults that fired).
#pragma once
#include <vector>

namespace upanthor::host {
class World;
}

namespace upanthor::preload {

struct GpuFaults {
    std::vector<int> ids;  // FaultPlan ids of the armed faults
};

// Arms every fault of UPANTHOR_INJECT ("SPEC;SPEC...", each in `upanthor run --inject`'s
// vocabulary). False, with the diagnostics on stderr, when a spec is malformed: the boot fails
// rather than running the client without the fault it asked for.
bool arm_injected_faults(upanthor::host::World& w, GpuFaults* out);

// The exit line (nothing when there is nothing to say).
void report_gpu_at_exit(upanthor::host::World& w, const GpuFaults& faults);

}  // namespace upanthor::preload
