// Fault injection for the mock GPU (see fault_plan.h).
#include "mock_hw/fault_plan.h"

#include "kernel_shim/runtime.h"
#include "mock_hw/gpu.h"

namespace mock_hw {

const char* fault_kind_name(FaultKind k) {
    switch (k) {
    case FaultKind::GlbAckDrop: return "GlbAckDrop";
    case FaultKind::GlbAckDelay: return "GlbAckDelay";
    case FaultKind::FwHang: return "FwHang";
    case FaultKind::McuFatal: return "McuFatal";
    case FaultKind::BootFail: return "BootFail";
    case FaultKind::GpuFault: return "GpuFault";
    case FaultKind::AsActiveStuck: return "AsActiveStuck";
    case FaultKind::ResetNeverCompletes: return "ResetNeverCompletes";
    case FaultKind::FlushNeverCompletes: return "FlushNeverCompletes";
    case FaultKind::SlowPower: return "SlowPower";
    case FaultKind::CsgAckDrop: return "CsgAckDrop";
    case FaultKind::CsgAckDelay: return "CsgAckDelay";
    case FaultKind::CsgWrongState: return "CsgWrongState";
    case FaultKind::CsFatal: return "CsFatal";
    case FaultKind::CsFault: return "CsFault";
    case FaultKind::CsUnrecoverable: return "CsUnrecoverable";
    case FaultKind::ShaderHang: return "ShaderHang";
    case FaultKind::MmuFaultAt: return "MmuFaultAt";
    case FaultKind::SuspendNeverCompletes: return "SuspendNeverCompletes";
    case FaultKind::CorruptSuspendBuffer: return "CorruptSuspendBuffer";
    case FaultKind::JobHang: return "JobHang";
    case FaultKind::JobFault: return "JobFault";
    case FaultKind::JobBusFault: return "JobBusFault";
    case FaultKind::JobIrqLost: return "JobIrqLost";
    case FaultKind::SoftStopIgnored: return "SoftStopIgnored";
    }
    return "?";
}

FaultPlan::FaultPlan(GpuBase& gpu) : gpu_(gpu), lock_(gpu.lock()) {
    u64 seed = gpu.config().fault_seed;
    if (!seed && kshim::Runtime::get())
        seed = kshim::Runtime::get()->seed();
    rng_state_ = seed ^ 0x9E3779B97F4A7C15ull;
}

FaultPlan::~FaultPlan() {
    shutdown();
}

void FaultPlan::shutdown() {
    for (auto& e : entries_)
        if (e->timer)
            e->timer->shutdown();
}

int FaultPlan::add(const FaultSpec& spec) {
    auto e = std::make_unique<Entry>();
    e->spec = spec;
    Entry* ep = e.get();
    if (spontaneous(spec) && spec.trigger.type == FaultTrigger::Type::AtTime) {
        e->timer = std::make_unique<HwEvent>(gpu_.lock(), "mock_hw fault", [this, ep] {
            ep->seen++;
            ep->fired++;
            gpu_.inject_locked(ep->spec);
        });
    }
    kshim::SpinGuard g(gpu_.lock());
    if (e->timer)
        e->timer->arm_at_locked(spec.trigger.at);
    if (counts_instructions(spec))
        instr_specs_++;
    entries_.push_back(std::move(e));
    return static_cast<int>(entries_.size() - 1);
}

void FaultPlan::clear() {
    std::vector<std::unique_ptr<Entry>> old;
    {
        kshim::SpinGuard g(gpu_.lock());
        old.swap(entries_);
        instr_specs_ = 0;
    }
    for (auto& e : old)
        if (e->timer)
            e->timer->shutdown();
}

u64 FaultPlan::fired(int id) const {
    kshim::SpinGuard g(gpu_.lock());
    return id >= 0 && static_cast<size_t>(id) < entries_.size() ? entries_[id]->fired : 0;
}

double FaultPlan::next_random_locked() {
    lockdep_assert_held(&lock_);
    // splitmix64: small, seeded, the same sequence on every run.
    u64 z = (rng_state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

bool FaultPlan::fires_locked(Entry& e) {
    lockdep_assert_held(&lock_);
    const FaultSpec& s = e.spec;
    if (s.max_fires && e.fired >= s.max_fires)
        return false;
    e.seen++;
    bool fire = false;
    switch (s.trigger.type) {
    case FaultTrigger::Type::Always: fire = true; break;
    case FaultTrigger::Type::AtTime: fire = kshim::ktime_get() >= s.trigger.at; break;
    case FaultTrigger::Type::Nth: fire = e.seen == s.trigger.nth; break;
    case FaultTrigger::Type::Probability: fire = next_random_locked() < s.trigger.probability; break;
    }
    if (!fire)
        return false;
    e.fired++;
    gpu_.trace_instant_locked("fault_injected", fault_kind_name(s.kind));
    return true;
}

const FaultSpec* FaultPlan::occurrence_locked(FaultKind kind, u32 bits, int as, int csg, int cs, int js) {
    lockdep_assert_held(&lock_);
    for (auto& e : entries_) {
        const FaultSpec& s = e->spec;
        if (s.kind != kind)
            continue;
        if ((kind == FaultKind::GlbAckDrop || kind == FaultKind::GlbAckDelay) && !(s.glb_req_mask & bits))
            continue;
        if (kind == FaultKind::AsActiveStuck && s.as >= 0 && s.as != as)
            continue;
        if ((kind == FaultKind::CsgAckDrop || kind == FaultKind::CsgAckDelay) && !(s.csg_req_mask & bits))
            continue;
        if (s.csg >= 0 && csg >= 0 && s.csg != csg)
            continue;
        if (s.cs >= 0 && cs >= 0 && s.cs != cs)
            continue;
        if (s.js >= 0 && js >= 0 && s.js != js)
            continue;
        if (counts_instructions(s))
            continue;  // cs_instruction_locked counts those
        if (spontaneous(s) && s.trigger.type == FaultTrigger::Type::AtTime)
            continue;  // timer-driven
        if (fires_locked(*e))
            return &s;
    }
    return nullptr;
}

const FaultSpec* FaultPlan::cs_instruction_locked(int csg, int cs) {
    lockdep_assert_held(&lock_);
    for (auto& e : entries_) {
        const FaultSpec& s = e->spec;
        if (!counts_instructions(s))
            continue;
        if ((s.csg >= 0 && s.csg != csg) || (s.cs >= 0 && s.cs != cs))
            continue;
        if (fires_locked(*e))
            return &s;
    }
    return nullptr;
}

}  // namespace mock_hw
