// UPANTHOR_INJECT and the exit line (gpu_report.h).
#include "tools/preload/gpu_report.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "host/machine.h"
#include "host/world.h"
#include "mock_hw/gpu.h"
#include "mock_hw/platform.h"
#include "tools/upanthor/scenario.h"

namespace upanthor::preload {

bool arm_injected_faults(upanthor::host::World& w, GpuFaults* out) {
    const char* env = std::getenv("UPANTHOR_INJECT");
    if (!env || !*env)
        return true;
    mock_hw::MockPlatform* csf = w.machine()->csf();
    if (!csf) {
        std::fprintf(stderr, "libupanthor_preload: UPANTHOR_INJECT: this GPU model has no fault plan\n");
        return false;
    }
    std::string_view rest = env;
    bool ok = true;
    while (!rest.empty()) {
        const size_t semi = rest.find(';');
        const std::string_view spec = rest.substr(0, semi);
        rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
        if (spec.empty())
            continue;
        const scenario::InjectResult r = scenario::parse_inject(spec, csf->gpu().config());
        if (!r.fault) {
            for (const scenario::Diagnostic& d : r.diagnostics)
                std::fprintf(stderr, "libupanthor_preload: UPANTHOR_INJECT '%.*s': %s\n", static_cast<int>(spec.size()),
                             spec.data(), d.message.c_str());
            ok = false;
            continue;
        }
        out->ids.push_back(csf->gpu().faults().add(r.fault->spec));
    }
    return ok;
}

void report_gpu_at_exit(upanthor::host::World& w, const GpuFaults& faults) {
    mock_hw::MockPlatform* csf = w.machine() ? w.machine()->csf() : nullptr;
    if (!csf)
        return;
    const unsigned long long real = csf->gpu().engine().real_jobs_completed();
    if (real)
        std::fprintf(stderr,
                     "libupanthor_preload: %llu GPU jobs on real shader descriptors completed without running "
                     "their shaders (their outputs were not written; docs/mock_hw.md \"Real descriptors\")\n",
                     real);
    unsigned long long fired = 0;
    for (const int id : faults.ids)
        fired += csf->gpu().faults().fired(id);
    if (!faults.ids.empty())
        std::fprintf(stderr, "libupanthor_preload: UPANTHOR_INJECT: %zu faults armed, %llu fired\n", faults.ids.size(),
                     fired);
}

}  // namespace upanthor::preload
