// The scenario parser's [[fault]] section (scenario_parser.h), also what `--inject` is checked
// with. (No upstream counterpart.)
#include "tools/upanthor/scenario_parser.h"

namespace upanthor::scenario {

namespace {

constexpr int kLastFaultKind = static_cast<int>(mock_hw::FaultKind::SoftStopIgnored);

// Which fault kinds a model's mock implements: the CSF engine's on the G610; on the G52 the job
// slot kinds and the chassis kinds that apply to it (docs/mock_jm.md, "Fault injection").
bool fault_kind_applies(mock_hw::FaultKind k, GpuModel m) {
    using K = mock_hw::FaultKind;
    const bool jm_only =
        k == K::JobHang || k == K::JobFault || k == K::JobBusFault || k == K::JobIrqLost || k == K::SoftStopIgnored;
    if (m == GpuModel::G610)
        return !jm_only;
    return jm_only || k == K::ResetNeverCompletes || k == K::SlowPower || k == K::GpuFault || k == K::MmuFaultAt;
}

}  // namespace

void ScenarioParser::parse_fault(const toml::table& t) {
    const std::string what = "[[fault]]";
    check_keys(t, what,
               {"kind",         "at_us",       "after_count", "probability",  "always",    "max_fires", "csg",
                "cs",           "as",          "fault_addr",  "fault_status", "exception", "delay_us",  "glb_req_mask",
                "csg_req_mask", "halt_status", "slow_factor", "wrong_state",  "cs_event",  "js"});
    Fault f;
    f.loc = loc_of(t.source());
    mock_hw::FaultSpec& sp = f.spec;
    bool ok = true;
    if (auto k = get_string(t, "kind", what, true)) {
        int found = -1;
        std::string all;
        for (int i = 0; i <= kLastFaultKind; i++) {
            if (!fault_kind_applies(static_cast<mock_hw::FaultKind>(i), sc_.model))
                continue;
            const char* n = mock_hw::fault_kind_name(static_cast<mock_hw::FaultKind>(i));
            if (*k == n)
                found = i;
            all += (all.empty() ? "" : ", ") + std::string(n);
        }
        if (found < 0) {
            error(*t.get("kind"), "unknown fault kind '" + *k + "'" +
                                      (sc_.model == GpuModel::G52 ? " for GPU model g52" : "") +
                                      " (expected one of: " + all + ")");
            ok = false;
        } else {
            sp.kind = static_cast<mock_hw::FaultKind>(found);
        }
    } else {
        ok = false;
    }
    int triggers = t.contains("at_us") + t.contains("after_count") + t.contains("probability") + t.contains("always");
    if (triggers != 1) {
        error(t, "[[fault]] has " + std::to_string(triggers) +
                     " triggers (expected exactly one of: at_us, after_count, probability, always)");
        ok = false;
    } else if (t.contains("at_us")) {
        auto v = get_u64(t, "at_us", what, true);
        ok = ok && v;
        if (v)
            sp.trigger = mock_hw::FaultTrigger::at_time(static_cast<kshim::ktime_t>(*v) * 1000);
    } else if (t.contains("after_count")) {
        auto v = get_u64(t, "after_count", what, true, 1);
        ok = ok && v;
        if (v)
            sp.trigger = mock_hw::FaultTrigger::nth_occurrence(*v);
    } else if (t.contains("probability")) {
        auto p = get_number(t, "probability", what, true, true);
        if (p && *p > 1.0) {
            error(*t.get("probability"), "'probability' is above 1 (expected a number in (0, 1])");
            p.reset();
        }
        ok = ok && p;
        if (p)
            sp.trigger = mock_hw::FaultTrigger::with_probability(*p);
    } else {
        auto b = get_bool(t, "always", what, true);
        if (b && !*b) {
            error(*t.get("always"), "'always' = false (expected true, or another trigger)");
            b.reset();
        }
        ok = ok && b;
        sp.trigger = mock_hw::FaultTrigger::always();
    }
    auto opt_u32 = [&](std::string_view key, u32& field, u64 lo = 0, u64 hi = 0xFFFFFFFFull) {
        if (!t.contains(key))
            return;
        auto v = get_u64(t, key, what, false, lo, hi);
        ok = ok && v;
        if (v)
            field = static_cast<u32>(*v);
    };
    auto opt_int = [&](std::string_view key, int& field, s64 lo, s64 hi) {
        if (!t.contains(key))
            return;
        auto v = get_int(t, key, what, false, lo, hi);
        ok = ok && v;
        if (v)
            field = static_cast<int>(*v);
    };
    opt_u32("max_fires", sp.max_fires);
    opt_int("csg", sp.csg, -1, static_cast<s64>(sc_.gpu.mcu.group_num) - 1);
    opt_int("cs", sp.cs, -1, static_cast<s64>(sc_.gpu.mcu.stream_num) - 1);
    opt_int("as", sp.as, -1, 15);
    opt_int("js", sp.js, -1, 2);
    opt_u32("fault_status", sp.fault_status);
    opt_u32("exception", sp.exception);
    opt_u32("glb_req_mask", sp.glb_req_mask);
    opt_u32("csg_req_mask", sp.csg_req_mask);
    opt_u32("halt_status", sp.halt_status);
    opt_u32("slow_factor", sp.slow_factor, 1);
    opt_u32("wrong_state", sp.wrong_state, 0, 7);
    if (t.contains("fault_addr")) {
        auto v = get_u64(t, "fault_addr", what, false, 0, (1ull << 48) - 1);
        ok = ok && v;
        if (v)
            sp.fault_addr = *v;
    }
    if (t.contains("delay_us")) {
        auto v = get_u64(t, "delay_us", what, false, 0, 3600ull * 1000 * 1000);
        ok = ok && v;
        if (v)
            sp.delay = static_cast<kshim::ktime_t>(*v) * 1000;
    }
    if (auto e = get_string(t, "cs_event", what, false)) {
        if (*e == "run_issue")
            sp.cs_event = mock_hw::CsFaultEvent::RunIssue;
        else if (*e == "instruction")
            sp.cs_event = mock_hw::CsFaultEvent::Instruction;
        else {
            error(*t.get("cs_event"), "unknown cs_event '" + *e + "' (expected run_issue or instruction)");
            ok = false;
        }
    } else if (t.contains("cs_event")) {
        ok = false;
    }
    if (ok)
        sc_.faults.push_back(std::move(f));
}

}  // namespace upanthor::scenario
