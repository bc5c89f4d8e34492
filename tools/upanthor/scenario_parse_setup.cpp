// The scenario parser's setup sections (scenario_parser.h): [scenario], [gpu], [[client]], [[vm]],
// [[bo]], [[heap]], [[group]] and [[syncobj]]. (No upstream counterpart.)
#include "tools/upanthor/scenario_parser.h"

#include <algorithm>
#include <cmath>

namespace upanthor::scenario {

namespace {

struct LatencyField {
    const char* name;
    kshim::ktime_t mock_hw::GpuLatencies::*field;
};
constexpr LatencyField kLatencies[] = {
    {"power_transition", &mock_hw::GpuLatencies::power_transition},
    {"soft_reset", &mock_hw::GpuLatencies::soft_reset},
    {"hard_reset", &mock_hw::GpuLatencies::hard_reset},
    {"cache_flush", &mock_hw::GpuLatencies::cache_flush},
    {"as_command", &mock_hw::GpuLatencies::as_command},
    {"mcu_boot", &mock_hw::GpuLatencies::mcu_boot},
    {"mcu_halt", &mock_hw::GpuLatencies::mcu_halt},
    {"mcu_disable", &mock_hw::GpuLatencies::mcu_disable},
    {"glb_request", &mock_hw::GpuLatencies::glb_request},
    {"csg_request", &mock_hw::GpuLatencies::csg_request},
    {"csg_state", &mock_hw::GpuLatencies::csg_state},
    {"csg_suspend", &mock_hw::GpuLatencies::csg_suspend},
    {"cs_slice", &mock_hw::GpuLatencies::cs_slice},
    {"sync_poll", &mock_hw::GpuLatencies::sync_poll},
};

}  // namespace

void ScenarioParser::parse_meta(const toml::table& t) {
    const std::string what = "[scenario]";
    check_keys(t, what, {"name", "description", "seed", "duration_us"});
    if (auto s = get_string(t, "name", what, false))
        sc_.name = *s;
    if (auto s = get_string(t, "description", what, false))
        sc_.description = *s;
    if (auto v = get_u64(t, "seed", what, false))
        sc_.seed = *v;
    if (auto v = get_u64(t, "duration_us", what, false, 1, 3600ull * 1000 * 1000))
        sc_.duration_us = *v;
}

void ScenarioParser::parse_gpu(const toml::table& t) {
    const std::string what = "[gpu]";
    mock_hw::GpuConfig& g = sc_.gpu;
    if (auto m = get_string(t, "model", what, false)) {
        if (*m == "g52") {
            sc_.model = GpuModel::G52;
            // The G52's identity and timing are the mock's own (mock_jm/config.h).
            check_keys(t, what + " of model g52", {"model"});
            return;
        }
        if (*m != "g610")
            error(*t.get("model"), "unknown GPU model '" + *m + "' (expected g610 or g52)");
    }
    check_keys(t, what,
               {"csg_slots", "cs_per_csg", "shader_cores", "shader_present", "gpu_clock_hz", "timestamp_hz",
                "core_clk_hz", "work_regs", "scoreboards", "cs_slice_instrs", "latency_us", "model"});
    if (auto v = get_int(t, "csg_slots", what, false, 1, 31))
        g.mcu.group_num = static_cast<u32>(*v);
    if (auto v = get_int(t, "cs_per_csg", what, false, 1, 32))
        g.mcu.stream_num = static_cast<u32>(*v);
    if (t.contains("shader_cores") && t.contains("shader_present"))
        error(*t.get("shader_present"), "'shader_present' and 'shader_cores' both given (expected one of them)");
    else if (auto v = get_int(t, "shader_cores", what, false, 1, 32))
        g.id.shader_present = (1ull << *v) - 1;
    else if (auto m = get_u64(t, "shader_present", what, false, 1, 0xFFFFFFFFull))
        g.id.shader_present = *m;
    if (auto v = get_u64(t, "gpu_clock_hz", what, false, 1'000'000, 10'000'000'000ull))
        g.gpu_clock_hz = *v;
    if (auto v = get_u64(t, "timestamp_hz", what, false, 1'000, 4'000'000'000ull))
        g.timestamp_hz = *v;
    if (auto v = get_u64(t, "core_clk_hz", what, false, 1'000'000, 10'000'000'000ull))
        g.platform.core_clk_hz = static_cast<unsigned long>(*v);
    if (auto v = get_int(t, "work_regs", what, false, 16, 256))
        g.mcu.work_regs = static_cast<u32>(*v);
    if (auto v = get_int(t, "scoreboards", what, false, 1, 16))
        g.mcu.scoreboards = static_cast<u32>(*v);
    if (auto v = get_int(t, "cs_slice_instrs", what, false, 1, 1 << 24))
        g.lat.cs_slice_instrs = static_cast<u32>(*v);
    if (auto* lat = get_table(t, "latency_us", false, what)) {
        Keys names;
        for (auto& f : kLatencies)
            names.push_back(f.name);
        check_keys(*lat, "[gpu.latency_us]", names);
        for (auto& f : kLatencies) {
            if (auto us = get_number(*lat, f.name, "[gpu.latency_us]", false, false))
                g.lat.*f.field = static_cast<kshim::ktime_t>(std::llround(*us * 1000.0));
        }
    }
}

void ScenarioParser::parse_client(const toml::table& t) {
    const std::string what = "[[client]]";
    check_keys(t, what, {"name", "cap_sys_nice"});
    Client c;
    c.loc = loc_of(t.source());
    auto name = get_name(t, what);
    if (auto b = get_bool(t, "cap_sys_nice", what, false))
        c.cap_sys_nice = *b;
    if (!name || !define(client_names_, client_where_, *name, sc_.clients.size(), t, "client"))
        return poison("client", name);
    c.name = *name;
    sc_.clients.push_back(std::move(c));
}

void ScenarioParser::parse_vm(const toml::table& t) {
    const std::string what = "[[vm]]";
    check_keys(t, what, {"name", "client"});
    Vm v;
    v.loc = loc_of(t.source());
    auto name = get_name(t, what);
    auto client = get_ref(t, "client", what, true, client_names_, "client");
    if (!name || !client || !define(vm_names_, vm_where_, *name, sc_.vms.size(), t, "vm"))
        return poison("vm", name);
    v.name = *name;
    v.client = *client;
    sc_.vms.push_back(std::move(v));
}

void ScenarioParser::parse_bo(const toml::table& t) {
    const std::string what = "[[bo]]";
    check_keys(t, what, {"name", "vm", "size", "va", "pattern", "values", "heap"});
    Bo b;
    b.loc = loc_of(t.source());
    auto name = get_name(t, what);
    auto vm = get_ref(t, "vm", what, true, vm_names_, "vm");
    auto size = get_u64(t, "size", what, true, 1, 1ull << 32, true);
    bool ok = name && vm && size;
    if (t.contains("va")) {
        auto va = get_u64(t, "va", what, false, 0x1000, (1ull << 48) - 1);
        if (va && (*va & 0xFFF)) {
            error(*t.get("va"), "'va' = " + std::to_string(*va) + " is not page aligned (expected a multiple of 4096)");
            va.reset();
        }
        ok = ok && va;
        b.va = va;
    }
    if (auto h = get_bool(t, "heap", what, false)) {
        b.heap = *h;
        if (*h && (t.contains("pattern") || t.contains("values"))) {
            error(*t.get("heap"), "a heap BO with 'pattern' or 'values' (expected neither: a heap has no CPU mapping)");
            ok = false;
        }
    } else if (t.contains("heap")) {
        ok = false;
    }
    if (t.contains("pattern")) {
        auto p = get_u64(t, "pattern", what, false, 0, 0xFFFFFFFFull);
        ok = ok && p;
        if (p)
            b.pattern = static_cast<u32>(*p);
    }
    const std::string vwhat = "an element of 'values' of [[bo]]";
    for (auto* vt : get_tables(t, "values", "an array of tables {offset, value}")) {
        check_keys(*vt, vwhat, {"offset", "value"});
        auto off = get_u64(*vt, "offset", vwhat, true);
        auto val = get_u64(*vt, "value", vwhat, true);
        if (off && size && (*off % 8 || *off + 8 > *size)) {
            error(*vt->get("offset"), "'offset' = " + std::to_string(*off) +
                                          " is not an 8-byte aligned offset inside the BO (expected 0.." +
                                          std::to_string(*size >= 8 ? *size - 8 : 0) + ", a multiple of 8)");
            off.reset();
        }
        ok = ok && off && val;
        if (off && val)
            b.values.push_back({*off, *val});
    }
    if (!ok || !define(bo_names_, bo_where_, *name, sc_.bos.size(), t, "bo"))
        return poison("bo", name);
    b.name = *name;
    b.vm = *vm;
    b.size = *size;
    sc_.bos.push_back(std::move(b));
}

void ScenarioParser::parse_heap(const toml::table& t) {
    const std::string what = "[[heap]]";
    check_keys(t, what, {"name", "vm", "chunk_size", "initial_chunks", "max_chunks", "target_in_flight"});
    TilerHeap h;
    h.loc = loc_of(t.source());
    auto name = get_name(t, what);
    auto vm = get_ref(t, "vm", what, true, vm_names_, "vm");
    auto cs = get_u64(t, "chunk_size", what, true, 128 << 10, 8 << 20, true);
    if (cs && (*cs & 0xFFF)) {
        error(*t.get("chunk_size"),
              "'chunk_size' = " + std::to_string(*cs) + " is not page aligned (expected a multiple of 4096)");
        cs.reset();
    }
    auto initial = get_int(t, "initial_chunks", what, true, 1, 1 << 20);
    auto max = get_int(t, "max_chunks", what, true, 1, 1 << 20);
    auto target = get_int(t, "target_in_flight", what, true, 1, 65535);
    if (initial && max && *initial > *max) {
        error(*t.get("initial_chunks"), "'initial_chunks' = " + std::to_string(*initial) + " exceeds 'max_chunks' = " +
                                            std::to_string(*max) + " (expected initial_chunks <= max_chunks)");
        initial.reset();
    }
    if (!name || !vm || !cs || !initial || !max || !target ||
        !define(heap_names_, heap_where_, *name, sc_.heaps.size(), t, "heap"))
        return poison("heap", name);
    h.name = *name;
    h.vm = *vm;
    h.chunk_size = static_cast<u32>(*cs);
    h.initial_chunks = static_cast<u32>(*initial);
    h.max_chunks = static_cast<u32>(*max);
    h.target_in_flight = static_cast<u32>(*target);
    sc_.heaps.push_back(std::move(h));
}

void ScenarioParser::parse_group(const toml::table& t) {
    const std::string what = "[[group]]";
    check_keys(t, what, {"name", "client", "vm", "priority", "instances", "queues"});
    Group g;
    g.loc = loc_of(t.source());
    auto name = get_name(t, what);
    auto vm = get_ref(t, "vm", what, true, vm_names_, "vm");
    bool ok = name && vm;
    // `client` is optional: a VM belongs to one client, and the group is that client's.
    if (t.contains("client")) {
        auto c = get_ref(t, "client", what, false, client_names_, "client");
        if (c && vm && *c != sc_.vms[*vm].client) {
            const std::string& owner = sc_.clients[sc_.vms[*vm].client].name;
            error(*t.get("client"), "client '" + sc_.clients[*c].name + "' does not own vm '" + sc_.vms[*vm].name +
                                        "' (expected '" + owner + "', the vm's client)");
            c.reset();
        }
        ok = ok && c;
    }
    if (auto p = get_string(t, "priority", what, false)) {
        static const char* const kPrios[] = {"low", "medium", "high", "realtime"};
        auto it = std::find(std::begin(kPrios), std::end(kPrios), *p);
        if (it == std::end(kPrios)) {
            error(*t.get("priority"), "unknown priority '" + *p + "' (expected one of: low, medium, high, realtime)");
            ok = false;
        } else {
            g.priority = static_cast<GroupPriority>(it - std::begin(kPrios));
        }
    } else if (t.contains("priority")) {
        ok = false;
    }
    if (auto n = get_int(t, "instances", what, false, 1, 4096))
        g.instances = static_cast<u32>(*n);
    else if (t.contains("instances"))
        ok = false;
    const toml::node* qn = need(t, "queues", what, true, "an array of queue tables {name, priority, ring_size}");
    auto queues = get_tables(t, "queues", "an array of queue tables {name, priority, ring_size}");
    u32 max_queues = sc_.gpu.mcu.stream_num;
    if (qn && qn->is_array() && (qn->as_array()->empty() || qn->as_array()->size() > max_queues)) {
        error(*qn, "'queues' has " + std::to_string(qn->as_array()->size()) + " queues (expected 1.." +
                       std::to_string(max_queues) + ", the CS slots per CSG)");
        ok = false;
    }
    if (!qn || !qn->is_array())
        ok = false;
    std::map<std::string, size_t> qnames;
    std::map<std::string, SourceLoc> qwhere;
    const std::string qwhat = "a queue of [[group]]";
    for (auto* qt : queues) {
        check_keys(*qt, qwhat, {"name", "priority", "ring_size"});
        Queue q;
        q.loc = loc_of(qt->source());
        auto qname = get_name(*qt, qwhat);
        auto prio = get_int(*qt, "priority", qwhat, false, 0, 15);
        auto ring = get_u64(*qt, "ring_size", qwhat, false, 0, ~0ull, true);
        if (ring && (*ring < 4096 || *ring > 65536 || (*ring & (*ring - 1)))) {
            error(*qt->get("ring_size"),
                  "'ring_size' = " + std::to_string(*ring) +
                      " is not a power of two in 4096..65536 (expected 4K, 8K, 16K, 32K or 64K)");
            ok = false;
        }
        if (!qname || (qt->contains("priority") && !prio) || (qt->contains("ring_size") && !ring) ||
            !define(qnames, qwhere, *qname, g.queues.size(), *qt, "queue")) {
            ok = false;
            continue;
        }
        q.name = *qname;
        if (prio)
            q.priority = static_cast<u8>(*prio);
        if (ring)
            q.ring_size = static_cast<u32>(*ring);
        g.queues.push_back(std::move(q));
    }
    if (!ok || !define(group_names_, group_where_, *name, sc_.groups.size(), t, "group"))
        return poison("group", name);
    g.name = *name;
    g.vm = *vm;
    queue_names_[*name] = std::move(qnames);
    sc_.groups.push_back(std::move(g));
}

void ScenarioParser::parse_syncobj(const toml::table& t) {
    const std::string what = "[[syncobj]]";
    check_keys(t, what, {"name", "client", "timeline"});
    Syncobj s;
    s.loc = loc_of(t.source());
    auto name = get_name(t, what);
    auto client = get_ref(t, "client", what, true, client_names_, "client");
    auto tl = get_bool(t, "timeline", what, false);
    if (!name || !client || (t.contains("timeline") && !tl) ||
        !define(syncobj_names_, syncobj_where_, *name, sc_.syncobjs.size(), t, "syncobj"))
        return poison("syncobj", name);
    s.name = *name;
    s.client = *client;
    s.timeline = tl.value_or(false);
    sc_.syncobjs.push_back(std::move(s));
}

}  // namespace upanthor::scenario
