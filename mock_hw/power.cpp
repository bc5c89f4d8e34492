// GPU power domains: L2/TILER/SHADER PWRON/PWROFF/PWRTRANS/READY (see power.h).
#include "mock_hw/power.h"

#include "hw/csf/regs/gpu_regs.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu_base.h"
#include "mock_hw/irq_block.h"

namespace mock_hw {

using namespace panthor;

const char* Power::domain_name(Domain d) {
    switch (d) {
    case kShader: return "SHADER";
    case kTiler: return "TILER";
    case kL2: return "L2";
    }
    return "?";
}

Power::Power(GpuBase& gpu, RegisterBank& bank) : gpu_(gpu), lock_(gpu.lock()) {
    const GpuIdentity& id = gpu.config().id;
    const u64 present[3] = {id.shader_present, id.tiler_present, id.l2_present};
    const u32 doff[3] = {PWR_DOMAIN_SHADER, PWR_DOMAIN_TILER, PWR_DOMAIN_L2};
    static const char* names[3][5] = {
        {"SHADER_READY", "SHADER_PWRON", "SHADER_PWROFF", "SHADER_PWRTRANS", "SHADER_PWRACTIVE"},
        {"TILER_READY", "TILER_PWRON", "TILER_PWROFF", "TILER_PWRTRANS", "TILER_PWRACTIVE"},
        {"L2_READY", "L2_PWRON", "L2_PWROFF", "L2_PWRTRANS", "L2_PWRACTIVE"}};
    for (int i = 0; i < 3; i++) {
        Domain d = static_cast<Domain>(i);
        Dom& dm = dom_[i];
        dm.id = d;
        dm.present = present[i];
        dm.done = gpu.make_event("mock_hw power", [this, d] { complete_locked(d); });
        const u32 o = doff[i];
        for (u32 half = 0; half < 2; half++) {
            const unsigned sh = 32 * half;
            bank.add(SHADER_READY + o + 4 * half, RegDecl{.name = names[i][0], .on_read = [this, d, sh] {
                                                              return static_cast<u32>(ready_locked(d) >> sh);
                                                          }});
            bank.add(SHADER_PWRON + o + 4 * half,
                     RegDecl{.name = names[i][1], .write_only = true, .on_write = [this, d, sh](u32 v) {
                                 power_on_locked(d, u64{v} << sh);
                             }});
            bank.add(SHADER_PWROFF + o + 4 * half,
                     RegDecl{.name = names[i][2], .write_only = true, .on_write = [this, d, sh](u32 v) {
                                 power_off_locked(d, u64{v} << sh);
                             }});
            bank.add(SHADER_PWRTRANS + o + 4 * half, RegDecl{.name = names[i][3], .on_read = [this, d, sh] {
                                                                 return static_cast<u32>(trans_locked(d) >> sh);
                                                             }});
            // PWRACTIVE: cores doing work. Not modelled: it keeps its stored value (0); the CS
            // engine's jobs do not update it.
            bank.add(SHADER_PWRACTIVE + o + 4 * half, RegDecl{.name = names[i][4]});
        }
    }
}

bool Power::any_transition_locked() const {
    lockdep_assert_held(&lock_);
    for (const auto& d : dom_)
        if (d.on | d.off)
            return true;
    return false;
}

void Power::power_on_locked(Domain d, u64 mask) {
    lockdep_assert_held(&lock_);
    Dom& dm = dom_[d];
    mask &= dm.present;
    // Cores already on (and not going off) need no transition.
    mask &= ~(dm.ready & ~dm.off);
    if (mask)
        start_locked(d, mask, 0);
}

void Power::power_off_locked(Domain d, u64 mask) {
    lockdep_assert_held(&lock_);
    Dom& dm = dom_[d];
    mask &= dm.present;
    mask &= (dm.ready | dm.on);
    if (mask)
        start_locked(d, 0, mask);
}

void Power::start_locked(Domain d, u64 on, u64 off) {
    lockdep_assert_held(&lock_);
    Dom& dm = dom_[d];
    dm.on = (dm.on & ~off) | on;
    dm.off = (dm.off & ~on) | off;
    ktime_t lat = gpu_.config().lat.power_transition;
    if (const FaultSpec* f = gpu_.faults().occurrence_locked(FaultKind::SlowPower))
        lat *= f->slow_factor;
    // Later requests join the transition in flight; it ends `lat` after the latest request.
    dm.done->arm_locked(lat);
    gpu_.trace_instant_locked(on ? "power_on" : "power_off", domain_name(d));
}

void Power::complete_locked(Domain d) {
    lockdep_assert_held(&lock_);
    Dom& dm = dom_[d];
    dm.ready = (dm.ready | dm.on) & ~dm.off;
    dm.on = dm.off = 0;
    u32 irq = GPU_IRQ_POWER_CHANGED;
    if (!any_transition_locked())
        irq |= GPU_IRQ_POWER_CHANGED_ALL;
    gpu_.gpu_irq().raise_locked(irq);
}

void Power::reset_locked() {
    lockdep_assert_held(&lock_);
    for (auto& dm : dom_) {
        dm.done->cancel_locked();
        dm.ready = dm.on = dm.off = 0;
    }
}

}  // namespace mock_hw
