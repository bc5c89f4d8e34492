// The scenario parser's work sections (scenario_parser.h): [[job]], whose `asm` is assembled by
// umd/cs_asm, and [[submit]]. (No upstream counterpart.)
#include "tools/upanthor/scenario_parser.h"

#include <algorithm>
#include <cmath>

#include "umd/cs_asm.h"

namespace upanthor::scenario {

void ScenarioParser::parse_job(const toml::table& t) {
    const std::string what = "[[job]]";
    static const Keys kOps = {"compute", "store", "wait", "hang", "fault_access", "tiler_fragment", "asm"};
    Keys allowed = {"name"};
    allowed.insert(allowed.end(), kOps.begin(), kOps.end());
    check_keys(t, what, allowed);
    Job j;
    j.loc = loc_of(t.source());
    auto name = get_name(t, what);
    std::vector<std::string_view> present;
    for (auto op : kOps)
        if (t.contains(op))
            present.push_back(op);
    if (present.size() != 1) {
        error(t, present.empty() ? "[[job]] has no operation (expected exactly one of: " + join(kOps) + ")"
                                 : "[[job]] has " + std::to_string(present.size()) +
                                       " operations (expected exactly one of: " + join(kOps) + ")");
        return poison("job", name);
    }
    std::string_view op = present[0];
    bool ok = name.has_value();
    if (op == "asm") {
        j.kind = JobKind::Asm;
        ok = parse_asm(*t.get("asm"), j) && ok;
    } else if (op == "hang") {
        j.kind = JobKind::Hang;
        auto* ot = get_table(t, "hang", true, what);
        if (ot)
            check_keys(*ot, "'hang'", {});
        ok = ok && ot;
    } else {
        auto* ot = get_table(t, op, true, what);
        if (!ot)
            return poison("job", name);
        const std::string ow = "'" + std::string(op) + "'";
        if (op == "compute") {
            j.kind = JobKind::Compute;
            check_keys(*ot, ow, {"workgroups", "duration_us"});
            auto wg = get_int(*ot, "workgroups", ow, true, 1, 1 << 30);
            auto d = get_u64(*ot, "duration_us", ow, true, 0, 3600ull * 1000 * 1000);
            ok = ok && wg && d;
            if (wg && d)
                j.workgroups = static_cast<u32>(*wg), j.duration_us = *d;
        } else if (op == "store") {
            j.kind = JobKind::Store;
            check_keys(*ot, ow, {"bo", "offset", "value"});
            auto bo = get_ref(*ot, "bo", ow, true, bo_names_, "bo");
            auto off = get_u64(*ot, "offset", ow, true);
            auto val = get_u64(*ot, "value", ow, true);
            if (bo && off && !check_bo_offset(*ot, *bo, *off))
                off.reset();
            ok = ok && bo && off && val;
            if (bo && off && val)
                j.bo = *bo, j.offset = *off, j.value = *val;
        } else if (op == "wait") {
            j.kind = JobKind::Wait;
            check_keys(*ot, ow, {"group", "queue", "value"});
            auto q = get_queue_ref(*ot, ow);
            auto val = get_u64(*ot, "value", ow, true, 1);
            ok = ok && q && val;
            if (q && val)
                j.wait_queue = *q, j.value = *val;
        } else if (op == "fault_access") {
            j.kind = JobKind::FaultAccess;
            check_keys(*ot, ow, {"address"});
            auto a = get_u64(*ot, "address", ow, true, 0, (1ull << 48) - 1);
            ok = ok && a;
            if (a)
                j.address = *a;
        } else if (op == "tiler_fragment") {
            j.kind = JobKind::TilerFragment;
            check_keys(*ot, ow, {"heap", "chunks"});
            auto h = get_ref(*ot, "heap", ow, true, heap_names_, "heap");
            auto c = get_int(*ot, "chunks", ow, true, 1, 1 << 20);
            ok = ok && h && c;
            if (h && c)
                j.heap = *h, j.chunks = static_cast<u32>(*c);
        }
    }
    if (!ok || !define(job_names_, job_where_, *name, sc_.jobs.size(), t, "job"))
        return poison("job", name);
    j.name = *name;
    sc_.jobs.push_back(std::move(j));
}

// The text goes to umd::cs::parse_asm whole; its line:column positions are mapped onto the file,
// and each `@bo` symbol is resolved here to the BO it names (the runner adds the BO's GPU VA).
bool ScenarioParser::parse_asm(const toml::node& n, Job& j) {
    if (!n.is_string()) {
        wrong_type(n, "asm", "a string, one instruction per line");
        return false;
    }
    const std::string& s = n.as_string()->get();
    const auto& src = n.source();
    // A multi-line string drops a newline right after its opening quotes; detect it by the
    // line span so that line numbers stay exact.
    const u32 newlines = static_cast<u32>(std::count(s.begin(), s.end(), '\n'));
    const bool multiline = src.end.line > src.begin.line;
    const u32 first_line = src.begin.line + ((multiline && src.end.line - src.begin.line > newlines) ? 1 : 0);
    const u32 first_col = first_line == src.begin.line ? src.begin.column + (multiline ? 3 : 1) : 1;
    auto at = [&](u32 line, u32 col) {
        return SourceLoc{first_line + line - 1, line == 1 ? first_col + col - 1 : col};
    };

    umd::cs::AsmOptions opts;
    opts.regs = sc_.gpu.mcu.work_regs - 4;  // the top 4 are the kernel's (cs_builder Config)
    opts.scoreboards = sc_.gpu.mcu.scoreboards;
    umd::cs::AsmProgram prog = umd::cs::parse_asm(s, opts);
    bool ok = prog.ok();
    for (const umd::cs::AsmError& e : prog.errors)
        error(at(e.line, e.column), e.message);
    for (umd::cs::AsmInstr& in : prog.instrs) {
        AsmInstr a;
        a.loc = at(in.line, in.column);
        if (!in.symbol.empty()) {
            const SourceLoc where = at(in.line, in.symbol_column);
            auto it = bo_names_.find(in.symbol);
            if (it == bo_names_.end()) {
                if (!invalid_.count({"bo", in.symbol}))
                    error(where, "undefined bo '" + in.symbol + "' (expected " + expected_names(bo_names_, "bo") + ")");
                ok = false;
                continue;
            }
            const u64 size = sc_.bos[it->second].size;
            if (static_cast<u64>(in.imm) >= size) {
                error(where, "bad offset " + std::to_string(in.imm) + " in '@" + in.symbol + "+...' (expected @" +
                                 in.symbol + "+N with N < " + std::to_string(size) + ")");
                ok = false;
                continue;
            }
            a.bo_ref = it->second;
        }
        static_cast<umd::cs::AsmInstr&>(a) = std::move(in);
        j.instrs.push_back(std::move(a));
    }
    if (ok && j.instrs.empty()) {
        error(n, "'asm' has no instructions (expected one instruction per line)");
        return false;
    }
    return ok;
}

// A job's BOs and heaps must be mapped in the VM of the group it is submitted to.
std::optional<std::string> ScenarioParser::job_vm_conflict(const Job& j, size_t vm) {
    auto other = [&](const char* kind, const std::string& name, size_t in_vm) -> std::optional<std::string> {
        if (in_vm == vm)
            return std::nullopt;
        return std::string(kind) + " '" + name + "' of vm '" + sc_.vms[in_vm].name + "'";
    };
    switch (j.kind) {
    case JobKind::Store: return other("bo", sc_.bos[j.bo].name, sc_.bos[j.bo].vm);
    case JobKind::TilerFragment: return other("heap", sc_.heaps[j.heap].name, sc_.heaps[j.heap].vm);
    case JobKind::Wait: {
        const Group& g = sc_.groups[j.wait_queue.group];
        return other("the sync object of group", g.name, g.vm);
    }
    case JobKind::Asm:
        for (auto& in : j.instrs)
            if (in.bo_ref)
                if (auto c = other("bo", sc_.bos[*in.bo_ref].name, sc_.bos[*in.bo_ref].vm))
                    return c;
        return std::nullopt;
    default: return std::nullopt;
    }
}

std::vector<SyncRef> ScenarioParser::parse_sync_refs(const toml::table& t, std::string_view key,
                                                     std::optional<size_t> client, bool* ok) {
    std::vector<SyncRef> out;
    const std::string what = "an element of '" + std::string(key) + "'";
    for (auto* st : get_tables(t, key, "an array of tables {syncobj, point}")) {
        check_keys(*st, what, {"syncobj", "point"});
        auto s = get_ref(*st, "syncobj", what, true, syncobj_names_, "syncobj");
        if (!s) {
            *ok = false;
            continue;
        }
        if (client && sc_.syncobjs[*s].client != *client) {
            error(*st->get("syncobj"), "syncobj '" + sc_.syncobjs[*s].name + "' belongs to client '" +
                                           sc_.clients[sc_.syncobjs[*s].client].name +
                                           "' (expected a syncobj of client '" + sc_.clients[*client].name +
                                           "', the group's)");
            *ok = false;
            continue;
        }
        SyncRef r{*s, 0};
        bool tl = sc_.syncobjs[*s].timeline;
        if (tl) {
            auto p = get_u64(*st, "point", what, true, 1);
            if (!p) {
                *ok = false;
                continue;
            }
            r.point = *p;
        } else if (st->contains("point")) {
            error(*st->get("point"), "'point' on binary syncobj '" + sc_.syncobjs[*s].name +
                                         "' (expected no point; only timeline syncobjs have points)");
            *ok = false;
            continue;
        }
        out.push_back(r);
    }
    if (t.contains(key) && !t.get(key)->is_array())
        *ok = false;
    return out;
}

void ScenarioParser::parse_submit(const toml::table& t) {
    const std::string what = "[[submit]]";
    check_keys(t, what,
               {"group", "queue", "job", "at_us", "every_us", "fps", "count", "start_us", "waits", "signals", "fence"});
    Submission s;
    s.loc = loc_of(t.source());
    auto q = get_queue_ref(t, what);
    auto job = get_ref(t, "job", what, true, job_names_, "job");
    bool ok = q && job;
    std::optional<size_t> client;
    if (q) {
        size_t vm = sc_.groups[q->group].vm;
        client = sc_.vms[vm].client;
        if (job) {
            if (auto c = job_vm_conflict(sc_.jobs[*job], vm)) {
                error(*t.get("job"), "job '" + sc_.jobs[*job].name + "' uses " + *c + " but group '" +
                                         sc_.groups[q->group].name + "' runs in vm '" + sc_.vms[vm].name +
                                         "' (expected a job whose objects are in vm '" + sc_.vms[vm].name + "')");
                ok = false;
            }
        }
    }
    int timings = t.contains("at_us") + t.contains("every_us") + t.contains("fps");
    if (timings != 1) {
        error(t,
              "[[submit]] has " + std::to_string(timings) + " timings (expected exactly one of: at_us, every_us, fps)");
        ok = false;
    } else if (t.contains("at_us")) {
        auto at = get_u64(t, "at_us", what, true);
        ok = ok && at;
        if (at)
            s.start_us = *at;
        for (auto k : {"count", "start_us"})
            if (t.contains(k)) {
                error(*t.get(k), "'" + std::string(k) + "' with 'at_us' (expected it only with every_us or fps)");
                ok = false;
            }
    } else {
        if (t.contains("every_us")) {
            auto e = get_u64(t, "every_us", what, true, 1);
            ok = ok && e;
            if (e)
                s.every_us = *e;
        } else {
            auto f = get_number(t, "fps", what, true, true);
            ok = ok && f;
            if (f)
                s.every_us = std::max<u64>(1, static_cast<u64>(std::llround(1e6 / *f)));
        }
        auto c = get_int(t, "count", what, true, 1, 10'000'000);
        auto st = get_u64(t, "start_us", what, false);
        ok = ok && c && (st || !t.contains("start_us"));
        if (c)
            s.count = static_cast<u32>(*c);
        if (st)
            s.start_us = *st;
    }
    s.waits = parse_sync_refs(t, "waits", client, &ok);
    s.signals = parse_sync_refs(t, "signals", client, &ok);
    if (auto f = get_string(t, "fence", what, false)) {
        if (f->empty() || fence_names_.count(*f)) {
            error(*t.get("fence"),
                  f->empty() ? "empty fence name (expected a name)"
                             : "duplicate fence name '" + *f + "' (expected a name no other submission uses)");
            ok = false;
        } else {
            fence_names_.emplace(*f, sc_.submissions.size());
            s.fence = *f;
        }
    } else if (t.contains("fence")) {
        ok = false;
    }
    if (!ok)
        return;
    s.queue = *q;
    s.job = *job;
    sc_.submissions.push_back(std::move(s));
}

}  // namespace upanthor::scenario
